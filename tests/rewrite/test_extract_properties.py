"""Extraction on e-graphs built directly as arrays: any shape, cycles, ties, deep sharing.

The arith tests (test_extract.py) reach only the e-graphs egglog's rules make from small
terms. Here the exported arrays are generated directly, so the properties also cover
shapes no rule set produces: self-loops, classes whose cheapest node is cyclic, zero-cost
ties, arbitrary preference orders for the acyclic walk, and graphs so deep that their tree
costs overflow float64 (the ResNet50 crash of issue #9).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.rewrite.engine.export import EGraphArrays
from egraft.rewrite.engine.extract import (FnCost, OpCost, _Graph, _numpy_sum, dag_cost, extract, post_order,
                                    select_acyclic)
from egraft.rewrite.engine.termtable import OpSig, Schema

SCHEMA = Schema(("Term",), [OpSig("F", ("Term",), payload="i64", variadic=True)])


def arrays(nodes: list[tuple[int, list[int]]], n_classes: int) -> EGraphArrays:
    """An exported e-graph from ``(class, child classes)`` per e-node (payload: the node id)."""
    arity = [len(kids) for _, kids in nodes]
    return EGraphArrays(
        op_names=["F"], node_op=np.zeros(len(nodes), np.int32),
        node_class=np.array([c for c, _ in nodes], np.int32),
        child_ptr=np.concatenate([[0], np.cumsum(arity)]).astype(np.int64),
        children=np.array([k for _, kids in nodes for k in kids], np.int32),
        payloads=list(range(len(nodes))), n_classes=n_classes,
        term_class=np.arange(n_classes, dtype=np.int32))


COSTS = [0.0, 0.5, 1.0, 1.0, 2.0, 3.0, 7.0]
#: Costs whose sums round (thirds, values past 2^53), where the order of additions shows.
ROUNDING_COSTS = [0.0, 1 / 3, 0.1, 1.0, 2.0**60, 1e17, 7e15 + 1]


@st.composite
def egraphs(draw, max_classes: int = 25, max_arity: int = 3,
            costs_from: list[float] = COSTS) -> tuple[EGraphArrays, list[int], np.ndarray]:
    """A random e-graph in which every class is extractable, with roots and node costs.

    Class ``c``'s first node only has children below ``c`` (so a finite term exists);
    further nodes point anywhere, themselves included, so cycles abound.
    """
    n = draw(st.integers(1, max_classes))
    nodes: list[tuple[int, list[int]]] = []
    for c in range(n):
        nodes.append((c, draw(st.lists(st.integers(0, c - 1), max_size=max_arity)) if c else []))
        for _ in range(draw(st.integers(0, 3))):
            nodes.append((c, draw(st.lists(st.integers(0, n - 1), max_size=max_arity))))
    order = draw(st.permutations(range(len(nodes))))  # node ids in no particular class order
    g = arrays([nodes[i] for i in order], n)
    costs = np.array(draw(st.lists(st.sampled_from(costs_from), min_size=len(nodes), max_size=len(nodes))))
    roots = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
    return g, roots, costs


def table_cost(table, costs_by_payload: np.ndarray) -> float:
    """The DAG cost of an extracted table: its nodes carry their e-node ids as payloads."""
    return float(sum(costs_by_payload[p] for p in table.payloads))


def reachable_table_nodes(table) -> set[int]:
    seen: set[int] = set()
    todo = list(table.roots)
    while todo:
        t = todo.pop()
        if t not in seen:
            seen.add(t)
            todo.extend(table.kids(t))
    return seen


def assert_sound(g: EGraphArrays, roots: list[int], costs: np.ndarray, result) -> None:
    """The reported cost is the cost of the returned DAG, which is acyclic and holds nothing else."""
    ptr, kids, choice = g.child_ptr.tolist(), g.children.tolist(), result.choice.tolist()
    reached = post_order(ptr, kids, choice, roots)  # raises on a cyclic choice
    assert sorted(reached) == sorted(np.flatnonzero(result.choice >= 0).tolist())
    for c in reached:
        assert g.node_class[choice[c]] == c
    assert result.cost == dag_cost(g, result.choice, roots, costs)
    assert result.cost == table_cost(result.table, costs)
    result.table.check()
    assert reachable_table_nodes(result.table) == set(range(len(result.table)))
    assert [result.table.payloads[r] for r in result.table.roots] == [choice[c] for c in roots]


@settings(max_examples=150, deadline=None)
@given(egraphs(), st.integers(1, 3))
def test_reported_cost_is_the_cost_of_the_returned_acyclic_dag(case, passes):
    g, roots, costs = case
    cost = FnCost(lambda op, payload, kids: float(costs[payload]))
    result = extract(g, SCHEMA, roots, cost, passes=passes)
    assert_sound(g, roots, costs, result)
    assert result.cost <= extract(g, SCHEMA, roots, cost, passes=1).cost


@settings(max_examples=150, deadline=None)
@given(egraphs(), st.randoms(use_true_random=False))
def test_any_preference_order_gives_an_acyclic_choice_and_its_reached_classes(case, rnd):
    """``select_acyclic`` under arbitrary preferences: many cycles, so many repairs."""
    g, roots, costs = case
    graph = _Graph(g, costs)
    graph.fixpoint(None, rtol=1e-12)  # sets the levels the repairs fall back on
    ptr, members = g.class_nodes()
    pref_nodes = members.copy()
    for c in range(g.n_classes):
        block = pref_nodes[ptr[c]:ptr[c + 1]].tolist()
        rnd.shuffle(block)
        pref_nodes[ptr[c]:ptr[c + 1]] = block
    choice, post = select_acyclic(g, roots, ptr, pref_nodes, lambda: graph.safe_nodes(ptr, pref_nodes))
    reached = post_order(g.child_ptr.tolist(), g.children.tolist(), choice.tolist(), roots)
    assert sorted(post) == sorted(reached) == sorted(np.flatnonzero(choice >= 0).tolist())
    position = {c: i for i, c in enumerate(post)}
    for c in post:  # children first: the order the table is built in
        n = choice[c]
        assert all(position[d] < position[c] for d in g.children[g.child_ptr[n]:g.child_ptr[n + 1]])


def test_a_repair_does_not_leave_the_abandoned_subtree_in_the_result():
    """The walk finishes X under V's first node, then a cycle makes V switch to a leaf:
    X must not be part of the result (it was, and was paid for, before the fix)."""
    R, V, X, Y = range(4)
    g = arrays([(R, [V]), (V, [X, Y]), (V, []), (X, []), (Y, [V])], 4)
    costs = np.ones(5)
    graph = _Graph(g, costs)
    graph.fixpoint(None, rtol=1e-12)
    pref_ptr, pref_nodes = np.array([0, 1, 3, 4, 5]), np.array([0, 1, 2, 3, 4])  # V prefers f(X, Y)
    choice, post = select_acyclic(g, [R], pref_ptr, pref_nodes, lambda: graph.safe_nodes(pref_ptr, pref_nodes))
    assert choice.tolist() == [0, 2, -1, -1]
    assert post == [V, R]


def test_tree_costs_beyond_float64_still_extract():
    """Each class reads the one below twice, so its tree cost is 2^depth: 2^3000 overflows
    float64. That made the class look unreachable and crashed the walk (issue #9)."""
    depth = 3000
    nodes = [(0, [])] + [(c, [c - 1, c - 1]) for c in range(1, depth)]
    nodes += [(c, [c - 1, 0]) for c in range(2, depth, 7)]  # alternatives, also deep
    g = arrays(nodes, depth)
    result = extract(g, SCHEMA, [depth - 1], OpCost({}, 1.0))
    assert_sound(g, [depth - 1], np.ones(len(nodes)), result)
    assert result.cost == depth


@settings(max_examples=100, deadline=None)
@given(egraphs(max_arity=12, costs_from=ROUNDING_COSTS), st.booleans(), st.booleans(),
       st.lists(st.integers(1, 4), min_size=26, max_size=26))
def test_python_and_numpy_relaxation_rounds_agree_bit_for_bit(case, padded, weighted, uses):
    """Small frontiers relax in Python, large ones in numpy: the values and levels must
    not depend on which ran (sums in numpy's order, the same cap, the same rounds)."""
    g, _, costs = case
    weight = np.array([1 / u for u in uses[:g.n_classes]] + [1.0]) if weighted else None
    results = []
    for small in (0, 10**9):  # all rounds in numpy, then all in Python
        graph = _Graph(g, costs)
        if not padded:
            graph.pad = None
        graph.SMALL_FRONTIER = small
        results.append(graph.relax(weight, rtol=1e-4 if weighted else 1e-12, levels=True))
    (val_np, level_np), (val_py, level_py) = results
    assert val_np.tobytes() == val_py.tobytes()
    assert level_np.tobytes() == level_py.tobytes()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ROUNDING_COSTS + [np.inf]), max_size=300), st.integers(0, 40))
def test_numpy_sum_adds_in_numpys_order(values, extra):
    """``_numpy_sum`` reproduces ``np.add.reduce`` over a zero-padded row and ``np.bincount``."""
    width = len(values) + extra
    row = np.zeros((1, width))
    row[0, :len(values)] = values
    assert _numpy_sum(values, width) == np.add.reduce(row, axis=1)[0]
    assert _numpy_sum(values, None) == np.bincount(np.zeros(len(values), np.int64), weights=values,
                                                   minlength=1)[0]
