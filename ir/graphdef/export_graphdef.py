"""tfg module -> GraphDef, the inverse of :mod:`.import_graphdef`.

``tfg.graph`` nodes become ``GraphDef.node`` and every ``tfg.func`` a FunctionDef
(:mod:`.export_function`). A node's inputs are its data operands, then ``^name`` for
each control operand; a data operand is spelled ``x`` / ``x:1`` in the graph and by
output segment (``x:output:0``) in function bodies, as TF's exporter does. The
``_mlir_*`` attributes go back to the NodeDef's name, device and full type, and
name locations to ``experimental_debug_info``.

Errors raise :class:`GraphDefError` naming the op that cannot be exported.
"""

from __future__ import annotations

import re
from typing import Callable

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation, OpResult, Value
from egraft.ir.dialects.tfg_types import CONTROL
from egraft.ir.core.location import FusedLoc, NameLoc
from egraft.ir.graphdef.convert_attrs import attr_to_attr_value
from egraft.ir.graphdef.convert_types import ConversionError, parse_full_type
from egraft.ir.graphdef.errors import GraphDefError
from egraft.ir.graphdef.messages import GraphDef, NodeDef, OpDef

_KEYWORD_ATTRS = frozenset({"_mlir_name", "_mlir_device", "_mlir_assigned_device", "_mlir_fulltype"})
_VERSION = re.compile(r"producer\s*=\s*(-?\d+)\s*,\s*min_consumer\s*=\s*(-?\d+)"
                      r"(?:\s*,\s*bad_consumers\s*=\s*\[([^\]]*)\])?")

#: How an operand is written in a NodeDef's ``input`` list.
Namer = Callable[[Value], str]


class ExportFailure(Exception):
    """An op egraft cannot write as a NodeDef/FunctionDef."""


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


def fill_versions(graph_op: Operation, out: GraphDef) -> None:
    version = graph_op.attr("version")
    m = _VERSION.search(version.params) if isinstance(version, A.DialectAttr) else None
    if m is None:
        raise ExportFailure(f"tfg.graph has no valid version attribute: {version}")
    out.versions.producer = int(m.group(1))
    out.versions.min_consumer = int(m.group(2))
    if m.group(3) and m.group(3).strip():
        out.versions.bad_consumers.extend(int(x) for x in m.group(3).split(","))


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


def graph_namer(names: NameTable) -> Namer:
    """``x``, ``x:2`` and ``^x`` as in GraphDef graphs."""

    def name_of(value: Value) -> str:
        if not isinstance(value, OpResult):
            raise ExportFailure("a graph node uses a block argument, which a GraphDef cannot express")
        base = names.names[value.owner]
        if value.type is CONTROL:
            return "^" + base
        return base if value.index == 0 else f"{base}:{value.index}"

    return name_of


def export_graph(graph_op: Operation, out: GraphDef) -> None:
    fill_versions(graph_op, out)
    ops = list(graph_op.regions[0].blocks[0]) if graph_op.regions[0].blocks else []
    names = NameTable(ops)
    namer = graph_namer(names)
    for op in ops:
        node = out.node.add()
        node.name = names.names[op]
        fill_node(op, node, namer)


def _top_ops(top: Operation) -> list[Operation]:
    if top.name in ("tfg.graph", "tfg.func"):
        return [top]
    return [op for region in top.regions for block in region.blocks for op in block]


def export_graphdef(top: Operation, source: str = "<module>",
                    signatures: Callable[[str], OpDef | None] | None = None) -> GraphDef:
    """The GraphDef of a module holding a ``tfg.graph`` and ``tfg.func`` ops."""
    from egraft.ir.graphdef.export_function import export_function, library_lookup

    out = GraphDef()
    ops = _top_ops(top)
    graphs = [op for op in ops if op.name == "tfg.graph"]
    funcs = [op for op in ops if op.name == "tfg.func"]
    others = [op for op in ops if op.name not in ("tfg.graph", "tfg.func")]
    try:
        if len(graphs) > 1:
            raise ExportFailure(f"a GraphDef holds one graph, the module has {len(graphs)} tfg.graph ops")
        if others:
            raise ExportFailure(f"'{others[0].name}' cannot be exported to a GraphDef (expected tfg.graph "
                                f"and tfg.func only)")
        if graphs:
            export_graph(graphs[0], out)
        lookup = signatures or library_lookup(funcs)
        for func in funcs:
            export_function(func, out.library, lookup)
    except (ExportFailure, ConversionError) as err:
        raise GraphDefError(source, str(err)) from None
    return out
