"""Every rewrite driver on generated graph shapes (issue #9, item 5a).

For each driver of `drivers.py` (canonicalize on the e-graph and greedy, eqsat and
apply-rules with each registered rule set, cse, dce), hypothesis draws a function from
`tests/strategies/graph_shapes.py` (chains, fan-out, diamonds, soups, redexes, shared
constants, casts, tf broadcasting, several blocks, several results) and checks: no
exception, within the pass's time budget, the output verifies and reparses, the
signature and returns are kept, and the interpreter agrees before and after.

Sizes stay modest here (up to ~120 ops, a few examples per driver: the file runs in
about a minute on a loaded 2-core machine); `python bench/race/fuzz_shapes.py` runs the
same property at larger sizes and more examples.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from egraft.ir import parse
from egraft.ir.semantics.inputs import argument_types, values_for_types

from tests.strategies.graph_shapes import FAMILIES, programs

from .drivers import Driver, agrees, check_outputs_kept, drivers, reparsed, run_driver

MAX_OPS = 120
EXAMPLES = 6
INPUTS_PER_PROGRAM = 3
#: Families left out of a driver's draws while a bug found in them is open; each entry has a
#: strict-xfail regression test in test_regressions.py that starts passing (and so fails)
#: when the bug is fixed, which is the signal to delete the entry.
OPEN_BUGS: dict[str, dict[str, str]] = {
    "cfg": {"egraph": "S1: the e-graph drivers lower only a function's entry block "
                      "(test_regressions.py::test_multiblock_function)"},
}


def families_for(driver: Driver) -> tuple[str, ...]:
    return tuple(f for f in FAMILIES if driver.engine not in OPEN_BUGS.get(f, {}))


def check_driver(driver: Driver, data: st.DataObject, max_ops: int = MAX_OPS,
                 inputs_per_program: int = INPUTS_PER_PROGRAM) -> None:
    """The property for one drawn program (shared with bench/race/fuzz_shapes.py)."""
    program = data.draw(programs(families_for(driver), max_ops=max_ops), label="program")
    after, seconds = run_driver(driver, program.text)
    note(f"{driver} took {seconds:.2f} s")
    after = reparsed(after)
    before = parse(program.text)
    check_outputs_kept(before, after)
    types = argument_types(before)
    for _ in range(inputs_per_program):
        inputs = data.draw(values_for_types(types, special_floats=not driver.fast_math), label="inputs")
        agrees(driver, before, after, inputs)


@pytest.mark.parametrize("driver", drivers(), ids=str)
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large))
@given(data=st.data())
def test_driver_on_graph_shapes(driver: Driver, data: st.DataObject) -> None:
    check_driver(driver, data)
