"""Random inputs for the interpreter (hypothesis strategies), from IR types.

`inputs_for(func)` draws one value per argument of a function.  Dynamic
dimensions (`tensor<?x3xf32>`, `memref<?xi32>`) are drawn once per run and
shared: each `?` is that common size or, sometimes, 1, so that arguments
meant to broadcast against each other usually do (independent sizes would
make most TF programs fail on their inputs).  Integers cover the whole range
of their width, and half of them are its edges (min, min+1, -1, 0, 1, max-1,
max), where wrap-around shows: hypothesis alone drew INT_MAX too rarely for
`x + 1 > x` to be refuted every time.
Floats are finite and never -0.0 unless `special_floats=True`, which adds
NaN, ±Inf and -0.0 (soundness tests need them: `x - x -> 0` is refuted by
Inf).  Memrefs come fully initialised.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import find_function
from egraft.ir.semantics.values import MemRef, Unsupported, storage_dtype, wrap

DimSource = Callable[[], st.SearchStrategy[int]]


def _integers(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Integers in [lo, hi], its edges as often as the rest (shrinking goes to the edges)."""
    edges = sorted({v for v in (lo, lo + 1, -1, 0, 1, hi - 1, hi) if lo <= v <= hi})
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi))


def element_strategy(et: T.Type, special_floats: bool = False) -> st.SearchStrategy[Any]:
    """Python scalars valid for the element type `et`."""
    if isinstance(et, T.IndexType):
        return _integers(-(2 ** 63), 2 ** 63 - 1)
    if isinstance(et, T.IntegerType):
        if et.width == 1:
            return st.booleans()
        if et.signedness == "u":
            return _integers(0, 2 ** et.width - 1)
        return _integers(-(2 ** (et.width - 1)), 2 ** (et.width - 1) - 1)
    if isinstance(et, T.FloatType):
        width = {"f16": 16, "f32": 32, "f64": 64}.get(et.name, 32)  # narrower ones: rounded from f32
        floats = st.floats(width=width, allow_nan=special_floats, allow_infinity=special_floats,
                           allow_subnormal=True)
        return floats if special_floats else floats.map(lambda x: x + 0.0)  # -0.0 + 0.0 is +0.0
    raise Unsupported(f"no random values of element type {et}")


def array_strategy(et: T.Type, shape: Sequence[int], special_floats: bool = False) -> st.SearchStrategy[np.ndarray]:
    """Arrays of `shape` in the storage of `et` (0-d for scalars)."""
    elements = element_strategy(et, special_floats)
    dtype = storage_dtype(et)
    if isinstance(et, T.IntegerType) and et.width != 1 and et.width not in (8, 16, 32, 64):
        count = int(np.prod(shape)) if shape else 1
        return st.lists(elements, min_size=count, max_size=count).map(
            lambda xs: wrap(np.array(xs, dtype=object).reshape(tuple(shape)), et))
    if isinstance(et, T.FloatType) and et.name not in ("f16", "f32", "f64"):
        return hnp.arrays(np.float32, tuple(shape), elements=elements).map(lambda a: a.astype(dtype))
    if isinstance(et, (T.IntegerType, T.IndexType)) and et is not T.i1:
        return hnp.arrays(dtype, tuple(shape), elements=elements.map(lambda v: wrap(v, et).item()))
    return hnp.arrays(dtype, tuple(shape), elements=elements)


def shape_of(t: T.ShapedType, dim: Callable[[], int]) -> tuple[int, ...]:
    return tuple(dim() if d == T.DYNAMIC else d for d in t.shape)  # type: ignore[union-attr]


@st.composite
def value_for_type(draw: Callable, t: T.Type, special_floats: bool = False,
                   dims: st.SearchStrategy[int] = st.integers(0, 3), max_rank: int = 3) -> Any:
    """One runtime value of type `t` (dynamic dims and unranked ranks drawn from `dims`)."""
    if isinstance(t, (T.UnrankedTensorType, T.UnrankedMemRefType)):
        rank = draw(st.integers(0, max_rank))
        shape: tuple[int, ...] = tuple(draw(dims) for _ in range(rank))
    elif isinstance(t, T.ShapedType):
        shape = shape_of(t, lambda: draw(dims))
    else:
        shape = ()
    data = draw(array_strategy(T.element_type(t), shape, special_floats))
    return MemRef(data) if isinstance(t, (T.MemRefType, T.UnrankedMemRefType)) else data


@st.composite
def shared_dims(draw: Callable, min_dim: int = 0, max_dim: int = 3) -> st.SearchStrategy[int]:
    """A strategy for dynamic sizes: one common size, sometimes 1 (to broadcast)."""
    common = draw(st.integers(min_dim, max_dim))
    return st.sampled_from((common, common, common, 1)) if min_dim <= 1 else st.just(common)


@st.composite
def values_for_types(draw: Callable, types: Sequence[T.Type], special_floats: bool = False,
                     min_dim: int = 0, max_dim: int = 3) -> list[Any]:
    """One value per type, with the dynamic dimensions drawn as `shared_dims` says."""
    dims = draw(shared_dims(min_dim, max_dim))
    return [draw(value_for_type(t, special_floats, dims)) for t in types]


def argument_types(top: Operation, name: str | None = None) -> list[T.Type]:
    func = find_function(top, name)
    return [a.type for a in func.regions[0].entry.args]  # type: ignore[union-attr]


def inputs_for(top: Operation, special_floats: bool = False, name: str | None = None, min_dim: int = 0,
               max_dim: int = 3) -> st.SearchStrategy[list[Any]]:
    """Inputs for the function `top` (or the one named `name` in it)."""
    return values_for_types(argument_types(top, name), special_floats, min_dim, max_dim)
