"""Regression tests for the failures the graph-shape property found (/work/coord/shape-failures.md, S1...).

Each input is a minimal `.mlir` case in `cases/`; each test runs the driver that failed and
checks what the property checks (verifies, reparses, outputs kept, interpreter agrees).
A test marked `xfail(strict=True)` is a bug still open: it fails the suite once it passes,
so the mark and the matching OPEN_BUGS entry of test_drivers.py go when the fix lands.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import given, settings

from egraft.ir import parse
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.rewrite.egraph import EGraph

from .drivers import Driver, agrees, check_outputs_kept, reparsed, run_driver

CASES = Path(__file__).parent / "cases"


def check_case(case: str, pass_text: str, examples: int = 30) -> None:
    """The property on one fixed input: runs, verifies, reparses, keeps outputs, agrees."""
    driver = Driver(pass_text, fast_math="fast-math" in pass_text)
    text = (CASES / case).read_text()
    after, _ = run_driver(driver, text)
    after = reparsed(after)
    before = parse(text)
    check_outputs_kept(before, after)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True)
    @given(values_for_types(argument_types(before), special_floats=not driver.fast_math))
    def run(inputs: list) -> None:
        agrees(driver, before, after, inputs)

    run()


@pytest.mark.xfail(strict=True, reason="S1: e-graph drivers lower only the entry block; write-back drops "
                                       "values the other blocks use (rewrite/lower.py Lowering.region)")
@pytest.mark.parametrize("pass_text", ["canonicalize", "eqsat{rules=none}"])
def test_multiblock_function(pass_text: str) -> None:
    check_case("multiblock_branch.mlir", pass_text)


@pytest.mark.parametrize("pass_text", ["canonicalize{driver=greedy}", "cse", "dce",
                                       "apply-rules{rules=arith-canonical}"])
def test_multiblock_function_ir_drivers(pass_text: str) -> None:
    check_case("multiblock_branch.mlir", pass_text)


@pytest.mark.xfail(strict=True, reason="S2: rewrite/oracles.py keeps every EGraph alive (its WeakKeyDictionary's "
                                       "value, OracleTable, holds the key)")
def test_egraph_freed_after_pass() -> None:
    gc.collect()
    alive_before = sum(isinstance(o, EGraph) for o in gc.get_objects())
    run_driver(Driver("eqsat{rules=arith-canonical}"), (CASES / "sub_self_add.mlir").read_text())
    gc.collect()
    assert sum(isinstance(o, EGraph) for o in gc.get_objects()) == alive_before, "the pass's e-graph is still alive"
