"""Affine expressions in MLIR's simplified form: flattened to a sum of terms, then rebuilt.

MLIR's `simplifyAffineExpr` (which `simplifyAffineMap` applies to every result, and map
composition applies after substituting) writes a pure affine expression as
`c_d0 * d0 + ... + c_s0 * s0 + ... + c_q0 * q0 + ... + c`, where the q are "local" terms: a
`floordiv`/`ceildiv` by a positive constant of such a sum, and `x mod c` becomes
`x - (x floordiv c) * c`. Equal terms are collected, a division whose divisor divides every
coefficient is done exactly, and a common factor of a dividend and its divisor is cancelled. It
then rebuilds the expression in that order (dims, symbols, locals in first-seen order, the
constant last), which is why composed maps print as `s0 * 168 + s1 * 4 - 4`, not
`(s1 + s0 * 42 - 1) * 4`. An expression that is not pure affine (a product of two non-constant
terms, or a division by a non-constant) is returned as it is, as MLIR does.

Soundness: flattening and rebuilding compute the same integer for every input: sums and constant
products are exact (index arithmetic wraps modulo 2^64 on both sides), `x mod c = x - (x floordiv
c) * c` for c > 0, and `(g*a) floordiv (g*b) = a floordiv b` for g > 0 (likewise ceildiv).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from egraft.ir.core import affine as AF

#: A flattened expression: term -> coefficient, where a term is a Dim, a Symbol or a local
#: (a Binary floordiv/ceildiv by a positive constant), and None stands for the constant.
Linear = dict


class _NotPureAffine(Exception):
    pass


@lru_cache(maxsize=4096)
def simplify_expr(e: AF.AffineExpr) -> AF.AffineExpr:
    """`e` in MLIR's simplified form (module docstring); `e` itself when it is not pure affine.
    Cached: a program repeats few distinct expressions, each simplified once."""
    if isinstance(e, (AF.Dim, AF.Symbol, AF.Const)):
        return e
    locals_: list[AF.AffineExpr] = []
    try:
        flat = _flatten(e, locals_)
    except _NotPureAffine:
        return e
    return _rebuild(flat, locals_)


def simplify_map(amap: AF.AffineMap) -> AF.AffineMap:
    """Every result of `amap` simplified."""
    return AF.AffineMap(amap.num_dims, amap.num_symbols, [simplify_expr(r) for r in amap.results])


def _add(a: Linear, b: Linear, scale: int = 1) -> Linear:
    out = dict(a)
    for term, coef in b.items():
        out[term] = out.get(term, 0) + coef * scale
        if out[term] == 0:
            del out[term]
    return out


def _flatten(e: AF.AffineExpr, locals_: list[AF.AffineExpr]) -> Linear:
    if isinstance(e, AF.Const):
        return {None: e.value} if e.value else {}
    if isinstance(e, (AF.Dim, AF.Symbol)):
        return {e: 1}
    assert isinstance(e, AF.Binary)
    lhs = _flatten(e.lhs, locals_)
    if e.kind == "add":
        return _add(lhs, _flatten(e.rhs, locals_))
    rhs = _flatten(e.rhs, locals_)
    if e.kind == "mul":
        if set(rhs) <= {None}:
            return {t: c * rhs.get(None, 0) for t, c in lhs.items() if c * rhs.get(None, 0)}
        if set(lhs) <= {None}:
            return {t: c * lhs.get(None, 0) for t, c in rhs.items() if c * lhs.get(None, 0)}
        raise _NotPureAffine
    divisor = rhs.get(None, 0)
    if set(rhs) - {None} or divisor < 1:
        raise _NotPureAffine
    if all(c % divisor == 0 for c in lhs.values()):  # an exact division
        if e.kind == "mod":
            return {}
        return {t: c // divisor for t, c in lhs.items()}
    if e.kind == "mod":  # x mod c = x - (x floordiv c) * c
        return _add(lhs, _local(lhs, divisor, "floordiv", locals_), -divisor)
    return _local(lhs, divisor, e.kind, locals_)


def _local(lhs: Linear, divisor: int, kind: str, locals_: list[AF.AffineExpr]) -> Linear:
    """The flattened form of the local term `lhs kind divisor`, a common factor cancelled."""
    g = math.gcd(divisor, *lhs.values())
    if g > 1:
        lhs, divisor = {t: c // g for t, c in lhs.items()}, divisor // g
    if divisor == 1:
        return lhs
    term = AF.Binary(kind, _rebuild(lhs, locals_), AF.Const(divisor))
    if term not in locals_:
        locals_.append(term)
    return {term: 1}


def _order(term: AF.AffineExpr, locals_: Sequence[AF.AffineExpr]) -> tuple[int, int]:
    if isinstance(term, AF.Dim):
        return 0, term.pos
    if isinstance(term, AF.Symbol):
        return 1, term.pos
    return 2, locals_.index(term)


def _rebuild(flat: Linear, locals_: Sequence[AF.AffineExpr]) -> AF.AffineExpr:
    """The sum in MLIR's order: dims, symbols, locals, then the constant."""
    out: AF.AffineExpr | None = None
    for term in sorted((t for t in flat if t is not None), key=lambda t: _order(t, locals_)):
        part = term * flat[term]
        out = part if out is None else out + part
    const = AF.Const(flat.get(None, 0))
    return const if out is None else out + const
