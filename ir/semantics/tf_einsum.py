"""Semantics of `tf.Einsum` (numpy's `einsum`, whose equation notation TensorFlow's op shares).

TensorFlow's CPU kernel reduces an equation to transposes, reshapes and one batched matrix
product; numpy's `einsum` may sum in another order, so float results agree up to rounding
(cross-checked against TF's kernel in tests/grappler/test_arithmetic.py). An equation the
operands do not fit fails at run time (undefined here).
"""

from __future__ import annotations

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.tf_math import result_dtype
from egraft.ir.semantics.values import Undefined


@evaluator("tf.Einsum")
def _einsum(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    equation = op.attr("equation")
    if not isinstance(equation, A.StringAttr):
        raise Undefined("Einsum without an equation")
    try:
        return np.asarray(np.einsum(equation.value, *args), result_dtype(op))
    except ValueError as e:
        raise Undefined(f"Einsum {equation.value!r}: {e}") from e
