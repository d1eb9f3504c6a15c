"""Regression tests for the failures the graph-shape property found (/work/coord/shape-failures.md, S1...).

Each input is a minimal `.mlir` case in `cases/`; each test runs the driver that failed and
checks what the property checks (verifies, reparses, outputs kept, interpreter agrees).
A test marked `xfail(strict=True)` is a bug still open: it fails the suite once it passes,
so the mark and the matching OPEN_BUGS entry of test_drivers.py go when the fix lands.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import given, settings

from egraft.ir import DiagnosticError, Operation, parse, verify
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.rewrite.engine.egraph import EGraph

from .drivers import Driver, agrees, check_outputs_kept, reparsed, run_driver

CASES = Path(__file__).parent / "cases"


def check_case(case: str, pass_text: str, examples: int = 30) -> None:
    """The property on one fixed input: runs, verifies, reparses, keeps outputs, agrees."""
    driver = Driver(pass_text, fast_math="fast-math" in pass_text)
    text = (CASES / case).read_text()  # (an absolute path replaces CASES)
    after, _ = run_driver(driver, text)
    after = reparsed(after)
    before = parse(text)
    check_outputs_kept(before, after)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True)
    @given(values_for_types(argument_types(before), special_floats=not driver.fast_math))
    def run(inputs: list) -> None:
        agrees(driver, before, after, inputs)

    run()


@pytest.mark.parametrize("pass_text", ["canonicalize", "eqsat{rules=none}"])
def test_multiblock_function(pass_text: str) -> None:
    check_case("multiblock_branch.mlir", pass_text)


@pytest.mark.parametrize("pass_text", ["canonicalize", "eqsat{rules=arith-canonical}"])
def test_function_with_branches_under_a_module_anchor(pass_text: str) -> None:
    """Anchored on the module, a function with branches is opaque in the module's e-graph and
    gets a round trip of its own (rewrite/phases.py): its `x - x` folds in every block."""
    text = (CASES / "multiblock_folds.mlir").read_text()
    before, after = parse(text), parse(text)
    PassManager(parse_pipeline(f"builtin.module({pass_text})")).run(after)
    verify(after)
    after = reparsed(after)
    assert not any(op.name == "arith.subi" for op in after.walk())
    check_outputs_kept(before, after)

    @settings(max_examples=30, deadline=None, database=None, derandomize=True)
    @given(values_for_types(argument_types(before)))
    def run(inputs: list) -> None:
        agrees(Driver(pass_text), before, after, inputs)

    run()


@pytest.mark.parametrize("pass_text", ["canonicalize{driver=greedy}", "cse", "dce",
                                       "apply-rules{rules=arith-canonical}"])
def test_multiblock_function_ir_drivers(pass_text: str) -> None:
    check_case("multiblock_branch.mlir", pass_text)


def test_egraph_freed_after_pass() -> None:
    """S2 (fixed in 250b2c2): an oracle table held its e-graph alive, ~100 MB per eqsat run."""
    gc.collect()
    alive_before = sum(isinstance(o, EGraph) for o in gc.get_objects())
    run_driver(Driver("eqsat{rules=arith-canonical}"), (CASES / "sub_self_add.mlir").read_text())
    gc.collect()
    assert sum(isinstance(o, EGraph) for o in gc.get_objects()) == alive_before, "the pass's e-graph is still alive"


def test_constant_chain_folds_like_greedy() -> None:
    """S3 (fixed in 250b2c2): 30-deep constant chains were folded only max-iterations answer rounds deep."""
    check_case("fold_chain.mlir", "canonicalize")
    egraph, _ = run_driver(Driver("canonicalize"), (CASES / "fold_chain.mlir").read_text())
    greedy, _ = run_driver(Driver("canonicalize{driver=greedy}"), (CASES / "fold_chain.mlir").read_text())
    assert op_count(egraph) <= op_count(greedy), f"e-graph leaves {op_count(egraph)} ops, greedy {op_count(greedy)}"


def op_count(module: Operation) -> int:
    return sum(1 for _ in module.walk())


def deep_chain(n: int) -> str:
    """`n` dependent ops no rule simplifies: `%k+1 = %k * %a + ...` alternating addi and muli."""
    lines = ["func.func @chain(%a: i32, %b: i32) -> (i32, i32) {", "  %v0 = arith.addi %a, %b : i32"]
    lines += [f"  %v{k} = arith.{'muli' if k % 2 else 'addi'} %v{k - 1}, %{'a' if k % 3 else 'b'} : i32"
              for k in range(1, n)]
    lines += [f"  return %v{n - 1}, %v{n // 2} : i32, i32", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("pass_text", ["canonicalize", "eqsat{rules=none}"])
def test_deep_chain(pass_text: str, tmp_path: Path) -> None:
    """S5: a 2,000-op dependency chain through the e-graph drivers (write-back once recursed per op)."""
    (tmp_path / "chain.mlir").write_text(deep_chain(2000))
    check_case(str(tmp_path / "chain.mlir"), pass_text, examples=3)


def test_verifier_names_a_value_no_longer_in_the_ir() -> None:
    """S1 left uses of an erased op's result; the verifier blamed region isolation. It now says
    what happened (ir/verifier.py)."""
    module = parse((CASES / "multiblock_branch.mlir").read_text())
    addi = next(op for op in module.walk() if op.name == "arith.addi")
    addi.detach()  # its result is still used by ^bb1's return
    with pytest.raises(DiagnosticError, match=r"'func.return' op operand #0 is a result of 'arith.addi' "
                                              r"that is no longer in the IR"):
        verify(module)


@pytest.mark.parametrize("pass_text", ["dce", "canonicalize", "canonicalize{driver=greedy}", "eqsat{rules=none}"])
def test_dead_stateless_tf_ops_without_records_are_erased(pass_text: str) -> None:
    """S4: a tf op without an op record is judged by TensorFlow's registry (ir/effects.py):
    dead stateless ones go, the live one stays, and the interpreter agrees."""
    check_case("dead_tf_stateless.mlir", pass_text)
    after, _ = run_driver(Driver(pass_text), (CASES / "dead_tf_stateless.mlir").read_text())
    names = [op.name for op in after.walk()]
    assert names.count("tf.SelectV2") == 1 and "tf.Greater" in names, names
    assert not {"tf.Abs", "tf.LogicalAnd", "tf.Shape"} & set(names), names


@pytest.mark.parametrize("pass_text", ["dce", "canonicalize", "canonicalize{driver=greedy}", "eqsat{rules=none}"])
def test_dead_stateful_and_unknown_tf_ops_are_kept(pass_text: str) -> None:
    """The other side of S4: stateful in TF's registry (Print, RandomUniform), stateless but
    writing through a ref or calling a function (Assign, PartitionedCall), or unknown to TF (a
    custom op): kept though dead."""
    text = """
    func.func @main(%a: tensor<4xf32>, %s: tensor<1xi32>) -> tensor<4xf32> {
      %0 = "tf.Print"(%a) {message = "x"} : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "tf.RandomUniform"(%s) : (tensor<1xi32>) -> tensor<4xf32>
      %2 = "tf.PartitionedCall"(%a) {f = @g} : (tensor<4xf32>) -> tensor<4xf32>
      %3 = "tf.MyCustomOp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
      return %a : tensor<4xf32>
    }
    """
    after, _ = run_driver(Driver(pass_text), text)
    names = {op.name for op in after.walk()}
    assert {"tf.Print", "tf.RandomUniform", "tf.PartitionedCall", "tf.MyCustomOp"} <= names, names


@pytest.mark.parametrize("pass_text", ["canonicalize", "eqsat{rules=arith-canonical}"])
def test_forward_reference_to_a_value_of_an_earlier_block(pass_text: str) -> None:
    """A block's value that folds to another block's value (x + 0 and an identity tf.Cast in
    each of three chained blocks, all the entry's arguments): the write-back followed one
    forward reference and left the second as an operand, a traceback in egraft-opt
    (TF's canonicalize.mlir testSameCastTypeAcrossBasicBlocks)."""
    check_case("multiblock_forward_chain.mlir", pass_text)
