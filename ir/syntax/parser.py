"""Parser for MLIR text: generic and custom forms, today's syntax and 2019's.

The parser is a scanner over the source string: each step matches a
precompiled regular expression at the current offset, with no token objects
in between.  Types, function signatures and small attribute dictionaries are
cached by their source text, since a large module repeats the same few
hundred spellings.  Custom op forms (`ir/dialects/*`) call the same methods
(`parse_operand_ref`, `parse_type`, `parse_region`, ...), as MLIR's
OpAsmParser interface offers them.

Errors raise `DiagnosticError` located at file:line:col.
"""

from __future__ import annotations

import contextlib
import gc
import re
from typing import Any, Callable, Iterator, Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Block, BlockArgument, Operation, Region, Value
from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.core.location import (UNKNOWN, CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc,
                       SourceFile, SourcePos)
from egraft.ir.records.opdef import Traits
from egraft.ir.records.registry import REGISTRY
from egraft.ir.syntax.attr_parser import int_literal
from egraft.ir.core.deep import MAX_NESTING

# Patterns that may run over long text (string and hex literals of megabytes,
# functions of thousands of arguments) are written so that the regex engine
# keeps no backtracking state per character: a run of one character class
# (`[^"\\\n]*+`) costs nothing, whereas an alternation repeated per character
# (`(?:[^"\\]|\\.)*`) saved a backtracking point for every character, about
# 200 bytes each (a 20 MB weight took 4 GB to parse).  Possessive quantifiers
# (`*+`) drop that state where no backtracking is ever needed.
_WS = re.compile(r"(?:[ \t\r\n]++|//[^\n]*+)*+")
_BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")
_OP_NAME = re.compile(r"[A-Za-z_][\w$.]*(?:\.[A-Za-z_][\w$.]*)*")
_SSA_ID = re.compile(r"%([\w$.\-]+)(?:#(\d+))?")
_RESULT_ID = re.compile(r"%([\w$.\-]+)(?::(\d+))?")
_BLOCK_ID = re.compile(r"\^([\w$.\-]+)")
# The body of a string literal: runs of plain characters between escapes.
_STRING_BODY = r'[^"\\\n]*+(?:\\.[^"\\\n]*+)*+'
_STRING = re.compile(r'"(' + _STRING_BODY + r')"')
_INTEGER = re.compile(r"-?(?:0x[0-9A-Fa-f]+|\d+)")
_NUMBER = re.compile(r"[-+]?(?:0x[0-9A-Fa-f]+|(?:\d+\.\d*|\d+)(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)")
_SYMBOL = re.compile(r'@(?:([A-Za-z_][\w$.\-]*)|"([^"\\]*+(?:\\.[^"\\]*+)*+)")')
_SIMPLE_TYPE = re.compile(r"(?:[su]?i\d+|index|none|"
                          + "|".join(sorted(T.FLOAT_WIDTHS, key=len, reverse=True)) + r")(?![\w$.])")
# A shaped/dialect type without nested angle brackets; its text is a cache key.
_FLAT_TYPE = re.compile(r"(?:tensor|memref|vector|complex|tuple|![\w.$]+)<[^<>{}\"()]*+>|![\w.$]+(?![\w.$<])")
# A parenthesized type list whose types nest angle brackets at most one level.
_FLAT_TYPE_LIST = r'\([^()<>{}"]*+(?:<[^<>{}"]*+>[^()<>{}"]*+)*+\)'
# A function type made of such lists (or a single result without nested brackets).
_FLAT_FN_TEXT = _FLAT_TYPE_LIST + r'[ \t]*->[ \t]*(?:' + _FLAT_TYPE_LIST + r'|[\w.!]+(?:<[^<>{}"()]*+>)?)'
_FLAT_FN_TYPE = re.compile(_FLAT_FN_TEXT)
# A dictionary without nested braces (strings allowed): cacheable when short.
_FLAT_DICT_TEXT = r'\{[^{}"]*+(?:"' + _STRING_BODY + r'"[^{}"]*+)*+\}'
_FLAT_DICT = re.compile(_FLAT_DICT_TEXT)
# The whole of a region-free, successor-free generic op after its results:
# name, operand list, properties, attributes and a flat function type.  Ops
# matching it (nearly all of a large module) skip the general path.
_GENERIC_FAST = re.compile(
    r'"([^"\\\n]+)"\((?:[ \t]*)((?:%[\w$.\-]+(?:#\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?:#\d+)?)*+)?)[ \t]*\)'
    r'(?:[ \t]*<(' + _FLAT_DICT_TEXT + r')>)?'
    r'(?:[ \t]*(' + _FLAT_DICT_TEXT + r'))?'
    r'[ \t]*:[ \t]*(' + _FLAT_FN_TEXT + r')')
_RESULT_DEFINITION = re.compile(r"%[\w$.\-]+(?::\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?::\d+)?)*+[ \t]*=(?!=)")
_SINGLE_RESULT = re.compile(r"%([\w$.\-]+)[ \t]*=[ \t]*")
_DIM_LIST = re.compile(r"((?:(?:\d+|\?|\[\d+\])x)*)")
_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{2})|(.))")
_FLAT_CACHE_LIMIT = 256

_SIMPLE_TYPES: dict[str, T.Type] = {"index": T.index, "none": T.none}
MAX_INT_WIDTH = (1 << 24) - 1
"""MLIR's limit on an integer type's width (IntegerType::kMaxWidth)."""
_DIM_MAX = (1 << 63) - 1


def _simple_type(text: str) -> T.Type | None:
    """The type a `_SIMPLE_TYPE` token names; None for an integer type wider
    than MLIR allows (valid types are cached by their text)."""
    t = _SIMPLE_TYPES.get(text)
    if t is None:
        if text in T.FLOAT_WIDTHS:
            t = T.FloatType(text)
        else:
            signedness = "" if text[0] == "i" else text[0]
            width = int(text[1 if not signedness else 2:])
            if width > MAX_INT_WIDTH:
                return None
            t = T.IntegerType(width, signedness)
        _SIMPLE_TYPES[text] = t
    return t


# Element types MLIR's builtin shaped types refuse (dialect types are taken
# on trust: whether they implement the element type interfaces is unknown here).
_NOT_TENSOR_ELEMENT = (T.RankedTensorType, T.UnrankedTensorType, T.MemRefType, T.UnrankedMemRefType,
                       T.TupleType, T.NoneType, T.FunctionType)
_MEMREF_ELEMENT = (T.IntegerType, T.IndexType, T.FloatType, T.ComplexType, T.VectorType, T.MemRefType,
                   T.UnrankedMemRefType, T.DialectType)
_VECTOR_ELEMENT = (T.IntegerType, T.IndexType, T.FloatType, T.DialectType)


def _check_element_type(p: "Parser", kind: str, elt: T.Type, start: int, elt_pos: int) -> None:
    """MLIR's element type checks of tensor, memref and vector types."""
    if kind == "tensor" and isinstance(elt, _NOT_TENSOR_ELEMENT):
        raise p.error("invalid tensor element type", elt_pos)
    if kind == "memref" and not isinstance(elt, _MEMREF_ELEMENT):
        raise p.error("invalid memref element type", elt_pos)
    if kind == "vector" and not isinstance(elt, _VECTOR_ELEMENT):
        raise p.error("failed to verify 'elementType': VectorElementTypeInterface instance", start)


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


class _Scope:
    """The SSA names a region defines (their values live in the parser's
    `_visible` table) and its block labels; `isolated` hides the scopes below it."""

    __slots__ = ("names", "isolated", "blocks", "forward_blocks")

    def __init__(self, isolated: bool) -> None:
        self.names: list[str] = []
        self.isolated = isolated
        self.blocks: dict[str, Block] = {}
        self.forward_blocks: dict[str, tuple[Block, int]] = {}


class _Placeholder(Operation):
    """The definer of a forward-referenced value, replaced once it is defined."""

    __slots__ = ()


class Parser:
    """Parses one buffer.  Use `parse()` for the common case."""

    def __init__(self, text: str, filename: str = "<stdin>", *, allow_unregistered: bool = False,
                 line_offset: int = 0) -> None:
        self.text = text
        self.pos = 0
        self.source = SourceFile(filename, text, line_offset)
        self.allow_unregistered = allow_unregistered
        self.type_aliases: dict[str, T.Type] = {}
        self.attr_aliases: dict[str, A.Attribute] = {}
        self.loc_aliases: dict[str, Location] = {}
        self.pending_loc_aliases: list[tuple[Operation | BlockArgument, str, int]] = []
        self.scopes: list[_Scope] = []
        # Every visible SSA name -> (index of its scope, its values, the entry it
        # shadows).  One table instead of a dictionary per scope makes a lookup
        # O(1) however deep the regions nest (a scope walk made 10k nested
        # loops quadratic); `_floor` is the index of the innermost isolated scope.
        self._visible: dict[str, tuple[int, tuple[Value, ...], Any]] = {}
        self._floors: list[int] = []
        self._floor = 0
        # How deeply regions, attributes, types, locations and affine
        # expressions nest at the current position (see `enter`).
        self.depth = 0
        self.forward_refs: list[dict[str, tuple[list[Value], int]]] = []
        self.default_dialects: list[str | None] = []
        self.metadata_text: str | None = None
        # Set by parse_top_level: the module was made up around the parsed ops.
        self.implicit_module = False
        self._type_cache: dict[str, T.Type] = {}
        self._fn_cache: dict[str, T.FunctionType] = {}
        self._dict_cache: dict[str, dict[str, A.Attribute]] = {}
        # The op being parsed by a custom form: its name and bound result count.
        self.op_name = ""
        self.op_result_count = 0
        self.op_start = 0
        # Ops a custom form creates to go right before the op it parses
        # (2019's `dim %m, 0` needs an index constant today).
        self.materialized: list[Operation] = []

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
        self.pos = _WS.match(self.text, self.pos).end()

    def peek(self, n: int = 1) -> str:
        self.skip_ws()
        return self.text[self.pos:self.pos + n]

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.text)

    def parse_optional_punct(self, p: str) -> bool:
        self.pos = _WS.match(self.text, self.pos).end()
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
        m = _BARE_ID.match(self.text, self.pos)
        if m is not None and m.group() == kw:
            self.pos = m.end()
            return True
        return False

    def parse_keyword(self, kw: str, what: str = "") -> None:
        if not self.parse_optional_keyword(kw):
            raise self.error(f"expected '{kw}'" + (f" {what}" if what else ""))

    def parse_optional_bare_id(self) -> str | None:
        self.skip_ws()
        m = _BARE_ID.match(self.text, self.pos)
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
        m = _STRING.match(self.text, self.pos)
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
                m = _STRING.match(text, i)
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

    # ================================================================ SSA values

    def parse_optional_operand_ref(self) -> tuple[str, int, int] | None:
        """`%name` or `%name#3` as (name, result index, offset)."""
        self.pos = _WS.match(self.text, self.pos).end()
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

    def lookup_value(self, name: str) -> tuple[Value, ...] | None:
        entry = self._visible.get(name)
        if entry is not None and entry[0] >= self._floor:
            return entry[1]
        return None

    def resolve_operand(self, ref: tuple[str, int, int], type: T.Type) -> Value:
        name, idx, pos = ref
        vals = self.lookup_value(name)
        if vals is None:
            return self._forward_ref(name, idx, pos, type)
        if idx < 0:
            if len(vals) != 1:
                if len(vals) == 0:
                    raise self.error(f"use of undeclared SSA value name", pos)
                return self._check_type(vals[0], type, name, pos)
            return self._check_type(vals[0], type, name, pos)
        if idx >= len(vals):
            raise self.error(f"reference to invalid result number", pos)
        return self._check_type(vals[idx], type, name, pos)

    def _check_type(self, value: Value, type: T.Type, name: str, pos: int) -> Value:
        if value.type is not type:
            raise self.error(f"use of value '%{name}' expects different type than prior uses: "
                             f"'{type}' vs '{value.type}'", pos)
        return value

    def _forward_ref(self, name: str, idx: int, pos: int, type: T.Type) -> Value:
        refs = self.forward_refs[-1]
        entry = refs.get(name)
        if entry is None:
            entry = refs[name] = ([], pos)
        slots = entry[0]
        i = max(idx, 0)
        while len(slots) <= i:
            slots.append(None)  # type: ignore[arg-type]
        if slots[i] is None:
            slots[i] = _Placeholder("builtin.unrealized_forward_ref", (), [type]).results[0]
        return self._check_type(slots[i], type, name, pos)

    def resolve_operands(self, refs: Sequence[tuple[str, int, int]], types: Sequence[T.Type],
                         pos: int | None = None) -> list[Value]:
        if len(refs) != len(types):
            raise self.error(f"{len(refs)} operands present, but expected {len(types)}",
                             pos if pos is not None else (refs[0][2] if refs else None))
        resolve = self.resolve_operand
        return [resolve(r, t) for r, t in zip(refs, types)]

    def define_values(self, name: str, values: Sequence[Value], pos: int) -> None:
        index = len(self.scopes) - 1
        shadowed = self._visible.get(name)
        if shadowed is not None and shadowed[0] == index:
            raise self.error(f"redefinition of SSA value '%{name}'", pos)
        self._visible[name] = (index, tuple(values), shadowed)
        self.scopes[index].names.append(name)
        refs = self.forward_refs[-1]
        if refs and name in refs:
            slots, _ = refs.pop(name)
            for i, placeholder in enumerate(slots):
                if placeholder is None:
                    continue
                if i >= len(values):
                    raise self.error(f"reference to invalid result number", pos)
                if values[i].type is not placeholder.type:
                    raise self.error(
                        f"definition of SSA value '%{name}#{i}' has type '{values[i].type}' but was "
                        f"previously used with type '{placeholder.type}'", pos)
                placeholder.replace_all_uses_with(values[i])

    # ================================================================ types

    def parse_type(self) -> T.Type:
        self.pos = _WS.match(self.text, self.pos).end()
        text = self.text
        pos = self.pos
        m = _SIMPLE_TYPE.match(text, pos)
        if m is not None:
            t = _SIMPLE_TYPES.get(m.group()) or self._checked_simple_type(m.group(), pos)
            self.pos = m.end()
            return t
        m = _FLAT_TYPE.match(text, pos)
        if m is not None:
            key = m.group()
            t = self._type_cache.get(key)
            if t is None:
                t = self._parse_type_structured()
                if self.pos != m.end():  # the flat match was not the whole type
                    return t
                self._type_cache[key] = t
            self.pos = m.end()
            return t
        return self._parse_type_structured()

    def _checked_simple_type(self, text: str, pos: int) -> T.Type:
        t = _simple_type(text)
        if t is None:
            raise self.error(f"integer bitwidth is limited to {MAX_INT_WIDTH} bits", pos)
        return t

    def parse_optional_type(self) -> T.Type | None:
        """A type if one starts here (`!`, `(`, or a type keyword), else None.
        Once a type has started, its errors are reported, not swallowed."""
        c = self.peek()
        if c and (c in "!(" or c.isalpha()):
            m = _BARE_ID.match(self.text, self.pos)
            if m is not None and m.group() not in _TYPE_KEYWORDS and not _SIMPLE_TYPE.match(self.text, self.pos):
                return None
            return self.parse_type()
        return None

    def _parse_type_structured(self) -> T.Type:
        self.skip_ws()
        start = self.pos
        self.enter(start)
        try:
            return self._parse_type_at(start)
        finally:
            self.depth -= 1

    def _parse_type_at(self, start: int) -> T.Type:
        c = self.text[start:start + 1]
        if c == "!":
            return self._parse_dialect_type()
        if c == "(":
            return self.parse_function_type()
        kw = self.parse_optional_bare_id()
        if kw is None:
            raise self.error("expected non-function type", start)
        if _SIMPLE_TYPE.fullmatch(kw):
            return self._checked_simple_type(kw, start)
        if kw == "tensor":
            return self._parse_shaped("tensor", start)
        if kw == "memref":
            return self._parse_shaped("memref", start)
        if kw == "vector":
            return self._parse_shaped("vector", start)
        if kw == "complex":
            self.parse_punct("<")
            elt_pos = _WS.match(self.text, self.pos).end()
            elt = self.parse_type()
            if not isinstance(elt, (T.IntegerType, T.FloatType)):
                raise self.error("invalid element type for complex", elt_pos)
            self.parse_punct(">")
            return T.ComplexType(elt)
        if kw == "tuple":
            self.parse_punct("<")
            types = [] if self.parse_optional_punct(">") else self._type_list_until(">")
            return T.TupleType(tuple(types))
        raise self.error("expected non-function type", start)

    def _type_list_until(self, close: str) -> list[T.Type]:
        types = [self.parse_type()]
        while self.parse_optional_punct(","):
            types.append(self.parse_type())
        self.parse_punct(close)
        return types

    def _parse_shaped(self, kind: str, start: int) -> T.Type:
        self.parse_punct("<")
        if self.parse_optional_punct("*"):
            self.parse_punct("x")
            elt_pos = _WS.match(self.text, self.pos).end()
            elt = self.parse_type()
            _check_element_type(self, kind, elt, start, elt_pos)
            if kind == "tensor":
                self.parse_punct(">")
                return T.UnrankedTensorType(elt)
            space = self.parse_attribute() if self.parse_optional_punct(",") else None
            self.parse_punct(">")
            return T.UnrankedMemRefType(elt, space)
        self.skip_ws()
        m = _DIM_LIST.match(self.text, self.pos)
        dims_text = m.group(1)
        self.pos = m.end()
        if self.text[self.pos:self.pos + 1] == "?" or \
                (self.text[self.pos:self.pos + 1].isdigit() and not _SIMPLE_TYPE.match(self.text, self.pos)):
            raise self.error("expected 'x' in dimension list")
        shape: list[int] = []
        scalable: list[bool] = []
        dim_pos = m.start(1)
        for d in dims_text.split("x")[:-1]:
            if d == "?":
                shape.append(T.DYNAMIC)
                scalable.append(False)
            else:
                size = int(d[1:-1] if d.startswith("[") else d)
                if size > _DIM_MAX:
                    raise self.error("invalid dimension", dim_pos)
                shape.append(size)
                scalable.append(d.startswith("["))
            dim_pos += len(d) + 1
        elt_pos = self.pos
        elt = self.parse_type()
        _check_element_type(self, kind, elt, start, elt_pos)
        if kind == "vector" and any(d <= 0 for d in shape):
            raise self.error(f"vector types must have positive constant sizes but got "
                             f"{', '.join(map(str, shape))}", start)
        if kind == "tensor":
            enc = self.parse_attribute() if self.parse_optional_punct(",") else None
            self.parse_punct(">")
            return T.RankedTensorType(tuple(shape), elt, enc)
        if kind == "vector":
            self.parse_punct(">")
            return T.VectorType(tuple(shape), elt, tuple(scalable) if any(scalable) else ())
        layout = space = None
        while self.parse_optional_punct(","):
            attr = self._parse_legacy_strided_layout() if self.parse_optional_keyword("offset") \
                else self.parse_attribute()
            if isinstance(attr, (A.AffineMapAttr, A.VerbatimAttr)) and layout is None and space is None:
                layout = attr
                if isinstance(attr, A.AffineMapAttr) and attr.value.is_identity():
                    layout = None
            else:
                space = attr
        self.parse_punct(">")
        return T.MemRefType(tuple(shape), elt, layout, space)

    def _parse_legacy_strided_layout(self) -> A.Attribute:
        """The 2020 layout spelling `offset: ?, strides: [?, 1]` (after the
        `offset` keyword), read as today's `strided<[?, 1], offset: ?>`."""

        def stride_or_offset() -> str:
            if self.parse_optional_punct("?"):
                return "?"
            return str(self.parse_integer("integer or '?'"))

        self.parse_punct(":")
        offset = stride_or_offset()
        self.parse_punct(",")
        self.parse_keyword("strides")
        self.parse_punct(":")
        self.parse_punct("[")
        strides: list[str] = []
        if not self.parse_optional_punct("]"):
            strides.append(stride_or_offset())
            while self.parse_optional_punct(","):
                strides.append(stride_or_offset())
            self.parse_punct("]")
        tail = "" if offset == "0" else f", offset: {offset}"
        return A.VerbatimAttr(f"strided<[{', '.join(strides)}]{tail}>")

    def _parse_dialect_type(self) -> T.Type:
        start = self.pos
        self.pos += 1
        m = re.compile(r"[A-Za-z_][\w$]*").match(self.text, self.pos)
        if m is None:
            raise self.error("expected dialect namespace", start)
        dialect = m.group()
        self.pos = m.end()
        if dialect in self.type_aliases and self.text[self.pos:self.pos + 1] not in ".<":
            return self.type_aliases[dialect]
        if self.text[self.pos:self.pos + 1] == ".":
            self.pos += 1
            name_m = _BARE_ID.match(self.text, self.pos)
            if name_m is None:
                raise self.error("expected dialect type mnemonic", start)
            self.pos = name_m.end()
            body = name_m.group()
            if self.text[self.pos:self.pos + 1] == "<":
                body += self.balanced_text()
            full_alias = f"{dialect}.{name_m.group()}"
            if full_alias in self.type_aliases and body == name_m.group():
                return self.type_aliases[full_alias]
            return self._dialect_type(dialect, body, start)
        if self.text[self.pos:self.pos + 1] == "<":
            inner = self.balanced_text()[1:-1].strip()
            if inner.startswith('"'):
                body = unescape(inner[1:-1])
                body = body if isinstance(body, str) else body.decode("utf-8", "replace")
            else:
                body = inner
            return self._dialect_type(dialect, body, start)
        raise self.error(f"undefined symbol alias id '{dialect}'", start)

    def _dialect_type(self, dialect: str, body: str, pos: int) -> T.Type:
        """A dialect type, checked by its registered dialect's `verify_type` if any."""
        t = T.dialect_type(dialect, body)
        d = REGISTRY.dialects.get(t.dialect)
        if d is not None and d.verify_type is not None:
            messages = d.verify_type(t.body)
            if messages:
                if isinstance(messages, str):
                    messages = [messages]
                raise DiagnosticError([Diagnostic("error", m, self.loc_at(pos)) for m in messages])
        return t

    def parse_function_type(self) -> T.FunctionType:
        self.skip_ws()
        m = _FLAT_FN_TYPE.match(self.text, self.pos)
        if m is not None:
            key = m.group()
            ft = self._fn_cache.get(key)
            if ft is not None:
                self.pos = m.end()
                return ft
            ft = self._parse_function_type_structured()
            # The structured parse may have peeked past trailing whitespace.
            if self.pos == m.end() or _WS.match(self.text, m.end()).end() == self.pos:
                self._fn_cache[key] = ft
            return ft
        return self._parse_function_type_structured()

    def _parse_function_type_structured(self) -> T.FunctionType:
        self.parse_punct("(")
        inputs = [] if self.parse_optional_punct(")") else self._type_list_until(")")
        self.parse_punct("->")
        results = self.parse_function_result_types()
        return T.FunctionType(tuple(inputs), tuple(results))

    def parse_function_result_types(self) -> list[T.Type]:
        """`type` or `(type, ...)` (a parenthesized list may be empty)."""
        self.skip_ws()
        if self.text.startswith("(", self.pos):
            save = self.pos
            self.pos += 1
            if self.parse_optional_punct(")"):
                # `() -> ...` would be a function type result.
                if self.peek(2) == "->":
                    self.pos = save
                    return [self.parse_type()]
                return []
            types = self._type_list_until(")")
            if self.peek(2) == "->":  # a function type as the only result
                self.pos = save
                return [self.parse_type()]
            return types
        return [self.parse_type()]

    def parse_colon_type_list(self) -> list[T.Type]:
        self.parse_punct(":")
        return self.parse_type_list()

    def parse_type_list(self) -> list[T.Type]:
        types = [self.parse_type()]
        while self.parse_optional_punct(","):
            types.append(self.parse_type())
        return types

    def parse_paren_type_list(self) -> list[T.Type]:
        self.parse_punct("(")
        if self.parse_optional_punct(")"):
            return []
        return self._type_list_until(")")

    # ================================================================ attributes

    def parse_attribute(self, type: T.Type | None = None) -> A.Attribute:
        from egraft.ir.syntax.attr_parser import parse_attribute

        return parse_attribute(self, type)

    def parse_optional_attr_dict(self) -> dict[str, A.Attribute]:
        self.pos = _WS.match(self.text, self.pos).end()
        if not self.text.startswith("{", self.pos):
            return {}
        # Only a short dictionary is a cache key: the match is bounded to that length.
        m = _FLAT_DICT.match(self.text, self.pos, self.pos + _FLAT_CACHE_LIMIT)
        if m is not None:
            key = m.group()
            cached = self._dict_cache.get(key)
            if cached is None:
                cached = self._parse_attr_dict_body()
                self._dict_cache[key] = cached
            else:
                self.pos = m.end()
            return dict(cached)
        return self._parse_attr_dict_body()

    def parse_attr_dict(self) -> dict[str, A.Attribute]:
        if self.peek() != "{":
            raise self.error("expected '{' in attribute dictionary")
        return self.parse_optional_attr_dict()

    def _parse_attr_dict_body(self) -> dict[str, A.Attribute]:
        self.parse_punct("{")
        result: dict[str, A.Attribute] = {}
        if self.parse_optional_punct("}"):
            return result
        self.enter(self.pos - 1)
        try:
            return self._parse_attr_dict_entries(result)
        finally:
            self.depth -= 1

    def _parse_attr_dict_entries(self, result: dict[str, A.Attribute]) -> dict[str, A.Attribute]:
        while True:
            self.skip_ws()
            key_pos = self.pos
            key = self.parse_optional_bare_id()
            if key is None:
                key = self.parse_optional_string()
                if key is None:
                    raise self.error("expected attribute name")
                if isinstance(key, bytes):
                    key = key.decode("utf-8", "replace")
                if not key:
                    raise self.error("expected valid attribute name", key_pos)
            if key in result:
                raise self.error(f"duplicate key '{key}' in dictionary attribute", key_pos)
            # Before mid-2019, MLIR wrote `{name: value}`; today it is `{name = value}`.
            has_value = self.parse_optional_punct("=") or self.parse_optional_punct(":")
            result[key] = self.parse_attribute() if has_value else A.UNIT
            if self.parse_optional_punct("}"):
                return result
            if not self.parse_optional_punct(","):  # MLIR names the closing brace here
                raise self.error("expected '}' in attribute dictionary")

    # ================================================================ locations

    def parse_optional_trailing_location(self) -> Location | str | None:
        """`loc(...)` after an op; a `#alias` reference is returned as its name
        (resolved at the end of the file, since aliases may come later)."""
        self.pos = _WS.match(self.text, self.pos).end()
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

    # ================================================================ regions and blocks

    def push_scope(self, isolated: bool) -> None:
        self.scopes.append(_Scope(isolated))
        if isolated:
            self._floors.append(self._floor)
            self._floor = len(self.scopes) - 1
        if isolated or not self.forward_refs:
            self.forward_refs.append({})

    def pop_scope(self) -> None:
        scope = self.scopes.pop()
        visible = self._visible
        for name in scope.names:
            shadowed = visible[name][2]
            if shadowed is None:
                del visible[name]
            else:
                visible[name] = shadowed
        if scope.isolated:
            self._floor = self._floors.pop()
        for name, (block, pos) in scope.forward_blocks.items():
            raise self.error(f"reference to an undefined block", pos)
        if scope.isolated or not self.scopes:
            refs = self.forward_refs.pop()
            for name, (_, pos) in refs.items():
                raise self.error(f"use of undeclared SSA value name", pos)

    def parse_region(self, entry_args: Sequence[tuple[tuple[str, int, int], T.Type, Location | None]] | None = None,
                     *, isolated: bool = False, default_dialect: str | None = None,
                     enable_name_shadowing: bool = False) -> Region:
        """`{ ... }`.  `entry_args` are (ref, type, loc) bound in the entry block
        (custom forms such as func.func declare them in the op's signature);
        with `enable_name_shadowing` they may reuse names visible outside, which
        they then hide inside the region."""
        self.parse_punct("{", "to begin a region")
        self.enter(self.pos - 1)
        region = Region()
        self.push_scope(isolated)
        self.default_dialects.append(default_dialect)
        try:
            if entry_args is not None:
                block = region.add_block()
                for ref, type, loc in entry_args:
                    if not enable_name_shadowing:
                        self._check_entry_arg_unused(ref)
                    arg = block.add_argument(type, loc if isinstance(loc, Location) else SourcePos(self.source, ref[2]))
                    if isinstance(loc, str):
                        self.pending_loc_aliases.append((arg, loc, ref[2]))
                    self.define_values(ref[0], [arg], ref[2])
                if self.peek() == "^":
                    raise self.error("invalid block name in region with named arguments")
                self._parse_block_body(block)
            if self.peek() == "^":
                while not self.parse_optional_punct("}"):
                    self._parse_labeled_block(region)
            elif entry_args is None:
                if not self.parse_optional_punct("}"):
                    block = region.add_block()
                    self._parse_block_body(block)
                    while not self.parse_optional_punct("}"):
                        self._parse_labeled_block(region)
            else:
                self.parse_punct("}")
        finally:
            self.default_dialects.pop()
            self.depth -= 1
        self.pop_scope()
        return region

    def _check_entry_arg_unused(self, ref: tuple[str, int, int]) -> None:
        """A region's named entry argument may not reuse a name already
        defined or forward-referenced where the region is."""
        name = ref[0]
        fwd = self.forward_refs[-1].get(name) if self.forward_refs else None
        prior = None
        if fwd is not None:
            prior = SourcePos(self.source, fwd[1])
        elif len(self.scopes) > 1 and not self.scopes[-1].isolated:
            # Visible from the enclosing scope: skip what the new region defined.
            entry = self._visible.get(name)
            top = len(self.scopes) - 1
            while entry is not None and entry[0] == top:
                entry = entry[2]
            vals = entry[1] if entry is not None and entry[0] >= self._floor else None
            if vals:
                prior = getattr(vals[0], "loc", None) or getattr(vals[0].owner_op, "loc", None)
        if prior is not None:
            err = Diagnostic("error", f"region entry argument '%{name}' is already in use", self.loc_at(ref[2]))
            err.attach_note("previously referenced here", prior)
            raise DiagnosticError(err)

    def _parse_block_name(self) -> tuple[str, int]:
        """`^name` as (name, offset)."""
        self.skip_ws()
        pos = self.pos
        m = _BLOCK_ID.match(self.text, self.pos)
        if m is None:
            raise self.error("expected block name")
        self.pos = m.end()
        return m.group(1), pos

    def _parse_labeled_block(self, region: Region) -> None:
        name, pos = self._parse_block_name()
        scope = self.scopes[-1]
        if name in scope.blocks:
            raise self.error(f"redefinition of block '^{name}'", pos)
        fwd = scope.forward_blocks.pop(name, None)
        block = fwd[0] if fwd is not None else Block()
        scope.blocks[name] = block
        region.add_block(block)
        if self.parse_optional_punct("("):
            if not self.parse_optional_punct(")"):
                while True:
                    ref = self.parse_operand_ref()
                    self.parse_punct(":")
                    type = self.parse_type()
                    arg = block.add_argument(type, SourcePos(self.source, ref[2]))
                    self.set_location(arg, self.parse_optional_trailing_location(), ref[2])
                    self.define_values(ref[0], [arg], ref[2])
                    if self.parse_optional_punct(")"):
                        break
                    self.parse_punct(",")
        self.parse_punct(":", "after block name")
        self._parse_block_body(block)

    def _parse_block_body(self, block: Block) -> None:
        ops = []
        text = self.text
        parse_op = self.parse_operation
        while True:
            self.pos = _WS.match(text, self.pos).end()
            c = text[self.pos:self.pos + 1]
            if c == "}" or c == "^" or c == "":
                break
            op = parse_op()
            if self.materialized:
                ops.extend(self.materialized)
                self.materialized.clear()
            ops.append(op)
        block.extend(ops)

    def parse_successor(self) -> Block:
        name, pos = self._parse_block_name()
        scope = self.scopes[-1]
        block = scope.blocks.get(name)
        if block is None:
            fwd = scope.forward_blocks.get(name)
            if fwd is None:
                fwd = scope.forward_blocks[name] = (Block(), pos)
            block = fwd[0]
        return block

    def parse_successor_with_operands(self) -> tuple[Block, list[Value]]:
        """`^bb1(%a, %b : i32, i32)` or `^bb1` (the 2019 and current forms)."""
        block = self.parse_successor()
        values: list[Value] = []
        if self.parse_optional_punct("("):
            refs = self.parse_operand_ref_list()
            self.parse_punct(":")
            types = self.parse_type_list()
            self.parse_punct(")")
            values = self.resolve_operands(refs, types)
        return block, values

    # ================================================================ operations

    def parse_operation(self) -> Operation:
        text = self.text
        start = self.pos
        groups: list[tuple[str, int, int]] = []
        single = _SINGLE_RESULT.match(text, start) if text.startswith("%", start) else None
        if single is not None:
            groups.append((single.group(1), 1, start))
            self.pos = single.end()
        elif text.startswith("%", start):
            while True:
                self.pos = _WS.match(text, self.pos).end()
                m = _RESULT_ID.match(text, self.pos)
                if m is None:
                    raise self.error("expected valid ssa identifier")
                count = int(m.group(2)) if m.group(2) else 1
                if m.group(2) is not None and count < 1:
                    raise self.error("expected named operation to have at least 1 result", m.start())
                groups.append((m.group(1), count, m.start()))
                self.pos = m.end()
                if not self.parse_optional_punct(","):
                    break
            self.parse_punct("=", "after SSA name")
            self.pos = _WS.match(text, self.pos).end()
        num_results = sum(g[1] for g in groups)
        if text.startswith('"', self.pos):
            op = self.parse_generic_operation(start)
        else:
            op = self._parse_custom_operation(start, num_results)
        if groups:
            results = op.results
            if num_results != len(results):
                raise self.error(f"operation defines {len(results)} results but was provided "
                                 f"{num_results} to bind", start)
            i = 0
            for name, count, pos in groups:
                self.define_values(name, results[i:i + count], pos)
                i += count
        return op

    def parse_generic_operation(self, start: int | None = None) -> Operation:
        text = self.text
        name_pos = self.pos
        m = _GENERIC_FAST.match(text, name_pos)
        if m is not None:
            op = self._generic_fast(m)
            if op is not None:
                return op
            self.pos = name_pos
        m = _STRING.match(text, self.pos)
        if m is None:
            raise self.error("expected operation name in quotes")
        name = m.group(1)
        self.pos = m.end()
        opdef = REGISTRY.ops.get(name)
        if opdef is None:
            legacy = REGISTRY.legacy_names.get(name)
            if legacy is not None:
                name, opdef = legacy, REGISTRY.ops.get(legacy)
            else:
                self._check_unregistered(name, name_pos)
        # Operands.
        refs = self.parse_operand_ref_list("()")
        successors: list[Block] = []
        if self.parse_optional_punct("["):
            successors.append(self.parse_successor())
            while self.parse_optional_punct(","):
                successors.append(self.parse_successor())
            self.parse_punct("]")
        properties = None
        if self.parse_optional_punct("<"):
            self.skip_ws()
            if not text.startswith("{", self.pos):
                raise self.error("expected '{' in properties")
            properties = self.parse_optional_attr_dict()
            self.parse_punct(">")
        regions: list[Region] = []
        self.skip_ws()
        if text.startswith("(", self.pos) and text.startswith("{", _WS.match(text, self.pos + 1).end()):
            self.pos += 1
            isolated = opdef is not None and opdef.has_trait(Traits.IsolatedFromAbove)
            dd = opdef.default_dialect if opdef is not None else None
            while True:
                regions.append(self.parse_region(isolated=isolated, default_dialect=dd))
                if not self.parse_optional_punct(","):
                    break
            self.parse_punct(")")
        attributes = self.parse_optional_attr_dict()
        self.pos = _WS.match(text, self.pos).end()
        if not text.startswith(":", self.pos):
            raise self.error("expected ':' followed by operation type")
        self.pos += 1
        type_pos = _WS.match(text, self.pos).end()
        fn = self.parse_type()
        if not isinstance(fn, T.FunctionType):
            raise self.error("expected function type", type_pos)
        operands = self.resolve_operands(refs, fn.inputs, type_pos)
        if opdef is not None:
            if attributes and opdef.attr_names:
                attributes, properties = opdef.split_attributes(attributes, properties)
            op = opdef.cls(name, operands, fn.results, attributes, properties, regions, successors,
                           SourcePos(self.source, name_pos))
        else:
            op = Operation(name, operands, fn.results, attributes, properties, regions, successors,
                           SourcePos(self.source, name_pos))
        self.pos = _WS.match(text, self.pos).end()
        if text.startswith("loc(", self.pos):
            self.set_location(op, self.parse_optional_trailing_location(), self.pos)
        return op

    def _generic_fast(self, m: "re.Match[str]") -> Operation | None:
        """Build the op of a `_GENERIC_FAST` match, or None to take the general
        path (which also produces the errors: forward references, type
        mismatches and unknown names all fall back)."""
        name, operand_text, fn_text = m.group(1, 2, 5)
        opdef = REGISTRY.ops.get(name)
        if opdef is None and (not self.allow_unregistered or name in REGISTRY.legacy_names
                              or REGISTRY.dialect_of(name) is not None):
            return None
        fn = self._fn_cache.get(fn_text)
        if fn is None:
            return None
        operands: list[Value] = []
        if operand_text:
            lookup = self.lookup_value
            inputs = fn.inputs
            refs = operand_text.split(",")
            if len(refs) != len(inputs):
                return None
            for ref, type in zip(refs, inputs):
                ref = ref.strip()
                hash_at = ref.find("#")
                if hash_at < 0:
                    vals = lookup(ref[1:])
                    if vals is None or len(vals) != 1:
                        return None
                    v = vals[0]
                else:
                    vals = lookup(ref[1:hash_at])
                    idx = int(ref[hash_at + 1:])
                    if vals is None or idx >= len(vals):
                        return None
                    v = vals[idx]
                if v.type is not type:
                    return None
                operands.append(v)
        elif fn.inputs:
            return None
        properties = attributes = None
        if m.start(3) >= 0:
            properties = self._cached_dict(m, 3)
        if m.start(4) >= 0:
            attributes = self._cached_dict(m, 4)
        loc = SourcePos(self.source, m.start())  # MLIR locates an op at its name
        if opdef is not None:
            if attributes and opdef.attr_names:
                attributes, properties = opdef.split_attributes(attributes, properties)
            op = opdef.cls(name, operands, fn.results, attributes, properties, (), (), loc)
        else:
            op = Operation(name, operands, fn.results, attributes, properties, (), (), loc)
        self.pos = m.end()
        text = self.text
        self.pos = _WS.match(text, self.pos).end()
        if text.startswith("loc(", self.pos):
            self.set_location(op, self.parse_optional_trailing_location(), self.pos)
        return op

    def _cached_dict(self, m: "re.Match[str]", group: int) -> dict[str, A.Attribute]:
        """The dictionary of a `_GENERIC_FAST` group, from the cache if short
        (a long one, a weight's hex literal, is parsed in place, never copied)."""
        start, end = m.span(group)
        key = m.group(group) if end - start <= _FLAT_CACHE_LIMIT else None
        cached = self._dict_cache.get(key) if key is not None else None
        if cached is None:
            save = self.pos
            self.pos = start
            cached = self._parse_attr_dict_body()
            if key is not None:
                self._dict_cache[key] = cached
            self.pos = save
        return dict(cached)

    def _check_unregistered(self, name: str, pos: int) -> None:
        dialect = REGISTRY.dialect_of(name)
        if dialect is not None:
            if not dialect.open and "." in name:
                raise self.error(f"unregistered operation '{name}' found in dialect ('{dialect.name}') "
                                 f"that does not allow unknown operations", pos)
            return
        if not self.allow_unregistered:
            raise self.error(f"operation being parsed with an unregistered dialect. If this is "
                             f"intended, please use -allow-unregistered-dialect with the MLIR tool used", pos)

    def resolve_op_name(self, name: str, pos: int) -> tuple[str, Any]:
        """The full name and custom form of a custom-form op name, trying the
        enclosing op's default dialect as MLIR does."""
        opdef = REGISTRY.ops.get(name)
        if opdef is not None and opdef.assembly is not None:
            return name, opdef.assembly
        default = self.default_dialects[-1] if self.default_dialects else None
        if default:
            full = f"{default}.{name}"
            opdef2 = REGISTRY.ops.get(full)
            if opdef2 is not None and opdef2.assembly is not None:
                return full, opdef2.assembly
            if "." not in name or REGISTRY.dialect_of(name) is None:
                d = REGISTRY.dialects.get(default)
                if d is not None and d.fallback_form is not None and opdef is None:
                    return full, d.fallback_form
        for candidate in (REGISTRY.legacy_names.get(name), f"builtin.{name}"):
            opdef3 = REGISTRY.ops.get(candidate) if candidate else None
            if opdef3 is not None and opdef3.assembly is not None:
                return candidate, opdef3.assembly  # type: ignore[return-value]
        dialect = REGISTRY.dialect_of(name)
        if opdef is None and dialect is not None and dialect.fallback_form is not None:
            return name, dialect.fallback_form
        tried = f" (tried '{default}.{name}' as well)" if default else ""
        raise self.error(f"custom op '{name}' is unknown{tried}", pos)

    def _parse_custom_operation(self, start: int, num_results: int) -> Operation:
        self.skip_ws()
        name_pos = self.pos
        m = _OP_NAME.match(self.text, self.pos)
        if m is None:
            raise self.error("expected operation name")
        self.pos = m.end()
        name, form = self.resolve_op_name(m.group(), name_pos)
        saved = (self.op_name, self.op_result_count, self.op_start)
        self.op_name, self.op_result_count, self.op_start = name, num_results, start
        try:
            op = form.parse(self, None)
        finally:
            self.op_name, self.op_result_count, self.op_start = saved
        if op.loc is UNKNOWN:  # a form may locate the op itself (island `wraps`)
            op.loc = SourcePos(self.source, name_pos)  # MLIR locates an op at its name
        self.set_location(op, self.parse_optional_trailing_location(), self.pos)
        return op

    def create_op(self, name: str | None = None, operands: Sequence[Value] = (),
                  result_types: Sequence[T.Type] = (), attributes: dict[str, A.Attribute] | None = None,
                  properties: dict[str, A.Attribute] | None = None, regions: Sequence[Region] = (),
                  successors: Sequence[Block] = ()) -> Operation:
        """Make the op a custom form has parsed (name defaults to the current one)."""
        return Operation.create(name or self.op_name, operands, result_types, attributes, properties,
                                regions, successors)

    # ================================================================ top level

    def parse_top_level(self) -> Operation:
        """The whole buffer: aliases, ops and the trailing metadata section.
        A single top-level `builtin.module` is returned as is; other ops are
        wrapped in an implicit module, as mlir-opt does.  A leading UTF-8
        byte order mark is skipped."""
        if self.text.startswith("\ufeff"):
            self.pos = 1
        with gc_paused():
            try:
                return self._parse_top_level()
            except RecursionError:
                # The stack of this thread ran out before `MAX_NESTING` (a
                # caller outside `run_with_deep_stack`): still a located error.
                raise self.error("nesting too deep for the stack of this thread", self.pos) from None

    def _parse_top_level(self) -> Operation:
        from egraft.ir.dialects.builtin import make_module

        self.push_scope(isolated=True)
        self.default_dialects.append(None)
        ops: list[Operation] = []
        text = self.text
        while True:
            self.skip_ws()
            if self.pos >= len(text):
                break
            c = text[self.pos]
            if c == "#" or (c == "!" and re.match(r"![\w$.]+\s*=", text[self.pos:self.pos + 200])):
                self._parse_alias_definition()
            elif text.startswith("{-#", self.pos):
                end = text.find("#-}", self.pos)
                if end < 0:
                    raise self.error("unterminated file metadata dictionary")
                self.metadata_text = text[self.pos:end + 3]
                self.pos = end + 3
            else:
                op = self.parse_operation()
                ops.extend(self.materialized)
                self.materialized.clear()
                ops.append(op)
        self.default_dialects.pop()
        self.pop_scope()
        self._resolve_pending_locations()
        if len(ops) == 1 and ops[0].name == "builtin.module" and not ops[0].attr("sym_name") or \
                (len(ops) == 1 and ops[0].name == "builtin.module"):
            return ops[0]
        self.implicit_module = True
        return make_module(ops, SourcePos(self.source, 0))

    def _parse_alias_definition(self) -> None:
        start = self.pos
        is_type = self.text[self.pos] == "!"
        self.pos += 1
        m = re.compile(r"[\w$.]+").match(self.text, self.pos)
        if m is None:
            raise self.error("expected alias name", start)
        name = m.group()
        self.pos = m.end()
        self.parse_punct("=")
        if is_type:
            if name in self.type_aliases:
                raise self.error(f"redefinition of type alias id '{name}'", start)
            self.type_aliases[name] = self.parse_type()
            return
        if name in self.attr_aliases or name in self.loc_aliases:
            raise self.error(f"redefinition of attribute alias id '{name}'", start)
        self.skip_ws()
        if self.text.startswith("loc(", self.pos):
            self.pos += 4
            self.loc_aliases[name] = self.parse_location_body()
            self.parse_punct(")")
        else:
            self.attr_aliases[name] = self.parse_attribute()

    def _resolve_pending_locations(self) -> None:
        for target, name, pos in self.pending_loc_aliases:
            loc = self.loc_aliases.get(name)
            if loc is None:
                raise self.error(f"operation location alias was never defined", pos)
            target.loc = loc
        self.pending_loc_aliases.clear()


_TYPE_KEYWORDS = {"tensor", "memref", "vector", "complex", "tuple", "index", "none", "bf16", "tf32"}


def parse(text: str, filename: str = "<stdin>", *, allow_unregistered: bool = False,
          line_offset: int = 0) -> Operation:
    """Parse MLIR text into a top-level op (a `builtin.module`)."""
    from egraft.ir import dialects  # noqa: F401  (registers every dialect)

    parser = Parser(text, filename, allow_unregistered=allow_unregistered, line_offset=line_offset)
    return parser.parse_top_level()


def parse_with_parser(text: str, filename: str = "<stdin>", **kwargs: Any) -> tuple[Operation, Parser]:
    """Like `parse`, also returning the parser (for its aliases and metadata)."""
    from egraft.ir import dialects  # noqa: F401

    parser = Parser(text, filename, **kwargs)
    return parser.parse_top_level(), parser


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building IR.

    IR objects reference each other (ops, results, use lists), so every
    generational collection walks the whole growing module: with the
    collector running, parsing a second 100k-op module while the first is
    alive was 3x slower.  Nothing built during a parse is garbage."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


ParseHook = Callable[[Parser, Any], Operation]
