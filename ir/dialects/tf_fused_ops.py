"""Records of TensorFlow's fused kernels (`_FusedConv2D`, `_FusedDepthwiseConv2dNative`,
`_FusedMatMul`, `_FusedBatchNormEx`), which Grappler's remapper emits and so do the rules
of patterns/grappler/remapper.py.

They follow TensorFlow's op registry (ir/graphdef/op_registry.json, and what the installed
TensorFlow's kernels read; tests/grappler/test_remapper.py checks the names against it):

* the contraction's own operands (`input`, `filter` / `a`, `b`), then `args`: one bias
  for `fused_ops = ["BiasAdd", ...]`, or a BatchNorm's scale, offset, mean and variance
  for `["FusedBatchNorm", ...]` (`num_args` counts them). `_FusedConv2D` also declares
  `host_args` (`num_host_args`, default 0), used by no fusion on these kernels' float
  paths; the record folds them into `args`, and the rules always set `num_host_args = 0`;
* `fused_ops`: what follows the contraction, in order; the second entry, if any, is the
  activation (Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid, ...), `leakyrelu_alpha` its
  slope for LeakyRelu, `epsilon` the BatchNorm's;
* the contraction's attributes unchanged (strides, padding, explicit_paddings,
  data_format, dilations, transpose_a/b, ...).

`_FusedBatchNormEx` is FusedBatchNormV3 with an optional side input added and an
`activation_mode` applied to y; it has V3's six results.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.tf import TF_DIALECT
from egraft.ir.dialects.tf_ops import LEGACY_FORM
from egraft.ir.dialects.tf_types import TFTensor
from egraft.ir.records import constraints as C
from egraft.ir.records.opdef import AttrDef, OpDef, Variadic

_NHWC = A.StringAttr("NHWC")
_FUSED = (
    AttrDef("num_args", C.AnyIntAttr),
    AttrDef("fused_ops", C.StrArrayAttr, default=A.ArrayAttr(())),
    AttrDef("epsilon", C.AnyFloatAttr, default=A.FloatAttr(0.0001, T.f32)),
    AttrDef("leakyrelu_alpha", C.AnyFloatAttr, default=A.FloatAttr(0.2, T.f32)),
)
_WINDOW = (
    AttrDef("strides", C.I64ArrayAttr),
    AttrDef("padding", C.str_enum("SAME", "VALID", "EXPLICIT")),
    AttrDef("explicit_paddings", C.I64ArrayAttr, default=A.ArrayAttr(())),
    AttrDef("data_format", C.str_enum("NHWC", "NCHW"), default=_NHWC),
    AttrDef("dilations", C.I64ArrayAttr,
            default=A.ArrayAttr(tuple(A.IntegerAttr(1, T.i64) for _ in range(4)))),
)
_FALSE = A.BoolAttr(False)


def _fused(name: str, summary: str, operands: tuple[str, str], attributes: tuple, result: str) -> OpDef:
    return OpDef(f"tf.{name}", summary=summary,
                 description="The contraction, then each of fused_ops in order on its result; the "
                             "args are the fused ops' operands (a bias, or a BatchNorm's four vectors).",
                 operands=((operands[0], TFTensor), (operands[1], TFTensor), ("args", Variadic(TFTensor))),
                 results=((result, TFTensor),), attributes=attributes + _FUSED, traits=(Traits.Pure,),
                 assembly=LEGACY_FORM)


TF_FUSED_OPS = [
    _fused("_FusedConv2D", "Conv2D followed by fused_ops (BiasAdd or FusedBatchNorm, then an activation)",
           ("input", "filter"),
           _WINDOW + (AttrDef("filter_format", C.str_enum("HWIO", "OIHW", "OIHW_VECT_I"),
                              default=A.StringAttr("HWIO")),
                      AttrDef("use_cudnn_on_gpu", C.BoolAttr, default=A.BoolAttr(True)),
                      AttrDef("num_host_args", C.AnyIntAttr, default=A.IntegerAttr(0, T.i64))),
           "output"),
    _fused("_FusedDepthwiseConv2dNative", "DepthwiseConv2dNative followed by fused_ops (no EXPLICIT padding)",
           ("input", "filter"), (AttrDef("padding", C.str_enum("SAME", "VALID")),)
           + tuple(a for a in _WINDOW if a.name not in ("padding", "explicit_paddings")), "output"),
    _fused("_FusedMatMul", "MatMul followed by fused_ops (BiasAdd, then an activation)", ("a", "b"),
           (AttrDef("transpose_a", C.BoolAttr, default=_FALSE), AttrDef("transpose_b", C.BoolAttr, default=_FALSE)),
           "product"),
    OpDef("tf._FusedBatchNormEx", summary="FusedBatchNormV3, plus side inputs, then activation_mode",
          operands=tuple((n, TFTensor) for n in ("x", "scale", "offset", "mean", "variance"))
          + (("side_input", Variadic(TFTensor)),),
          results=tuple((n, TFTensor) for n in ("y", "batch_mean", "batch_variance", "reserve_space_1",
                                                 "reserve_space_2", "reserve_space_3")),
          attributes=(AttrDef("epsilon", C.AnyFloatAttr, default=A.FloatAttr(0.0001, T.f32)),
                      AttrDef("exponential_avg_factor", C.AnyFloatAttr, default=A.FloatAttr(1.0, T.f32)),
                      AttrDef("num_side_inputs", C.AnyIntAttr, default=A.IntegerAttr(0, T.i64)),
                      AttrDef("activation_mode", C.StrAttr, default=A.StringAttr("Identity")),
                      AttrDef("data_format", C.str_enum("NHWC", "NCHW", "NDHWC", "NCDHW"), default=_NHWC),
                      AttrDef("is_training", C.BoolAttr, default=A.BoolAttr(True))),
          traits=(Traits.Pure,), assembly=LEGACY_FORM),
]

TF_DIALECT.add(*TF_FUSED_OPS)
