"""Per-rule statistics of the saturation and greedy reports, and the e-graph pictures
(rewrite/dot.py): counts on generated chains, how a step's time and growth are shared, how
egglog's rule parts fold into their rules, and drawing only the classes a rule touched."""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import parse
from egraft.patterns.rule_file import parse_rule_file
from egraft.rewrite.dot import classes_of_ops, egraph_dot, render
from egraft.rewrite.engine.saturate import RuleStats, SaturationReport, _Driver
from egraft.rewrite.greedy.driver import apply_rules_greedily
from egraft.rewrite.lower_pipeline import optimize
from egraft.rewrite.phases import egraph_rule_stats
from egraft.rewrite.rules.compile import compile_rules

RULES = """\
mulf-one: arith.mulf(x, c) => x if splat(c, 1.0)
mulf-comm: arith.mulf(x, y) => arith.mulf(y, x)
subf-self: arith.subf(x, x) => arith.constant {value = zero_of(x)}
"""


def rules(*names: str) -> list:
    found = {r.name: r for rs in parse_rule_file(RULES, "stats.rules").values() for r in rs}
    return [found[n] for n in names]


@st.composite
def chains(draw: st.DrawFn) -> str:
    """A chain of n mulf/addf ops (each reads the one before, so none is dead), the other
    operand an argument, an earlier value or the constant 1.0."""
    n = draw(st.integers(1, 8))
    values, lines = ["%a", "%b", "%one"], ["  %one = arith.constant 1.0 : f32"]
    for i in range(n):
        op = draw(st.sampled_from(["arith.mulf", "arith.addf"]))
        lhs, rhs = values[-1], draw(st.sampled_from(values))
        lines.append(f"  %v{i} = {op} {lhs}, {rhs} : f32")
        values.append(f"%v{i}")
    body = "\n".join(lines)
    return f"func.func @f(%a: f32, %b: f32) -> f32 {{\n{body}\n  return {values[-1]} : f32\n}}\n"


@settings(max_examples=15, deadline=None)
@given(chains())
def test_greedy_stats_count_every_try_match_and_rewrite(text: str) -> None:
    module = parse(text)
    mulfs = text.count("arith.mulf")
    report = apply_rules_greedily(module, rules("mulf-one", "subf-self"))
    one, sub = report.rules["mulf-one"], report.rules["subf-self"]
    # Each `mulf x, y` whose y is %one once earlier rewrites are made (its result replaced by x)
    # is rewritten once, nothing else is: `%v0 = mulf %one, %one` makes a later `mulf _, %v0` one.
    value: dict[str, str] = {}
    times_one = 0
    for line in text.splitlines():
        if "arith.mulf" in line:
            name, _, rest = line.strip().partition(" = arith.mulf ")
            lhs, rhs = (value.get(v, v) for v in rest.split(" : ")[0].split(", "))
            if rhs == "%one":
                times_one += 1
                value[name] = lhs
    assert one.applications == report.rewrites["mulf-one"] == times_one
    assert one.tries >= mulfs and one.matches >= one.applications and one.ops_added == 0
    assert (sub.tries, sub.matches, sub.applications) == (0, 0, 0)  # no subf: never tried


@settings(max_examples=10, deadline=None)
@given(chains())
def test_saturation_stats_hold_every_rule_of_the_egraph(text: str) -> None:
    module = parse(text)
    trip = optimize(module, prepare=lambda eg: compile_rules(eg, rules("mulf-comm", "subf-self")))
    stats = trip.report.rules
    assert {"mulf-comm", "subf-self"} <= stats.keys()
    assert stats["subf-self"] == RuleStats()  # on the e-graph, never fired
    comm = stats["mulf-comm"]
    if "arith.mulf" in text:
        assert comm.applications >= text.count("arith.mulf") and comm.matches >= comm.applications
        assert comm.steps >= 1 and comm.seconds > 0
        # the swapped op is a new e-node unless its two operands are one value (`mulf %one, %one`)
        operands = [l.split(" : ")[0].split("arith.mulf ")[1].split(", ") for l in text.splitlines() if "arith.mulf" in l]
        swaps_new = any(lhs != rhs for lhs, rhs in operands)
        assert (comm.enodes_added > 0) == swaps_new
    else:
        assert comm == RuleStats()


class _Tables:
    rulesets = {"simplify": ["a", "b"]}


def test_a_step_is_shared_by_matches_for_time_and_by_applications_for_enodes() -> None:
    driver = _Driver(_Tables(), budget=None)  # type: ignore[arg-type]
    driver.share(Counter({"a": 3, "b": 1, "c": 0}), {"a": 1, "b": 3}, seconds=2.0, added=8)
    a, b = driver.report.rules["a"], driver.report.rules["b"]
    assert (a.matches, a.applications, a.seconds, a.enodes_added, a.steps, a.alone) == (3, 1, 1.5, 2.0, 1, 0)
    assert (b.matches, b.applications, b.seconds, b.enodes_added) == (1, 3, 0.5, 6.0)
    driver.share(Counter({"a": 2}), {"a": 2}, seconds=1.0, added=-1)
    assert (a.seconds, a.enodes_added, a.steps, a.alone) == (2.5, 1.0, 2, 1)
    assert "c" not in driver.report.rules


def test_egglog_rule_parts_fold_into_their_rule() -> None:
    report = SaturationReport(rules={
        "plain": RuleStats(4, 3, 2.0, 0.1, 1, 1),
        "either#0": RuleStats(1, 1, 1.0, 0.1, 1, 0), "either#1": RuleStats(2, 2, 1.0, 0.1, 1, 0),
        "staged=match": RuleStats(5, 5, 0.0, 0.2, 1, 1), "staged?0": RuleStats(5, 5, 3.0, 0.1, 1, 0),
        "staged": RuleStats(2, 2, 1.0, 0.1, 1, 0),
        "dict-has-head@simplify": RuleStats(9, 9, 9.0, 0.9, 1, 0)})
    folded = egraph_rule_stats(report)
    assert set(folded) == {"plain", "either", "staged"}
    assert (folded["either"].matches, folded["either"].applications) == (3, 3)
    staged = folded["staged"]
    assert (staged.matches, staged.applications, staged.enodes_added) == (5, 2, 4.0)
    assert staged.seconds == pytest.approx(0.4)


def test_drawing_only_the_classes_a_rule_touched() -> None:
    text = "func.func @f(%a: f32, %b: f32) -> f32 {\n  %0 = arith.mulf %a, %b : f32\n" \
           "  %1 = arith.addf %0, %a : f32\n  %2 = arith.subf %1, %b : f32\n  return %2 : f32\n}\n"
    trip = optimize(parse(text), prepare=lambda eg: compile_rules(eg, rules("mulf-comm")))
    g = trip.egraph
    touched = classes_of_ops(g, {"arith.mulf"})
    full, part = egraph_dot(g, trip.choice), egraph_dot(g, trip.choice, classes=touched)
    drawn = set(map(int, re.findall(r"subgraph cluster_(\d+)", part)))
    assert drawn == touched and len(drawn) < g.n_classes
    assert part.count('label="arith.mulf"') == full.count('label="arith.mulf"') == 2
    assert "arith.subf" not in part and "arith.subf" in full
    # every edge lands on a drawn cluster
    assert set(map(int, re.findall(r"lhead=cluster_(\d+)", part))) <= drawn


def test_render_without_graphviz_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    dot = tmp_path / "g.dot"
    dot.write_text("digraph g { a -> b }\n")
    why = render([str(dot)])
    assert why is not None and "apt-get install graphviz" in why
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot"]


def test_render_runs_dot_per_format_and_reports_its_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in `dot` that writes what it was asked for, then fails on a bad file."""
    tool = tmp_path / "dot"
    tool.write_text('#!/bin/sh\ngrep -q digraph "$2" || { echo "syntax error" >&2; exit 1; }\n'
                    'echo "$1" > "$4"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    good = tmp_path / "g.dot"
    good.write_text("digraph g { a -> b }\n")
    assert render([str(good)]) is None
    assert (tmp_path / "g.svg").read_text() == "-Tsvg\n" and (tmp_path / "g.png").read_text() == "-Tpng\n"
    bad = tmp_path / "bad.dot"
    bad.write_text("not a graph\n")
    why = render([str(bad)])
    assert why is not None and "syntax error" in why
