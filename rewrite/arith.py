"""The engine's reference workload: integer arithmetic terms and 15 rewrite rules.

It is small enough to reason about by hand yet has the two behaviours every real
rule set has: shrinking rules (identities, constant folding) that saturate fast,
and expanding ones (commutativity, associativity) that grow the e-graph without
bound. Tests and ``bench/engine`` both use it; the TF/affine rules come later
through the same data types.
"""

from __future__ import annotations

from egraft.rewrite.engine.egglog_rules import Bind, P, Prim, Rule, V
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


def _c(value: int | V) -> P:
    return P("Const", payload=value)


def arith_rules() -> list[Rule]:
    """The 15 rules: 12 shrinking ones in SIMPLIFY, 3 expanding ones in EXPAND."""
    x, y, z, a, b, c = (V(n) for n in "xyzabc")

    def fold(name: str, op: str, prim: str) -> Rule:
        return Rule(f"fold-{name}", P(op, (_c(a), _c(b))), _c(c),
                    (Bind(c, Prim(prim, (a, b))),), SIMPLIFY, doc=f"evaluate {op} of constants")

    return [
        Rule("sub-self", P("Sub", (x, x)), _c(0), ruleset=SIMPLIFY),
        Rule("add-zero", P("Add", (x, _c(0))), x, ruleset=SIMPLIFY),
        Rule("mul-one", P("Mul", (x, _c(1))), x, ruleset=SIMPLIFY),
        Rule("mul-zero", P("Mul", (x, _c(0))), _c(0), ruleset=SIMPLIFY),
        Rule("neg-neg", P("Neg", (P("Neg", (x,)),)), x, ruleset=SIMPLIFY),
        Rule("sub-zero", P("Sub", (x, _c(0))), x, ruleset=SIMPLIFY),
        Rule("zero-sub", P("Sub", (_c(0), x)), P("Neg", (x,)), ruleset=SIMPLIFY),
        Rule("add-neg", P("Add", (x, P("Neg", (y,)))), P("Sub", (x, y)), ruleset=SIMPLIFY),
        fold("add", "Add", "+"),
        fold("sub", "Sub", "-"),
        fold("mul", "Mul", "*"),
        Rule("fold-neg", P("Neg", (_c(a),)), _c(c), (Bind(c, Prim("-", (0, a))),), SIMPLIFY),
        Rule("add-comm", P("Add", (x, y)), P("Add", (y, x)), ruleset=EXPAND),
        Rule("mul-comm", P("Mul", (x, y)), P("Mul", (y, x)), ruleset=EXPAND),
        Rule("add-assoc", P("Add", (P("Add", (x, y)), z)), P("Add", (x, P("Add", (y, z)))),
             ruleset=EXPAND),
    ]
