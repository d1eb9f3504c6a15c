"""The lexical layer of MLIR text: whitespace, punctuation, keywords, literals.

`Lexer` keeps the buffer and the current offset and reads one token at a
time by matching a precompiled regular expression there, with no token
objects in between.  It also counts nesting depth (`enter`) and makes located
errors (`error`).  The parser classes above it (types, attributes,
locations, SSA scopes, operations) extend it one concern each.
"""

from __future__ import annotations

import re

from egraft.ir.core.deep import MAX_NESTING
from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.core.location import SourceFile, SourcePos

# Patterns that may run over long text (string and hex literals of megabytes,
# functions of thousands of arguments) are written so that the regex engine
# keeps no backtracking state per character: a run of one character class
# (`[^"\\\n]*+`) costs nothing, whereas an alternation repeated per character
# (`(?:[^"\\]|\\.)*`) saved a backtracking point for every character, about
# 200 bytes each (a 20 MB weight took 4 GB to parse).  Possessive quantifiers
# (`*+`) drop that state where no backtracking is ever needed.
WS = re.compile(r"(?:[ \t\r\n]++|//[^\n]*+)*+")
BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")
_SSA_ID = re.compile(r"%([\w$.\-]+)(?:#(\d+))?")
# The body of a string literal: runs of plain characters between escapes.
STRING_BODY = r'[^"\\\n]*+(?:\\.[^"\\\n]*+)*+'
STRING = re.compile(r'"(' + STRING_BODY + r')"')
_INTEGER = re.compile(r"-?(?:0x[0-9A-Fa-f]+|\d+)")
_SYMBOL = re.compile(r'@(?:([A-Za-z_][\w$.\-]*)|"([^"\\]*+(?:\\.[^"\\]*+)*+)")')
_RESULT_DEFINITION = re.compile(r"%[\w$.\-]+(?::\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?::\d+)?)*+[ \t]*=(?!=)")
_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{2})|(.))")


def int_literal(text: str) -> int:
    """An MLIR integer literal: decimal (leading zeros allowed) or `0x` hex."""
    body = text.lstrip("-")
    value = int(body, 16) if body[:2] in ("0x", "0X") else int(body, 10)
    return -value if text.startswith("-") else value


def unescape(body: str) -> str | bytes:
    """Decode an MLIR string literal body; bytes if it is not valid UTF-8."""
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(body):
        out += body[pos:m.start()].encode("utf-8")
        if m.group(1):
            out.append(int(m.group(1), 16))
        else:
            out += {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}.get(m.group(2), m.group(2).encode())
        pos = m.end()
    out += body[pos:].encode("utf-8")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return bytes(out)


class Lexer:
    """The buffer, the current offset and the tokens read there."""

    def __init__(self, text: str, filename: str = "<stdin>", line_offset: int = 0) -> None:
        self.text = text
        self.pos = 0
        self.source = SourceFile(filename, text, line_offset)
        # How deeply regions, attributes, types, locations and affine
        # expressions nest at the current position (see `enter`).
        self.depth = 0

    # ================================================================ errors

    def loc_at(self, pos: int) -> SourcePos:
        return SourcePos(self.source, pos)

    def error(self, message: str, pos: int | None = None) -> DiagnosticError:
        """A diagnostic at `pos` (default: the current token) to raise."""
        if pos is None:
            self.skip_ws()
            pos = self.pos
        return DiagnosticError(Diagnostic("error", message, self.loc_at(pos)))

    def enter(self, pos: int) -> None:
        """Count one more level of nesting (region, attribute, type, location
        or affine expression) starting at `pos`; the caller undoes it with
        `self.depth -= 1` once the construct is read.  Input nested deeper
        than `MAX_NESTING` is reported here, at the construct that goes too
        deep, rather than by the stack (see `ir/core/deep.py`)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"nesting too deep: more than {MAX_NESTING} nested regions, attributes, "
                             f"types, locations or expressions", pos)

    # ================================================================ tokens

    def skip_ws(self) -> None:
        self.pos = WS.match(self.text, self.pos).end()

    def peek(self, n: int = 1) -> str:
        self.skip_ws()
        return self.text[self.pos:self.pos + n]

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.text)

    def parse_optional_punct(self, p: str) -> bool:
        self.pos = WS.match(self.text, self.pos).end()
        if self.text.startswith(p, self.pos):
            self.pos += len(p)
            return True
        return False

    def parse_punct(self, p: str, what: str | None = None) -> None:
        if not self.parse_optional_punct(p):
            raise self.error(f"expected '{p}'" + (f" {what}" if what else ""), self._missing_token_pos())

    def _missing_token_pos(self) -> int:
        """Where a missing token is reported: at the current token, or, if
        that starts a line, right after the last code on an earlier line
        (as MLIR does, so the error lands on the incomplete line)."""
        text = self.text
        line_start = text.rfind("\n", 0, self.pos) + 1
        if text[line_start:self.pos].strip():
            return self.pos
        while line_start > 0:
            prev_start = text.rfind("\n", 0, line_start - 1) + 1
            code = text[prev_start:line_start - 1].split("//", 1)[0].rstrip()
            if code:
                return prev_start + len(code)
            line_start = prev_start
        return self.pos

    def parse_optional_keyword(self, kw: str) -> bool:
        self.skip_ws()
        m = BARE_ID.match(self.text, self.pos)
        if m is not None and m.group() == kw:
            self.pos = m.end()
            return True
        return False

    def parse_keyword(self, kw: str, what: str = "") -> None:
        if not self.parse_optional_keyword(kw):
            raise self.error(f"expected '{kw}'" + (f" {what}" if what else ""))

    def parse_optional_bare_id(self) -> str | None:
        self.skip_ws()
        m = BARE_ID.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group()

    def parse_bare_id(self, what: str = "identifier") -> str:
        name = self.parse_optional_bare_id()
        if name is None:
            raise self.error(f"expected {what}")
        return name

    def parse_optional_string(self) -> str | bytes | None:
        self.skip_ws()
        m = STRING.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return unescape(m.group(1))

    def parse_string(self, what: str = "string") -> str:
        value = self.parse_optional_string()
        if value is None:
            raise self.error(f"expected {what}")
        return value if isinstance(value, str) else value.decode("utf-8", "replace")

    def parse_optional_integer(self) -> int | None:
        self.skip_ws()
        m = _INTEGER.match(self.text, self.pos)
        if m is None or self.text[m.end():m.end() + 1] in (".",) or \
                (self.text[m.end():m.end() + 1] in "eE" and self.text[m.end() + 1:m.end() + 2].isdigit()):
            return None
        self.pos = m.end()
        return int_literal(m.group())

    def parse_integer(self, what: str = "integer value") -> int:
        value = self.parse_optional_integer()
        if value is None:
            raise self.error(f"expected {what}")
        return value

    def parse_optional_symbol(self) -> str | None:
        self.skip_ws()
        m = _SYMBOL.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        if m.group(1) is not None:
            return m.group(1)
        value = unescape(m.group(2))
        return value if isinstance(value, str) else value.decode("utf-8", "replace")

    def parse_symbol(self, what: str = "symbol name") -> str:
        value = self.parse_optional_symbol()
        if value is None:
            raise self.error(f"expected {what}")
        return value

    def balanced_text(self) -> str:
        """The text of one balanced `<...>`, `(...)`, `[...]` or `{...}` group at
        the current position (strings inside are skipped whole)."""
        text = self.text
        start = self.pos
        depth = 0
        i = start
        pairs = {"<": ">", "(": ")", "[": "]", "{": "}"}
        closers = set(pairs.values())
        n = len(text)
        while i < n:
            c = text[i]
            if c == '"':
                m = STRING.match(text, i)
                if m is None:
                    raise self.error("unterminated string", i)
                i = m.end()
                continue
            if c in pairs:
                depth += 1
            elif c in closers:
                if c == ">" and text[i - 1] == "-":  # '->' inside a function type
                    i += 1
                    continue
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return text[start:i + 1]
            i += 1
        raise self.error("unbalanced brackets", start)

    # ================================================================ operand references

    def parse_optional_operand_ref(self) -> tuple[str, int, int] | None:
        """`%name` or `%name#3` as (name, result index, offset)."""
        self.pos = WS.match(self.text, self.pos).end()
        m = _SSA_ID.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        idx = m.group(2)
        return (m.group(1), int(idx) if idx is not None else -1, m.start())

    def parse_operand_ref(self) -> tuple[str, int, int]:
        ref = self.parse_optional_operand_ref()
        if ref is None:
            raise self.error("expected SSA operand")
        return ref

    def parse_operand_ref_list(self, delimiter: str = "") -> list[tuple[str, int, int]]:
        """A comma-separated list, optionally inside `()` / `[]`."""
        refs = []
        if delimiter:
            self.parse_punct(delimiter[0])
            if self.parse_optional_punct(delimiter[1]):
                return refs
        first = None if not delimiter and self._at_result_definition() else self.parse_optional_operand_ref()
        if first is not None:
            refs.append(first)
            while self.parse_optional_punct(","):
                refs.append(self.parse_operand_ref())
        if delimiter:
            self.parse_punct(delimiter[1])
        return refs

    def _at_result_definition(self) -> bool:
        """True when the next token starts another op's results (`%a, %b:2 =`)
        on a new line: an operand list without brackets that ends a line
        (TensorFlow prints `tf_executor.ControlTrigger ` so) must stop there."""
        start = self.pos
        self.skip_ws()
        at = self.pos
        self.pos = start
        if "\n" not in self.text[start:at]:
            return False
        return _RESULT_DEFINITION.match(self.text, at) is not None
