"""Term tables validate what they store, and egglog names round-trip."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from egraft.rewrite.engine import names
from egraft.rewrite.engine.termtable import OpSig, Schema, TermTable, structural_ids

from tests.rewrite.arith_workload import arith_schema


def test_add_checks_children_sorts_and_payloads():
    schema = Schema(("Term", "Type"), [OpSig("T", result="Type"), OpSig("Cast", ("Term", "Type")),
                                       OpSig("C", payload="i64")])
    t = TermTable(schema)
    c, ty = t.add("C", payload=3), t.add("T")
    t.add("Cast", (c, ty))
    with pytest.raises(TypeError):
        t.add("Cast", (ty, c))
    with pytest.raises(IndexError):
        t.add("Cast", (c, 99))
    with pytest.raises(ValueError):
        t.add("Cast", (c,))
    with pytest.raises(TypeError):
        t.add("C", payload="3")
    with pytest.raises(OverflowError):
        t.add("C", payload=2**63)
    with pytest.raises(KeyError):
        t.add("Nope")


def test_structural_ids_identify_equal_terms_across_tables():
    a, b = TermTable(arith_schema()), TermTable(arith_schema())
    x = a.add("Var", payload="x")
    a.add("Add", (x, x))
    y = b.add("Var", payload="x")
    b.add("Const", payload=1)
    b.add("Add", (y, y))
    memo: dict = {}
    ida, idb = structural_ids(a, memo), structural_ids(b, memo)
    assert ida[1] == idb[2] and ida[0] == idb[0] and idb[1] not in ida


@given(st.text(min_size=1), st.none() | st.integers(0, 50))
def test_constructor_names_round_trip(op, arity):
    name = names.ctor(op, arity)
    assert names.parse_ctor(name) == op
    assert all(ch.isalnum() or ch == "_" for ch in name)
