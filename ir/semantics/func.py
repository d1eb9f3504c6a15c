"""Semantics of `func` (return, call) and `cf` (branches, assert).

Terminators that only hand their operands to the parent (`func.return`,
`affine.yield`, `tf.Yield`, ...) have an evaluator that does nothing: the
block walker returns their operands.  They are registered so that
`coverage()` lists them and an unknown terminator is reported, not ignored.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, Jump, evaluator, lookup_symbol
from egraft.ir.semantics.values import Undefined


@evaluator("func.return", "affine.yield", "tf.Yield", "tf_executor.yield", "tf_executor.fetch")
def _return(interp: Interpreter, op: Operation, args: list) -> list:
    return []


@evaluator("func.call")
def _call(interp: Interpreter, op: Operation, args: list) -> list:
    callee = lookup_symbol(op, op.attr("callee"))
    return interp.call(callee, args)


@evaluator("cf.br")
def _br(interp: Interpreter, op: Operation, args: list) -> Jump:
    return Jump(op.successors[0], args)


@evaluator("cf.cond_br")
def _cond_br(interp: Interpreter, op: Operation, args: list) -> Jump:
    groups = op.opdef.operand_groups(op)  # type: ignore[union-attr]
    n_true = len(groups["trueDestOperands"])
    if bool(args[0]):
        return Jump(op.successors[0], args[1:1 + n_true])
    return Jump(op.successors[1], args[1 + n_true:])


@evaluator("cf.assert")
def _assert(interp: Interpreter, op: Operation, args: list[Any]) -> list:
    if not bool(np.asarray(args[0])):
        raise Undefined(f"cf.assert failed: {op.attr('msg')}")
    return []
