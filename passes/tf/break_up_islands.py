"""`tf-executor-break-up-islands`: one island per op, the inverse of island coarsening.

Upstream's name.  The splitting (`egraft.rewrite.islands.breakup`) keeps every piece dead
exactly when the original island was, so coarsening the result regroups it as before;
ops with possible side effects keep their program order through control dependencies.
"""

from __future__ import annotations

import attrs

from egraft.ir import Operation

from egraft.passes.tf.graph_pruning import graphs_in
from egraft.passes.manager.registry import Pass, PassContext, register_pass


@register_pass
@attrs.define
class BreakUpIslands(Pass):
    """Splits every multi-op island of each tf_executor graph into single-op islands."""

    NAME = "tf-executor-break-up-islands"
    SUMMARY = "Split tf_executor islands into one island per op"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        from egraft.rewrite.islands.breakup import break_up  # imported here: egraft-opt loads every pass, and most runs use few of them

        for graph in graphs_in(op):
            for island in [o for o in graph.regions[0].blocks[0].ops if o.name == "tf_executor.island"]:
                break_up(island)
