"""Relational rules: analyses over facts, declared as Python values, checked where declared.

The rewrite :class:`~egraft.patterns.rule.Rule` replaces matched IR values by others. An
analysis of a graph needs what a rewrite cannot state: facts about its nodes (relations of
integers loaded from the IR), functions whose value only grows along a lattice (a set that
gains members, a depth that rises), and unions of terms that put them in one class (the
islands that merge). A :class:`RelationalRule` is datalog over those: when every atom of
``when`` holds, the actions of ``then`` run. It is the second kind of rule declaration,
kept apart from rewrites because it matches facts, not ops; it shares their machinery:
a name, a ``doc``, the declaration's ``file:line`` (:class:`~egraft.patterns.rule.Origin`),
and :class:`~egraft.patterns.rule.RuleError` for anything that cannot be right, raised
where the rule is written. ``rewrite/rules/relational.py`` compiles both the declarations
and the rules to egglog, next to the compiler of rewrites.

Declarations (a :class:`Declarations` holds them in order):

``datatype(name)``                  a sort of terms; two terms are equal once unioned.
``constructor(name, args, sort)``   a term of ``sort`` from ``args``: ``Nd(n)``.
``set_sort(name, element)``         sets of ``element`` terms (``.empty()``, ``.of(x)``,
                                    ``.insert(s, x)`` build them).
``function(name, args, result, merge)``  a lattice value per key: ``merge`` is "union"
                                    (sets), "max" or "min" (integers), what two values merge to.
``relation(name, *columns)``        a table of facts.

Rules: ``when`` holds relation atoms (``IEdgeR(s, d)``), equalities (``eq(x, dd(s))``:
``x`` is the value of ``dd`` at ``s``) and comparisons (``ne(l, m)``, ``ge(c, 0)``);
``then`` holds terms to make (``Nd(n)``), ``union(a, b)`` and ``set_(f(k), v)`` (join
``v`` into the lattice value of ``f`` at ``k``). Variables are the rule language's
:class:`~egraft.patterns.rule.Var` (``vars_("n s d")``); integer literals are ``i64``.
"""

from __future__ import annotations

import re
from typing import Union

import attrs

from egraft.patterns.rule import Origin, RuleError, Var, caller_origin

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")  # no "_": the engine's own names all have one
MERGES = ("union", "max", "min")


@attrs.frozen
class Sort:
    """A sort: ``i64``, a datatype of terms, or a set of terms (``element``)."""

    name: str
    kind: str = "datatype"  # "i64" | "datatype" | "set"
    element: "Sort | None" = None

    def _set(self) -> "Sort":
        if self.kind != "set":
            raise TypeError(f"{self.name} is not a set sort")
        return self

    def empty(self) -> "App":
        return App(Primitive("set-empty", (), self._set()), ())

    def of(self, item: "Term") -> "App":
        return App(Primitive("set-of", (self._set().element,), self), (item,))

    def insert(self, items: "Term", item: "Term") -> "App":
        return App(Primitive("set-insert", (self._set(), self.element), self), (items, item))


I64 = Sort("i64", "i64")


class _Head:
    """What names a fact, a term or a value: applied to terms, it makes an :class:`App`."""

    __slots__ = ()
    name: str

    def __call__(self, *args: "Term") -> "App":
        return App(self, args)  # type: ignore[arg-type]


@attrs.frozen
class Primitive(_Head):
    """A built-in operation; a sort of None accepts any sort (argument) or makes a test (result)."""

    name: str
    args: tuple[Sort | None, ...]
    result: Sort | None


@attrs.frozen
class Constructor(_Head):
    """A term of ``sort`` built from ``args``."""

    name: str
    args: tuple[Sort, ...]
    sort: Sort


@attrs.frozen
class Function(_Head):
    """A lattice value per key ``args``; two values for one key merge by ``merge``."""

    name: str
    args: tuple[Sort, ...]
    result: Sort
    merge: str


@attrs.frozen
class Relation(_Head):
    """A table of facts; ``args`` are its column sorts."""

    name: str
    args: tuple[Sort, ...]


Head = Union[Primitive, Constructor, Function, Relation]


@attrs.frozen
class App:
    """``head`` applied to ``args``: a fact, a term, a lattice value or a primitive's value."""

    head: Head
    args: tuple["Term", ...]


Term = Union[Var, int, App]


@attrs.frozen
class Equal:
    """In ``when``: the two sides are equal (a variable on one side is bound to the other)."""

    a: Term
    b: Term


@attrs.frozen
class UnionOf:
    """In ``then``: the two terms are one class from now on."""

    a: Term
    b: Term


@attrs.frozen
class SetTo:
    """In ``then``: join ``value`` into the lattice value ``target`` (an application of a function)."""

    target: App
    value: Term


Atom = Union[App, Equal]
Action = Union[App, UnionOf, SetTo]

plus = Primitive("+", (I64, I64), I64)
ne = Primitive("!=", (None, None), None)
ge = Primitive(">=", (I64, I64), None)


def eq(a: Term, b: Term) -> Equal:
    return Equal(a, b)


def union(a: Term, b: Term) -> UnionOf:
    return UnionOf(a, b)


def set_(target: App, value: Term) -> SetTo:
    return SetTo(target, value)


class Declarations:
    """Sorts, constructors, lattice functions and fact relations, in declaration order
    (the order egglog declares them in: each refers only to earlier ones)."""

    def __init__(self) -> None:
        self.items: list[Sort | Constructor | Function | Relation] = []
        self._names: dict[str, Origin] = {}

    def _add(self, item: Sort | Constructor | Function | Relation, sorts: tuple[Sort | None, ...]) -> None:
        origin = caller_origin()
        if not _NAME.match(item.name):
            raise RuleError(f"'{item.name}' is not a declaration name (letters and digits)", None, origin)
        if item.name in self._names:
            raise RuleError(f"'{item.name}' is declared twice (first at {self._names[item.name]})", None, origin)
        for s in sorts:
            if s is not None and s is not I64 and s not in self.items:
                raise RuleError(f"'{item.name}' uses sort '{s.name}', not declared before it", None, origin)
        self._names[item.name] = origin
        self.items.append(item)

    def datatype(self, name: str) -> Sort:
        made = Sort(name)
        self._add(made, ())
        return made

    def set_sort(self, name: str, element: Sort) -> Sort:
        made = Sort(name, "set", element)
        self._add(made, (element,))
        return made

    def constructor(self, name: str, args: tuple[Sort, ...], sort: Sort) -> Constructor:
        made = Constructor(name, tuple(args), sort)
        self._add(made, (*args, sort))
        return made

    def function(self, name: str, args: tuple[Sort, ...], result: Sort, merge: str) -> Function:
        made = Function(name, tuple(args), result, merge)
        ok = merge in MERGES and (result.kind == "set") == (merge == "union") and result.kind != "datatype"
        if not ok:
            raise RuleError(f"function '{name}': merge '{merge}' does not fit its result sort '{result.name}' "
                            "(union: a set sort; max, min: i64)", None, caller_origin())
        self._add(made, (*args, result))
        return made

    def relation(self, name: str, *columns: Sort) -> Relation:
        made = Relation(name, tuple(columns))
        self._add(made, columns)
        return made

    @property
    def relations(self) -> list[Relation]:
        return [d for d in self.items if isinstance(d, Relation)]


@attrs.frozen
class RelationalRule:
    """When every atom of ``when`` holds, run the actions of ``then``; ``ruleset`` is its stratum."""

    name: str
    ruleset: str
    when: tuple[Atom, ...]
    then: tuple[Action, ...]
    doc: str = attrs.field(default="", eq=False)
    origin: Origin = attrs.field(default=Origin("<unknown>", 0), eq=False)

    def __str__(self) -> str:
        return f"{self.name} ({self.origin})"


def relational_rule(name: str, ruleset: str, when: list[Atom] | tuple[Atom, ...],
                    then: list[Action] | tuple[Action, ...], *, doc: str = "",
                    origin: Origin | None = None) -> RelationalRule:
    """Declare (and check) a relational rule: arities, sorts, where each atom and action may
    stand, and that every variable of ``then`` and of a comparison is bound by a fact."""
    made = RelationalRule(name, ruleset, tuple(when), tuple(then), doc, origin or caller_origin())
    _Checker(made).check()
    return made


class _Checker:
    """Sorts of one rule's terms, a sort per variable, what binds it."""

    def __init__(self, rule: RelationalRule) -> None:
        self.rule = rule
        self.sorts: dict[str, Sort] = {}
        self.seen: set[str] = set()
        self.bound: set[str] = set()  # variables a match binds (under a fact, constructor, function, eq)

    def fail(self, message: str) -> RuleError:
        return RuleError(message, self.rule.name, self.rule.origin)

    def sort_of(self, t: Term, expected: Sort | None, binding: bool) -> Sort | None:
        """The sort of ``t`` (checked against ``expected`` when given); ``binding``: ``t``
        stands where a match binds its variables (under a relation, constructor or function)."""
        if isinstance(t, Var):
            if t.is_wildcard:
                raise self.fail("relational rules have no wildcard: name the variable")
            self.seen.add(t.name)
            if binding:
                self.bound.add(t.name)
            known = self.sorts.get(t.name)
            if known is not None and expected is not None and known != expected:
                raise self.fail(f"${t.name} is used as both {known.name} and {expected.name}")
            if known is None and expected is not None:
                self.sorts[t.name] = expected
            return known or expected
        if isinstance(t, bool) or not isinstance(t, (int, App)):
            raise self.fail(f"not a term: {t!r}")
        if isinstance(t, int):
            if not -(2**63) <= t < 2**63:
                raise self.fail(f"{t} does not fit i64")
            got: Sort | None = I64
        else:
            head = t.head
            if isinstance(head, Relation):
                raise self.fail(f"relation {head.name} is a fact, not a term")
            params = head.args
            if len(t.args) != len(params):
                raise self.fail(f"{head.name} takes {len(params)} arguments, not {len(t.args)}")
            for a, s in zip(t.args, params):
                self.sort_of(a, s, binding and not isinstance(head, Primitive))
            got = head.sort if isinstance(head, Constructor) else head.result
        if expected is not None and got is not None and got != expected:
            raise self.fail(f"{_show(t)} is {got.name}, expected {expected.name}")
        return got

    def check(self) -> None:
        rule = self.rule
        if not rule.when:
            raise self.fail("a relational rule needs at least one atom in `when`")
        tests: list[App] = []
        for atom in rule.when:
            if isinstance(atom, App) and isinstance(atom.head, Relation):
                if len(atom.args) != len(atom.head.args):
                    raise self.fail(f"{atom.head.name} has {len(atom.head.args)} columns, not {len(atom.args)}")
                for a, s in zip(atom.args, atom.head.args):
                    self.sort_of(a, s, True)
            elif isinstance(atom, App) and isinstance(atom.head, Primitive) and atom.head.result is None:
                tests.append(atom)
            elif isinstance(atom, Equal):
                # A side that is a term binds the other: eq(x, dd(s)) binds x (and s, as a key of dd).
                binds = isinstance(atom.a, App) or isinstance(atom.b, App)
                sort = self.sort_of(atom.b, None, binds)
                sort = self.sort_of(atom.a, sort, binds) or sort
                self.sort_of(atom.b, sort, binds)
            else:
                raise self.fail(f"`when` holds facts, eq(...) and comparisons, not {_show(atom)}")
        for t in tests:
            self.sort_of(t, None, False)
        for action in rule.then:
            if isinstance(action, App) and isinstance(action.head, Constructor):
                self.sort_of(action, None, False)
            elif isinstance(action, UnionOf):
                sort = self.sort_of(action.a, None, False)
                if sort is None or sort.kind != "datatype":
                    raise self.fail(f"union joins terms of a datatype, not {_show(action.a)}")
                self.sort_of(action.b, sort, False)
            elif isinstance(action, SetTo):
                if not isinstance(action.target, App) or not isinstance(action.target.head, Function):
                    raise self.fail(f"set_ needs a function's value, not {_show(action.target)}")
                self.sort_of(action.value, self.sort_of(action.target, None, False), False)
            else:
                raise self.fail(f"`then` holds terms, union(...) and set_(...), not {_show(action)}")
        unbound = sorted(self.seen - self.bound)
        if unbound:
            raise self.fail(f"${unbound[0]} is not bound by a fact, constructor or function in `when`")


def _show(t: object) -> str:
    """A term as the rule language writes it: ``dd($s)``."""
    if isinstance(t, App):
        return f"{t.head.name}({', '.join(map(_show, t.args))})"
    if isinstance(t, (Equal, UnionOf)):
        return f"{'eq' if isinstance(t, Equal) else 'union'}({_show(t.a)}, {_show(t.b)})"
    if isinstance(t, SetTo):
        return f"set_({_show(t.target)}, {_show(t.value)})"
    return str(t)
