"""Semantics of TensorFlow's array ops: constants, identities, shape manipulation, casts, select.

Shape operands (`Reshape`'s shape, `Transpose`'s perm, axes, paddings) are
read from their runtime values, so a rule that rewrites them is checked too.
Whatever TensorFlow rejects at run time (a shape of the wrong size, a
permutation that is not one, an axis out of range) raises `Undefined`.
"""

from __future__ import annotations

import math

import numpy as np

from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.arith import int_to_float
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.tf_math import broadcast, result_dtype
from egraft.ir.semantics.values import Undefined, attribute_value, to_ints, wrap


def _ints(x: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(x).reshape(-1)]


def _axis(value: int, rank: int) -> int:
    """A dimension index in [-rank, rank), normalized."""
    if not -rank <= value < rank:
        raise Undefined(f"axis {value} out of range for rank {rank}")
    return value % rank


@evaluator("tf.Const")
def _const(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return attribute_value(op.attr("value"), op.results[0].type)


@evaluator("tf.Identity", "tf.StopGradient", "tf.Snapshot", "tf.IdentityN", "tf.NoOp")
def _identity(interp: Interpreter, op: Operation, args: list) -> list:
    """Each input forwarded (NoOp: none in, none out; it only orders others)."""
    return list(args)


@evaluator("tf.Reshape")
def _reshape(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x, shape = args
    dims = _ints(shape)
    if np.asarray(shape).ndim > 1 or dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise Undefined(f"bad Reshape shape {dims}")
    known = math.prod(d for d in dims if d != -1)
    if -1 in dims:
        if known == 0 or x.size % known:
            raise Undefined(f"cannot reshape {x.shape} to {dims}")
        dims[dims.index(-1)] = x.size // known
    if math.prod(dims) != x.size:
        raise Undefined(f"cannot reshape {x.shape} to {dims}")
    return x.reshape(dims)


@evaluator("tf.Squeeze")
def _squeeze(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x = args[0]
    attr = op.attr("squeeze_dims")
    dims = [_axis(a.value, x.ndim) for a in attr] if attr is not None and len(attr) else \
        [i for i, d in enumerate(x.shape) if d == 1]
    if any(x.shape[d] != 1 for d in dims):
        raise Undefined(f"Squeeze of a dimension that is not 1 in {x.shape}")
    return np.squeeze(x, axis=tuple(dims)) if dims else x


@evaluator("tf.ExpandDims")
def _expand_dims(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x, dim = args
    d = _ints(dim)
    if len(d) != 1:
        raise Undefined("ExpandDims takes one dimension")
    return np.expand_dims(x, _axis(d[0], x.ndim + 1))


@evaluator("tf.Transpose")
def _transpose(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x, perm = args
    p = _ints(perm)
    if sorted(p) != list(range(x.ndim)):
        raise Undefined(f"{p} is not a permutation of rank {x.ndim}")
    return np.transpose(x, p)


@evaluator("tf.ConcatV2")
def _concat(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    *values, axis = args
    rank = values[0].ndim
    a = _axis(_ints(axis)[0], rank) if rank else None
    if a is None or any(v.ndim != rank or v.shape[:a] + v.shape[a + 1:] != values[0].shape[:a] +
                        values[0].shape[a + 1:] for v in values):
        raise Undefined("ConcatV2 of incompatible shapes")
    return np.concatenate(values, axis=a).astype(result_dtype(op), copy=False)


@evaluator("tf.Split")
def _split(interp: Interpreter, op: Operation, args: list) -> list:
    axis, x = args
    n = len(op.results)
    a = _axis(_ints(axis)[0], x.ndim)
    if x.shape[a] % n:
        raise Undefined(f"Split of {x.shape[a]} into {n}")
    return [np.ascontiguousarray(p) for p in np.split(x, n, axis=a)]


@evaluator("tf.Pad")
def _pad(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x, paddings = args
    pads = np.asarray(paddings)
    if pads.shape != (x.ndim, 2) or (pads < 0).any():
        raise Undefined(f"bad paddings {pads.tolist()} for rank {x.ndim}")
    return np.pad(x, [(int(a), int(b)) for a, b in pads], constant_values=x.dtype.type(0))


@evaluator("tf.Fill")
def _fill(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    dims, value = args
    shape = _ints(dims)
    if np.asarray(value).ndim != 0 or any(d < 0 for d in shape):
        raise Undefined("Fill needs a scalar value and non-negative dims")
    return np.full(shape, value, result_dtype(op))


@evaluator("tf.Rank")
def _rank(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return np.asarray(args[0].ndim, result_dtype(op))


@evaluator("tf.Shape")
def _shape(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return np.asarray(args[0].shape, result_dtype(op)).reshape(-1)


@evaluator("tf.Size")
def _size(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return np.asarray(args[0].size, result_dtype(op))


@evaluator("tf.Cast")
def _cast(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    """Integers wrap, bools are 0/1, numbers become bools by `!= 0`, ints round
    to nearest-even floats; a float out of the integer range (or NaN) has no
    defined result (C++'s static_cast), so it is undefined."""
    x = args[0]
    et = T.element_type(op.results[0].type)
    dtype = result_dtype(op)
    if dtype == np.bool_:
        return np.asarray(x != 0)
    if isinstance(et, T.IntegerType):
        if x.dtype.kind == "f":
            w = et.width
            lo, hi = (0, 1 << w) if et.signedness == "u" else (-(1 << (w - 1)), 1 << (w - 1))
            flat = np.asarray(x, np.float64).reshape(-1)
            if not np.isfinite(flat).all() or any(not lo <= math.trunc(v) < hi for v in flat):
                raise Undefined("Cast of a float out of the integer range")
            return wrap(np.array([math.trunc(v) for v in flat], dtype=object).reshape(x.shape), et)
        return wrap(to_ints(x), et)
    if x.dtype.kind in "iub" and x.dtype != np.bool_:
        flat = [int_to_float(int(v), dtype) for v in x.reshape(-1)]
        return np.array(flat, dtype).reshape(x.shape)
    return x.astype(dtype)


@evaluator("tf.Select")
def _select(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    """v1: the condition has x's shape, or is a vector selecting along x's first dimension."""
    cond, x, y = args
    if x.shape != y.shape:
        raise Undefined("Select of differently shaped branches")
    if cond.shape != x.shape:
        if cond.ndim != 1 or x.ndim < 1 or cond.shape[0] != x.shape[0]:
            raise Undefined("Select condition shape")
        cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
    return np.asarray(np.where(cond, x, y), x.dtype)


@evaluator("tf.SelectV2")
def _select_v2(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    cond, x, y = broadcast(*args)
    return np.asarray(np.where(cond, x, y), result_dtype(op))

