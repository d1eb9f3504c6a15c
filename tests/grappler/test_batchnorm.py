"""tf-batchnorm-folding (patterns/grappler/batchnorm.py): every rule checked against the
interpreter on graphs where it applies, on both drivers; the folds it must refuse; and a
Keras conv + BatchNorm model whose outputs TensorFlow confirms after the rewrite.

The rules need 4-D inputs, per-channel constants and convolution attributes together,
which the harness's random instances (one base type, broadcast variants) cannot draw, so
they are checked through the pass on modules that exercise each of them: the interpreter
runs each before and after on random inputs (hypothesis) and the results must agree to
rtol 1e-4. The inputs are bounded (|x| <= 100, activations' range): every rule regroups a
float sum or product, and on inputs of 1e16 whose products cancel the regrouped rounding
error is larger than any relative tolerance (found on conv + BatchNorm: 1.9e-5 relative),
which says nothing about the rule.
"""

from __future__ import annotations

import numpy as np
import pytest

from egraft.ir import parse, print_ir
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.ir.semantics import run_function
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from egraft.patterns import rule_set

from .keras_models import frozen, randomize_batchnorms, run_graph

DRIVERS = {"egraph": "func.func(canonicalize{driver=egraph rules=tf-batchnorm-folding})",
           "greedy": "func.func(canonicalize{driver=greedy rules=tf-batchnorm-folding})"}
_CONV = 'data_format = "NHWC", dilations = [1, 1, 1, 1], explicit_paddings = [], padding = "SAME"'


def _const(name: str, values, shape: str) -> str:
    return (f'  %{name} = "tf.Const"() {{value = dense<{values}> : tensor<{shape}xf32>}} : () -> '
            f'tensor<{shape}xf32>\n')


_STATS = (_const("s", "[1.5, 0.5, 2.0]", "3") + _const("o", "[0.1, -0.2, 0.3]", "3")
          + _const("m", "[0.4, 0.5, -0.6]", "3") + _const("v", "[1.0, 2.0, 0.5]", "3"))
_T = "tensor<1x4x4x3xf32>"
_BN_TYPES = f"({_T}, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)"


def _bn(version: str, operand: str, training: str = "false") -> str:
    extra = ", tensor<*xf32>" if version == "V3" else ""
    n = 6 if version == "V3" else 5
    return (f'  %y:{n} = "tf.FusedBatchNorm{version}"(%{operand}, %s, %o, %m, %v) {{data_format = "NHWC", '
            f'epsilon = 0.001 : f32, is_training = {training}}} : {_BN_TYPES} -> '
            f'({_T}, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>{extra})\n')


def _conv_bn(version: str = "V3", training: str = "false", returned: str = "%r : " + _T) -> str:
    return ("func.func @conv_bn(%x: tensor<1x4x4x2xf32>) -> (" + returned.split(" : ", 1)[1] + ") {\n"
            + _const("w", "[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.125]]]]",
                     "1x2x2x3")
            + _STATS
            + f'  %c = "tf.Conv2D"(%x, %w) {{strides = [1, 1, 1, 1], {_CONV}}} : (tensor<1x4x4x2xf32>, '
              f'tensor<1x2x2x3xf32>) -> {_T}\n'
            + _bn(version, "c", training)
            + f'  %r = "tf.Relu"(%y#0) : ({_T}) -> {_T}\n'
            + f"  return {returned}\n}}\n")


DEPTHWISE_BN = ("func.func @depthwise_bn(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {\n"
                + _const("w", "[[[[0.5], [1.5], [-2.0]], [[1.0], [-0.25], [3.0]]]]", "1x2x3x1")
                + _const("b0", "[0.25, -0.5, 1.0]", "3") + _STATS
                + f'  %c = "tf.DepthwiseConv2dNative"(%x, %w) {{strides = [1, 1, 1, 1], {_CONV}}} : '
                  f'(tensor<1x4x4x3xf32>, tensor<1x2x3x1xf32>) -> {_T}\n'
                + f'  %cb = "tf.BiasAdd"(%c, %b0) {{data_format = "NHWC"}} : ({_T}, tensor<3xf32>) -> {_T}\n'
                + _bn("", "cb")
                + f"  return %y#0 : {_T}\n}}\n")

# Keras 3's BatchNormalization after a MatMul with a bias, as it appears in frozen graphs.
KERAS_DENSE = """func.func @keras_dense(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
%w = "tf.Const"() {value = dense<[[0.5, -1.0, 2.0, 1.0], [1.5, 0.25, -0.75, 2.0], [1.0, 2.0, 3.0, -1.0]]> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
%b0 = "tf.Const"() {value = dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>} : () -> tensor<4xf32>
%var = "tf.Const"() {value = dense<[1.0, 2.0, 0.5, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
%eps = "tf.Const"() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
%gamma = "tf.Const"() {value = dense<[1.5, 0.5, 2.0, -1.0]> : tensor<4xf32>} : () -> tensor<4xf32>
%beta = "tf.Const"() {value = dense<[0.1, -0.2, 0.3, 0.0]> : tensor<4xf32>} : () -> tensor<4xf32>
%mean = "tf.Const"() {value = dense<[0.4, 0.5, -0.6, 1.0]> : tensor<4xf32>} : () -> tensor<4xf32>
%p = "tf.MatMul"(%x, %w) {transpose_a = false, transpose_b = false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
%pb = "tf.BiasAdd"(%p, %b0) {data_format = "NHWC"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
%0 = "tf.AddV2"(%var, %eps) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
%1 = "tf.Rsqrt"(%0) : (tensor<4xf32>) -> tensor<4xf32>
%2 = "tf.Mul"(%1, %gamma) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
%3 = "tf.Mul"(%pb, %2) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
%4 = "tf.Mul"(%mean, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
%5 = "tf.Sub"(%beta, %4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
%6 = "tf.AddV2"(%3, %5) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
return %6 : tensor<2x4xf32>
}
"""


def assert_folds_soundly(text: str, driver: str, examples: int = 25) -> str:
    """Run the set on `text` with `driver`; the function must compute the same (rtol 1e-4,
    atol 1e-4) on random bounded inputs before and after. Returns the rewritten IR."""
    before = parse(text)
    after_text = _run(text, driver)
    after = parse(after_text)
    (func,) = [op for op in before.walk() if op.name == "func.func"]
    shapes = [tuple(a.type.shape) for a in func.regions[0].blocks[0].args]
    floats = st.floats(-100, 100, width=32, allow_subnormal=False)

    @settings(max_examples=examples, deadline=None, database=None)
    @given(st.tuples(*(hnp.arrays(np.float32, shape, elements=floats) for shape in shapes)))
    def check(inputs) -> None:
        expected, actual = run_function(before, list(inputs)), run_function(after, list(inputs))
        for e, a in zip(expected, actual):
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4)

    check()
    return after_text


def _run(text: str, driver: str) -> str:
    module = parse(text)
    PassManager(parse_pipeline(f"builtin.module({DRIVERS[driver]})")).run(module)
    return print_ir(module)


def _ops(text: str, name: str) -> int:
    return text.count(f'"tf.{name}"')


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("version", ["", "V2", "V3"])
def test_conv_batchnorm_folds_into_the_filter(driver: str, version: str) -> None:
    out = assert_folds_soundly(_conv_bn(version), driver)
    assert _ops(out, "FusedBatchNorm" + version) == 0 and _ops(out, "Mul") == 0, out
    assert _ops(out, "Conv2D") == 1 and _ops(out, "BiasAdd") == 1, out


@pytest.mark.parametrize("driver", DRIVERS)
def test_depthwise_with_bias_folds(driver: str) -> None:
    """Greedy: the scale goes through the existing bias (mul-of-biasadd) into the depthwise
    filter (channel c * multiplier + m), and the two biases become one. On the e-graph driver
    the FusedBatchNorm rules are greedy-only (they must see that the statistics are unused),
    so they run after extraction and the Mul they leave is not folded in the same pass."""
    out = assert_folds_soundly(DEPTHWISE_BN, driver)
    assert _ops(out, "FusedBatchNorm") == 0 and _ops(out, "DepthwiseConv2dNative") == 1, out
    assert (_ops(out, "Mul"), _ops(out, "BiasAdd")) == ((0, 1) if driver == "greedy" else (1, 2)), out


@pytest.mark.parametrize("driver", DRIVERS)
def test_keras_batchnorm_after_dense_folds(driver: str) -> None:
    out = assert_folds_soundly(KERAS_DENSE, driver)
    for gone in ("Rsqrt", "Sub", "Mul"):
        assert _ops(out, gone) == 0, out
    # The shift joins the Dense bias (addv2-of-biasadd). On the e-graph it does not match when
    # both ops were built by rules (as biasadd-of-biasadd): an engine gap, reported with the slice.
    adds = (_ops(out, "BiasAdd"), _ops(out, "AddV2"))
    assert _ops(out, "MatMul") == 1 and adds == ((1, 0) if driver == "greedy" else (1, 1)), out


@pytest.mark.parametrize("driver", DRIVERS)
def test_training_mode_is_not_folded(driver: str) -> None:
    out = _run(_conv_bn("V3", training="true"), driver)
    assert _ops(out, "FusedBatchNormV3") == 1 and _ops(out, "BiasAdd") == 0, out


@pytest.mark.parametrize("driver", DRIVERS)
def test_not_folded_when_the_batch_statistics_are_read(driver: str) -> None:
    """Another result of the op is used: the op stays, and y is not rebuilt beside it (the
    e-graph keeps the op because it is needed anyway; the greedy form checks the uses)."""
    out = _run(_conv_bn("V3", returned=f"%r, %y#1 : {_T}, tensor<3xf32>"), driver)
    assert _ops(out, "FusedBatchNormV3") == 1 and _ops(out, "BiasAdd") == 0, out


def test_greedy_forms_are_declared_greedy_only() -> None:
    rules = rule_set("tf-batchnorm-folding")
    assert {r.name for r in rules.greedy_rules} == {f"fused-batchnorm{v}-{form}" for v in ("", "-v2", "-v3")
                                                    for form in ("inference", "into-conv2d",
                                                                 "into-depthwiseconv2dnative")}
    assert all("approx" in r.tags for r in rules.rules)


def test_weights_scale_per_output_channel() -> None:
    """The natives scale the right axis of each weight layout (checked on arrays, so a
    transposed MatMul or a depthwise multiplier cannot pass by symmetry)."""
    from egraft.ir.core import attributes as A
    from egraft.patterns.grappler.batchnorm import _dense, _scaled_filter

    def const(arr: np.ndarray) -> A.Attribute:
        return _dense(np.asarray(arr, np.float32))

    k = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    depthwise = np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2) + 1  # in = 2, multiplier = 2
    got = _scaled_filter("depthwise")(const(depthwise), const(k), A.StringAttr("NHWC")).to_numpy()
    assert np.array_equal(got, depthwise * k.reshape(2, 2))
    w_t = np.arange(12, dtype=np.float32).reshape(4, 3)  # [out, in]
    got = _scaled_filter("first")(const(w_t), const(k), None).to_numpy()
    assert np.array_equal(got, w_t * k[:, None])
    wrong = const(np.ones(3, np.float32))  # not one per channel: refused
    assert _scaled_filter("last2")(const(np.ones((3, 4), np.float32)), wrong, None) is None


@pytest.mark.tf
def test_keras_conv_batchnorm_model_agrees_in_tensorflow() -> None:
    """A small Keras model (Conv2D, DepthwiseConv2D, Dense, each followed by BatchNormalization
    with random, non-trivial moving statistics), frozen to a GraphDef, through the
    tf_executor path with the set on the e-graph driver: every BatchNorm is folded and
    TensorFlow computes the same outputs before and after (rtol 1e-4)."""
    tf = pytest.importorskip("tensorflow")

    from egraft.ir.graphdef.export_graphdef import export_graphdef
    from egraft.ir.graphdef.import_graphdef import import_graphdef
    from egraft.passes.tf.executor_to_tfg import executor_to_tfg
    from egraft.passes.tf.tfg_to_executor import tfg_to_executor

    keras = tf.keras
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    inputs = keras.Input((8, 8, 3), batch_size=2)
    h = keras.layers.Conv2D(4, 3, padding="same", use_bias=False)(inputs)
    h = keras.layers.ReLU()(keras.layers.BatchNormalization()(h))
    h = keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2)(h)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    outputs = keras.layers.BatchNormalization()(keras.layers.Dense(5)(h))
    model = keras.Model(inputs, outputs)
    randomize_batchnorms(model, rng)
    graph, feed, fetch = frozen(model, (2, 8, 8, 3))

    module = tfg_to_executor(import_graphdef(graph, "keras_bn"))
    PassManager(parse_pipeline("builtin.module(func.func(tf-executor-island-coarsening, "
                               "canonicalize{rules=tf-canonical,tf-constant-folding,tf-batchnorm-folding}))")).run(module)
    folded = tf.compat.v1.GraphDef.FromString(export_graphdef(executor_to_tfg(module)).SerializeToString())
    ops_before = [n.op for n in graph.node]
    ops_after = [n.op for n in folded.node]
    assert ops_before.count("Rsqrt") == 3 and "Rsqrt" not in ops_after, ops_after
    assert ops_after.count("Mul") == 0 and ops_after.count("BiasAdd") <= ops_before.count("BiasAdd") + 2, ops_after

    for seed in range(3):
        x = np.random.default_rng(seed).normal(0, 1, (2, 8, 8, 3)).astype(np.float32)
        np.testing.assert_allclose(run_graph(folded, feed, fetch, x), run_graph(graph, feed, fetch, x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("driver", DRIVERS)
def test_shift_of_rank_four_joins_a_convolution_bias(driver: str) -> None:
    """Keras's resnet50 reshapes its BatchNorm shift to (1, 1, 1, C): after a convolution (4-D)
    the AddV2 of it joins the BiasAdd; after a rank-unknown BiasAdd input it must not (the add
    could raise the rank)."""
    text = ("func.func @f(%x: tensor<1x4x4x2xf32>, %y: tensor<*xf32>) -> (tensor<*xf32>, tensor<*xf32>) {\n"
            + _const("w", "[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.125]]]]",
                     "1x2x2x3")
            + _const("b", "[0.1, -0.2, 0.3]", "3") + _const("c", "[[[[1.0, 2.0, -3.0]]]]", "1x1x1x3")
            + f'  %k = "tf.Conv2D"(%x, %w) {{strides = [1, 1, 1, 1], {_CONV}}} : (tensor<1x4x4x2xf32>, '
              f'tensor<1x2x2x3xf32>) -> tensor<*xf32>\n'
            + '  %p = "tf.BiasAdd"(%k, %b) {data_format = "NHWC"} : (tensor<*xf32>, tensor<3xf32>) -> tensor<*xf32>\n'
            + '  %r = "tf.AddV2"(%p, %c) : (tensor<*xf32>, tensor<1x1x1x3xf32>) -> tensor<*xf32>\n'
            + '  %q = "tf.BiasAdd"(%y, %b) {data_format = "NHWC"} : (tensor<*xf32>, tensor<3xf32>) -> tensor<*xf32>\n'
            + '  %s = "tf.AddV2"(%q, %c) : (tensor<*xf32>, tensor<1x1x1x3xf32>) -> tensor<*xf32>\n'
            + "  return %r, %s : tensor<*xf32>, tensor<*xf32>\n}\n")
    module = parse(text)
    before = run_function(module, [np.ones((1, 4, 4, 2), np.float32), np.ones((2, 3), np.float32)])
    out = _run(text, driver)
    assert _ops(out, "AddV2") == 1 and '"tf.AddV2"(%2' in out, out  # the unknown-rank one stays
    after = run_function(parse(out), [np.ones((1, 4, 4, 2), np.float32), np.ones((2, 3), np.float32)])
    for e, a in zip(before, after):
        assert e.shape == a.shape
        np.testing.assert_allclose(a, e, rtol=1e-6)
