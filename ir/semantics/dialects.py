"""Imports every evaluator module so that the table in `interpreter.py` is full."""

from egraft.ir.semantics import affine, arith, executor, func, memref, scf, tf_array, tf_math  # noqa: F401
from egraft.ir.semantics import tf_shape  # noqa: F401
from egraft.ir.semantics import tf_nn  # noqa: F401
from egraft.ir.semantics import tf_einsum  # noqa: F401
from egraft.ir.semantics import tf_fused  # noqa: F401
