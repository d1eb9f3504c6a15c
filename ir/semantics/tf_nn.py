"""Semantics of TensorFlow's neural-network ops: `Conv2D`, `DepthwiseConv2dNative` and
`FusedBatchNorm` (V1-V3) in inference mode.

The convolutions are computed as TF defines them: SAME padding puts the odd pixel after
(`pad_before = total // 2`), EXPLICIT reads `explicit_paddings`, dilations space the taps,
and a depthwise filter `[H, W, in, multiplier]` writes channel `c * multiplier + m`.  They
sum kernel taps in a different order than TF's kernels, so rules over them are compared
with a tolerance; tests/semantics/test_tf_nn_crosscheck.py compares against TF.

FusedBatchNorm with `is_training = false` computes y = (x - mean) * (scale * rsqrt(variance
+ epsilon)) + offset as TF's CPU kernel does; the batch mean and variance outputs echo the
`mean` and `variance` operands there.  The reserve spaces are scratch TF leaves
uninitialized (their contents differ between runs), so they are NaN here: no rule may
replace them by a value.  Training mode (batch statistics) is not modelled.
"""

from __future__ import annotations

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.tf_math import flag
from egraft.ir.semantics.values import Undefined, Unsupported


def _ints(op: Operation, name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    attr = op.attr(name)
    if not isinstance(attr, A.ArrayAttr):
        return default
    return tuple(int(a.value) for a in attr.value)  # type: ignore[attr-defined]


def _string(op: Operation, name: str, default: str) -> str:
    attr = op.attr(name)
    return attr.value if isinstance(attr, A.StringAttr) else default


def _pads(op: Operation, size: int, kernel: int, stride: int, dilation: int, axis: int) -> tuple[int, int, int]:
    """(pad before, pad after, output size) of one spatial axis, as TF's GetWindowedOutputSize."""
    effective = (kernel - 1) * dilation + 1
    padding = _string(op, "padding", "VALID")
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + effective - size, 0)
        return total // 2, total - total // 2, out
    before = after = 0
    if padding == "EXPLICIT":
        explicit = _ints(op, "explicit_paddings", ())
        if len(explicit) != 8:
            raise Undefined("EXPLICIT padding needs 8 explicit_paddings")
        before, after = explicit[2 * axis], explicit[2 * axis + 1]
    span = size + before + after - effective + stride
    out = abs(span) // stride * (1 if span >= 0 else -1)  # C++ division truncates toward zero
    if out < 0:
        raise Undefined("the window is larger than the padded input")
    return before, after, out


def _windows(op: Operation, x: np.ndarray, kh: int, kw: int):
    """Yield (tap row, tap column, the NHWC input slice that tap multiplies) for every tap.

    The slices are strided views of the padded input, one per kernel tap, so the
    convolution is kh * kw vectorized products: no loop per pixel."""
    nchw = _string(op, "data_format", "NHWC") == "NCHW"
    if x.ndim != 4:
        raise Undefined(f"{op.name} needs a 4-D input")
    x = np.moveaxis(x, 1, 3) if nchw else x
    strides, dilations = _ints(op, "strides", (1, 1, 1, 1)), _ints(op, "dilations", (1, 1, 1, 1))
    if len(strides) != 4 or len(dilations) != 4:
        raise Undefined("strides and dilations have 4 entries")
    (sh, sw), (dh, dw) = (strides[2:], dilations[2:]) if nchw else (strides[1:3], dilations[1:3])
    if strides[0] != 1 or strides[3 if not nchw else 1] != 1 or min(sh, sw, dh, dw) < 1:
        raise Undefined("strides and dilations: 1 on the batch and channel axes, positive elsewhere")
    top, bottom, oh = _pads(op, x.shape[1], kh, sh, dh, 2 if nchw else 1)
    left, right, ow = _pads(op, x.shape[2], kw, sw, dw, 3 if nchw else 2)
    padded = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    for i in range(kh):
        for j in range(kw):
            yield i, j, padded[:, _taps(i * dh, oh, sh), _taps(j * dw, ow, sw), :]


def _taps(start: int, count: int, stride: int) -> slice:
    """The `count` positions one kernel tap reads along an axis (none when the output is empty)."""
    return slice(start, start + (count - 1) * stride + 1, stride) if count > 0 else slice(0, 0)


def _result(op: Operation, out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    nchw = _string(op, "data_format", "NHWC") == "NCHW"
    return np.asarray(np.moveaxis(out, 3, 1) if nchw else out, dtype)


def _float_input(op: Operation, x: np.ndarray, w: np.ndarray) -> None:
    if x.dtype.kind != "f" or w.dtype != x.dtype:
        raise Unsupported(f"{op.name} on {x.dtype} and {w.dtype}")
    if w.ndim != 4:
        raise Undefined(f"{op.name} needs a 4-D filter")


@evaluator("tf.Conv2D")
def _conv2d(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x, w = args
    _float_input(op, x, w)
    kh, kw, cin, cout = w.shape
    out = None
    for i, j, window in _windows(op, x, kh, kw):
        if window.shape[3] != cin:  # grouped convolutions are not modelled
            raise Undefined(f"Conv2D: {window.shape[3]} input channels, the filter has {cin}")
        tap = np.tensordot(window, w[i, j], axes=([3], [0]))
        out = tap if out is None else out + tap
    if out is None:
        raise Undefined("Conv2D with an empty filter")
    return _result(op, out, x.dtype)


@evaluator("tf.DepthwiseConv2dNative")
def _depthwise(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x, w = args
    _float_input(op, x, w)
    kh, kw, cin, mult = w.shape
    out = None
    for i, j, window in _windows(op, x, kh, kw):
        if window.shape[3] != cin:
            raise Undefined(f"DepthwiseConv2dNative: {window.shape[3]} input channels, the filter has {cin}")
        tap = (window[..., :, None] * w[i, j]).reshape(*window.shape[:3], cin * mult)  # channel c*mult+m
        out = tap if out is None else out + tap
    if out is None:
        raise Undefined("DepthwiseConv2dNative with an empty filter")
    return _result(op, out, x.dtype)


@evaluator("tf.FusedBatchNorm", "tf.FusedBatchNormV2", "tf.FusedBatchNormV3")
def _fused_batch_norm(interp: Interpreter, op: Operation, args: list) -> list[np.ndarray]:
    x, scale, offset, mean, variance = args
    if flag(op, "is_training"):  # absent means the default, true
        raise Unsupported("FusedBatchNorm in training mode (batch statistics)")
    layout = _string(op, "data_format", "NHWC")
    if x.ndim != len(layout) or x.dtype.kind != "f":
        raise Undefined(f"{op.name}: a float input of rank {len(layout)} for {layout}")
    channel = layout.index("C")
    c = x.shape[channel]
    if any(p.ndim != 1 or p.shape[0] != c for p in (scale, offset, mean, variance)):
        raise Undefined(f"{op.name}: scale, offset, mean and variance must have the {c} channels of x")
    eps = np.float32(op.attr("epsilon").value) if op.attr("epsilon") is not None else np.float32(0.0001)
    shape = [1] * x.ndim
    shape[channel] = c
    stats = mean.dtype
    factor = (scale / np.sqrt(variance + eps.astype(stats))).astype(stats)
    y = (x.astype(stats) - mean.reshape(shape)) * factor.reshape(shape) + offset.reshape(shape)
    reserve = np.full((c,), np.nan, stats)
    outs = [np.asarray(y, x.dtype), mean, variance, reserve, reserve]
    if op.name == "tf.FusedBatchNormV3":
        outs.append(np.full((), np.nan, stats))
    return outs
