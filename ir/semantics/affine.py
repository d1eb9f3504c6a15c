"""Semantics of the `affine` dialect: maps, for, if, load/store, min/max, graybox.

Affine expressions evaluate on Python ints (mathematical integers; a value an op
returns that does not fit in 64 bits is undefined): `floordiv`, `ceildiv` and `mod`
round toward minus infinity and `mod` takes the divisor's sign, as MLIR
defines them; a zero divisor (possible in semi-affine maps) is undefined.
A loop runs from the max of its lower-bound map's results to the min of its
upper bound's, by its step, threading `iter_args` through `affine.yield`.
`affine.graybox` runs its region in place with the memrefs bound to its
block arguments.  Each loop iteration is an automatic allocation scope: the
`memref.alloca`s it makes are freed when it ends (memref.py).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from egraft.ir.core import affine as AF
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.memref import alloca_scope, index_tuple
from egraft.ir.semantics.values import Undefined


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


@evaluator("affine.graybox")
def _graybox(interp: Interpreter, op: Operation, args: list) -> list:
    return interp.run_region(op.regions[0], args)
