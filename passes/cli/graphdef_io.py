"""GraphDef files in ``egraft-opt``: the ``.pb``/``.pbtxt`` formats and ``--emit``.

Reading a GraphDef gives the tfg module (:mod:`egraft.ir.graphdef.import_graphdef`);
writing one accepts a tfg module or a tf_executor one (converted first), so
``egraft-opt model.pb -o out.pb`` and ``egraft-opt tf.mlir -o g.pbtxt`` both work.
``--emit=tfg|tf_executor|graphdef`` picks the form of the output whatever the file
type: an MLIR output gets the chosen dialect, ``graphdef`` without ``-o`` prints
GraphDef text. Every failure is a diagnostic (``file: error: ...``), never a traceback.
"""

from __future__ import annotations

from typing import Callable

import attrs

from egraft.ir import Diagnostic, DiagnosticError, Operation, verify
from egraft.ir.graphdef import GraphDefError, format_pbtxt, parse_pb, parse_pbtxt
from egraft.ir.graphdef.export_graphdef import export_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.ir.core.location import FileLineColLoc, Location, UnknownLoc

from egraft.passes.tf.executor_to_tfg import executor_to_tfg
from egraft.passes.cli.formats import FORMATS, Format, PrintOptions, register_format
from egraft.passes.tf.functional_to_executor import module_to_executor
from egraft.passes.tf.tf_io_options import EntrySignature
from egraft.passes.tf.tfg_to_executor import ConversionError, tfg_to_executor

EMIT_FORMS = ("graphdef", "tfg", "tf_executor")


class _FileLoc(Location):
    """A whole file, for errors without a position (renders as the bare name)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return self.name


def diagnostic_error(err: GraphDefError | ConversionError, filename: str) -> DiagnosticError:
    if isinstance(err, GraphDefError) and err.line is not None:
        loc: Location = FileLineColLoc(err.source, err.line, err.column or 1)
        return DiagnosticError(Diagnostic("error", err.message, loc))
    message = err.message if isinstance(err, GraphDefError) else str(err)
    return DiagnosticError(Diagnostic("error", message, _FileLoc(filename)))


def _has(top: Operation, name: str) -> bool:
    return any(op.name == name for op in top.walk())


def as_tfg(top: Operation, filename: str = "<module>") -> Operation:
    """The tfg form of a module (tf_executor modules, or a ``@main`` of tf ops, are converted)."""
    if _has(top, "func.func") and not _has(top, "tfg.graph"):
        try:
            converted = executor_to_tfg(top)
        except ConversionError as err:
            raise diagnostic_error(err, filename) from None
        return verified(converted, "tfg", filename)
    return top


def as_executor(top: Operation, filename: str = "<module>", signature: EntrySignature | None = None) -> Operation:
    """The tf_executor form of a module: a tfg graph is converted with ``signature``'s
    feeds and fetches (by default every node nothing consumes is fetched)."""
    if _has(top, "tfg.graph"):
        sig = signature or EntrySignature()
        try:
            converted = tfg_to_executor(top, sig.outputs, control_fetches=sig.control_outputs, feeds=sig.inputs)
        except ConversionError as err:
            raise diagnostic_error(err, filename) from None
        return verified(converted, "tf_executor", filename)
    if signature is not None:
        raise DiagnosticError(Diagnostic("error", "--tf-* input/output flags apply to the GraphDef -> tf_executor "
                                                  "conversion, but the input is not a tfg graph",
                                         _FileLoc(filename)))
    if module_to_executor(top):  # tf functions in functional form: one island each, as TF's pass
        verified(top, "tf_executor", filename)
    return top


def verified(top: Operation, form: str, filename: str) -> Operation:
    """``top`` if it verifies; else the verifier's errors, noting the conversion that made
    the IR: an input the conversion cannot express (a Switch whose predicate is a float)
    must be an error, never invalid output."""
    try:
        verify(top)
    except DiagnosticError as err:
        for d in err.diagnostics:
            d.attach_note(f"in the {form} form converted from this input", _FileLoc(filename))
        raise
    return top


def _reader(parse: Callable) -> Callable[[bytes, str, bool], Operation]:
    def read(data: bytes, filename: str, _allow_unregistered: bool) -> Operation:
        try:
            if parse is parse_pbtxt:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise GraphDefError(filename, f"text GraphDef is not UTF-8 (byte {err.start}); "
                                                  f"binary files need a .pb name or --input-format=pb") from None
                graph = parse_pbtxt(text, filename)
            else:
                graph = parse_pb(data, filename)
            return located(import_graphdef(graph, filename), filename)
        except GraphDefError as err:
            raise diagnostic_error(err, filename) from None
    return read


def located(module: Operation, filename: str) -> Operation:
    """The module and its graph located at the file (a GraphDef has no lines: ``file:0:0``), so a
    pass's diagnostic about the whole graph names the input instead of ``loc(unknown)``."""
    for op in [module, *(o for o in module.regions[0].ops() if o.name == "tfg.graph")]:
        if isinstance(op.loc, UnknownLoc):
            op.loc = FileLineColLoc(filename, 0, 0)
    return module


def _writer(binary: bool) -> Callable[[Operation, PrintOptions, str | None], bytes]:
    def write(top: Operation, _options: PrintOptions, _metadata: str | None) -> bytes:
        try:
            graph = export_graphdef(as_tfg(top))
        except GraphDefError as err:
            raise diagnostic_error(err, "<output>") from None
        return graph.SerializeToString(deterministic=True) if binary else format_pbtxt(graph).encode("utf-8")
    return write


PB = Format("pb", (".pb",), _reader(parse_pb), _writer(True))
PBTXT = Format("pbtxt", (".pbtxt", ".pbtext"), _reader(parse_pbtxt), _writer(False))
register_format(PB)
register_format(PBTXT)


def _read_either(data: bytes, filename: str, allow_unregistered: bool) -> Operation:
    """Text format first, then binary, as ``tfg-translate -graphdef-to-mlir`` loads a file;
    when neither parses, the text format's error (the likelier intent) is reported."""
    assert PBTXT.read is not None and PB.read is not None
    try:
        return PBTXT.read(data, filename, allow_unregistered)
    except DiagnosticError as text_error:
        try:
            return PB.read(data, filename, allow_unregistered)
        except DiagnosticError:
            raise text_error from None


#: ``--input-format=graphdef`` (and ``-graphdef-to-mlir``): a GraphDef in either encoding.
register_format(Format("graphdef", (), _read_either, _writer(False)))


def emitting(fmt: Format, emit: str | None, signature: EntrySignature | None = None,
             filename: str = "<module>") -> Format:
    """``fmt`` writing the form ``--emit`` asks for; ``signature`` (the ``--tf-*``
    flags) configures the conversion to tf_executor, the only one that fetches, and
    ``filename`` names the input in its errors."""
    if emit is None or emit == "graphdef" and not fmt.is_mlir_text:
        return fmt
    if emit == "graphdef":
        return PBTXT
    write = fmt.write
    assert write is not None
    if emit == "tfg":
        return attrs.evolve(fmt, write=lambda op, options, metadata: write(as_tfg(op), options, metadata))
    return attrs.evolve(fmt, write=lambda op, options, metadata: write(as_executor(op, filename, signature),
                                                                       options, metadata))


def format_named(name: str) -> Format:
    """A format by name (``mlir``, ``pb``, ``pbtxt``) for ``--input-format``/``--output-format``."""
    if name not in FORMATS:
        raise ValueError(f"unknown format '{name}' (known: {', '.join(sorted(FORMATS))})")
    return FORMATS[name]
