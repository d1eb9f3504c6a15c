"""Relational rules are checked where declared (file:line) and run as declared in egglog."""

import pytest

from egraft.patterns import RuleError, vars_
from egraft.patterns.relational import I64, Declarations, eq, ge, ne, plus, relational_rule, set_, union
from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.engine.saturate import Phase, Schedule, saturate
from egraft.rewrite.engine.termtable import Schema
from egraft.rewrite.rules.relational import add_relational_rules

D = Declarations()
Node = D.datatype("Node")
N = D.constructor("N", (I64,), Node)
Nodes = D.set_sort("Nodes", Node)
reach = D.function("reach", (I64,), Nodes, "union")
depth = D.function("depth", (I64,), I64, "max")
Edge = D.relation("Edge", I64, I64)
Start = D.relation("Start", I64)
s, d, x, y = vars_("s d x y")


def _line_of(text: str) -> int:
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


@pytest.mark.parametrize("build, message", [
    (lambda: relational_rule("arity", "r", [Edge(s)], [N(s)]), r"Edge has 2 columns, not 1"),
    (lambda: relational_rule("clash", "r", [Edge(s, d), eq(x, reach(s)), eq(x, depth(d))], [N(s)]),
     r"\$x is used as both Nodes and i64"),
    (lambda: relational_rule("unbound", "r", [Start(s)], [set_(depth(s), y)]), r"\$y is not bound"),
    (lambda: relational_rule("test-only", "r", [Start(s), ne(s, y)], [N(s)]), r"\$y is not bound"),
    (lambda: relational_rule("fact-as-term", "r", [Start(s)], [union(Edge(s, s), N(s))]), r"Edge is a fact"),
    (lambda: relational_rule("set-a-term", "r", [Start(s)], [set_(N(s), 0)]), r"set_ needs a function's value"),
    (lambda: relational_rule("wrong-value", "r", [Start(s)], [set_(depth(s), N(s))]), r"N\(\$s\) is Node, expected i64"),
    (lambda: relational_rule("union-ints", "r", [Start(s)], [union(s, 0)]), r"union joins terms of a datatype"),
    (lambda: relational_rule("no-when", "r", [], [N(0)]), r"at least one atom"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_a_wrong_rule_fails_where_it_is_declared(build, message):
    with pytest.raises(RuleError, match=message) as info:
        build()
    name = str(info.value).split("rule '")[1].split("'")[0]
    line = _line_of('relational_rule("' + name + '"')
    assert f"test_relational.py:{line}: rule '{name}': " in str(info.value)


def test_wrong_declarations_fail_where_they_are_declared():
    other = Declarations()
    with pytest.raises(RuleError, match=r"test_relational.py:\d+: function 'f': merge 'max' does not fit"):
        other.function("f", (I64,), Nodes, "max")
    with pytest.raises(RuleError, match="sort 'Node', not declared before it"):
        other.constructor("M", (I64,), Node)
    with pytest.raises(RuleError, match="not a declaration name"):
        other.relation("Edge_", I64)
    other.relation("E", I64)
    with pytest.raises(RuleError, match=r"'E' is declared twice \(first at .*test_relational.py:\d+\)"):
        other.relation("E", I64, I64)


def test_lattice_rules_run_to_their_fixpoint():
    """Reachable sets and longest depth from a start node, over a DAG with two paths to node 2."""
    rules = [
        relational_rule("reach-start", "reach", [Start(s)], [set_(reach(s), Nodes.of(N(s))), set_(depth(s), 0)]),
        relational_rule("reach-edge", "reach", [Edge(s, d), eq(x, reach(s)), eq(y, depth(s)), ge(y, 0), ne(s, d)],
                        [set_(reach(d), Nodes.insert(x, N(d))), set_(depth(d), plus(y, 1))]),
    ]
    eg = EGraph(Schema(sorts=()))
    add_relational_rules(eg, D, rules)
    edges = [(0, 1), (1, 2), (0, 2), (0, 3)]
    eg.run_commands(["(Start 0)", *(f"(Edge {a} {b})" for a, b in edges)])
    report = saturate(eg, Schedule((Phase(("reach",), saturate=True),)))
    assert report.saturated and report.matches["reach-edge"] > 0
    out = eg.run_commands([f"(extract (reach {n}))" for n in range(4)] + [f"(extract (depth {n}))" for n in range(4)])
    text = [o.termdag.to_string(o.term) for o in out]
    assert text[3] == "(set-of (N 0) (N 3))"
    assert all(f"(N {k})" in text[2] for k in (0, 1, 2)) and "(N 3)" not in text[2]
    assert text[4:] == ["0", "1", "2", "1"]
