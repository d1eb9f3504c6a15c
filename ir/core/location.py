"""Source locations, as MLIR models them.

Every op carries a location.  Ops parsed without an explicit `loc(...)` get
the position they were parsed at, as MLIR does; to keep parsing cheap that
position is stored as a `SourcePos` (source file + offset) and turned into
line and column only when someone asks (printing with debug info, errors).
"""

from __future__ import annotations

import bisect
from typing import Sequence

from egraft.ir.core.attributes import Attribute, escape_string


class Location:
    __slots__ = ()

    def resolved(self) -> "Location":
        """The location with lazy source positions made concrete."""
        return self

    def file_line_col(self) -> "FileLineColLoc | None":
        """The first file:line:col position inside this location, if any."""
        return None


class UnknownLoc(Location):
    __slots__ = ()

    def __str__(self) -> str:
        return "unknown"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnknownLoc)

    def __hash__(self) -> int:
        return 0


UNKNOWN = UnknownLoc()


class FileLineColLoc(Location):
    __slots__ = ("filename", "line", "col", "end_line", "end_col")

    def __init__(self, filename: str, line: int, col: int,
                 end_line: int | None = None, end_col: int | None = None) -> None:
        self.filename = filename
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col

    def __str__(self) -> str:
        text = f"{escape_string(self.filename)}:{self.line}:{self.col}"
        if self.end_col is not None:
            text += f" to {self.end_line}:{self.end_col}" if self.end_line != self.line else f" to :{self.end_col}"
        return text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileLineColLoc) and \
            (self.filename, self.line, self.col, self.end_line, self.end_col) == \
            (other.filename, other.line, other.col, other.end_line, other.end_col)

    def __hash__(self) -> int:
        return hash((self.filename, self.line, self.col))

    def file_line_col(self) -> "FileLineColLoc":
        return self


class SourceFile:
    """A buffer being parsed; maps offsets to 1-based line and column."""

    __slots__ = ("name", "text", "_line_starts", "line_offset")

    def __init__(self, name: str, text: str, line_offset: int = 0) -> None:
        self.name = name
        self.text = text
        self._line_starts: list[int] | None = None
        # For --split-input-file chunks: line numbers continue the whole file's.
        self.line_offset = line_offset

    def line_col(self, offset: int) -> tuple[int, int]:
        starts = self._line_starts
        if starts is None:
            starts = [0]
            text = self.text
            i = text.find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = text.find("\n", i + 1)
            self._line_starts = starts
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1 + self.line_offset, offset - starts[line] + 1

    def line_text(self, line: int) -> str:
        """The text of 1-based line `line` (in whole-file numbering)."""
        lines = self.text.split("\n")
        idx = line - 1 - self.line_offset
        return lines[idx] if 0 <= idx < len(lines) else ""


class SourcePos(Location):
    """A lazily resolved position in a `SourceFile`."""

    __slots__ = ("source", "offset")

    def __init__(self, source: SourceFile, offset: int) -> None:
        self.source = source
        self.offset = offset

    def resolved(self) -> FileLineColLoc:
        line, col = self.source.line_col(self.offset)
        return FileLineColLoc(self.source.name, line, col)

    def file_line_col(self) -> FileLineColLoc:
        return self.resolved()

    def __str__(self) -> str:
        return str(self.resolved())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Location) and self.resolved() == other.resolved()

    def __hash__(self) -> int:
        return hash(self.resolved())


class NameLoc(Location):
    __slots__ = ("name", "child")

    def __init__(self, name: str, child: Location | None = None) -> None:
        self.name = name
        self.child = child

    def __str__(self) -> str:
        if self.child is None or isinstance(self.child, UnknownLoc):
            return escape_string(self.name)
        return f"{escape_string(self.name)}({self.child})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NameLoc) and (self.name, self.child) == (other.name, other.child)

    def __hash__(self) -> int:
        return hash(("name", self.name))

    def resolved(self) -> "NameLoc":
        return NameLoc(self.name, self.child.resolved() if self.child else None)

    def file_line_col(self) -> FileLineColLoc | None:
        return self.child.file_line_col() if self.child else None


class CallSiteLoc(Location):
    __slots__ = ("callee", "caller")

    def __init__(self, callee: Location, caller: Location) -> None:
        self.callee = callee
        self.caller = caller

    def __str__(self) -> str:
        return f"callsite({self.callee} at {self.caller})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallSiteLoc) and (self.callee, self.caller) == (other.callee, other.caller)

    def __hash__(self) -> int:
        return hash(("callsite", self.callee, self.caller))

    def resolved(self) -> "CallSiteLoc":
        return CallSiteLoc(self.callee.resolved(), self.caller.resolved())

    def file_line_col(self) -> FileLineColLoc | None:
        return self.callee.file_line_col() or self.caller.file_line_col()


class FusedLoc(Location):
    __slots__ = ("locations", "metadata")

    def __init__(self, locations: Sequence[Location], metadata: Attribute | None = None) -> None:
        self.locations = tuple(locations)
        self.metadata = metadata

    def __str__(self) -> str:
        meta = "" if self.metadata is None else f"<{self.metadata}>"
        return f"fused{meta}[{', '.join(map(str, self.locations))}]"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FusedLoc) and (self.locations, self.metadata) == (other.locations, other.metadata)

    def __hash__(self) -> int:
        return hash(("fused", self.locations))

    def resolved(self) -> "FusedLoc":
        return FusedLoc([loc.resolved() for loc in self.locations], self.metadata)

    def file_line_col(self) -> FileLineColLoc | None:
        for loc in self.locations:
            flc = loc.file_line_col()
            if flc is not None:
                return flc
        return None


def fuse(locations: Sequence[Location]) -> Location:
    """MLIR's FusedLoc::get: flatten nested fusions, drop unknowns and
    duplicates, and return a single location unfused.

    Duplicates are dropped through a dict (first occurrence kept), not a list scan: a
    constant folded from n ops fuses n locations, and a scan made that O(n^2) (250 s
    of a 12.5k-op write-back)."""
    flat: dict[Location, None] = {}
    for loc in locations:
        parts = loc.locations if isinstance(loc, FusedLoc) and loc.metadata is None else (loc,)
        for part in parts:
            part = part.resolved()
            if not isinstance(part, UnknownLoc):
                flat[part] = None
    if not flat:
        return UNKNOWN
    if len(flat) == 1:
        return next(iter(flat))
    return FusedLoc(list(flat))
