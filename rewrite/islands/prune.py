"""Graph pruning: which ops of a ``tf_executor.graph`` can affect its fetch.

An op is live when the fetch (or an op kept on purpose) reaches it backwards over data,
control and captured values; a reached ``NextIteration.Source`` brings its ``Sink``
(the Sink feeds the Source's next iteration although no SSA edge says so).  Ops whose
names are listed as must-execute or to-preserve are kept with everything they reach.
"""

from __future__ import annotations

from collections.abc import Collection

from egraft.ir import Operation

from egraft.rewrite.islands.facts import collect

#: Ops that run for their effect on the world even when nothing reads them.
MUST_EXECUTE = frozenset({"tf._InternalTestMustExecuteTrait_"})


def _holds(op: Operation, names: Collection[str]) -> bool:
    return any(inner.name in names for inner in op.walk())


def unreachable_ops(graph: Operation, preserve: Collection[str] = ()) -> list[Operation]:
    """The ops of ``graph``'s block (fetch excluded) that no kept op depends on."""
    nodes = collect(graph)
    n = len(nodes.ops)
    preds: list[list[int]] = [[] for _ in range(n + 1)]
    for s, _, d in nodes.edges:
        preds[d].append(s)
    sink_of: dict[int, int] = {}
    for i, op in enumerate(nodes.ops):
        if op.name == "tf_executor.NextIteration.Sink":
            token = op.operands[0].owner_op
            if token in nodes.index:
                sink_of[nodes.index[token]] = i
    keep = MUST_EXECUTE | frozenset(preserve)
    work = [n] + [i for i, op in enumerate(nodes.ops) if _holds(op, keep)]
    live = set(work)
    while work:
        d = work.pop()
        for s in preds[d] + ([sink_of[d]] if d in sink_of else []):
            if s not in live:
                live.add(s)
                work.append(s)
    return [op for i, op in enumerate(nodes.ops) if i not in live]
