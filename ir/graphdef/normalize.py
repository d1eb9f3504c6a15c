"""Put a GraphDef in the canonical form TensorFlow's round-trip test compares.

TensorFlow's GraphDef -> tfg -> GraphDef test (``verify_roundtrip`` under
``tensorflow/core/ir/importexport/tests/roundtrip``) first pushes the *expected* graph
through ``GraphDef -> Graph -> GraphDef`` and then runs ``NormalizeTensorData`` on both
sides. egraft applies the structural part of both steps to both sides (it is
idempotent on an already canonical graph, so this is symmetric):

From the Graph round trip (graph nodes only; function bodies are copied verbatim):
  * a data input ``x:0`` is written ``x``;
  * repeated control inputs ``^a, ^a`` collapse to one;
  * the deprecated ``GraphDef.version`` and ``GraphDef.debug_info`` are not carried.

From ``NormalizeTensorData`` (graph and function nodes):
  * control inputs are sorted by name (data inputs keep their order);
  * attributes equal to their OpDef default are dropped — only when an ``op_lookup``
    provides the OpDef; TF uses its global op registry, so without TensorFlow a graph
    that spells out a default still differs from one that omits it;
  * nodes are sorted by name, functions by signature name;
  * ``FunctionDef.arg_attr`` entries with no attributes are dropped.

egraft also sorts ``library.gradient`` by function name: it is a map in disguise, and
TF's own build only passes because its matcher ignores repeated-field order.
Tensor values, NaNs and string tensors are handled at comparison time
(:mod:`.equivalence`).
"""

from __future__ import annotations

from collections.abc import Callable

from egraft.ir.graphdef.equivalence import Options, diff_messages
from egraft.ir.graphdef.messages import FunctionDef, GraphDef, NodeDef, OpDef

#: Finds the OpDef of a registered op by name, or None for unknown ops and functions.
OpDefLookup = Callable[[str], OpDef | None]


def canonical_input(name: str) -> str:
    """Spell an input the way ``Graph::ToGraphDef`` does: output 0 has no ``:0``."""
    return name[:-2] if name.endswith(":0") and not name.startswith("^") else name


def _sort_control_inputs(node: NodeDef, dedupe: bool) -> None:
    data = [i for i in node.input if not i.startswith("^")]
    control = [i for i in node.input if i.startswith("^")]
    if dedupe:
        control = list(dict.fromkeys(control))
    del node.input[:]
    node.input.extend(data + sorted(control))


def _strip_defaults(node: NodeDef, op_lookup: OpDefLookup | None) -> None:
    op_def = op_lookup(node.op) if op_lookup is not None else None
    if op_def is None:
        return
    for attr_def in op_def.attr:
        if (attr_def.HasField("default_value") and attr_def.name in node.attr
                and not diff_messages(node.attr[attr_def.name], attr_def.default_value, "",
                                      Options(compare_string_tensors=True))):
            del node.attr[attr_def.name]


def _normalize_node(node: NodeDef, op_lookup: OpDefLookup | None, in_graph: bool) -> None:
    if in_graph:
        inputs = [canonical_input(i) for i in node.input]
        del node.input[:]
        node.input.extend(inputs)
    _sort_control_inputs(node, dedupe=in_graph)
    _strip_defaults(node, op_lookup)


def _normalize_function(func: FunctionDef, op_lookup: OpDefLookup | None) -> None:
    for node in func.node_def:
        _normalize_node(node, op_lookup, in_graph=False)
    func.node_def.sort(key=lambda n: n.name)
    for index in [k for k, v in func.arg_attr.items() if not v.attr]:
        del func.arg_attr[index]


def normalize_graphdef(graph: GraphDef, op_lookup: OpDefLookup | None = None) -> GraphDef:
    """Return a normalized copy of ``graph``; the input is left untouched."""
    out = GraphDef()
    out.CopyFrom(graph)
    out.ClearField("version")
    out.ClearField("debug_info")
    for node in out.node:
        _normalize_node(node, op_lookup, in_graph=True)
    out.node.sort(key=lambda n: n.name)
    library = out.library
    for func in library.function:
        _normalize_function(func, op_lookup)
    library.function.sort(key=lambda f: f.signature.name)
    library.gradient.sort(key=lambda g: (g.function_name, g.gradient_func))
    return out
