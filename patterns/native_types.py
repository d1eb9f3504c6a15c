"""Type computations for result ops whose types cannot be inferred (concat, ...)."""

from __future__ import annotations

from typing import Callable

from egraft.ir.core import types as T


def concat_type(axis: int) -> Callable[..., T.Type | None]:
    """The type of concatenating ranked tensors of the given types along `axis` (None if not ranked)."""
    def compute(*types: T.Type) -> T.Type | None:
        if not all(isinstance(t, T.RankedTensorType) for t in types):
            return None
        first = types[0]
        shape = list(first.shape)  # type: ignore[union-attr]
        if not 0 <= axis < len(shape) or any(len(t.shape) != len(shape) for t in types):  # type: ignore[union-attr]
            return None
        sizes = [t.shape[axis] for t in types]  # type: ignore[union-attr]
        shape[axis] = T.DYNAMIC if T.DYNAMIC in sizes else sum(sizes)
        return T.RankedTensorType(tuple(shape), first.element_type)  # type: ignore[union-attr]
    return compute
