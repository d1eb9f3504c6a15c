"""The `tf-constant-folding` rule set (patterns/grappler/constant_folding.py): every rule through
the soundness harness, folds on a small graph with both drivers (checked by the interpreter),
stateful ops left alone, the size policy, the element limit, and StridedSlice against TF."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from egraft.ir import parse, print_ir
from egraft.ir.effects import declared_effect_free
from egraft.ir import REGISTRY
from egraft.ir.semantics import run_function
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness import assert_pass_sound, assert_rule_sound
from egraft.patterns import rule_set
from egraft.patterns.grappler import constant_folding as cf

SET = "tf-constant-folding"
#: The program generator draws no valid convolution attributes (strides, padding): these
#: folds are checked through the pass on test_convolution_fold's module instead, and the fused
#: ops' (no fused_ops either) in tests/grappler/test_remapper.py.
DRAWN_ELSEWHERE = {"fold-Conv2D", "fold-DepthwiseConv2dNative"} | {
    f"fold-{op}-{n}" for op in ("_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul") for n in range(1, 5)}
#: Einsum's equation is not drawn either (a random string is no equation): test_einsum_fold.
EQUATION_RULES = {f"fold-Einsum-{n}" for n in range(1, 5)}

# Each `-replacing` rule runs the native of its `fold-` rule (without the size check), so the
# harness checks every fold rule and the replacing variants of one op per operand shape.
CHECKED = [r for r in rule_set(SET).rules if not r.name.endswith("-replacing")] + \
    [r for r in rule_set(SET).rules if r.name in ("fold-Neg-replacing", "fold-AddV2-replacing",
                                                   "fold-ConcatV2-2-replacing", "fold-Pack-2-replacing")]


@pytest.mark.parametrize("rule", CHECKED, ids=[r.name for r in CHECKED])
def test_rule_is_sound(rule) -> None:
    if rule.name in DRAWN_ELSEWHERE:
        pytest.skip("convolution attributes are not drawn: checked by test_convolution_fold / test_remapper")
    if rule.name in EQUATION_RULES:
        pytest.skip("equations are not drawn: checked by test_einsum_fold")
    assert_rule_sound(rule, examples=5)


def test_the_set_folds_only_effect_free_ops_and_declares_its_greedy_rules() -> None:
    folded = cf.foldable_ops()
    assert {"tf.AddV2", "tf.Pack", "tf.StridedSlice", "tf.Shape", "tf.Fill", "tf.ZerosLike"} <= set(folded)
    assert all(declared_effect_free(n, REGISTRY.lookup(n)) for n in folded)
    assert not set(folded) & (cf.FORWARDING | {"tf.Const", "tf.Yield", "tf.Split"})
    s = rule_set(SET)
    assert {r.name for r in s.greedy_rules} == {r.name for r in s.rules if r.name.endswith("-replacing")}


SMALL = """
func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xi32>, tensor<2xi32>, tensor<2x3xf32>) {
  %a = "tf.Const"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<*xf32>
  %e = "tf.Const"() {value = dense<0.001> : tensor<f32>} : () -> tensor<*xf32>
  %s = "tf.AddV2"(%a, %e) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %r = "tf.Rsqrt"(%s) : (tensor<*xf32>) -> tensor<*xf32>
  %m = "tf.Mul"(%arg0, %r) : (tensor<2x3xf32>, tensor<*xf32>) -> tensor<*xf32>
  %sh = "tf.Shape"(%arg0) : (tensor<2x3xf32>) -> tensor<*xi32>
  %b = "tf.Const"() {value = dense<[0]> : tensor<1xi32>} : () -> tensor<1xi32>
  %en = "tf.Const"() {value = dense<[1]> : tensor<1xi32>} : () -> tensor<1xi32>
  %st = "tf.Const"() {value = dense<[1]> : tensor<1xi32>} : () -> tensor<1xi32>
  %d0 = "tf.StridedSlice"(%sh, %b, %en, %st) {begin_mask = 0 : i64, end_mask = 0 : i64, ellipsis_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64} : (tensor<*xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<i32>
  %m1 = "tf.Const"() {value = dense<-1> : tensor<i32>} : () -> tensor<i32>
  %pk = "tf.Pack"(%d0, %m1) {axis = 0 : i64} : (tensor<i32>, tensor<i32>) -> tensor<2xi32>
  %z = "tf.ZerosLike"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %m, %sh, %pk, %z : tensor<*xf32>, tensor<*xi32>, tensor<2xi32>, tensor<2x3xf32>
}
"""


def _run(text: str, pipeline: str) -> str:
    module = parse(text)
    PassManager(parse_pipeline(pipeline)).run(module)
    return print_ir(module)


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
def test_small_graph_folds(driver: str) -> None:
    pipeline = f"func.func(canonicalize{{rules={SET} driver={driver}}})"
    out = _run(SMALL, pipeline)
    for gone in ("tf.AddV2", "tf.Rsqrt", "tf.Shape", "tf.StridedSlice", "tf.Pack", "tf.ZerosLike"):
        assert gone not in out, (gone, out)
    assert "dense<[2, -1]> : tensor<2xi32>" in out and "dense<[2, 3]> : tensor<2xi32>" in out
    # float32 arithmetic in float32: 1/sqrt(1 + 0.001) rounded as float32 does it
    want = np.float32(1) / np.sqrt(np.float32(1) + np.float32(0.001))
    assert f"{float(want):.9g}"[:8] in out
    assert_pass_sound(SMALL, pipeline, examples=10)


STATEFUL = """
func.func @main() -> (tensor<2xf32>, tensor<2xi32>) {
  %s = "tf.Const"() {value = dense<[2]> : tensor<1xi32>} : () -> tensor<1xi32>
  %r = "tf.RandomUniform"(%s) {seed = 0 : i64, seed2 = 0 : i64} : (tensor<1xi32>) -> tensor<2xf32>
  %c = "tf.Const"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %n = "tf.Neg"(%c) : (tensor<2xi32>) -> tensor<2xi32>
  func.return %r, %n : tensor<2xf32>, tensor<2xi32>
}
"""


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
def test_stateful_ops_are_not_folded(driver: str) -> None:
    out = _run(STATEFUL, f"func.func(canonicalize{{rules={SET} driver={driver}}})")
    assert "tf.RandomUniform" in out and "tf.Neg" not in out and "dense<[-1, -2]>" in out


def _growing(shared: bool) -> str:
    """AddV2 of a 4x1 and a 1x4 constant broadcasts to 4x4: 16 elements from 8."""
    extra = ", %a" if shared else ""
    extra_type = ", tensor<4x1xi32>" if shared else ""
    return f"""
func.func @main() -> (tensor<4x4xi32>{extra_type}) {{
  %a = "tf.Const"() {{value = dense<[[1], [2], [3], [4]]> : tensor<4x1xi32>}} : () -> tensor<4x1xi32>
  %b = "tf.Const"() {{value = dense<[[10, 20, 30, 40]]> : tensor<1x4xi32>}} : () -> tensor<1x4xi32>
  %s = "tf.AddV2"(%a, %b) : (tensor<4x1xi32>, tensor<1x4xi32>) -> tensor<4x4xi32>
  func.return %s{extra} : tensor<4x4xi32>{extra_type}
}}
"""


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
def test_size_policy_refuses_a_growing_fold_unless_it_replaces_its_operands(driver: str) -> None:
    pipeline = f"func.func(canonicalize{{rules={SET} driver={driver}}})"
    kept = _run(_growing(shared=True), pipeline)
    assert "tf.AddV2" in kept, kept  # %a stays for its other use: folding would add 64 bytes to 24
    folded = _run(_growing(shared=False), pipeline)
    assert "tf.AddV2" not in folded and "dense<[[11, 21, 31, 41]" in folded, folded
    assert_pass_sound(_growing(shared=False), pipeline, examples=3)


FILL = """
func.func @main() -> tensor<1000x1000xf32> {
  %d = "tf.Const"() {value = dense<[1000, 1000]> : tensor<2xi32>} : () -> tensor<2xi32>
  %v = "tf.Const"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>
  %f = "tf.Fill"(%d, %v) : (tensor<2xi32>, tensor<f32>) -> tensor<1000x1000xf32>
  func.return %f : tensor<1000x1000xf32>
}
"""


def test_fill_folds_to_a_splat_and_the_element_limit_is_respected() -> None:
    out = _run(FILL, f"func.func(canonicalize{{rules={SET} driver=greedy}})")
    assert "tf.Fill" not in out and "dense<1.500000e+00> : tensor<1000x1000xf32>" in out
    limited = _run(FILL, f"func.func(canonicalize{{rules={SET} driver=greedy fold-element-limit=1000}})")
    assert "tf.Fill" in limited


CONV = """
func.func @main() -> tensor<1x2x2x1xf32> {
  %x = "tf.Const"() {value = dense<[[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]], [[7.0], [8.0], [9.0]]]]> : tensor<1x3x3x1xf32>} : () -> tensor<1x3x3x1xf32>
  %w = "tf.Const"() {value = dense<[[[[1.0]], [[0.5]]], [[[0.25]], [[-1.0]]]]> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %c = "tf.Conv2D"(%x, %w) {strides = [1, 1, 1, 1], padding = "VALID", data_format = "NHWC", dilations = [1, 1, 1, 1], explicit_paddings = [], use_cudnn_on_gpu = true} : (tensor<1x3x3x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x1xf32>
  func.return %c : tensor<1x2x2x1xf32>
}
"""


def test_convolution_fold() -> None:
    before = run_function(parse(CONV), [])[0]
    for driver in ("greedy", "egraph"):
        out = _run(CONV, f"func.func(canonicalize{{rules={SET} driver={driver}}})")
        assert "tf.Conv2D" not in out
        assert np.array_equal(run_function(parse(out), [])[0], before)


EINSUM = """func.func @f() -> tensor<*xf32> {
  %a = "tf.Const"() {value = dense<[[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = "tf.Const"() {value = dense<[[1.0, 0.0], [2.0, -1.0], [0.25, 3.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %r = "tf.Einsum"(%a, %b) {equation = "ij,jk->ki"} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}"""


def test_einsum_fold() -> None:
    """An Einsum of constants folds to numpy's einsum of them, on both drivers."""
    a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]], np.float32)
    b = np.array([[1.0, 0.0], [2.0, -1.0], [0.25, 3.0]], np.float32)
    for driver in ("greedy", "egraph"):
        out = _run(EINSUM, f"func.func(canonicalize{{rules={SET} driver={driver}}})")
        assert "tf.Einsum" not in out, out
        np.testing.assert_allclose(run_function(parse(out), [])[0], np.einsum("ij,jk->ki", a, b), rtol=1e-6)


@pytest.mark.tf
def test_strided_slice_agrees_with_tensorflow() -> None:
    """The new evaluator against TF's kernel on every mask combination of a 3-axis spec that
    covers negative begins, a negative stride and out-of-range ends (errors included)."""
    tf = pytest.importorskip("tensorflow")
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    begin, end, strides = [1, -1, 0], [3, -4, 9], [1, -1, 2]
    template = """func.func @f(%x: tensor<3x4x5xf32>) -> tensor<*xf32> {
  %b = "tf.Const"() {value = dense<[1, -1, 0]> : tensor<3xi32>} : () -> tensor<3xi32>
  %e = "tf.Const"() {value = dense<[3, -4, 9]> : tensor<3xi32>} : () -> tensor<3xi32>
  %s = "tf.Const"() {value = dense<[1, -1, 2]> : tensor<3xi32>} : () -> tensor<3xi32>
  %r = "tf.StridedSlice"(%x, %b, %e, %s) {begin_mask = @0 : i64, end_mask = @1 : i64, ellipsis_mask = @2 : i64, new_axis_mask = @3 : i64, shrink_axis_mask = @4 : i64} : (tensor<3x4x5xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}"""
    for masks in itertools.product((0, 5), (0, 2), (0, 4), (0, 1), (0, 3)):
        try:
            want = tf.raw_ops.StridedSlice(input=x, begin=begin, end=end, strides=strides, begin_mask=masks[0],
                                           end_mask=masks[1], ellipsis_mask=masks[2], new_axis_mask=masks[3],
                                           shrink_axis_mask=masks[4]).numpy()
        except tf.errors.InvalidArgumentError:
            want = None
        try:
            text = template
            for i, m in enumerate(masks):
                text = text.replace(f"@{i}", str(m))
            got = run_function(parse(text), [x])[0]
        except Exception:  # noqa: BLE001 - Undefined: TF fails at run time too
            got = None
        assert (want is None) == (got is None), masks
        if want is not None:
            assert want.shape == got.shape and np.array_equal(want, got), masks
