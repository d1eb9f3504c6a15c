"""GraphDef -> tfg module, built directly as IR (no text round trip).

Follows TF's direct importer (``graphdef_import.cc``): one ``tfg.graph`` with a node
op per NodeDef, then one ``tfg.func`` per FunctionDef. Per node: the op's OpDef
(bundled registry, else a library function of that name) gives the result types
(unranked, from the output args) and the defaults added to the attributes; name,
device and full type become ``_mlir_*`` attributes; data inputs come first, then
control inputs. Graph bodies are unordered, so every op is created first and inputs
are resolved in a second pass: a back edge costs nothing extra.

Functions whose body uses a ``placeholder`` attribute are generic and imported by
:mod:`.import_generic`; all others here, with a hidden control argument per input.
Every rejected input raises :class:`GraphDefError` naming the node or function.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.gc_pause import gc_paused
from egraft.ir.core.location import UNKNOWN, FusedLoc, Location, NameLoc
from egraft.ir.core.operation import Block, Operation, Region, Value
from egraft.ir.dialects.builtin import make_module
from egraft.ir.dialects.tfg_types import CONTROL
from egraft.ir.graphdef.convert_attrs import attr_value_to_attr
from egraft.ir.graphdef.convert_types import ConversionError, dtype_to_type, full_type_attr, type_to_dtype
from egraft.ir.graphdef.errors import GraphDefError, ImportFailure
from egraft.ir.graphdef.function_attrs import handle_data_attr, node_mlir_attrs, resource_id_attrs
from egraft.ir.graphdef.import_generic import convert_generic_function, is_generic
from egraft.ir.graphdef.messages import DataType, FunctionDef, GraphDef, NodeDef, OpDef, VersionDef
from egraft.ir.graphdef.op_registry import lookup_op
from egraft.ir.graphdef.signatures import Segments, output_types, parse_tensor_name


def version_attr(versions: VersionDef) -> A.DialectAttr:
    body = f"producer = {versions.producer}, min_consumer = {versions.min_consumer}"
    if versions.bad_consumers:
        body += ", bad_consumers = [" + ", ".join(map(str, versions.bad_consumers)) + "]"
    return A.DialectAttr("tf_type", f"version<{body}>")


def node_location(node: NodeDef) -> Location:
    """The original node names of a fused/inlined node as name locations."""
    info = node.experimental_debug_info
    names = info.original_node_names
    if not names:
        return UNKNOWN
    funcs = info.original_func_names
    locs = [NameLoc(f"{n}@{funcs[i]}" if i < len(funcs) and funcs[i] else n) for i, n in enumerate(names)]
    return locs[0] if len(locs) == 1 else FusedLoc(locs)


class _Node:
    """A created op and how its results are named (for ``x:out:1`` references)."""

    __slots__ = ("op", "segments", "control", "data")

    def __init__(self, op: Operation | None, segments: Segments, control: Value, data: list[Value]) -> None:
        self.op = op
        self.segments = segments
        self.control = control
        self.data = data


def _data_result(ref: str, info: _Node) -> Value:
    node, index = parse_tensor_name(ref)
    name, _, output = node.partition(":")
    if not output:
        if index >= len(info.data):
            raise ImportFailure(f"Result #{index} of node '{name}' is out of bounds")
        return info.data[index]
    for seg_name, start, size in info.segments:
        if seg_name == output:
            if index >= size:
                raise ImportFailure(f"Result #{index} of segment '{name}:{output}' is out of bounds")
            return info.data[start + index]
    raise ImportFailure(f"Node '{name}' has no output called '{output}'")


class Importer:
    """Converts one GraphDef; ``signatures`` maps library function names to signatures."""

    def __init__(self, graph: GraphDef) -> None:
        self.graph = graph
        self.signatures: dict[str, OpDef] = {f.signature.name: f.signature for f in graph.library.function}
        self.gradients = {g.function_name: g.gradient_func for g in graph.library.gradient}

    def op_def(self, op: str) -> OpDef | None:
        return lookup_op(op) or self.signatures.get(op)

    # ------------------------------------------------------------ nodes

    def create_node(self, node: NodeDef) -> _Node:
        if not node.op:
            raise ImportFailure(f"Node {node.name} has an empty op name")
        op_def = self.op_def(node.op)
        if op_def is None:
            raise ImportFailure(f"Unable to find OpDef for {node.op}")
        attrs = node_mlir_attrs(node)
        for key, value in sorted(node.attr.items()):
            if not key:
                raise ImportFailure(f"Node {node.name} has an empty attr name")
            attrs[key] = attr_value_to_attr(value)
        for attr_def in op_def.attr:
            if attr_def.HasField("default_value") and attr_def.name not in attrs:
                attrs[attr_def.name] = attr_value_to_attr(attr_def.default_value)
        try:
            types, segments = output_types(op_def, attrs)
        except ConversionError as err:
            raise ImportFailure(str(err), "NOT_FOUND" if "not found" in str(err) else "INVALID_ARGUMENT") from None
        op = Operation.create("tfg." + node.op, (), [*types, CONTROL], dict(sorted(attrs.items())),
                              loc=node_location(node))
        return _Node(op, segments, op.results[-1], list(op.results[:-1]))

    def convert_nodes(self, nodes, block: Block, scope: dict[str, _Node]) -> None:
        """Create every node in ``block``, then wire inputs (uses may precede definitions)."""
        created: list[tuple[NodeDef, Operation]] = []
        for node in nodes:
            try:
                info = self.create_node(node)
            except ConversionError as err:
                raise ImportFailure(f"node '{node.name}' (op {node.op}): {err}") from None
            if node.name in scope:
                raise ImportFailure(f"Duplicated node (or function argument) with the same name: `{node.name}`")
            scope[node.name] = info
            created.append((node, info.op))  # type: ignore[arg-type]
        missing: list[tuple[str, str]] = []
        for node, op in created:
            self.check_arity(node, op)
            data: list[Value] = []
            control: list[Value] = []
            for ref in node.input:
                if not ref:
                    raise ImportFailure(f"Node '{node.name}' has an empty input")
                target = ref[1:] if ref.startswith("^") else parse_tensor_name(ref)[0].partition(":")[0]
                info = scope.get(target)
                if info is None:
                    missing.append((ref, node.name))
                    continue
                if ref.startswith("^"):
                    control.append(info.control)
                else:
                    data.append(_data_result(ref, info))
            op.operands = data + control
            for v in op.operands:
                v.uses.append(op)
        if missing:
            raise ImportFailure("\n".join(f"Non-existent input {ref} in node {name}"
                                          for ref, name in sorted(missing)))
        block.extend(op for _, op in created)

    def check_arity(self, node: NodeDef, op: Operation) -> None:
        """A node's data inputs must be as many as its OpDef's input args expand to, as
        TensorFlow's graph importer checks (``ValidateNodeDef``): a one-input Switch
        would otherwise become IR that no later step can handle.  TF's message follows
        the types with ``Op<...>`` (the OpDef summarized); the bundled registry lacks the
        allowed values and minimums that summary shows, so it is left out here."""
        expected = _input_dtypes(self.op_def(node.op), op.all_attributes())  # type: ignore[arg-type]
        given = sum(1 for ref in node.input if not ref.startswith("^"))
        if expected is not None and len(expected) != given:
            raise ImportFailure(f"NodeDef expected inputs '{', '.join(expected)}' do not match {given} inputs "
                                f"specified; NodeDef: {{{{node {node.name}}}}}")

    # ------------------------------------------------------------ module

    def convert(self) -> Operation:
        graph_op = Operation.create("tfg.graph", attributes={"version": version_attr(self.graph.versions)},
                                    regions=[Region(blocks=[Block()])])
        self.convert_nodes(self.graph.node, graph_op.regions[0].blocks[0], {})
        ops = [graph_op]
        for func in self.graph.library.function:
            ops.append(self.convert_function(func))
        return make_module(ops)

    def convert_function(self, func: FunctionDef) -> Operation:
        name = func.signature.name
        try:
            if is_generic(func):
                return convert_generic_function(func, self.gradients)
            return self.convert_instantiated(func)
        except ImportFailure as err:
            kind = "generic function" if is_generic(func) else "function"
            raise ImportFailure(f"{err.message}\nWhile importing {kind}: {name}", err.code) from None

    def function_attrs(self, func: FunctionDef) -> dict[str, A.Attribute]:
        sig = func.signature
        attrs: dict[str, A.Attribute] = {}
        for key, value in func.attr.items():
            if not key:
                raise ImportFailure(f"Function {sig.name} has an empty attr name")
            attrs["tf." + key] = attr_value_to_attr(value)
        if not sig.name:
            raise ImportFailure("Function without a name")
        attrs["sym_name"] = A.StringAttr(sig.name)
        if sig.description:
            attrs["description"] = A.StringAttr(sig.description)
        if sig.is_stateful:
            attrs["is_stateful"] = A.UNIT
        if sig.name in self.gradients:
            attrs["gradient"] = A.SymbolRefAttr(self.gradients[sig.name])
        attrs.update(resource_id_attrs(func))
        return attrs

    def convert_instantiated(self, func: FunctionDef) -> Operation:
        sig = func.signature
        attrs = self.function_attrs(func)
        block = Block()
        scope: dict[str, _Node] = {}
        arg_attrs: list[A.Attribute] = []
        inputs: list[T.Type] = []
        for i, arg in enumerate(sig.input_arg):
            data_type = T.UnrankedTensorType(_arg_dtype(arg))
            data, ctl = block.add_argument(data_type), block.add_argument(CONTROL)
            entries = arg_def_attrs(arg)
            if i in func.arg_attr:
                entries += [("tf." + k, attr_value_to_attr(v)) for k, v in func.arg_attr[i].attr.items()]
            arg_attrs += [A.DictionaryAttr(tuple(entries)), A.DictionaryAttr(())]
            inputs += [data_type, CONTROL]
            if arg.name in scope:
                raise ImportFailure(f"Duplicated node (or function argument) with the same name: `{arg.name}`")
            scope[arg.name] = _Node(None, [], ctl, [data])
        self.convert_nodes(func.node_def, block, scope)
        operands: list[Value] = []
        results: list[T.Type] = []
        res_attrs: list[A.Attribute] = []
        for arg in sig.output_arg:
            results.append(T.UnrankedTensorType(_arg_dtype(arg)))
            res_attrs.append(A.DictionaryAttr(tuple(arg_def_attrs(arg))))
            if arg.name not in func.ret:
                raise ImportFailure(f"Output '{arg.name}' was not found in 'ret'")
            ref = func.ret[arg.name]
            target = parse_tensor_name(ref)[0].partition(":")[0]
            if target not in scope or ref.startswith("^"):
                raise ImportFailure(f"Return '{ref}' was not found")
            operands.append(_data_result(ref, scope[target]))
        ctl_attrs = []
        for name in sig.control_output:
            if name not in func.control_ret:
                raise ImportFailure(f"Control output '{name}' was not found in 'control_ret'")
            target = func.control_ret[name]
            if target not in scope:
                raise ImportFailure(f"Control return {target} was not found")
            operands.append(scope[target].control)
            ctl_attrs.append(A.DictionaryAttr((("tfg.name", A.StringAttr(name)),)))
        block.append(Operation.create("tfg.return", operands,
                                      attributes={"control_ret_attrs": A.ArrayAttr(tuple(ctl_attrs))}))
        attrs["function_type"] = A.TypeAttr(T.FunctionType(tuple(inputs), tuple(results)))
        attrs["arg_attrs"] = A.ArrayAttr(tuple(arg_attrs))
        attrs["res_attrs"] = A.ArrayAttr(tuple(res_attrs))
        return Operation.create("tfg.func", attributes=attrs, regions=[Region(blocks=[block])])


def _input_dtypes(op_def: OpDef, attrs: dict[str, A.Attribute]) -> list[str] | None:
    """TF's names (``float``, ``int32_ref``) of the input types a node of ``op_def`` takes
    with ``attrs``; None when an attribute they depend on is missing or not a type."""
    names: list[str] = []
    for arg in op_def.input_arg:
        if arg.type_list_attr:
            listed = attrs.get(arg.type_list_attr)
            if not isinstance(listed, A.ArrayAttr) or not all(isinstance(t, A.TypeAttr) for t in listed):
                return None
            dtypes = [_dtype_of(t.value) for t in listed]  # type: ignore[attr-defined]
        else:
            count = attrs.get(arg.number_attr) if arg.number_attr else A.IntegerAttr(1, T.i64)
            type_attr = attrs.get(arg.type_attr) if arg.type_attr else None
            if not isinstance(count, A.IntegerAttr) or not (arg.type or isinstance(type_attr, A.TypeAttr)):
                return None
            dtype = arg.type or _dtype_of(type_attr.value)  # type: ignore[union-attr]
            dtypes = [dtype] * max(count.value, 0)
        if any(d is None for d in dtypes):
            return None
        names += [DataType.Name(d)[3:].lower() + ("_ref" if arg.is_ref else "") for d in dtypes]  # type: ignore[arg-type]
    return names


def _dtype_of(t: T.Type) -> int | None:
    try:
        return type_to_dtype(t)
    except ConversionError:
        return None


def _arg_dtype(arg) -> T.Type:
    if not arg.type:
        raise ImportFailure(f"Arg '{arg.name}' has no fixed type in an instantiated function")
    return dtype_to_type(arg.type)


def arg_def_attrs(arg) -> list[tuple[str, A.Attribute]]:
    """The ``tfg.*`` attributes of an instantiated function's argument or result."""
    entries: list[tuple[str, A.Attribute]] = [("tfg.name", A.StringAttr(arg.name))]
    if arg.description:
        entries.append(("tfg.description", A.StringAttr(arg.description)))
    if arg.is_ref:
        entries.append(("tfg.is_ref", A.UNIT))
    if arg.handle_data:
        entries.append(("tfg.handle_data", handle_data_attr(arg)))
    if arg.HasField("experimental_full_type"):
        entries.append(("tfg.experimental_full_type", full_type_attr(arg.experimental_full_type)))
    return entries


def import_graphdef(graph: GraphDef, source: str = "<graphdef>") -> Operation:
    """The tfg module of a GraphDef; :class:`GraphDefError` (``source: error: ...``) if invalid."""
    try:
        with gc_paused():
            return Importer(graph).convert()
    except (ImportFailure, ConversionError) as err:
        raise GraphDefError(source, str(err)) from None

