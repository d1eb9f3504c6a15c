"""Dialect definitions; importing this package registers all of them."""

from egraft.ir.dialects import builtin, func, tfg, tf, tf_executor  # noqa: F401
from egraft.ir.dialects import arith, cf, memref, affine_ops, affine_dma, graybox, scf  # noqa: F401
from egraft.ir.dialects import tf_nn_ops  # noqa: F401
from egraft.ir.dialects import tf_einsum_ops  # noqa: F401
from egraft.ir.dialects import tf_fused_ops  # noqa: F401
from egraft.ir.dialects import std_era  # noqa: F401  (2019 op spellings)
