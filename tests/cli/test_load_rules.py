"""`egraft-opt --load-rules` and `--check-rules` at the command line: every kind of file,
every kind of mistake (a located error, never a traceback of egraft's), and the sets in the
passes that take `rules=`.  Each test names its files (and so its sets) uniquely: sets are
registered process-wide."""

from __future__ import annotations

from pathlib import Path

import pytest

from .tool import assert_one_error_line, run

EXAMPLE = """\
func.func @f(%x: f32, %y: tensor<2xf32>) -> (f32, tensor<2xf32>) {
  %one = arith.constant 1.0 : f32
  %0 = arith.mulf %x, %one : f32
  %1 = "tf.Neg"(%y) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "tf.Neg"(%1) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %2 : f32, tensor<2xf32>
}
"""


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture()
def example(tmp_path: Path) -> str:
    return write(tmp_path, "example.mlir", EXAMPLE)


def test_a_rule_file_runs_in_every_pass_that_takes_rule_sets(tmp_path: Path, example: str) -> None:
    rules = write(tmp_path, "passes_rules.rules", "mulf-one: arith.mulf(x, c) => x if splat(c, 1.0)\n")
    for flag in ("-eqsat=rules=passes_rules", "-apply-rules=rules=passes_rules",
                 "-canonicalize=rules=passes_rules", "-canonicalize=rules=passes_rules driver=greedy"):
        code, out, err = run(example, "--load-rules", rules, flag)
        assert code == 0 and err == "", err
        assert "arith.mulf" not in out and "return %arg0, " in out, (flag, out)


def test_tf_grappler_runs_loaded_sets_after_its_families(tmp_path: Path) -> None:
    source = write(tmp_path, "relus.mlir", 'func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
                   '  %0 = "tf.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
                   '  %1 = "tf.Relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>\n  return %1 : tensor<4xf32>\n}\n')
    rules = write(tmp_path, "grappler_user.rules", "relu-relu: tf.Relu(tf.Relu(x)) => tf.Relu(x)\n")
    code, out, err = run(source, "--load-rules", rules, "-tf-grappler=rules=grappler_user report=true")
    assert code == 0 and out.count('"tf.Relu"') == 1, out
    assert "remark: user rules: Graph size after: 1 nodes (-1)" in err
    code, _, err = run(source, "-tf-grappler=rules=not-loaded")
    assert code == 1 and "tf-grappler: unknown rule set 'not-loaded'" in err


def test_a_python_module_registers_its_sets(tmp_path: Path, example: str) -> None:
    write(tmp_path, "helpers_for_py.py", "from egraft.patterns import op, vars_\nx, = vars_('x')\n"
                                          "NEG_NEG = (op('tf.Neg', op('tf.Neg', x)), x)\n")
    module = write(tmp_path, "py_rules.py", "from egraft.patterns import rule, register_rule_set\n"
                                            "from helpers_for_py import NEG_NEG\n"
                                            "register_rule_set('py-neg', [rule('neg-neg', *NEG_NEG, doc='--x = x')])\n")
    code, out, err = run(example, "--load-rules", module, "-eqsat=rules=py-neg")
    assert code == 0 and "tf.Neg" not in out, err


def test_a_drr_file_becomes_a_set_and_what_it_cannot_read_is_a_warning(tmp_path: Path, example: str) -> None:
    td = write(tmp_path, "neg_patterns.td", "def NegNeg : Pat<(TF_NegOp (TF_NegOp $x)), (replaceWithValue $x)>;\n"
                                            "def Odd : Pat<(TF_AddV2Op $x, $y), (SomethingNative $x)>;\n")
    code, out, err = run(example, "--load-rules", td, "-apply-rules=rules=neg_patterns")
    assert code == 0 and "tf.Neg" not in out
    assert err.startswith(f"{td}:2:1: warning: pattern 'Odd' not imported: "), err


@pytest.mark.parametrize("name, text, where, fragment", [
    ("raises_in_helper.py", "def helper():\n    return undefined_name\n\nhelper()\n", ":2:12:",
     "NameError: name 'undefined_name' is not defined"),
    ("bad_rule.py", "from egraft.patterns import op, rule, vars_\nx, = vars_('x')\n"
                    "r = rule('bad', op('tf.Sub', x), x)\n", ":3:5:", "RuleError: rule 'bad': 'tf.Sub' takes 2 operands"),
    ("bad_syntax.py", "def f(:\n", ":1:7:", "SyntaxError"),
    ("exits.py", "import sys\nsys.exit(3)\n", ":2:1:", "SystemExit: 3"),
])
def test_a_python_module_that_raises_is_reported_in_the_users_file(tmp_path: Path, example: str, name: str,
                                                                   text: str, where: str, fragment: str) -> None:
    module = write(tmp_path, name, text)
    code, out, err = run(example, "--load-rules", module)
    assert code == 1 and out == ""
    first = err.splitlines()[0]
    assert first.startswith(module + where + " error: ") and fragment in first, err
    frames = [line for line in err.splitlines() if line.startswith("  File ")]
    assert all(module in line for line in frames), err  # clipped to the user's file


@pytest.mark.parametrize("text, position, fragment", [
    ("neg-neg: arith.negf(arith.negf(x)) => y\n", ":1:39:", "'y' is not bound"),
    ("ok: arith.negf(arith.negf(x)) => x\nbad: arith.negf(x, x) => x\n", ":2:6:", "takes 1 operands"),
    ("r: tf.Neg(x) => x if splat(x)\n", ":1:29:", "'splat' takes 2 arguments"),
])
def test_a_bad_rule_file_is_one_located_error(tmp_path: Path, example: str, text: str, position: str,
                                              fragment: str) -> None:
    rules = write(tmp_path, f"bad_{abs(hash(text))}.rules", text)
    code, out, err = run(example, "--load-rules", rules, "-o", str(tmp_path / "out.mlir"))
    assert code == 1 and out == "" and not (tmp_path / "out.mlir").exists()
    lines = err.splitlines()
    assert lines[0].startswith(rules + position + " error: ") and fragment in lines[0], err
    assert len(lines) == 3 and lines[2].strip() == "^", err  # the source line and a caret


def test_file_problems_are_errors(tmp_path: Path, example: str) -> None:
    assert_one_error_line(run(example, "--load-rules", str(tmp_path / "absent.rules"))[2], "cannot open rule file")
    assert_one_error_line(run(example, "--load-rules", str(tmp_path))[2], "cannot open rule file")
    binary = tmp_path / "binary.rules"
    binary.write_bytes(b"\xff\xfe rule")
    assert_one_error_line(run(example, "--load-rules", str(binary))[2], "not valid UTF-8")
    twice = write(tmp_path, "twice_rules.rules", "n: arith.negf(arith.negf(x)) => x\n")
    assert run(example, "--load-rules", twice, "--load-rules", twice)[0] == 0  # one file, loaded once
    (tmp_path / "other").mkdir()
    namesake = write(tmp_path / "other", "twice_rules.rules", "m: arith.negf(arith.negf(x)) => x\n")
    code, _, err = run(example, "--load-rules", twice, "--load-rules", namesake)
    assert code == 1 and "rule set 'twice_rules' is already registered" in err.splitlines()[0]
    builtin = write(tmp_path, "shadow.rules", "[arith-canonical]\nn: arith.negf(arith.negf(x)) => x\n")
    assert "already registered" in run(example, "--load-rules", builtin)[2]


def test_check_rules_verdicts_and_exit_status(tmp_path: Path) -> None:
    rules = write(tmp_path, "check_cli.rules", "negf-negf: arith.negf(arith.negf(x)) => x\n"
                                               "never: arith.mulf(x, c) => x if splat(c, 1.0), splat(c, 2.0)\n"
                                               "[check_cli_wrong]\n"
                                               "mulf-zero: arith.mulf(x, c) => c if splat(c, 0.0)\n")
    code, out, err = run("--load-rules", rules, "--check-rules=check_cli", "--check-rules-examples=25")
    assert code == 0 and err == "", err
    assert "negf-negf (" in out and ": sound: " in out and "never (" in out and ": never applied: " in out
    assert out.splitlines()[-1] == "2 rule(s): 1 sound, 0 unsound, 1 never applied, 0 not checked"
    code, out, _ = run("--load-rules", rules, "--check-rules", "check_cli_wrong", "--check-rules-examples=25")
    assert code == 1 and "mulf-zero (" in out and "UNSOUND" in out and "counterexample:" in out, out
    assert "results before: " in out and "results after:  " in out


def test_check_rules_usage_errors() -> None:
    code, _, err = run("--check-rules=no-such-set")
    assert code == 1 and "unknown rule set 'no-such-set'" in err
    code, _, err = run("--check-rules=arith-canonical", "--check-rules-examples=zero")
    assert code == 1 and "--check-rules-examples needs a positive integer" in err
