"""`-eqsat`: equality saturation with named rule sets on the regions of the op it runs on.

The pass only names rule sets and budgets: `rewrite/phases.py` runs the e-graph phase of
what the named sets of `egraft.patterns` declare (their greedy-only rules and structural
steps are `canonicalize`'s business), and the pass reports what saturation did.
"""

from __future__ import annotations

import os
import time

from typing import TYPE_CHECKING

import attrs

from egraft.ir import Diagnostic, Operation

from egraft.passes.manager.limits import (DEFAULT_MAX_ENODES, DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT, budget,
                     fold_element_limit_option, stop_text)
from egraft.passes.manager.registry import Pass, PassContext, PassFailure, option, register_pass
from egraft.passes.transforms.report_options import emit_report, op_label, report_option, wants_report

if TYPE_CHECKING:
    from egraft.patterns.rule import Rule
    from egraft.rewrite.lower_pipeline import RoundTrip


@register_pass
@attrs.define
class EqSat(Pass):
    """Rewrites the regions of the op it runs on by equality saturation: lower them to an
    e-graph, apply the rule sets until saturation or a budget, extract the cheapest program
    (op record costs) and write it back. `rules=none` is the identity round trip."""

    NAME = "eqsat"
    SUMMARY = "Equality saturation with named rule sets"
    rules: list[str] = option(["none"], "Rule sets to apply (comma-separated; none: identity)")
    max_iterations: int = option(DEFAULT_MAX_ITERATIONS, "Stop after this many egglog iterations (0: no limit)",
                                 min=0)
    max_enodes: int = option(DEFAULT_MAX_ENODES, "Stop once the e-graph has this many e-nodes (0: no limit)", min=0)
    timeout: float = option(DEFAULT_TIMEOUT, "Wall seconds for the round trip, extraction and write-back "
                            "included; what saturation found by then is written back (0: no limit)", min=0)
    fold_element_limit: int = fold_element_limit_option()
    report: str = report_option()
    dump_egraph: str = option("", "Directory for Graphviz pictures (IR before/after, e-graph): .dot files, "
                              "rendered to SVG and PNG when Graphviz's dot is on PATH")
    dump_rule: str = option("", "With dump-egraph: draw only the e-classes holding an op of this rule's "
                            "patterns, with their operands' classes")

    def run(self, op: Operation, ctx: PassContext) -> None:
        started = time.perf_counter()  # the time budget is the pass's, the imports below included
        from egraft.patterns import declaration  # imported here: egraft-opt loads every pass, and most runs use few of them
        from egraft.patterns.fold_limits import fold_limits
        from egraft.rewrite.dot import ir_dot
        from egraft.rewrite.phases import fired_lines, idle_lines, rule_rows, run_egraph_rules

        try:
            declared = declaration(r for r in self.rules if r != "none")
        except KeyError as err:
            raise PassFailure(Diagnostic("error", str(err.args[0]), op.loc)) from None
        before = ir_dot(op) if self.dump_egraph else ""
        with fold_limits(self.fold_element_limit or None) as limits:
            result, skipped = run_egraph_rules(op, declared, budget(self.max_iterations, self.max_enodes,
                                                                    self.timeout, started))
        ctx.time_phases(result.seconds)
        if self.dump_egraph and result.written:
            self.dump(op, before, result, declared.rules, ctx)
        if not wants_report(self.report):
            return
        summary = self.summary(result, skipped, stop_text(result, self.max_iterations, self.max_enodes,
                                                           self.timeout), limits.summary())
        rows = rule_rows(declared.rules, result.report, None, skipped)
        summary.update({"pass": self.NAME, "op": op_label(op), "rules": rows})
        text = "\n".join([summary["text"], *fired_lines(rows), *idle_lines(rows)])
        emit_report(self.report, text, summary, op, ctx)

    def dump(self, op: Operation, before: str, result: RoundTrip, rules: tuple[Rule, ...], ctx: PassContext) -> None:
        """Write the pictures; Graphviz missing or failing is a remark, never a failure."""
        from egraft.rewrite.dot import classes_of_ops, egraph_dot, ir_dot, render

        classes = None
        if self.dump_rule:
            rule = next((r for r in rules if r.name == self.dump_rule), None)
            if rule is None:
                raise PassFailure(Diagnostic("error", f"dump-rule: no rule '{self.dump_rule}' in the rule sets "
                                             f"{','.join(self.rules)}", op.loc))
            ops = {p.name for p in (*rule.source_ops(), *rule.result_ops())}
            classes = classes_of_ops(result.egraph, ops)  # type: ignore[arg-type]
        os.makedirs(self.dump_egraph, exist_ok=True)
        stem = os.path.join(self.dump_egraph, op.name)
        written = []
        for suffix, text in (("before", before), ("after", ir_dot(op)),
                             ("egraph", egraph_dot(result.egraph, result.choice, classes=classes))):  # type: ignore[arg-type]
            written.append(f"{stem}.{suffix}.dot")
            with open(written[-1], "w", encoding="utf-8") as f:
                f.write(text)
        why = render(written)
        if why is not None:
            ctx.emit(Diagnostic("remark", f"dump-egraph: {why}", op.loc))

    @staticmethod
    def summary(result: RoundTrip, skipped: dict[str, str], stop: str, refused: str) -> dict:
        rep = result.report
        text = (f"eqsat: {result.ops_in} ops, {result.enodes} e-nodes in {result.eclasses} e-classes, "
                f"{stop}, iterations={rep.iterations if rep else 0}, "
                f"cost={result.cost:g}, reused {result.writeback.reused}, new {result.writeback.created}, "
                f"dropped {result.writeback.dropped}; "
                + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.seconds.items())
                + (f"; {refused}" if refused else ""))
        return {
            "text": text, "stop": rep.stop if rep else None, "iterations": rep.iterations if rep else 0,
            "enodes": result.enodes, "eclasses": result.eclasses, "cost": result.cost,
            "matches": dict(rep.matches) if rep else {}, "seconds": result.seconds,
            "writeback": attrs.asdict(result.writeback) if attrs.has(type(result.writeback))
            else vars(result.writeback), "skipped_rules": skipped, "written": result.written,
            "folds_refused": refused,
        }
