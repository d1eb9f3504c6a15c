"""Affine expressions, maps and integer sets.

Expressions are simplified on construction the way MLIR's AffineExpr
operators do it (constants folded and moved to the right, `x + 0` and `x * 1`
dropped), so that printing gives MLIR's canonical text.
"""

from __future__ import annotations

import math
from typing import Sequence


class AffineExpr:
    """`depth` is the height of the expression tree (0 for a leaf), which
    the parser bounds: printing, hashing and simplifying recurse through it.
    `divisor` is a positive integer known to divide the expression."""

    __slots__ = ()
    depth = 0
    divisor = 1

    def __add__(self, other: "AffineExpr | int") -> "AffineExpr":
        return simplify_add(self, _e(other))

    def __radd__(self, other: int) -> "AffineExpr":
        return simplify_add(_e(other), self)

    def __mul__(self, other: "AffineExpr | int") -> "AffineExpr":
        return simplify_mul(self, _e(other))

    def __rmul__(self, other: int) -> "AffineExpr":
        return simplify_mul(_e(other), self)

    def __neg__(self) -> "AffineExpr":
        return simplify_mul(self, Const(-1))

    def __sub__(self, other: "AffineExpr | int") -> "AffineExpr":
        return self + (-_e(other))

    def floordiv(self, other: "AffineExpr | int") -> "AffineExpr":
        return simplify_div(self, _e(other), "floordiv")

    def ceildiv(self, other: "AffineExpr | int") -> "AffineExpr":
        return simplify_div(self, _e(other), "ceildiv")

    def mod(self, other: "AffineExpr | int") -> "AffineExpr":
        return simplify_div(self, _e(other), "mod")

    def is_symbolic_or_constant(self) -> bool:
        raise NotImplementedError

    def __str__(self) -> str:
        return render(self, weak=True)


def _e(x: "AffineExpr | int") -> AffineExpr:
    return Const(x) if isinstance(x, int) else x


class Dim(AffineExpr):
    __slots__ = ("pos",)

    def __init__(self, pos: int) -> None:
        self.pos = pos

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Dim) and o.pos == self.pos

    def __hash__(self) -> int:
        return hash(("d", self.pos))

    def is_symbolic_or_constant(self) -> bool:
        return False


class Symbol(AffineExpr):
    __slots__ = ("pos",)

    def __init__(self, pos: int) -> None:
        self.pos = pos

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Symbol) and o.pos == self.pos

    def __hash__(self) -> int:
        return hash(("s", self.pos))

    def is_symbolic_or_constant(self) -> bool:
        return True


class Const(AffineExpr):
    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    @property
    def divisor(self) -> int:  # type: ignore[override]
        return abs(self.value) or 1

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Const) and o.value == self.value

    def __hash__(self) -> int:
        return hash(("c", self.value))

    def is_symbolic_or_constant(self) -> bool:
        return True


class Binary(AffineExpr):
    """`kind` is one of add, mul, mod, floordiv, ceildiv.  What simplification
    asks of every operand (depth, divisor, whether it is symbolic) is computed
    once here, so that building an expression term by term stays linear."""

    __slots__ = ("kind", "lhs", "rhs", "depth", "divisor", "symbolic")

    def __init__(self, kind: str, lhs: AffineExpr, rhs: AffineExpr) -> None:
        self.kind = kind
        self.lhs = lhs
        self.rhs = rhs
        self.depth = 1 + max(lhs.depth, rhs.depth)
        if kind == "mul":
            self.divisor = lhs.divisor * rhs.divisor
        elif kind == "add":
            self.divisor = math.gcd(lhs.divisor, rhs.divisor)
        else:
            self.divisor = 1
        self.symbolic = lhs.is_symbolic_or_constant() and rhs.is_symbolic_or_constant()

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Binary) and (o.kind, o.lhs, o.rhs) == (self.kind, self.lhs, self.rhs)

    def __hash__(self) -> int:
        return hash((self.kind, self.lhs, self.rhs))

    def is_symbolic_or_constant(self) -> bool:
        return self.symbolic


def largest_known_divisor(e: AffineExpr) -> int:
    """A positive integer known to divide `e` (1 if nothing better is known)."""
    return e.divisor


def _mul_parts(e: AffineExpr) -> tuple[AffineExpr, int]:
    """`x * c` as (x, c); anything else as (e, 1)."""
    if isinstance(e, Binary) and e.kind == "mul" and isinstance(e.rhs, Const):
        return e.lhs, e.rhs.value
    return e, 1


def simplify_add(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    if isinstance(lhs, Const) and isinstance(rhs, Const):
        return Const(lhs.value + rhs.value)
    # Constants, then symbolic terms, go to the right.
    if isinstance(lhs, Const) or (lhs.is_symbolic_or_constant() and not rhs.is_symbolic_or_constant()):
        return simplify_add(rhs, lhs)
    lbin = lhs if isinstance(lhs, Binary) else None
    if isinstance(rhs, Const):
        if rhs.value == 0:
            return lhs
        if lbin is not None and lbin.kind == "add" and isinstance(lbin.rhs, Const):
            return simplify_add(lbin.lhs, Const(lbin.rhs.value + rhs.value))
    # c1 * x + c2 * x  ->  (c1 + c2) * x
    (x1, c1), (x2, c2) = _mul_parts(lhs), _mul_parts(rhs)
    if x1 == x2:
        return simplify_mul(x1, Const(c1 + c2))
    # (a + c) + b  ->  (a + b) + c, keeping the constant last.
    if lbin is not None and lbin.kind == "add" and isinstance(lbin.rhs, Const):
        return simplify_add(simplify_add(lbin.lhs, rhs), lbin.rhs)
    # x + (x floordiv c) * -c  ->  x mod c
    if isinstance(rhs, Binary) and rhs.kind == "mul" and isinstance(rhs.rhs, Const):
        q = rhs.lhs
        if isinstance(q, Binary) and q.kind == "floordiv" and q.lhs == lhs and isinstance(q.rhs, Const) \
                and q.rhs.value == -rhs.rhs.value:
            return simplify_div(lhs, q.rhs, "mod")
    return Binary("add", lhs, rhs)


def simplify_mul(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    if isinstance(lhs, Const) and isinstance(rhs, Const):
        return Const(lhs.value * rhs.value)
    if not lhs.is_symbolic_or_constant() and not rhs.is_symbolic_or_constant():
        return Binary("mul", lhs, rhs)  # not affine; the parser reports it
    # The constant, else the symbolic factor, goes to the right.
    if not rhs.is_symbolic_or_constant() or isinstance(lhs, Const):
        lhs, rhs = rhs, lhs
    if isinstance(rhs, Const):
        if rhs.value == 1:
            return lhs
        if rhs.value == 0:
            return Const(0)
        if isinstance(lhs, Binary) and lhs.kind == "mul" and isinstance(lhs.rhs, Const):
            return simplify_mul(lhs.lhs, Const(lhs.rhs.value * rhs.value))
    # (x * c) * y  ->  (x * y) * c, keeping the constant last.
    if isinstance(lhs, Binary) and lhs.kind == "mul" and isinstance(lhs.rhs, Const):
        return simplify_mul(simplify_mul(lhs.lhs, rhs), lhs.rhs)
    return Binary("mul", lhs, rhs)


def simplify_div(lhs: AffineExpr, rhs: AffineExpr, kind: str) -> AffineExpr:
    """floordiv, ceildiv and mod by a positive constant fold as MLIR folds
    them; anything else is kept as written."""
    if not isinstance(rhs, Const) or rhs.value < 1:
        return Binary(kind, lhs, rhs)
    c = rhs.value
    if isinstance(lhs, Const):
        a = lhs.value
        return Const(a // c if kind == "floordiv" else -((-a) // c) if kind == "ceildiv" else a % c)
    lbin = lhs if isinstance(lhs, Binary) else None
    if kind == "mod":
        if largest_known_divisor(lhs) % c == 0:
            return Const(0)
        if lbin is not None and lbin.kind == "add":
            if largest_known_divisor(lbin.lhs) % c == 0:
                return simplify_div(lbin.rhs, rhs, "mod")
            if largest_known_divisor(lbin.rhs) % c == 0:
                return simplify_div(lbin.lhs, rhs, "mod")
        if lbin is not None and lbin.kind == "mod" and isinstance(lbin.rhs, Const) and lbin.rhs.value >= 1 \
                and lbin.rhs.value % c == 0:
            return simplify_div(lbin.lhs, rhs, "mod")
        return Binary(kind, lhs, rhs)
    if c == 1:
        return lhs
    if lbin is not None and lbin.kind == "mul" and isinstance(lbin.rhs, Const) and lbin.rhs.value % c == 0:
        return simplify_mul(lbin.lhs, Const(lbin.rhs.value // c))
    if kind == "floordiv" and lbin is not None and lbin.kind == "add":
        if largest_known_divisor(lbin.lhs) % c == 0:
            return simplify_add(simplify_div(lbin.lhs, rhs, kind), simplify_div(lbin.rhs, rhs, kind))
        if largest_known_divisor(lbin.rhs) % c == 0:
            return simplify_add(simplify_div(lbin.lhs, rhs, kind), simplify_div(lbin.rhs, rhs, kind))
    return Binary(kind, lhs, rhs)


_OP_TEXT = {"mul": " * ", "mod": " mod ", "floordiv": " floordiv ", "ceildiv": " ceildiv "}


def render(e: AffineExpr, weak: bool = True, dims: Sequence[str] | None = None,
           syms: Sequence[str] | None = None) -> str:
    """MLIR's printing: `-x` for `x * -1`, `a - b` for `a + b * -1`,
    `a - b * 3` for `a + b * -3`, `a - 2` for `a + -2`, and parentheses
    around any compound operand of a binary op."""
    if isinstance(e, Dim):
        return dims[e.pos] if dims else f"d{e.pos}"
    if isinstance(e, Symbol):
        return syms[e.pos] if syms else f"s{e.pos}"
    if isinstance(e, Const):
        return str(e.value)
    assert isinstance(e, Binary)
    if e.kind != "add":
        if e.kind == "mul" and isinstance(e.rhs, Const) and e.rhs.value == -1:
            text = "-" + render(e.lhs, False, dims, syms)
        else:
            text = render(e.lhs, False, dims, syms) + _OP_TEXT[e.kind] + render(e.rhs, False, dims, syms)
        return text if weak else f"({text})"
    lhs = render(e.lhs, True, dims, syms)
    rhs = e.rhs
    if isinstance(rhs, Binary) and rhs.kind == "mul" and isinstance(rhs.rhs, Const) and rhs.rhs.value < 0:
        if rhs.rhs.value == -1:
            neg = render(rhs.lhs, not (isinstance(rhs.lhs, Binary) and rhs.lhs.kind == "add"), dims, syms)
            text = f"{lhs} - {neg}"
        else:
            text = f"{lhs} - {render(rhs.lhs, False, dims, syms)} * {-rhs.rhs.value}"
    elif isinstance(rhs, Const) and rhs.value < 0:
        text = f"{lhs} - {-rhs.value}"
    else:
        text = f"{lhs} + {render(rhs, True, dims, syms)}"
    return text if weak else f"({text})"


class AffineMap:
    __slots__ = ("num_dims", "num_symbols", "results")

    def __init__(self, num_dims: int, num_symbols: int, results: Sequence[AffineExpr]) -> None:
        self.num_dims = num_dims
        self.num_symbols = num_symbols
        self.results = tuple(results)

    def __eq__(self, o: object) -> bool:
        return isinstance(o, AffineMap) and (o.num_dims, o.num_symbols, o.results) == \
            (self.num_dims, self.num_symbols, self.results)

    def __hash__(self) -> int:
        return hash((self.num_dims, self.num_symbols, self.results))

    def is_identity(self) -> bool:
        return self.num_symbols == 0 and len(self.results) == self.num_dims and \
            all(r == Dim(i) for i, r in enumerate(self.results))

    def __str__(self) -> str:
        head = _header(self.num_dims, self.num_symbols)
        return f"{head} -> ({', '.join(map(str, self.results))})"


class IntegerSet:
    __slots__ = ("num_dims", "num_symbols", "constraints")

    def __init__(self, num_dims: int, num_symbols: int, constraints: Sequence[tuple[AffineExpr, bool]]) -> None:
        self.num_dims = num_dims
        self.num_symbols = num_symbols
        self.constraints = tuple(constraints)  # (expr, is_equality)

    def __eq__(self, o: object) -> bool:
        return isinstance(o, IntegerSet) and (o.num_dims, o.num_symbols, o.constraints) == \
            (self.num_dims, self.num_symbols, self.constraints)

    def __hash__(self) -> int:
        return hash((self.num_dims, self.num_symbols, self.constraints))

    def __str__(self) -> str:
        head = _header(self.num_dims, self.num_symbols)
        if not self.constraints:
            return f"{head} : (1 == 0)"
        body = ", ".join(f"{e} {'==' if eq else '>='} 0" for e, eq in self.constraints)
        return f"{head} : ({body})"


def _header(nd: int, ns: int) -> str:
    dims = "(" + ", ".join(f"d{i}" for i in range(nd)) + ")"
    return dims + ("[" + ", ".join(f"s{i}" for i in range(ns)) + "]" if ns else "")
