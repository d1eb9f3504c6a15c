"""`tf-executor-graph-pruning`: erase the ops of a tf_executor graph that cannot affect its fetch.

The reachability lives in `egraft.rewrite.islands.prune`; this pass picks the graphs.
As upstream, a function named `main` without a `tf.entry_function` attribute is left
alone: it may be a V1 graph imported without feeds and fetches, whose outputs are unknown.
"""

from __future__ import annotations

import attrs

from egraft.ir import Operation
from egraft.ir.erasure import erase_all

from egraft.passes.manager.registry import Pass, PassContext, option, register_pass


def graphs_in(op: Operation) -> list[Operation]:
    """Every tf_executor.graph under `op`, outermost first."""
    return [g for g in op.walk() if g.name == "tf_executor.graph"]


@register_pass
@attrs.define
class GraphPruning(Pass):
    """Removes ops not transitively reachable from each graph's fetch."""

    NAME = "tf-executor-graph-pruning"
    SUMMARY = "Prune unreachable ops from a tf_executor.graph"
    ANCHOR = "func.func"
    ops_to_preserve: list[str] = option([], "Ops to keep (with everything they depend on) even if unreachable")

    def run(self, op: Operation, ctx: PassContext) -> None:
        from egraft.rewrite.islands.prune import unreachable_ops  # imported here: egraft-opt loads every pass, and most runs use few of them

        name = op.attr("sym_name")
        if getattr(name, "value", None) == "main" and op.attr("tf.entry_function") is None:
            return
        for graph in reversed(graphs_in(op)):
            erase_all(unreachable_ops(graph, self.ops_to_preserve))
