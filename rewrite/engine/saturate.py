"""Phased equality saturation under budgets, with a report of what happened.

egglog has no e-node limit and cannot be interrupted, so the driver runs the
schedule in short egglog calls (one iteration each, for saturating phases) and checks
the budgets (iterations, e-nodes, wall time) between them. A step is not started when
the last one says it would not end before the time budget, so a budget is overshot by
at most the misprediction of one step; the back-off ``match_limit`` bounds what one
step can do (egglog stops enumerating a rule's matches past its limit).

``between`` is called after every step with the table sizes; what it adds (oracle
answers: rewrite/rules/oracles.py) counts as a change, so saturation is only claimed when
neither the rules nor the hook have anything left to add.

The default schedule follows what worked at 100k nodes (docs/engine.md):
saturate the shrinking rules first, then give the expanding ones (commutativity,
associativity) one back-off iteration per round, re-saturating the shrinking
rules in between, because unrestricted AC rules grow the e-graph ~30x per
iteration.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from egraft.rewrite.engine import names
from egraft.rewrite.engine.egraph import EGraph

StopReason = Literal["saturated", "rounds", "iterations", "enodes", "seconds"]

#: Called after every step with egglog's table sizes; returns how many facts it added.
Between = Callable[[dict[str, int]], int]


@dataclass(frozen=True)
class Phase:
    """Run ``rulesets`` together: to a fixpoint (``saturate``) or for ``iterations`` iterations.

    With ``match_limit`` set the iterations run under egglog's back-off scheduler: a rule
    with more matches than the limit is banned for ``ban_length`` iterations (both
    doubling on each ban), which is what keeps AC rules from exploding.
    """

    rulesets: tuple[str, ...]
    saturate: bool = False
    iterations: int = 1
    match_limit: int | None = None
    ban_length: int = 5


@dataclass(frozen=True)
class Schedule:
    """Phases run in order, the sequence repeated up to ``rounds`` times or until nothing changes."""

    phases: tuple[Phase, ...]
    rounds: int = 1


@dataclass(frozen=True)
class Budget:
    """Limits checked between egglog calls; None means unlimited.

    ``reserve(enodes)`` is the time to keep free after saturation for what follows it
    (export, extraction, write-back), given the e-graph's size: a step is only started
    if it and the reserve fit in ``max_seconds``."""

    max_iterations: int | None = None
    max_enodes: int | None = None
    max_seconds: float | None = None
    reserve: Callable[[int], float] | None = None


@dataclass
class RuleStats:
    """What one egglog rule did in a :func:`saturate` call.

    ``matches`` are the matches egglog's search found (those of a rule the back-off
    scheduler banned included), ``applications`` the matches whose actions ran. egglog 13.2
    counts both per rule, but its per-rule times come back zero and it counts no e-nodes per
    rule, so those two are measured per step (one egglog call) and shared among the rules that
    found matches in it: the step's wall time in proportion to the matches each found, the
    e-nodes the step added in proportion to the applications. ``steps`` counts the steps in
    which the rule found matches, ``alone`` those in which no other rule did: where they are
    equal, ``seconds`` and ``enodes_added`` are the rule's own, not a share. E-nodes are
    counted net: a union that makes two e-nodes congruent leaves one, so a rule that only
    merges classes (x * 1 → x) can have a negative count.
    """

    matches: int = 0
    applications: int = 0
    enodes_added: float = 0.0
    seconds: float = 0.0
    steps: int = 0
    alone: int = 0


@dataclass
class SaturationReport:
    """What a :func:`saturate` call did and why it stopped.

    ``saturated`` means every phase has run a step that changed nothing and banned
    no rule, with no change anywhere since: every rule was tried and found nothing new. ``matches`` counts applied matches per
    rule name; ``banned`` names rules the back-off scheduler skipped at least once;
    ``rules`` holds every egglog rule of the e-graph's rulesets (those that never fired with
    zero counts) with its :class:`RuleStats`.
    """

    stop: StopReason = "rounds"
    iterations: int = 0
    rounds: int = 0
    enodes: int = 0
    seconds: float = 0.0
    matches: Counter[str] = field(default_factory=Counter)
    banned: set[str] = field(default_factory=set)
    enode_trace: list[int] = field(default_factory=list)
    rules: dict[str, RuleStats] = field(default_factory=dict)

    @property
    def saturated(self) -> bool:
        return self.stop == "saturated"


def phased(simplify: str, expand: str, rounds: int = 6, match_limit: int = 20_000) -> Schedule:
    """The shrink-then-expand schedule: ``saturate(simplify)`` then one back-off step of ``expand``."""
    return Schedule((Phase((simplify,), saturate=True),
                     Phase((expand,), match_limit=match_limit)), rounds=rounds)


class _Driver:
    def __init__(self, eg: EGraph, budget: Budget, between: Between | None = None) -> None:
        self.eg, self.budget, self.between = eg, budget, between
        self.report = SaturationReport(rules={name: RuleStats() for names_ in eg.rulesets.values()
                                              for name in names_})
        self.start = time.perf_counter()
        self.last_step: dict[int, float] = {}  # phase -> seconds its last step took: the next one's estimate
        self.combined: dict[tuple[str, ...], str] = {}
        self.shifts: dict[int, int] = {}  # phase index -> times its rules were banned
        self.quiet: set[int] = set()
        self.before = 0  # e-nodes when the next step starts, what oracles added since the last one included

    def ruleset_for(self, rulesets: tuple[str, ...]) -> str:
        """egglog name of the union of ``rulesets`` (declared once, as a combined ruleset)."""
        for rs in rulesets:
            if rs not in self.eg.rulesets:
                raise KeyError(f"unknown ruleset {rs!r}; known: {sorted(self.eg.rulesets)}")
        if len(rulesets) == 1:
            return names.ruleset(rulesets[0])
        name = self.combined.get(rulesets)
        if name is None:
            name = names.ruleset("+".join(rulesets))
            members = " ".join(names.ruleset(r) for r in rulesets)
            self.eg.run_commands([f"(unstable-combined-ruleset {name} {members})"])
            self.combined[rulesets] = name
        return name

    def step(self, index: int, phase: Phase, count: int) -> tuple[bool, bool]:
        """Run ``count`` iterations of ``phase`` in one egglog call.

        Returns (the e-graph changed, some rule was banned). egglog's back-off state
        lives only inside one call, so the ban count is kept here instead: after a
        call that banned a rule, the next call of this phase doubles the limit.
        """
        rs = self.ruleset_for(phase.rulesets)
        if phase.match_limit is None:
            sched = f"(repeat {count} (run {rs}))"
        else:
            limit = phase.match_limit << self.shifts.get(index, 0)
            sched = (f"(let-scheduler bo_ (back-off :match-limit {limit} "
                     f":ban-length {phase.ban_length})) (repeat {count} (run-with bo_ {rs}))")
        began = time.perf_counter()
        (out,) = self.eg.run_commands([f"(run-schedule {sched})"])
        run = out.report  # type: ignore[attr-defined]
        applied = run.num_matches_per_rule
        found: Counter[str] = Counter()
        for it in run.iterations:
            for name, reps in it.rule_set_report.rule_reports.items():
                found[name] += sum(rep.num_matches for rep in reps)
        banned = {name for name, n in found.items() if n} - applied.keys()
        if banned:
            self.shifts[index] = self.shifts.get(index, 0) + 1
            self.report.banned.update(banned)
        self.report.iterations += len(run.iterations)
        self.report.matches.update(applied)
        sizes = self.eg.table_sizes()
        before, self.report.enodes = self.before, self.eg.enode_count(sizes)
        self.report.enode_trace.append(self.report.enodes)
        self.last_step[index] = time.perf_counter() - began
        self.share(found, applied, self.last_step[index], self.report.enodes - before)
        changed = any(it.rule_set_report.changed for it in run.iterations)
        self.before = self.report.enodes
        if self.between is not None and self.between(sizes):
            changed = True
            self.before = self.eg.enode_count()  # what the answers added is no rule's
        return changed, bool(banned)

    def share(self, found: Counter[str], applied: dict[str, int], seconds: float, added: int) -> None:
        """Add one step's counts to the rules' stats, its time and growth shared (see :class:`RuleStats`)."""
        stats = self.report.rules
        matched = {name: n for name, n in found.items() if n}
        total_found, total_applied = sum(matched.values()), sum(applied.values())
        for name, n in matched.items():
            s = stats.setdefault(name, RuleStats())
            s.matches += n
            s.applications += applied.get(name, 0)
            s.steps += 1
            s.alone += len(matched) == 1
            s.seconds += seconds * n / total_found
            if total_applied:
                s.enodes_added += added * applied.get(name, 0) / total_applied

    def over_budget(self, index: int) -> StopReason | None:
        """Why no step of phase ``index`` may start: a budget reached, or a step (as long as
        the phase's last one, or any phase's longest when it has not run) that would end
        past the time budget with the reserve kept."""
        b, r = self.budget, self.report
        if b.max_seconds is not None:
            step = self.last_step.get(index, max(self.last_step.values(), default=0.0))
            keep = b.reserve(r.enodes) if b.reserve is not None else 0.0
            if time.perf_counter() - self.start + step + keep >= b.max_seconds:
                return "seconds"
        if b.max_enodes is not None and r.enodes >= b.max_enodes:
            return "enodes"
        if b.max_iterations is not None and r.iterations >= b.max_iterations:
            return "iterations"
        return None

    def remaining_iterations(self, wanted: int) -> int:
        if self.budget.max_iterations is None:
            return wanted
        return max(0, min(wanted, self.budget.max_iterations - self.report.iterations))

    def run_phase(self, index: int, phase: Phase, n_phases: int) -> StopReason | None:
        """Run one phase; returns why the whole run must stop, or None to go on.

        ``quiet`` holds the phases whose last step changed nothing and banned nothing,
        with no change anywhere since; once it holds every phase, no rule can fire.
        """
        while True:
            stop = self.over_budget(index)
            if stop is not None:
                return stop
            count = self.remaining_iterations(1 if phase.saturate else phase.iterations)
            changed, banned = self.step(index, phase, count)
            if changed or banned:
                self.quiet.clear()
            if not changed and not banned:
                self.quiet.add(index)
            if len(self.quiet) == n_phases:
                return "saturated"
            if not phase.saturate or not changed:
                return None

    def run(self, schedule: Schedule) -> SaturationReport:
        self.report.enodes = self.before = self.eg.enode_count()
        stop: StopReason | None = None
        while stop is None and self.report.rounds < schedule.rounds:
            self.report.rounds += 1
            for index, phase in enumerate(schedule.phases):
                stop = self.run_phase(index, phase, len(schedule.phases))
                if stop is not None:
                    break
        self.report.stop = stop or "rounds"
        self.report.seconds = time.perf_counter() - self.start
        return self.report


def saturate(eg: EGraph, schedule: Schedule, budget: Budget = Budget(),
             between: Between | None = None) -> SaturationReport:
    """Run ``schedule`` on ``eg`` until it saturates, runs out of rounds, or hits a budget
    (``between``: see the module doc)."""
    return _Driver(eg, budget, between).run(schedule)
