"""Semantics of the `affine` dialect: maps, for, parallel, if, load/store, min/max, graybox.

Affine expressions evaluate on Python ints (mathematical integers; a value an op
returns that does not fit in 64 bits is undefined): `floordiv`, `ceildiv` and `mod`
round toward minus infinity and `mod` takes the divisor's sign, as MLIR
defines them; a zero divisor (possible in semi-affine maps) is undefined.
A loop runs from the max of its lower-bound map's results to the min of its
upper bound's, by its step, threading `iter_args` through `affine.yield`.
`affine.graybox` runs its region in place with the memrefs bound to its
block arguments.  Each loop iteration is an automatic allocation scope: the
`memref.alloca`s it makes are freed when it ends (memref.py).

`affine.parallel` runs its iterations in lexicographic order (any order is a
correct execution; a program whose result depends on the order is racy, and
racy programs are not distinguished here) and folds each iteration's yielded
values into its results with the reduction, starting from the reduction's
identity (`-0.0` for `addf`, the exact identity; `-inf`/`+inf` for
`maximumf`/`minimumf`, NaN for `maxnumf`/`minnumf`, as MLIR's
`getIdentityValue`; `assign` has none: zero iterations leave it undefined).
`affine.vector_load`/`vector_store` move the vector's block over the memref's
trailing dimensions; `affine.delinearize_index` splits an index in
`[0, product(basis))` row-major (outside it, or with a basis element that is not
positive, it is undefined).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from egraft.ir.core import affine as AF
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.dialects.affine_loops import REDUCTION_KINDS
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.memref import alloca_scope, index_tuple
from egraft.ir.semantics.values import (Undefined, Unsupported, as_signed, as_unsigned, int_width, storage_dtype,
                                       to_ints, wrap)


def eval_expr(e: AF.AffineExpr, dims: Sequence[int], syms: Sequence[int]) -> int:
    if isinstance(e, AF.Const):
        return e.value
    if isinstance(e, AF.Dim):
        return dims[e.pos]
    if isinstance(e, AF.Symbol):
        return syms[e.pos]
    assert isinstance(e, AF.Binary)
    a, b = eval_expr(e.lhs, dims, syms), eval_expr(e.rhs, dims, syms)
    if e.kind == "add":
        return a + b
    if e.kind == "mul":
        return a * b
    if b == 0:
        raise Undefined(f"affine {e.kind} by zero")
    if e.kind == "floordiv":
        return a // b
    if e.kind == "ceildiv":
        return -((-a) // b)
    return a % b  # mod


def eval_map(amap: AF.AffineMap, operands: Sequence) -> list[int]:
    """The results of a map applied to dim values then symbol values."""
    ints = [int(v) for v in operands]
    dims, syms = ints[:amap.num_dims], ints[amap.num_dims:]
    return [eval_expr(r, dims, syms) for r in amap.results]


def in_set(iset: AF.IntegerSet, operands: Sequence) -> bool:
    ints = [int(v) for v in operands]
    dims, syms = ints[:iset.num_dims], ints[iset.num_dims:]
    return all((eval_expr(e, dims, syms) == 0) if eq else (eval_expr(e, dims, syms) >= 0)
               for e, eq in iset.constraints)


def _index(value: int) -> np.ndarray:
    """Maps compute on mathematical integers; a result the index type cannot hold is undefined."""
    if not -2**63 <= value < 2**63:
        raise Undefined(f"affine result {value} does not fit in index")
    return np.asarray(value, np.int64)


@evaluator("affine.apply")
def _apply(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return _index(eval_map(op.attr("map").value, args)[0])


@evaluator("affine.min")
def _min(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return _index(min(eval_map(op.attr("map").value, args)))


@evaluator("affine.max")
def _max(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return _index(max(eval_map(op.attr("map").value, args)))


@evaluator("affine.for")
def _for(interp: Interpreter, op: Operation, args: list) -> list:
    groups = op.opdef.operand_groups(op)  # type: ignore[union-attr]
    n_lb, n_ub = len(groups["lowerBoundOperands"]), len(groups["upperBoundOperands"])
    lb = max(eval_map(op.attr("lowerBoundMap").value, args[:n_lb]))
    ub = min(eval_map(op.attr("upperBoundMap").value, args[n_lb:n_lb + n_ub]))
    carried = list(args[n_lb + n_ub:])
    body = op.regions[0]
    for iv in range(lb, ub, op.attr("step").value):
        with alloca_scope(interp):  # affine.for is an AutomaticAllocationScope: per iteration
            carried = interp.run_region(body, [_index(iv), *carried])
    return carried


def _group_bounds(amap: AF.AffineMap, groups: Any, operands: Sequence, pick: Callable) -> list[int]:
    """One bound per induction variable: `pick` (max/min) over its group of map results."""
    results = eval_map(amap, operands)
    sizes = [int(x) for x in groups.to_numpy().ravel()]
    out, start = [], 0
    for size in sizes:
        out.append(pick(results[start:start + size]))
        start += size
    return out


def _identity(kind: str, t: T.Type) -> np.ndarray | None:
    dtype = storage_dtype(t)
    if isinstance(t, T.FloatType):
        value = {"addf": -0.0, "mulf": 1.0, "maximumf": -np.inf, "minimumf": np.inf,
                 "maxnumf": np.nan, "minnumf": np.nan}.get(kind)
        return None if value is None else np.asarray(value).astype(dtype)
    width = int_width(t)
    value = {"addi": 0, "muli": 1, "ori": 0, "andi": -1, "maxs": -(1 << (width - 1)),
             "mins": (1 << (width - 1)) - 1, "maxu": 0, "minu": -1}.get(kind)
    return None if value is None else wrap(value, t)


def _combine(kind: str, t: T.Type, acc: np.ndarray, x: np.ndarray) -> np.ndarray:
    if kind == "assign":
        return x
    if isinstance(t, T.FloatType):
        fn = {"addf": np.add, "mulf": np.multiply, "maximumf": np.maximum, "minimumf": np.minimum,
              "maxnumf": np.fmax, "minnumf": np.fmin}[kind]
        return np.asarray(fn(acc, x)).astype(acc.dtype)
    width = int_width(t)
    if kind in ("maxu", "minu"):
        a, b = as_unsigned(np.asarray(acc), width), as_unsigned(np.asarray(x), width)
        return acc if (a >= b) == (kind == "maxu") else x
    if kind in ("maxs", "mins"):
        a, b = as_signed(np.asarray(acc), width), as_signed(np.asarray(x), width)
        return acc if (a >= b) == (kind == "maxs") else x
    a, b = to_ints(np.asarray(acc)), to_ints(np.asarray(x))
    fn = {"addi": lambda p, q: p + q, "muli": lambda p, q: p * q, "ori": lambda p, q: p | q,
          "andi": lambda p, q: p & q}[kind]
    return wrap(fn(a, b), t)


@evaluator("affine.parallel")
def _parallel(interp: Interpreter, op: Operation, args: list) -> list:
    lb_map, ub_map = op.attr("lowerBoundsMap").value, op.attr("upperBoundsMap").value
    n_lb = lb_map.num_dims + lb_map.num_symbols
    lbs = _group_bounds(lb_map, op.attr("lowerBoundsGroups"), args[:n_lb], max)
    ubs = _group_bounds(ub_map, op.attr("upperBoundsGroups"), args[n_lb:], min)
    steps = [s.value for s in op.attr("steps")]
    kinds = [REDUCTION_KINDS[r.value] for r in op.attr("reductions")]
    types = [r.type for r in op.results]
    acc = [_identity(k, t) for k, t in zip(kinds, types)]
    for ivs in itertools.product(*(range(lb, ub, step) for lb, ub, step in zip(lbs, ubs, steps))):
        with alloca_scope(interp):
            yielded = interp.run_region(op.regions[0], [_index(iv) for iv in ivs])
        acc = [x if a is None else _combine(k, t, a, x) for k, t, a, x in zip(kinds, types, acc, yielded)]
    if any(a is None for a in acc):
        raise Undefined("affine.parallel 'assign' reduction over zero iterations")
    return acc


@evaluator("affine.delinearize_index")
def _delinearize(interp: Interpreter, op: Operation, args: list) -> list:
    index, basis = int(args[0]), [int(b) for b in args[1:]]
    if any(b <= 0 for b in basis):
        raise Undefined(f"delinearize_index basis {basis} has an element that is not positive")
    total = 1
    for b in basis:
        total *= b
    if not 0 <= index < total:
        raise Undefined(f"delinearize_index of {index} outside [0, {total})")
    out = []
    for b in reversed(basis):
        out.append(_index(index % b))
        index //= b
    return list(reversed(out))


@evaluator("affine.vector_load")
def _vector_load(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    start = index_tuple(eval_map(op.attr("map").value, args[1:]))
    return args[0].load_block(start, tuple(op.results[0].type.shape))


@evaluator("affine.vector_store")
def _vector_store(interp: Interpreter, op: Operation, args: list) -> list:
    args[1].store_block(index_tuple(eval_map(op.attr("map").value, args[2:])), np.asarray(args[0]))
    return []


@evaluator("affine.if")
def _if(interp: Interpreter, op: Operation, args: list) -> list:
    region = op.regions[0] if in_set(op.attr("condition").value, args) else op.regions[1]
    return interp.run_region(region)


@evaluator("affine.load")
def _load(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return args[0].load(index_tuple(eval_map(op.attr("map").value, args[1:])))


@evaluator("affine.store")
def _store(interp: Interpreter, op: Operation, args: list) -> list:
    args[1].store(index_tuple(eval_map(op.attr("map").value, args[2:])), args[0])
    return []


@evaluator("affine.dma_start")
def _dma_start(interp: Interpreter, op: Operation, args: list) -> list:
    """Runs the copy at once (a later `dma_wait` has nothing left to wait for): `n` elements
    in row-major order from the source subscript on, to the destination subscript on.  A
    strided DMA's layout in the slower memory is not modelled."""
    i, accesses = 0, []
    for name in ("src_map", "dst_map", "tag_map"):
        amap = op.attr(name).value
        n_in = amap.num_dims + amap.num_symbols
        accesses.append((args[i], index_tuple(eval_map(amap, args[i + 1:i + 1 + n_in]))))
        i += 1 + n_in
    if len(args) > i + 1:
        raise Unsupported("strided affine.dma_start")
    (src, src_at), (dst, dst_at) = accesses[0], accesses[1]
    for k in range(int(args[i])):  # element by element: each access checks bounds and initialization
        dst.store(_nth_after(dst, dst_at, k), src.load(_nth_after(src, src_at, k)))
    return []


def _nth_after(m: Any, start: tuple[int, ...], k: int) -> tuple[int, ...]:
    """The index `k` elements after `start` in row-major order."""
    shape = m.data.shape
    if any(not 0 <= s < d for s, d in zip(start, shape)):
        raise Undefined(f"DMA subscript {list(start)} out of bounds of memref of shape {list(shape)}")
    flat = int(np.ravel_multi_index(start, shape)) + k if shape else k
    if flat >= max(1, int(np.prod(shape))):
        raise Undefined(f"DMA runs past the end of a memref of shape {list(shape)}")
    return tuple(int(x) for x in np.unravel_index(flat, shape)) if shape else ()


@evaluator("affine.dma_wait")
def _dma_wait(interp: Interpreter, op: Operation, args: list) -> list:
    return []


@evaluator("affine.graybox")
def _graybox(interp: Interpreter, op: Operation, args: list) -> list:
    return interp.run_region(op.regions[0], args)
