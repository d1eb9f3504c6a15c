"""The interpreter's Conv2D, DepthwiseConv2dNative and FusedBatchNorm (inference) against
TensorFlow's CPU kernels, over strides, dilations, paddings and channel multipliers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import parse
from egraft.ir.semantics import Undefined, differences, run_function

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf


def _t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def _run(op: str, attrs: str, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    module = parse(f'func.func @f(%x: {_t(x.shape)}, %w: {_t(w.shape)}) -> tensor<*xf32> {{\n'
                   f'  %0 = "tf.{op}"(%x, %w) {{{attrs}}} : ({_t(x.shape)}, {_t(w.shape)}) -> tensor<*xf32>\n'
                   f'  return %0 : tensor<*xf32>\n}}')
    return run_function(module, [x, w])[0]


_CONV = st.tuples(st.integers(1, 2), st.integers(1, 6), st.integers(1, 6), st.integers(1, 3), st.integers(1, 3),
                  st.integers(1, 3), st.integers(1, 3), st.sampled_from(["SAME", "VALID", "EXPLICIT"]),
                  st.integers(1, 2), st.integers(1, 2), st.integers(1, 3))


@settings(max_examples=40, deadline=None)
@given(_CONV, st.booleans())
def test_convolutions_against_tensorflow(params, depthwise):
    n, h, w_, kh, kw, cin, cout, padding, stride, dilation, mult = params
    if depthwise:
        dilation = 1  # TF's CPU depthwise kernel implements no dilations
    rng = np.random.default_rng(h * 31 + w_)
    x = rng.standard_normal((n, h, w_, cin)).astype(np.float32)
    filt = rng.standard_normal((kh, kw, cin, mult if depthwise else cout)).astype(np.float32)
    explicit = [0, 0, 1, 0, 0, 2, 0, 0] if padding == "EXPLICIT" else []
    strides, dilations = [1, stride, stride, 1], [1, dilation, dilation, 1]
    attrs = (f'strides = [1, {stride}, {stride}, 1], dilations = [1, {dilation}, {dilation}, 1], '
             f'padding = "{padding}", explicit_paddings = {explicit}')
    op = "DepthwiseConv2dNative" if depthwise else "Conv2D"
    try:
        theirs = getattr(tf.raw_ops, op)(input=x, filter=filt, strides=strides, padding=padding,
                                         explicit_paddings=explicit, dilations=dilations)
    except tf.errors.InvalidArgumentError:  # the window does not fit: undefined for us too
        with pytest.raises(Undefined):
            _run(op, attrs, x, filt)
        return
    ours = _run(op, attrs, x, filt)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("version", ["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"])
def test_fused_batch_norm_inference_against_tensorflow(version):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)
    scale, offset, mean = (rng.standard_normal(4).astype(np.float32) for _ in range(3))
    variance = rng.uniform(0.1, 2.0, 4).astype(np.float32)
    c = "tensor<4xf32>"
    extra = ", tensor<*xf32>" if version == "FusedBatchNormV3" else ""
    module = parse(f'func.func @f(%x: {_t(x.shape)}, %s: {c}, %o: {c}, %m: {c}, %v: {c}) -> tensor<*xf32> {{\n'
                   f'  %0:{6 if extra else 5} = "tf.{version}"(%x, %s, %o, %m, %v) '
                   f'{{epsilon = 0.001 : f32, is_training = false}} : ({_t(x.shape)}, {c}, {c}, {c}, {c}) -> '
                   f'(tensor<*xf32>, {c}, {c}, {c}, {c}{extra})\n'
                   f'  return %0#0 : tensor<*xf32>\n}}')
    ours = run_function(module, [x, scale, offset, mean, variance])
    theirs = getattr(tf.raw_ops, version)(x=x, scale=scale, offset=offset, mean=mean, variance=variance,
                                          epsilon=0.001, is_training=False)
    assert not differences([theirs[0].numpy()], ours, exact=False)
