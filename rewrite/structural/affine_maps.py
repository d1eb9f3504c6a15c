"""`affine-maps`: every affine op's map and operands canonicalized, as MLIR's `SimplifyAffineOp` does.

For `affine.apply`/`min`/`max`/`load`/`store`, the bounds of `affine.for` and `affine.parallel`
and the condition of `affine.if`, users before producers (as MLIR's worklist pops them, so a chain composes into its
last user whole and the order of the new inputs is MLIR's):

1. composition: an operand produced by a one-result `affine.apply` is replaced by the apply's
   operands, its map substituted in (`compose_keeping_kinds`: inner dims stay dims, inner symbols
   are appended after the outer symbols); repeated until no operand is such an apply, or the
   expression would be deeper than `MAX_COMPOSED_DEPTH` (a bound on any input's work);
2. `canonicalizeMapAndOperands`: operands produced by an index constant become constants in the
   map; a dim operand that is a valid symbol in the op's affine scope becomes a symbol (appended
   after the op's own symbols, as MLIR orders them); equal operands of one kind are merged;
   operands no result uses are dropped;
3. every result simplified as MLIR's `simplifyAffineMap` does (`patterns/affine_flatten.py`); the
   results of a min/max map (and of loop bounds: max for the lower, min for the upper) lose
   duplicates and all but the extreme constant result (`simplify_results`); an `affine.if`
   constraint that became a true constant is dropped while another remains; a min (max) operand
   produced by a min (max) and used as a result on its own is merged into it (`merge_min_max`);
4. the folds of the `memref-affine-canonical` rules, so that the form is canonical after the
   rules' phase too: an apply/min/max of constant results is an `arith.constant`, an identity
   apply is its operand, a one-result min/max is an apply.

Applies left without uses are erased (Pure). This is a structural step, not rules, because it
rewrites operand lists of any length and ops with regions or without results, which a rule
cannot state (the rules cover the fixed-arity cases on the e-graph).

Soundness: every rewrite keeps the value each map computes on the same integers (substitution,
renaming of inputs, constants substituted, min/max of the same multiset of values). Legality:
composition into an op whose verifier checks dims and symbols (all but `affine.apply`) happens only
when every spliced operand is a valid dim (for a dim position) or a valid symbol (for a symbol
position) in the op's scope (`affine_dims`); promotion to a symbol only for valid symbols. So the
output passes the verifier whenever the input did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from egraft.ir import Operation
from egraft.ir.core import affine as AF
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Region, Value
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.affine_dims import get_affine_scope, is_valid_dim, is_valid_symbol
from egraft.patterns.affine_flatten import simplify_expr
from egraft.patterns.memref_affine_rules import compose_keeping_kinds, evaluate, simplify_results, substitute

#: Op name -> (map attribute, index of the first map operand, min/max kind of its results or None).
_ACCESS = {"affine.load": 1, "affine.store": 2, "affine.vector_load": 1, "affine.vector_store": 2}
_MAP_OPS = {"affine.apply": None, "affine.min": "min", "affine.max": "max"}


def canonicalize_affine_maps(root: Operation) -> int:
    """Canonicalize the maps and operands of every affine op under `root`; returns the ops changed.

    Changes are worked out users first (that order decides what composes into what) and made in
    program order."""
    changes = [change for op in reversed(list(root.walk())) if (change := _plan(op)) is not None]
    replaced: dict[Value, Value] = {}
    unused: list[Operation] = []  # ops that may have lost their last use: erased once all is done
    for change in reversed(changes):
        change.make(replaced, unused)
    for op in reversed(unused):
        _erase_dead(op, root)
    return len(changes)


def _plan(op: Operation) -> "_Change | None":
    if op.name in _MAP_OPS:
        return _plan_map_op(op)
    if op.name in _ACCESS:
        start = _ACCESS[op.name]
        found = _group(op, op.attr("map").value, start, len(op.operands), None)
        return None if found is None else _Change(op, {"map": A.AffineMapAttr(found[0])},
                                                  [*op.operands[:start], *found[1]])
    if op.name == "affine.for":
        return _plan_for(op)
    if op.name == "affine.if":
        return _plan_if(op)
    if op.name == "affine.parallel":
        return _plan_parallel(op)
    return None


@attrs.define
class _Change:
    """What canonicalization does to one op, worked out before any op changes: new attributes and
    operands, or a replacement of its one result (`fold`: an index constant, a value, or an
    `affine.apply` of a map over operands)."""

    op: Operation
    attributes: dict[str, A.Attribute] = attrs.field(factory=dict)
    operands: list[Value] = attrs.field(factory=list)
    fold: int | Value | tuple[AF.AffineMap, list[Value]] | None = None

    def make(self, replaced: dict[Value, Value], unused: list[Operation]) -> None:
        """Make the change; `replaced` maps results replaced by earlier changes to their values,
        `unused` collects the producers of operands the op stops using (and the op, if replaced):
        a later change may still use them."""
        op = self.op
        fresh = [_current(v, replaced) for v in self.operands]
        if self.fold is None:
            for key, value in self.attributes.items():
                op.set_attr(key, value)
            unused += [v.owner_op for v in op.operands if v.owner_op is not None]
            op.set_operands(fresh)
            return
        if isinstance(self.fold, int):
            made = Operation.create("arith.constant", (), [T.index], {"value": A.IntegerAttr(self.fold, T.index)},
                                    loc=op.loc)
        elif isinstance(self.fold, tuple):
            made = Operation.create("affine.apply", fresh, [T.index], {"map": A.AffineMapAttr(self.fold[0])},
                                    loc=op.loc)
        else:
            made = None
        if made is not None:
            op.parent.insert_before(op, made)
        value = made.results[0] if made is not None else _current(self.fold, replaced)  # type: ignore[arg-type]
        replaced[op.results[0]] = value
        op.results[0].replace_all_uses_with(value)
        unused.append(op)


def _current(v: Value, replaced: dict[Value, Value]) -> Value:
    while v in replaced:
        v = replaced[v]
    return v


# ------------------------------------------------------------------ one operand group


def constant_index(value: Value) -> int | None:
    """The integer of an index constant producing `value`, else None."""
    producer = value.owner_op
    if producer is None or value.type is not T.index or not producer.has_trait(Traits.ConstantLike):
        return None
    attr = producer.attr("value")
    return attr.value if isinstance(attr, A.IntegerAttr) else None


def _compose(amap: AF.AffineMap, operands: list[Value], checked: bool, scope: Region | None
             ) -> tuple[AF.AffineMap, list[Value]]:
    """Substitute one-result applies producing operands into `amap` until none is left
    (`compose_keeping_kinds`: MLIR's order of the new inputs)."""
    k = 0
    while k < len(operands):
        producer = operands[k].owner_op
        if producer is None or producer.name != "affine.apply":
            k += 1
            continue
        inner = producer.attr("map").value
        inner_dims, inner_syms = list(producer.operands[:inner.num_dims]), list(producer.operands[inner.num_dims:])
        composed = compose_keeping_kinds(amap, k, inner)
        if composed is None or (checked and not (all(is_valid_dim(v, scope) for v in inner_dims)
                                                 and all(is_valid_symbol(v, scope) for v in inner_syms))):
            k += 1
            continue
        nd = amap.num_dims
        dims, syms = operands[:nd], operands[nd:]
        if k < nd:
            dims = dims[:k] + inner_dims + dims[k + 1:]
        else:
            dims = dims + inner_dims
            syms = syms[:k - nd] + syms[k - nd + 1:]
        amap, operands = composed, dims + syms + inner_syms
        k = 0 if k >= nd else k  # inputs before k may have moved when k was a symbol
    return amap, operands


def canonical_inputs(exprs: Sequence[AF.AffineExpr], num_dims: int, operands: Sequence[Value],
                     promotable: Callable[[Value], bool]) -> tuple[list[AF.AffineExpr], int, list[Value]]:
    """MLIR's canonicalizeMapAndOperands on expressions over `operands` (dims first): constants
    substituted, promotable dims made symbols (after the existing symbols), equal operands of one
    kind merged, unused ones dropped. Returns the new expressions, dim count and operands."""
    dims: list[Value] = []
    syms: list[Value] = []
    dim_at: dict[Value, int] = {}
    sym_at: dict[Value, int] = {}

    def symbol(v: Value) -> AF.AffineExpr:
        if v not in sym_at:
            sym_at[v] = len(syms)
            syms.append(v)
        return AF.Symbol(sym_at[v])

    repl: list[AF.AffineExpr | None] = [None] * len(operands)
    for pos in range(num_dims, len(operands)):  # the op's own symbols keep their order
        c = constant_index(operands[pos])
        repl[pos] = AF.Const(c) if c is not None else symbol(operands[pos])
    for pos in range(num_dims):
        v, c = operands[pos], constant_index(operands[pos])
        if c is not None:
            repl[pos] = AF.Const(c)
        elif promotable(v):
            repl[pos] = symbol(v)
        else:
            if v not in dim_at:
                dim_at[v] = len(dims)
                dims.append(v)
            repl[pos] = AF.Dim(dim_at[v])
    dim_repl, sym_repl = repl[:num_dims], repl[num_dims:]
    renamed = [substitute(e, dim_repl, sym_repl) for e in exprs]  # type: ignore[arg-type]
    used_dims: set[int] = set()
    used_syms: set[int] = set()
    for e in renamed:
        _collect_inputs(e, used_dims, used_syms)
    keep_d, keep_s = sorted(used_dims), sorted(used_syms)
    new_d = [AF.Dim(keep_d.index(i)) if i in used_dims else AF.Const(0) for i in range(len(dims))]
    new_s = [AF.Symbol(keep_s.index(i)) if i in used_syms else AF.Const(0) for i in range(len(syms))]
    final = [substitute(e, new_d, new_s) for e in renamed]
    return final, len(keep_d), [dims[i] for i in keep_d] + [syms[i] for i in keep_s]


def _collect_inputs(e: AF.AffineExpr, dims: set[int], syms: set[int]) -> None:
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, AF.Dim):
            dims.add(x.pos)
        elif isinstance(x, AF.Symbol):
            syms.add(x.pos)
        elif isinstance(x, AF.Binary):
            stack += (x.lhs, x.rhs)


def canonical_map(op: Operation, amap: AF.AffineMap, operands: Sequence[Value], checked: bool,
                  kind: str | None) -> tuple[AF.AffineMap, list[Value]]:
    """`amap` over `operands` (an operand group of `op`), composed and canonicalized."""
    scope = get_affine_scope(op)
    amap, composed = _compose(amap, list(operands), checked, scope)
    if _inputs_canonical(amap, composed, scope):  # the common case, without re-substituting
        exprs, nd, kept = list(amap.results), amap.num_dims, composed
    else:
        exprs, nd, kept = canonical_inputs(amap.results, amap.num_dims, composed,
                                           lambda v: is_valid_symbol(v, scope))
    out = AF.AffineMap(nd, len(kept) - nd, [simplify_expr(e) for e in exprs])
    return (simplify_results(out, kind) if kind else out), kept


def _inputs_canonical(amap: AF.AffineMap, operands: list[Value], scope: Region | None) -> bool:
    """Whether `canonical_inputs` would leave `amap` over `operands` as it is: distinct operands,
    none an index constant, no dim a valid symbol, every input used."""
    if len(set(operands)) != len(operands) or any(constant_index(v) is not None for v in operands):
        return False
    if any(is_valid_symbol(v, scope) for v in operands[:amap.num_dims]):
        return False
    dims: set[int] = set()
    syms: set[int] = set()
    for e in amap.results:
        _collect_inputs(e, dims, syms)
    return len(dims) == amap.num_dims and len(syms) == amap.num_symbols


def _group(op: Operation, amap: AF.AffineMap, start: int, stop: int, kind: str | None
           ) -> tuple[AF.AffineMap, list[Value]] | None:
    """The canonical map and operands of the group [start, stop) of `op`'s operands, None if unchanged."""
    old = op.operands[start:stop]
    new_map, new_ops = canonical_map(op, amap, old, True, kind)
    return None if new_map == amap and new_ops == old else (new_map, new_ops)


# ------------------------------------------------------------------ the ops


def merge_min_max(op: Operation, amap: AF.AffineMap, operands: list[Value]) -> tuple[AF.AffineMap, list[Value]]:
    """MLIR's MergeAffineMinMaxOp: an operand produced by an op of the same kind (a min into a
    min) that is a result of the map on its own (`d_i` or `s_j`, not inside an expression) has
    that result replaced by the producer's results, appended, the producer's dims and symbols
    appended after the op's own: min(a, min(b, c)) = min(a, b, c). Only where the producer's
    operands are valid dims and symbols in the op's scope."""
    scope = get_affine_scope(op)
    nd, ns = amap.num_dims, amap.num_symbols
    results = list(amap.results)
    extra_dims: list[Value] = []
    extra_syms: list[Value] = []
    appended: list[AF.AffineExpr] = []
    for pos, v in enumerate(operands):
        producer = v.owner_op
        me = AF.Dim(pos) if pos < nd else AF.Symbol(pos - nd)
        if producer is None or producer.name != op.name or me not in results:
            continue
        pmap = producer.attr("map").value
        pdims, psyms = list(producer.operands[:pmap.num_dims]), list(producer.operands[pmap.num_dims:])
        if not (all(is_valid_dim(x, scope) for x in pdims) and all(is_valid_symbol(x, scope) for x in psyms)):
            continue
        shift_d = [AF.Dim(nd + len(extra_dims) + p) for p in range(len(pdims))]
        shift_s = [AF.Symbol(ns + len(extra_syms) + q) for q in range(len(psyms))]
        results = [r for r in results if r != me]
        appended += [substitute(r, shift_d, shift_s) for r in pmap.results]
        extra_dims += pdims
        extra_syms += psyms
    if not appended:
        return amap, operands
    merged = AF.AffineMap(nd + len(extra_dims), ns + len(extra_syms), results + appended)
    return merged, operands[:nd] + extra_dims + operands[nd:] + extra_syms


def _plan_map_op(op: Operation) -> _Change | None:
    kind = _MAP_OPS[op.name]
    amap, operands = op.attr("map").value, list(op.operands)
    if kind is not None:
        amap, operands = merge_min_max(op, amap, operands)
    new_map, new_ops = canonical_map(op, amap, operands, kind is not None, kind)
    if not new_ops and all(isinstance(r, AF.Const) for r in new_map.results):
        values = [evaluate(r, [], []) for r in new_map.results]
        return _Change(op, fold=(min if op.name == "affine.min" else max)(values))  # type: ignore[type-var]
    if op.name == "affine.apply" and len(new_ops) == 1 and new_map.results[0] in (AF.Dim(0), AF.Symbol(0)):
        return _Change(op, fold=new_ops[0])
    if kind is not None and len(new_map.results) == 1:  # a one-result min/max is an apply
        return _Change(op, operands=new_ops, fold=(new_map, new_ops))
    if new_map == op.attr("map").value and new_ops == op.operands:
        return None
    return _Change(op, {"map": A.AffineMapAttr(new_map)}, new_ops)


def _erase_dead(op: Operation, root: Operation) -> None:
    """Erase `op` if it is Pure, holds no region and its results are unused, then its producers
    likewise (constants folded into a map, applies composed into their users); only inside `root`
    (a pass anchored on a graybox leaves the values it reads from outside alone)."""
    stack = [op]
    while stack:
        x = stack.pop()
        if x.parent is None or x.regions or not x.has_trait(Traits.Pure) or any(r.uses for r in x.results) \
                or x is root or not root.is_ancestor(x):
            continue
        producers = [v.owner_op for v in x.operands]
        x.erase()
        stack += [p for p in producers if p is not None]


def _plan_for(op: Operation) -> _Change | None:
    n_lb, n_ub, n_inits = op.attr("operandSegmentSizes").values
    lb, ub = op.attr("lowerBoundMap").value, op.attr("upperBoundMap").value
    new_lb = _group(op, lb, 0, n_lb, "max") or (lb, op.operands[:n_lb])
    new_ub = _group(op, ub, n_lb, n_lb + n_ub, "min") or (ub, op.operands[n_lb:n_lb + n_ub])
    if new_lb[0] == lb and new_ub[0] == ub and new_lb[1] + new_ub[1] == op.operands[:n_lb + n_ub]:
        return None
    sizes = A.DenseArrayAttr(T.i32, (len(new_lb[1]), len(new_ub[1]), n_inits))
    return _Change(op, {"lowerBoundMap": A.AffineMapAttr(new_lb[0]), "upperBoundMap": A.AffineMapAttr(new_ub[0]),
                        "operandSegmentSizes": sizes}, [*new_lb[1], *new_ub[1], *op.operands[n_lb + n_ub:]])


def _plan_if(op: Operation) -> _Change | None:
    iset = op.attr("condition").value
    scope = get_affine_scope(op)
    exprs = [e for e, _ in iset.constraints]
    amap, operands = _compose(AF.AffineMap(iset.num_dims, iset.num_symbols, exprs), list(op.operands), True, scope)
    new_exprs, nd, kept = canonical_inputs(amap.results, amap.num_dims, operands, lambda v: is_valid_symbol(v, scope))
    constraints = [(simplify_expr(e), eq) for e, (_, eq) in zip(new_exprs, iset.constraints)]
    pending = [(e, eq) for e, eq in constraints if not _constant_truth(e, eq)]
    if pending:
        constraints = pending  # true constants dropped while a constraint remains
    new_set = AF.IntegerSet(nd, len(kept) - nd, constraints)
    if new_set == iset and kept == op.operands:
        return None
    return _Change(op, {"condition": A.IntegerSetAttr(new_set)}, kept)


def _constant_truth(e: AF.AffineExpr, is_eq: bool) -> bool:
    """Whether the constraint `e == 0` / `e >= 0` is a constant that holds."""
    return isinstance(e, AF.Const) and (e.value == 0 if is_eq else e.value >= 0)


def _plan_parallel(op: Operation) -> _Change | None:
    """The bound maps of `affine.parallel` canonicalized (their results stay: they are grouped per
    induction variable); the two maps share one operand list, split by the lower map's inputs."""
    lb, ub = op.attr("lowerBoundsMap").value, op.attr("upperBoundsMap").value
    n_lb = lb.num_dims + lb.num_symbols
    new_lb, lb_ops = canonical_map(op, lb, op.operands[:n_lb], True, None)
    new_ub, ub_ops = canonical_map(op, ub, op.operands[n_lb:], True, None)
    if (new_lb, new_ub) == (lb, ub) and lb_ops + ub_ops == op.operands:
        return None
    return _Change(op, {"lowerBoundsMap": A.AffineMapAttr(new_lb), "upperBoundsMap": A.AffineMapAttr(new_ub)},
                   lb_ops + ub_ops)
