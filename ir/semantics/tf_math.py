"""Semantics of TensorFlow's math ops: element-wise, reductions, matrix products, softmax.

TensorFlow broadcasts as numpy does (its `BCast` implements the same rule), and
every op here keeps its operands' dtype, so numpy on the storage dtypes gives
TF's results: integers wrap in two's complement, floats are IEEE.  Shapes that
do not broadcast, or arguments TF rejects at run time, raise `Undefined` ("the
graph fails on this input").  Results that may differ from TF's kernels in the
last bits (reductions, matmul, sigmoid, softmax: summation order and
approximations) are why float rules are compared with a tolerance unless they
claim exactness; `tests/semantics/test_tf_crosscheck.py` compares against TF.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.values import Undefined, Unsupported, storage_dtype


def result_dtype(op: Operation, i: int = 0) -> np.dtype:
    return storage_dtype(T.element_type(op.results[i].type))


def broadcast(*arrays: np.ndarray) -> list[np.ndarray]:
    """TF's (= numpy's) broadcasting; incompatible shapes fail at run time."""
    try:
        return list(np.broadcast_arrays(*arrays))
    except ValueError as e:
        raise Undefined(f"shapes do not broadcast: {[a.shape for a in arrays]}") from e


def flag(op: Operation, name: str) -> bool:
    attr = op.attr(name)
    if attr is None and op.opdef is not None:
        attr = next((a.default for a in op.opdef.attributes if a.name == name), None)
    return bool(attr is not None and isinstance(attr, A.IntegerAttr) and attr.value)


def _float_only(op: Operation, x: np.ndarray) -> None:
    if x.dtype.kind not in "fV":
        raise Unsupported(f"{op.name} on {x.dtype}")


def _binary(fn: Callable[[np.ndarray, np.ndarray], Any], floats_only: bool = False):
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        a, b = broadcast(args[0], args[1])
        if floats_only:
            _float_only(op, a)
        return np.asarray(fn(a, b)).astype(result_dtype(op), copy=False)
    return run


def _unary(fn: Callable[[np.ndarray], Any], floats_only: bool = False):
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        if floats_only:
            _float_only(op, args[0])
        return np.asarray(fn(args[0])).astype(result_dtype(op), copy=False)
    return run


def _int_div(floor: bool):
    """FloorDiv/FloorMod on integers: division by zero is a run-time error in TF."""
    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind in "iu" and (b == 0).any():
            raise Undefined("integer division by zero")
        return np.floor_divide(a, b) if floor else np.mod(a, b)
    return run


def _relu6(x: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(x, 0), 6)  # NaN stays NaN, as TF's Relu6 on CPU


def _invert(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind not in "iu":
        raise Undefined(f"Invert is defined on integers, not {x.dtype}")
    return np.invert(x)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function element-wise (math.erf in float64, rounded to x's type)."""
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype, copy=False)


def erfc(x: np.ndarray) -> np.ndarray:
    """1 - erf(x) element-wise, computed directly (math.erfc: no cancellation for large x)."""
    return np.vectorize(math.erfc, otypes=[np.float64])(x).astype(x.dtype, copy=False)


_BINARY = {
    "tf.Add": (np.add, False), "tf.AddV2": (np.add, False), "tf.Sub": (np.subtract, False),
    "tf.Mul": (np.multiply, False), "tf.RealDiv": (np.divide, True), "tf.Div": (np.divide, True),
    "tf.Maximum": (np.maximum, False), "tf.Minimum": (np.minimum, False),
    "tf.SquaredDifference": (lambda a, b: (a - b) * (a - b), False), "tf.Pow": (np.power, True),
    "tf.FloorDiv": (_int_div(True), False), "tf.FloorMod": (_int_div(False), False),
    "tf.Less": (np.less, False), "tf.LessEqual": (np.less_equal, False),
    "tf.Greater": (np.greater, False), "tf.GreaterEqual": (np.greater_equal, False),
    "tf.Equal": (np.equal, False), "tf.NotEqual": (np.not_equal, False),
    "tf.LogicalAnd": (np.logical_and, False), "tf.LogicalOr": (np.logical_or, False),
    "tf.MulNoNan": (lambda a, b: np.where(b == 0, np.zeros_like(a), a * b), True),
    "tf.Xdivy": (lambda a, b: np.where(a == 0, np.zeros_like(a), a / b), True),
}
_UNARY = {
    "tf.Neg": (np.negative, False), "tf.Abs": (np.abs, False), "tf.Square": (lambda x: x * x, False),
    "tf.Relu": (lambda x: np.maximum(x, 0), False), "tf.Relu6": (_relu6, False),
    "tf.Sigmoid": (lambda x: 1 / (1 + np.exp(-x)), True), "tf.Sqrt": (np.sqrt, True),
    "tf.Rsqrt": (lambda x: 1 / np.sqrt(x), True), "tf.Reciprocal": (lambda x: 1 / x, True),
    "tf.Inv": (lambda x: 1 / x, True), "tf.Exp": (np.exp, True), "tf.Log": (np.log, True),
    "tf.Tanh": (np.tanh, True), "tf.Floor": (np.floor, True), "tf.Ceil": (np.ceil, True),
    "tf.LogicalNot": (np.logical_not, False), "tf.Sign": (np.sign, False),
    "tf.ZerosLike": (np.zeros_like, False), "tf.OnesLike": (np.ones_like, False),
    "tf.Conj": (np.conj, False), "tf.Invert": (_invert, False),
    "tf.Erf": (lambda x: erf(x), True), "tf.Erfc": (lambda x: erfc(x), True),
}
for _name, (_fn, _floats) in _BINARY.items():
    evaluator(_name)(_binary(_fn, _floats))
for _name, (_fn, _floats) in _UNARY.items():
    evaluator(_name)(_unary(_fn, _floats))


@evaluator("tf.AddN")
def _add_n(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    """Inputs must have one shape (AddN does not broadcast); summed left to right."""
    if any(a.shape != args[0].shape for a in args):
        raise Undefined("AddN of differently shaped inputs")
    total = args[0]
    for a in args[1:]:
        total = total + a
    return np.asarray(total, result_dtype(op))


@evaluator("tf.BiasAdd")
def _bias_add(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    value, bias = args
    nchw = getattr(op.attr("data_format"), "value", "NHWC") == "NCHW"
    if value.ndim < 2 or bias.ndim != 1:
        raise Undefined("BiasAdd needs a value of rank >= 2 and a 1-D bias")
    channel = 1 if nchw else value.ndim - 1
    if bias.shape[0] != value.shape[channel]:
        raise Undefined("BiasAdd: bias size differs from the channel dimension")
    shape = [1] * value.ndim
    shape[channel] = bias.shape[0]
    return np.asarray(value + bias.reshape(shape), value.dtype)


def _matmul(x: np.ndarray, y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if x.shape[-1] != y.shape[-2]:
        raise Undefined(f"matmul of {x.shape} and {y.shape}")
    try:
        return np.asarray(np.matmul(x, y), dtype)
    except ValueError as e:
        raise Undefined(str(e)) from e


@evaluator("tf.MatMul")
def _mat_mul(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    a, b = args
    if a.ndim != 2 or b.ndim != 2:
        raise Undefined("MatMul needs matrices")
    a = a.T if flag(op, "transpose_a") else a
    b = b.T if flag(op, "transpose_b") else b
    return _matmul(a, b, result_dtype(op))


@evaluator("tf.BatchMatMul", "tf.BatchMatMulV2", "tf.BatchMatMulV3")
def _batch_mat_mul(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x, y = args
    if x.ndim < 2 or y.ndim < 2:
        raise Undefined("BatchMatMul needs rank >= 2")
    if op.name == "tf.BatchMatMul" and x.shape[:-2] != y.shape[:-2]:
        raise Undefined("BatchMatMul (v1) does not broadcast batch dimensions")
    x = np.swapaxes(x, -1, -2).conj() if flag(op, "adj_x") else x
    y = np.swapaxes(y, -1, -2).conj() if flag(op, "adj_y") else y
    return _matmul(x, y, result_dtype(op))


def reduction_axes(indices: np.ndarray, rank: int) -> tuple[int, ...]:
    """TF's reduction indices: scalar or 1-D, negative from the end, in range, no duplicates."""
    axes = [int(i) for i in np.asarray(indices).reshape(-1)]
    if any(not -rank <= i < max(rank, 1) for i in axes):
        raise Undefined(f"reduction index out of range for rank {rank}")
    norm = tuple(i % rank if rank else 0 for i in axes)
    if len(set(norm)) != len(norm):
        raise Undefined("duplicate reduction index")
    return norm if rank else ()


def _reduction(fn: Callable[..., np.ndarray], name: str):
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        x, indices = args
        axes = reduction_axes(indices, x.ndim)
        keep = flag(op, "keep_dims")
        if name == "Mean":
            count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
            if x.dtype.kind in "iu":
                if count == 0:
                    raise Undefined("integer Mean of no elements")
                total = np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype)
                out = np.where(total < 0, -((-total) // count), total // count)  # C++ truncation
            else:
                out = np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype) / x.dtype.type(count)
        elif name in ("Max", "Min") and any(x.shape[a] == 0 for a in axes) and x.dtype.kind in "iu":
            raise Undefined("integer Max/Min of no elements has no identity in numpy")
        elif name in ("Max", "Min") and any(x.shape[a] == 0 for a in axes):
            identity = -np.inf if name == "Max" else np.inf
            out = fn(x, axis=axes, keepdims=keep, initial=identity)
        else:
            out = fn(x, axis=axes, keepdims=keep, **({} if name in ("Max", "Min", "All", "Any") else {"dtype": x.dtype}))
        return np.asarray(out, result_dtype(op))
    return run


for _name, _fn in {"Sum": np.sum, "Mean": np.sum, "Prod": np.prod, "Max": np.max, "Min": np.min,
                   "All": np.all, "Any": np.any}.items():
    evaluator(f"tf.{_name}")(_reduction(_fn, _name))


@evaluator("tf.Softmax")
def _softmax(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x = args[0]
    _float_only(op, x)
    if x.ndim < 1:
        raise Undefined("Softmax needs rank >= 1")
    shifted = x - np.max(x, axis=-1, keepdims=True) if x.shape[-1] else x
    e = np.exp(shifted)
    # Plain IEEE division, as TF 2.21's CPU kernel computes it (checked in test_tf_crosscheck):
    # a +Inf logit makes the row's sum NaN, and then every entry of the row is NaN, 0 / NaN too.
    return np.asarray(e / np.sum(e, axis=-1, keepdims=True), x.dtype)


@evaluator("tf.LogSoftmax")
def _log_softmax(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    """x - max - log(sum(exp(x - max))): finite where Softmax underflows to 0 (TF's kernel)."""
    x = args[0]
    _float_only(op, x)
    if x.ndim < 1:
        raise Undefined("LogSoftmax needs rank >= 1")
    if not x.shape[-1]:
        return x
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return np.asarray(shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True)), x.dtype)


@evaluator("tf.Bitcast")
def _bitcast(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    """The same bytes (row-major, little-endian) read as the result's element type: a wider
    input gains a last dimension of width ratio, a narrower one loses its last (which must be
    the ratio). Booleans are not bitcast by TF."""
    x, out = args[0], result_dtype(op)
    if x.dtype == np.bool_ or out == np.bool_:
        raise Unsupported("Bitcast of bool")
    a, b = x.dtype.itemsize, out.itemsize
    if a == b:
        return x.view(out)
    if a > b:
        return np.ascontiguousarray(x).view(out).reshape(x.shape + (a // b,))
    if not x.shape or x.shape[-1] != b // a:
        raise Undefined(f"Bitcast of {x.shape} {x.dtype} to {out}")
    return np.ascontiguousarray(x).view(out).reshape(x.shape[:-1])
