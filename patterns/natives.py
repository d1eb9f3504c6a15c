"""Built-in native calls for results (DRR's NativeCodeCall): attributes computed from matches.

`zero_of(x)` / `one_of(x)` make a splat constant attribute of x's type, to
build `tf.Const`/`arith.constant` results; `fold(name, fn, a, b, ...)` folds
constants with a numpy function.  All take types or constant attributes
(`TypeOf`/`ConstOf`), never IR, so the e-graph can call them too.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

from .fold_limits import allows
from .rule import ConstOf, Native, TypeOf, Var


def _n(v: Var | str) -> str:
    return v.name if isinstance(v, Var) else v


def splat_attr(t: T.Type, value: float | int) -> A.Attribute | None:
    """A constant attribute of type `t` whose elements all equal `value`."""
    et = T.element_type(t)
    if isinstance(et, T.FloatType):
        scalar: Any = float(value)
    elif isinstance(et, (T.IntegerType, T.IndexType)):
        scalar = bool(value) if isinstance(et, T.IntegerType) and et.width == 1 else int(value)
    else:
        return None
    if isinstance(t, (T.RankedTensorType, T.VectorType)) and t.has_static_shape:
        return A.DenseElementsAttr(t, scalar)
    if isinstance(t, T.ShapedType):
        return None  # no dense attribute for a dynamic shape
    if isinstance(t, T.FloatType):
        return A.float_attr(scalar, t)
    return A.IntegerAttr(int(scalar), t)


def zero_of(v: Var | str) -> Native:
    """A zero attribute of the value's type (MLIR's getZeroAttr)."""
    return Native("zero_of", lambda t: splat_attr(t, 0), (TypeOf(_n(v)),))


def one_of(v: Var | str) -> Native:
    return Native("one_of", lambda t: splat_attr(t, 1), (TypeOf(_n(v)),))


def array_attr(arr: np.ndarray, like: A.Attribute) -> A.Attribute | None:
    """`arr` as an attribute of the kind and element type of `like` (scalar or dense)."""
    if isinstance(like, (A.IntegerAttr, A.FloatAttr)):
        if arr.shape != ():
            return None
        x = arr.item()
        return A.float_attr(x, like.type) if isinstance(like, A.FloatAttr) else A.IntegerAttr(int(x), like.type)
    if isinstance(like, A.DenseElementsAttr):
        t = like.type
        if tuple(arr.shape) != tuple(t.shape or ()):
            t = T.RankedTensorType(tuple(arr.shape), t.element_type) if isinstance(t, T.RankedTensorType) else None
            if t is None:
                return None
        flat = tuple(x.item() for x in arr.reshape(-1))
        return A.DenseElementsAttr(t, flat if len(flat) != 1 else flat[0])
    return None


def _as_array(c: A.Attribute, name: str, elementwise: bool) -> np.ndarray | None:
    """The constant as an array: a 0-d one for a scalar, and for a splat when ``elementwise``
    (the fold is then computed once, whatever the shape); other dense constants in full,
    if `fold_limits` allows that many elements."""
    if isinstance(c, (A.IntegerAttr, A.FloatAttr)):
        return np.array(c.value)
    if not isinstance(c, A.DenseElementsAttr):
        return None
    dtype = A.numpy_dtype(c.element_type)
    if elementwise and dtype is not None and c.is_splat and not isinstance(c.data, (tuple, str, bytes)):
        return np.array(c.data, dtype=dtype)
    if not allows(math.prod(c.type.shape or ()), name):
        return None
    try:
        return c.to_numpy()
    except ValueError:
        return None


def fold(name: str, fn: Callable[..., np.ndarray], *vs: Var | str, elementwise: bool = False) -> Native:
    """Fold the constants producing `vs` with a numpy function (result typed like the first).

    Integer overflow wraps as the element type's numpy dtype does; a fold
    that cannot be represented (strings, unknown element types) returns
    None, so the rule does not apply. With ``elementwise`` (``fn`` works element by
    element, so the result has the first operand's shape) splats fold to a splat
    without their elements being made."""
    def run(*consts: A.Attribute) -> A.Attribute | None:
        arrays = [_as_array(c, name, elementwise) for c in consts]
        if any(a is None for a in arrays):
            return None
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*arrays))
        like = consts[0]
        out = out.astype(arrays[0].dtype)  # type: ignore[union-attr]
        if isinstance(like, A.DenseElementsAttr) and out.shape == ():
            return A.DenseElementsAttr(like.type, out.item())  # splats in, a splat out
        return array_attr(out, like)
    return Native(name, run, tuple(ConstOf(_n(v)) for v in vs))
