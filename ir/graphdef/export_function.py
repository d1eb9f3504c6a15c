"""``tfg.func`` -> FunctionDef: signature, body nodes, ``ret``/``control_ret``, attributes.

Instantiated functions name a result by its OpDef output segment (``"split:output:1"``,
``"bar:ret1:0"`` for a call to a library function); generic ones by their
``tfg.get_result`` (``"x:output:1"``). Arguments are referred to by their ``tfg.name``.
The signature is rebuilt from the ``tfg.*`` argument/result attributes the importer
wrote, ``tf.*`` attributes become ``FunctionDef.attr``/``arg_attr`` entries.
"""

from __future__ import annotations

from typing import Callable

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import BlockArgument, Operation, OpResult, Value
from egraft.ir.dialects.tfg_types import CONTROL
from egraft.ir.graphdef.convert_attrs import attr_to_attr_value
from egraft.ir.graphdef.convert_types import ConversionError, element_dtype, parse_full_type, type_to_dtype
from egraft.ir.graphdef.errors import ExportFailure
from egraft.ir.graphdef.export_node import NameTable, fill_node
from egraft.ir.graphdef.messages import FunctionDef, FunctionDefLibrary, OpDef
from egraft.ir.graphdef.op_registry import lookup_op
from egraft.ir.graphdef.signatures import output_types, segment_of

Lookup = Callable[[str], OpDef | None]


def _str(attr: A.Attribute | None) -> str:
    if isinstance(attr, A.StringAttr):
        return attr.value if isinstance(attr.value, str) else attr.value.decode("utf-8", "replace")
    return ""


def _dicts(op: Operation, key: str) -> list[A.DictionaryAttr]:
    array = op.attr(key)
    return [d if isinstance(d, A.DictionaryAttr) else A.DictionaryAttr(()) for d in array] \
        if isinstance(array, A.ArrayAttr) else []


def library_lookup(funcs: list[Operation]) -> Lookup:
    """OpDefs of the module's functions (output names only), then TF's registry."""
    sigs: dict[str, OpDef] = {}
    for func in funcs:
        sig = OpDef(name=_str(func.attr("sym_name")))
        fn_type = func.attr("function_type").value  # type: ignore[union-attr]
        res_attrs = _dicts(func, "res_attrs")
        for i, t in enumerate(fn_type.results):
            if t is not CONTROL:
                arg = sig.output_arg.add(name=_str(res_attrs[i].get("tfg.name")) if i < len(res_attrs) else "")
                if isinstance(t, T.ShapedType):
                    try:
                        arg.type = element_dtype(t)
                    except ConversionError:
                        pass
        sigs[sig.name] = sig
    return lambda name: lookup_op(name) or sigs.get(name)


def _fill_arg(arg, attrs: A.DictionaryAttr, value_type: T.Type | None) -> None:
    arg.name = _str(attrs.get("tfg.name"))
    arg.description = _str(attrs.get("tfg.description"))
    fixed = attrs.get("tfg.type")
    if isinstance(fixed, A.TypeAttr):
        arg.type = type_to_dtype(fixed.value)
    elif value_type is not None and isinstance(value_type, T.ShapedType):
        arg.type = element_dtype(value_type)
    for key in ("type_attr", "number_attr", "type_list_attr"):
        setattr(arg, key, _str(attrs.get(f"tfg.{key}")))
    if attrs.get("tfg.is_ref") is not None:
        arg.is_ref = True
    handle = attrs.get("tfg.handle_data")
    if isinstance(handle, A.ArrayAttr):
        for item in handle:
            t = item.value if isinstance(item, A.TypeAttr) else None
            entry = arg.handle_data.add(dtype=element_dtype(t))
            if isinstance(t, T.RankedTensorType):
                for d in t.shape:
                    entry.shape.dim.add().size = d
            else:
                entry.shape.unknown_rank = True
    full_type = attrs.get("tfg.experimental_full_type")
    if full_type is not None:
        parse_full_type(full_type, arg.experimental_full_type)


class _BodyNamer:
    """Input strings inside a function body."""

    def __init__(self, names: NameTable, args: dict[BlockArgument, str], lookup: Lookup) -> None:
        self.names = names
        self.args = args
        self.lookup = lookup

    def __call__(self, value: Value) -> str:
        control = value.type is CONTROL
        if isinstance(value, BlockArgument):
            return ("^" if control else "") + self.args[value]
        assert isinstance(value, OpResult)
        owner = value.owner
        if owner.name == "tfg.get_result":
            base = self.names.names[owner.operands[0].owner]  # type: ignore[attr-defined]
            name, number = _str(owner.attr("name")), owner.attr("number").value  # type: ignore[union-attr]
            if not name and number == 0:
                return base
            if name.isdigit() and number == 0:
                return f"{base}:{name}"
            return f"{base}:{name}:{number}"
        base = self.names.names[owner]
        if control:
            return "^" + base
        if owner.results[0].type is not CONTROL and owner.results[0].type.__class__ is T.DialectType:
            return base  # an opaque result of a generic body used directly
        return f"{base}:{self._segment(owner, value.index)}"

    def _segment(self, op: Operation, index: int) -> str:
        op_def = self.lookup(op.name[4:])
        if op_def is None:
            raise ExportFailure(f"cannot name result #{index} of '{self.names.names[op]}': no OpDef for "
                                f"{op.name[4:]}")
        try:
            _, segments = output_types(op_def, op.all_attributes())
        except ConversionError:
            n = len(op.results) - 1
            segments = [(op_def.output_arg[0].name, 0, n)] if len(op_def.output_arg) == 1 else []
        found = segment_of(segments, index)
        if found is None:
            raise ExportFailure(f"result #{index} of '{self.names.names[op]}' is not an output of {op_def.name}")
        return f"{found[0]}:{found[1]}"


def _signature_attr_defs(func: Operation, sig: OpDef) -> None:
    defs = func.attr("tfg.func_attrs")
    if not isinstance(defs, A.DictionaryAttr):
        return
    for name, entry in defs.entries:
        attr_def = sig.attr.add(name=name)
        if not isinstance(entry, A.DictionaryAttr):
            continue
        attr_def.type = _str(entry.get("function_type"))
        attr_def.description = _str(entry.get("description"))
        if entry.get("default_value") is not None:
            attr_to_attr_value(entry.get("default_value"), attr_def.default_value)
        if entry.get("minimum") is not None:
            attr_def.has_minimum = True
            attr_def.minimum = entry.get("minimum").value
        if entry.get("allowed_values") is not None:
            attr_to_attr_value(entry.get("allowed_values"), attr_def.allowed_values)


def export_function(func: Operation, library: FunctionDefLibrary, lookup: Lookup) -> FunctionDef:
    out = library.function.add()
    sig = out.signature
    sig.name = _str(func.attr("sym_name"))
    try:
        _export_function(func, out, library, lookup)
    except (ConversionError, ExportFailure) as err:
        raise ExportFailure(f"function '{sig.name}': {err}") from None
    return out


def _export_function(func: Operation, out: FunctionDef, library: FunctionDefLibrary, lookup: Lookup) -> None:
    sig = out.signature
    generic = func.attr("generic") is not None
    sig.description = _str(func.attr("description"))
    sig.is_stateful = func.attr("is_stateful") is not None
    gradient = func.attr("gradient")
    if isinstance(gradient, A.SymbolRefAttr):
        library.gradient.add(function_name=sig.name, gradient_func=gradient.root)
    _signature_attr_defs(func, sig)
    for key, value in func.all_attributes().items():
        if key.startswith("tf."):
            attr_to_attr_value(value, out.attr[key[3:]])
    keys, values = func.attr("resource_arg_unique_ids_keys"), func.attr("resource_arg_unique_ids_values")
    if isinstance(keys, A.DenseElementsAttr) and isinstance(values, A.DenseElementsAttr):
        for k, v in zip(keys.to_numpy().tolist(), values.to_numpy().tolist()):
            out.resource_arg_unique_id[k] = v
    block = func.regions[0].blocks[0]
    arg_attrs = _dicts(func, "arg_attrs")
    args: dict[BlockArgument, str] = {}
    for i in range(0, len(block.args) - 1, 2):
        attrs = arg_attrs[i] if i < len(arg_attrs) else A.DictionaryAttr(())
        data, ctl = block.args[i], block.args[i + 1]
        arg = sig.input_arg.add()
        _fill_arg(arg, attrs, None if generic else data.type)
        args[data] = args[ctl] = arg.name
        extra = attrs.get("tfg.arg_attrs") if generic else None
        entries = extra.entries if isinstance(extra, A.DictionaryAttr) else \
            [(k[3:], v) for k, v in attrs.entries if k.startswith("tf.")]
        for key, value in entries:
            attr_to_attr_value(value, out.arg_attr[i // 2].attr[key])
    nodes = [op for op in block if op.name not in ("tfg.get_result", "tfg.return")]
    names = NameTable(nodes)
    namer = _BodyNamer(names, args, lookup)
    for op in nodes:
        node = out.node_def.add()
        node.name = names.names[op]
        fill_node(op, node, namer)
    ret = block.last
    if ret is None or ret.name != "tfg.return":
        raise ExportFailure("body does not end in tfg.return")
    fn_type = func.attr("function_type").value  # type: ignore[union-attr]
    res_attrs = _dicts(func, "res_attrs")
    ctl_attrs = _dicts(ret, "control_ret_attrs")
    data_ops = [v for v in ret.operands if v.type is not CONTROL]
    ctl_ops = [v for v in ret.operands if v.type is CONTROL]
    for i, value in enumerate(data_ops):
        attrs = res_attrs[i] if i < len(res_attrs) else A.DictionaryAttr(())
        arg = sig.output_arg.add()
        _fill_arg(arg, attrs, None if generic else (fn_type.results[i] if i < len(fn_type.results) else value.type))
        out.ret[arg.name] = namer(value)
    for j, value in enumerate(ctl_ops):
        name_attr = ctl_attrs[j].get("tfg.name") if j < len(ctl_attrs) else None
        if name_attr is None and len(data_ops) + j < len(res_attrs):
            name_attr = res_attrs[len(data_ops) + j].get("tfg.name")
        name = _str(name_attr)
        sig.control_output.append(name)
        out.control_ret[name] = namer(value)[1:]
