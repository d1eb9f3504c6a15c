"""Function, argument and node attributes that both importers (instantiated and generic) write."""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.graphdef.convert_types import dtype_to_type, full_type_attr
from egraft.ir.graphdef.errors import ImportFailure
from egraft.ir.graphdef.messages import FunctionDef, NodeDef


def handle_data_attr(arg) -> A.ArrayAttr:
    """``tfg.handle_data``: the tensor types a resource argument may hold."""
    items = []
    for shape_and_type in arg.handle_data:
        if not shape_and_type.dtype:
            raise ImportFailure("Invalid dtype for handle_data")
        element = dtype_to_type(shape_and_type.dtype)
        shape = shape_and_type.shape
        items.append(A.TypeAttr(T.UnrankedTensorType(element) if shape.unknown_rank else
                                T.RankedTensorType(tuple(d.size for d in shape.dim), element)))
    return A.ArrayAttr(tuple(items))


def resource_id_attrs(func: FunctionDef) -> dict[str, A.Attribute]:
    """``resource_arg_unique_id`` (a map) as two parallel i32 tensors."""
    if not func.resource_arg_unique_id:
        return {}
    keys, values = zip(*sorted(func.resource_arg_unique_id.items()))
    return {f"resource_arg_unique_ids_{suffix}": A.DenseElementsAttr(
        T.RankedTensorType((len(items),), T.i32), tuple(items)) for suffix, items in (("keys", keys), ("values", values))}


def node_mlir_attrs(node: NodeDef) -> dict[str, A.Attribute]:
    """What a node carries besides its op's attributes: ``_mlir_device``, ``_mlir_name`` and
    ``_mlir_fulltype``, each when the node has it."""
    attrs: dict[str, A.Attribute] = {}
    if node.device:
        attrs["_mlir_device"] = A.StringAttr(node.device)
    if node.name:
        attrs["_mlir_name"] = A.StringAttr(node.name)
    if node.HasField("experimental_type"):
        attrs["_mlir_fulltype"] = full_type_attr(node.experimental_type)
    return attrs
