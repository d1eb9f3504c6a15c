"""A reference interpreter for egraft's IR and random inputs for it.

    from egraft.ir.semantics import run_function, inputs_for
    results = run_function(module, [np.int32(3), np.float32(1.5)])

`interpreter.py` is the core (an evaluator table and the block walker);
`arith.py`, `func.py`, `memref.py`, `affine.py`, `executor.py`, `tf_math.py`
and `tf_array.py` register the semantics of their ops; `values.py` maps IR
types to numpy storage and models memory and undefined behaviour;
`inputs.py` draws random inputs (hypothesis, a test extra: it is imported when one
of its names is first asked for, so folding constants with the interpreter works on an
install without it); `compare.py` says when two runs agree.  The soundness harness that runs rules and passes against this
interpreter sits above them, in `egraft.passes.soundness`; this package
imports nothing outside `egraft.ir`.  See docs/semantics.md.
"""

from egraft.ir.semantics import dialects  # noqa: F401  (fills the evaluator table)
from egraft.ir.semantics.compare import (DEFAULT_TOLERANCE, Tolerance, UnsoundRewrite, check_agreement,
                                         differences)
from egraft.ir.semantics.interpreter import (EVALUATORS, Interpreter, Outcome, coverage, evaluator, execute,
                                             run_function)
from egraft.ir.semantics.values import CONTROL, MemRef, Undefined, Unsupported, attribute_value, storage_dtype

__all__ = [
    "CONTROL", "DEFAULT_TOLERANCE", "EVALUATORS", "Tolerance", "UnsoundRewrite",
    "check_agreement", "differences", "Interpreter", "MemRef", "Outcome", "Undefined", "Unsupported", "attribute_value",
    "coverage", "element_strategy", "evaluator", "execute", "inputs_for", "run_function", "storage_dtype",
    "value_for_type", "values_for_types",
]

_INPUTS = ("element_strategy", "inputs_for", "value_for_type", "values_for_types")


def __getattr__(name: str) -> object:
    """`inputs.py`'s names, imported on first use (it needs hypothesis)."""
    if name in _INPUTS:
        from egraft.ir.semantics import inputs

        return getattr(inputs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
