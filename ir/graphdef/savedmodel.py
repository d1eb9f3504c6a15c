"""SavedModel directories without TensorFlow: read ``saved_model.pb``, say what a signature
feeds and fetches, mark the functions the SavedModel names, write the message back.

A SavedModel directory holds ``saved_model.pb`` (or ``saved_model.pbtxt``), a ``variables/``
checkpoint and ``assets/``.  ``saved_model.pb`` is ``tensorflow.SavedModel``: a schema version
and one ``MetaGraphDef`` per tag set (``serve``, ``train``...), each with a ``graph_def`` (and
its function library), ``signature_def``s, a ``saver_def``, ``collection_def``s, asset files
and, for TF2, the ``object_graph_def`` that ``tf.saved_model.load`` rebuilds the Python objects
from.  TensorBoard's compiled protos (``tensorboard.compat.proto``) have ``MetaGraphDef`` but
not ``SavedModel``, so the two-field message is built here from a descriptor (same wire format,
package ``tensorboard`` like the rest, see :mod:`.messages`).

What the optimizer must keep, whatever the signature chosen:

- the chosen signatures' inputs are fed, their outputs fetched (:func:`graph_io`);
- the saver's filename tensor, save tensor and restore op, the init op of the
  ``__saved_model_init_op`` signature, every node a collection lists (``saved_model_main_op``,
  ``table_initializer``...) and each asset file's tensor are fetched too, so a TF1 loader
  (TensorFlow Serving's ``LoadSavedModel``) still finds them;
- the functions the SavedModel names (:func:`public_functions`: the object graph's concrete
  functions and the functions signatures and object-graph nodes refer to) are public:
  :func:`mark_public` gives their ``tfg.func`` the ``tf_saved_model.exported_names`` attribute,
  which the passes read as "keep the name and the signature" (agreed with the function passes;
  it is not a ``tf.`` attribute, so the GraphDef export does not write it into the FunctionDef).

Every failure is a :class:`GraphDefError` naming the file.
"""

from __future__ import annotations

import functools
import re
from os import PathLike
from pathlib import Path
from typing import Any, Iterable, Sequence

import attrs
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf.message import DecodeError, EncodeError, Message
from tensorboard.compat.proto import meta_graph_pb2
from tensorboard.compat.proto.saver_pb2 import SaverDef
from tensorboard.compat.proto.variable_pb2 import VariableDef

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation
from egraft.ir.graphdef.errors import GraphDefError
from egraft.ir.graphdef.messages import GraphDef

MetaGraphDef = meta_graph_pb2.MetaGraphDef

SAVED_MODEL_PB = "saved_model.pb"
SAVED_MODEL_PBTXT = "saved_model.pbtxt"
#: What TF writes beside saved_model.pb: fingerprint.pb hashes saved_model.pb (and the graph,
#: signatures and object graph), so an optimized model would carry a false one. TF's loader
#: logs "Fingerprint not found" and loads without it: the writer drops it.
FINGERPRINT = "fingerprint.pb"
#: The signature TF's saver adds to run the init op; never a user's signature.
INIT_OP_SIGNATURE = "__saved_model_init_op"
#: TF1 collections of VariableDefs (``ops.GraphKeys``), whose tensors and ops a TF1 loader looks up.
VARIABLE_COLLECTIONS = ("variables", "trainable_variables", "local_variables", "model_variables",
                        "moving_average_variables", "metric_variables", "concatenated_variables")
#: TF1 collections of v1 control-flow contexts (CondContextDef, WhileContextDef): Python-side records of
#: which tensors a tf.cond/tf.while_loop made, for extending the graph (gradients), not for running it.
#: A TF1 loader looks up every name they hold, and the optimizer renames and removes such nodes, so
#: the writer drops them.
CONTROL_FLOW_COLLECTIONS = ("cond_context", "while_context")
#: The attribute marking a public function (kept by name and signature).
PUBLIC_ATTR = "tf_saved_model.exported_names"


def _public(message: str) -> str:
    """Protobuf's messages name ``tensorboard.X``; users know ``tensorflow.X``."""
    return re.sub(r"\btensorboard\.(?=[A-Z])", "tensorflow.", message)


@functools.cache
def saved_model_class() -> type[Message]:
    """``tensorflow.SavedModel`` (as ``tensorboard.SavedModel``): ``int64
    saved_model_schema_version = 1; repeated MetaGraphDef meta_graphs = 2;``."""
    pool = descriptor_pool.Default()
    try:
        return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorboard.SavedModel"))
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto(name="egraft/saved_model.proto", package="tensorboard",
                                               syntax="proto3", dependency=[meta_graph_pb2.DESCRIPTOR.name])
    message = proto.message_type.add(name="SavedModel")
    message.field.add(name="saved_model_schema_version", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    message.field.add(name="meta_graphs", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED, type_name=".tensorboard.MetaGraphDef")
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorboard.SavedModel"))


def saved_model_file(directory: str | PathLike[str]) -> Path:
    """The ``saved_model.pb`` (else ``saved_model.pbtxt``) of a directory; GraphDefError if neither."""
    root = Path(directory)
    for name in (SAVED_MODEL_PB, SAVED_MODEL_PBTXT):
        if (root / name).is_file():
            return root / name
    if (root / "saved_model.cpb").is_file():
        raise GraphDefError(str(root / "saved_model.cpb"), "a chunked SavedModel (TensorFlow's experimental image "
                                                           "format) is not supported: save it without "
                                                           "experimental_image_format")
    raise GraphDefError(str(directory), f"not a SavedModel directory: it has no {SAVED_MODEL_PB} "
                                        f"(or {SAVED_MODEL_PBTXT})")


def is_saved_model_dir(path: str | PathLike[str]) -> bool:
    root = Path(path)
    return root.is_dir() and any((root / name).is_file() for name in (SAVED_MODEL_PB, SAVED_MODEL_PBTXT))


def parse_saved_model(data: bytes, source: str, text: bool = False) -> Message:
    """A SavedModel message from ``saved_model.pb`` (or ``.pbtxt``) bytes."""
    cls = saved_model_class()
    try:
        if text:
            return text_format.Parse(data.decode("utf-8"), cls())
        return cls.FromString(data)
    except (DecodeError, UnicodeDecodeError) as err:
        raise GraphDefError(source, f"not a binary SavedModel: {_public(str(err))}") from None
    except text_format.ParseError as err:
        raise GraphDefError(source, f"not a text SavedModel: {err}", err.GetLine() or None,
                            err.GetColumn() or None) from None


def load_saved_model(directory: str | PathLike[str]) -> tuple[Message, Path]:
    """The SavedModel message of a directory and the file it came from."""
    path = saved_model_file(directory)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise GraphDefError(str(path), f"cannot read file: {err.strerror or err}") from None
    return parse_saved_model(data, str(path), text=path.name == SAVED_MODEL_PBTXT), path


def tag_text(tags: Iterable[str]) -> str:
    return ",".join(sorted(tags)) or "(no tags)"


def select_meta_graph(saved: Message, tags: Sequence[str], source: str) -> int:
    """The index of the MetaGraphDef whose tag set is ``tags`` (as a set), as TF's loader picks one."""
    wanted = set(tags)
    found = [i for i, mg in enumerate(saved.meta_graphs) if set(mg.meta_info_def.tags) == wanted]
    if not found:
        have = "; ".join(tag_text(mg.meta_info_def.tags) for mg in saved.meta_graphs) or "none"
        raise GraphDefError(source, f"no MetaGraphDef with tags '{tag_text(wanted)}' (the SavedModel has: {have})")
    return found[0]


def user_signatures(meta_graph: MetaGraphDef) -> list[str]:
    return sorted(k for k in meta_graph.signature_def if k != INIT_OP_SIGNATURE)


@attrs.frozen
class GraphIO:
    """What the graph of a MetaGraphDef feeds and fetches for the chosen signatures (tensor names,
    ``x``, ``x:1``), and the nodes the SavedModel needs beyond them (:func:`kept_nodes`), which the
    writer takes from the input as they were (:func:`splice`)."""

    feeds: tuple[str, ...]
    fetches: tuple[str, ...]
    kept: tuple[str, ...]


def _tensor(name: str) -> str:
    """TF's ``x:0`` as egraft's fetch flags spell it (``x``); other ports stay ``x:1``."""
    return name[:-2] if name.endswith(":0") else name


def _node(name: str) -> str:
    """The node of a tensor or node reference (``x:1``, ``^x``, ``x``)."""
    return name.lstrip("^").split(":")[0]


def _signature_tensors(signature: Message, field: str, source: str, key: str) -> list[str]:
    names = []
    for arg, info in sorted(getattr(signature, field).items()):
        kind = info.WhichOneof("encoding")
        if kind != "name":
            raise GraphDefError(source, f"signature '{key}': {field[:-1]} '{arg}' is a {kind} tensor; only "
                                        f"dense tensors (TensorInfo.name) are supported")
        names.append(_tensor(info.name))
    return names


def graph_io(meta_graph: MetaGraphDef, signatures: Sequence[str], source: str) -> GraphIO:
    """Feeds and fetches for ``signatures``: their inputs and outputs; the saver's filename tensor
    and the asset files' tensors are fed too (the loader feeds them paths: never constants)."""
    feeds: list[str] = []
    fetches: list[str] = []
    for key in signatures:
        if key not in meta_graph.signature_def:
            have = ", ".join(f"'{k}'" for k in user_signatures(meta_graph)) or "none"
            raise GraphDefError(source, f"signature '{key}' not found in the MetaGraphDef with tags "
                                        f"'{tag_text(meta_graph.meta_info_def.tags)}' (signatures: {have})")
        signature = meta_graph.signature_def[key]
        inputs = _signature_tensors(signature, "inputs", source, key)
        for tensor in inputs:
            node, _, port = tensor.partition(":")
            if port and port != "0":  # a feed becomes a Placeholder of that name: one output
                raise GraphDefError(source, f"signature '{key}': input '{tensor}' is output {port} of node "
                                            f"'{node}'; only a node's first output can be fed")
        feeds += inputs
        fetches += _signature_tensors(signature, "outputs", source, key)
    if meta_graph.saver_def.filename_tensor_name:
        feeds.append(_tensor(meta_graph.saver_def.filename_tensor_name))
    feeds += [_tensor(a.tensor_info.name) for a in meta_graph.asset_file_def if a.tensor_info.name]
    fed = set(feeds)
    return GraphIO(tuple(dict.fromkeys(feeds)), tuple(t for t in dict.fromkeys(fetches) if t not in fed),
                   kept_nodes(meta_graph, source))


def kept_nodes(meta_graph: MetaGraphDef, source: str) -> tuple[str, ...]:
    """The nodes a loader looks up besides the signatures': the saver's (filename, save tensor,
    restore op), the init op (``__saved_model_init_op``), every node a collection lists
    (``saved_model_main_op``, ``table_initializer``...), the tensors and ops of TF1 variable
    collections' VariableDefs, the asset files' tensors, and the object graph's constants."""
    names: list[str] = []
    init = meta_graph.signature_def.get(INIT_OP_SIGNATURE)
    if init is not None:
        names += [info.name for info in init.outputs.values() if info.name]
    saver = meta_graph.saver_def
    names += [saver.filename_tensor_name, saver.save_tensor_name, saver.restore_op_name]
    for key, collection in meta_graph.collection_def.items():
        kind = collection.WhichOneof("kind")
        if kind == "node_list":
            names += collection.node_list.value
        elif kind == "bytes_list" and key == "savers":
            for data in collection.bytes_list.value:
                try:
                    other = SaverDef.FromString(data)
                except DecodeError:
                    raise GraphDefError(source, "collection 'savers' holds a value that is not a SaverDef") from None
                names += [other.filename_tensor_name, other.save_tensor_name, other.restore_op_name]
        elif kind == "bytes_list" and key in VARIABLE_COLLECTIONS:
            for data in collection.bytes_list.value:
                try:
                    variable = VariableDef.FromString(data)
                except DecodeError:
                    raise GraphDefError(source, f"collection '{key}' holds a value that is not a VariableDef") \
                        from None
                names += [variable.variable_name, variable.initial_value_name, variable.initializer_name,
                          variable.snapshot_name]
    names += [a.tensor_info.name for a in meta_graph.asset_file_def]
    # A TF2 object graph's constants (tf.constant attributes of a trackable) name the graph node
    # the loader reads their value from (Keras's model.export saves some).
    names += [n.constant.operation for n in meta_graph.object_graph_def.nodes if n.WhichOneof("kind") == "constant"]
    return tuple(dict.fromkeys(_node(n) for n in names if n))


def _closure(nodes: dict[str, Any], roots: Iterable[str]) -> list[str]:
    """The names of ``roots`` and every node they reach through data and control inputs (names
    not in ``nodes`` are skipped), in the order first reached."""
    seen: dict[str, None] = {}
    stack = [r for r in roots if r in nodes]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen[name] = None
        stack += [n for n in map(_node, nodes[name].input) if n in nodes and n not in seen]
    return list(seen)


def _called(node_defs: Iterable[Any], library: dict[str, Any]) -> set[str]:
    """The library functions ``node_defs`` call (function ops, function attributes), transitively."""
    found: set[str] = set()
    work = list(node_defs)
    while work:
        node = work.pop()
        names = [node.op] + [v.func.name for v in node.attr.values() if v.WhichOneof("value") == "func"]
        names += [f.name for v in node.attr.values() if v.WhichOneof("value") == "list" for f in v.list.func]
        for name in names:
            if name in library and name not in found:
                found.add(name)
                work += list(library[name].node_def)
    return found


def splice(original: GraphDef, optimized: GraphDef, io: GraphIO) -> GraphDef:
    """``optimized`` with the nodes of ``io.kept`` and all they reach taken from ``original`` as they
    were (and the functions those call, from the original library), less the nodes the optimizer
    made (names the input lacks: what an inlined restore call left) that nothing of the rest reaches.

    The kept nodes are the saver's, the init op's and the collections': what a TF1 loader (TensorFlow
    Serving) runs by name. Taking them from the input keeps the checkpoint's restore and the
    initializers exactly as TensorFlow wrote them, whatever the optimizer did with the nodes it was
    not asked to fetch, and costs nothing at inference (a session runs only what it fetches)."""
    before = {n.name: n for n in original.node}
    kept = _closure(before, io.kept)
    kept_set = set(kept)
    after = {n.name: n for n in optimized.node}
    merged: dict[str, Any] = {name: (before[name] if name in kept_set else node) for name, node in after.items()}
    for name in kept:
        merged.setdefault(name, before[name])
    roots = [_node(t) for t in (*io.fetches, *io.feeds)] + kept + [name for name in after if name in before]
    live = set(_closure(merged, roots))
    out = GraphDef()
    out.CopyFrom(optimized)
    del out.node[:]
    out.node.extend(node for name, node in merged.items() if name in live)
    library = {f.signature.name: f for f in original.library.function}
    needed = _called((before[name] for name in kept), library)
    if needed:
        present = {f.signature.name: i for i, f in enumerate(out.library.function)}
        for name in sorted(needed):
            if name in present:
                out.library.function[present[name]].CopyFrom(library[name])
            else:
                out.library.function.add().CopyFrom(library[name])
    return out


def public_functions(meta_graph: MetaGraphDef) -> set[str]:
    """The library functions the SavedModel names outside the graph: the object graph's concrete
    functions and those its function nodes (and signatures' wrappers) refer to."""
    names: set[str] = set()
    objects = meta_graph.object_graph_def
    names.update(objects.concrete_functions.keys())
    for node in objects.nodes:
        kind = node.WhichOneof("kind")
        if kind == "function":
            names.update(node.function.concrete_functions)
        elif kind == "bare_concrete_function":
            names.add(node.bare_concrete_function.concrete_function_name)
    return names


def mark_public(module: Operation, names: Iterable[str]) -> list[str]:
    """Give each ``tfg.func`` named in ``names`` the public attribute; the names that name no
    function of the module (a SavedModel naming a function its library lacks)."""
    wanted = set(names)
    for op in module.regions[0].blocks[0].ops:
        sym = op.attr("sym_name")
        if op.name == "tfg.func" and isinstance(sym, A.StringAttr) and sym.value in wanted:
            op.attributes[PUBLIC_ATTR] = A.ArrayAttr((A.StringAttr(sym.value),))
            wanted.discard(sym.value)
    return sorted(wanted)


def with_graph(saved: Message, index: int, graph: GraphDef, signatures: Sequence[str] | None,
               io: GraphIO | None = None) -> Message:
    """A copy of ``saved`` whose MetaGraphDef ``index`` has ``graph`` (spliced into the original
    with ``io``'s kept nodes, :func:`splice`; the library's gradients registered by name are kept
    when the new library has none) and, if ``signatures`` is given, only those signatures (and the
    init op's). With ``io``, the v1 control-flow collections go (:data:`CONTROL_FLOW_COLLECTIONS`)."""
    out = saved_model_class()()
    out.CopyFrom(saved)
    meta = out.meta_graphs[index]
    old_gradients = list(meta.graph_def.library.registered_gradients)
    meta.graph_def.CopyFrom(splice(meta.graph_def, graph, io) if io is not None else graph)
    keep_captured_bodies(saved.meta_graphs[index], meta.graph_def)
    if old_gradients and not meta.graph_def.library.registered_gradients:
        meta.graph_def.library.registered_gradients.extend(old_gradients)
    if io is not None:
        for key in CONTROL_FLOW_COLLECTIONS:
            if key in meta.collection_def:
                del meta.collection_def[key]
    if signatures is not None:
        keep = set(signatures) | {INIT_OP_SIGNATURE}
        for key in [k for k in meta.signature_def if k not in keep]:
            del meta.signature_def[key]
    return out


def keep_captured_bodies(original: MetaGraphDef, graph: GraphDef) -> None:
    """Give back its input body to every library function of ``graph`` in which a tensor the
    object graph captures (a ``captured_tensor``: a Keras layer's constant, say) no longer exists
    by name: ``tf.saved_model.load`` looks each one up in its concrete function's graph and fails
    without it. The body as TensorFlow wrote it is the one that surely has the name; the graph's
    own computation is inlined from it anyway, and TF's runtime optimizes the body it loads."""
    captured: dict[str, set[str]] = {}
    for obj in original.object_graph_def.nodes:
        if obj.WhichOneof("kind") == "captured_tensor":
            captured.setdefault(obj.captured_tensor.concrete_function, set()).add(_node(obj.captured_tensor.name))
    if not captured:
        return
    before = {f.signature.name: f for f in original.graph_def.library.function}
    for function in graph.library.function:
        names = captured.get(function.signature.name)
        if names and function.signature.name in before and not names <= {n.name for n in function.node_def}:
            function.CopyFrom(before[function.signature.name])


def serialize(saved: Message, source: str, text: bool = False) -> bytes:
    try:
        if text:
            return text_format.MessageToString(saved).encode("utf-8")
        return saved.SerializeToString(deterministic=True)
    except EncodeError as err:
        raise GraphDefError(source, f"cannot serialize the SavedModel: {_public(str(err))}") from None
