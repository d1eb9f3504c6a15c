"""The greedy rewrite driver: MLIR's `applyPatternsGreedily` over the IR, no e-graph.

It runs the same rule values the e-graph engine compiles, so small passes
need no e-graph and users can compare the two engines on one rule set.

Semantics (as MLIR's driver, region simplification off):

* every op nested in the given op is put on a worklist, in pre-order so
  that ops are visited top-down;
* each popped op is erased if trivially dead (results unused, no effects:
  `ir/effects.py`, nested ops of a RecursiveMemoryEffects op included),
  else folded if a folder is registered (`greedy_fold.register_folder`),
  else the rules rooted at its name are tried in decreasing benefit (ties:
  declaration order); the first that applies wins;
* a change re-queues the new ops, the users of the new values and the
  producers of the operands of erased ops (they may now be dead or match);
* when the worklist is empty the whole op is scanned again, up to
  `max_iterations` scans; a scan that changes nothing means convergence;
  `max_num_rewrites` caps the number of rewrites (rules and folds);
* unlike MLIR, a scan also ends after `SCAN_REWRITES_PER_OP` rewrites per op it
  started with (at least `MIN_SCAN_REWRITES`): rules that undo each other, or a
  commutative rule re-matching its own result, would otherwise never empty the
  worklist, and every input must finish; such a run ends unconverged after
  `max_iterations` scans, which `test-convergence` reports.

Rules are indexed by root op name, so an op costs one dict lookup when no
rule can apply: the driver is linear in the IR plus the matching work.
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from typing import Iterable

import attrs

from egraft.ir import Builder, Operation
from egraft.ir.effects import is_trivially_dead
from egraft.patterns.rule import Rule

from egraft.rewrite.greedy.build import apply_match
from egraft.rewrite.greedy.fold import fold
from egraft.rewrite.greedy.match import Matcher

NO_LIMIT = -1
SCAN_REWRITES_PER_OP = 20
MIN_SCAN_REWRITES = 1000


@attrs.frozen
class GreedyConfig:
    """Knobs of the driver, named as MLIR's GreedyRewriteConfig (-1: no limit)."""

    max_iterations: int = 10
    max_num_rewrites: int = NO_LIMIT
    fold: bool = True
    erase_dead: bool = True


@attrs.define
class GreedyRuleStats:
    """What one rule did in a run: the ops it was tried on (those of its root op's name), the
    matches found there, applications (matches whose result was built; a build may refuse),
    ops its results added, and the wall time spent matching and building it (measured around
    each try, so exact per rule)."""

    tries: int = 0
    matches: int = 0
    applications: int = 0
    ops_added: int = 0
    seconds: float = 0.0


@attrs.define
class GreedyReport:
    """What a run did: why it stopped, how often each rule fired, how many scans it took.
    ``rules`` holds every rule of the run, those that never fired with zero counts."""

    converged: bool = False
    stop: str = ""  # "converged", "max-iterations" or "max-num-rewrites"
    iterations: int = 0
    rewrites: Counter = attrs.field(factory=Counter)
    folds: int = 0
    erased: int = 0
    visited: int = 0
    seconds: float = 0.0
    rules: dict[str, GreedyRuleStats] = attrs.field(factory=dict)

    @property
    def total_rewrites(self) -> int:
        return sum(self.rewrites.values()) + self.folds

    def summary(self) -> str:
        """A few lines for remarks and logs."""
        head = (f"{'converged' if self.converged else 'did not converge'} ({self.stop}) after "
                f"{self.iterations} iteration(s): {sum(self.rewrites.values())} rewrite(s), {self.folds} fold(s), "
                f"{self.erased} dead op(s) erased, {self.visited} op visit(s), {self.seconds:.3f}s")
        fired = sorted(((n, s) for n, s in self.rules.items() if s.applications),
                       key=lambda ns: (-ns[1].applications, ns[0]))
        lines = [head] + [f"  {n}: {s.applications} rewrite(s), {s.matches} match(es), {s.ops_added} op(s) added, "
                          f"{s.seconds * 1000:.1f} ms" for n, s in fired]
        return "\n".join(lines)


class _Worklist:
    """A LIFO of ops with O(1) membership, skipping ops erased meanwhile."""

    def __init__(self) -> None:
        self.stack: list[Operation] = []
        self.members: set[Operation] = set()

    def push(self, op: Operation) -> None:
        if op not in self.members:
            self.members.add(op)
            self.stack.append(op)

    def pop(self) -> Operation | None:
        while self.stack:
            op = self.stack.pop()
            self.members.discard(op)
            if op.parent is not None:
                return op
        return None


class GreedyDriver:
    """Applies rules to every op nested in one op until nothing changes or a limit is hit."""

    def __init__(self, rules: Iterable[Rule], config: GreedyConfig = GreedyConfig()) -> None:
        self.config = config
        ordered = sorted(enumerate(rules), key=lambda ir: (-ir[1].benefit, ir[0]))
        self.by_root: dict[str, list[tuple[Rule, Matcher]]] = {}
        self.names = [r.name for _, r in ordered]
        for _, r in ordered:
            self.by_root.setdefault(r.root.name, []).append((r, Matcher(r)))

    def run(self, top: Operation) -> GreedyReport:
        """Rewrite the ops nested in `top`.  The cyclic garbage collector is paused
        meanwhile: matching allocates millions of short-lived dicts and generators,
        and each collection would walk the whole (cyclic) IR of a large function."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run(top)
        finally:
            if enabled:
                gc.enable()

    def _run(self, top: Operation) -> GreedyReport:
        report = GreedyReport(rules={name: GreedyRuleStats() for name in self.names})
        start = time.perf_counter()
        limit = self.config.max_num_rewrites
        report.stop = "max-iterations"
        while report.iterations < self.config.max_iterations:
            report.iterations += 1
            worklist = _Worklist()
            ops = [op for region in top.regions for block in region.blocks for first in block
                   for op in first.walk()]
            for op in reversed(ops):
                worklist.push(op)
            scan_limit = report.total_rewrites + max(MIN_SCAN_REWRITES, SCAN_REWRITES_PER_OP * len(ops))
            if limit != NO_LIMIT:
                scan_limit = min(scan_limit, limit)
            changed = self._drain(worklist, report, scan_limit)
            if limit != NO_LIMIT and report.total_rewrites >= limit:
                report.stop = "max-num-rewrites"
                break
            if not changed:
                report.converged, report.stop = True, "converged"
                break
        report.seconds = time.perf_counter() - start
        return report

    def _drain(self, worklist: _Worklist, report: GreedyReport, limit: int) -> bool:
        """Empty the worklist, or stop once the run's rewrites reach `limit`; whether anything changed."""
        changed = False
        by_root = self.by_root
        while (op := worklist.pop()) is not None:
            report.visited += 1
            if self.config.erase_dead and is_trivially_dead(op):
                self._erase(op, worklist)
                report.erased += 1
                changed = True
                continue
            if self.config.fold and self._fold(op, worklist):
                report.folds += 1
                changed = True
            else:
                candidates = by_root.get(op.name)
                if not candidates or not self._rewrite(op, candidates, worklist, report):
                    continue
                changed = True
            if report.total_rewrites >= limit:
                break
        return changed

    def _rewrite(self, op: Operation, candidates: list[tuple[Rule, Matcher]], worklist: _Worklist,
                 report: GreedyReport) -> bool:
        for rule, matcher in candidates:
            stats, began = report.rules[rule.name], time.perf_counter()
            stats.tries += 1
            for match in matcher.matches(op):
                stats.matches += 1
                producers = [v.owner for m in match.ops for v in m.operands if hasattr(v, "owner")
                             and isinstance(v.owner, Operation)]
                new_ops = apply_match(rule, match)
                if new_ops is None:
                    continue
                report.rewrites[rule.name] += 1
                stats.applications += 1
                stats.ops_added += len(new_ops)
                for new in new_ops:
                    worklist.push(new)
                    for r in new.results:
                        for user in r.uses:
                            worklist.push(user)
                for m in match.ops:
                    if m.parent is not None:
                        worklist.push(m)
                for p in producers:
                    if p.parent is not None:
                        worklist.push(p)
                stats.seconds += time.perf_counter() - began
                return True
            stats.seconds += time.perf_counter() - began
        return False

    def _fold(self, op: Operation, worklist: _Worklist) -> bool:
        folded = fold(op)
        if folded is None:
            return False
        values, consts = folded
        builder = Builder.before_op(op)
        for c in consts:
            builder.insert(c)
            worklist.push(c)
        users = [u for r in op.results for u in r.uses]
        op.replace_all_uses_with(values)
        for u in users:
            worklist.push(u)
        self._erase(op, worklist)
        return True

    def _erase(self, op: Operation, worklist: _Worklist) -> None:
        producers = [v.owner for v in op.operands if isinstance(getattr(v, "owner", None), Operation)]
        op.erase()
        for p in producers:
            if p.parent is not None:
                worklist.push(p)


def apply_rules_greedily(top: Operation, rules: Iterable[Rule], config: GreedyConfig = GreedyConfig(),
                         **overrides: int | bool) -> GreedyReport:
    """Run the greedy driver over the ops nested in `top`; see the module docstring."""
    if overrides:
        config = attrs.evolve(config, **overrides)
    return GreedyDriver(rules, config).run(top)
