"""Input and output formats of `egraft-opt`, chosen by file extension.

MLIR text is built in.  Another format (GraphDef `.pb`/`.pbtxt`) plugs in
with `register_format`, giving a reader from bytes to a top-level op and/or
a writer from an op to bytes; the driver then needs no change.  Text input
is split with `--split-input-file` before parsing; other formats are read
whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import attrs

from egraft.ir import Operation, print_ir


@attrs.frozen
class PrintOptions:
    """How to print MLIR text (the `--mlir-print-*` flags)."""

    generic: bool = False
    debuginfo: bool = False
    local_scope: bool = False


@attrs.frozen
class Format:
    """A file format: `read(data, filename, allow_unregistered)` and `write(op, options, metadata)`."""

    name: str
    extensions: tuple[str, ...]
    read: Callable[[bytes, str, bool], Operation] | None = None
    write: Callable[[Operation, PrintOptions, "str | None"], bytes] | None = None
    is_mlir_text: bool = False


FORMATS: dict[str, Format] = {}


def register_format(fmt: Format) -> None:
    FORMATS[fmt.name] = fmt


def format_for(path: str | None) -> Format:
    """The format a path's extension names; MLIR text for stdin/stdout and unknown extensions."""
    if path and path != "-":
        name = Path(path).name
        for fmt in FORMATS.values():
            if any(name.endswith(ext) for ext in fmt.extensions):
                return fmt
    return FORMATS["mlir"]


def _write_mlir(op: Operation, options: PrintOptions, metadata: str | None) -> bytes:
    return print_ir(op, generic=options.generic, debuginfo=options.debuginfo,
                    local_scope=options.local_scope, metadata=metadata).encode("utf-8")


register_format(Format("mlir", (".mlir",), None, _write_mlir, is_mlir_text=True))
