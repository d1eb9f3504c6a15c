"""tfg module -> GraphDef, the inverse of :mod:`.import_graphdef`.

``tfg.graph`` nodes become ``GraphDef.node`` and every ``tfg.func`` a FunctionDef
(:mod:`.export_function`); each op becomes a NodeDef as :mod:`.export_node` says. A data
operand is spelled ``x`` / ``x:1`` in the graph and by output segment (``x:output:0``) in
function bodies, as TF's exporter does.

Errors raise :class:`GraphDefError` naming the op that cannot be exported.
"""

from __future__ import annotations

import re
from typing import Callable

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation, OpResult, Value
from egraft.ir.dialects.tfg_types import CONTROL
from egraft.ir.graphdef.convert_types import ConversionError
from egraft.ir.graphdef.errors import ExportFailure, GraphDefError
from egraft.ir.graphdef.export_function import export_function, library_lookup
from egraft.ir.graphdef.export_node import NameTable, Namer, fill_node
from egraft.ir.graphdef.messages import GraphDef, OpDef

_VERSION = re.compile(r"producer\s*=\s*(-?\d+)\s*,\s*min_consumer\s*=\s*(-?\d+)"
                      r"(?:\s*,\s*bad_consumers\s*=\s*\[([^\]]*)\])?")


def fill_versions(graph_op: Operation, out: GraphDef) -> None:
    version = graph_op.attr("version")
    m = _VERSION.search(version.params) if isinstance(version, A.DialectAttr) else None
    if m is None:
        raise ExportFailure(f"tfg.graph has no valid version attribute: {version}")
    out.versions.producer = int(m.group(1))
    out.versions.min_consumer = int(m.group(2))
    if m.group(3) and m.group(3).strip():
        out.versions.bad_consumers.extend(int(x) for x in m.group(3).split(","))


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
