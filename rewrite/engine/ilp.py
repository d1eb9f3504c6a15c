"""Exact DAG-cost extraction as a mixed-integer program, to measure the heuristic's gap.

Only for small e-graphs (it is exponential in the worst case) and only when scipy
is installed (``pip install egraft[ilp]``; ``scipy.optimize.milp`` drives HiGHS).
The model is the usual one for e-graph extraction:

* a binary ``x[n]`` per e-node (picked or not), minimising ``Σ cost[n]·x[n]``;
* every root class picks a node: ``Σ_{n∈root} x[n] ≥ 1``;
* a picked node's child classes pick a node: ``Σ_{m∈d} x[m] ≥ x[n]``;
* acyclicity by a real order ``t[c] ∈ [0, 1]`` per class: a picked node of class
  ``c`` with child ``d`` forces ``t[c] ≥ t[d] + ε``, with ``ε = 1/(classes+1)``,
  which is vacuous (``≥ -1``) when the node is not picked.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from egraft.rewrite.engine.export import EGraphArrays
from egraft.rewrite.engine.extract import CostModel, Extraction, build_table, dag_cost, post_order
from egraft.rewrite.engine.termtable import Schema


def _reachable_classes(g: EGraphArrays, roots: Sequence[int]) -> np.ndarray:
    """Classes reachable from ``roots`` through any e-node (the only ones the model needs)."""
    ptr, order = g.class_nodes()
    seen = np.zeros(g.n_classes, bool)
    todo = list(roots)
    while todo:
        c = todo.pop()
        if seen[c]:
            continue
        seen[c] = True
        for node in order[ptr[c]:ptr[c + 1]]:
            todo.extend(g.children[g.child_ptr[node]:g.child_ptr[node + 1]].tolist())
    return seen


def extract_ilp(g: EGraphArrays, schema: Schema, roots: Sequence[int], cost: CostModel,
                time_limit: float | None = 60.0) -> Extraction:
    """Optimal acyclic extraction (within HiGHS' gap tolerance).

    If the time limit stops HiGHS with a feasible solution, that one is returned with
    ``optimal=False``; if it found none, this raises.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    start = time.perf_counter()
    costs = cost.node_costs(g)
    keep = _reachable_classes(g, roots)
    nodes = np.flatnonzero(keep[g.node_class])
    col = {int(n): j for j, n in enumerate(nodes)}
    n_x, n_t = len(nodes), g.n_classes
    eps = 1.0 / (g.n_classes + 1)
    rows, cols, vals, lo, hi = [], [], [], [], []

    def constraint(entries: list[tuple[int, float]], lower: float, upper: float) -> None:
        r = len(lo)
        for c, v in entries:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        lo.append(lower)
        hi.append(upper)

    members: dict[int, list[int]] = {}
    for n in nodes:
        members.setdefault(int(g.node_class[n]), []).append(col[int(n)])
    upper_x = np.ones(n_x)
    for r in set(roots):
        constraint([(j, 1.0) for j in members[r]], 1.0, np.inf)
    for n in nodes:
        j, c = col[int(n)], int(g.node_class[n])
        for d in set(g.children[g.child_ptr[n]:g.child_ptr[n + 1]].tolist()):
            if d == c:
                upper_x[j] = 0.0
                continue
            constraint([(m, 1.0) for m in members[d]] + [(j, -1.0)], 0.0, np.inf)
            constraint([(n_x + c, 1.0), (n_x + d, -1.0), (j, -(1.0 + eps))], -1.0, np.inf)
    matrix = coo_matrix((vals, (rows, cols)), shape=(len(lo), n_x + n_t))
    objective = np.concatenate([costs[nodes], np.zeros(n_t)])
    integrality = np.concatenate([np.ones(n_x), np.zeros(n_t)])
    bounds = Bounds(np.zeros(n_x + n_t), np.concatenate([upper_x, np.ones(n_t)]))
    options = {} if time_limit is None else {"time_limit": time_limit}
    res = milp(objective, integrality=integrality, bounds=bounds,
               constraints=LinearConstraint(matrix.tocsr(), lo, hi), options=options)
    if res.x is None:
        raise RuntimeError(f"ILP extraction failed: {res.message}")
    picked = nodes[res.x[:n_x] > 0.5]
    choice = np.full(g.n_classes, -1, np.int64)
    for n in picked[np.argsort(-costs[picked], kind="stable")]:  # cheapest wins per class
        choice[g.node_class[n]] = n
    post = post_order(g.child_ptr.tolist(), g.children.tolist(), choice.tolist(), roots)
    total = dag_cost(g, choice, roots, costs)
    table = build_table(g, schema, choice, post, roots)
    return Extraction(table, choice, total, time.perf_counter() - start, [total],
                      optimal=res.status == 0)

