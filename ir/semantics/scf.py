"""Semantics of `scf.for`, `scf.if` (and so of 2019's `loop.for`/`loop.if`).

`scf.for` runs its body for `lb, lb + step, ...` below `ub`, threading the
`iter_args` values; its bounds are signed values of their type.  A step that
is not positive at run time is undefined behaviour (MLIR's verifier refuses
only constant ones).  `scf.if` runs one of its regions; an absent else region
yields nothing.
"""

from __future__ import annotations

from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.values import Undefined, as_signed, int_width, wrap


def _signed(op: Operation, i: int, value) -> int:
    return int(as_signed(value, int_width(op.operands[i].type)))


@evaluator("scf.for")
def _for(interp: Interpreter, op: Operation, args: list) -> list:
    lb, ub, step = (_signed(op, i, args[i]) for i in range(3))
    if step <= 0:
        raise Undefined(f"scf.for with step {step}")
    iv_type = op.operands[0].type
    carried = list(args[3:])
    body = op.regions[0]
    for iv in range(lb, ub, step):
        carried = interp.run_region(body, [wrap(iv, iv_type), *carried])
    return carried


@evaluator("scf.if")
def _if(interp: Interpreter, op: Operation, args: list) -> list:
    return interp.run_region(op.regions[0] if bool(args[0]) else op.regions[1])
