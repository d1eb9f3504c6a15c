"""Running a rule-set declaration (patterns/rule_sets.py): the phases a rewriting pass is made of.

A pass names rule sets and a driver; this module runs what the sets declare, in order:

1. the structural steps that also run before the rules (``rewrite/structural``), where their
   ops occur: the executor canonicalization inlines single-island graphs, which gives the
   rules whole blocks to work on;
2. the rules, on the chosen driver:
   * ``egraph``: the round trip of :func:`egraft.rewrite.lower_pipeline.optimize` with the
     e-graph rules, then the greedy driver with the greedy-only rules and any rule the e-graph
     compiler refused (they build effectful ops or read the IR), so both drivers apply every
     rule; rules whose source ops do not occur are not compiled (egglog takes ~3 ms a rule);
   * ``greedy``: the greedy driver with every rule;
3. the structural steps, after the rules.

The ops present are found by one walk, shared by every phase's test of what it needs (a walk
of a 100k-op function is ~0.1 s; the steps once walked it each). Folds run under the pass's
element limit throughout.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from egraft.ir import Operation
from egraft.ir.core.traits import Traits
from egraft.patterns.fold_limits import fold_limits
from egraft.patterns.rule import Rule
from egraft.patterns.rule_sets import Declaration

from egraft.rewrite.engine.saturate import Budget
from egraft.rewrite.greedy.driver import GreedyConfig, GreedyReport, apply_rules_greedily
from egraft.rewrite.rules.compile import compile_rules, ops_present, rules_for
from egraft.rewrite.structural import STEPS, StructuralStep

if TYPE_CHECKING:  # the round trip is imported where it runs: the greedy driver needs none of it
    from egraft.rewrite.engine.egraph import EGraph
    from egraft.rewrite.engine.extract import CostModel
    from egraft.rewrite.lower_pipeline import RoundTrip

DRIVERS = ("egraph", "greedy")


@attrs.define
class PhasesReport:
    """What each phase did. ``converged``: the driver reached a fixed point within its limits."""

    converged: bool = True
    round_trip: RoundTrip | None = None      # the e-graph phase (None on the greedy driver)
    greedy: GreedyReport | None = None       # the greedy driver, or the e-graph driver's greedy phase
    not_on_egraph: dict[str, str] = attrs.field(factory=dict)  # rule name -> why the e-graph did not hold it
    structural: Counter[str] = attrs.field(factory=Counter)    # step name -> rewrites
    refused: str = ""                        # folds refused for size (fold_limits' summary)

    def structural_summary(self) -> str:
        """`; step: n` for each structural step that rewrote something."""
        return "".join(f"; {name}: {n}" for name, n in self.structural.items() if n)


def _steps(names: Iterable[str]) -> tuple[StructuralStep, ...]:
    return tuple(STEPS[n] for n in names)


def _run_steps(op: Operation, steps: Iterable[StructuralStep], present: set[str], report: PhasesReport,
               before: bool) -> None:
    for step in steps:
        if (step.before or not before) and step.applies(present):
            report.structural[step.name] += step.run(op)


def run_egraph_rules(op: Operation, declared: Declaration, budget: Budget, cost: CostModel | None = None,
                     present: set[str] | None = None) -> tuple[RoundTrip, dict[str, str]]:
    """The e-graph round trip with the e-graph rules of ``declared`` whose source ops are
    ``present`` (none: the identity round trip). Returns it and the rules of ``declared``
    that can match but are not on the e-graph (greedy-only, or refused by the compiler), with why."""
    from egraft.rewrite.lower_pipeline import optimize

    present = ops_present(op) if present is None else present
    chosen = rules_for(present, declared.egraph_rules)
    left = {r.name: "greedy driver only (declared so by its rule set)" for r in rules_for(present, declared.greedy_rules)}

    def prepare(eg: EGraph) -> None:  # rules compile against the e-graph's schema
        left.update(compile_rules(eg, chosen).skipped)

    started = time.perf_counter()
    for body in _branching_bodies(op, present):
        optimize(body, budget=_spent(budget, started), prepare=prepare if chosen else None, cost=cost)
    return optimize(op, budget=_spent(budget, started), prepare=prepare if chosen else None, cost=cost), left


def _branching_bodies(op: Operation, present: set[str]) -> list[Operation]:
    """The ops strictly inside ``op`` that are isolated from above and hold a region of several
    blocks (functions with branches), innermost first.

    The round trip on ``op`` keeps them opaque (an op node has one ``Reg`` per region, a
    region of several blocks needs one per block: docs/encoding.md), so each gets a round trip
    of its own first, under what is left of the budget. Blocks are linked by branch
    terminators, which are ``cf`` ops: without them there is nothing to look for."""
    if not any(name.startswith("cf.") for name in present):
        return []
    found = []
    stack = [child for region in op.regions for block in region.blocks for child in block]
    while stack:
        inner = stack.pop()
        if inner.regions:
            if inner.has_trait(Traits.IsolatedFromAbove) and any(len(r.blocks) > 1 for r in inner.regions):
                found.append(inner)
            stack.extend(child for region in inner.regions for block in region.blocks for child in block)
    return found[::-1]


def run_phases(op: Operation, declared: Declaration, driver: str = "egraph", *,
               greedy: GreedyConfig = GreedyConfig(), budget: Budget = Budget(), cost: CostModel | None = None,
               fold_element_limit: int | None = None) -> PhasesReport:
    """Run ``declared`` on the regions of ``op`` with ``driver`` (``egraph`` or ``greedy``).

    ``budget`` bounds the e-graph phase; its time counts from this call (the structural
    steps before the rules included)."""
    if driver not in DRIVERS:
        raise ValueError(f"unknown driver '{driver}' ({' or '.join(DRIVERS)})")
    started = time.perf_counter()
    report = PhasesReport()
    steps = _steps(declared.structural)
    present = ops_present(op)
    _run_steps(op, steps, present, report, before=True)
    with fold_limits(fold_element_limit) as limits:
        if driver == "greedy":
            report.greedy = apply_rules_greedily(op, declared.rules, greedy)
            report.converged = report.greedy.converged
        else:
            _egraph_then_greedy(op, declared, greedy, _spent(budget, started), cost, present, report)
    report.refused = limits.summary()
    _run_steps(op, steps, present, report, before=False)
    return report


def _spent(budget: Budget, started: float) -> Budget:
    """``budget`` less the time since ``started``."""
    if budget.max_seconds is None:
        return budget
    left = max(budget.max_seconds - (time.perf_counter() - started), 1e-9)
    return Budget(budget.max_iterations, budget.max_enodes, left, budget.reserve)


def _egraph_then_greedy(op: Operation, declared: Declaration, greedy: GreedyConfig, budget: Budget,
                        cost: CostModel | None, present: set[str], report: PhasesReport) -> None:
    result, report.not_on_egraph = run_egraph_rules(op, declared, budget, cost, present)
    report.round_trip = result
    report.converged = result.report is None or result.report.saturated
    rules = tuple(r for r in declared.rules if r.name in report.not_on_egraph)
    if rules and result.written:
        report.greedy = apply_rules_greedily(op, rules, greedy)
        report.converged = report.converged and report.greedy.converged
