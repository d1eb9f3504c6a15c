"""Pass manager, pipelines and egraft-opt: behaviour not visible from lit tests."""

from __future__ import annotations

import io
import time

import attrs
import pytest

from egraft.ir import Operation, parse, print_ir
from egraft.passes import PASSES, Pass, PassContext, PassFailure, option, parse_pipeline, register_pass
from egraft.passes.cli.main import main
from egraft.passes.transforms.cse import CSE
from egraft.passes.transforms.dce import DCE
from egraft.ir.core.diagnostics import DiagnosticError


def run_cli(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=lambda: stdin.encode(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@register_pass
@attrs.define
class _Breaker(Pass):
    """Leaves a use of an erased value behind, so verify-each must catch it."""

    NAME = "test-break-ir"
    SUMMARY = "Break the IR (tests only)"
    depth: int = option(1, "Unused; exercises typed options")
    fail: bool = option(False, "Signal failure instead of breaking the IR")

    def run(self, op: Operation, ctx: PassContext) -> None:
        if self.fail:
            raise PassFailure()
        for nested in op.walk():
            if nested.name == "arith.addi":
                nested.detach()
                return


SRC = """func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  return %0 : i32
}
"""


def test_pipeline_text_roundtrip_and_options() -> None:
    p = parse_pipeline("builtin.module(func.func(cse, test-break-ir{depth=3 fail=true}), symbol-dce)")
    assert p.text() == "builtin.module(func.func(cse,test-break-ir{depth=3 fail=true}),symbol-dce)"
    assert parse_pipeline("func(cse)").text() == "builtin.module(func.func(cse))"
    assert parse_pipeline("cse,dce").text() == "builtin.module(cse,dce)"


@pytest.mark.parametrize("text,message", [
    ("builtin.module(cse", "1:19: error: encountered unbalanced parentheses"),
    ("cse)", "1:4: error: encountered extra closing ')'"),
    ("cse dce", "1:5: error: expected ',' after parsing pipeline"),
    ("frobnicate", "1:1: error: 'frobnicate' does not refer to a registered pass"),
    ("test-break-ir{depth=x}", "1:15: error: 'x' value invalid for integer argument 'depth'"),
    ("test-break-ir{nope=1}", "1:15: error: no such option 'nope'"),
])
def test_pipeline_errors_have_position_and_caret(text: str, message: str) -> None:
    with pytest.raises(DiagnosticError) as e:
        parse_pipeline(text)
    rendered = e.value.render()
    assert rendered.startswith("<pipeline>:" + message)
    assert rendered.splitlines()[1] == text and rendered.splitlines()[2].endswith("^")


def test_pass_flags_follow_command_line_order_and_accept_options() -> None:
    code, out, err = run_cli(["-", "-cse", "--test-break-ir=depth=2 fail=true"], SRC)
    assert code == 1 and out == ""
    code, out, _ = run_cli(["-", "-cse", "-dce"], SRC)
    assert code == 0 and "arith.addi" in out


def test_verify_each_names_the_pass_that_broke_the_ir() -> None:
    code, _, err = run_cli(["-", "-test-break-ir"], SRC)
    assert code == 1
    assert "invalid after running pass '_Breaker' (test-break-ir)" in err
    assert "Traceback" not in err
    code, _, _ = run_cli(["-", "-test-break-ir", "--verify-each=false"], SRC)
    assert code == 0 or code == 1  # printing broken IR is the user's risk once verification is off


def test_output_file_written_only_on_success(tmp_path) -> None:
    out = tmp_path / "out.mlir"
    code, _, err = run_cli(["-", "-o", str(out)], "func.func @f() {\n  return %x : i32\n}\n")
    assert code == 1 and not out.exists() and "<stdin>:2:10: error:" in err
    code, _, _ = run_cli(["-", "-o", str(out)], SRC)
    assert code == 0 and "func.func @f" in out.read_text()


def test_split_input_file_joins_outputs_and_keeps_going() -> None:
    text = "func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return %x : i32\n}\n// -----\nfunc.func @c() {\n  return\n}\n"
    code, out, err = run_cli(["-", "-split-input-file"], text)
    assert code == 1
    assert err.startswith("<stdin>:6:10: error: use of undeclared SSA value name")
    assert out.count("// -----\n") == 2 and "@a" in out and "@c" in out and "@b" not in out


def test_no_implicit_module_prints_the_single_op() -> None:
    code, out, _ = run_cli(["-", "--no-implicit-module"], SRC)
    assert code == 0 and out.startswith("func.func @f")
    code, _, err = run_cli(["-", "--no-implicit-module"], SRC + SRC.replace("@f", "@g"))
    assert code == 1 and "single top-level operation, found: 2" in err


def test_unknown_flag_and_missing_file() -> None:
    assert run_cli(["--frobnicate"])[0] == 1
    code, _, err = run_cli(["/nonexistent/x.mlir"])
    assert code == 1 and "cannot open input file" in err  # MLIR's wording


def test_every_pass_is_registered_with_summary() -> None:
    for name in ("cse", "dce", "symbol-dce"):
        assert PASSES[name].SUMMARY


def _big_module(n: int) -> str:
    lines = ["func.func @f(%a: i32) -> i32 {"]
    for i in range(n):
        lines.append(f"  %v{i} = arith.addi %a, %a : i32")
    lines += ["  return %v0 : i32", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("pass_cls", [CSE, DCE])
def test_linear_time_on_100k_op_block(pass_cls: type[Pass]) -> None:
    module = parse(_big_module(100_000))
    start = time.perf_counter()
    pass_cls().run(module, PassContext(lambda d: None))
    elapsed = time.perf_counter() - start
    body = print_ir(module)
    assert body.count("arith.addi") == 1
    assert elapsed < 10, f"{pass_cls.NAME} took {elapsed:.1f}s on 100k ops"
