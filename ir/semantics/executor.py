"""Semantics of `tf_executor` graphs without control flow (islands, fetch).

A graph is a graph region: ops may use values defined later in the block, so
ops run in dependency order (each once, as TensorFlow's executor schedules
them).  An island runs its body and yields its values plus a control token;
control tokens carry no data (`CONTROL`).  Switch/Merge and friends (dead
values) are not modelled here: `tests/islands/semantics.py` has a reference
with deadness for those.
"""

from __future__ import annotations

from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.values import CONTROL, Unsupported


@evaluator("tf_executor.graph")
def _graph(interp: Interpreter, op: Operation, args: list) -> list:
    block = op.regions[0].entry
    pending = [o for o in block if o is not block.last]  # type: ignore[union-attr]
    while pending:
        ready = [o for o in pending if all(v in interp.env for v in _reads(o))]
        if not ready:
            raise Unsupported("tf_executor.graph has a cycle (NextIteration?) or an unknown value")
        for o in ready:
            interp.eval_op(o)
        pending = [o for o in pending if o not in ready]
    return [interp.value(v) for v in block.last.operands]  # type: ignore[union-attr]


def _reads(op: Operation) -> list:
    """Every value defined outside `op` that it or its nested ops read."""
    inner = set(op.walk())
    return [v for o in inner for v in o.operands if v.owner_op not in inner]


@evaluator("tf_executor.island")
def _island(interp: Interpreter, op: Operation, args: list) -> list:
    return [*interp.run_region(op.regions[0]), CONTROL]


@evaluator("tf_executor.ControlTrigger")
def _control_trigger(interp: Interpreter, op: Operation, args: list) -> list:
    """A control token once its control inputs fired (it turns dead inputs live; no deadness here)."""
    return [CONTROL]
