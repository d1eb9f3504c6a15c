"""Records of TensorFlow's batch-normalization ops (`FusedBatchNorm`, V2, V3), which the
BatchNorm folding rules (patterns/grappler/batchnorm.py) match.

The convolutions, `MatMul` and `BiasAdd` the folding also touches already have records in
`tf_ops.py`; this module adds only what it lacks, to the same open `tf` dialect.  The
records follow TensorFlow's op registry: five operands (`x`, then the per-channel `scale`,
`offset`, `mean`, `variance`), and five results for FusedBatchNorm / V2 (`y`, the batch
mean and variance, two reserve spaces) or six for V3 (a third reserve space).  Only `y`
is defined the same way on every device, which is why the rules rewrite only that result.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.tf import TF_DIALECT
from egraft.ir.dialects.tf_ops import LEGACY_FORM
from egraft.ir.dialects.tf_types import TFTensor
from egraft.ir.records import constraints as C
from egraft.ir.records.opdef import AttrDef, OpDef

_FORMAT = AttrDef("data_format", C.str_enum("NHWC", "NCHW", "NDHWC", "NCDHW"), default=A.StringAttr("NHWC"))
_ATTRIBUTES = (
    AttrDef("epsilon", C.F32Attr, default=A.FloatAttr(0.0001, T.f32)),
    AttrDef("exponential_avg_factor", C.F32Attr, default=A.FloatAttr(1.0, T.f32)),
    _FORMAT,
    AttrDef("is_training", C.BoolAttr, default=A.BoolAttr(True)),
)
_OPERANDS = tuple((name, TFTensor) for name in ("x", "scale", "offset", "mean", "variance"))
_RESULTS = tuple((name, TFTensor) for name in ("y", "batch_mean", "batch_variance", "reserve_space_1",
                                                "reserve_space_2"))


def _batch_norm(name: str, summary: str, extra_results: tuple = ()) -> OpDef:
    return OpDef(f"tf.{name}", summary=summary,
                 description="y = (x - mean) * scale / sqrt(variance + epsilon) + offset per channel "
                             "(the channel axis is named by data_format); with is_training the batch "
                             "statistics replace mean and variance.",
                 operands=_OPERANDS, results=_RESULTS + extra_results, attributes=_ATTRIBUTES,
                 traits=(Traits.Pure,), assembly=LEGACY_FORM)


TF_NN_OPS = [
    _batch_norm("FusedBatchNorm", "Batch normalization (float32 statistics)"),
    _batch_norm("FusedBatchNormV2", "Batch normalization, statistics typed apart from x"),
    _batch_norm("FusedBatchNormV3", "Batch normalization with a third reserve space",
                (("reserve_space_3", TFTensor),)),
]

TF_DIALECT.add(*TF_NN_OPS)
