"""`report=` of eqsat, canonicalize and apply-rules: the JSON report's schema and per-rule
counts on the shipped example and on the tutorial's rules, where booleans send it, and a
path that cannot be written (a located error, never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .tool import GOOD, assert_one_error_line, run

EXAMPLE = """\
func.func @scale(%x: f32, %y: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %negzero = arith.constant -0.0 : f32
  %0 = arith.mulf %one, %x : f32
  %1 = arith.addf %0, %negzero : f32
  %2 = arith.mulf %1, %y : f32
  return %2 : f32
}
"""

RULES = """\
mulf-one: arith.mulf(x, c) => x if splat(c, 1.0)
addf-negzero: arith.addf(x, c) => x if splat(c, -0.0)
mulf-comm: arith.mulf(x, y) => arith.mulf(y, x)
divf-self: arith.divf(x, x) => arith.constant {value = one_of(x)}
"""

IDLE = {"no match", "ops absent"}


def report_of(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1 and isinstance(data["runs"], list)
    return data["runs"]


def rows_by_name(run_: dict) -> dict[str, dict]:
    rows = {row["name"]: row for row in run_["rules"]}
    assert len(rows) == len(run_["rules"])
    for row in rows.values():
        for driver in ("egraph", "greedy"):
            if driver in row:
                stats = row[driver]
                assert 0 <= stats["applications"] <= stats["matches"] and stats["seconds"] >= 0
        fired = any(row.get(d, {}).get("applications") for d in ("egraph", "greedy"))
        assert ("idle" in row) != fired, row
    return rows


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "example.mlir").write_text(EXAMPLE, encoding="utf-8")
    (tmp_path / "report_rules.rules").write_text(RULES, encoding="utf-8")
    return tmp_path


def test_eqsat_report_counts_each_rule(files: Path) -> None:
    out = files / "eqsat.json"
    code, _, err = run(str(files / "example.mlir"), "--load-rules", str(files / "report_rules.rules"),
                       f"-eqsat=rules=report_rules report={out}")
    assert code == 0, err
    (only,) = report_of(out)
    assert only["pass"] == "eqsat" and only["stop"] == "saturated" and only["written"]
    rows = rows_by_name(only)
    assert list(rows) == ["mulf-one", "addf-negzero", "mulf-comm", "divf-self"]
    # 1.0 * x needs mulf-comm first; -0.0 is added once, and each mulf is swapped.
    assert rows["mulf-one"]["egraph"]["applications"] >= 1
    assert rows["addf-negzero"]["egraph"]["applications"] >= 1
    assert rows["mulf-comm"]["egraph"]["applications"] >= 2
    assert rows["divf-self"] == {"name": "divf-self", "idle": "ops absent"}
    assert set(only["seconds"]) >= {"lower", "load", "saturate", "extract", "writeback"}


def test_canonicalize_report_has_one_run_per_function_of_the_shipped_example(tmp_path: Path) -> None:
    out = tmp_path / "canon.json"
    code, _, err = run(str(GOOD), f"-pass-pipeline=builtin.module(func.func(canonicalize{{report={out}}}))")
    assert code == 0, err
    runs = report_of(out)
    assert [r["op"] for r in runs] == ["func.func @main", "func.func @unused_helper"]
    for r in runs:
        assert r["pass"] == "canonicalize" and r["driver"] == "egraph" and r["egraph"]["written"]
        rows = rows_by_name(r)
        assert rows and {row["idle"] for row in rows.values() if "idle" in row} <= IDLE
    # tf.Neg occurs only in the helper: neg-neg is tried (and matches nothing) there alone.
    assert rows_by_name(runs[0])["neg-neg"]["idle"] == "ops absent"
    assert rows_by_name(runs[1])["neg-neg"]["idle"] == "no match"


def test_greedy_and_egraph_reports_agree_on_which_rules_fired(files: Path) -> None:
    """Without mulf-comm both drivers fire the same rules (x * 1.0 is spelled so here). The
    counts differ by design: egglog re-applies a match whose classes a union renamed, the
    greedy driver rewrites each op once."""
    text = EXAMPLE.replace("arith.mulf %one, %x", "arith.mulf %x, %one")
    (files / "agree.mlir").write_text(text, encoding="utf-8")
    (files / "agree_rules.rules").write_text("\n".join(RULES.splitlines()[:2]) + "\n", encoding="utf-8")
    fired = {}
    for flag in ("-eqsat=rules=agree_rules", "-apply-rules=rules=agree_rules", "-canonicalize=rules=agree_rules"):
        out = files / f"{flag[1:5]}.json"
        code, _, err = run(str(files / "agree.mlir"), "--load-rules", str(files / "agree_rules.rules"),
                           f"{flag} report={out}")
        assert code == 0, err
        (only,) = report_of(out)
        fired[flag] = {name: sum(row[d]["applications"] for d in ("egraph", "greedy") if d in row)
                       for name, row in rows_by_name(only).items() if "idle" not in row}
    assert set(fired["-eqsat=rules=agree_rules"]) == set(fired["-canonicalize=rules=agree_rules"]) == \
        set(fired["-apply-rules=rules=agree_rules"])
    assert fired["-apply-rules=rules=agree_rules"] == {"mulf-one": 1, "addf-negzero": 1}


@pytest.mark.parametrize("flag", ["-eqsat=rules=arith-canonical", "-canonicalize=driver=egraph", "-apply-rules=rules=arith-canonical"])
@pytest.mark.parametrize("value", ["true", "-", "1"])
def test_true_means_a_remark_not_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str,
                                        value: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(str(GOOD), f"{flag} report={value}")
    assert code == 0 and ": remark: " in err and "never fired: " in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["-eqsat=rules=arith-canonical", "-canonicalize=driver=egraph", "-apply-rules=rules=arith-canonical"])
def test_false_means_no_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(str(GOOD), f"{flag} report=false")
    assert (code, err) == (0, "")
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_report_path_is_a_located_error(tmp_path: Path) -> None:
    code, out, err = run(str(GOOD), f"-canonicalize=report={tmp_path / 'missing' / 'r.json'}")
    assert code == 1 and out == "" and "Traceback" not in err
    assert_one_error_line(err.splitlines()[0], "dense_block.mlir:5:1: error: cannot write the report to",
                          "No such file or directory")


def test_mlir_timing_lists_the_egraph_phases_under_the_pass() -> None:
    code, _, err = run(str(GOOD), "--mlir-timing",
                       "-pass-pipeline=builtin.module(func.func(canonicalize,canonicalize{driver=greedy}))")
    assert code == 0, err
    names = [line.split("%)", 1)[1] for line in err.splitlines() if "%)" in line]
    egraph, greedy = [i for i, name in enumerate(names) if name == "    Canonicalize"]
    assert set(names[egraph + 1:greedy]) == {f"      {phase}" for phase in ("lower", "load", "saturate", "export",
                                                                           "extract", "writeback")}
    assert names[greedy + 1] == "      greedy"


def test_a_bare_report_flag_is_a_remark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(str(GOOD), "-pass-pipeline=builtin.module(func.func(apply-rules{rules=tf-canonical report}))")
    assert code == 0 and err.count(": remark: converged") == 2, err
    assert list(tmp_path.iterdir()) == []
