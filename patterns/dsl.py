"""The small DSL that builds rule values: `op`, `var`, `either`, `ref`, `rule`, ...

    x, y = vars_("x y")
    rule("sub-self", op("tf.Sub", x, x), op("tf.ZerosLike", x),
         doc="x - x is a tensor of zeros shaped like x")

Everything here only normalizes Python conveniences (strings as variable
names, lists as variadic groups, `bool`/`str` as attributes) into the frozen
values of `rule.py`, and `rule()` validates the result at declaration time so
that a wrong rule fails where it is written, not when it first runs.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from egraft.ir.core import attributes as A
from egraft.ir.records.constraints import Constraint
from egraft.ir.core.types import Type

from .rule import (CheckLike, ConstOf, Either, Native, OpPat, Origin, ResultOf, Rule, RuleError, TypeOf, Var,
                   WILDCARD_NAME, caller_origin, walk_ops)

_ = Var(WILDCARD_NAME)
"""The wildcard: matches any operand or attribute and binds nothing."""


def var(name: str, constraint: Constraint | None = None) -> Var:
    """A pattern variable, optionally constrained (on a value's type, or on an attribute)."""
    if not name or not name.replace("_", "a").isalnum():
        raise ValueError(f"variable names are identifiers, got {name!r}")
    return Var(name, constraint)


def vars_(names: str) -> tuple[Var, ...]:
    """Several unconstrained variables at once: `x, y = vars_("x y")`."""
    return tuple(var(n) for n in names.split())


def either(a: Any, b: Any) -> Either:
    """Two operands matched in either order (commutative matching)."""
    return Either(operand(a), operand(b))


def ref(name: str, index: int | None = None) -> Var | ResultOf:
    """A bound op (or value) by name; with `index`, result #index of the bound op."""
    return Var(name) if index is None else ResultOf(name, index)


def type_of(v: Var | str) -> TypeOf:
    return TypeOf(_name(v))


def const_of(v: Var | str) -> ConstOf:
    return ConstOf(_name(v))


def native(name: str, fn: Callable[..., Any], *args: Any, kind: str = "attr") -> Native:
    """A named Python call in a result (attribute, type, or IR-building helper)."""
    return Native(name, fn, tuple(expr(a) for a in args), kind)


def op(name: str, *operands: Any, types: Sequence[Any] | None = None, copy_attrs: Var | str | None = None,
       attrs: dict[str, Any] | None = None, **attr_kwargs: Any) -> OpPat:
    """An op to match (source) or build (result).

    Operands: variables, nested ops, `x[i]` results, `either(...)`, strings
    (variable names) or lists (a variadic group).  Attributes come as keyword
    arguments or `attrs={...}` (for names that are not identifiers)."""
    merged = dict(attrs or {})
    merged.update(attr_kwargs)
    return OpPat(
        name,
        tuple(operand(o) for o in operands),
        tuple(sorted((k, attr_value(v)) for k, v in merged.items())),
        None,
        None if types is None else tuple(expr(t) for t in types),
        None if copy_attrs is None else _name(copy_attrs),
    )


def rule(name: str, source: OpPat | Sequence[OpPat], result: Any, *, where: Iterable[CheckLike] = (),
         benefit: int | None = None, doc: str = "", commutative: bool = False, tags: Iterable[str] = (),
         origin: Origin | None = None, validate: bool = True) -> Rule:
    """Declare (and validate) a rule.

    `source` is one op pattern, or a list of them for a multi-root rule.
    `result` is, for one root, a value or a tuple of values (one per result
    of the root); for several roots, a list with one such entry per root
    (None for a root that stays).  The benefit defaults to the number of ops
    in the source, as DRR counts it."""
    origin = origin or caller_origin()
    roots = (source,) if isinstance(source, OpPat) else tuple(source)
    if not roots or not all(isinstance(r, OpPat) for r in roots):
        raise RuleError("the source must be an op pattern or a list of op patterns", name, origin)
    if len(roots) == 1:
        results: tuple = (_result_values(result),)
    else:
        if not isinstance(result, (list, tuple)) or len(result) != len(roots):
            raise RuleError(f"a rule with {len(roots)} roots needs a list of {len(roots)} results", name, origin)
        results = tuple(None if r is None else _result_values(r) for r in result)
    if benefit is None:
        benefit = sum(1 for r in roots for _ in walk_ops(r))
    made = Rule(name, roots, results, tuple(where), benefit, doc, origin, commutative, frozenset(tags))
    if validate:
        from .validate import validate_rule

        validate_rule(made)
    return made


# ------------------------------------------------------------------ normalization


def _name(v: Var | str) -> str:
    return v.name if isinstance(v, Var) else v


def _result_values(result: Any) -> tuple:
    if isinstance(result, tuple):
        return tuple(expr(r) for r in result)
    return (expr(result),)


def operand(o: Any) -> Any:
    """Normalize an operand: a string is a variable, a list a variadic group."""
    if isinstance(o, str):
        return Var(o)
    if isinstance(o, list):
        return tuple(operand(x) for x in o)
    if isinstance(o, tuple):
        return tuple(operand(x) for x in o)
    if isinstance(o, (Var, OpPat, ResultOf, Either, Native)):
        return o
    raise TypeError(f"not an operand pattern: {o!r}")


def expr(e: Any) -> Any:
    """Normalize a result, check or native argument."""
    if isinstance(e, str):
        return Var(e)
    if isinstance(e, list):
        return tuple(expr(x) for x in e)
    return e


def attr_value(v: Any) -> Any:
    """Normalize an attribute pattern: Python bools and strings become attributes."""
    if isinstance(v, bool):
        return A.BoolAttr(v)
    if isinstance(v, str):
        return A.StringAttr(v)
    if isinstance(v, (int, float)):
        raise TypeError(f"attribute value {v!r} needs a type: give an IntegerAttr/FloatAttr")
    if isinstance(v, (A.Attribute, Var, Native, Type)):
        return v
    raise TypeError(f"not an attribute pattern: {v!r}")
