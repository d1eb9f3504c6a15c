"""Semantics of the `memref` dialect: allocation, load/store, dim/rank, casts, views, copy.

Memory is modelled by `values.MemRef`: a strided view of an `Allocation`'s bytes, shared by
every SSA value that views it, with a mask of written bytes.  `alloc`/`alloca` give
uninitialised memory (loading it is undefined), out-of-bounds indices and use after
`dealloc` (through any alias) are undefined.  `memref.cast` is the same view under another
type (a cast to a shape the buffer does not have is undefined, as MLIR's runtime
verification would report it); `subview`, `reinterpret_cast` and `view` make new views of
the same allocation, so a write through one is seen through the others:

* `subview`: offsets, sizes and strides in the source's index space; the new view starts at
  the source's offset plus `sum(offset_i * stride_i)` with strides `stride_i * source
  stride_i`; unit dimensions the result type drops (rank reduction) are dropped; a subview
  reaching outside its source is undefined;
* `reinterpret_cast`: offset (in elements, from the allocation's start, as MLIR's is from the
  aligned pointer), sizes and strides given outright; reaching outside the allocation is
  undefined;
* `view`: a contiguous row-major view of another element type at a byte shift of a 1-D `i8`
  buffer (its bytes are reinterpreted; an element counts as written when all its bytes are);
* 2019's `std.view` (an offset in elements of the result type, else the layout's static one)
  and `std.subview` (each of its lists empty, read from the result type's shape and static
  strided layout, or one value per dimension): the same views, their layouts read from
  `strided<...>` or from an affine map linear in its dimensions and without symbols.

`memref.alloca` memory lives until its automatic allocation scope returns: here the body of
an `affine.for` iteration (affine.py opens the scope; MLIR's `affine.for` carries
`AutomaticAllocationScope`); an alloca at a function's top level lives until the run ends
(the interpreter's function call belongs to interpreter.py and does not close a scope).
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Iterator

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.affine import AffineMap, Binary, Dim
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.values import Allocation, MemRef, Undefined, storage_dtype

#: MLIR's `ShapedType::kDynamic` in the static index lists of views.
DYNAMIC_INDEX = -(2 ** 63)


def index_tuple(args: list) -> tuple[int, ...]:
    return tuple(int(i) for i in args)


#: Per interpreter, the allocas of each open automatic allocation scope (innermost last).
_ALLOCA_SCOPES: "weakref.WeakKeyDictionary[Interpreter, list[list[Allocation]]]" = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def alloca_scope(interp: Interpreter) -> Iterator[None]:
    """An automatic allocation scope: allocas made inside are freed when it exits."""
    scopes = _ALLOCA_SCOPES.setdefault(interp, [])
    scopes.append([])
    try:
        yield
    finally:
        for alloc in scopes.pop():
            alloc.freed = True


@evaluator("memref.alloc", "memref.alloca")
def _alloc(interp: Interpreter, op: Operation, args: list) -> MemRef:
    t = op.results[0].type
    sizes = iter(args)
    shape = tuple(int(next(sizes)) if d == T.DYNAMIC else d for d in t.shape)
    if any(d < 0 for d in shape):
        raise Undefined(f"negative allocation size {shape}")
    memref = MemRef.uninitialized(shape, t.element_type)
    scopes = _ALLOCA_SCOPES.get(interp)
    if op.name == "memref.alloca" and scopes:
        scopes[-1].append(memref.alloc)
    return memref


@evaluator("memref.dealloc")
def _dealloc(interp: Interpreter, op: Operation, args: list) -> list:
    if args[0].freed:
        raise Undefined("double dealloc")
    args[0].freed = True
    return []


@evaluator("memref.load")
def _load(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return args[0].load(index_tuple(args[1:]))


@evaluator("memref.store")
def _store(interp: Interpreter, op: Operation, args: list) -> list:
    args[1].store(index_tuple(args[2:]), args[0])
    return []


@evaluator("memref.dim")
def _dim(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    i = int(args[1])
    if not 0 <= i < args[0].data.ndim:
        raise Undefined(f"memref.dim {i} out of range of rank {args[0].data.ndim}")
    return np.asarray(args[0].data.shape[i], np.int64)


@evaluator("memref.rank")
def _rank(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return np.asarray(args[0].data.ndim, np.int64)


@evaluator("memref.cast", "memref.memory_space_cast")
def _cast(interp: Interpreter, op: Operation, args: list) -> MemRef:
    t = op.results[0].type
    if isinstance(t, T.MemRefType):
        shape = args[0].data.shape
        if len(shape) != len(t.shape) or any(d != T.DYNAMIC and d != s for d, s in zip(t.shape, shape)):
            raise Undefined(f"memref.cast of a {list(shape)} buffer to {t}")
    return args[0]


@evaluator("memref.copy")
def _copy(interp: Interpreter, op: Operation, args: list) -> list:
    src, dst = args
    if src.freed or dst.freed:
        raise Undefined("memref.copy of a deallocated memref")
    if src.data.shape != dst.data.shape:
        raise Undefined("memref.copy between different shapes")
    if not src.init.all():
        raise Undefined("memref.copy of uninitialized memory")
    dst.data[...] = src.data.copy()  # the two may overlap
    dst.mark_written()
    return []


# ------------------------------------------------------------------ views


def _mixed(op: Operation, name: str, groups: dict) -> list[int]:
    """A static/dynamic index list (`static_<name>` with dynamic entries from the operands)."""
    dynamic = iter(int(v) for v in groups[name])
    return [next(dynamic) if s == DYNAMIC_INDEX else int(s) for s in op.attr(f"static_{name}").values]


def _operand_groups(interp: Interpreter, op: Operation) -> dict:
    groups = op.opdef.operand_groups(op)  # type: ignore[union-attr]
    return {k: [interp.value(v) for v in groups[k]] for k in ("offsets", "sizes", "strides")}


def _dropped_unit_dims(sizes: list[int], result_shape: tuple[int, ...]) -> list[bool]:
    """Which unit dimensions a rank-reducing subview drops: matched left to right."""
    drop, r = [], 0
    for i, size in enumerate(sizes):
        must_drop = len(sizes) - i > len(result_shape) - r
        fits = r < len(result_shape) and result_shape[r] in (T.DYNAMIC, size)
        if size == 1 and (must_drop or not fits):
            drop.append(True)
        else:
            drop.append(False)
            r += 1
    return drop


@evaluator("memref.subview")
def _subview(interp: Interpreter, op: Operation, args: list) -> MemRef:
    src: MemRef = args[0]
    groups = _operand_groups(interp, op)
    offsets, sizes, strides = (_mixed(op, n, groups) for n in ("offsets", "sizes", "strides"))
    for d, (o, n, s, extent) in enumerate(zip(offsets, sizes, strides, src.data.shape)):
        if n < 0 or (n > 0 and not (0 <= o and 0 <= o + (n - 1) * s < extent)):
            raise Undefined(f"subview dimension {d} (offset {o}, size {n}, stride {s}) outside size {extent}")
    offset = src.offset + sum(o * st for o, st in zip(offsets, src.strides))
    new_strides = [s * st for s, st in zip(strides, src.strides)]
    keep = [not d for d in _dropped_unit_dims(sizes, op.results[0].type.shape)]
    return MemRef.view_of(src, src.data.dtype, offset, tuple(n for n, k in zip(sizes, keep) if k),
                          tuple(s for s, k in zip(new_strides, keep) if k))


@evaluator("memref.reinterpret_cast")
def _reinterpret_cast(interp: Interpreter, op: Operation, args: list) -> MemRef:
    src: MemRef = args[0]
    groups = _operand_groups(interp, op)
    (offset,), sizes, strides = (_mixed(op, n, groups) for n in ("offsets", "sizes", "strides"))
    item = src.data.dtype.itemsize
    return MemRef.view_of(src, src.data.dtype, offset * item, tuple(sizes), tuple(s * item for s in strides))


@evaluator("memref.view")
def _view(interp: Interpreter, op: Operation, args: list) -> MemRef:
    src: MemRef = args[0]
    shift, dynamic = int(args[1]), iter(int(v) for v in args[2:])
    t = op.results[0].type
    shape = tuple(next(dynamic) if d == T.DYNAMIC else d for d in t.shape)
    dtype = storage_dtype(t.element_type)
    strides, acc = [], dtype.itemsize
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return MemRef.view_of(src, dtype, src.offset + shift, shape, tuple(reversed(strides)))


# ------------------------------------------------------------------ 2019 view and subview


def _has(e: object, kind: type) -> bool:
    if isinstance(e, kind):
        return True
    return isinstance(e, Binary) and (_has(e.lhs, kind) or _has(e.rhs, kind))


def _linear_in_dims(e: object) -> bool:
    """No dimension under a division or a product with another dimension."""
    if not isinstance(e, Binary):
        return True
    if e.kind in ("floordiv", "ceildiv", "mod"):
        return not _has(e, Dim)
    if e.kind == "mul" and _has(e.lhs, Dim) and _has(e.rhs, Dim):
        return False
    return _linear_in_dims(e.lhs) and _linear_in_dims(e.rhs)


def static_layout(t: T.MemRefType) -> tuple[int | None, list[int | None]]:
    """A memref type's offset and strides in elements (None where not static)."""
    layout = t.layout
    if layout is None:
        strides: list[int | None] = []
        acc: int | None = 1
        for d in reversed(t.shape):
            strides.append(acc)
            acc = None if acc is None or d == T.DYNAMIC else acc * d
        return 0, list(reversed(strides))
    if isinstance(layout, A.AffineMapAttr):
        amap: AffineMap = layout.value
        if len(amap.results) != 1 or not _linear_in_dims(amap.results[0]):
            return None, [None] * len(t.shape)
        from egraft.ir.semantics.affine import eval_map  # affine.py imports this module

        def at(dims: list[int], sym: int) -> int:
            return eval_map(amap, dims + [sym] * amap.num_symbols)[0]
        zero = [0] * amap.num_dims
        units = [[int(i == k) for i in range(amap.num_dims)] for k in range(amap.num_dims)]
        # a part that changes with the symbols is not static
        offset = at(zero, 0) if at(zero, 0) == at(zero, 1) else None
        return offset, [at(u, 0) - at(zero, 0) if at(u, 0) - at(zero, 0) == at(u, 1) - at(zero, 1) else None
                        for u in units]
    text = str(layout)
    if text.startswith("strided<["):
        inner, _, rest = text[len("strided<["):].partition("]")
        strides = [None if x.strip() == "?" else int(x) for x in inner.split(",") if x.strip()]
        off = rest.split("offset:")[1].strip(" >") if "offset:" in rest else "0"
        return (None if off == "?" else int(off)), strides
    return None, [None] * len(t.shape)


def _static(values: list, what: str) -> list[int]:
    if any(v is None for v in values):
        raise Undefined(f"2019 view: the {what} are neither operands nor static in the result type")
    return values


@evaluator("std.view")
def _std_view(interp: Interpreter, op: Operation, args: list) -> MemRef:
    src: MemRef = args[0]
    groups = op.opdef.operand_groups(op)  # type: ignore[union-attr]
    offset_ops = [int(interp.value(v)) for v in groups["offset"]]
    dynamic = iter(int(interp.value(v)) for v in groups["sizes"])
    t = op.results[0].type
    shape = tuple(next(dynamic) if d == T.DYNAMIC else d for d in t.shape)
    layout_offset, layout_strides = static_layout(t)
    row_major, acc = [], 1
    for d in reversed(shape):
        row_major.append(acc)
        acc *= d
    strides = [s if s is not None else r for s, r in zip(layout_strides, reversed(row_major))]
    offset = offset_ops[0] if offset_ops else _static([layout_offset], "offset")[0]
    dtype = storage_dtype(t.element_type)
    item = dtype.itemsize
    return MemRef.view_of(src, dtype, src.offset + offset * item, shape, tuple(s * item for s in strides))


@evaluator("std.subview")
def _std_subview(interp: Interpreter, op: Operation, args: list) -> MemRef:
    src: MemRef = args[0]
    groups = op.opdef.operand_groups(op)  # type: ignore[union-attr]
    offsets, sizes, steps = ([int(interp.value(v)) for v in groups[n]] for n in ("offsets", "sizes", "strides"))
    t = op.results[0].type
    item = src.data.dtype.itemsize
    src_strides = [s // item for s in src.strides]
    layout_offset, layout_strides = static_layout(t)
    shape = tuple(sizes) if sizes else tuple(_static([None if d == T.DYNAMIC else d for d in t.shape], "sizes"))
    if offsets:
        for d, (o, n, extent) in enumerate(zip(offsets, shape, src.data.shape)):
            if n > 0 and not 0 <= o < extent:
                raise Undefined(f"subview offset {o} outside dimension {d} of size {extent}")
        offset = src.offset // item + sum(o * st for o, st in zip(offsets, src_strides))
    else:
        offset = _static([layout_offset], "offset")[0]
    strides = [k * st for k, st in zip(steps, src_strides)] if steps else _static(layout_strides, "strides")
    return MemRef.view_of(src, src.data.dtype, offset * item, shape, tuple(s * item for s in strides))
