"""`memref-affine-canonical`: affine.apply folding, and its composition into access maps.

`affine.apply` of constants is the constant its map computes; an identity map
forwards its operand; a map whose result is a constant ignores its operands.
An `affine.apply` feeding an `affine.load` or `affine.store` index is composed into the
access map (rules on both drivers: the rebuilt access takes the original's place on the
effect chain, docs/encoding.md "Rules that rewrite effects"). `affine.min`/`max` of constants fold to their
least/greatest result, a one-result min/max is an apply, duplicate and non-extreme constant
results go; an apply of an apply composes (the rules, fixed-arity, on the e-graph). The set's
structural steps do what rules cannot: `affine-maps` (`rewrite/structural/affine_maps.py`:
full composition and MLIR's canonicalizeMapAndOperands on every affine op, loop bounds and
`affine.if` conditions included) and `affine-loops` (`affine_loops.py`: zero/one-trip loops,
decided and empty ifs).
Soundness: affine maps are evaluated on index values (64-bit, wrapping as
`arith` on index does); `floordiv`, `ceildiv` and `mod` by a non-positive
constant are undefined in MLIR, so such maps are not folded.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import affine as AF
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

from .affine_flatten import simplify_expr
from .canon_fold import INDEX_WIDTH, elements, wrap
from .checks import is_constant, pred
from .dsl import op, rule, var
from .rule import ConstOf, Native, Rule, Var
from .rule_sets import register_rule_set

x, m, g = var("x"), var("m"), var("g")


def evaluate(e: AF.AffineExpr, dims: Sequence[int], syms: Sequence[int]) -> int | None:
    """The value of an affine expression, None where MLIR leaves it undefined."""
    if isinstance(e, AF.Dim):
        return dims[e.pos]
    if isinstance(e, AF.Symbol):
        return syms[e.pos]
    if isinstance(e, AF.Const):
        return e.value
    lhs, rhs = evaluate(e.lhs, dims, syms), evaluate(e.rhs, dims, syms)  # type: ignore[attr-defined]
    if lhs is None or rhs is None:
        return None
    kind = e.kind  # type: ignore[attr-defined]
    if kind == "add":
        return wrap(lhs + rhs, INDEX_WIDTH)
    if kind == "mul":
        return wrap(lhs * rhs, INDEX_WIDTH)
    if rhs <= 0:
        return None
    if kind == "floordiv":
        return lhs // rhs
    if kind == "ceildiv":
        return -((-lhs) // rhs)
    return lhs % rhs  # mod: non-negative for a positive divisor


def _apply_value(map_attr: A.Attribute, *consts: A.Attribute) -> A.Attribute | None:
    amap = getattr(map_attr, "value", None)
    if not isinstance(amap, AF.AffineMap) or len(amap.results) != 1:
        return None
    values = [elements(c) for c in consts]
    if any(v is None or len(v) != 1 for v in values):
        return None
    flat = [int(v[0]) for v in values]  # type: ignore[index]
    if len(flat) != amap.num_dims + amap.num_symbols:
        return None
    out = evaluate(amap.results[0], flat[:amap.num_dims], flat[amap.num_dims:])
    return None if out is None else A.IntegerAttr(out, T.index)


def _fold_apply(arity: int) -> Rule:
    operands = [var(f"c{i}") for i in range(arity)]
    native = Native(f"affine-apply-{arity}", _apply_value, (Var("m"),) + tuple(ConstOf(o.name) for o in operands))
    return rule(f"affine-apply-const-{arity}", op("affine.apply", operands, map=m),
                op("arith.constant", value=native), where=[is_constant(o) for o in operands],
                doc=f"affine.apply of {arity} constant operand(s) is the index constant its map computes")


def _constant_result(map_attr: A.Attribute) -> bool:
    amap = getattr(map_attr, "value", None)
    return isinstance(amap, AF.AffineMap) and len(amap.results) == 1 and isinstance(amap.results[0], AF.Const)


def _constant_value(map_attr: A.Attribute) -> A.Attribute | None:
    return A.IntegerAttr(map_attr.value.results[0].value, T.index) if _constant_result(map_attr) else None


def _is_identity(map_attr: A.Attribute) -> bool:
    amap = getattr(map_attr, "value", None)
    return isinstance(amap, AF.AffineMap) and amap.num_dims + amap.num_symbols == 1 and len(amap.results) == 1 \
        and amap.results[0] in (AF.Dim(0), AF.Symbol(0))


def _min_max_value(kind: str):
    """The fold of `affine.min`/`affine.max` of constants: the least/greatest result of the map."""
    pick = min if kind == "min" else max

    def fn(map_attr: A.Attribute, *consts: A.Attribute) -> A.Attribute | None:
        amap = getattr(map_attr, "value", None)
        values = [elements(c) for c in consts]
        if not isinstance(amap, AF.AffineMap) or not amap.results or any(v is None or len(v) != 1 for v in values):
            return None
        flat = [int(v[0]) for v in values]  # type: ignore[index]
        if len(flat) != amap.num_dims + amap.num_symbols:
            return None
        outs = [evaluate(r, flat[:amap.num_dims], flat[amap.num_dims:]) for r in amap.results]
        return None if any(o is None for o in outs) else A.IntegerAttr(pick(outs), T.index)  # type: ignore[type-var]
    return fn


def _fold_min_max(kind: str, arity: int) -> Rule:
    operands = [var(f"c{i}") for i in range(arity)]
    native = Native(f"affine-{kind}-{arity}", _min_max_value(kind),
                    (Var("m"),) + tuple(ConstOf(o.name) for o in operands))
    word = "least" if kind == "min" else "greatest"
    return rule(f"affine-{kind}-const-{arity}", op(f"affine.{kind}", operands, map=m),
                op("arith.constant", value=native), where=[is_constant(o) for o in operands],
                doc=f"affine.{kind} of {arity} constant operand(s) is the {word} result of its map")


def simplify_results(amap: AF.AffineMap, kind: str) -> AF.AffineMap:
    """The results of a min/max map without duplicates, its constant results reduced to the
    least (min) or greatest (max) one: min(a, b, a, 3, 5) = min(a, b, 3), in first-seen order."""
    pick = min if kind == "min" else max
    constants = [r.value for r in amap.results if isinstance(r, AF.Const)]
    kept: list[AF.AffineExpr] = []
    for r in amap.results:
        if isinstance(r, AF.Const):
            r = AF.Const(pick(constants))
        if r not in kept:
            kept.append(r)
    return AF.AffineMap(amap.num_dims, amap.num_symbols, kept)


def _simplified_results(kind: str):
    def fn(map_attr: A.Attribute) -> A.Attribute | None:
        amap = getattr(map_attr, "value", None)
        if not isinstance(amap, AF.AffineMap):
            return None
        simpler = simplify_results(amap, kind)
        return None if simpler == amap else A.AffineMapAttr(simpler)
    return fn


def _one_result(map_attr: A.Attribute) -> bool:
    return len(map_attr.value.results) == 1  # type: ignore[attr-defined]


def _min_max_rules(kind: str) -> list[Rule]:
    """The rules of `affine.{kind}`: its constant folds (one per operand count, each operand a
    constant) and two rules over its whole operand group `g`."""
    simpler = Native(f"affine-{kind}-results", _simplified_results(kind), (Var("m"),))
    source = op(f"affine.{kind}", g, map=m)
    return [
        *(_fold_min_max(kind, n) for n in (0, 1, 2, 3)),
        rule(f"affine-{kind}-single-result", source, op("affine.apply", g, map=m),
             where=[pred("the map has one result", _one_result, m)],
             doc=f"affine.{kind} of a one-result map is affine.apply of it"),
        rule(f"affine-{kind}-results", source, op(f"affine.{kind}", g, map=simpler),
             doc=f"affine.{kind}'s map drops duplicate results and keeps only the "
                 f"{'least' if kind == 'min' else 'greatest'} of its constant results"),
    ]


RULES = [
    *(_fold_apply(n) for n in (0, 1, 2, 3)),
    rule("affine-apply-constant-map", op("affine.apply", g, map=m),
         op("arith.constant", value=Native("affine-map-constant", _constant_value, (Var("m"),))),
         where=[pred("the map's result is a constant", _constant_result, m)],
         doc="an affine map whose result is a constant ignores its operands"),
    rule("affine-apply-identity", op("affine.apply", [x], map=m), x,
         where=[pred("the map is (d0) -> (d0) or ()[s0] -> (s0)", _is_identity, m)],
         doc="affine.apply of the identity map forwards its one operand"),
    *_min_max_rules("min"),
    *_min_max_rules("max"),
]



# ------------------------------------------------------------------ affine.apply into load/store maps

def substitute(e: AF.AffineExpr, dims: Sequence[AF.AffineExpr], syms: Sequence[AF.AffineExpr]) -> AF.AffineExpr:
    """`e` with Dim(i) := dims[i] and Symbol(i) := syms[i], re-simplified as MLIR's builders do."""
    if isinstance(e, AF.Dim):
        return dims[e.pos]
    if isinstance(e, AF.Symbol):
        return syms[e.pos]
    if isinstance(e, AF.Const):
        return e
    lhs, rhs = substitute(e.lhs, dims, syms), substitute(e.rhs, dims, syms)  # type: ignore[attr-defined]
    if e.kind == "add":  # type: ignore[attr-defined]
        return AF.simplify_add(lhs, rhs)
    if e.kind == "mul":  # type: ignore[attr-defined]
        return AF.simplify_mul(lhs, rhs)
    return AF.simplify_div(lhs, rhs, e.kind)  # type: ignore[attr-defined]


#: Composition refuses to build an expression deeper than this (MLIR composes without a bound; a
#: chain of n applies each nesting its operand once more would otherwise grow without limit, and
#: printing, hashing and simplifying recurse through the depth).
MAX_COMPOSED_DEPTH = 48


def compose_operand(outer: AF.AffineMap, k: int, inner: AF.AffineMap) -> AF.AffineMap | None:
    """`outer` with its operand #k (a dim or symbol) replaced by the single result of `inner`
    applied to operands spliced in at position k. Inner operands become dims when k is a dim
    (a valid symbol is a valid dim), symbols when k is a symbol (an index used as a symbol is
    an affine.apply of symbols only). None when a result would be deeper than MAX_COMPOSED_DEPTH."""
    if len(inner.results) != 1 or not 0 <= k < outer.num_dims + outer.num_symbols:
        return None
    j = inner.num_dims + inner.num_symbols
    nd, ns = outer.num_dims, outer.num_symbols
    if k < nd:
        spliced = [AF.Dim(k + p) for p in range(j)]
        f = substitute(inner.results[0], spliced[:inner.num_dims], spliced[inner.num_dims:])
        dims = [AF.Dim(i) for i in range(k)] + [f] + [AF.Dim(i - 1 + j) for i in range(k + 1, nd)]
        syms = [AF.Symbol(i) for i in range(ns)]
        new_nd, new_ns = nd - 1 + j, ns
    else:
        s = k - nd
        spliced = [AF.Symbol(s + p) for p in range(j)]
        f = substitute(inner.results[0], spliced[:inner.num_dims], spliced[inner.num_dims:])
        dims = [AF.Dim(i) for i in range(nd)]
        syms = [AF.Symbol(i) for i in range(s)] + [f] + [AF.Symbol(i - 1 + j) for i in range(s + 1, ns)]
        new_nd, new_ns = nd, ns - 1 + j
    results = [simplify_expr(substitute(r, dims, syms)) for r in outer.results]
    if any(r.depth > MAX_COMPOSED_DEPTH for r in results):
        return None
    return AF.AffineMap(new_nd, new_ns, results)


def compose_keeping_kinds(outer: AF.AffineMap, k: int, inner: AF.AffineMap) -> AF.AffineMap | None:
    """`outer` with its operand #k replaced by the single result of `inner`, the way MLIR's
    composition orders inputs: inner dims stay dims (at k when k is a dim, after the outer dims
    when k is a symbol), inner symbols stay symbols, after the outer ones. The new operands are
    `outer dims with k replaced by inner dims (or + inner dims), outer symbols (less k), inner
    symbols`. None when a result would be deeper than MAX_COMPOSED_DEPTH."""
    if len(inner.results) != 1 or not 0 <= k < outer.num_dims + outer.num_symbols:
        return None
    nd, ns, jd, js = outer.num_dims, outer.num_symbols, inner.num_dims, inner.num_symbols
    if k < nd:
        f = substitute(inner.results[0], [AF.Dim(k + p) for p in range(jd)], [AF.Symbol(ns + q) for q in range(js)])
        dims = [AF.Dim(i) for i in range(k)] + [f] + [AF.Dim(i - 1 + jd) for i in range(k + 1, nd)]
        syms = [AF.Symbol(i) for i in range(ns)]
        new_nd, new_ns = nd - 1 + jd, ns + js
    else:
        s = k - nd
        f = substitute(inner.results[0], [AF.Dim(nd + p) for p in range(jd)],
                       [AF.Symbol(ns - 1 + q) for q in range(js)])
        dims = [AF.Dim(i) for i in range(nd)]
        syms = [AF.Symbol(i) for i in range(s)] + [f] + [AF.Symbol(i - 1) for i in range(s + 1, ns)]
        new_nd, new_ns = nd + jd, ns - 1 + js
    results = [substitute(r, dims, syms) for r in outer.results]
    if any(r.depth > MAX_COMPOSED_DEPTH for r in results):
        return None
    return AF.AffineMap(new_nd, new_ns, results)


def _composed(k: int):
    def fn(outer: A.Attribute, inner: A.Attribute) -> A.Attribute | None:
        o, i = getattr(outer, "value", None), getattr(inner, "value", None)
        if not (isinstance(o, AF.AffineMap) and isinstance(i, AF.AffineMap)):
            return None
        composed = compose_operand(o, k, i)
        return None if composed is None else A.AffineMapAttr(composed)
    return fn


def _compose_rules(kind: str, n: int, k: int, j: int) -> Rule:
    idx = [var(f"i{p}") for p in range(n)]
    args = [var(f"a{p}") for p in range(j)]
    apply = op("affine.apply", args, map=var("inner"))
    source_indices = idx[:k] + [apply] + idx[k + 1:]
    result_indices = idx[:k] + args + idx[k + 1:]
    composed = Native(f"compose-map-at-{k}", _composed(k), (Var("m"), Var("inner")))
    mem, val = var("mem"), var("v")
    doc = (f"affine.{kind} whose index #{k} (of {n}) is an affine.apply of {j} operand(s): the apply's map "
           "is composed into the access map and its operands become the access's (the same address, "
           "evaluated on the same integers)")
    if kind == "apply":
        return rule(f"affine-apply-compose-{n}-{k}-{j}", op("affine.apply", source_indices, map=m),
                    op("affine.apply", result_indices, map=composed),
                    doc=f"affine.apply whose operand #{k} (of {n}) is an affine.apply of {j} operand(s): the "
                        "inner map is composed into the outer one (the same value on the same integers; the "
                        "apply verifier asks nothing of dims and symbols, so any operands may be spliced)")
    if kind == "load":
        return rule(f"affine-load-compose-{n}-{k}-{j}", op("affine.load", mem, source_indices, map=m),
                    op("affine.load", mem, result_indices, map=composed), doc=doc)
    return rule(f"affine-store-compose-{n}-{k}-{j}", op("affine.store", val, mem, source_indices, map=m),
                op("affine.store", val, mem, result_indices, map=composed), doc=doc)


#: An apply composed into an affine.load or affine.store map (effectful roots, rebuilt in place).
COMPOSE = [_compose_rules(kind, n, k, j) for kind in ("load", "store") for n in (1, 2, 3) for k in range(n)
           for j in (1, 2, 3)]

#: affine.apply of affine.apply, composed (pure: on the e-graph).
APPLY_COMPOSE = [_compose_rules("apply", n, k, j) for n in (1, 2, 3) for k in range(n) for j in (1, 2, 3)]

register_rule_set("memref-affine-canonical", [*RULES, *APPLY_COMPOSE, *COMPOSE],
                  "affine canonicalization: apply/min/max folding and composition, maps and operands "
                  "canonicalized, decided loops and ifs removed or inlined, memref casts folded into "
                  "graybox operands, unused and duplicate graybox operands dropped",
                  structural=("affine-loops", "affine-maps", "graybox-cast-fold", "graybox-drop-args"))
