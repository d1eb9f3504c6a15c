"""Parsing locations: `loc(...)` after ops and block arguments, and `#loc` aliases.

A location alias may be used before the line that defines it, so a
reference to one is kept pending and resolved once the whole file is read.
"""

from __future__ import annotations

from egraft.ir.core.location import UNKNOWN, CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc
from egraft.ir.core.operation import BlockArgument, Operation
from egraft.ir.syntax.attr_parser import AttributeParser
from egraft.ir.syntax.lexer import WS


class LocationParser(AttributeParser):
    """Reads locations and keeps the location aliases."""

    def __init__(self, text: str, filename: str = "<stdin>", line_offset: int = 0) -> None:
        super().__init__(text, filename, line_offset)
        self.loc_aliases: dict[str, Location] = {}
        self.pending_loc_aliases: list[tuple[Operation | BlockArgument, str, int]] = []

    def parse_optional_trailing_location(self) -> Location | str | None:
        """`loc(...)` after an op; a `#alias` reference is returned as its name
        (resolved at the end of the file, since aliases may come later)."""
        self.pos = WS.match(self.text, self.pos).end()
        if not self.text.startswith("loc(", self.pos):
            return None
        self.pos += 4
        if self.parse_optional_punct("#"):
            name = self.parse_bare_id("location alias")
            self.parse_punct(")")
            return name
        loc = self.parse_location_body()
        self.parse_punct(")")
        return loc

    def parse_location_body(self) -> Location:
        self.skip_ws()
        start = self.pos
        self.enter(start)
        try:
            return self._parse_location_at(start)
        finally:
            self.depth -= 1

    def _parse_location_at(self, start: int) -> Location:
        if self.parse_optional_keyword("unknown"):
            return UNKNOWN
        if self.parse_optional_keyword("callsite"):
            self.parse_punct("(")
            callee = self.parse_location_body()
            self.parse_keyword("at")
            caller = self.parse_location_body()
            self.parse_punct(")")
            return CallSiteLoc(callee, caller)
        if self.parse_optional_keyword("fused"):
            meta = None
            if self.parse_optional_punct("<"):
                meta = self.parse_attribute()
                self.parse_punct(">")
            self.parse_punct("[")
            locs = [self.parse_location_body()]
            while self.parse_optional_punct(","):
                locs.append(self.parse_location_body())
            self.parse_punct("]")
            return FusedLoc(locs, meta)
        if self.parse_optional_punct("#"):
            name = self.parse_bare_id("location alias")
            loc = self.loc_aliases.get(name)
            if loc is None:
                raise self.error(f"undefined location alias '#{name}'", start)
            return loc
        s = self.parse_optional_string()
        if s is None:
            raise self.error("expected location instance", start)
        s = s if isinstance(s, str) else s.decode("utf-8", "replace")
        if self.parse_optional_punct(":"):
            line = self.parse_integer("line number")
            self.parse_punct(":")
            col = self.parse_integer("column number")
            if self.parse_optional_keyword("to"):
                end_line = line
                if not self.parse_optional_punct(":"):
                    end_line = self.parse_integer()
                    self.parse_punct(":")
                end_col = self.parse_integer()
                return FileLineColLoc(s, line, col, end_line, end_col)
            return FileLineColLoc(s, line, col)
        if self.parse_optional_punct("("):
            child = self.parse_location_body()
            self.parse_punct(")")
            return NameLoc(s, child)
        return NameLoc(s)

    def set_location(self, target: Operation | BlockArgument, loc: Location | str | None, pos: int) -> None:
        if loc is None:
            return
        if isinstance(loc, str):
            resolved = self.loc_aliases.get(loc)
            if resolved is None:
                self.pending_loc_aliases.append((target, loc, pos))
                return
            loc = resolved
        target.loc = loc

    def resolve_pending_locations(self) -> None:
        for target, name, pos in self.pending_loc_aliases:
            loc = self.loc_aliases.get(name)
            if loc is None:
                raise self.error(f"operation location alias was never defined", pos)
            target.loc = loc
        self.pending_loc_aliases.clear()
