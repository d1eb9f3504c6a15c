"""Parsing types: builtin types (integers, floats, index, tensors, memrefs,
vectors, complex, tuples, functions) and dialect types (`!tf_type.resource`).

A large module repeats the same few hundred type spellings, so a type whose
text has no nested brackets is cached by that text, and so is a function
type made of such types.  Attributes nest in types (tensor encodings, memref
layouts and memory spaces): `parse_attribute` is provided by the attribute
parser built on this class.
"""

from __future__ import annotations

import re

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.records.registry import REGISTRY
from egraft.ir.syntax.lexer import BARE_ID, WS, Lexer, unescape

_SIMPLE_TYPE = re.compile(r"(?:[su]?i\d+|index|none|"
                          + "|".join(sorted(T.FLOAT_WIDTHS, key=len, reverse=True)) + r")(?![\w$.])")
# A shaped/dialect type without nested angle brackets; its text is a cache key.
_FLAT_TYPE = re.compile(r"(?:tensor|memref|vector|complex|tuple|![\w.$]+)<[^<>{}\"()]*+>|![\w.$]+(?![\w.$<])")
# A parenthesized type list whose types nest angle brackets at most one level.
_FLAT_TYPE_LIST = r'\([^()<>{}"]*+(?:<[^<>{}"]*+>[^()<>{}"]*+)*+\)'
# A function type made of such lists (or a single result without nested brackets).
FLAT_FN_TEXT = _FLAT_TYPE_LIST + r'[ \t]*->[ \t]*(?:' + _FLAT_TYPE_LIST + r'|[\w.!]+(?:<[^<>{}"()]*+>)?)'
_FLAT_FN_TYPE = re.compile(FLAT_FN_TEXT)
_DIM_LIST = re.compile(r"((?:(?:\d+|\?|\[\d+\])x)*)")
# MLIR's lexer skips blanks between a size and its `x` (`vector<42 x i32>`,
# as 2019's files wrote it): the general form, tried when the compact one stops before a size.
_DIM_START = frozenset("0123456789?[")
_SPACED_DIM_LIST = re.compile(r"((?:(?:\d+|\?|\[\d+\])[ \t]*x[ \t\n]*)*)")
_TYPE_KEYWORDS = {"tensor", "memref", "vector", "complex", "tuple", "index", "none", "bf16", "tf32"}

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


# What may follow a memref's layout: a memory space MLIR supports, or (2019) a further map.
_MEMORY_SPACE_KINDS = (A.IntegerAttr, A.StringAttr, A.DictionaryAttr, A.DialectAttr, A.AffineMapAttr)


def _without_default_space(space: A.Attribute | None) -> A.Attribute | None:
    """MLIR drops memory space 0, the default one: `memref<4xf32, 0>` is `memref<4xf32>`."""
    if isinstance(space, A.IntegerAttr) and space.value == 0:
        return None
    return space


def _check_element_type(p: "Parser", kind: str, elt: T.Type, start: int, elt_pos: int) -> None:
    """MLIR's element type checks of tensor, memref and vector types."""
    if kind == "tensor" and isinstance(elt, _NOT_TENSOR_ELEMENT):
        raise p.error("invalid tensor element type", elt_pos)
    if kind == "memref" and not isinstance(elt, _MEMREF_ELEMENT):
        raise p.error("invalid memref element type", elt_pos)
    if kind == "vector" and not isinstance(elt, _VECTOR_ELEMENT):
        raise p.error("failed to verify 'elementType': VectorElementTypeInterface instance", start)


class TypeParser(Lexer):
    """Reads types; caches the flat ones by their text."""

    def __init__(self, text: str, filename: str = "<stdin>", line_offset: int = 0) -> None:
        super().__init__(text, filename, line_offset)
        self.type_aliases: dict[str, T.Type] = {}
        self._type_cache: dict[str, T.Type] = {}
        self._fn_cache: dict[str, T.FunctionType] = {}

    def parse_attribute(self, type: T.Type | None = None) -> A.Attribute:
        """An attribute (nested in a type here); `AttributeParser` implements it."""
        raise NotImplementedError

    def parse_type(self) -> T.Type:
        self.pos = WS.match(self.text, self.pos).end()
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
            m = BARE_ID.match(self.text, self.pos)
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
            elt_pos = WS.match(self.text, self.pos).end()
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
            elt_pos = WS.match(self.text, self.pos).end()
            elt = self.parse_type()
            _check_element_type(self, kind, elt, start, elt_pos)
            if kind == "tensor":
                self.parse_punct(">")
                return T.UnrankedTensorType(elt)
            space = self.parse_attribute() if self.parse_optional_punct(",") else None
            self.parse_punct(">")
            return T.UnrankedMemRefType(elt, _without_default_space(space))
        self.skip_ws()
        m = _DIM_LIST.match(self.text, self.pos)
        if self.text[m.end():m.end() + 1] in _DIM_START:
            m = _SPACED_DIM_LIST.match(self.text, self.pos)
        dims_text = m.group(1)
        self.pos = m.end()
        if " " in dims_text or "\t" in dims_text or "\n" in dims_text:
            dims_text = re.sub(r"\s+", "", dims_text)
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
        era = getattr(self, "std_era", False)
        while self.parse_optional_punct(","):
            self.skip_ws()
            attr_pos = self.pos
            attr = self._parse_legacy_strided_layout() if self.parse_optional_keyword("offset") \
                else self.parse_attribute()
            is_map = isinstance(attr, A.AffineMapAttr)
            if is_map and attr.value.num_dims != len(shape):  # checked before an identity map is dropped
                raise self.error("memref affine map dimension mismatch" if era else
                                 f"memref layout mismatch between rank and affine map: "
                                 f"{len(shape)} != {attr.value.num_dims}", attr_pos)
            if space is not None and not isinstance(space, A.AffineMapAttr):
                raise self.error("affine map after memory space in memref type" if is_map and era else
                                 "expected memory space to be last in memref type" if is_map else
                                 "multiple memory spaces specified in memref type", attr_pos)
            if isinstance(attr, (A.AffineMapAttr, A.VerbatimAttr)) and layout is None and space is None:
                layout = attr
                if isinstance(attr, A.AffineMapAttr) and attr.value.is_identity():
                    layout = None
            elif isinstance(attr, _MEMORY_SPACE_KINDS):
                space = attr
            else:  # MLIR's isSupportedMemorySpace: integers, strings, dictionaries, dialect attributes
                raise self.error("expected affine map in memref type" if era else
                                 "unsupported memory space Attribute", attr_pos)
        self.parse_punct(">")
        return T.MemRefType(tuple(shape), elt, layout, _without_default_space(space))

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
            name_m = BARE_ID.match(self.text, self.pos)
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
        """A dialect type, checked by its registered dialect's `verify_type` if any
        (or the builtin type a 2019 spelling in `REGISTRY.legacy_types` became)."""
        legacy = REGISTRY.legacy_types.get(f"{dialect}.{body}")
        if isinstance(legacy, T.Type):
            return legacy
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
            if self.pos == m.end() or WS.match(self.text, m.end()).end() == self.pos:
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
