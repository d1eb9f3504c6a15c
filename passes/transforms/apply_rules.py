"""`apply-rules`: run named rule sets with the greedy driver (no e-graph).

The pass only parses options and reports; matching, building and the
driver live in `rewrite/greedy*.py`, the rules in `patterns/`.
"""

from __future__ import annotations

import attrs

from egraft.ir import Diagnostic, Operation

from egraft.passes.manager.limits import fold_element_limit_option
from egraft.passes.manager.registry import Pass, PassContext, PassFailure, option, register_pass
from egraft.passes.transforms.report_options import (emit_report, greedy_data, op_label, report_option,
                                                      wants_report)


@register_pass
@attrs.define
class ApplyRules(Pass):
    """Apply the rules of the given rule sets (`rules=arith-canonical,tf-canonical`) with
    MLIR's greedy driver semantics: worklist, benefit order, folding, dead-op erasure."""

    NAME = "apply-rules"
    SUMMARY = "Apply rule sets with the greedy rewrite driver"
    rules: list[str] = option([], "Rule sets to apply, in order")
    driver: str = option("greedy", "Rewrite driver: greedy (the e-graph runs in the eqsat pass)", choices=("greedy",))
    max_iterations: int = option(10, "Scans of the whole op before giving up", min=1)
    max_num_rewrites: int = option(-1, "Rewrites before stopping (-1: no limit)", min=-1)
    fold_element_limit: int = fold_element_limit_option()
    test_convergence: bool = option(False, "Fail if the rewrite does not converge")
    report: str = report_option()

    def run(self, op: Operation, ctx: PassContext) -> None:
        from egraft.patterns import rules_of  # imported here: egraft-opt loads every pass, and most runs use few of them
        from egraft.patterns.fold_limits import fold_limits
        from egraft.rewrite.greedy.driver import GreedyConfig, apply_rules_greedily
        from egraft.rewrite.phases import idle_lines, rule_rows

        if self.driver != "greedy":
            raise PassFailure(Diagnostic("error", f"apply-rules: unknown driver '{self.driver}' (use greedy)", op.loc))
        try:
            rules = rules_of(self.rules)
        except KeyError as e:
            raise PassFailure(Diagnostic("error", str(e.args[0]), op.loc)) from None
        with fold_limits(self.fold_element_limit or None) as limits:
            result = apply_rules_greedily(op, rules, GreedyConfig(self.max_iterations, self.max_num_rewrites))
        if wants_report(self.report):
            refused = f"; {limits.summary()}" if limits.refused else ""
            rows = rule_rows(rules, None, result, {}, on_egraph=False)
            emit_report(self.report, "\n".join([result.summary() + refused, *idle_lines(rows)]),
                        {"pass": self.NAME, "op": op_label(op), "driver": "greedy", "text": result.summary(),
                         "converged": result.converged, "greedy": greedy_data(result), "folds_refused": limits.summary(),
                         "rules": rows}, op, ctx)
        if self.test_convergence and not result.converged:
            raise PassFailure(Diagnostic("error", f"rules did not converge after {result.iterations} iteration(s) "
                                         f"({result.stop})", op.loc))
