"""`tf-executor-island-coarsening`: merge the islands of each tf_executor graph.

Upstream's name, so upstream RUN lines work.  Unlike upstream's pass (which merges an
island with its closest producer or consumer and ignores deadness), the grouping comes
from the island-merging rules (`egraft.patterns.island_merging`, run by
`egraft.rewrite.islands.facts`): islands merge iff they are dead under the same conditions
and sit at the same barrier depth, which is sound for v1 control flow and merges every
barrier-free graph into one island.  The pass only picks graphs and writes groups back.
"""

from __future__ import annotations

import attrs

from egraft.ir import Operation

from egraft.passes.tf.graph_pruning import graphs_in
from egraft.passes.manager.registry import Pass, PassContext, option, register_pass


def coarsen(op: Operation, keep_independent: bool = False) -> int:
    """Coarsen every graph under `op`; returns the number of islands merged away."""
    from egraft.rewrite.islands.facts import collect, group_islands  # imported here: egraft-opt loads every pass, and most runs use few of them
    from egraft.rewrite.islands.writeback import write_groups

    removed = 0
    for graph in reversed(graphs_in(op)):
        grouping = group_islands(collect(graph), keep_independent)
        removed += write_groups(graph, grouping.groups())
    return removed


@register_pass
@attrs.define
class IslandCoarsening(Pass):
    """Merges islands with equal deadness signature and barrier depth (sound with v1 control flow)."""

    NAME = "tf-executor-island-coarsening"
    SUMMARY = "Merge tf_executor islands that always run under the same conditions"
    ANCHOR = "func.func"
    keep_independent: bool = option(False, "Keep independent subgraphs in separate islands "
                                           "(inter-op parallelism)")

    def run(self, op: Operation, ctx: PassContext) -> None:
        coarsen(op, self.keep_independent)
