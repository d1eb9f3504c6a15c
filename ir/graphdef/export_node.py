"""One tfg op -> one NodeDef, and the unique node names: what graph and function export share.

A node's inputs are its data operands, then ``^name`` for each control operand, each
spelled by a ``Namer`` the caller supplies (graphs and function bodies spell operands
differently). The ``_mlir_*`` attributes go back to the NodeDef's name, device and full
type, and name locations to ``experimental_debug_info``. Failures raise
:class:`~egraft.ir.graphdef.errors.ExportFailure`.
"""

from __future__ import annotations

from typing import Callable

from egraft.ir.core import attributes as A
from egraft.ir.core.location import FusedLoc, NameLoc
from egraft.ir.core.operation import Operation, Value
from egraft.ir.dialects.tfg_types import CONTROL
from egraft.ir.graphdef.convert_attrs import attr_to_attr_value
from egraft.ir.graphdef.convert_types import ConversionError, parse_full_type
from egraft.ir.graphdef.errors import ExportFailure
from egraft.ir.graphdef.messages import NodeDef

_KEYWORD_ATTRS = frozenset({"_mlir_name", "_mlir_device", "_mlir_assigned_device", "_mlir_fulltype"})

#: How an operand is written in a NodeDef's ``input`` list.
Namer = Callable[[Value], str]


def node_name(op: Operation) -> str:
    name = op.attr("_mlir_name")
    return name.value if isinstance(name, A.StringAttr) and isinstance(name.value, str) else ""


def op_type(op: Operation) -> str:
    if not op.name.startswith("tfg."):
        raise ExportFailure(f"'{op.name}' is not a tfg node and has no GraphDef form")
    return op.name[4:]


def fill_node(op: Operation, node: NodeDef, namer: Namer) -> None:
    """Everything but the name: op type, inputs, device, attributes, full type."""
    node.op = op_type(op)
    if op.regions:
        raise ExportFailure(f"region op '{op.name}' ({node.name}) must be converted to its functional "
                            f"form before export")
    data = [namer(v) for v in op.operands if v.type is not CONTROL]
    node.input.extend(data + [namer(v) for v in op.operands if v.type is CONTROL])
    attrs = op.all_attributes()
    device = attrs.get("_mlir_device")
    if isinstance(device, A.StringAttr):
        node.device = device.value if isinstance(device.value, str) else device.value.decode("utf-8", "replace")
    for key, value in attrs.items():
        if key in _KEYWORD_ATTRS:
            continue
        try:
            attr_to_attr_value(value, node.attr[key])
        except ConversionError as err:
            raise ExportFailure(f"node '{node.name}' attribute '{key}': {err}") from None
    full_type = attrs.get("_mlir_fulltype")
    if full_type is not None:
        parse_full_type(full_type, node.experimental_type)
    _fill_debug_info(op, node)


def _fill_debug_info(op: Operation, node: NodeDef) -> None:
    loc = op.loc
    parts = loc.locations if isinstance(loc, FusedLoc) else (loc,)
    if not parts or not all(isinstance(p, NameLoc) for p in parts):
        return
    info = node.experimental_debug_info
    funcs = []
    for part in parts:
        name, _, func = part.name.partition("@")  # type: ignore[attr-defined]
        info.original_node_names.append(name)
        funcs.append(func)
    if any(funcs):
        info.original_func_names.extend(funcs)


class NameTable:
    """Unique node names: ``_mlir_name`` when present, else a fresh ``<Op>_<n>``."""

    def __init__(self, ops: list[Operation]) -> None:
        self.names: dict[Operation, str] = {}
        taken = {node_name(op) for op in ops}
        counter = 0
        for op in ops:
            name = node_name(op)
            if not name:
                base = op.name.split(".", 1)[-1]
                while f"{base}_{counter}" in taken:
                    counter += 1
                name = f"{base}_{counter}"
                taken.add(name)
            self.names[op] = name
