"""The library of named checks for `where=` clauses (DRR's constraints, PDLL's Constraint).

Each factory returns a `Check` whose `kind` and `params` describe it to
compilers (the e-graph can test "same_type" by comparing type terms), whose
`fn` evaluates it, and whose `name` appears in reports.  Arguments are
variables or names; a factory wraps them in `TypeOf`/`ConstOf` so that the
check only needs what both engines know (types, attributes, constants).
Checks that must look at the IR itself (`has_one_use`) take raw variables
and are greedy-only.  `pred` is the escape hatch (DRR's CPred).
"""

from __future__ import annotations

from typing import Any, Callable

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.records.constraints import Constraint

from .dsl import expr
from .rule import Check, ConstOf, TypeOf, Var


def _n(v: Var | str) -> str:
    return v.name if isinstance(v, Var) else v


def pred(name: str, fn: Callable[..., bool], *args: Any) -> Check:
    """A Python predicate over evaluated arguments (variables, `type_of(x)`, `const_of(x)`, literals)."""
    return Check(name, fn, tuple(expr(a) for a in args), "python")


def type_is(v: Var | str, constraint: Constraint | T.Type) -> Check:
    """The value's type satisfies an ODS-style constraint (or is this exact type)."""
    if isinstance(constraint, T.Type):
        return Check(f"type({_n(v)}) == {constraint}", lambda t: t is constraint, (TypeOf(_n(v)),),
                     "type_equal", (constraint,))
    return Check(f"{_n(v)} is {constraint.summary}", constraint.predicate, (TypeOf(_n(v)),), "type_constraint",
                 (constraint,))


def attr_is(v: Var | str, constraint: Constraint) -> Check:
    """The bound attribute satisfies an ODS-style attribute constraint."""
    return Check(f"{_n(v)} is {constraint.summary}", constraint.predicate, (Var(_n(v)),), "attr_constraint",
                 (constraint,))


def same_type(a: Var | str, b: Var | str) -> Check:
    return Check(f"type({_n(a)}) == type({_n(b)})", lambda s, t: s is t, (TypeOf(_n(a)), TypeOf(_n(b))), "same_type")


def static_shape(v: Var | str) -> Check:
    return Check(f"{_n(v)} has a static shape",
                 lambda t: isinstance(t, T.ShapedType) and t.has_static_shape, (TypeOf(_n(v)),), "static_shape")


def has_rank(v: Var | str, rank: int | None = None) -> Check:
    """Ranked (with `rank`: of exactly that rank)."""
    def fn(t: T.Type) -> bool:
        if not isinstance(t, T.ShapedType):
            return rank in (None, 0)
        return t.has_rank and (rank is None or t.rank == rank)
    return Check(f"{_n(v)} has rank" + ("" if rank is None else f" {rank}"), fn, (TypeOf(_n(v)),), "rank", (rank,))


def float_element(v: Var | str) -> Check:
    return Check(f"{_n(v)} has float elements", T.is_float_like, (TypeOf(_n(v)),), "float_element")


def integer_element(v: Var | str) -> Check:
    return Check(f"{_n(v)} has integer elements", T.is_integer_like, (TypeOf(_n(v)),), "integer_element")


def element_type_is(v: Var | str, element: T.Type) -> Check:
    return Check(f"element type of {_n(v)} is {element}", lambda t: T.element_type(t) is element,
                 (TypeOf(_n(v)),), "element_type", (element,))


def is_constant(v: Var | str) -> Check:
    """The value is produced by a constant op (ConstantLike with a `value`)."""
    return Check(f"{_n(v)} is a constant", lambda c: True, (ConstOf(_n(v)),), "constant")


def splat_value(attr: A.Attribute) -> Any:
    """The single element of a splat or scalar constant attribute, or None."""
    if isinstance(attr, (A.IntegerAttr, A.FloatAttr)):
        return attr.value
    if isinstance(attr, A.DenseElementsAttr):
        if attr.is_splat:
            return attr.data
        try:
            arr = attr.to_numpy()
        except ValueError:
            return None
        if arr.size and (arr == arr.flat[0]).all():
            return arr.flat[0].item()
    return None


def is_splat(v: Var | str, value: float | int) -> Check:
    """The value is a constant whose elements all equal `value` (0, 1, -1, ...)."""
    def fn(c: A.Attribute) -> bool:
        x = splat_value(c)
        return x is not None and not isinstance(x, (str, bytes, tuple)) and x == value
    return Check(f"{_n(v)} is a splat of {value}", fn, (ConstOf(_n(v)),), "splat", (value,))


def attr_is_splat(a: Var | str, value: float | int) -> Check:
    """A bound attribute (a `value` of a constant, an integer attribute) is a splat of `value`."""
    def fn(attr: A.Attribute) -> bool:
        x = splat_value(attr) if attr is not None else None
        return x is not None and not isinstance(x, (str, bytes, tuple)) and x == value
    return Check(f"{_n(a)} is a splat of {value}", fn, (Var(_n(a)),), "attr_splat", (value,))


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy broadcasting of two static-or-dynamic shapes (-1 dynamic), None if incompatible."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == 1 or x == y:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x == T.DYNAMIC or y == T.DYNAMIC:
            out.append(max(x, y))
        else:
            return None
    return tuple(reversed(out))


def broadcastable(a: Var | str, b: Var | str) -> Check:
    """The two values' shapes are broadcast-compatible (unranked counts as compatible)."""
    def fn(s: T.Type, t: T.Type) -> bool:
        if not (isinstance(s, T.ShapedType) and isinstance(t, T.ShapedType)) or s.shape is None or t.shape is None:
            return True
        return broadcast_shape(s.shape, t.shape) is not None
    return Check(f"{_n(a)} and {_n(b)} broadcast", fn, (TypeOf(_n(a)), TypeOf(_n(b))), "broadcastable")


def has_one_use(v: Var | str) -> Check:
    """The value has exactly one use (looks at the IR: greedy driver only)."""
    return Check(f"{_n(v)} has one use", lambda value: len(value.uses) == 1, (Var(_n(v)),), "one_use")


def same_element_type(a: Var | str, b: Var | str) -> Check:
    return Check(f"element type of {_n(a)} == element type of {_n(b)}",
                 lambda s, t: T.element_type(s) is T.element_type(t), (TypeOf(_n(a)), TypeOf(_n(b))),
                 "same_element_type")
