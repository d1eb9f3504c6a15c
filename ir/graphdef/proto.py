"""Read and write GraphDefs as binary ``.pb`` or text ``.pbtxt`` files.

Every failure — missing file, corrupt wire data, text syntax error — surfaces as a
:class:`GraphDefError` with the file name and, for text, the line and column, never as
a raw protobuf traceback.
"""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path
from typing import Literal

from google.protobuf import text_format
from google.protobuf.message import DecodeError, EncodeError

from egraft.ir.graphdef.errors import GraphDefError
from egraft.ir.graphdef.messages import GraphDef

Format = Literal["binary", "text"]

#: Extension -> format. ``.pbtext`` is an older spelling found in TF repositories.
EXTENSIONS: dict[str, Format] = {".pb": "binary", ".pbtxt": "text", ".pbtext": "text"}

_POSITION_PREFIX = re.compile(r"^\d+:\d+ : ")
_PROTO_PACKAGE = re.compile(r"\btensorboard\.(?=[A-Z])")


def format_for(path: str | PathLike[str], fmt: Format | None = None) -> Format:
    """Pick the encoding: the explicit ``fmt`` if given, else from the file extension."""
    if fmt is not None:
        if fmt not in ("binary", "text"):
            raise GraphDefError(str(path), f"unknown GraphDef format {fmt!r} (use 'binary' or 'text')")
        return fmt
    suffix = Path(path).suffix.lower()
    try:
        return EXTENSIONS[suffix]
    except KeyError:
        known = ", ".join(EXTENSIONS)
        raise GraphDefError(str(path), f"cannot tell the GraphDef format from extension "
                                       f"{suffix or '(none)'!r}; use one of {known} or pass "
                                       f"format='binary'|'text'") from None


def _public(message: str) -> str:
    """Name messages ``tensorflow.X`` as users know them, not by TensorBoard's package."""
    return _PROTO_PACKAGE.sub("tensorflow.", message)


def parse_pbtxt(text: str, source: str = "<string>") -> GraphDef:
    """Parse GraphDef text format; syntax errors carry ``source:line:col``."""
    graph = GraphDef()
    try:
        text_format.Parse(text, graph)
    except text_format.ParseError as err:
        line, column = err.GetLine(), err.GetColumn()
        lines = text.splitlines()
        src_line = lines[line - 1] if line and 0 < line <= len(lines) else None
        message = _POSITION_PREFIX.sub("", str(err))
        if src_line is not None and message.startswith(f"'{src_line}': "):
            message = message[len(src_line) + 4:]
        raise GraphDefError(source, _public(message), line or None,
                            column if line else None, src_line) from None
    return graph


def parse_pb(data: bytes, source: str = "<bytes>") -> GraphDef:
    """Parse the binary wire format."""
    try:
        return GraphDef.FromString(data)
    except DecodeError as err:
        hint = ""
        if data.lstrip()[:5] in (b"node ", b"node{", b"libra", b"versi"):
            hint = " (this looks like text format: use a .pbtxt name or format='text')"
        raise GraphDefError(source, f"not a binary GraphDef: {_public(str(err))}{hint}") from None


def format_pbtxt(graph: GraphDef) -> str:
    """Render text format the way TensorFlow writes ``.pbtxt`` (two-space indents)."""
    return text_format.MessageToString(graph)


def load_graphdef(path: str | PathLike[str], format: Format | None = None) -> GraphDef:
    """Read a GraphDef file; the format comes from the extension unless given."""
    fmt = format_for(path, format)
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise GraphDefError(source, f"cannot read file: {err.strerror or err}") from None
    if fmt == "binary":
        return parse_pb(data, source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise GraphDefError(source, f"text GraphDef is not UTF-8 (byte {err.start}); "
                                    f"binary files need a .pb name or format='binary'") from None
    return parse_pbtxt(text, source)


def save_graphdef(graph: GraphDef, path: str | PathLike[str], format: Format | None = None) -> None:
    """Write a GraphDef; binary output is deterministic (map entries sorted)."""
    fmt = format_for(path, format)
    try:
        data = (graph.SerializeToString(deterministic=True) if fmt == "binary"
                else format_pbtxt(graph).encode("utf-8"))
    except EncodeError as err:
        raise GraphDefError(str(path), f"cannot serialize GraphDef: {_public(str(err))}") from None
    try:
        Path(path).write_bytes(data)
    except OSError as err:
        raise GraphDefError(str(path), f"cannot write file: {err.strerror or err}") from None
