"""Rewrite rules as plain data, compiled to egglog ``rule`` commands.

This is the target the user-facing rule language (``egraft.patterns``) compiles
down to, so it stays minimal: a left-hand pattern, a right-hand pattern, optional
side conditions, a name and a ruleset. Every rule becomes::

    (rule ((= ?root_ LHS) CONDITIONS...) ((union ?root_ RHS)) :ruleset RS :name "NAME")

Conditions live in the query on purpose: a primitive computed there (constant
folding, ``(= ?c (* ?a ?b))``) simply fails to match on i64 overflow, whereas the
same primitive in the actions panics the whole run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from egraft.rewrite.engine import names
from egraft.rewrite.engine.egraph import EGraph, egglog_string
from egraft.rewrite.engine.termtable import Payload, Schema


@dataclass(frozen=True)
class V:
    """A pattern variable: an e-class in child position, a literal in payload position."""

    name: str


@dataclass(frozen=True)
class Prim:
    """A call of an egglog primitive (``+``, ``<``, ``!=`` ...) over payload values."""

    op: str
    args: tuple[V | Payload | Prim, ...]


@dataclass(frozen=True)
class P:
    """An operator application in a pattern; ``payload`` may be a literal or a variable."""

    op: str
    args: tuple[P | V, ...] = ()
    payload: V | Payload | None = None


Pattern = P | V


@dataclass(frozen=True)
class Bind:
    """Condition ``var = expr``: binds ``var`` to the value of a primitive expression."""

    var: V
    expr: Prim


@dataclass(frozen=True)
class Guard:
    """Condition that holds when the primitive ``expr`` is defined (``(< ?a ?b)``, ``(!= ?a 0)``)."""

    expr: Prim


Condition = Bind | Guard


@dataclass(frozen=True)
class Rule:
    """``lhs`` may be replaced by ``rhs`` whenever every condition holds."""

    name: str
    lhs: P
    rhs: Pattern
    where: tuple[Condition, ...] = ()
    ruleset: str = "default"
    doc: str = field(default="", compare=False)


class RuleError(ValueError):
    """A rule that does not fit the schema (unknown op, bad arity, sort clash, unbound variable)."""


class _Compiler:
    """Type-checks one rule against the schema and renders it as egglog text."""

    def __init__(self, eg: EGraph, rule: Rule) -> None:
        self.eg, self.rule = eg, rule
        self.sorts: dict[str, str] = {}  # variable -> term sort, or "payload:<kind>"

    def fail(self, msg: str) -> RuleError:
        return RuleError(f"rule {self.rule.name!r}: {msg}")

    def bind(self, var: V, sort: str) -> None:
        """Record ``var``'s sort; "payload:?" (inside a primitive) refines to any payload kind."""
        old = self.sorts.get(var.name)
        if old is not None and old != sort:
            both_payload = old.startswith("payload:") and sort.startswith("payload:")
            if not (both_payload and "payload:?" in (old, sort)):
                raise self.fail(f"variable {var.name!r} used as both {old} and {sort}")
            sort = old if sort == "payload:?" else sort
        self.sorts[var.name] = sort

    def pattern(self, pat: Pattern, sort: str, binding: bool) -> str:
        """Render ``pat`` expected at ``sort``; ``binding`` patterns may introduce variables."""
        if isinstance(pat, V):
            if not binding and pat.name not in self.sorts:
                raise self.fail(f"variable {pat.name!r} is not bound by the left-hand side")
            self.bind(pat, sort)
            return names.var(pat.name)
        schema: Schema = self.eg.schema
        if pat.op not in schema.ops:
            raise self.fail(f"unknown operator {pat.op!r}")
        sig = schema.ops[pat.op]
        if sig.result != sort:
            raise self.fail(f"{pat.op} has sort {sig.result}, expected {sort}")
        try:
            child_sorts = sig.child_sorts(len(pat.args))
        except ValueError as err:
            raise self.fail(str(err)) from None
        parts = [self.eg.ensure_ctor(pat.op, len(pat.args))]
        if sig.payload is not None:
            if pat.payload is None:
                raise self.fail(f"{pat.op} needs a payload")
            parts.append(self.value(pat.payload, f"payload:{sig.payload}", binding))
        elif pat.payload is not None:
            raise self.fail(f"{pat.op} takes no payload")
        parts += [self.pattern(a, s, binding) for a, s in zip(pat.args, child_sorts)]
        return f"({' '.join(parts)})"

    def value(self, val: V | Payload | Prim, sort: str, binding: bool) -> str:
        if isinstance(val, V):
            return self.pattern(val, sort, binding)
        if isinstance(val, Prim):
            return f"({val.op} {' '.join(self.value(a, 'payload:?', False) for a in val.args)})"
        if isinstance(val, bool):
            raise self.fail("bool literals are not payloads")
        if isinstance(val, str):
            return egglog_string(val)
        if isinstance(val, float):
            return repr(val) if "." in repr(val) or "e" in repr(val) else f"{val}.0"
        return str(val)

    def compile(self) -> str:
        rule = self.rule
        lhs_sort = self.eg.schema.sig(rule.lhs.op).result if rule.lhs.op in self.eg.schema.ops else ""
        facts = [f"(= ?root_ {self.pattern(rule.lhs, lhs_sort, True)})"]
        for cond in rule.where:
            if isinstance(cond, Bind):
                if cond.var.name in self.sorts:
                    raise self.fail(f"variable {cond.var.name!r} is bound twice")
                expr = self.value(cond.expr, "payload:?", False)
                self.bind(cond.var, "payload:?")
                facts.append(f"(= {names.var(cond.var.name)} {expr})")
            else:
                facts.append(self.value(cond.expr, "payload:?", False))
        rhs = self.pattern(rule.rhs, lhs_sort, False)
        return (f"(rule ({' '.join(facts)}) ((union ?root_ {rhs})) "
                f":ruleset {names.ruleset(rule.ruleset)} :name {egglog_string(rule.name)})")


def compile_rule(eg: EGraph, rule: Rule) -> str:
    """egglog text of one rule (declaring variadic constructors it mentions)."""
    return _Compiler(eg, rule).compile()


def add_rules(eg: EGraph, rules: Iterable[Rule]) -> None:
    """Type-check ``rules`` against ``eg``'s schema and register them with egglog.

    Rule names must be unique per e-graph: the saturation report counts matches by name.
    """
    commands: list[str] = []
    for rule in rules:
        if rule.name in eg.rules:
            raise RuleError(f"rule {rule.name!r} is defined twice")
        if rule.ruleset not in eg.rulesets:
            eg.rulesets[rule.ruleset] = []
            commands.append(f"(ruleset {names.ruleset(rule.ruleset)})")
        commands.append(compile_rule(eg, rule))
        eg.rules[rule.name] = rule.ruleset
        eg.rulesets[rule.ruleset].append(rule.name)
    eg.run_commands(commands)
