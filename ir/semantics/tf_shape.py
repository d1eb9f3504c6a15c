"""Semantics of TensorFlow's shape-arithmetic ops: `Pack` and `StridedSlice`.

Graphs compute shapes with them (`Shape` → `StridedSlice` → `Pack` → `Reshape`), so
constant folding needs them to fold a static shape all the way into a `Reshape`'s
constant. Arguments TensorFlow rejects at run time (shapes that differ, a stride of
zero, an index out of range, a second ellipsis) raise `Undefined`.
"""

from __future__ import annotations

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.tf_math import result_dtype
from egraft.ir.semantics.values import Undefined


def int_attr(op: Operation, name: str) -> int:
    """An integer attribute, 0 when absent (TF's default for `axis` and the slice masks)."""
    attr = op.attr(name)
    return int(attr.value) if isinstance(attr, A.IntegerAttr) else 0


@evaluator("tf.Pack")
def _pack(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    """Stacks equally shaped inputs along a new dimension `axis` in [-(rank+1), rank]."""
    if not args or any(a.shape != args[0].shape for a in args):
        raise Undefined("Pack of differently shaped inputs")
    rank = args[0].ndim
    axis = int_attr(op, "axis")
    if not -(rank + 1) <= axis <= rank:
        raise Undefined(f"Pack axis {axis} out of range for rank {rank}")
    return np.stack(args, axis=axis % (rank + 1)).astype(result_dtype(op), copy=False)


def _bit(mask: int, i: int) -> bool:
    return bool((mask >> i) & 1)


def _slice_index(op: Operation, rank: int, begin: list[int], end: list[int],
                 strides: list[int]) -> tuple:
    """TF's sparse slice spec as a numpy index: an ellipsis, new axes (`np.newaxis`), shrunk
    axes (an integer, which must be in range) and ranges (Python's slice clamping is TF's:
    begin and end clamp to [0, dim] for a positive stride, [-1, dim - 1] for a negative one)."""
    masks = {m: int_attr(op, m) for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                          "shrink_axis_mask")}
    if bin(masks["ellipsis_mask"]).count("1") > 1:
        raise Undefined("StridedSlice with more than one ellipsis")
    index: list = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if _bit(masks["ellipsis_mask"], i):
            index.append(Ellipsis)
        elif _bit(masks["new_axis_mask"], i):
            index.append(np.newaxis)
        elif s == 0:
            raise Undefined("StridedSlice stride of 0")
        elif _bit(masks["shrink_axis_mask"], i):
            if s < 0:
                raise Undefined("StridedSlice: only a positive stride on a shrunk axis")
            index.append(b)
        else:
            index.append(slice(None if _bit(masks["begin_mask"], i) else b,
                               None if _bit(masks["end_mask"], i) else e, s))
    dims = sum(1 for x in index if x is not Ellipsis and x is not np.newaxis)
    if dims > rank:
        raise Undefined(f"StridedSlice indexes {dims} dimensions of a rank-{rank} tensor")
    return tuple(index)


@evaluator("tf.StridedSlice")
def _strided_slice(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    x, *spec = args
    if any(np.asarray(v).ndim != 1 for v in spec) or len({np.asarray(v).size for v in spec}) != 1:
        raise Undefined("StridedSlice: begin, end and strides must be vectors of one length")
    begin, end, strides = ([int(i) for i in np.asarray(v)] for v in spec)
    index = _slice_index(op, x.ndim, begin, end, strides)
    try:
        out = x[index]
    except IndexError as e:  # a shrunk index out of range
        raise Undefined(f"StridedSlice: {e}") from e
    return np.array(out, dtype=result_dtype(op))
