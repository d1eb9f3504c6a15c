"""The 2019 `std` verifier's rules, for text in 2019 syntax (ir/syntax/era.py).

`egraft-opt` verifies such text with `verify(top, era_checks=ERA_2019_CHECKS)`:
each check, keyed by the op's name today, runs before the op's own rules.
Where 2019's `std` verifier applied another rule than today's op does, or
reported the same rule at another point (before the operands, before a
missing terminator), the 2019 rule decides, so a 2019 file's `expected-error`
lines hold.  The ops keep today's names and records; a check only raises, it
never changes the IR.  `check_view`/`check_subview` are the rules of the 2019
view records in ir/dialects/std_era.py.  Same rules in other words are
reworded instead (`_WORDING_2019` in ir/syntax/era.py).
"""

from __future__ import annotations

from typing import Callable

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.strided import strides_and_offset
from egraft.ir.verifier import op_error


def _error(op: Operation, message: str) -> DiagnosticError:
    """2019's `op.emitError()`: at the op, without the `'name' op` prefix."""
    return DiagnosticError(Diagnostic("error", message, op.loc))


def _shape(t: T.Type) -> tuple[int, ...] | None | bool:
    """The shape 2019's `verifyCompatibleShape` compares: False for a type
    that is not shaped, None for an unranked one."""
    return t.shape if isinstance(t, T.ShapedType) else False


def _shapes_compatible(a: T.Type, b: T.Type) -> bool:
    """2019's `verifyCompatibleShape`: both shaped or neither; unranked fits
    anything; ranked shapes of one rank whose sizes agree or are dynamic."""
    sa, sb = _shape(a), _shape(b)
    if sa is False or sb is False:
        return sa is False and sb is False
    if sa is None or sb is None:
        return True
    return len(sa) == len(sb) and all(x == y or T.DYNAMIC in (x, y) for x, y in zip(sa, sb))


def _check_same_shape(op: Operation) -> None:
    """2019's SameOperandsAndResultShape trait (verified before the op's own rules)."""
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    if types and not all(_shapes_compatible(t, types[0]) for t in types[1:]):
        raise op_error(op, "requires the same shape for all operands and results")


def _cast_check(compatible: Callable[[T.Type, T.Type], bool]) -> Callable[[Operation], None]:
    """2019's cast ops (`index_cast`, `sitofp`, `fpext`, `fptrunc`): operand and
    result of any type, the same shape, and `areCastCompatible` decides."""
    def check(op: Operation) -> None:
        if len(op.operands) != 1 or len(op.results) != 1:
            return  # the record reports the counts
        _check_same_shape(op)
        src, dst = op.operands[0].type, op.results[0].type
        a, b = src, dst
        if isinstance(a, T.VectorType) and isinstance(b, T.VectorType):
            a, b = a.element_type, b.element_type  # equal shapes: checked above
        if not compatible(a, b):
            raise _error(op, f"operand type '{src}' and result type '{dst}' are cast incompatible")
    return check


def _float_width(t: T.Type) -> int | None:
    return t.width if isinstance(t, T.FloatType) else None  # type: ignore[attr-defined]


def _index_cast_ok(a: T.Type, b: T.Type) -> bool:
    if isinstance(a, T.IndexType):
        return isinstance(b, T.IntegerType)
    return isinstance(b, T.IndexType) and isinstance(a, T.IntegerType)


def _fpext_ok(a: T.Type, b: T.Type) -> bool:
    wa, wb = _float_width(a), _float_width(b)
    return wa is not None and wb is not None and wa < wb


def _fptrunc_ok(a: T.Type, b: T.Type) -> bool:
    wa, wb = _float_width(a), _float_width(b)
    return wa is not None and wb is not None and wa > wb


def _sitofp_ok(a: T.Type, b: T.Type) -> bool:
    return isinstance(a, T.IntegerType) and isinstance(b, T.FloatType)


def _int_resize_check(extends: bool) -> Callable[[Operation], None]:
    """2019's `sexti`/`zexti`/`trunci`: `index` refused on either side (today's
    records admit it), then the width rule in 2019's words for `trunci`."""
    def check(op: Operation) -> None:
        if len(op.operands) != 1 or len(op.results) != 1:
            return
        src, dst = T.element_type(op.operands[0].type), T.element_type(op.results[0].type)
        if isinstance(src, T.IndexType):
            raise _error(op, f"'{src}' is not a valid operand type")
        if isinstance(dst, T.IndexType):
            raise _error(op, f"'{dst}' is not a valid result type")
        if not extends and isinstance(src, T.IntegerType) and isinstance(dst, T.IntegerType) \
                and src.width <= dst.width:
            raise _error(op, f"operand type '{src}' must be wider than result type '{dst}'")
    return check


def _like(t: T.Type, kinds: tuple[type, ...], width: int | None = None) -> bool:
    """2019's `IntegerLike`/`FloatLike`/`BoolLike`: the type, or a vector or tensor of it."""
    e = t.element_type if isinstance(t, (T.VectorType, T.RankedTensorType, T.UnrankedTensorType)) else t
    return isinstance(e, kinds) and (width is None or getattr(e, "width", None) == width)


_INTEGER_LIKE = ((T.IntegerType, T.IndexType), None, "integer-like")
_FLOAT_LIKE = ((T.FloatType,), None, "floating-point-like")
_BOOL_LIKE = ((T.IntegerType,), 1, "bool-like")


_Rule = tuple[tuple[type, ...], "int | None", str]


def _check_constraints(op: Operation, operands: _Rule, results: _Rule) -> None:
    """2019's generated operand and result checks, in 2019's constraint names."""
    for what, values, rule in (("operand", op.operands, operands), ("result", op.results, results)):
        if rule is None:
            continue
        kinds, width, name = rule
        for i, v in enumerate(values):
            if not _like(v.type, kinds, width):
                raise op_error(op, f"{what} #{i} must be {name}, but got '{v.type}'")


def _check_same_operand_types(op: Operation) -> None:
    """2019's SameTypeOperands trait."""
    if any(v.type is not op.operands[0].type for v in op.operands[1:]):
        raise op_error(op, "requires all operands to have the same type")


def _check_cmpi(op: Operation) -> None:
    """2019's `cmpi`: traits, then the predicate (an attribute constraint of
    its ODS record, so before the operands), operands, result."""
    _check_same_operand_types(op)
    _check_same_shape(op)
    pred = op.attr("predicate")
    if pred is None:
        raise op_error(op, "requires attribute 'predicate'")
    cases = ", ".join(str(i) for i in range(10))
    if not isinstance(pred, A.IntegerAttr) or pred.type is not T.i64 or not 0 <= pred.value < 10:
        raise op_error(op, "attribute 'predicate' failed to satisfy constraint: "
                           f"allowed 64-bit integer cases: {cases}")
    _check_constraints(op, _INTEGER_LIKE, _BOOL_LIKE)


def _check_cmpf(op: Operation) -> None:
    """2019's `cmpf`: traits, operands, result, then its hand-written predicate check."""
    _check_same_operand_types(op)
    _check_same_shape(op)
    _check_constraints(op, _FLOAT_LIKE, _BOOL_LIKE)
    pred = op.attr("predicate")
    if not isinstance(pred, A.IntegerAttr):
        raise op_error(op, "requires an integer attribute named 'predicate'")
    if not 0 <= pred.value < 16:
        raise op_error(op, "'predicate' attribute value out of range")


def _check_select(op: Operation) -> None:
    """2019's `select`: same shape for all, a bool-like condition, then its
    hand-written check that both choices have one type."""
    _check_same_shape(op)
    if len(op.operands) != 3:
        return
    if not _like(op.operands[0].type, *_BOOL_LIKE[:2]):
        raise op_error(op, f"operand #0 must be bool-like, but got '{op.operands[0].type}'")
    if op.operands[1].type is not op.operands[2].type:
        raise op_error(op, "requires 'true' and 'false' arguments to be of the same type")


def _check_constant(op: Operation) -> None:
    """2019's `constant`: the attribute's type (none for an untyped one, such
    as a string) must be the result type; then the kinds it accepted."""
    value = op.attr("value")
    if value is None:
        raise op_error(op, "requires a 'value' attribute")
    vtype = getattr(value, "type", None)
    rtype = op.results[0].type if op.results else None
    if vtype is not None and vtype is not rtype:
        raise op_error(op, f"requires attribute's type ('{vtype}') to match op's return type ('{rtype}')")
    if isinstance(value, (A.IntegerAttr, A.FloatAttr, A.DenseElementsAttr)) or \
            (isinstance(rtype, T.NoneType) and isinstance(value, A.UnitAttr)):
        return
    raise op_error(op, f"unsupported 'value' attribute: {value}")


# ------------------------------------------------------------------ 2019 views (std.view, std.subview)


def same_memory_space(a: T.MemRefType, b: T.MemRefType) -> bool:
    """Memory space 0 is the default one (2019 printed `memref<4xf32, 0>` without it)."""
    def number(t: T.MemRefType):
        space = t.memory_space
        return 0 if space is None else getattr(space, "value", space)
    return number(a) == number(b)


def check_view(op: Operation) -> None:
    """2019's `view`: a 1-D i8 buffer with an identity layout, into a strided
    memref of the same memory space, one operand per dynamic size (and one
    for a dynamic offset), dynamic strides outside every dynamic size."""
    base, view = op.operands[0].type, op.results[0].type
    if not (isinstance(base, T.MemRefType) and base.rank == 1 and base.element_type == T.i8):
        raise op_error(op, f"operand #0 must be 1D memref of 8-bit integer values, but got '{base}'")
    if not isinstance(view, T.MemRefType):
        return
    layout = base.layout
    if layout is not None and not (isinstance(layout, A.AffineMapAttr) and layout.value.is_identity()):
        raise _error(op, f"unsupported map for base memref '{base}'")
    if not same_memory_space(base, view):
        raise _error(op, f"different memory spaces specified for base memref type '{base}' "
                         f"and view memref type '{view}'")
    strided = strides_and_offset(view)
    if strided is None:
        raise _error(op, f"result type '{view}' is not strided")
    strides, offset = strided
    expected = 1 + sum(1 for d in view.shape if d == T.DYNAMIC) + (offset is None)
    if len(op.operands) != expected:
        raise _error(op, f"incorrect number of operands for type '{view}'")
    dynamic = False
    for i in range(view.rank - 2, -1, -1):
        dynamic = dynamic or view.shape[i + 1] == T.DYNAMIC
        if dynamic and strides[i] is not None:
            raise _error(op, f"incorrect dynamic strides in view memref type '{view}'")


def check_subview(op: Operation) -> None:
    """2019's `subview %m[offsets][sizes][strides]`: each list empty or one
    value per dimension; a static result shape exactly when no sizes are
    given; dynamic offset and strides wherever they can vary."""
    base, sub = op.operands[0].type, op.results[0].type
    if not isinstance(base, T.MemRefType) or not isinstance(sub, T.MemRefType):
        return
    groups = op.opdef.operand_groups(op)  # type: ignore[union-attr]
    n_offsets, n_sizes, n_strides = (len(groups[k]) for k in ("offsets", "sizes", "strides"))
    if base.rank != sub.rank:
        raise _error(op, "expected rank of result type to match rank of base type ")
    if not same_memory_space(base, sub):
        raise _error(op, f"different memory spaces specified for base memref type '{base}' "
                         f"and subview memref type '{sub}'")
    base_strided, sub_strided = strides_and_offset(base), strides_and_offset(sub)
    if base_strided is None:
        raise _error(op, f"base type '{sub}' is not strided")  # 2019 named the result type here
    if sub_strided is None:
        raise _error(op, f"result type '{sub}' is not strided")
    for count, what in ((n_offsets, "offsets"), (n_sizes, "sizes"), (n_strides, "strides")):
        if count not in (0, sub.rank):
            raise _error(op, f"expected number of dynamic {what} specified to match the rank of the "
                             f"result type '{sub}'")
    if sub.has_static_shape == (n_sizes != 0):
        raise _error(op, "invalid to specify dynamic sizes when subview result type is statically shaped "
                         "and viceversa")
    if n_sizes and any(d != T.DYNAMIC for d in sub.shape):
        raise _error(op, "expected shape of result type to be fully dynamic when sizes are specified")
    (base_strides, base_offset), (sub_strides, sub_offset) = base_strided, sub_strided
    if (n_offsets or base_offset is None or None in base_strides) and sub_offset is not None:
        raise _error(op, "expected result memref layout map to have dynamic offset")
    if n_strides and any(s is not None for s in sub_strides):
        raise _error(op, "expected result type to have dynamic strides")
    if any(b is None and s is not None for b, s in zip(base_strides, sub_strides)):
        raise _error(op, "expected result type to have dynamic stride along a dimension if the base "
                         "memref type has dynamic stride along that dimension")


# ------------------------------------------------------------------ regions and allocations


def _check_implicit_terminator(op: Operation) -> None:
    """2019's SingleBlockImplicitTerminator trait, verified with the op
    (before its regions): each block ends with the implied terminator."""
    trait = op.opdef.trait(Traits.SingleBlockImplicitTerminator) if op.opdef is not None else None
    if trait is None:
        return
    for region in op.regions:
        for block in region.blocks:
            last = block.last
            if last is not None and last.name != trait.param:
                d = Diagnostic("error", f"'{op.name}' op expects regions to end with '{trait.param}', "
                                        f"found '{last.name}'", op.loc)
                d.attach_note(f"in custom textual format, the absence of terminator implies '{trait.param}'")
                raise DiagnosticError(d)


def _check_alloc(op: Operation) -> None:
    """2019's alloc/alloca: one rule for both lists, in 2019's words."""
    t = op.results[0].type if op.results else None
    if not isinstance(t, T.MemRefType):
        return
    symbols = t.layout.value.num_symbols if isinstance(t.layout, A.AffineMapAttr) else 0
    if len(op.operands) != sum(1 for d in t.shape if d == T.DYNAMIC) + symbols:
        raise op_error(op, "operand count does not equal dimension plus symbol operand count")


ERA_2019_CHECKS: dict[str, Callable[[Operation], None]] = {
    "arith.index_cast": _cast_check(_index_cast_ok),
    "arith.sitofp": _cast_check(_sitofp_ok),
    "arith.extf": _cast_check(_fpext_ok),
    "arith.truncf": _cast_check(_fptrunc_ok),
    "arith.extsi": _int_resize_check(True),
    "arith.extui": _int_resize_check(True),
    "arith.trunci": _int_resize_check(False),
    "arith.cmpi": _check_cmpi,
    "arith.cmpf": _check_cmpf,
    "arith.select": _check_select,
    "arith.constant": _check_constant,
    "memref.alloc": _check_alloc,
    "memref.alloca": _check_alloc,
    "affine.for": _check_implicit_terminator,
    "affine.if": _check_implicit_terminator,
    "tf_executor.graph": _check_implicit_terminator,
    "tf_executor.island": _check_implicit_terminator,
}
