"""The reference interpreter's core: a table of op evaluators and the block walker.

Each dialect module of this package registers one evaluator per op name
(`@evaluator("arith.addi")`); the package's `__init__` imports them all
(`dialects.py`) and runs before any of its modules is imported, so the table
is full whenever this one is used.  The core walks blocks in order, looks each
op up in the table and stores its results.  There is no chain of
`if op.name ==`: adding an op is adding a table entry, and `coverage()` lists
what is known.

An evaluator is `fn(interp, op, args) -> results` where `args` are the
operand values and the results a sequence (or one value for single-result
ops).  Ops with regions run them through `interp.run_region`, which returns
the operands of the region's terminator; the CFG ops of `cf` jump between
blocks.  SSA values are unique, so one environment (value -> runtime value)
serves a whole function, nested regions included.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from egraft.ir.core.operation import Block, Operation, Region, Value
from egraft.ir.core.symbols import SymbolTable
from egraft.ir.semantics.values import CONTROL, MemRef, Undefined, Unsupported, check_value
from egraft.ir.core.traits import Traits

Evaluator = Callable[["Interpreter", Operation, list[Any]], Any]

EVALUATORS: dict[str, Evaluator] = {}


def evaluator(*names: str) -> Callable[[Evaluator], Evaluator]:
    """Register `fn` as the semantics of the ops called `names`."""
    def register(fn: Evaluator) -> Evaluator:
        for name in names:
            if name in EVALUATORS:
                raise ValueError(f"two evaluators for '{name}'")
            EVALUATORS[name] = fn
        return fn
    return register


def coverage() -> list[str]:
    """Names of every op the interpreter can evaluate, sorted."""
    return sorted(EVALUATORS)


class Jump:
    """A branch out of a block (the result of a `cf` terminator's evaluator)."""

    __slots__ = ("block", "args")

    def __init__(self, block: Block, args: Sequence[Any]) -> None:
        self.block = block
        self.args = list(args)


class Interpreter:
    """Evaluates ops over one environment; `max_steps` bounds runaway loops."""

    def __init__(self, max_steps: int = 1_000_000, check_types: bool = True) -> None:
        self.env: dict[Value, Any] = {}
        self.steps = 0
        self.max_steps = max_steps
        self.check_types = check_types

    # ------------------------------------------------------------ values

    def value(self, v: Value) -> Any:
        try:
            return self.env[v]
        except KeyError:
            raise Unsupported(f"value {v!r} read before it was computed") from None

    def bind(self, values: Sequence[Value], runtime: Sequence[Any]) -> None:
        if len(values) != len(runtime):
            raise TypeError(f"{len(runtime)} runtime values for {len(values)} IR values")
        for v, x in zip(values, runtime):
            if self.check_types:
                check_value(x, v.type)
            self.env[v] = x

    # ------------------------------------------------------------ ops

    def eval_op(self, op: Operation) -> Any:
        """Evaluate one op and bind its results; returns a `Jump` for branches."""
        self.steps += 1
        if self.steps > self.max_steps:
            raise Undefined(f"more than {self.max_steps} steps (non-termination?)")
        fn = EVALUATORS.get(op.name)
        if fn is None:
            raise Unsupported(f"no semantics for '{op.name}'")
        args = [self.value(v) for v in op.operands]
        with np.errstate(all="ignore"):
            out = fn(self, op, args)
        if isinstance(out, Jump):
            return out
        if not isinstance(out, (list, tuple)):
            out = [out]
        # numpy hands back scalars for 0-d computations; values are always arrays.
        self.bind(op.results, [np.asarray(x) if isinstance(x, np.generic) else x for x in out])
        return None

    def run_block(self, block: Block, args: Sequence[Any]) -> Jump | list[Any]:
        """Run a block: the terminator's operand values, or where it branches."""
        self.bind(block.args, args)
        for op in block:
            if op is block.last and _is_terminator(op):
                if op.name in EVALUATORS:
                    jump = self.eval_op(op)
                    if isinstance(jump, Jump):
                        return jump
                return [self.value(v) for v in op.operands]
            self.eval_op(op)
        return []

    def run_region(self, region: Region, args: Sequence[Any] = ()) -> list[Any]:
        """Run a region from its entry block, following branches, to a returning terminator."""
        block = region.entry
        if block is None:
            return []
        while True:
            out = self.run_block(block, args)
            if not isinstance(out, Jump):
                return out
            block, args = out.block, out.args

    def call(self, func: Operation, args: Sequence[Any]) -> list[Any]:
        """Call a function-like op (a fresh activation: loops may call recursively)."""
        return self.run_region(func.regions[0], args)


def _is_terminator(op: Operation) -> bool:
    if op.successors:
        return True
    return op.has_trait(Traits.Terminator)


def lookup_symbol(op: Operation, callee: Any) -> Operation:
    found = SymbolTable.lookup_from(op, callee)
    if found is None:
        raise Unsupported(f"unknown symbol {callee}")
    return found


def snapshot(values: Sequence[Any]) -> list[Any]:
    """Copies of runtime values (memrefs are mutable; arrays are copied defensively;
    numpy scalars become the 0-d arrays the interpreter works on)."""
    return [v.snapshot() if isinstance(v, MemRef) else
            (np.array(v) if isinstance(v, (np.ndarray, np.generic)) else v) for v in values]


def find_function(top: Operation, name: str | None = None) -> Operation:
    """`top` itself if it is a function, else the function `name` in it (or its only one)."""
    if top.name in ("func.func", "tfg.func"):
        return top
    funcs = [op for op in top.walk() if op.name in ("func.func", "tfg.func") and op.regions[0].blocks]
    if name is not None:
        funcs = [f for f in funcs if f.attr("sym_name").value == name]  # type: ignore[union-attr]
    if len(funcs) != 1:
        raise ValueError(f"expected one function{' named ' + name if name else ''}, found {len(funcs)}")
    return funcs[0]


class Outcome:
    """What one run produced: the returned values and the final state of the memref inputs."""

    __slots__ = ("results", "memory")

    def __init__(self, results: list[Any], memory: list[MemRef]) -> None:
        self.results = results
        self.memory = memory

    def observable(self) -> list[Any]:
        """Everything a caller can see: results, then the memref arguments' contents."""
        return [*self.results, *self.memory]


def execute(top: Operation, inputs: Sequence[Any], name: str | None = None) -> Outcome:
    """Run a `func.func` (or the one named `name` in a module) on numpy inputs.

    Inputs are numpy arrays in the storage of the argument types (see
    `values.py`) and `MemRef`s for memrefs; they are copied first, so the
    caller's inputs are never mutated.  Raises `Undefined` when the program's
    behaviour is undefined on the input, `Unsupported` for ops without semantics."""
    func = find_function(top, name)
    args = snapshot(inputs)
    results = Interpreter().call(func, args)
    return Outcome(results, [a for a in args if isinstance(a, MemRef)])


def run_function(top: Operation, inputs: Sequence[Any], name: str | None = None) -> list[Any]:
    """The values a function returns on `inputs` (see `execute`)."""
    return execute(top, inputs, name).results


__all__ = ["CONTROL", "EVALUATORS", "Interpreter", "Jump", "Outcome", "coverage", "evaluator", "execute",
           "find_function", "lookup_symbol", "run_function"]
