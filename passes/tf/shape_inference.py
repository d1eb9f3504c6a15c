"""`tf-shape-inference`: refine tf op result types from static shapes.

    egraft-opt model.pb --tf-input-arrays=x --tf-output-arrays=y --emit=tf_executor -tf-shape-inference
    egraft-opt tf_executor.mlir -tf-shape-inference

Each tf op's result type (`tensor<*xf32>` after a GraphDef import) becomes the most precise
type its operands' static shapes give (`tensor<1x112x112x32xf32>`), by the shape functions
of `egraft.ir.semantics.tf_shapes` (TensorFlow's shape semantics per op; anything unknown
stays unknown, never wrong). Shapes start from the function's argument types (the feeds'
shapes: `--tf-input-shapes`), constants' types and Placeholders' `shape` attributes, and
flow through small constant integer tensors (`Shape` → `StridedSlice` → `Pack` → `Reshape`).
The results of `tf_executor.island`s and `tf_executor.graph`s and the function's result
types follow their yields, fetches and returns (their verifiers demand equal types); call
sites keep their own (compatible) types. On a GraphDef as imported (tfg), the nodes of
the `tfg.graph` are refined (function bodies of the library only in the tf_executor form). Only the element type a result had is ever kept:
dtypes are not inferred.
"""

from __future__ import annotations

import attrs

from egraft.ir import Operation

from egraft.passes.manager.registry import Pass, PassContext, register_pass


@register_pass
@attrs.define
class TFShapeInference(Pass):
    """Refines the result types of tf ops from static shapes."""

    NAME = "tf-shape-inference"
    SUMMARY = "Refine tf op result types from static shapes (shape functions per op)"
    ANCHOR = None

    def run(self, op: Operation, ctx: PassContext) -> None:
        from egraft.ir.semantics.tf_shapes import refine_types  # imported here: egraft-opt loads every pass

        refine_types(op)
