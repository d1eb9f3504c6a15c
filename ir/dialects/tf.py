"""The `tf` dialect (TensorFlow ops) and the `tf_type` namespace of its types.

`tf` is open: any `tf.*` op parses, prints generically and verifies as an
unregistered op, as TensorFlow graphs carry hundreds of op kinds.  The ops
in `tf_ops.py` have records.  `tf_type` holds no ops; it is registered so
that unknown `!tf_type.*` spellings are rejected while parsing.
"""

from __future__ import annotations

from egraft.ir.dialects.tf_ops import LEGACY_FORM, TF_OPS
from egraft.ir.dialects.tf_types import verify_tf_type
from egraft.ir.records.registry import REGISTRY

TF_DIALECT = REGISTRY.dialect(
    "tf",
    summary="TensorFlow operations outside the executor's special contract.",
    description="Regular TensorFlow operations: no dead values, no control dependencies, and "
                "sequential semantics within a block.  The dialect is open, so a graph may use any "
                "TensorFlow op; ops without a record are checked only structurally.  TensorFlow prints "
                "them all generically, with inherent attributes as properties (`<{...}>`) and derived or "
                "runtime attributes (`T`, `device`, `_output_shapes`) in the discardable dictionary.  "
                "The 2019 short form `tf.Add %a, %b : tensor<*xf32>` is accepted on input.",
    open=True,
    fallback_form=LEGACY_FORM,
)
TF_DIALECT.add(*TF_OPS)

TF_TYPE_DIALECT = REGISTRY.dialect(
    "tf_type",
    summary="TensorFlow's types and attributes (`!tf_type.resource`, `#tf_type.shape<...>`).",
    open=True,
    verify_type=verify_tf_type,
)
