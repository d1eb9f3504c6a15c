"""Strided memref layouts: the strides and offset a memref type's layout stands for.

MLIR's `getStridesAndOffset`: a memref without a layout has the row-major
strides of its shape (dynamic from the first dynamic size outward) and offset
0; `strided<[...], offset: ...>` states them; an affine-map layout is strided
when its single result is a sum of `d_i * stride_i` terms and an offset whose
strides and offset are constants or symbols (a symbol makes the value
dynamic).  `floordiv`, `mod`, several results or a dimension times a
dimension are not strided.  Used by `memref.cast`'s compatibility rule and
by the 2019 view and subview rules (ir/dialects/std_era.py).
"""

from __future__ import annotations

import re

from egraft.ir.core import affine as AE
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

Strided = tuple[list["int | None"], "int | None"]  # strides, offset; None = dynamic


def _linear_parts(e: AE.AffineExpr, strides: list[list[AE.AffineExpr]], offset: list[AE.AffineExpr]) -> bool:
    """Split a layout expression into per-dimension stride terms and offset
    terms; False when it is not of the form
    sum(d_i * stride_i) + offset with symbol-or-constant strides."""
    if isinstance(e, AE.Dim):
        strides[e.pos].append(AE.Const(1))
        return True
    if e.is_symbolic_or_constant():
        offset.append(e)
        return True
    if isinstance(e, AE.Binary) and e.kind == "add":
        return _linear_parts(e.lhs, strides, offset) and _linear_parts(e.rhs, strides, offset)
    if isinstance(e, AE.Binary) and e.kind == "mul":
        for dim, factor in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if isinstance(dim, AE.Dim) and factor.is_symbolic_or_constant():
                strides[dim.pos].append(factor)
                return True
    return False


def _static_sum(parts: list[AE.AffineExpr]) -> int | None:
    """The sum of constant terms; None (dynamic) when a symbol is among them."""
    if not all(isinstance(p, AE.Const) for p in parts):
        return None
    return sum(p.value for p in parts)  # type: ignore[attr-defined]


_STRIDED_TEXT = re.compile(r"strided<\[([^\]]*)\](?:,\s*offset:\s*(\?|-?\d+))?>")


def strides_and_offset(t: T.MemRefType) -> Strided | None:
    """MLIR's `getStridesAndOffset`: the strides and offset of a memref's
    layout (None entries are dynamic), or None when the layout is not strided."""
    layout = t.layout
    if layout is None:
        strides: list[int | None] = []
        running: int | None = 1
        for size in reversed(t.shape):
            strides.append(running)
            running = None if running is None or size == T.DYNAMIC else running * size
        return strides[::-1], 0
    if isinstance(layout, A.VerbatimAttr):
        m = _STRIDED_TEXT.fullmatch(layout.text)
        if m is None:
            return None
        def number(text: str | None) -> int | None:
            return None if text == "?" else int(text or 0)
        return [number(x.strip()) for x in m.group(1).split(",") if x.strip()], number(m.group(2))
    if not isinstance(layout, A.AffineMapAttr) or len(layout.value.results) != 1:
        return None
    parts: list[list[AE.AffineExpr]] = [[] for _ in range(layout.value.num_dims)]
    offset: list[AE.AffineExpr] = []
    if not _linear_parts(layout.value.results[0], parts, offset):
        return None
    return [_static_sum(p) for p in parts], _static_sum(offset)
