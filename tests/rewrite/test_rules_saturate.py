"""Compiled rules fire; the saturation report and budgets tell the truth."""

import pytest

from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.engine.export import export
from egraft.rewrite.engine.extract import OpCost, extract, root_classes
from egraft.rewrite.engine.load import load_table
from egraft.rewrite.engine.saturate import Budget, Phase, Schedule, phased, saturate
from egraft.rewrite.engine.termtable import TermTable

from tests.rewrite.arith_workload import EXPAND, SIMPLIFY, add_arith_rules, arith_schema

SIMPLIFY_ONLY = Schedule((Phase((SIMPLIFY,), saturate=True),))


def engine(table: TermTable, rules=None) -> tuple[EGraph, int]:
    eg = EGraph(table.schema)
    if rules is None:
        add_arith_rules(eg)
    else:
        add_arith_rules(eg, rules)
    return eg, load_table(eg, table).base


def chain(n: int) -> TermTable:
    """((x*1 + 0) - 0) ... n deep, plus a foldable constant and x - x."""
    t = TermTable(arith_schema())
    x, one, zero = t.add("Var", payload="x"), t.add("Const", payload=1), t.add("Const", payload=0)
    e = x
    for _ in range(n):
        e = t.add("Sub", (t.add("Add", (t.add("Mul", (e, one)), zero)), zero))
    t.add_root(e)
    t.add_root(t.add("Add", (t.add("Const", payload=2), t.add("Const", payload=3))))
    t.add_root(t.add("Sub", (e, e)))
    return t


def sum_chain(n: int) -> TermTable:
    """v0 + v1 + ... + vn, left-nested: commutativity and associativity blow it up."""
    t = TermTable(arith_schema())
    e = t.add("Var", payload="v0")
    for i in range(1, n + 1):
        e = t.add("Add", (e, t.add("Var", payload=f"v{i}")))
    t.add_root(e)
    return t


def extracted_roots(eg: EGraph, table: TermTable, base: int) -> list[tuple]:
    g = export(eg)
    out = extract(g, table.schema, root_classes(g, [base + r for r in table.roots]), OpCost({})).table
    return [(out.op(r), out.payloads[r]) for r in out.roots]


def test_simplify_rules_fire_and_the_report_counts_them():
    t = chain(3)
    eg, base = engine(t)
    report = saturate(eg, SIMPLIFY_ONLY)
    assert report.saturated and report.stop == "saturated"
    # egglog counts matches per iteration, and a merge can make a redex match again
    assert all(report.matches[r] >= 3 for r in ("mul-one", "add-zero", "sub-zero"))
    assert report.matches["fold-add"] == 1
    assert report.matches["add-comm"] == 0
    assert extracted_roots(eg, t, base) == [("Var", "x"), ("Const", 5), ("Const", 0)]
    assert report.enodes == eg.enode_count() and report.iterations >= 2


def test_constant_folding_overflow_does_not_match_or_panic():
    t = TermTable(arith_schema())
    big = t.add("Const", payload=2**62)
    t.add_root(t.add("Mul", (big, t.add("Const", payload=4))))
    t.add_root(t.add("Neg", (t.add("Const", payload=-(2**63)),)))
    eg, base = engine(t)
    report = saturate(eg, SIMPLIFY_ONLY)
    assert report.saturated and report.matches["fold-mul"] == 0
    assert [op for op, _ in extracted_roots(eg, t, base)] == ["Mul", "Neg"]


def test_budgets_stop_the_run_and_say_which():
    t = sum_chain(10)
    grow = phased(SIMPLIFY, EXPAND, rounds=50, match_limit=10**9)
    for budget, reason in [(Budget(max_iterations=3), "iterations"),
                           (Budget(max_enodes=200), "enodes"),
                           (Budget(max_seconds=0.0), "seconds")]:
        eg, _ = engine(t)
        report = saturate(eg, grow, budget)
        assert report.stop == reason and not report.saturated
    eg, _ = engine(t)
    assert saturate(eg, grow, Budget(max_iterations=3)).iterations == 3


def test_rounds_run_out_before_ac_saturates():
    eg, _ = engine(sum_chain(8))
    report = saturate(eg, phased(SIMPLIFY, EXPAND, rounds=2))
    assert report.stop == "rounds" and report.rounds == 2 and report.matches["add-comm"] > 0


def test_back_off_bans_are_reported_and_block_saturation_claims():
    eg, _ = engine(sum_chain(10))
    report = saturate(eg, Schedule((Phase((EXPAND,), match_limit=1),), rounds=1))
    assert report.banned and report.stop == "rounds"


def test_rulesets_are_declared_once_and_schedules_name_only_declared_ones():
    eg = EGraph(arith_schema())
    assert eg.ruleset_commands("r") == ["(ruleset RS_r)"] and eg.ruleset_commands("r") == []
    add_arith_rules(eg)
    with pytest.raises(KeyError, match=r"unknown ruleset 'r2'.*'expand', 'r', 'simplify'"):
        saturate(eg, Schedule((Phase(("r2",)),)))


def test_guards_and_payload_bindings_compile_and_fire():
    rule = ("sub-const-pos", "s", "(Sub (Const ?a) (Const ?b))", "(Const ?c)", ("(> ?a ?b)", "(= ?c (- ?a ?b))"))
    t = TermTable(arith_schema())
    t.add_root(t.add("Sub", (t.add("Const", payload=7), t.add("Const", payload=2))))
    t.add_root(t.add("Sub", (t.add("Const", payload=2), t.add("Const", payload=7))))
    eg, base = engine(t, [rule])
    report = saturate(eg, Schedule((Phase(("s",), saturate=True),)))
    assert report.matches["sub-const-pos"] == 1
    assert extracted_roots(eg, t, base) == [("Const", 5), ("Sub", None)]
