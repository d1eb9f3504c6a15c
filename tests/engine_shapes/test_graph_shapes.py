"""The shape generator itself: what it draws is valid input, seeded runs repeat, sizes follow the request.

A generator bug would otherwise show up as a driver failure; these pin it down first."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import parse, verify
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.ir.semantics.interpreter import execute
from egraft.ir.semantics.values import Undefined

from tests.strategies.graph_shapes import FAMILIES, broadcast, generate, programs


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_programs_verify_and_run(data: st.DataObject) -> None:
    program = data.draw(programs(max_ops=150), label="program")
    module = parse(program.text)
    verify(module)
    inputs = data.draw(values_for_types(argument_types(module), special_floats=True), label="inputs")
    try:
        results = execute(module, inputs).results  # Unsupported (an op without semantics) fails
    except Undefined:
        return
    assert results, "every function returns something"


@pytest.mark.parametrize("family", FAMILIES)
def test_generate_is_seeded_and_sized(family: str) -> None:
    a, b = generate(family, 2000, seed=3), generate(family, 2000, seed=3)
    assert a.text == b.text
    assert 2000 <= a.ops < 2400, a.ops
    assert generate(family, 2000, seed=4).text != a.text
    verify(parse(a.text))


def test_broadcast() -> None:
    assert broadcast((2, 3), (3,)) == (2, 3)
    assert broadcast((2, 1), (1, 3)) == (2, 3)
    assert broadcast((), (4,)) == (4,)
    assert broadcast((3,), (4,)) is None
