"""The rule data model: rewrite rules are plain, frozen Python values.

A rule says "wherever this source DAG of ops matches and these checks hold,
replace the matched root values with these result values".  Two engines run
the same values: the greedy driver (`rewrite/greedy/driver.py`) matches them against
IR ops directly, the e-graph compiler (`rewrite/rules/compile.py`) lowers them
to egglog rules.  This module is the contract between the two, so it only
holds data and the small DSL that builds it; nothing here looks at IR.

Spec (stable; engines may rely on every field named here):

Source side (the pattern)
    `OpPat(name, operands, attrs, binding)` matches an op called `name`.
    `operands` is positional: with a record that has variadic/optional groups,
    one entry per group (a `Var` binds the whole group as a tuple of values, a
    tuple of patterns matches a group of exactly that many values); without
    variadic groups (or without a record) one entry per operand.  Each entry
    is a `Var` (binds a value; the same name twice means the same value), the
    wildcard `Var("_")`, a nested `OpPat` (the operand is result #0 of a
    matching op), a `ResultOf(OpPat, i)` (the operand is result #i of it), an
    `Either(a, b)` (two operand slots matched in either order) or a tuple (a
    fixed-size variadic group).  `attrs` pairs attribute names with an
    `Attribute` (must be equal), a `Var` (binds the attribute; same name =
    equal) or a `Var` carrying an attribute constraint.  Attributes not named
    are not looked at.  `binding` names the matched op: used as a value it is
    the op's single result; `ResultOf("name", i)` is its result #i.
    A `Var` may carry an `ir.constraints.Constraint`, checked on the value's
    type (value variables) or on the attribute (attribute variables).
    `after_op` (set with `.after(pat)`) matches an effectful op whose incoming
    effect token is the effect of an op matching `pat`: that op is the
    nearest effectful op before it in its block (docs/encoding.md, "Effects
    and order"); nothing effectful lies between them.

Checks (the `where` clause)
    `Check(name, fn, args, kind, params)` holds when `fn(*evaluated args)` is
    true.  Arguments are expressions: a bound variable name's value (`Var`;
    an IR value or an attribute), `TypeOf(var)` (its type), `ConstOf(var)`
    (the attribute of the constant that produces it; when the value is not
    produced by a constant the check fails), `ResultOf`, or a literal.
    `kind` names the check for compilers ("same_type", "static_shape", ...,
    "python" for opaque predicates) and `params` holds its structured
    parameters; an engine that does not know a kind may evaluate `fn` on
    types/attributes.  Checks taking raw `Var`s of values (not wrapped in
    `TypeOf`/`ConstOf`) look at the IR and are greedy-only.  `AllOf`, `AnyOf`
    and `Not` compose checks (also `&`, `|`, `~`).

Result side
    A result expression is a `Var` (replace with a matched value), a
    `ResultOf` (a result of a matched or built op), an `OpPat` (build a new
    op: operands are result expressions, `attrs` values are an `Attribute`, a
    `Var` bound to an attribute, or a `Native`; `copy_attrs` names a matched
    op whose attributes are copied first; `result_types` is a tuple of
    `Type`, `TypeOf(var)` or `Native`, or None to infer: the type of the
    replaced value, else from operands for ops whose record says so), or a
    `Native(name, fn, args, kind)`.  Natives compute an attribute
    (kind "attr"), a type ("type") or build IR themselves ("build":
    `fn(builder, *args)` returns values; greedy only).  A native returning
    None makes the rule not apply (a fold that does not fold).  Built ops
    with the same `binding` are one op; `ResultOf("b", i)` refers to them.

Effects (a root whose op is not declared effect-free, `ir/effects.py`)
    A rule replaces an effectful root, effect included: the effectful ops its
    result builds for that root take the root's place on the effect chain, in
    the order they are built (operands before the op using them, left to
    right), the first consuming the root's incoming token.  A root without
    results (`memref.store`) is given the op, or tuple of ops, replacing it
    as its result.  A result that builds no effectful op *erases* the root:
    its effect becomes its incoming token, which is sound only for ops that
    at most read memory (`MemoryEffects(("read",))`), checked at declaration.
    Ops are never reordered: built ops sit exactly where the root was.

Rules
    `Rule(name, roots, results, where, benefit, doc, origin, commutative, tags)`:
    `roots` is one `OpPat` per source root (several roots share variables:
    Tensat's multi-pattern rules), `results[i]` the tuple of values replacing
    root i's results in order, or None when root i is context only and stays.
    `benefit` orders rules in the greedy driver (default: number of source
    ops, as DRR), `origin` is where the rule was declared (`file:line`),
    `commutative` asks the engines to match the operands of ops with the
    Commutative trait in either order, `tags` are free-form labels (the
    e-graph schedule reads "expand" for rules that grow the graph).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Iterator, Union

import attrs

from egraft.ir.core.attributes import Attribute
from egraft.ir.records.constraints import Constraint
from egraft.ir.core.types import Type

WILDCARD_NAME = "_"


class RuleError(Exception):
    """A rule that cannot be right, reported at its declaration (`file:line`)."""

    def __init__(self, message: str, rule: str | None = None, origin: "Origin | None" = None) -> None:
        self.rule = rule
        self.origin = origin
        where = f"{origin}: " if origin is not None else ""
        who = f"rule '{rule}': " if rule else ""
        super().__init__(f"{where}{who}{message}")


@attrs.frozen
class Origin:
    """Where a rule was declared: a Python file and line, or a `.td` file and line."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


_HERE = os.path.dirname(os.path.abspath(__file__))
# The DSL's own modules: frames in them are machinery, the first frame elsewhere
# (a user's module, or a built-in rule module of this package) declares the rule.
_MACHINERY = frozenset(os.path.join(_HERE, f) for f in ("rule.py", "dsl.py", "relational.py"))


def caller_origin() -> Origin:
    """The first stack frame outside the DSL's machinery: the rule's declaration."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) in _MACHINERY:
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return Origin("<unknown>", 0)
    return Origin(frame.f_code.co_filename, frame.f_lineno)


# ------------------------------------------------------------------ source and result terms


@attrs.frozen
class Var:
    """A pattern variable; `Var("_")` is the wildcard (never binds, never compared)."""

    name: str
    constraint: Constraint | None = None

    @property
    def is_wildcard(self) -> bool:
        return self.name == WILDCARD_NAME

    def __str__(self) -> str:
        return "_" if self.is_wildcard else f"${self.name}"


@attrs.frozen
class Either:
    """Two operand slots matched in either order (DRR's `either`)."""

    a: "Operand"
    b: "Operand"


@attrs.frozen
class ResultOf:
    """Result #index of an op: an `OpPat` given inline, or the name an op is bound to."""

    op: Union["OpPat", str]
    index: int


@attrs.frozen
class TypeOf:
    """The type of a bound value (check and native arguments, result types)."""

    var: str


@attrs.frozen
class ConstOf:
    """The attribute of the constant op producing a bound value; fails when there is none."""

    var: str


@attrs.frozen
class Native:
    """A Python function called while building results (DRR's NativeCodeCall).

    kind "attr": `fn(*args) -> Attribute | None`; "type": `fn(*args) -> Type | None`;
    "build": `fn(builder, *args) -> Value | Sequence[Value] | None` (greedy only)."""

    name: str
    fn: Callable[..., Any] = attrs.field(eq=False, repr=False)
    args: tuple["Expr", ...] = ()
    kind: str = "attr"

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("attr", "type", "build"):
            raise ValueError(f"native '{self.name}': kind must be attr, type or build, not {self.kind!r}")


@attrs.frozen
class OpPat:
    """An op in a source DAG (to match) or in a result DAG (to build)."""

    name: str
    operands: tuple["Operand", ...] = ()
    attrs: tuple[tuple[str, Any], ...] = ()
    binding: str | None = None
    result_types: tuple[Any, ...] | None = None
    copy_attrs: str | None = None
    after_op: "OpPat | None" = None

    def bind(self, name: str) -> "OpPat":
        """Name the matched (or built) op, DRR's `(Op:$name ...)`."""
        return attrs.evolve(self, binding=name)

    def after(self, previous: "OpPat") -> "OpPat":
        """Match only where the op's incoming effect token is the effect of an op matching
        `previous` (source patterns of effectful ops: store-to-load forwarding)."""
        return attrs.evolve(self, after_op=previous)

    def __getitem__(self, index: int) -> ResultOf:
        """Result #index of this op (multi-result ops)."""
        return ResultOf(self, index)

    def attr(self, name: str) -> Any:
        for key, value in self.attrs:
            if key == name:
                return value
        return None


Operand = Union[Var, OpPat, ResultOf, Either, tuple]
Expr = Union[Var, OpPat, ResultOf, TypeOf, ConstOf, Native, Attribute, Type, Any]


# ------------------------------------------------------------------ checks


class _Composable:
    """`&`, `|` and `~` on checks, as ODS's And/Or/Neg."""

    name: str

    def __and__(self, other: "CheckLike") -> "AllOf":
        return AllOf((self, other))  # type: ignore[arg-type]

    def __or__(self, other: "CheckLike") -> "AnyOf":
        return AnyOf((self, other))  # type: ignore[arg-type]

    def __invert__(self) -> "Not":
        return Not(self)  # type: ignore[arg-type]


@attrs.frozen
class Check(_Composable):
    """A named condition over bound entities (see the module docstring for arguments)."""

    name: str
    fn: Callable[..., bool] = attrs.field(eq=False, repr=False)
    args: tuple[Expr, ...] = ()
    kind: str = "python"
    params: tuple[Any, ...] = ()


@attrs.frozen
class AllOf(_Composable):
    checks: tuple["CheckLike", ...]

    @property
    def name(self) -> str:
        return "(" + " and ".join(c.name for c in self.checks) + ")"


@attrs.frozen
class AnyOf(_Composable):
    checks: tuple["CheckLike", ...]

    @property
    def name(self) -> str:
        return "(" + " or ".join(c.name for c in self.checks) + ")"


@attrs.frozen
class Not(_Composable):
    check: "CheckLike"

    @property
    def name(self) -> str:
        return f"not {self.check.name}"


CheckLike = Union[Check, AllOf, AnyOf, Not]


# ------------------------------------------------------------------ the rule


@attrs.frozen
class Rule:
    """One rewrite rule (see the module docstring for the meaning of each field)."""

    name: str
    roots: tuple[OpPat, ...]
    results: tuple[tuple[Expr, ...] | None, ...]
    where: tuple[CheckLike, ...] = ()
    benefit: int = 1
    doc: str = attrs.field(default="", eq=False)
    origin: Origin = attrs.field(default=Origin("<unknown>", 0), eq=False)
    commutative: bool = False
    tags: frozenset[str] = frozenset()

    @property
    def root(self) -> OpPat:
        """The first root (the op the greedy driver indexes the rule by)."""
        return self.roots[0]

    @property
    def is_multi_root(self) -> bool:
        return len(self.roots) > 1

    def source_ops(self) -> Iterator[OpPat]:
        """Every op of the source DAGs, roots first, pre-order."""
        for root in self.roots:
            yield from walk_ops(root)

    def result_ops(self) -> Iterator[OpPat]:
        """Every op the results build, pre-order."""
        for values in self.results:
            for value in values or ():
                yield from walk_ops(value)

    def error(self, message: str) -> RuleError:
        return RuleError(message, self.name, self.origin)

    def __str__(self) -> str:
        return f"{self.name} ({self.origin})"


def walk_ops(term: Any) -> Iterator[OpPat]:
    """Pre-order walk of the `OpPat`s inside a term (operands, Either, ResultOf, natives)."""
    if isinstance(term, OpPat):
        yield term
        for operand in term.operands:
            yield from walk_ops(operand)
        for _, value in term.attrs:
            yield from walk_ops(value)
        for t in term.result_types or ():
            yield from walk_ops(t)
        if term.after_op is not None:
            yield from walk_ops(term.after_op)
    elif isinstance(term, Either):
        yield from walk_ops(term.a)
        yield from walk_ops(term.b)
    elif isinstance(term, ResultOf) and isinstance(term.op, OpPat):
        yield from walk_ops(term.op)
    elif isinstance(term, tuple):
        for item in term:
            yield from walk_ops(item)
    elif isinstance(term, Native):
        for arg in term.args:
            yield from walk_ops(arg)
