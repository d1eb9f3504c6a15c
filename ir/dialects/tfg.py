"""The tfg dialect: TensorFlow graphs as MLIR (the TF Graph IR).

The dialect is open: any TensorFlow op is a `tfg.<OpType>` node printed in the
node form (`tfg_node.py`), with results named after the op and its control
token `%ctl`.  Registered ops are the structure around the nodes
(`tfg_func.py`: graph, func, return, get_result) and the control-flow ops
(`tfg_control_flow.py`).  Types and attributes are TensorFlow's `tf_type`
ones (`tfg_types.py`).
"""

from __future__ import annotations

from egraft.ir.dialects.tfg_control_flow import CONDITION, FUNCTIONAL_OPS, REGION_OPS, YIELD
from egraft.ir.dialects.tfg_func import FUNC, GET_RESULT, GRAPH, RETURN
from egraft.ir.dialects.tfg_node import NODE_FORM, node_result_names
from egraft.ir.records.registry import REGISTRY

TFG_DIALECT = REGISTRY.dialect(
    "tfg",
    summary="TensorFlow Graph IR: GraphDef and FunctionDef with nodes as operations.",
    description="Every TensorFlow NodeDef is one operation returning its outputs and a control token; "
                "control dependencies, requested and assigned devices and node names are first-class. "
                "Unregistered ops of the namespace are accepted (all TensorFlow ops are).",
    open=True,
    fallback_form=NODE_FORM,
    result_names=node_result_names,
)
TFG_DIALECT.add(GRAPH, FUNC, RETURN, GET_RESULT, YIELD, CONDITION, *FUNCTIONAL_OPS, *REGION_OPS)
