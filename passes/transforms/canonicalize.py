"""`canonicalize`: the canonicalization rule sets, on the e-graph (default) or the greedy driver.

The pass only chooses rules, driver and budgets; the rules are in `patterns/`
(`arith-canonical`, `tf-canonical`, `memref-affine-canonical`), the engines in
`rewrite/`. See docs/canonicalize.md for what each driver guarantees.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import attrs

from egraft.ir import REGISTRY, Diagnostic, Operation

from egraft.passes.manager.limits import (DEFAULT_MAX_ENODES, DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT, budget,
                     fold_element_limit_option, stop_text)
from egraft.passes.manager.registry import Pass, PassContext, PassFailure, option, register_pass

if TYPE_CHECKING:  # the engine is imported where it runs: egraft-opt loads every pass
    from egraft.patterns.rule import Rule
    from egraft.rewrite.encoding.cost_models import IRCost
    from egraft.rewrite.engine.egraph import EGraph

#: The rule sets `canonicalize` runs unless told otherwise.
DEFAULT_RULE_SETS = ["arith-canonical", "tf-canonical", "memref-affine-canonical"]


def canonical_cost() -> IRCost:
    """Op record costs, with constants cheaper than any op, so that among equal-cost
    programs extraction prefers the folded one (`x - x` and `0` are otherwise a tie),
    and tf's shape-generic zeros/ones cheaper than the arithmetic they replace."""
    from egraft.rewrite.encoding.cost_models import IRCost

    overrides = {name: 0.5 for name, d in REGISTRY.ops.items() if "ConstantLike" in d.trait_kinds}
    overrides.update({"tf.ZerosLike": 0.75, "tf.OnesLike": 0.75})
    return IRCost(overrides)


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
    report: bool = option(False, "Emit what the driver did as a remark")

    def selected_rules(self, op: Operation) -> tuple[Rule, ...]:
        from egraft.patterns import rules_of

        try:
            rules = rules_of(self.rules)
        except KeyError as e:
            raise PassFailure(Diagnostic("error", str(e.args[0]), op.loc)) from None
        return tuple(r for r in rules if r.name not in self.disable_patterns
                     and (not self.enable_patterns or r.name in self.enable_patterns))

    def run(self, op: Operation, ctx: PassContext) -> None:
        started = time.perf_counter()  # the time budget is the pass's, the imports below included
        from egraft.patterns.canon_executor import canonicalize_executor
        from egraft.patterns.fold_limits import fold_limits
        from egraft.rewrite.greedy.driver import GreedyConfig, apply_rules_greedily

        from egraft.rewrite.rules.compile import ops_present

        rules = self.selected_rules(op)
        present = ops_present(op)  # one walk, which the steps below consult instead of walking again
        executor = self.enabled("tf-executor-canonical") and any(n.startswith("tf_executor.") for n in present)
        pre = canonicalize_executor(op) if executor else 0
        with fold_limits(self.fold_element_limit or None) as limits:
            if self.driver == "greedy":
                result = apply_rules_greedily(op, rules, GreedyConfig(self.max_iterations, self.max_num_rewrites))
                converged, text = result.converged, result.summary()
            elif self.driver == "egraph":
                converged, text = self.run_egraph(op, rules, started, present)
            else:
                raise PassFailure(Diagnostic("error", f"canonicalize: unknown driver '{self.driver}' "
                                             "(egraph or greedy)", op.loc))
        text += f"; {limits.summary()}" if limits.refused else ""
        text += self.run_structural(op) if "affine.store" in present else ""
        if executor:
            n = pre + canonicalize_executor(op)
            text += f"; tf-executor-canonical: {n}" if n else ""
        if self.report:
            ctx.emit(Diagnostic("remark", text, op.loc))
        if self.test_convergence and not converged:
            raise PassFailure(Diagnostic("error", f"canonicalize did not converge: {text}", op.loc))

    def enabled(self, name: str) -> bool:
        return name not in self.disable_patterns and (not self.enable_patterns or name in self.enable_patterns)

    def run_structural(self, op: Operation) -> str:
        """Rewrites a rule cannot state (a root without results): the store half of
        affine.apply composition (`canon_affine.compose_store_maps`)."""
        from egraft.patterns.canon_affine import compose_store_maps

        if "memref-affine-canonical" not in self.rules or not self.enabled("affine-store-compose"):
            return ""
        n = compose_store_maps(op)
        return f"; affine-store-compose: {n}" if n else ""

    def run_egraph(self, op: Operation, rules: tuple[Rule, ...], started: float,
                   present: set[str]) -> tuple[bool, str]:
        from egraft.rewrite.rules.compile import compile_rules, rules_for
        from egraft.rewrite.greedy.driver import GreedyConfig, apply_rules_greedily
        from egraft.rewrite.lower_pipeline import optimize

        rules = rules_for(present, rules)
        skipped: dict[str, str] = {}

        def prepare(eg: EGraph) -> None:
            skipped.update(compile_rules(eg, rules).skipped)

        result = optimize(op, budget=budget(self.egraph_iterations, self.max_enodes, self.timeout, started),
                          prepare=prepare, cost=canonical_cost())
        rep = result.report
        converged = rep is None or rep.saturated
        # Rules the e-graph cannot hold (they build effectful ops such as affine.load, or read the
        # IR) run after extraction on the greedy driver, so both drivers apply every rule.
        leftover = tuple(r for r in rules if r.name in skipped)
        if leftover and result.written:
            greedy = apply_rules_greedily(op, leftover, GreedyConfig(self.max_iterations, self.max_num_rewrites))
            converged = converged and greedy.converged
        text = (f"canonicalize (egraph): {result.ops_in} ops, {result.enodes} e-nodes, "
                f"{stop_text(result, self.egraph_iterations, self.max_enodes, self.timeout, 'egraph-iterations')}, "
                f"iterations={rep.iterations if rep else 0}, "
                f"reused {result.writeback.reused}, new {result.writeback.created}, "
                f"dropped {result.writeback.dropped}, rules not on the e-graph (run greedily after): "
                f"{len(skipped)}; "
                + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.seconds.items()))
        return converged, text
