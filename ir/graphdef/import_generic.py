"""Generic (uninstantiated) FunctionDefs -> ``tfg.func generic``.

A function whose body uses a ``placeholder`` attribute cannot know its types, so, as
in TF's ``functiondef_import.cc``, every value is ``!tf_type.tensor``, each node has
one opaque result plus its control token, and a named output ``"x:output:1"`` is
unpacked by ``tfg.get_result(%x) "output" : 1`` (one per distinct reference). The
signature keeps its type attributes as ``tfg.type_attr``/``tfg.number_attr``/... on the
arguments so the exporter can rebuild it.
"""

from __future__ import annotations

from typing import Mapping

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Block, Operation, Region, Value
from egraft.ir.dialects.tfg_types import CONTROL, OPAQUE_TENSOR
from egraft.ir.graphdef.convert_attrs import attr_value_to_attr
from egraft.ir.graphdef.convert_types import dtype_to_type, full_type_attr
from egraft.ir.graphdef.errors import ImportFailure
from egraft.ir.graphdef.function_attrs import handle_data_attr, node_mlir_attrs, resource_id_attrs
from egraft.ir.graphdef.messages import FunctionDef

#: TF rejects output indices that do not fit its 32-bit vector sizes.
_MAX_INDEX = 2**32 - 2


def is_generic(func: FunctionDef) -> bool:
    return any(value.placeholder for node in func.node_def for value in node.attr.values())


def generic_arg_attrs(arg) -> list[tuple[str, A.Attribute]]:
    entries: list[tuple[str, A.Attribute]] = [("tfg.name", A.StringAttr(arg.name))]
    if arg.description:
        entries.append(("tfg.description", A.StringAttr(arg.description)))
    if arg.type:
        entries.append(("tfg.type", A.TypeAttr(dtype_to_type(arg.type))))
    for key in ("type_attr", "number_attr", "type_list_attr"):
        if getattr(arg, key):
            entries.append((f"tfg.{key}", A.StringAttr(getattr(arg, key))))
    if arg.handle_data:
        entries.append(("tfg.handle_data", handle_data_attr(arg)))
    if arg.is_ref:
        entries.append(("tfg.is_ref", A.UNIT))
    if arg.HasField("experimental_full_type"):
        entries.append(("tfg.experimental_full_type", full_type_attr(arg.experimental_full_type)))
    return entries


def _signature_attrs(func: FunctionDef, gradients: Mapping[str, str]) -> dict[str, A.Attribute]:
    sig = func.signature
    if not sig.name:
        raise ImportFailure("generic function without a name")
    attrs: dict[str, A.Attribute] = {"sym_name": A.StringAttr(sig.name), "generic": A.UNIT}
    if sig.description:
        attrs["description"] = A.StringAttr(sig.description)
    if sig.is_stateful:
        attrs["is_stateful"] = A.UNIT
    if sig.name in gradients:
        attrs["gradient"] = A.SymbolRefAttr(gradients[sig.name])
    if sig.control_output:
        attrs["control_output"] = A.ArrayAttr(tuple(A.StringAttr(o) for o in sig.control_output))
    defs = []
    for attr_def in sig.attr:
        if not attr_def.name:
            raise ImportFailure("Missing name for function attribute")
        entry: list[tuple[str, A.Attribute]] = []
        if attr_def.type:
            entry.append(("function_type", A.StringAttr(attr_def.type)))
        if attr_def.HasField("default_value"):
            entry.append(("default_value", attr_value_to_attr(attr_def.default_value)))
        if attr_def.description:
            entry.append(("description", A.StringAttr(attr_def.description)))
        if attr_def.has_minimum or attr_def.minimum:
            entry.append(("minimum", A.IntegerAttr(attr_def.minimum, T.i32)))
        if attr_def.HasField("allowed_values"):
            entry.append(("allowed_values", attr_value_to_attr(attr_def.allowed_values)))
        defs.append((attr_def.name, A.DictionaryAttr(tuple(entry))))
    if defs:
        attrs["tfg.func_attrs"] = A.DictionaryAttr(tuple(defs))
    for key, value in func.attr.items():
        if not key:
            raise ImportFailure("Invalid function attribute name")
        attrs["tf." + key] = attr_value_to_attr(value)
    attrs.update(resource_id_attrs(func))
    return attrs


class _Body:
    """Name resolution inside a generic body: ``x``, ``x:out:1``, ``^x``, arguments."""

    def __init__(self, func_name: str) -> None:
        self.func_name = func_name
        self.nodes: dict[str, tuple[Value | None, Value]] = {}  # name -> (opaque or arg, control)
        self.args: set[str] = set()
        self.results: dict[tuple[str, str, int], Value] = {}
        self.pending: list[Operation] = []

    def define(self, name: str, data: Value | None, control: Value) -> None:
        if name in self.nodes:
            raise ImportFailure(f"Duplicated node (or function argument) with the same name: `{name}`"
                                f"\n when importing function {self.func_name}")
        self.nodes[name] = (data, control)

    def resolve(self, ref: str) -> Value:
        control = ref.startswith("^")
        body = ref[1:] if control else ref
        node, _, output = body.partition(":")
        number = 0
        head, sep, tail = output.rpartition(":")
        if sep and tail.isdigit():
            number = int(tail)
            if number > _MAX_INDEX:
                raise ImportFailure(f"Output index {number} is invalid (too large)"
                                    f"\n when importing function {self.func_name}")
            output = head
        if node not in self.nodes:
            raise ImportFailure(f"Couldn't import graph: placeholder left {node}"
                                f"\n when importing function {self.func_name}")
        data, ctl = self.nodes[node]
        if control:
            return ctl
        if node in self.args:
            if output or number:
                raise ImportFailure("Requested result from op that produces no values, but not considered "
                                    f"control dep\n when importing function {self.func_name}")
            return data  # type: ignore[return-value]
        key = (node, output, number)
        found = self.results.get(key)
        if found is None:
            get = Operation.create("tfg.get_result", [data], [OPAQUE_TENSOR],  # type: ignore[list-item]
                                   {"name": A.StringAttr(output), "number": A.IntegerAttr(number, T.i32)})
            self.pending.append(get)
            found = self.results[key] = get.results[0]
        return found


def convert_generic_function(func: FunctionDef, gradients: Mapping[str, str]) -> Operation:
    """A ``tfg.func generic``; `gradients` maps function names to their gradient functions."""
    sig = func.signature
    attrs = _signature_attrs(func, gradients)
    block = Block()
    body = _Body(sig.name)
    arg_attrs: list[A.Attribute] = []
    for i, arg in enumerate(sig.input_arg):
        data, ctl = block.add_argument(OPAQUE_TENSOR), block.add_argument(CONTROL)
        entries = generic_arg_attrs(arg)
        if i in func.arg_attr:
            inner = tuple((k, attr_value_to_attr(v)) for k, v in func.arg_attr[i].attr.items())
            entries.append(("tfg.arg_attrs", A.DictionaryAttr(inner)))
        arg_attrs += [A.DictionaryAttr(tuple(entries)), A.DictionaryAttr(())]
        body.define(arg.name, data, ctl)
        body.args.add(arg.name)
    created = []
    for node in func.node_def:
        if not node.op:
            raise ImportFailure(f"empty op type\n when importing function {sig.name}")
        node_attrs: dict[str, A.Attribute] = {}
        for key, value in node.attr.items():
            if not key:
                raise ImportFailure(f"empty attr name\n when importing function {sig.name}")
            node_attrs[key] = attr_value_to_attr(value)
        node_attrs.update(node_mlir_attrs(node))
        op = Operation.create("tfg." + node.op, (), [OPAQUE_TENSOR, CONTROL], dict(sorted(node_attrs.items())))
        body.define(node.name.partition(":")[0], op.results[0], op.results[1])
        created.append((node, op))
    for node, op in created:
        operands = []
        for ref in node.input:
            if not ref:
                raise ImportFailure(f"Node '{node.name}' has an empty input\n when importing function {sig.name}")
            operands.append(body.resolve(ref))
        op.set_operands(operands)
        block.extend(body.pending)
        body.pending.clear()
        block.append(op)
    outputs = [a.name for a in sig.output_arg]
    controls = list(sig.control_output)
    returned: list[Value | None] = [None] * (len(func.ret) + len(func.control_ret))
    for name, ref in func.ret.items():
        if name not in outputs:
            raise ImportFailure("Can't import function, returned value references unknown output argument "
                                + name)
        if not ref:
            raise ImportFailure(f"Function '{sig.name}' has empty result name")
        returned[outputs.index(name)] = body.resolve(ref)
    for name, ref in func.control_ret.items():
        if name not in controls:
            raise ImportFailure("Can't import function, returned value references unknown output argument "
                                + name)
        if not ref:
            raise ImportFailure(f"Function '{sig.name}' has empty control result name")
        returned[len(func.ret) + controls.index(name)] = body.resolve("^" + ref)
    for i, value in enumerate(returned):
        if value is None:
            raise ImportFailure(f"Failed to import function, missing output for position {i}")
    block.extend(body.pending)
    n_ctl = len(func.control_ret)
    block.append(Operation.create("tfg.return", returned, attributes={
        "control_ret_attrs": A.ArrayAttr((A.DictionaryAttr(()),) * n_ctl)}))
    res_attrs = [A.DictionaryAttr(tuple(generic_arg_attrs(a))) for a in sig.output_arg]
    res_attrs += [A.DictionaryAttr((("tfg.name", A.StringAttr(c)),)) for c in controls]
    inputs = tuple(t for _ in sig.input_arg for t in (OPAQUE_TENSOR, CONTROL))
    attrs["function_type"] = A.TypeAttr(T.FunctionType(inputs, tuple(v.type for v in returned)))  # type: ignore[union-attr]
    attrs["arg_attrs"] = A.ArrayAttr(tuple(arg_attrs))
    attrs["res_attrs"] = A.ArrayAttr(tuple(res_attrs))
    return Operation.create("tfg.func", attributes=attrs, regions=[Region(blocks=[block])])
