"""Extraction is acyclic, never worse than tree extraction, close to the ILP optimum, and sound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.engine.export import export
from egraft.rewrite.engine.extract import FnCost, OpCost, dag_cost, extract, post_order, root_classes
from egraft.rewrite.engine.load import load_table
from egraft.rewrite.engine.saturate import Budget, phased, saturate
from egraft.rewrite.engine.termtable import TermTable

from tests.rewrite.arith_workload import EXPAND, SIMPLIFY, add_arith_rules, arith_schema

COSTS = OpCost({"Mul": 4.0, "Add": 2.0, "Sub": 2.0, "Neg": 1.0, "Const": 1.0, "Var": 1.0})


@st.composite
def arith_dags(draw, max_nodes: int = 30) -> TermTable:
    t = TermTable(arith_schema())
    nodes = [t.add("Var", payload="x")]
    for _ in range(draw(st.integers(1, max_nodes))):
        op = draw(st.sampled_from(["Const", "Var", "Neg", "Add", "Sub", "Mul", "Mul", "Add"]))
        if op == "Const":
            nodes.append(t.add(op, payload=draw(st.integers(-2, 2))))
        elif op == "Var":
            nodes.append(t.add(op, payload=draw(st.sampled_from("xyz"))))
        else:
            arity = 1 if op == "Neg" else 2
            nodes.append(t.add(op, [draw(st.sampled_from(nodes)) for _ in range(arity)]))
    for r in draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=3)):
        t.add_root(r)
    return t


def saturated(table: TermTable, rounds: int = 2):
    eg = EGraph(table.schema)
    add_arith_rules(eg)
    base = load_table(eg, table).base
    saturate(eg, phased(SIMPLIFY, EXPAND, rounds=rounds), Budget(max_enodes=3000))
    g = export(eg)
    return g, root_classes(g, [base + r for r in table.roots])


def evaluate(table: TermTable, env: dict[str, int]) -> list[int]:
    vals: list[int] = []
    for i in range(len(table)):
        op, kids = table.op(i), [vals[k] for k in table.kids(i)]
        vals.append({"Const": lambda: table.payloads[i], "Var": lambda: env[table.payloads[i]],
                     "Neg": lambda: -kids[0], "Add": lambda: kids[0] + kids[1],
                     "Sub": lambda: kids[0] - kids[1], "Mul": lambda: kids[0] * kids[1]}[op]())
    return [vals[r] for r in table.roots]


def assert_acyclic(g, choice: np.ndarray, roots) -> None:
    state = np.zeros(g.n_classes, np.int8)

    def visit(c: int) -> None:
        assert state[c] != 1, f"class {c} depends on itself"
        if state[c] == 2:
            return
        state[c] = 1
        node = choice[c]
        assert node >= 0 and g.node_class[node] == c
        for d in g.children[g.child_ptr[node]:g.child_ptr[node + 1]]:
            visit(int(d))
        state[c] = 2

    for r in roots:
        visit(r)


def assert_reports_its_own_dag(g, result, roots) -> None:
    """The reported cost is the DAG cost of the choice, and the table is exactly that DAG."""
    assert_acyclic(g, result.choice, roots)
    assert result.cost == dag_cost(g, result.choice, roots, COSTS.node_costs(g))
    reached = post_order(g.child_ptr.tolist(), g.children.tolist(), result.choice.tolist(), roots)
    assert len(result.table) == len(reached) == int((result.choice >= 0).sum())


@settings(max_examples=60, deadline=None)
@given(arith_dags(), st.dictionaries(st.sampled_from("xyz"), st.integers(-50, 50), min_size=3))
def test_extraction_is_acyclic_sound_and_beats_tree_cost(table, env):
    g, roots = saturated(table)
    tree = extract(g, table.schema, roots, COSTS, passes=1)
    dag = extract(g, table.schema, roots, COSTS, passes=3)
    assert_reports_its_own_dag(g, tree, roots)
    assert_reports_its_own_dag(g, dag, roots)
    assert dag.cost <= tree.cost
    assert evaluate(dag.table, env) == evaluate(table, env)


def test_reported_cost_of_the_once_flaky_term_is_its_dag_cost():
    """``(x+x + (x*x-(x+x))) + (0 + (x*x-(x+x)))``: the walk finishes ``0`` under a node a
    cycle repair then abandons. It was counted anyway: reported 14 for a DAG of cost 13
    (the property above met this term only when hypothesis happened to draw it)."""
    t = TermTable(arith_schema())
    x = t.add("Var", payload="x")
    xx, sq = t.add("Add", (x, x)), t.add("Mul", (x, x))
    d = t.add("Sub", (sq, xx))
    t.add_root(t.add("Add", (t.add("Add", (xx, d)), t.add("Add", (t.add("Const", payload=0), d)))))
    g, roots = saturated(t)
    for passes in (1, 2, 3):
        result = extract(g, t.schema, roots, COSTS, passes=passes)
        assert_reports_its_own_dag(g, result, roots)
        assert result.passes[-1] >= result.cost == min(result.passes)
    assert extract(g, t.schema, roots, COSTS, passes=3).cost == 13  # x, x+x, x*x, the Sub, 2 Adds


@settings(max_examples=25, deadline=None)
@given(arith_dags(max_nodes=14))
def test_heuristic_is_within_a_bounded_gap_of_the_ilp_optimum(table):
    pytest.importorskip("scipy")
    from egraft.rewrite.engine.ilp import extract_ilp

    g, roots = saturated(table, rounds=1)
    exact = extract_ilp(g, table.schema, roots, COSTS)
    heur = extract(g, table.schema, roots, COSTS)
    assert_acyclic(g, exact.choice, roots)
    assert exact.cost <= heur.cost + 1e-9
    assert heur.cost <= 1.25 * exact.cost


def test_sharing_pass_pays_a_shared_child_once():
    # Class A = {Mul(s, 1-ish) ...}: build two ways to write the root, one reusing a shared node.
    t = TermTable(arith_schema())
    x, y = t.add("Var", payload="x"), t.add("Var", payload="y")
    s = t.add("Mul", (x, y))
    t.add_root(t.add("Add", (s, s)))
    g, roots = saturated(t, rounds=1)
    out = extract(g, t.schema, roots, COSTS)
    assert out.cost == 2 + 4 + 1 + 1  # Add + Mul + x + y, the Mul paid once


def test_function_cost_model_sees_payloads():
    t = TermTable(arith_schema())
    x = t.add("Var", payload="x")
    t.add_root(t.add("Mul", (x, t.add("Const", payload=1))))
    g, roots = saturated(t, rounds=1)
    calls = []
    cost = FnCost(lambda op, payload, kids: calls.append((op, payload, kids)) or 1.0)
    extract(g, t.schema, roots, cost)
    assert ("Var", "x", ()) in calls and ("Const", 1, ()) in calls
