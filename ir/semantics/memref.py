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
  buffer (its bytes are reinterpreted; an element counts as written when all its bytes are).

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

from egraft.ir.core import types as T
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
