"""Rule sets declare what running them needs (patterns/rule_sets.py), and the built-in ones
declare it truly: the e-graph compiler holds every rule a set gives both drivers and refuses
every rule it declares greedy-only; every structural step it names exists."""

from __future__ import annotations

import importlib

import pytest

from egraft.patterns import declaration, op, register_rule_set, rule, rule_set, rules_of, var
from egraft.rewrite.encoding.schema import new_schema
from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.rules.compile import compile_rules
from egraft.rewrite.structural import STEPS

rule_sets_module = importlib.import_module("egraft.patterns.rule_sets")  # (the package's `rule_sets` is a function)
BUILTIN = sorted(rule_sets_module._BUILTIN)


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_sets_declare_what_the_egraph_holds(name: str) -> None:
    found = rule_set(name)
    held = compile_rules(EGraph(new_schema()), declaration([name]).egraph_rules).skipped
    assert not held, f"{name}: rules the e-graph refuses but the set does not declare greedy-only: {held}"
    for r in found.greedy_rules:
        assert r.name in compile_rules(EGraph(new_schema()), [r]).skipped, f"{name}: {r.name} compiles"
    assert set(found.structural) <= set(STEPS), found.structural


def test_declaration_keeps_set_order_and_filters_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rule_sets_module, "_SETS", dict(rule_sets_module._SETS))  # the test's sets go after it
    x = var("x")
    a = rule("decl-a", op("tf.Neg", op("tf.Neg", x)), x)
    b = rule("decl-b", op("tf.Identity", x), x)
    c = rule("decl-c", op("tf.Identity", op("tf.Identity", x)), x)
    register_rule_set("test-decl-1", [a], greedy_rules=[b], structural=["affine-store-compose"])
    register_rule_set("test-decl-2", [c, a], structural=["tf-executor-canonical", "affine-store-compose"])
    both = declaration(["test-decl-1", "test-decl-2"])
    assert [r.name for r in both.rules] == ["decl-a", "decl-b", "decl-c"]
    assert [r.name for r in both.greedy_rules] == ["decl-b"]
    assert [r.name for r in both.egraph_rules] == ["decl-a", "decl-c"]
    assert both.structural == ("affine-store-compose", "tf-executor-canonical")
    assert rules_of(["test-decl-1", "test-decl-2"]) == both.rules
    kept = declaration(["test-decl-1", "test-decl-2"], keep=lambda n: n not in ("decl-b", "affine-store-compose"))
    assert [r.name for r in kept.rules] == ["decl-a", "decl-c"] and kept.structural == ("tf-executor-canonical",)
