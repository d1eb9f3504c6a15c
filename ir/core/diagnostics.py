"""Diagnostics: errors, warnings, notes and remarks with locations.

Messages are rendered the way MLIR renders them, `file:line:col: error: msg`
followed by the source line and a caret, so that users and upstream tests
(`expected-error@+1 {{...}}`) see what they would see from mlir-opt.
"""

from __future__ import annotations

from typing import Callable, Iterable

import attrs

from egraft.ir.core.location import FileLineColLoc, Location, SourceFile, SourcePos

SEVERITIES = ("error", "warning", "note", "remark")


@attrs.define
class Diagnostic:
    severity: str
    message: str
    loc: Location
    notes: list["Diagnostic"] = attrs.field(factory=list)

    def attach_note(self, message: str, loc: Location | None = None) -> "Diagnostic":
        note = Diagnostic("note", message, loc if loc is not None else self.loc)
        self.notes.append(note)
        return note

    def position(self) -> FileLineColLoc | None:
        return self.loc.file_line_col()

    def render(self, sources: dict[str, SourceFile] | None = None, show_source: bool = True) -> str:
        """MLIR's text for this diagnostic (and its notes)."""
        out = [_render_one(self, sources, show_source)]
        out += [_render_one(n, sources, show_source) for n in self.notes]
        return "\n".join(out)


def _render_one(d: Diagnostic, sources: dict[str, SourceFile] | None, show_source: bool) -> str:
    pos = d.position()
    if pos is None:
        return f"{d.loc}: {d.severity}: {d.message}" if not _is_unknown(d.loc) else f"loc(unknown): {d.severity}: {d.message}"
    text = f"{pos.filename}:{pos.line}:{pos.col}: {d.severity}: {d.message}"
    src = _source_for(d.loc, pos, sources) if show_source else None
    if src is not None:
        text += _source_snippet(d.loc, pos, src)
    return text


MAX_SOURCE_LINE = 1000
"""Longer source lines are shown clipped to `CONTEXT` characters each side of the caret:
a diagnostic in a 50 MB single-line file must not copy the whole line to stderr."""
CONTEXT = 80


def _source_snippet(loc: Location, pos: FileLineColLoc, src: SourceFile) -> str:
    """'\n' + the source line (clipped around the caret if long) + '\n' + the caret line."""
    if isinstance(loc, SourcePos):
        # Slice the line out of the buffer around the offset: never split the whole file.
        text = src.text
        start = text.rfind("\n", 0, loc.offset) + 1
        end = text.find("\n", loc.offset)
        end = len(text) if end < 0 else end
        column = loc.offset - start
    else:
        text = src.line_text(pos.line)
        start, end, column = 0, len(text), pos.col - 1
    if end - start <= MAX_SOURCE_LINE:
        line = text[start:end]
        return f"\n{line}\n{' ' * column}^" if line else ""
    first = max(start, start + column - CONTEXT)
    last = min(end, start + column + CONTEXT)
    head = "..." if first > start else ""
    tail = "..." if last < end else ""
    caret = len(head) + start + column - first
    return f"\n{head}{text[first:last]}{tail}\n{' ' * caret}^"


def _is_unknown(loc: Location) -> bool:
    return str(loc) == "unknown"


def _source_for(loc: Location, pos: FileLineColLoc, sources: dict[str, SourceFile] | None) -> SourceFile | None:
    if isinstance(loc, SourcePos):
        return loc.source
    if sources:
        return sources.get(pos.filename)
    return None


class DiagnosticError(Exception):
    """Raised with one or more diagnostics (a parse error, a failed verifier)."""

    def __init__(self, diagnostics: Diagnostic | Iterable[Diagnostic]) -> None:
        self.diagnostics = [diagnostics] if isinstance(diagnostics, Diagnostic) else list(diagnostics)
        super().__init__(self.render())

    def render(self, sources: dict[str, SourceFile] | None = None) -> str:
        return "\n".join(d.render(sources) for d in self.diagnostics)


DiagnosticHandler = Callable[[Diagnostic], None]


def error(message: str, loc: Location) -> DiagnosticError:
    return DiagnosticError(Diagnostic("error", message, loc))
