"""Semantics of the `memref` dialect: allocation, load/store, dim/rank, casts, copy.

Memory is modelled by `values.MemRef`: a buffer shared by every SSA value
that views it, with a mask of written elements.  `alloc`/`alloca` give
uninitialised memory (loading it is undefined), out-of-bounds indices and use
after `dealloc` are undefined, `memref.cast` is the same buffer seen under
another static type, and a cast to a shape the buffer does not have is
undefined, as MLIR's runtime verification would report it.
"""

from __future__ import annotations

import numpy as np

from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.values import MemRef, Undefined


def index_tuple(args: list) -> tuple[int, ...]:
    return tuple(int(i) for i in args)


@evaluator("memref.alloc", "memref.alloca")
def _alloc(interp: Interpreter, op: Operation, args: list) -> MemRef:
    t = op.results[0].type
    sizes = iter(args)
    shape = tuple(int(next(sizes)) if d == T.DYNAMIC else d for d in t.shape)
    if any(d < 0 for d in shape):
        raise Undefined(f"negative allocation size {shape}")
    return MemRef.uninitialized(shape, t.element_type)


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
    if src.data.shape != dst.data.shape:
        raise Undefined("memref.copy between different shapes")
    if not src.init.all():
        raise Undefined("memref.copy of uninitialized memory")
    dst.data[...] = src.data
    dst.init[...] = True
    return []
