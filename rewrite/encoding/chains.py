"""Extraction that keeps every effect exactly once and in order (docs/encoding.md, "Effects and order").

Rules may replace an effectful op (``EffOf(root)`` unioned with the effect of the ops built
for it) or erase one that only reads (``EffOf(load)`` unioned with its incoming token). An
e-class of values may then hold ``Res(i, X)`` for an op ``X`` that the chosen effect chains do
not hold: the original of a replaced op when extraction took the replacement's chain, or an
erased load (its ``EffOf`` sits in the class of its own incoming token, so no acyclic chain
can pass through it). Choosing such a ``Res`` would materialise an effect off its chain: a
second copy of a replaced op, or an erased load run after all. Extraction prices e-classes
one by one and cannot see that, so :func:`extract_on_chains` checks the choice: it walks the
chosen chains from every chosen region's final token, and when a chosen ``Res`` names an
effectful op that is on none of them, that ``Res`` and the op's ``EffOf`` are excluded and
extraction runs again. Excluding ``EffOf(X)`` too keeps later rounds from moving a chain onto
``X`` once its values were re-chosen without it. Each round excludes e-nodes chosen in the
last one, so the rounds end; on inputs whose chains no rule touched there is one round.

The encoding's facts come from the schema: an op constructor consumes a token when its last
child sort is ``Eff``; a region is ``Reg(args, terminator, final token, fwd)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from egraft.rewrite.engine.export import EGraphArrays
from egraft.rewrite.engine.extract import CostModel, Extraction, extract
from egraft.rewrite.engine.termtable import Schema

#: Index of the final effect token among a ``Reg`` node's children.
REG_FINAL = 2


def _codes(g: EGraphArrays, schema: Schema) -> tuple[dict[str, int], np.ndarray]:
    """The operator code of each fixed constructor by name, and per code whether it consumes a token."""
    code = {name: i for i, name in enumerate(g.op_names)}
    effectful = np.array([name in schema.ops and bool(schema.sig(name).children)
                          and schema.sig(name).children[-1] == "Eff" for name in g.op_names] or [False])
    return code, effectful


def off_chain(g: EGraphArrays, schema: Schema, choice: np.ndarray) -> np.ndarray:
    """E-nodes to exclude (boolean per e-node): every chosen ``Res`` of an effectful op that no
    chosen effect chain holds, and that op's ``EffOf`` e-nodes. Empty when the choice is consistent."""
    code, effectful = _codes(g, schema)
    bad = np.zeros(g.n_nodes, bool)
    res, eff_of, reg = code.get("Res"), code.get("EffOf"), code.get("Reg")
    if res is None or eff_of is None:
        return bad
    reached = np.flatnonzero(choice >= 0)
    chosen = choice[reached]
    ops = g.node_op[chosen]
    res_nodes = chosen[ops == res]
    res_op = g.children[g.child_ptr[res_nodes]]
    suspect = effectful[g.node_op[choice[res_op]]] if len(res_op) else np.zeros(0, bool)
    if not suspect.any():
        return bad
    live = np.zeros(g.n_classes, bool)
    ptr, kids, pick, node_op = g.child_ptr.tolist(), g.children.tolist(), choice.tolist(), g.node_op.tolist()
    for n in chosen[ops == reg].tolist():
        c = kids[ptr[n] + REG_FINAL]
        while c >= 0 and pick[c] >= 0 and node_op[pick[c]] == eff_of:
            op_class = kids[ptr[pick[c]]]
            if live[op_class]:
                break
            live[op_class] = True
            c = kids[ptr[pick[op_class] + 1] - 1]  # the op's incoming token: its last child
    dead_ops = np.unique(res_op[suspect & ~live[res_op]])
    if not len(dead_ops):
        return bad
    bad[res_nodes[np.isin(res_op, dead_ops)]] = True
    eff_nodes = np.flatnonzero(g.node_op == eff_of)
    bad[eff_nodes[np.isin(g.children[g.child_ptr[eff_nodes]], dead_ops)]] = True
    return bad


def extract_on_chains(g: EGraphArrays, schema: Schema, roots: Sequence[int], cost: CostModel) -> Extraction:
    """:func:`extract`, repeated with the e-nodes :func:`off_chain` finds excluded until none is
    chosen (module docstring). Raises ``ExtractionError`` when a class is left with no e-node."""
    exclude: np.ndarray | None = None
    while True:
        result = extract(g, schema, roots, cost, exclude=exclude)
        bad = off_chain(g, schema, result.choice)
        if not bad.any():
            return result
        exclude = bad if exclude is None else exclude | bad
