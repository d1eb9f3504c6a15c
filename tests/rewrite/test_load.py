"""Loading preserves the term DAG: load then extract with no rules gives back the same terms."""

from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.engine.export import export
from egraft.rewrite.engine.extract import OpCost, extract, root_classes
from egraft.rewrite.engine.load import load_table
from egraft.rewrite.engine.termtable import OpSig, Schema, TermTable, structural_ids

SCHEMA = Schema(("Term", "Type"), [
    OpSig("ty", payload="String", result="Type"),
    OpSig("tf.Const", ("Type",), payload="i64"),
    OpSig("tf.Fill", ("Type",), payload="f64"),
    OpSig("name", payload="String"),
    OpSig("tf.AddN", ("Term",), variadic=True),
    OpSig("tf.Cast", ("Term", "Type")),
])

payload_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)


@st.composite
def tables(draw) -> TermTable:
    """A random term DAG over SCHEMA, including strings TSV cannot carry and odd floats."""
    t = TermTable(SCHEMA)
    types = [t.add("ty", payload=draw(payload_text))]
    terms = [t.add("tf.Const", (types[0],), draw(st.integers(-(2**63), 2**63 - 1)))]
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["ty", "const", "fill", "name", "addn", "cast"]))
        if kind == "ty":
            types.append(t.add("ty", payload=draw(payload_text)))
        elif kind == "const":
            terms.append(t.add("tf.Const", (draw(st.sampled_from(types)),), draw(st.integers(-5, 5))))
        elif kind == "fill":
            terms.append(t.add("tf.Fill", (draw(st.sampled_from(types)),),
                               draw(st.floats(allow_nan=False))))
        elif kind == "name":
            terms.append(t.add("name", payload=draw(payload_text)))
        elif kind == "addn":
            kids = draw(st.lists(st.sampled_from(terms), max_size=4))
            terms.append(t.add("tf.AddN", kids))
        else:
            terms.append(t.add("tf.Cast", (draw(st.sampled_from(terms)), draw(st.sampled_from(types)))))
    for r in draw(st.lists(st.sampled_from(terms + types), min_size=1, max_size=4)):
        t.add_root(r)
    return t


def roundtrip(eg: EGraph, table: TermTable, base: int) -> TermTable:
    g = export(eg)
    return extract(g, table.schema, root_classes(g, [base + r for r in table.roots]), OpCost({})).table


def same_roots(a: TermTable, b: TermTable) -> bool:
    memo: dict = {}
    ia, ib = structural_ids(a, memo), structural_ids(b, memo)
    return [ia[r] for r in a.roots] == [ib[r] for r in b.roots]


@settings(max_examples=40, deadline=None)
@given(tables())
def test_load_then_extract_returns_the_same_terms(table):
    eg = EGraph(SCHEMA)
    loaded = load_table(eg, table)
    out = roundtrip(eg, table, loaded.base)
    assert same_roots(table, out)
    distinct = len(set(structural_ids(table, {})))
    assert eg.enode_count() == distinct


def test_strings_that_tsv_cannot_carry_fall_back_to_text():
    t = TermTable(SCHEMA)
    for s in ["plain", " lead", "tab\there", "nl\n", 'q"uote\\', ""]:
        t.add_root(t.add("name", payload=s))
    eg = EGraph(SCHEMA)
    loaded = load_table(eg, t)
    assert loaded.text_rows == 3 and loaded.tsv_rows == 3
    out = roundtrip(eg, t, loaded.base)
    assert [out.payloads[r] for r in out.roots] == [t.payloads[r] for r in t.roots]


def test_two_tables_share_one_egraph_and_hash_cons():
    a, b = TermTable(SCHEMA), TermTable(SCHEMA)
    for t in (a, b):
        t.add_root(t.add("tf.AddN", [t.add("name", payload="x"), t.add("name", payload="y")]))
    eg = EGraph(SCHEMA)
    la, lb = load_table(eg, a), load_table(eg, b)
    assert lb.base == la.base + len(a)
    g = export(eg)
    assert root_classes(g, [la.base + a.roots[0]]) == root_classes(g, [lb.base + b.roots[0]])
    assert eg.enode_count() == 3
