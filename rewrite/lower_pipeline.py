"""The whole round trip on one op: lower → load → saturate → extract → write back.

Passes (``passes/transforms/eqsat.py``), tests and the benchmark share this one function so that
they measure and check the same thing; each step's time is reported.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from egraft.ir import REGISTRY, Operation

from egraft.rewrite.rules.compile import NESTED_RULESET
from egraft.rewrite.encoding.chains import extract_on_chains
from egraft.rewrite.encoding.cost_models import IRCost
from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.encoding.schema import shape_of
from egraft.rewrite.engine.export import EGraphArrays, export
from egraft.rewrite.engine.extract import CostModel, root_classes
from egraft.rewrite.engine.load import load_table
from egraft.rewrite.encoding.lower import lower
from egraft.rewrite.rules.oracles import load_value_types, saturate_with_oracles
from egraft.rewrite.engine.termtable import Schema
from egraft.rewrite.engine.saturate import Budget, Phase, SaturationReport, Schedule
from egraft.rewrite.encoding.writeback import WriteBackStats, write_back


#: Matches one nested-pattern rule may apply in one iteration before egglog's back-off
#: scheduler bans it for a while: it bounds what one egglog call can do, so a time budget
#: is not overshot by one runaway iteration. Far above what those rules need per iteration
#: (under 10k on the 100k-op chain); a banned rule comes back with twice the limit.
STEP_MATCH_LIMIT = 200_000

#: Rounds of a schedule that only budgets and saturation end.
UNLIMITED_ROUNDS = 1 << 30

#: What a time budget keeps for export, extraction and write-back, per (e-node + lowered
#: node): the smaller of TAIL_PER_NODE times lowering's time per lowered node and
#: TAIL_PER_LOADED_NODE times loading's, and at least TAIL_FLOOR seconds. Both calibrate
#: the machine of the moment (a loaded machine is slow at everything); each alone is an
#: upper bound on every input measured (tail / rate: lowering 0.44-3.6, loading 0.24-2.1,
#: from a 100k-op function whose ops all fold away to a 100k-op chain and Keras models),
#: and each overestimates different inputs (big constants slow lowering, many small ops
#: loading), so the smaller is kept. docs/engine.md, "Budgets".
TAIL_PER_NODE = 5.0
TAIL_PER_LOADED_NODE = 2.5
TAIL_FLOOR = 0.1

#: Lowering takes up to this long per op on an idle machine (measured 24-28 µs on 10k-100k-op
#: chains, up to 100 µs on Keras models with their constants), times the machine's contention
#: (load average per core, at least 1): when it would not fit, nothing is lowered. Timing a
#: walk of the ops instead was no guide: its ratio to lowering ranged 20-150 under load.
LOWER_SECONDS_PER_OP = 40e-6

#: Loading into egglog takes about this many times as long as lowering (measured 2.1-3.2 at
#: 10k-100k ops, plus ~0.4 s of rule compiling): when it would not fit, nothing is loaded.
LOAD_PER_LOWER = 4.0


@dataclass
class RoundTrip:
    """What one round trip did: the saturation report, e-graph sizes, step times."""

    report: SaturationReport | None
    ops_in: int
    enodes: int
    eclasses: int
    cost: float
    writeback: WriteBackStats
    seconds: dict[str, float] = field(default_factory=dict)
    egraph: EGraphArrays | None = None      # the exported e-graph (for pictures)
    choice: np.ndarray | None = None        # the extracted e-node per class
    roots: list[int] = field(default_factory=list)  # root e-classes (the root op's regions)
    schema: Schema | None = None
    written: bool = True                    # False: the time budget ran out first, the IR is as it was


def default_schedule(rulesets: Sequence[str], rounds: int = 3) -> Schedule:
    """Saturate every ruleset except "expand", which gets one back-off step per round.

    Without "expand", the joins of nested patterns (``compile_rules.NESTED_RULESET``) get
    one iteration per round between saturations of the other rules, for as many rounds
    as it takes (the budgets bound them): cascades of cheap rewrites along a long chain
    take one iteration per link, and each iteration of the nested joins costs a scan of
    their op tables."""
    nested = NESTED_RULESET if NESTED_RULESET in rulesets and "expand" not in rulesets else None
    shrink = tuple(r for r in rulesets if r not in ("expand", nested))
    phases = [Phase(shrink, saturate=True)] if shrink else []
    if nested is not None:
        phases.append(Phase((nested,), match_limit=STEP_MATCH_LIMIT))
        rounds = UNLIMITED_ROUNDS
    if "expand" in rulesets:
        phases.append(Phase(("expand",), match_limit=20_000))
    return Schedule(tuple(phases), rounds=rounds)


def _late(start: float, budget: Budget, ahead: float = 0.0) -> bool:
    """Whether the time budget is spent, or would be by work estimated to take ``ahead`` seconds."""
    return budget.max_seconds is not None and time.perf_counter() - start + ahead >= budget.max_seconds


def _unchanged(ops_in: int, times: dict[str, float], report: SaturationReport | None = None) -> RoundTrip:
    """The round trip abandoned for time before anything was rewritten: nothing is written back."""
    report = report or SaturationReport(stop="seconds")
    return RoundTrip(report, ops_in, report.enodes, 0, float("nan"), WriteBackStats(), times, written=False)


def optimize(op: Operation, schedule: Schedule | None = None,
             budget: Budget = Budget(), cost: CostModel | None = None,
             prepare: Callable[[EGraph], None] | None = None) -> RoundTrip:
    """Rewrite the regions of ``op`` in place with the rules ``prepare(eg)`` compiles into the
    e-graph (``rewrite/rules/compile.py``: rules need the e-graph's schema to compile); without
    ``prepare``, the identity round trip.

    ``budget.max_seconds`` is the wall time of the whole round trip: saturation stops early
    enough to leave time for export, extraction and write-back (``TAIL_PER_NODE``), and what
    it found by then is extracted and written back. When not even one saturation step
    fits, or lowering and loading alone used the time, the IR is left as it was
    (``RoundTrip.written`` is False; the report's stop is "seconds").
    """
    times: dict[str, float] = {}
    t0 = start = time.perf_counter()
    if budget.max_seconds is not None:
        ops = sum(1 for _ in op.walk())
        contention = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
        if _late(start, budget, LOWER_SECONDS_PER_OP * ops * contention):
            return _unchanged(ops, times)
    low = lower(op)
    times["lower"] = time.perf_counter() - t0
    nodes = max(len(low.table), 1)
    per_node = [TAIL_PER_NODE * times["lower"] / nodes]  # the loading estimate joins it once known

    def tail(enodes: int) -> float:
        return max(TAIL_FLOOR, min(per_node) * (enodes + nodes))

    if _late(start, budget, LOAD_PER_LOWER * times["lower"] + tail(len(low.table))):
        return _unchanged(len(low.ops), times)
    t0 = time.perf_counter()
    eg = EGraph(low.schema)
    if prepare is not None:
        prepare(eg)
    # Ops that rules build but the input lacks: the write-back needs their shapes too.
    low.shapes.update({n: shape_of(d) for n in eg.schema.ops
                       if n not in low.shapes and (d := REGISTRY.lookup(n)) is not None})
    loaded = load_table(eg, low.table)
    load_value_types(eg, low, loaded)  # the types that checks and natives ask about
    times["load"] = time.perf_counter() - t0
    per_node.append(TAIL_PER_LOADED_NODE * times["load"] / nodes)
    report = None
    if eg.rulesets:
        t0 = time.perf_counter()
        left = Budget(budget.max_iterations, budget.max_enodes,
                      None if budget.max_seconds is None else budget.max_seconds - (t0 - start), tail)
        report = saturate_with_oracles(eg, schedule or default_schedule(sorted(eg.rulesets)), left)
        times["saturate"] = time.perf_counter() - t0
        if report.iterations == 0 and report.stop == "seconds":
            return _unchanged(len(low.ops), times, report)
    elif _late(start, budget, tail(len(low.table))):
        return _unchanged(len(low.ops), times)
    t0 = time.perf_counter()
    g = export(eg)
    times["export"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    roots = root_classes(g, [loaded.base + r for r in low.root_nodes])
    result = extract_on_chains(g, low.schema, roots, cost or IRCost())  # one op per chain position
    times["extract"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    stats = write_back(low, g, loaded.base, result.choice)
    times["writeback"] = time.perf_counter() - t0
    return RoundTrip(report, len(low.ops), g.n_nodes, g.n_classes, result.cost, stats, times, g, result.choice,
                     roots, low.schema)
