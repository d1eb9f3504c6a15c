"""The record of TensorFlow's `Einsum`, which the arithmetic rules (patterns/grappler/
arithmetic.py) rewrite to `MatMul` / `BatchMatMulV2` where its equation is a matrix product.

Following TensorFlow's op registry: a variadic list of operands (`inputs`, one or two in
practice), one result, and the `equation` string in numpy's notation (`"bij,bjk->bik"`,
`...` for broadcast dimensions). Its extraction cost is 2: TF's kernel parses the equation
and runs transposes and reshapes around a batched matrix product, so where an Einsum is a
plain matrix product the `MatMul` / `BatchMatMulV2` (cost 1) is the cheaper program.
"""

from __future__ import annotations

from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.tf import TF_DIALECT
from egraft.ir.dialects.tf_ops import LEGACY_FORM
from egraft.ir.dialects.tf_types import TFTensor
from egraft.ir.records import constraints as C
from egraft.ir.records.opdef import AttrDef, OpDef, Variadic
from egraft.ir.verifier import op_error


def _verify(op: Operation) -> None:
    """TensorFlow's verifier: an Einsum has one or two operands."""
    if len(op.operands) not in (1, 2):
        raise op_error(op, "must have 1 or 2 operands")


EINSUM = OpDef("tf.Einsum", summary="Tensor contraction by an Einstein-summation equation",
               description="Each operand's dimensions are labelled by the letters before `->`; letters "
                           "missing from the output are summed over; `...` labels broadcast dimensions.",
               operands=(("inputs", Variadic(TFTensor)),), results=(("output", TFTensor),),
               attributes=(AttrDef("equation", C.StrAttr),), traits=(Traits.Pure,), assembly=LEGACY_FORM, cost=2.0, verify=_verify)

TF_DIALECT.add(EINSUM)
