"""`canonicalize`: the canonicalization rule sets, on the e-graph (default) or the greedy driver.

The pass only names rule sets, driver and budgets; what the sets need (e-graph rules,
greedy-only rules, structural steps such as the tf_executor canonicalization) they declare in
`patterns/`, and `rewrite/phases.py` runs it. See docs/canonicalize.md for what each driver
guarantees.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import attrs

from egraft.ir import Diagnostic, Operation

from egraft.passes.manager.limits import (DEFAULT_MAX_ENODES, DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT, budget,
                                          fold_element_limit_option, stop_text)
from egraft.passes.manager.registry import Pass, PassContext, PassFailure, option, register_pass
from egraft.passes.transforms.report_options import emit_report, op_label, phases_data, report_option, wants_report

if TYPE_CHECKING:  # the engine is imported where it runs: egraft-opt loads every pass
    from egraft.rewrite.phases import PhasesReport

#: The rule sets `canonicalize` runs unless told otherwise.
DEFAULT_RULE_SETS = ["arith-canonical", "tf-canonical", "memref-affine-canonical", "memref-cast-folding"]


@register_pass
@attrs.define
class Canonicalize(Pass):
    """Rewrites to canonical form with the canonicalization rule sets: identities such as
    x-x→0 and x*1→x, constant folding, tf's canonicalize.td rules, affine map folding.
    `driver=egraph` (default) saturates an e-graph with the rules and extracts the
    cheapest program (dead ops disappear with it); `driver=greedy` runs MLIR's greedy
    driver semantics on the IR. Both drivers run the same rules."""

    NAME = "canonicalize"
    SUMMARY = "Canonicalize operations"
    driver: str = option("egraph", "Rewrite driver: egraph or greedy", choices=("egraph", "greedy"))
    rules: list[str] = option(list(DEFAULT_RULE_SETS), "Rule sets to apply (comma-separated)")
    max_iterations: int = option(10, "Greedy: scans of the IR (the e-graph's budget is egraph-iterations)",
                                 min=1)
    max_num_rewrites: int = option(-1, "Greedy: rewrites before stopping (-1: no limit)", min=-1)
    egraph_iterations: int = option(DEFAULT_MAX_ITERATIONS, "Egraph: stop saturating after this many egglog "
                                    "iterations (0: no limit)", min=0)
    max_enodes: int = option(DEFAULT_MAX_ENODES, "Egraph: stop saturating at this many e-nodes (0: no limit)",
                             min=0)
    timeout: float = option(DEFAULT_TIMEOUT, "Egraph: wall seconds for the e-graph round trip, extraction and "
                            "write-back included; what saturation found by then is written back (0: no limit)",
                            min=0)
    fold_element_limit: int = fold_element_limit_option()
    test_convergence: bool = option(False, "Fail if the rewrite does not converge within the limits")
    top_down: bool = option(True, "Accepted for MLIR compatibility (the worklist is always top-down)")
    region_simplify: str = option("normal", "Accepted for MLIR compatibility (regions are not simplified); "
                                  "older MLIR spelled it true/false",
                                  choices=("disabled", "normal", "aggressive", "true", "false"))
    disable_patterns: list[str] = option([], "Rule names not to apply")
    enable_patterns: list[str] = option([], "Only these rule names (empty: all)")
    report: str = report_option()

    def run(self, op: Operation, ctx: PassContext) -> None:
        started = time.perf_counter()  # the time budget is the pass's, the imports below included
        from egraft.patterns import declaration
        from egraft.rewrite.encoding.cost_models import canonical_cost
        from egraft.rewrite.greedy.driver import GreedyConfig
        from egraft.rewrite.phases import fired_lines, idle_lines, run_phases

        try:
            declared = declaration(self.rules, self.enabled)
        except KeyError as e:
            raise PassFailure(Diagnostic("error", str(e.args[0]), op.loc)) from None
        done = run_phases(op, declared, self.driver, greedy=GreedyConfig(self.max_iterations, self.max_num_rewrites),
                          budget=budget(self.egraph_iterations, self.max_enodes, self.timeout, started),
                          cost=canonical_cost(), fold_element_limit=self.fold_element_limit or None)
        ctx.time_phases(done.phase_seconds())
        text = self.summary(done) + (f"; {done.refused}" if done.refused else "") + done.structural_summary()
        if wants_report(self.report):
            rows = done.rule_rows(declared)
            lines = fired_lines(rows) if done.round_trip is not None else []  # the greedy summary has its own
            emit_report(self.report, "\n".join([text, *lines, *idle_lines(rows)]),
                        {"pass": self.NAME, "op": op_label(op), "driver": self.driver, "text": text,
                         **phases_data(done), "rules": rows}, op, ctx)
        if self.test_convergence and not done.converged:
            raise PassFailure(Diagnostic("error", f"canonicalize did not converge: {text}", op.loc))

    def enabled(self, name: str) -> bool:
        """Whether the rule or structural step `name` runs (`disable-patterns`, `enable-patterns`)."""
        return name not in self.disable_patterns and (not self.enable_patterns or name in self.enable_patterns)

    def summary(self, done: PhasesReport) -> str:
        """The driver's report: the greedy driver's, or what the e-graph phase did and which budget stopped it."""
        result = done.round_trip
        if result is None:
            return done.greedy.summary()  # type: ignore[union-attr]
        rep = result.report
        return (f"canonicalize (egraph): {result.ops_in} ops, {result.enodes} e-nodes, "
                f"{stop_text(result, self.egraph_iterations, self.max_enodes, self.timeout, 'egraph-iterations')}, "
                f"iterations={rep.iterations if rep else 0}, "
                f"reused {result.writeback.reused}, new {result.writeback.created}, "
                f"dropped {result.writeback.dropped}, rules not on the e-graph (run greedily after): "
                f"{len(done.not_on_egraph)}; "
                + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.seconds.items()))
