"""The engine's reference workload: integer arithmetic terms and 15 rewrite rules.

It is small enough to reason about by hand yet has the two behaviours every real
rule set has: shrinking rules (identities, constant folding) that saturate fast,
and expanding ones (commutativity, associativity) that grow the e-graph without
bound. The engine's tests (tests/rewrite) and ``bench/engine`` use it to test and time
saturation, budgets and extraction, apart from the IR.

The engine takes rules compiled to egglog (``egraft.rewrite.engine.rule_command``); IR
rules are compiled from the rule language by ``egraft.rewrite.rules.compile``. These
terms are not IR, so their rules are written here in egglog's own form, with operator
names as the schema spells them: ``(Add ?x (Const 0))``. :func:`add_arith_rules` maps
the names to the engine's constructors and declares the rulesets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from egraft.rewrite.engine import names
from egraft.rewrite.engine.egraph import EGraph, rule_command
from egraft.rewrite.engine.termtable import OpSig, Schema

SIMPLIFY = "simplify"
EXPAND = "expand"


def arith_schema() -> Schema:
    """Const(i64) | Var(String) | Neg(t) | Add(t, t) | Sub(t, t) | Mul(t, t)."""
    return Schema(("Term",), [
        OpSig("Const", payload="i64"),
        OpSig("Var", payload="String"),
        OpSig("Neg", ("Term",)),
        OpSig("Add", ("Term", "Term")),
        OpSig("Sub", ("Term", "Term")),
        OpSig("Mul", ("Term", "Term")),
    ])


#: (name, ruleset, left-hand side, right-hand side, conditions). Conditions compute in the
#: query on purpose: ``(= ?c (* ?a ?b))`` there does not match on i64 overflow, whereas the
#: same primitive among the actions panics the whole run.
ARITH_RULES: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    ("sub-self", SIMPLIFY, "(Sub ?x ?x)", "(Const 0)", ()),
    ("add-zero", SIMPLIFY, "(Add ?x (Const 0))", "?x", ()),
    ("mul-one", SIMPLIFY, "(Mul ?x (Const 1))", "?x", ()),
    ("mul-zero", SIMPLIFY, "(Mul ?x (Const 0))", "(Const 0)", ()),
    ("neg-neg", SIMPLIFY, "(Neg (Neg ?x))", "?x", ()),
    ("sub-zero", SIMPLIFY, "(Sub ?x (Const 0))", "?x", ()),
    ("zero-sub", SIMPLIFY, "(Sub (Const 0) ?x)", "(Neg ?x)", ()),
    ("add-neg", SIMPLIFY, "(Add ?x (Neg ?y))", "(Sub ?x ?y)", ()),
    ("fold-add", SIMPLIFY, "(Add (Const ?a) (Const ?b))", "(Const ?c)", ("(= ?c (+ ?a ?b))",)),
    ("fold-sub", SIMPLIFY, "(Sub (Const ?a) (Const ?b))", "(Const ?c)", ("(= ?c (- ?a ?b))",)),
    ("fold-mul", SIMPLIFY, "(Mul (Const ?a) (Const ?b))", "(Const ?c)", ("(= ?c (* ?a ?b))",)),
    ("fold-neg", SIMPLIFY, "(Neg (Const ?a))", "(Const ?c)", ("(= ?c (- 0 ?a))",)),
    ("add-comm", EXPAND, "(Add ?x ?y)", "(Add ?y ?x)", ()),
    ("mul-comm", EXPAND, "(Mul ?x ?y)", "(Mul ?y ?x)", ()),
    ("add-assoc", EXPAND, "(Add (Add ?x ?y) ?z)", "(Add ?x (Add ?y ?z))", ()),
)

_HEAD = re.compile(r"\((\w+)")


def add_arith_rules(eg: EGraph, rules: Iterable[tuple[str, str, str, str, tuple[str, ...]]] = ARITH_RULES) -> None:
    """Compile ``rules`` (rows like :data:`ARITH_RULES`) into ``eg``: each becomes
    ``(rule ((= ?root LHS) CONDITIONS...) ((union ?root RHS)))`` in its ruleset."""
    def ctors(text: str) -> str:
        def head(m: re.Match[str]) -> str:
            op = m[1]
            return "(" + (eg.ensure_ctor(op, len(eg.schema.sig(op).children)) if op in eg.schema.ops else op)
        return _HEAD.sub(head, text)

    commands: list[str] = []
    for name, ruleset, lhs, rhs, where in rules:
        commands += eg.ruleset_commands(ruleset)
        commands.append(rule_command([f"(= ?root {ctors(lhs)})", *map(ctors, where)],
                                     [f"(union ?root {ctors(rhs)})"], ruleset, name))
        eg.rulesets[ruleset].append(name)
    eg.run_commands(commands)
