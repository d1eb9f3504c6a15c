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

import sys

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from egraft.ir import parse
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.ir.semantics import UnsoundRewrite
from egraft.patterns import RuleSet, op, rule, var

from tests.strategies.graph_shapes import F32, FAMILIES, I32, Choices, Motif, Program, Ty, build, programs

from .drivers import Driver, agrees, check_outputs_kept, drivers, random_inputs, reparsed, run_driver

MAX_OPS = 120
EXAMPLES = 2  # per driver and family: 53 pairs, about a minute of CPU in all
INPUTS_PER_PROGRAM = 2  # each: one input from the harness's strategy, one from random_inputs
#: (family, engine) pairs left out while a bug found there is open; each has a strict-xfail
#: regression test in test_regressions.py that starts passing (and so fails) when the bug is
#: fixed, which is the signal to delete the entry here.
OPEN_BUGS: dict[tuple[str, str], str] = {}


def driver_family_pairs() -> list[tuple[Driver, str]]:
    return [(d, f) for d in drivers() for f in FAMILIES if (f, d.engine) not in OPEN_BUGS]


def check_driver(driver: Driver, data: st.DataObject, shapes: st.SearchStrategy[Program],
                 inputs_per_program: int = INPUTS_PER_PROGRAM) -> None:
    """The property for one program drawn from `shapes` (shared with bench/race/fuzz_shapes.py)."""
    program = data.draw(shapes, label="program")
    after, seconds = run_driver(driver, program.text)
    note(f"{driver} took {seconds:.2f} s")
    after = reparsed(after)
    before = parse(program.text)
    check_outputs_kept(before, after)
    types = argument_types(before)
    for _ in range(inputs_per_program):
        inputs = data.draw(values_for_types(types, special_floats=not driver.fast_math), label="inputs")
        agrees(driver, before, after, inputs)
        agrees(driver, before, after, random_inputs(types, data.draw(st.integers(0, 2 ** 32 - 1), label="seed")))


@pytest.mark.parametrize("driver, family", driver_family_pairs(), ids=lambda v: str(v))
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large))
@given(data=st.data())
def test_driver_on_graph_shapes(driver: Driver, family: str, data: st.DataObject) -> None:
    check_driver(driver, data, programs((family,), max_ops=MAX_OPS))


#: Wrong rules the property must catch (it would pass vacuously otherwise), each with shapes where
#: it fires: an integer identity that is false; float reassociation, off in the last bits only (the
#: comparison must be exact, and the inputs must round); a tf rule that computes something else.
_x, _y, _z = var("x"), var("y"), var("z")


def _motif_programs(family: str, kind: str, ty: Ty) -> st.SearchStrategy[Program]:
    """Programs of one motif (a chain of i32, a soup of f32, ...): where a wrong rule surely fires."""
    return st.builds(lambda seed, n: build(Choices(seed), family, [[Motif(kind, ty, n)]]),
                     st.integers(0, 2 ** 32 - 1), st.integers(2, 40))


UNSOUND = {
    "subi-is-lhs": (rule("subi-is-lhs", op("arith.subi", _x, _y), _x), _motif_programs("arith", "chain", I32)),
    "addf-reassociate": (rule("addf-reassociate", op("arith.addf", op("arith.addf", _x, _y), _z),
                              op("arith.addf", _x, op("arith.addf", _y, _z))), _motif_programs("arith", "soup", F32)),
    "mul-is-add": (rule("mul-is-add", op("tf.Mul", _x, _y), op("tf.AddV2", _x, _y)),
                   _motif_programs("tf", "chain", Ty("f32", (2, 3)))),
}


@pytest.mark.parametrize("name, engine", [("subi-is-lhs", "apply-rules"), ("addf-reassociate", "apply-rules"),
                                          ("mul-is-add", "apply-rules"), ("subi-is-lhs", "eqsat")])
def test_property_catches_unsound_rules(name: str, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong, shapes = UNSOUND[name]
    registry = sys.modules["egraft.patterns.rule_sets"]._SETS  # (the package's `rule_sets` is the function)
    monkeypatch.setitem(registry, "test-unsound", RuleSet("test-unsound", (wrong,)))
    driver = Driver(f"{engine}{{rules=test-unsound}}")

    @settings(max_examples=30, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large))
    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        check_driver(driver, data, shapes)

    with pytest.raises(UnsoundRewrite):
        prop()
