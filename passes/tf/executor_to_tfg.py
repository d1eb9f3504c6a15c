"""``func.func @main { tf_executor.graph }`` -> tfg graph, the inverse of :mod:`.tfg_to_executor`.

Accepts both egraft's executor form and what TensorFlow writes: ops of an island
(one or many, after island coarsening) each become a node carrying the island's
control operands, and the island's control token stands for all of them; the
executor control-flow ops become the nodes of the same name and a
NextIteration.Source/Sink pair one NextIteration. TF's MLIR drops the attributes a
node's types imply (``tf.Const`` has no ``dtype``, ``tf.AddV2`` no ``T``): they are
derived again from the OpDef so the GraphDef is complete. Names come from
``_mlir_name``, else a name location (``show_debug_info``), else the op type; feeds
(``@main``'s arguments) become Placeholders named after ``tf.entry_function``'s
``inputs``, and its ``outputs`` and ``control_outputs`` name what the graph fetches
(:func:`_name_outputs`), so the GraphDef answers to the names its user fetches by.
TensorFlow's exporter writes ``_Arg``/``_Retval`` nodes instead: a function's
interface, which a Session cannot feed or fetch.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir import Block, Operation, OpResult, Region, Value
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.dialects.builtin import make_module
from egraft.ir.dialects.tf_types import CONTROL as EXEC_CONTROL
from egraft.ir.dialects.tf_types import TOKEN
from egraft.ir.dialects.tfg_types import CONTROL
from egraft.ir.graphdef.convert_attrs import func_attr
from egraft.ir.graphdef.messages import NameAttrList
from egraft.ir.graphdef.op_registry import lookup_op
from egraft.ir.graphdef.signatures import derived_attrs
from egraft.ir.core.location import NameLoc

from egraft.passes.tf.tf_io_options import parse_tensor, split_names
from egraft.passes.tf.tfg_to_executor import EXECUTOR_OPS, ConversionError

_FROM_EXECUTOR = {"tf_executor." + v: k for k, v in EXECUTOR_OPS.items()}
_SWITCHES = ("tf_executor.Switch", "tf_executor._SwitchN")
_NOT_NODE_ATTRS = frozenset({"device"})
#: Ops whose tf dialect form carries `is_stateless` where a GraphDef names a Stateless* op.
_STATEFUL_FORMS = ("If", "While")


def _version(module: Operation) -> A.DialectAttr:
    versions = module.attr("tf.versions")
    fields = versions.as_dict() if isinstance(versions, A.DictionaryAttr) else {}

    def num(key: str) -> int:
        v = fields.get(key)
        return v.value if isinstance(v, A.IntegerAttr) else 0

    body = f"producer = {num('producer')}, min_consumer = {num('min_consumer')}"
    bad = fields.get("bad_consumers")
    if isinstance(bad, A.ArrayAttr) and len(bad):
        body += ", bad_consumers = [" + ", ".join(str(b.value) for b in bad) + "]"  # type: ignore[attr-defined]
    return A.DialectAttr("tf_type", f"version<{body}>")


def _func_attr(attr: A.Attribute) -> A.Attribute:
    """``@f`` (a call's ``f``, a branch) as the ``#tf_type.func<@f, {}>`` a node carries."""
    if isinstance(attr, A.SymbolRefAttr) and not attr.nested:
        return func_attr(NameAttrList(name=attr.root))
    return attr


class _Converter:
    def __init__(self) -> None:
        self.data: dict[Value, Value] = {}
        self.controls: dict[Value, list[Value]] = {}
        self.wiring: list[tuple[Operation, list[Value], list[Value]]] = []
        self.taken: set[str] = set()
        self.counter = 0
        self.arguments: set[Value] = set()  # a tfg.func's arguments (a tfg.graph has none)
        self.expanded: dict[Value, list[Value]] = {}
        self.forwarded: dict[Value, list[Value]] = {}  # island result -> the island's control operands

    def name(self, op: Operation, kind: str) -> str:
        name = op.attr("_mlir_name")
        if isinstance(name, A.StringAttr) and isinstance(name.value, str):
            return name.value
        loc = op.loc
        if isinstance(loc, NameLoc) and loc.name not in self.taken:
            return loc.name
        base = kind.lstrip("_")  # TF node names cannot start with '_' (kinds like _FusedConv2D do)
        while f"{base}_{self.counter}" in self.taken:
            self.counter += 1
        return f"{base}_{self.counter}"

    def node(self, kind: str, source: Operation, data_types: list[T.Type],
             operand_types: list[T.Type]) -> Operation:
        attrs = {k: _func_attr(v) for k, v in source.all_attributes().items() if k not in _NOT_NODE_ATTRS}
        device = source.attr("device")
        if isinstance(device, A.StringAttr) and device.value:
            attrs["_mlir_device"] = device
        name = self.name(source, kind)
        self.taken.add(name)
        attrs["_mlir_name"] = A.StringAttr(name)
        if kind in _STATEFUL_FORMS and "is_stateless" in attrs:  # tf.If/tf.While's flag is the op's name in TF
            kind = "Stateless" + kind if attrs.pop("is_stateless") == A.TRUE else kind
        op_def = lookup_op(kind)
        if op_def is not None:
            attrs.update(derived_attrs(op_def, attrs, operand_types, data_types))
        return Operation.create("tfg." + kind, (), [*data_types, CONTROL], dict(sorted(attrs.items())),
                                loc=source.loc)

    def convert(self, op: Operation) -> list[Operation]:
        if op.name == "tf_executor.island":
            return self.island(op)
        if op.name == "tf_executor.NextIteration.Sink":
            return []
        if op.name == "tf_executor.NextIteration.Source":
            sink = next((u for u in op.results[1].uses), None)
            if sink is None:
                raise ConversionError("NextIteration.Source without its Sink")
            data = [v for v in sink.operands[1:] if v.type is not EXEC_CONTROL]
            ctls = [v for v in sink.operands[1:] if v.type is EXEC_CONTROL]
            new = self.node("NextIteration", op, [op.results[0].type], [v.type for v in data])
            self.data[op.results[0]] = new.results[0]
            self.controls[op.results[2]] = [new.results[1]]
            self.wiring.append((new, data, ctls))
            return [new]
        kind = _FROM_EXECUTOR.get(op.name)
        if kind is None:
            raise ConversionError(f"'{op.name}' has no tfg form")
        data = [v for v in op.operands if v.type is not EXEC_CONTROL and v.type is not TOKEN]
        ctls = [v for v in op.operands if v.type is EXEC_CONTROL]
        results = [r for r in op.results if r.type is not EXEC_CONTROL]
        new = self.node(kind, op, [r.type for r in results], [v.type for v in data])
        for old, fresh in zip(results, new.results):
            self.data[old] = fresh
        self.controls[op.results[-1]] = [new.results[-1]]
        self.wiring.append((new, data, ctls))
        return [new]

    def island(self, island: Operation) -> list[Operation]:
        """The island's ops as nodes; its control token stands for all of them.

        An island also waits for the values it yields from outside it (canonicalize
        leaves ``island { yield %x }`` where an Identity was), and a graph may depend on
        that through the island's control token: in a v1 loop, the frame's constants hang
        off the control of the loop variable's Identity.  When the token is used, it also
        stands for the producers of those values (and, for an island with no ops, for its
        own control operands), resolved when wiring (:meth:`expand`).

        An island runs only once every value it captures is there, and is dead when one
        is; a node without inputs runs at once, live, in the root frame.  So an op without
        operands (a Const that coarsening merged with the op whose control edge it hung
        on) also waits on the producers of the island's captured values: a loop's
        constant stays in the loop's frame (TensorFlow rejects a node whose inputs come
        from two frames) and a branch's constant dead with the branch.

        A Switch output is waited on through an Identity node instead: a Switch's control
        edge is live even when the output is dead, and the Identity keeps the deadness
        (and the loop frame)."""
        block = island.regions[0].blocks[0]
        created, sources = self.body(block, island.results, list(island.operands))
        if island.operands and block.last is not None:
            for result, value in zip(island.results, block.last.operands):
                if not _inside(value, block):
                    self.forwarded[result] = list(island.operands)
        waits: list[Value] = [op.results[-1] for op in created]
        used = bool(island.results[-1].uses)
        inside = set(block)
        outside = list(dict.fromkeys(v for v in block.last.operands if v.owner_op not in inside)) \
            if block.last is not None and used else []
        captured = list(dict.fromkeys(v for inner in block for v in inner.operands if _captured(v, block))) \
            if sources else []
        switched = [v for v in dict.fromkeys(outside + captured)
                    if v.owner_op is not None and v.owner_op.name in _SWITCHES]
        join_waits: list[Value] = []
        if switched:
            types = [v.type for v in switched]
            join = self.node("Identity" if len(switched) == 1 else "IdentityN", island, types, types)
            self.wiring.append((join, switched, list(island.operands)))
            created.append(join)
            join_waits.append(join.results[-1])
        for _, _, controls in sources:
            controls += [v for v in captured if v not in switched] + join_waits
        if used:
            waits += join_waits + [v for v in outside if v not in switched]
            if not created:
                waits += list(island.operands)
        self.controls[island.results[-1]] = waits
        return created

    def body(self, block: Block, results: Sequence[Value], controls: list[Value]) \
            -> tuple[list[Operation], list[tuple[Operation, list[Value], list[Value]]]]:
        """The tf ops of ``block`` as nodes that each carry ``controls``; the operands of
        its terminator (yield, return) stand for ``results``.  Also the wiring entries
        of the nodes without operands (whose waits an island extends)."""
        created, sources = [], []
        for inner in block:
            if inner.name in ("tf_executor.yield", "func.return"):
                for old, value in zip(results, inner.operands):
                    self.data[old] = value  # resolved through the inner op below
                continue
            if not inner.name.startswith("tf.") or inner.regions:
                raise ConversionError(f"'{inner.name}' in {block.parent.parent.name} has no tfg node form")
            new = self.node(inner.name[3:], inner, [r.type for r in inner.results],
                            [v.type for v in inner.operands])
            for old, fresh in zip(inner.results, new.results):
                self.data[old] = fresh
            entry = (new, list(inner.operands), list(controls))
            self.wiring.append(entry)
            created.append(new)
            if not inner.operands:
                sources.append(entry)
        return created, sources

    def resolve(self, value: Value) -> Value:
        seen = value
        while seen in self.data and self.data[seen] is not seen:
            nxt = self.data[seen]
            if nxt.type is CONTROL or nxt in self.arguments or isinstance(nxt, OpResult) and \
                    nxt.owner.name.startswith("tfg."):
                return nxt
            seen = nxt
        raise ConversionError("a value used in the graph is defined outside it")

    def forwarded_waits(self, value: Value) -> list[Value]:
        """The tfg control tokens a user of data ``value`` must also wait on: the control operands
        of each island that yields ``value`` from outside it (``island(^c) { yield %x }``, what
        forwarding an ``Identity(x, ^c)`` leaves). That island's result was there only once ``^c``
        had run; ``resolve`` goes straight to ``%x``'s node, so its users take ``^c`` here (a fetched
        ``save/Identity`` keeps waiting on the checkpoint it names)."""
        waits: list[Value] = []
        seen = value
        while seen in self.data and self.data[seen] is not seen:
            for c in self.forwarded.get(seen, ()):
                waits += self.expand(c)
            nxt = self.data[seen]
            if nxt.type is CONTROL or nxt in self.arguments or isinstance(nxt, OpResult) and \
                    nxt.owner.name.startswith("tfg."):
                break
            seen = nxt
        return list(dict.fromkeys(waits))

    def _waits(self, value: Value) -> list[Value]:
        """What ``value`` stands for when waited on, one step: a tfg control token is
        itself; an executor control token is what its op recorded; a data value is the
        control token of the node that produces it (nothing for a function argument)."""
        if value.type is CONTROL:
            return [value]
        if value.type is EXEC_CONTROL:
            return self.controls.get(value, [])
        produced = self.resolve(value)
        return [] if produced in self.arguments else [produced.owner.results[-1]]  # type: ignore[attr-defined]

    def expand(self, control: Value) -> list[Value]:
        """The tfg control tokens waiting on ``control`` means, following emptied
        islands through to real nodes; iterative (a chain of them may be long), memoized."""
        memo = self.expanded
        stack, entered = [control], {control}
        while stack:
            value = stack[-1]
            if value in memo:
                stack.pop()
                continue
            items = self._waits(value)
            pending = [i for i in items if i.type is not CONTROL and i not in memo and i not in entered]
            if pending:
                stack += pending
                entered.update(pending)
                continue
            stack.pop()
            memo[value] = list(dict.fromkeys(t for i in items for t in ([i] if i.type is CONTROL
                                                                         else memo.get(i, []))))
        return memo[control]

    def wire(self) -> None:
        for op, data, ctls in self.wiring:
            operands = [self.resolve(v) for v in data]
            for c in ctls:
                operands += self.expand(c)
            for v in data:
                operands += [c for c in self.forwarded_waits(v) if c not in operands]
            op.set_operands(operands)


def _inside(value: Value, block: Block) -> bool:
    """Whether ``value`` is produced by an op of ``block`` (or nested in one)."""
    owner = value.owner_op
    while owner is not None and owner.parent is not block:
        owner = owner.parent_op
    return owner is not None


def _captured(value: Value, block: Block) -> bool:
    """Whether ``value`` comes into the island ``block`` from an op of the graph around it."""
    owner, island = value.owner_op, block.parent_op
    return owner is not None and island is not None and owner.parent is island.parent


def _entry_names(main: Operation, key: str) -> tuple[str, ...]:
    """One list of ``tf.entry_function`` (``inputs``, ``outputs``, ``control_outputs``)."""
    entry = main.attr("tf.entry_function")
    value = entry.get(key) if isinstance(entry, A.DictionaryAttr) else None
    return split_names(value.value) if isinstance(value, A.StringAttr) and isinstance(value.value, str) else ()


def _feeds(main: Operation, conv: _Converter) -> dict[str, Operation]:
    """Placeholders for @main's arguments, named by ``tf.entry_function``."""
    args = main.regions[0].blocks[0].args
    names = [parse_tensor(n)[0] for n in _entry_names(main, "inputs")]
    ops = {}
    for i, arg in enumerate(args):
        t = arg.type
        attrs = {"_mlir_name": A.StringAttr(names[i] if i < len(names) else f"arg{i}"),
                 "dtype": A.TypeAttr(t.element_type if isinstance(t, T.ShapedType) else t)}
        if isinstance(t, T.RankedTensorType):
            dims = "x".join("?" if d == T.DYNAMIC else str(d) for d in t.shape)
            attrs["shape"] = A.DialectAttr("tf_type", f"shape<{dims}>")
        op = Operation.create("tfg.Placeholder", (), [t, CONTROL], attrs)
        conv.data[arg] = op.results[0]
        conv.taken.add(attrs["_mlir_name"].value)  # type: ignore[attr-defined]
        ops[attrs["_mlir_name"].value] = op  # type: ignore[attr-defined]
    return ops


def _alias(name: str, ports: dict[int, Value], waits: Sequence[Value] = ()) -> Operation:
    """A node called ``name`` whose output ``p`` is ``ports[p]``: an Identity, or an
    IdentityN when a fetch names an output other than 0 (gaps repeat a fetched value);
    it also waits on the control tokens ``waits``."""
    filler = next(iter(ports.values()))
    inputs = [ports.get(p, filler) for p in range(max(ports) + 1)]
    kind = "Identity" if len(inputs) == 1 else "IdentityN"
    types = [v.type for v in inputs]
    attrs: dict[str, A.Attribute] = {"_mlir_name": A.StringAttr(name)}
    op_def = lookup_op(kind)
    assert op_def is not None
    attrs.update(derived_attrs(op_def, attrs, types, types))
    return Operation.create("tfg." + kind, [*inputs, *waits], [*types, CONTROL], dict(sorted(attrs.items())))


def _node_name(op: Operation) -> str:
    return op.attr("_mlir_name").value  # type: ignore[union-attr]


def _name_outputs(main: Operation, fetched: list[Value], nodes: list[Operation], conv: _Converter,
                  claimed: dict[str, Operation]) -> list[Operation]:
    """The nodes that give the fetched tensors the names ``tf.entry_function`` lists.

    Passes may change which op produces a fetched value (canonicalize drops the
    ``Identity`` that was the model's output, CSE merges two identical outputs), but a
    GraphDef's user fetches by name.  A fetch whose tensor is not already output
    ``p`` of the node it names gets that node: an Identity of the value.  A control
    output whose node is gone gets a NoOp after what its own fetched control token stands
    for (not the other control outputs': a TF1 graph's restore op must not run its
    initializers). An alias also waits on the control operands of the islands the fetched
    value was forwarded through (:meth:`_Converter.forwarded_waits`).
    The names become ``claimed``, so a node still carrying one is renamed."""
    names = _entry_names(main, "outputs")
    data = [v for v in fetched if v.type is not EXEC_CONTROL]
    if names and len(names) != len(data):
        raise ConversionError(f"tf.entry_function names {len(names)} outputs but the graph fetches {len(data)}")
    wanted: dict[str, dict[int, Value]] = {}
    waits: dict[str, list[Value]] = {}
    for tensor, value in zip(names, data):
        node, port = parse_tensor(tensor)
        resolved = conv.resolve(value)
        waits.setdefault(node, []).extend(conv.forwarded_waits(value))
        if wanted.setdefault(node, {}).setdefault(port, resolved) is not resolved:
            raise ConversionError(f"output '{tensor}' is listed twice for two different fetched values")
    by_name: dict[str, Operation] = {}
    for op in nodes:
        by_name.setdefault(_node_name(op), op)
    created = []
    for node, ports in wanted.items():
        holder = claimed.get(node) or by_name.get(node)
        if holder is not None and all(isinstance(v, OpResult) and v.owner is holder and v.index == p
                                      for p, v in ports.items()):
            claimed[node] = holder
            continue
        if node in claimed:
            raise ConversionError(f"output '{node}' is also an input of the graph but fetches another value")
        claimed[node] = _alias(node, ports, list(dict.fromkeys(waits[node])))
        created.append(claimed[node])
    controls = [v for v in fetched if v.type is EXEC_CONTROL]
    control_names = _entry_names(main, "control_outputs")
    if control_names and len(controls) != len(control_names):
        raise ConversionError(f"tf.entry_function names {len(control_names)} control outputs but the graph "
                              f"fetches {len(controls)} control tokens")
    for name, control in zip(control_names, controls):
        if name not in claimed and name not in by_name:
            claimed[name] = Operation.create("tfg.NoOp", conv.expand(control), [CONTROL],
                                             {"_mlir_name": A.StringAttr(name)})
            created.append(claimed[name])
    return created


def _uniquify(nodes: list[Operation], claimed: dict[str, Operation]) -> None:
    """Every node gets a name of its own: the claimed names (feeds, fetches) stay with
    their nodes, and any other node holding one, or a name seen before, is renamed
    ``<name>_<k>``, as TensorFlow's exporter uniquifies."""
    taken = {_node_name(op) for op in nodes}
    seen: set[str] = set(claimed)
    for op in nodes:
        name = _node_name(op)
        if claimed.get(name) is op:
            continue
        if name in seen:
            k = 1
            while f"{name}_{k}" in taken:
                k += 1
            name = f"{name}_{k}"
            op.set_attr("_mlir_name", A.StringAttr(name))
            taken.add(name)
        seen.add(name)


def _drop_dangling_colocation(nodes: list[Operation]) -> None:
    """``_class = ["loc:@x"]`` must name a node; TF's MLIR import loses names, so a
    hint naming a node that no longer exists is dropped (TF rejects the GraphDef
    otherwise: "expects to be colocated with unknown node")."""
    names = {op.attr("_mlir_name").value for op in nodes}  # type: ignore[union-attr]
    for op in nodes:
        classes = op.attr("_class")
        if not isinstance(classes, A.ArrayAttr):
            continue
        kept = tuple(c for c in classes if not (isinstance(c, A.StringAttr) and isinstance(c.value, str)
                                                and c.value.startswith("loc:@") and c.value[5:] not in names))
        if len(kept) != len(classes):
            if kept:
                op.set_attr("_class", A.ArrayAttr(kept))
            else:
                op.remove_attr("_class")


def _collect_names(func: Operation, conv: _Converter) -> None:
    for nested in func.walk():
        name = nested.attr("_mlir_name")
        if isinstance(name, A.StringAttr) and isinstance(name.value, str):
            conv.taken.add(name.value)


def _body_nodes(func: Operation, conv: _Converter) -> tuple[list[Operation], list[Value]]:
    """The nodes of a function's executor graph and what its fetch lists.  A body of
    plain tf ops (what canonicalize leaves of a graph that was one island, as
    TensorFlow's own canonicalization does) is read as that one island, its
    ``return`` as the fetch."""
    body = func.regions[0].blocks[0]
    graphs = [op for op in body if op.name == "tf_executor.graph"]
    if len(graphs) > 1:
        raise ConversionError(f"expected one tf_executor.graph in @{func.attr('sym_name').value}, "  # type: ignore[union-attr]
                              f"found {len(graphs)}")
    if not graphs:
        return conv.body(body, (), [])[0], list(body.last.operands) if body.last is not None else []
    nodes: list[Operation] = []
    fetched: list[Value] = []
    for op in graphs[0].regions[0].blocks[0]:
        if op.name == "tf_executor.fetch":
            fetched = list(op.operands)
        else:
            nodes += conv.convert(op)
    return nodes, fetched


def _dict_list(func: Operation, key: str, count: int) -> list[dict[str, A.Attribute]]:
    array = func.attr(key)
    items = [dict(d.entries) if isinstance(d, A.DictionaryAttr) else {} for d in array] \
        if isinstance(array, A.ArrayAttr) else []
    return (items + [{} for _ in range(count)])[:count]


#: func.func attributes that are the tf_executor form's own (the rest go back to the tfg.func).
_EXECUTOR_ONLY = ("sym_name", "function_type", "arg_attrs", "res_attrs", "sym_visibility", "tfg.control_ret_attrs",
                  "tf.signature.is_stateful")


def library_function(func: Operation) -> Operation:
    """A ``func.func`` other than @main as the ``tfg.func`` it came from
    (:func:`egraft.passes.tf.tfg_to_executor.library_function` is the inverse): each
    argument gets its control token back, the fetch becomes ``return(data) [control]``.
    Arguments and results keep their ``tfg.name`` (TF's own import has none: they are
    named ``arg<i>``/``output<i>``); control results keep theirs while there are as many
    as the function had, else take their node's name, as TF's exporter names them."""
    name = func.attr("sym_name").value  # type: ignore[union-attr]
    conv = _Converter()
    _collect_names(func, conv)
    block = Block()
    arg_attrs: list[A.Attribute] = []
    inputs: list[T.Type] = []
    args = func.regions[0].blocks[0].args
    for i, (arg, entries) in enumerate(zip(args, _dict_list(func, "arg_attrs", len(args)))):
        conv.data[arg] = block.add_argument(arg.type)
        conv.arguments.add(conv.data[arg])
        block.add_argument(CONTROL)
        entries.setdefault("tfg.name", A.StringAttr(f"arg{i}"))
        arg_attrs += [A.DictionaryAttr(tuple(sorted(entries.items()))), A.DictionaryAttr(())]
        inputs += [arg.type, CONTROL]
    nodes, fetched = _body_nodes(func, conv)
    conv.wire()
    _uniquify(nodes, {})
    data = [conv.resolve(v) for v in fetched if v.type is not EXEC_CONTROL]
    controls = list(dict.fromkeys(c for v in fetched if v.type is EXEC_CONTROL for c in conv.expand(v)))
    res_attrs = []
    for i, entries in enumerate(_dict_list(func, "res_attrs", len(data))):
        entries.setdefault("tfg.name", A.StringAttr(f"output{i}"))
        res_attrs.append(A.DictionaryAttr(tuple(sorted(entries.items()))))
    saved = func.attr("tfg.control_ret_attrs")
    if not (isinstance(saved, A.ArrayAttr) and len(saved) == len(controls)):
        saved = A.ArrayAttr(tuple(A.DictionaryAttr((("tfg.name", c.owner.attr("_mlir_name")),))  # type: ignore[attr-defined]
                                  for c in controls))
    block.extend(nodes)
    block.append(Operation.create("tfg.return", [*data, *controls], attributes={"control_ret_attrs": saved}))
    attrs = {k: v for k, v in func.all_attributes().items() if k not in _EXECUTOR_ONLY}
    if func.attr("tf.signature.is_stateful") is not None:
        attrs["is_stateful"] = A.UNIT
    attrs.update(sym_name=A.StringAttr(name), arg_attrs=A.ArrayAttr(tuple(arg_attrs)),
                 res_attrs=A.ArrayAttr(tuple(res_attrs)),
                 function_type=A.TypeAttr(T.FunctionType(tuple(inputs), tuple(v.type for v in data))))
    return Operation.create("tfg.func", attributes=attrs, regions=[Region(blocks=[block])])


def executor_to_tfg(module: Operation) -> Operation:
    """A new module with one ``tfg.graph`` holding ``@main``'s executor graph, and one
    ``tfg.func`` per other function (the library)."""
    funcs = [op for op in module.walk() if op.name == "func.func"]
    mains = [f for f in funcs if f.attr("sym_name").value == "main"] or funcs  # type: ignore[union-attr]
    if len(mains) != 1:
        raise ConversionError(f"expected one func.func @main holding a tf_executor.graph, found {len(funcs)} "
                              f"functions")
    main = mains[0]
    conv = _Converter()
    _collect_names(main, conv)
    claimed = _feeds(main, conv)
    nodes, fetched = _body_nodes(main, conv)
    nodes = [*claimed.values(), *nodes]
    conv.wire()
    nodes += _name_outputs(main, fetched, nodes, conv, claimed)
    _uniquify(nodes, claimed)
    _drop_dangling_colocation(nodes)
    graph = Operation.create("tfg.graph", attributes={"version": _version(module)},
                             regions=[Region(blocks=[Block()])])
    graph.regions[0].blocks[0].extend(nodes)
    return make_module([graph, *(library_function(f) for f in funcs if f is not main)])
