"""Which SSA values may serve as affine dimensions and symbols.

Affine ops bind index values to the dimensions and symbols of their maps,
and only some values qualify: a symbol must be fixed for the whole *affine
scope* (the region of the closest op with the AffineScope trait, e.g.
`func.func`, `builtin.module` or `affine.graybox`), a dimension may also
vary with enclosing affine loops.  The rules follow MLIR's `isValidSymbol`,
`isValidDim` and `getAffineScope`; the graybox RFC adds the scoped walk and
the enclosing-graybox lookup here too.  Ops are recognized by name so this
module depends on no dialect module.
"""

from __future__ import annotations

from typing import Iterator

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import BlockArgument, Operation, Region, Value
from egraft.ir.core.traits import Trait, Traits

GRAYBOX = "affine.graybox"
_LOOP_OPS = ("affine.for", "affine.parallel")
_SIZED_SOURCES = ("memref.alloc", "memref.alloca", "memref.view", "memref.subview", "std.view", "std.subview")


def _has(op: Operation | None, trait: Trait) -> bool:
    return op is not None and op.has_trait(trait)


def get_affine_scope(op: Operation) -> Region | None:
    """The region of the closest ancestor with the AffineScope trait."""
    cur = op
    parent = cur.parent_op
    while parent is not None:
        if _has(parent, Traits.AffineScope):
            return cur.parent_region
        cur, parent = parent, parent.parent_op
    return None


def _defining_region(value: Value) -> Region | None:
    block = value.parent_block
    return block.parent if block is not None else None


def is_top_level_value(value: Value, region: Region | None = None) -> bool:
    """Defined directly in `region` (or, without one, in an affine scope's region)."""
    if region is not None:
        return _defining_region(value) is region
    owner_region = _defining_region(value)
    owner = owner_region.parent if owner_region is not None else None
    return _has(owner, Traits.AffineScope)


def _constant_int(value: Value) -> int | None:
    op = value.owner_op
    if op is None or not _has(op, Traits.ConstantLike):
        return None
    attr = op.attr("value")
    return attr.value if isinstance(attr, A.IntegerAttr) else None


def _apply_operands_ok(op: Operation, region: Region | None, dim: bool) -> bool:
    check = is_valid_dim if dim else is_valid_symbol
    return all(check(v, region) for v in op.operands)


def _memref_size_valid_symbol(op: Operation, index: int, region: Region | None) -> bool:
    """The size of dimension `index` of an alloc/view/subview result is a symbol."""
    t = op.results[0].type
    if not isinstance(t, T.MemRefType) or index >= len(t.shape):
        return False
    if t.shape[index] != T.DYNAMIC:
        return True
    if op.name == "memref.subview":
        sizes = op.opdef.operand_groups(op)["sizes"]
        static = op.attr("static_sizes").values
        dyn_pos = sum(1 for s in static[:index] if s < 0)
        return dyn_pos < len(sizes) and is_valid_symbol(sizes[dyn_pos], region)
    if op.name in ("std.view", "std.subview"):  # 2019's forms (ir/dialects/std_era.py)
        sizes = op.opdef.operand_groups(op)["sizes"]  # subview: one per dimension; view: per dynamic one
        pos = index if op.name == "std.subview" else sum(1 for d in t.shape[:index] if d == T.DYNAMIC)
        return pos < len(sizes) and is_valid_symbol(sizes[pos], region)
    dyn_pos = sum(1 for d in t.shape[:index] if d == T.DYNAMIC)
    sizes = op.operands if op.name == "memref.alloc" or op.name == "memref.alloca" else op.operands[2:]
    return dyn_pos < len(sizes) and is_valid_symbol(sizes[dyn_pos], region)


def _dim_op_valid_symbol(op: Operation, region: Region | None) -> bool:
    source = op.operands[0]
    if is_top_level_value(source):
        return True
    if isinstance(source, BlockArgument):
        return False
    index = _constant_int(op.operands[1])
    if index is None:
        return False
    definer = source.owner_op
    while definer is not None and definer.name == "memref.cast":
        if isinstance(definer.operands[0].type, T.UnrankedMemRefType):
            return False
        definer = definer.operands[0].owner_op
        if definer is None:
            return True
    return definer is not None and definer.name in _SIZED_SOURCES and \
        _memref_size_valid_symbol(definer, index, region)


def _region_around_scope(region: Region | None) -> Region | None:
    """For the rule on values from outside a non-isolated scope (a graybox): the
    region around the scope op, where such a value must be a symbol; None when
    the scope is isolated from above or the top is reached."""
    scope_op = region.parent if region is not None else None
    if scope_op is None or _has(scope_op, Traits.IsolatedFromAbove):
        return None
    return scope_op.parent_region


def is_symbol_where_defined(value: Value) -> bool:
    """MLIR's region-less `isValidSymbol`: a symbol of the scope it is defined in."""
    if value.type is not T.index:
        return False
    if is_top_level_value(value):
        return True
    definer = value.owner_op
    return definer is not None and is_valid_symbol(value, get_affine_scope(definer))


def is_dim_where_defined(value: Value) -> bool:
    """MLIR's region-less `isValidDim`."""
    if value.type is not T.index:
        return False
    definer = value.owner_op
    if definer is not None:
        return is_valid_dim(value, get_affine_scope(definer))
    owner = value.owner.parent_op  # type: ignore[attr-defined]
    return owner is not None and (_has(owner, Traits.AffineScope) or owner.name in _LOOP_OPS)


def is_valid_symbol(value: Value, region: Region | None) -> bool:
    """May `value` be bound to a symbol of an affine op whose scope is
    `region` (None: the op is in no affine scope)?  MLIR's rules, with its
    recursion into the region around a non-isolated scope written as a loop
    (one step per enclosing op: no Python recursion per nesting level)."""
    if value.type is not T.index:
        return False
    home = _defining_region(value)
    if region is not None and home is region:
        return True
    definer = value.owner_op
    if definer is not None:
        if _has(definer, Traits.ConstantLike):
            return True
        if definer.name == "affine.apply":
            return _apply_operands_ok(definer, region, dim=False)
        if definer.name == "memref.dim":
            return _dim_op_valid_symbol(definer, region)
    # Only the climb is left (the rules above do not depend on the region): one step per
    # enclosing op, inlined, as a use deep in a nest of a value defined far above climbs far.
    isolated = Traits.IsolatedFromAbove
    while region is not None:
        scope_op = region.parent
        if scope_op is None or scope_op.has_trait(isolated):
            return False
        block = scope_op.parent
        region = block.parent if block is not None else None
        if region is home:
            return region is not None
    return False


def is_valid_dim(value: Value, region: Region | None) -> bool:
    """May `value` be bound to a dimension of an affine op whose scope is `region`?"""
    if value.type is not T.index:
        return False
    if is_valid_symbol(value, region):
        return True
    definer = value.owner_op
    if definer is None:
        owner = value.owner.parent_op  # type: ignore[attr-defined]
        return owner is not None and owner.name in _LOOP_OPS
    if definer.name == "affine.apply":
        return _apply_operands_ok(definer, region, dim=True)
    if definer.name == "memref.dim":
        return is_top_level_value(definer.operands[0])
    return False


def is_valid_affine_index_operand(value: Value, region: Region | None) -> bool:
    return is_valid_dim(value, region) or is_valid_symbol(value, region)


def get_enclosing_affine_graybox(op: Operation) -> Operation | None:
    """The closest enclosing `affine.graybox`, or None once a function (or
    the top) is reached first."""
    parent = op.parent_op
    while parent is not None:
        if parent.name == GRAYBOX:
            return parent
        if _has(parent, Traits.FunctionLike):
            return None
        parent = parent.parent_op
    return None


def walk_affine(op: Operation) -> Iterator[Operation]:
    """Pre-order walk that yields nested grayboxes but does not enter them:
    what an affine pass sees of one scope."""
    return op.walk(skip=lambda o: o.name == GRAYBOX)
