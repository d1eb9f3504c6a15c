"""Semantics of TensorFlow's fused kernels (`_FusedConv2D`, `_FusedDepthwiseConv2dNative`,
`_FusedMatMul`, `_FusedBatchNormEx` in inference mode) and of the activations they apply
(`Elu` and `LeakyRelu` as ops too: the remapper's sources).

A fused op computes its contraction (the interpreter's Conv2D, DepthwiseConv2dNative or
MatMul, which read the same attribute names), then each entry of `fused_ops` in order:
`BiasAdd` adds `args[0]` along the channel axis of `data_format`; `FusedBatchNorm` is the
inference BatchNorm with `args` = scale, offset, mean, variance and the op's `epsilon`;
an activation applies element-wise (LeakyRelu with `leakyrelu_alpha`). TensorFlow's CPU
kernels apply the bias and activation in the contraction's output loop in the same float
arithmetic, so the results agree with the unfused ops' to rounding; the BatchNorm is
computed there as x * (scale * rsqrt(variance + epsilon)) + (offset - mean * that), which
regroups the unfused op's rounding. tests/grappler/test_remapper.py compares against
TensorFlow's kernels. A `fused_ops` list the kernels do not implement is `Undefined` (TF
fails at run time), and `num_args` must count the args.
"""

from __future__ import annotations

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import EVALUATORS, Interpreter, evaluator
from egraft.ir.semantics.tf_math import erfc, result_dtype
from egraft.ir.semantics.values import Undefined, Unsupported


def _elu(x: np.ndarray) -> np.ndarray:
    return np.where(x < 0, np.expm1(np.minimum(x, 0)), x).astype(x.dtype, copy=False)


def _leaky(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x > 0, x, x * x.dtype.type(alpha)).astype(x.dtype, copy=False)


def _alpha(op: Operation, name: str) -> float:
    attr = op.attr(name)
    return float(attr.value) if isinstance(attr, A.FloatAttr) else 0.2


ACTIVATIONS = {
    "Relu": lambda x, a: np.maximum(x, 0).astype(x.dtype, copy=False),
    "Relu6": lambda x, a: np.minimum(np.maximum(x, 0), 6).astype(x.dtype, copy=False),
    "Elu": lambda x, a: _elu(x),
    "LeakyRelu": _leaky,
    "Tanh": lambda x, a: np.tanh(x).astype(x.dtype, copy=False),
    "Sigmoid": lambda x, a: (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False),
    "GeluExact": lambda x, a: (0.5 * x * erfc(-x * x.dtype.type(0.7071067811865476))).astype(x.dtype, copy=False),
    "_MklSwish": lambda x, a: (x * (1 / (1 + np.exp(-x)))).astype(x.dtype, copy=False),
}
"""Element-wise activations by their name in `fused_ops` (and as ops), given the slope."""


@evaluator("tf.Elu")
def _elu_op(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    if args[0].dtype.kind != "f":
        raise Unsupported(f"Elu on {args[0].dtype}")
    return _elu(args[0])


@evaluator("tf.LeakyRelu")
def _leaky_op(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    if args[0].dtype.kind != "f":
        raise Unsupported(f"LeakyRelu on {args[0].dtype}")
    return _leaky(args[0], _alpha(op, "alpha"))


def _strings(op: Operation, name: str) -> tuple[str, ...]:
    attr = op.attr(name)
    if not isinstance(attr, A.ArrayAttr) or not all(isinstance(s, A.StringAttr) for s in attr.value):
        return ()
    return tuple(s.value for s in attr.value)  # type: ignore[attr-defined]


def _bias(op: Operation, y: np.ndarray, bias: np.ndarray) -> np.ndarray:
    nchw = getattr(op.attr("data_format"), "value", "NHWC") == "NCHW"
    channel = 1 if nchw else y.ndim - 1
    if bias.ndim != 1 or bias.shape[0] != y.shape[channel] or bias.dtype != y.dtype:
        raise Undefined(f"{op.name}: the bias must be 1-D with the output's {y.shape[channel]} channels")
    shape = [1] * y.ndim
    shape[channel] = bias.shape[0]
    return y + bias.reshape(shape)


def _batch_norm(interp: Interpreter, op: Operation, y: np.ndarray, args: list) -> np.ndarray:
    """The inference BatchNorm of tf_nn.py's evaluator, with this op's epsilon and layout."""
    return EVALUATORS["tf.FusedBatchNorm"](interp, op, [y, *args])[0]


def _fused(contraction: str, heads: tuple[str, ...]):
    """The evaluator of a fused op: `contraction`'s, then fused_ops (whose first entry is one
    of `heads`, then at most one activation)."""
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        fused = _strings(op, "fused_ops")
        count = getattr(op.attr("num_args"), "value", None)
        extra = args[2:]
        if count != len(extra):
            raise Undefined(f"{op.name}: num_args is {count}, with {len(extra)} args")
        if not fused or fused[0] not in heads or len(fused) > 2 or (len(fused) == 2 and fused[1] not in ACTIVATIONS):
            raise Undefined(f"{op.name}: fused_ops {list(fused)} is not implemented")
        if len(extra) != (1 if fused[0] == "BiasAdd" else 4):
            raise Undefined(f"{op.name}: {fused[0]} takes {1 if fused[0] == 'BiasAdd' else 4} args")
        y = EVALUATORS[contraction](interp, op, args[:2])
        y = _bias(op, y, extra[0]) if fused[0] == "BiasAdd" else _batch_norm(interp, op, y, extra)
        if len(fused) == 2:
            y = ACTIVATIONS[fused[1]](y, _alpha(op, "leakyrelu_alpha"))
        return np.asarray(y, result_dtype(op))
    return run


evaluator("tf._FusedConv2D")(_fused("tf.Conv2D", ("BiasAdd", "FusedBatchNorm")))
evaluator("tf._FusedDepthwiseConv2dNative")(_fused("tf.DepthwiseConv2dNative", ("BiasAdd", "FusedBatchNorm")))
evaluator("tf._FusedMatMul")(_fused("tf.MatMul", ("BiasAdd",)))


@evaluator("tf._FusedBatchNormEx")
def _batch_norm_ex(interp: Interpreter, op: Operation, args: list) -> list[np.ndarray]:
    """FusedBatchNormV3 in inference mode, plus the side input, then activation_mode."""
    mode = getattr(op.attr("activation_mode"), "value", "Identity")
    if mode != "Identity" and mode not in ACTIVATIONS:
        raise Undefined(f"_FusedBatchNormEx: activation_mode {mode} is not implemented")
    x, stats, side = args[0], args[1:5], args[5:]
    outs = list(EVALUATORS["tf.FusedBatchNormV3"](interp, op, [x, *stats]))
    outs += [np.full((), np.nan, outs[1].dtype)] * (6 - len(outs))  # V3's third reserve space
    y = outs[0]
    for s in side:
        if s.shape != y.shape:
            raise Undefined("_FusedBatchNormEx: the side input must have y's shape")
        y = y + s
    outs[0] = ACTIVATIONS[mode](y, 0.2) if mode != "Identity" else y
    return outs


@evaluator("tf._MklSwish")
def _mkl_swish(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    """oneDNN's swish, x * sigmoid(x) (Grappler's remapper makes it of Mul(x, Sigmoid(x)))."""
    x = args[0]
    if x.dtype.kind != "f":
        raise Unsupported(f"_MklSwish on {x.dtype}")
    return (x * (1 / (1 + np.exp(-x)))).astype(x.dtype, copy=False)
