"""The e-graph passes' budgets: each one stops saturation, the report names it, what was found
is written back (the program still computes the same), and a time budget too short for
anything leaves the IR as it was. No timing is asserted here (bench/race/chain_race.py
measures how close a pass ends to its time budget)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

from egraft.ir import parse, print_ir
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.ir.semantics import check_agreement
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.encoding.schema import new_schema
from egraft.rewrite.engine.saturate import Budget, Phase, Schedule, saturate

sys.path.insert(0, str(Path(__file__).parents[2] / "bench" / "race"))
from gen_arith_chain import generate  # noqa: E402

CHAIN = generate(300, seed=3)


def run(text: str, pipeline: str) -> tuple[object, list[str]]:
    remarks: list[str] = []
    module = parse(text)
    PassManager(parse_pipeline(pipeline), emit=lambda d: remarks.append(d.message)).run(module)
    return module, remarks


def agrees(before_text: str, after: object) -> None:
    before = parse(before_text)

    @settings(max_examples=10, deadline=None, database=None)
    @given(values_for_types(argument_types(before)))
    def check(inputs: list) -> None:
        check_agreement(before, after, inputs, exact=True, tol=None)

    check()


@pytest.mark.parametrize("option, stop", [("egraph-iterations=3", "stop=iterations (budget egraph-iterations=3)"),
                                          ("max-enodes=10", "stop=enodes (budget max-enodes=10)")])
def test_a_budget_stops_canonicalize_and_what_it_found_is_written_back(option: str, stop: str) -> None:
    after, remarks = run(CHAIN, f"builtin.module(func.func(canonicalize{{{option} report=true}}))")
    assert any(stop in r for r in remarks), remarks
    agrees(CHAIN, after)
    full, _ = run(CHAIN, "builtin.module(func.func(canonicalize))")
    ops = lambda m: sum(1 for _ in m.walk())  # noqa: E731
    assert ops(full) <= ops(after) < ops(parse(CHAIN)), "a stopped run still rewrites, a full one at least as much"


def test_eqsat_reports_the_budget_that_stopped_it() -> None:
    after, remarks = run(CHAIN, "builtin.module(func.func(eqsat{rules=arith-canonical max-iterations=2 report=-}))")
    assert any("stop=iterations (budget max-iterations=2)" in r for r in remarks), remarks
    agrees(CHAIN, after)


@pytest.mark.parametrize("pass_text", ["canonicalize{timeout=0.000001 report=true}",
                                       "eqsat{rules=arith-canonical timeout=0.000001 report=-}"])
def test_no_time_for_a_step_leaves_the_ir_as_it_was(pass_text: str) -> None:
    after, remarks = run(CHAIN, f"builtin.module(func.func({pass_text}))")
    assert print_ir(after) == print_ir(parse(CHAIN))
    assert any("stop=seconds (budget timeout=1e-06 s), nothing written back" in r for r in remarks), remarks


def test_default_budgets_are_set() -> None:
    from egraft.passes.transforms.canonicalize import Canonicalize
    from egraft.passes.transforms.eqsat import EqSat
    from egraft.passes.manager.limits import DEFAULT_MAX_ENODES, DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT

    for p in (Canonicalize(), EqSat()):
        assert p.max_enodes == DEFAULT_MAX_ENODES and p.timeout == DEFAULT_TIMEOUT
    assert Canonicalize().egraph_iterations == EqSat().max_iterations == DEFAULT_MAX_ITERATIONS


def test_saturation_keeps_the_reserve_free() -> None:
    """A step is not started when it and the reserve would not fit in the time budget."""
    eg = EGraph(new_schema())
    eg.rulesets["r"] = []
    eg.run_commands(["(ruleset RS_r)"])
    schedule = Schedule((Phase(("r",), saturate=True),))
    assert saturate(eg, schedule, Budget(max_seconds=10.0, reserve=lambda enodes: 20.0)).stop == "seconds"
    report = saturate(eg, schedule, Budget(max_seconds=10.0, reserve=lambda enodes: 0.0))
    assert report.stop == "saturated" and report.iterations == 1
