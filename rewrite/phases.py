"""Running a rule-set declaration (patterns/rule_sets.py): the phases a rewriting pass is made of.

A pass names rule sets and a driver; this module runs what the sets declare, in order:

1. the structural steps that also run before the rules (``rewrite/structural``), where their
   ops occur: the executor canonicalization inlines single-island graphs, which gives the
   rules whole blocks to work on;
2. the rules, on the chosen driver:
   * ``egraph``: the round trip of :func:`egraft.rewrite.lower_pipeline.optimize` with the
     e-graph rules, then the greedy driver with the greedy-only rules and any rule the e-graph
     compiler refused (they read the IR or build ops with regions), so both drivers apply every
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

from egraft.rewrite.engine.saturate import Budget, RuleStats, SaturationReport
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

    def phase_seconds(self) -> dict[str, float]:
        """Wall time of each phase that ran: the round trip's steps (lower, load, saturate,
        export, extract, writeback) and the greedy driver's run (``greedy``)."""
        seconds = dict(self.round_trip.seconds) if self.round_trip is not None else {}
        if self.greedy is not None:
            seconds["greedy"] = self.greedy.seconds
        return seconds

    def rule_rows(self, declared: Declaration) -> list[dict]:
        """Per-rule statistics of both drivers and why each rule of ``declared`` that
        rewrote nothing did not (see :func:`rule_rows`)."""
        sat = self.round_trip.report if self.round_trip is not None else None
        return rule_rows(declared.rules, sat, self.greedy, self.not_on_egraph, on_egraph=self.round_trip is not None)


def egraph_rule_stats(report: SaturationReport) -> dict[str, RuleStats]:
    """The saturation report's egglog rules folded into the rules they were compiled from.

    rewrite/rules/compile.py names an egglog rule after its rule: ``name``, ``name#i`` per
    choice of an ``Either``, and for a staged rule (one that asks oracles) ``name=match`` for
    the join of its source pattern and ``name?i`` for its requests. A rule's matches are its
    source pattern's (the join's, when staged), its applications the rewrite's; the times and
    e-nodes of all its parts add up. The engine's own helper rules (``...@ruleset``) are no
    rule's and are left out."""
    out: dict[str, RuleStats] = {}
    staged = {name.partition("=match")[0] for name in report.rules if name.endswith("=match")}
    for name, stats in report.rules.items():
        if "@" in name:
            continue
        base = name.partition("=match")[0].partition("?")[0].partition("#")[0]
        row = out.setdefault(base, RuleStats())
        part = name[len(base):]
        if part.startswith("=match") or not (part.startswith("?") or base in staged):
            row.matches += stats.matches
        if not part.startswith(("=match", "?")):
            row.applications += stats.applications
        row.enodes_added += stats.enodes_added
        row.seconds += stats.seconds
        row.steps += stats.steps
        row.alone += stats.alone
    return out


def rule_rows(rules: Iterable[Rule], saturation: SaturationReport | None, greedy: GreedyReport | None,
              not_on_egraph: dict[str, str], on_egraph: bool = True) -> list[dict]:
    """One JSON-ready row per rule of ``rules``, in their order: what it did on the
    e-graph (``egraph``: matches, applications, e-nodes added and seconds, both shared among the
    rules of a step unless ``exact``: saturate.RuleStats; e-nodes are a net change, negative
    when the classes a rule merged held congruent e-nodes) and on the greedy driver (``greedy``:
    tries, matches, applications, ops added, seconds), and, for a rule that rewrote nothing, why:
    ``idle`` is "no match" (it ran and matched nothing it could rewrite), "ops absent" (an
    op of its source pattern does not occur, so it was not tried), or why the e-graph could
    not hold it (and the greedy driver did not run it)."""
    egraph = egraph_rule_stats(saturation) if saturation is not None else {}
    rows = []
    for rule in rules:
        row: dict = {"name": rule.name}
        sat = egraph.get(rule.name)
        if sat is not None:
            row["egraph"] = {"matches": sat.matches, "applications": sat.applications,
                             "enodes_added": round(sat.enodes_added, 1), "seconds": sat.seconds,
                             "exact": sat.steps == sat.alone}
        run = greedy.rules.get(rule.name) if greedy is not None else None
        run = run if run is not None and run.tries else None
        if run is not None:
            row["greedy"] = attrs.asdict(run)
        if not (sat is not None and sat.applications or run is not None and run.applications):
            if sat is not None or run is not None:
                row["idle"] = "no match"
            elif on_egraph and rule.name in not_on_egraph:
                row["idle"] = not_on_egraph[rule.name]
            else:
                row["idle"] = "ops absent"
        rows.append(row)
    return rows


def fired_lines(rows: list[dict]) -> list[str]:
    """Report lines for the rows of :func:`rule_rows` that rewrote something, most applications first."""
    def applied(row: dict) -> int:
        return sum(row[d]["applications"] for d in ("egraph", "greedy") if d in row)

    lines = []
    for row in sorted((r for r in rows if "idle" not in r), key=lambda r: (-applied(r), r["name"])):
        parts = []
        if "egraph" in row:
            e = row["egraph"]
            parts.append(f"{e['applications']} applied, {e['matches']} match(es), "
                         f"{e['enodes_added']:+g} e-node(s){'' if e['exact'] else ' (shared)'}, "
                         f"{e['seconds'] * 1000:.1f} ms")
        if "greedy" in row:
            g = row["greedy"]
            parts.append(f"greedy {g['applications']} rewrite(s), {g['matches']} match(es), "
                         f"{g['ops_added']} op(s) added, {g['seconds'] * 1000:.1f} ms")
        lines.append(f"  {row['name']}: {'; '.join(parts)}")
    return lines


#: Rules named in the "never fired" line of a report; the JSON report names them all.
IDLE_NAMES_SHOWN = 12


def idle_lines(rows: list[dict]) -> list[str]:
    """The "never fired" line for the rows of :func:`rule_rows` (none if every rule fired):
    the rules that ran and matched nothing by name, the others counted."""
    tried = [r["name"] for r in rows if r.get("idle") == "no match"]
    untried = sum(1 for r in rows if r.get("idle", "no match") != "no match")
    if not tried and not untried:
        return []
    shown = ", ".join(tried[:IDLE_NAMES_SHOWN]) + (f", ... ({len(tried) - IDLE_NAMES_SHOWN} more)"
                                                   if len(tried) > IDLE_NAMES_SHOWN else "")
    return [f"  never fired: {len(tried) + untried} rule(s)" + (f"; matched nothing: {shown}" if tried else "")
            + (f"; not tried (ops absent, or not on this driver): {untried}" if untried else "")]


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
