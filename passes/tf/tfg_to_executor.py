"""tfg graph -> ``func.func @main { tf_executor.graph }``, the executor form TF imports to.

Each node becomes one ``tf_executor.island wraps "tf.<Op>"``, except the v1
control-flow ops, which are executor ops of their own (Switch, _SwitchN, Merge,
Enter, Exit, LoopCond, ControlTrigger; NextIteration splits into a Source/Sink pair
joined by a token, which keeps the graph acyclic). Control operands become the
island's (or executor op's) control operands; a node's control token becomes the
op's ``!tf_executor.control`` result. Node names stay as ``_mlir_name``, the
requested device becomes ``device``, as TF's ``tfe-legalize-tfg`` does; so
:mod:`.executor_to_tfg` restores the graph exactly.  The fetches become the graph's
results and the feeds ``@main``'s arguments (:func:`tfg_to_executor`); a graph nobody
named outputs for fetches every node that nothing consumes, so no pass can find it dead.
Library functions become ``func.func private`` with executor bodies of their own
(:func:`library_function`), and function attributes without attributes of their own
(``f`` of a call) symbol references, as in TF's import.
"""

from __future__ import annotations

import re
from typing import Sequence

from egraft.ir import Block, Operation, Region, Value
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.dialects.builtin import make_module
from egraft.ir.dialects.tf_types import CONTROL as EXEC_CONTROL
from egraft.ir.dialects.tf_types import TOKEN
from egraft.ir.dialects.tfg_types import CONTROL
from egraft.ir.graphdef.convert_attrs import parse_func_attr
from egraft.ir.graphdef.convert_types import ConversionError as GraphConversionError
from egraft.ir.graphdef.convert_types import dtype_to_type, shape_dims
from egraft.ir.graphdef.messages import DataType

from egraft.passes.tf.tf_io_options import Feed, parse_tensor

#: tfg node types that are executor primitives rather than islands.
EXECUTOR_OPS = {"Switch": "Switch", "_SwitchN": "_SwitchN", "Merge": "Merge", "Enter": "Enter",
                "Exit": "Exit", "LoopCond": "LoopCond", "ControlTrigger": "ControlTrigger"}
_PLACEHOLDERS = ("tfg.Placeholder", "tfg.PlaceholderWithDefault")
_VERSION = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|-?\d+)")


class ConversionError(Exception):
    """The module has no form in the target dialect; the message says which op."""


def versions_attr(version: A.Attribute | None) -> A.DictionaryAttr:
    """``#tf_type.version<...>`` as the module's ``tf.versions`` dictionary."""
    fields = dict(_VERSION.findall(version.params)) if isinstance(version, A.DialectAttr) else {}
    bad = [int(x) for x in fields.get("bad_consumers", "[]").strip("[]").split(",") if x.strip()]
    return A.DictionaryAttr((
        ("bad_consumers", A.ArrayAttr(tuple(A.IntegerAttr(b, T.i32) for b in bad))),
        ("min_consumer", A.IntegerAttr(int(fields.get("min_consumer", 0)), T.i32)),
        ("producer", A.IntegerAttr(int(fields.get("producer", 0)), T.i32))))


def _attrs(op: Operation) -> dict[str, A.Attribute]:
    out = {key: _symbol_of(value) for key, value in op.all_attributes().items()}
    device = out.pop("_mlir_device", None)
    out["device"] = device if device is not None else A.StringAttr("")
    return out


def _symbol_of(attr: A.Attribute) -> A.Attribute:
    """``#tf_type.func<@f, {}>`` (a call's ``f``, a branch) as ``@f``, as TF's importer
    writes it; a function attribute with attributes of its own stays as it is."""
    if not (isinstance(attr, A.DialectAttr) and attr.dialect == "tf_type" and attr.mnemonic == "func"):
        return attr
    try:
        name, attrs = parse_func_attr(attr)
    except GraphConversionError:
        return attr
    return A.SymbolRefAttr(name) if not attrs.entries else attr


def _data_types(op: Operation) -> list[T.Type]:
    return [r.type for r in op.results if r.type is not CONTROL]


class _Converter:
    def __init__(self) -> None:
        self.values: dict[Value, Value] = {}
        self.wiring: list[tuple[Operation, list[Value], list[Value]]] = []
        self.dropped: set[Value] = set()  # control tokens of fed placeholders

    def node(self, op: Operation) -> list[Operation]:
        kind = op.name[4:]
        data = [v for v in op.operands if v.type is not CONTROL]
        ctls = [v for v in op.operands if v.type is CONTROL]
        types = _data_types(op)
        if op.regions or not op.name.startswith("tfg."):
            raise ConversionError(f"'{op.name}' has no tf_executor form (only tfg nodes convert)")
        if kind == "NextIteration":
            source = Operation.create("tf_executor.NextIteration.Source", (), [types[0], TOKEN, EXEC_CONTROL],
                                      _attrs(op))
            sink = Operation.create("tf_executor.NextIteration.Sink", (), (), dict(source.attributes))
            self._map(op, [source.results[0]], source.results[2])
            self.values[source.results[1]] = source.results[1]  # the token is already wired
            self.wiring.append((sink, [source.results[1], *data], ctls))
            return [source, sink]
        if kind in EXECUTOR_OPS:
            results = [*types, EXEC_CONTROL]
            if kind == "Merge" and len(types) == 2:
                results = [types[0], types[1], EXEC_CONTROL]
            new = Operation.create("tf_executor." + EXECUTOR_OPS[kind], (), results, _attrs(op))
            self._map(op, list(new.results[:-1]), new.results[-1])
            self.wiring.append((new, data, ctls))
            return [new]
        attrs = _attrs(op)
        if kind in ("If", "While"):  # TF's importer: a stateful If/While is tf.If/tf.While {is_stateless = false}
            attrs.setdefault("is_stateless", A.FALSE)
        inner = Operation.create("tf." + kind, (), types, attrs)
        block = Block()
        block.append(inner)
        block.append(Operation.create("tf_executor.yield", inner.results))
        island = Operation.create("tf_executor.island", (), [*types, EXEC_CONTROL],
                                  regions=[Region(blocks=[block])])
        self._map(op, list(island.results[:-1]), island.results[-1])
        self.wiring.append((inner, data, []))
        self.wiring.append((island, [], ctls))
        return [island]

    def _map(self, op: Operation, data: list[Value], control: Value) -> None:
        results = [r for r in op.results if r.type is not CONTROL]
        for old, new in zip(results, data):
            self.values[old] = new
        self.values[op.results[-1]] = control

    def feed(self, op: Operation, port: int, arg: Value) -> None:
        """Node ``op``'s output ``port`` is fed: its users read ``arg``.  A fed
        placeholder is replaced whole (control edges from it go: it has no effect)."""
        self.values[[r for r in op.results if r.type is not CONTROL][port]] = arg
        if op.name in _PLACEHOLDERS and port == 0:
            self.dropped.add(op.results[-1])

    def wire(self) -> None:
        for op, data, ctls in self.wiring:
            operands = []
            for v in data + [c for c in ctls if c not in self.dropped]:
                new = self.values.get(v)
                if new is None:
                    raise ConversionError("a node uses a value defined outside the graph")
                operands.append(new)
            op.set_operands(operands)


def topological_order(ops: list[Operation]) -> list[Operation]:
    """Definitions before uses (tf_executor regions are SSA-ordered, tfg graphs are
    not); ties keep the input order. Only NextIteration may close a cycle, and it was
    split into Source and Sink."""
    index = {op: i for i, op in enumerate(ops)}
    deps: list[list[int]] = []
    for op in ops:
        found = set()
        for nested in op.walk():
            for v in nested.operands:
                owner = v.owner_op
                if owner in index and owner is not op:
                    found.add(index[owner])
        deps.append(sorted(found))
    state = [0] * len(ops)  # 0 new, 1 on the stack, 2 placed
    order: list[Operation] = []
    for root in range(len(ops)):
        if state[root]:
            continue
        stack = [(root, 0)]
        state[root] = 1
        while stack:
            i, k = stack[-1]
            if k < len(deps[i]):
                stack[-1] = (i, k + 1)
                j = deps[i][k]
                if state[j] == 1:
                    raise ConversionError("the graph has a cycle that does not go through NextIteration")
                if state[j] == 0:
                    state[j] = 1
                    stack.append((j, 0))
            else:
                stack.pop()
                state[i] = 2
                order.append(ops[i])
    return order


def node_name(op: Operation) -> str | None:
    name = op.attr("_mlir_name")
    return name.value if isinstance(name, A.StringAttr) and isinstance(name.value, str) else None


def default_outputs(nodes: Sequence[Operation]) -> tuple[list[str], list[str]]:
    """The fetches of a graph nobody named any for: every node that nothing consumes
    (no data or control edge leaves it).  Its data outputs are fetched; a node without
    data outputs (NoOp, SaveV2, an Assert) becomes a control output.  Everything else
    feeds one of these, so nothing is dead: what a GraphDef whose outputs are unknown
    must mean to an optimizer (Grappler too keeps the whole graph when it has no fetch)."""
    data: list[str] = []
    control: list[str] = []
    for op in nodes:
        if any(r.uses for r in op.results):
            continue
        name = node_name(op)
        if name is None:
            raise ConversionError(f"a '{op.name}' node that nothing consumes has no name to fetch it by")
        count = sum(r.type is not CONTROL for r in op.results)
        data += [name if i == 0 else f"{name}:{i}" for i in range(count)]
        if not count:
            control.append(name)
    return data, control


def _named(by_name: dict[str, Operation], name: str, role: str) -> Operation:
    op = by_name.get(name)
    if op is None:
        raise ConversionError(f"{role} '{name}' names no node of the graph")
    return op


def _data_result(op: Operation, port: int, role: str, tensor: str) -> Value:
    data = [r for r in op.results if r.type is not CONTROL]
    if port >= len(data):
        raise ConversionError(f"{role} '{tensor}': node '{node_name(op)}' has {len(data)} data outputs")
    return data[port]


def _graph_dims(op: Operation, port: int, graph_type: T.Type) -> list[int] | None:
    """The shape the graph gives output ``port``: its type, else the ``shape`` of a
    placeholder, else ``_output_shapes``; None when unknown."""
    if isinstance(graph_type, T.RankedTensorType):
        return list(graph_type.shape)
    shape = op.attr("shape") if op.name in _PLACEHOLDERS else None
    if shape is None:
        shapes = op.attr("_output_shapes")
        shape = shapes[port] if isinstance(shapes, A.ArrayAttr) and port < len(shapes) else None
    try:
        return shape_dims(shape) if shape is not None else None
    except GraphConversionError:
        return None


def _dims_text(dims: Sequence[int]) -> str:
    return ",".join("?" if d == T.DYNAMIC else str(d) for d in dims)


def feed_type(op: Operation, feed: Feed) -> T.Type:
    """The argument type of a feed: the graph's element type and shape, refined (never
    contradicted) by the feed's explicit type and shape."""
    graph_type = _data_result(op, feed.port, "input", feed.tensor).type
    element = graph_type.element_type if isinstance(graph_type, T.ShapedType) else graph_type
    if feed.dtype is not None:
        try:
            wanted = dtype_to_type(feed.dtype)
        except GraphConversionError as err:
            raise ConversionError(f"input '{feed.tensor}': {err}") from None
        if wanted != element:
            raise ConversionError(f"input '{feed.tensor}' is {element} in the graph, not {wanted} "
                                  f"({DataType.Name(feed.dtype)})")
    dims = _graph_dims(op, feed.port, graph_type)
    if feed.shape is not None:
        if dims is not None and (len(dims) != len(feed.shape) or any(
                g != w and T.DYNAMIC not in (g, w) for g, w in zip(dims, feed.shape))):
            raise ConversionError(f"input '{feed.tensor}' has shape [{_dims_text(dims)}] in the graph; "
                                  f"[{_dims_text(feed.shape)}] does not fit it")
        dims = list(feed.shape)
    return T.UnrankedTensorType(element) if dims is None else T.RankedTensorType(tuple(dims), element)


def tfg_to_executor(module: Operation, fetches: Sequence[str] | None = None, *,
                    control_fetches: Sequence[str] | None = None, feeds: Sequence[Feed] = ()) -> Operation:
    """A new module with ``func.func @main`` holding the graph in executor form.

    ``fetches`` (tensor names, ``y`` or ``y:1``) become the graph's results and
    ``control_fetches`` (node names) its control results, both recorded in
    ``tf.entry_function`` as TensorFlow's importer records them, so that the export
    gives the fetched tensors their names back.  When neither is given, every node
    nothing consumes is fetched (:func:`default_outputs`).  ``feeds`` become
    ``@main``'s arguments: a fed placeholder is replaced by its argument, any other
    fed tensor's users read the argument instead.
    """
    tops = list(module.regions[0].blocks[0]) if module.name == "builtin.module" else [module]
    graphs = [op for op in tops if op.name == "tfg.graph"]
    if len(graphs) != 1:
        raise ConversionError(f"expected one tfg.graph, found {len(graphs)}")
    funcs = [op for op in tops if op.name == "tfg.func"]
    nodes = list(graphs[0].regions[0].blocks[0])
    by_name = {name: op for op in nodes if (name := node_name(op)) is not None}
    if fetches is None and control_fetches is None:
        fetches, control_fetches = default_outputs(nodes)
    fetches, control_fetches = list(fetches or ()), list(control_fetches or ())
    fed = [_named(by_name, feed.name, "input") for feed in feeds]
    entry = Block([feed_type(op, feed) for op, feed in zip(fed, feeds)])
    replaced = {op for op, feed in zip(fed, feeds) if op.name in _PLACEHOLDERS and feed.port == 0}
    conv = _Converter()
    new_ops = [new for op in nodes if op not in replaced for new in conv.node(op)]
    for op, feed, arg in zip(fed, feeds, entry.args):
        conv.feed(op, feed.port, arg)
    conv.wire()
    fetched = []
    for tensor in fetches:
        node, port = parse_tensor(tensor)
        fetched.append(conv.values[_data_result(_named(by_name, node, "output"), port, "output", tensor)])
    controls = []
    for name in control_fetches:
        op = _named(by_name, name, "control output")
        if op in replaced:
            raise ConversionError(f"control output '{name}' is fed (an input), so it never runs")
        controls.append(conv.values[op.results[-1]])
    signature = A.DictionaryAttr((("control_outputs", A.StringAttr(",".join(control_fetches))),
                                  ("inputs", A.StringAttr(",".join(feed.tensor for feed in feeds))),
                                  ("outputs", A.StringAttr(",".join(fetches)))))
    main = _executor_function(entry, new_ops, fetched, controls, {"sym_name": A.StringAttr("main"),
                                                                  "tf.entry_function": signature})
    out = make_module([main, *(library_function(f) for f in funcs)])
    out.attributes["tf.versions"] = versions_attr(graphs[0].attr("version"))
    return out


def _executor_function(entry: Block, ops: list[Operation], fetched: list[Value], controls: list[Value],
                       attrs: dict[str, A.Attribute]) -> Operation:
    """``func.func`` whose body ``entry`` gets a ``tf_executor.graph`` of ``ops``
    (sorted) fetching ``fetched`` and ``controls``, and returns the fetched values."""
    body = Block()
    body.extend(topological_order(ops))
    body.append(Operation.create("tf_executor.fetch", [*fetched, *controls]))
    graph = Operation.create("tf_executor.graph", (), [v.type for v in fetched], regions=[Region(blocks=[body])])
    entry.append(graph)
    entry.append(Operation.create("func.return", graph.results))
    attrs = {**attrs, "function_type": A.TypeAttr(T.FunctionType(tuple(a.type for a in entry.args),
                                                                  tuple(v.type for v in fetched)))}
    return Operation.create("func.func", attributes=attrs, regions=[Region(blocks=[entry])])


#: tfg.func attributes the tf_executor form spells differently (the rest are carried over).
_RESTRUCTURED = ("sym_name", "function_type", "arg_attrs", "res_attrs")


def library_function(func: Operation) -> Operation:
    """A library ``tfg.func`` as TF's importer writes one: ``func.func private`` with
    the data arguments (their ``tfg.*`` attributes kept) and a ``tf_executor.graph``
    fetching the returned values and control results.  The control arguments go: an
    argument is there when the function starts, so waiting for it is no constraint.
    The names of the control results ride along as ``tfg.control_ret_attrs``."""
    name = func.attr("sym_name").value  # type: ignore[union-attr]
    if func.attr("generic") is not None:
        raise ConversionError(f"generic function @{name} (with type placeholders) has no tf_executor form")
    block = func.regions[0].blocks[0]
    data_args = [a for a in block.args if a.type is not CONTROL]
    arg_attrs = func.attr("arg_attrs")
    data_attrs = [d for d, a in zip(arg_attrs, block.args) if a.type is not CONTROL] \
        if isinstance(arg_attrs, A.ArrayAttr) else []
    entry = Block([a.type for a in data_args])
    conv = _Converter()
    for old, new in zip(data_args, entry.args):
        conv.values[old] = new
    conv.dropped.update(a for a in block.args if a.type is CONTROL)
    ret = block.last
    if ret is None or ret.name != "tfg.return":
        raise ConversionError(f"function @{name} does not end in tfg.return")
    new_ops = [new for op in block if op is not ret for new in conv.node(op)]
    conv.wire()
    fetched = [conv.values[v] for v in ret.operands if v.type is not CONTROL]
    if any(v in conv.dropped for v in ret.operands):
        raise ConversionError(f"function @{name} returns an argument's control token, which has no "
                              f"tf_executor form")
    controls = [conv.values[v] for v in ret.operands if v.type is CONTROL]
    attrs = {k: v for k, v in func.all_attributes().items() if k not in _RESTRUCTURED}
    attrs.update(sym_name=A.StringAttr(name), sym_visibility=A.StringAttr("private"))
    if data_attrs:
        attrs["arg_attrs"] = A.ArrayAttr(tuple(data_attrs))
    if func.attr("res_attrs") is not None:
        attrs["res_attrs"] = func.attr("res_attrs")  # type: ignore[assignment]
    if ret.attr("control_ret_attrs") is not None:
        attrs["tfg.control_ret_attrs"] = ret.attr("control_ret_attrs")  # type: ignore[assignment]
    return _executor_function(entry, new_ops, fetched, controls, attrs)
