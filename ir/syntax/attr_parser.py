"""Parsing attributes: values (the part of the grammar after `=` in a
dictionary, and attribute operands of custom forms) and attribute dictionaries.

The value grammar is written as functions of the parser (`parse_attribute(p)`);
`AttributeParser` adds them, and the dictionaries, to the type parser.  Short
dictionaries are cached by their text, as types are.
"""

from __future__ import annotations

import re
from typing import Any

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.affine import IntegerSet
from egraft.ir.core.floats import from_bits, round_to
from egraft.ir.records.registry import REGISTRY
from egraft.ir.syntax.affine_parser import parse_affine_map_or_set
from egraft.ir.syntax.lexer import STRING_BODY, WS, int_literal, unescape
from egraft.ir.syntax.type_parser import TypeParser

_NUMBER = re.compile(r"-?(?:0x[0-9A-Fa-f]+|(?:\d+\.\d*|\d+)(?:[eE][-+]?\d+)?)")
_KEYWORD = re.compile(r"[A-Za-z_][\w$.]*")
_ALIAS = re.compile(r"#([\w$]+)(\.[A-Za-z_][\w$.]*)?")
_VERBATIM_KEYWORDS = ("opaque", "sparse", "strided", "distinct", "dense_array")
_TYPED_VERBATIM = ("opaque", "sparse")
# A parenthesized dimension list as 2019's bare affine maps and sets begin with it.
_RAW_AFFINE = re.compile(r"\(\s*(?:d\d+\s*(?:,\s*d\d+\s*)*)?\)\s*(?:\[[^\]]*\]\s*)?(?:->|:)")
# `() ->` begins a function type today; it began a dimensionless map in 2019,
# whose results (constants, with no dimension or symbol to name) start with
# a digit or a minus, possibly in parentheses.
_EMPTY_ARROW = re.compile(r"\(\s*\)\s*->")
# 2019's maps could name their dimensions anything (`(i, j) -> (i, j)`); read
# so only in 2019-syntax text, and never when a name is a builtin type's.
_NAMED_AFFINE = re.compile(r"\(\s*([A-Za-z_][\w$]*(?:\s*,\s*[A-Za-z_][\w$]*)*)\s*\)\s*(?:\[[^\]]*\]\s*)?(?:->|:)")
_TYPE_WORD = re.compile(r"(?:[su]?i\d+|f\d+\w*|bf16|tf32|index|none)$")
_CONSTANT_MAP = re.compile(r"\(\s*\)\s*->\s*\((?:\s*\()*\s*[-\d]")
# A dense literal's hex string (lower-case digits are accepted, upper-case stored).
_HEX_LITERAL = re.compile(r'"0x([0-9A-Fa-f]*+)"')
# A dictionary without nested braces (strings allowed): cacheable when short.
FLAT_DICT_TEXT = r'\{[^{}"]*+(?:"' + STRING_BODY + r'"[^{}"]*+)*+\}'
FLAT_DICT = re.compile(FLAT_DICT_TEXT)
FLAT_CACHE_LIMIT = 256
"""The longest dictionary text kept as a cache key."""


def parse_attribute(p: "AttributeParser", type: T.Type | None = None) -> A.Attribute:
    p.skip_ws()
    text = p.text
    pos = p.pos
    c = text[pos:pos + 1]
    if c == '"':
        value = p.parse_optional_string()
        if p.parse_optional_punct(":"):
            return A.StringAttr(value, p.parse_type())
        return A.StringAttr(value)
    if c == "#":
        return _parse_hash_attr(p)
    if c == "[":
        p.pos += 1
        if p.parse_optional_punct("]"):
            return A.ArrayAttr(())
        p.enter(pos)
        try:
            items = [parse_attribute(p)]
            while p.parse_optional_punct(","):
                items.append(parse_attribute(p))
            p.parse_punct("]", "in attribute list")
        finally:
            p.depth -= 1
        return A.ArrayAttr(tuple(items))
    if c == "{":
        return A.DictionaryAttr(tuple(p.parse_attr_dict().items()))
    if c == "@":
        root = p.parse_symbol()
        nested = []
        while p.text.startswith("::", p.pos):
            p.pos += 2
            nested.append(p.parse_symbol())
        return A.SymbolRefAttr(root, tuple(nested))
    if c == "-" or c.isdigit():
        return _parse_number_attr(p, type)
    if c == "(" and _RAW_AFFINE.match(text, pos):
        if _EMPTY_ARROW.match(text, pos) and not _CONSTANT_MAP.match(text, pos):
            return A.TypeAttr(p.parse_type())  # `{t = () -> ()}`: a function type
        return _parse_raw_affine(p)
    if c == "(" and p.std_era:
        m = _NAMED_AFFINE.match(text, pos)
        if m is not None and not any(_TYPE_WORD.match(n.strip()) for n in m.group(1).split(",")):
            return _parse_raw_affine(p)
    m = _KEYWORD.match(text, pos)
    if m is not None:
        kw = m.group()
        if kw in ("true", "false"):
            p.pos = m.end()
            return A.TRUE if kw == "true" else A.FALSE
        if kw == "unit":
            p.pos = m.end()
            return A.UNIT
        if kw == "dense":  # MLIR's lexer also takes `dense <[1, 2]>` (TensorFlow's tests write it)
            lt = WS.match(text, m.end()).end()
            if text.startswith("<", lt):
                p.pos = lt
                return _parse_dense(p, type, pos)
        if kw == "dense_resource" and text.startswith("<", m.end()):
            p.pos = m.end() + 1
            handle = p.parse_bare_id("resource handle")
            p.parse_punct(">")
            return A.DenseResourceAttr(handle, _trailing_type(p, type))
        if kw == "array" and text.startswith("<", m.end()):
            p.pos = m.end()
            return _parse_dense_array(p)
        if kw in ("affine_map", "affine_set") and text.startswith("<", m.end()):
            p.pos = m.end() + 1
            value = parse_affine_map_or_set(p, kw == "affine_set")
            p.parse_punct(">")
            return A.IntegerSetAttr(value) if kw == "affine_set" else A.AffineMapAttr(value)
        if kw == "splat" and text.startswith("<", m.end()):  # 2019: splat<tensor<f32>, 3.0>
            p.pos = m.end() + 1
            shaped = p.parse_type()
            p.parse_punct(",")
            value = _parse_element(p, shaped.element_type)  # type: ignore[attr-defined]
            p.parse_punct(">")
            return A.DenseElementsAttr(shaped, value)
        if kw == "opaque" and text.startswith("<", m.end()):
            p.pos = m.end()
            _check_opaque_elements(p)
            p.pos = m.end()
        if kw in _VERBATIM_KEYWORDS and text.startswith(("<", "["), m.end()):
            p.pos = m.end()
            while p.text.startswith(("<", "["), p.pos):
                p.balanced_text()
            body = text[pos:p.pos]
            if kw in _TYPED_VERBATIM:
                body += f" : {_trailing_type(p, type)}"
            return A.VerbatimAttr(body)
    # Anything else is a type attribute.
    t = p.parse_optional_type()
    if t is None:
        raise p.error("expected attribute value")
    return A.TypeAttr(t)


def _check_opaque_elements(p) -> None:
    """`opaque<"dialect", "0x...">` (MLIR's opaque elements literal, 2019-2022):
    a registered dialect's namespace and a hex string, as MLIR checked them.
    The literal itself is kept as text."""
    p.parse_punct("<")
    p.skip_ws()
    start = p.pos
    name = p.parse_optional_string()
    if name is None:
        raise p.error("expected dialect namespace", start)
    if name and name not in REGISTRY.dialects:
        raise p.error(f"no registered dialect with namespace '{name}'", start)
    p.parse_punct(",")
    p.skip_ws()
    start = p.pos
    value = p.parse_optional_string()
    if not isinstance(value, str) or not value.startswith("0x"):
        raise p.error("opaque string should start with '0x'", start)
    if not all(c in "0123456789abcdefABCDEF" for c in value[2:]):
        raise p.error("opaque string only contains hex digits", start)
    p.parse_punct(">")


def fit_integer(magnitude: int, negative: bool, type: T.Type) -> int | None:
    """The value MLIR keeps for the integer literal `-magnitude` (`negative`)
    or `magnitude` of an integer or index `type`, or None if it is out of
    the type's range (MLIR's `buildAttributeAPInt`).

    A literal may use the type's bits as unsigned or as two's complement
    (`255 : i8` and `-128 : i8` are both fine, `256 : i8` is not); signed and
    index types take only their signed range.  Signless values are kept as
    MLIR prints them, two's complement (`255 : i8` is `-1 : i8`), i1 as 0 or
    1, unsigned ones as the magnitude.  (A negative literal of an unsigned
    type is the caller's error, with its own message.)"""
    width = 64 if isinstance(type, T.IndexType) else type.width  # type: ignore[attr-defined]
    if magnitude >> width:
        return None
    if width == 0:
        return None if negative else 0
    sign_bit = 1 << (width - 1)
    if negative:
        if not 1 <= magnitude <= sign_bit:  # -0 too, as MLIR: its negation has no sign bit
            return None
        value = -magnitude
    else:
        if magnitude & sign_bit and (isinstance(type, T.IndexType) or type.signedness == "s"):  # type: ignore[attr-defined]
            return None
        value = magnitude
    if isinstance(type, T.IndexType) or type.signedness == "u":  # type: ignore[attr-defined]
        return value
    if width == 1:
        return value & 1
    return value - (1 << width) if value >= sign_bit else value


def _hex_float(p: "AttributeParser", literal: str, type: T.FloatType, pos: int) -> float:
    """The float whose bits a hex literal spells, if they fit the type."""
    bits = int(literal, 16)
    if bits >> type.width:
        raise p.error("hexadecimal float constant out of range for type", pos)
    return from_bits(bits, type.name)


def _trailing_type(p: "AttributeParser", type: T.Type | None) -> T.Type:
    if p.parse_optional_punct(":"):
        return p.parse_type()
    if type is None:
        raise p.error("expected ':' and type")
    return type


def _parse_hash_attr(p: "AttributeParser") -> A.Attribute:
    start = p.pos
    m = _ALIAS.match(p.text, p.pos)
    if m is None:
        raise p.error("expected attribute alias or dialect attribute")
    p.pos = m.end()
    name, dotted = m.group(1), m.group(2)
    if dotted is None:
        if p.text.startswith("<", p.pos):
            inner = p.balanced_text()[1:-1].strip()
            if inner.startswith('"'):
                inner = unescape(inner[1:-1])
                inner = inner if isinstance(inner, str) else inner.decode("utf-8", "replace")
            return A.dialect_attr(name, inner)
        alias = p.attr_aliases.get(name)
        if alias is None:
            raise p.error(f"undefined symbol alias id '{name}'", start)
        return alias
    body = dotted[1:]
    if p.text.startswith("<", p.pos):
        body += p.balanced_text()
    full = name + dotted
    if full in p.attr_aliases and body == dotted[1:]:
        return p.attr_aliases[full]
    attr = A.dialect_attr(name, body)
    if p.parse_optional_punct(":"):  # typed dialect attributes keep their type verbatim
        return A.VerbatimAttr(f"{attr} : {p.parse_type()}")
    return attr


def _parse_number_attr(p: "AttributeParser", type: T.Type | None) -> A.Attribute:
    start = p.pos
    m = _NUMBER.match(p.text, p.pos)
    if m is None:
        raise p.error("expected attribute value")
    p.pos = m.end()
    literal = m.group()
    if p.parse_optional_punct(":"):
        type = p.parse_type()
    is_float_text = not literal.lstrip("-").startswith("0x") and any(ch in literal for ch in ".eE")
    if type is None:
        type = T.f64 if is_float_text else T.i64
    if isinstance(type, T.FloatType):
        if literal.lstrip("-").startswith("0x"):
            if literal.startswith("-"):
                raise p.error("hexadecimal float literal should not have a leading minus", start)
            return A.FloatAttr(_hex_float(p, literal, type, start), type)
        return A.FloatAttr(round_to(float(literal), type.name), type)
    if is_float_text:
        raise p.error("floating point value not valid for specified type", start)
    if not isinstance(type, (T.IntegerType, T.IndexType)):
        raise p.error("integer literal not valid for specified type", start)
    negative = literal.startswith("-")
    digits = start + 1 if negative else start  # MLIR locates these at the digits
    if negative and getattr(type, "signedness", "") == "u":
        raise p.error("negative integer literal not valid for unsigned integer type", digits)
    value = fit_integer(abs(int_literal(literal)), negative, type)
    if value is None:
        raise p.error("integer constant out of range for attribute", digits)
    return A.IntegerAttr(value, type)


def _parse_element(p: "AttributeParser", et: T.Type, in_array: bool = False) -> Any:
    """One element literal of a dense attribute (of an `array<...>` if
    `in_array`, whose range error MLIR words and locates differently), as a
    Python scalar."""
    p.skip_ws()
    text = p.text
    if text.startswith("(", p.pos):
        p.enter(p.pos)
        try:
            p.pos += 1
            inner = et.element_type if isinstance(et, T.ComplexType) else et
            re_ = _parse_element(p, inner)
            p.parse_punct(",")
            im = _parse_element(p, inner)
            p.parse_punct(")")
        finally:
            p.depth -= 1
        return (re_, im)
    if text.startswith('"', p.pos):
        return p.parse_optional_string()
    bool_pos = p.pos
    if p.parse_optional_keyword("true") or p.parse_optional_keyword("false"):
        if isinstance(et, (T.IntegerType, T.IndexType)) and et is not T.i1:
            raise p.error("expected i1 type for 'true' or 'false' values", bool_pos)
        value = text.startswith("t", bool_pos)
        return value if et is T.i1 else int(value)
    m = _NUMBER.match(text, p.pos)
    if m is None:
        raise p.error("expected element literal of primitive type")
    p.pos = m.end()
    lit = m.group()
    base = et.element_type if isinstance(et, T.ComplexType) else et
    if isinstance(base, T.FloatType):
        if lit.lstrip("-").startswith("0x"):
            return _hex_float(p, lit, base, m.start())
        return round_to(float(lit), base.name)
    if any(ch in lit for ch in ".eE") and not lit.lstrip("-").startswith("0x"):
        raise p.error("expected integer elements, but parsed floating-point", m.start())
    if not isinstance(base, (T.IntegerType, T.IndexType)):
        return int_literal(lit)
    negative = lit.startswith("-")
    digits = m.start() + 1 if negative else m.start()
    if negative and isinstance(base, T.IntegerType) and base.signedness == "u":
        raise p.error("expected unsigned integer elements, but parsed negative value", digits)
    value = fit_integer(abs(int_literal(lit)), negative, base)
    if value is None:
        if in_array:
            raise p.error("integer constant out of range", m.end())
        raise p.error("integer constant out of range for type", digits)
    return bool(value) if et is T.i1 else value


def _parse_nested(p: "AttributeParser", et: T.Type, out: list, shape: list[int], depth: int,
                  leaf: list[int] | None = None) -> None:
    """`leaf` holds the depth of the scalars seen so far: all must be at one depth."""
    if leaf is None:
        leaf = [-1]
    if p.parse_optional_punct("["):
        # Reserve this depth's slot first: nested lists finish (and record) before it.
        while len(shape) <= depth:
            shape.append(-1)
        count = 0
        if not p.parse_optional_punct("]"):
            p.enter(p.pos - 1)
            try:
                while True:
                    _parse_nested(p, et, out, shape, depth + 1, leaf)
                    count += 1
                    if p.parse_optional_punct("]"):
                        break
                    p.parse_punct(",")
            finally:
                p.depth -= 1
        if shape[depth] == -1:
            shape[depth] = count
        elif shape[depth] != count:
            raise p.error("tensor literal is invalid; ranks are not consistent between elements")
        return
    if leaf[0] != depth:
        if leaf[0] != -1:
            raise p.error("tensor literal is invalid; ranks are not consistent between elements")
        leaf[0] = depth
    out.append(_parse_element(p, et))


def _dense_type(p: "AttributeParser", type: T.Type | None, attr_pos: int) -> T.ShapedType:
    """The type after a dense literal (or the one the context gives)."""
    shaped = _trailing_type(p, type)
    if not isinstance(shaped, T.ShapedType):
        raise p.error("elements literal must be a shaped type", attr_pos)
    if not shaped.has_static_shape:
        raise p.error("elements literal type must have static shape", attr_pos)
    return shaped


def _storage_bits(t: T.Type) -> int | None:
    """Bits MLIR stores a dense element of type `t` in (bytes, except i1);
    None for element types a hex literal cannot hold."""
    if isinstance(t, T.IndexType):
        return 64
    if isinstance(t, T.IntegerType):
        return 1 if t.width == 1 else (t.width + 7) // 8 * 8
    if isinstance(t, T.FloatType):
        return (t.width + 7) // 8 * 8
    if isinstance(t, T.ComplexType):
        inner = _storage_bits(t.element_type)
        return None if inner is None else 2 * inner
    return None


def _hex_size_ok(digits: int, first_byte: str, shaped: T.ShapedType) -> bool:
    """Whether `digits` hex digits are one element (a splat) or all of them,
    as MLIR's `isValidRawBuffer` decides; i1 elements are bit-packed, and a
    single byte of 00 or FF is an i1 splat."""
    bits = _storage_bits(shaped.element_type)
    count = shaped.num_elements
    raw = digits * 4
    if bits == 1:
        return (raw == 8 and first_byte.upper() in ("00", "FF")) or raw == (count + 7) // 8 * 8
    return raw == bits or raw == bits * count  # type: ignore[operator]


def _parse_dense_string(p: "AttributeParser", type: T.Type | None, attr_pos: int) -> A.Attribute:
    """`dense<"...">`: the raw data of numeric elements in hex, or one string
    element (a splat) of any other element type.  The hex digits are sliced
    out of the text once, never copied digit by digit: weights are megabytes."""
    text = p.text
    str_pos = p.pos
    hex_m = _HEX_LITERAL.match(text, str_pos)
    if hex_m is not None:
        p.pos = hex_m.end()
        value: str | bytes | None = None
    else:
        value = p.parse_optional_string()
    p.parse_punct(">")
    shaped = _dense_type(p, type, attr_pos)
    if _storage_bits(shaped.element_type) is None:  # one string element
        body = value if hex_m is None else text[hex_m.start() + 1:hex_m.end() - 1]
        return A.DenseElementsAttr(shaped, body)  # type: ignore[arg-type]
    if hex_m is None or (hex_m.end(1) - hex_m.start(1)) % 2:
        raise p.error("expected string containing hex digits starting with `0x`", str_pos)
    start, end = hex_m.span(1)
    if not _hex_size_ok(end - start, text[start:start + 2], shaped):
        raise p.error(f"elements hex data size is invalid for provided type: '{shaped}'", attr_pos)
    if _storage_bits(shaped.element_type) == 1:  # kept a byte per element, as numpy holds them
        bits = A.unpack_bits_hex(text[start:end], shaped.num_elements)
        return A.DenseElementsAttr(shaped, bits if shaped.element_type is T.i1 or isinstance(bits, str)
                                   else int(bits))
    return A.DenseElementsAttr(shaped, text[start - 2:end])  # numeric elements: stored as the bytes


def _parse_dense(p: "AttributeParser", type: T.Type | None, attr_pos: int) -> A.Attribute:
    p.parse_punct("<")
    start = p.pos
    p.skip_ws()
    if p.parse_optional_punct(">"):
        shaped = _dense_type(p, type, attr_pos)
        return A.DenseElementsAttr(shaped, ())  # type: ignore[arg-type]
    text = p.text
    if text.startswith('"', p.pos):
        return _parse_dense_string(p, type, attr_pos)
    # Elements are parsed once the type is known: find it first.
    body_start = p.pos
    p.pos = start - 1
    p.balanced_text()
    body_end = p.pos - 1
    shaped = _dense_type(p, type, attr_pos)
    after = p.pos
    p.pos = body_start
    et = shaped.element_type
    values: list = []
    shape: list[int] = []
    _parse_nested(p, et, values, shape, 0)
    p.skip_ws()
    if p.pos != body_end:
        raise p.error("expected '>' to close dense elements")
    p.pos = after
    if not shape and len(values) == 1:
        return A.DenseElementsAttr(shaped, values[0])  # type: ignore[arg-type]
    if shaped.has_rank and tuple(shape) != shaped.shape and shaped.has_static_shape:
        raise p.error(f"inferred shape of elements literal ([{', '.join(map(str, shape))}]) does not match "
                      f"type ([{', '.join(map(str, shaped.shape))}])", start)
    return A.DenseElementsAttr(shaped, tuple(values))  # type: ignore[arg-type]


def _parse_dense_array(p: "AttributeParser") -> A.Attribute:
    p.parse_punct("<")
    et = p.parse_type()
    values: list = []
    if p.parse_optional_punct(":"):
        values.append(_parse_element(p, et, in_array=True))
        while p.parse_optional_punct(","):
            values.append(_parse_element(p, et, in_array=True))
    p.parse_punct(">")
    return A.DenseArrayAttr(et, tuple(values))


def _parse_raw_affine(p: "AttributeParser") -> A.Attribute:
    value = parse_affine_map_or_set(p, None)
    return A.IntegerSetAttr(value) if isinstance(value, IntegerSet) else A.AffineMapAttr(value)


class AttributeParser(TypeParser):
    """Reads attributes and attribute dictionaries; keeps the attribute aliases."""

    def __init__(self, text: str, filename: str = "<stdin>", line_offset: int = 0) -> None:
        super().__init__(text, filename, line_offset)
        self.attr_aliases: dict[str, A.Attribute] = {}
        # Set by the parser when the text is in 2019's syntax (`era.py`).
        self.std_era = False
        self._dict_cache: dict[str, dict[str, A.Attribute]] = {}

    def parse_attribute(self, type: T.Type | None = None) -> A.Attribute:
        return parse_attribute(self, type)

    def parse_optional_attr_dict(self) -> dict[str, A.Attribute]:
        self.pos = WS.match(self.text, self.pos).end()
        if not self.text.startswith("{", self.pos):
            return {}
        # Only a short dictionary is a cache key: the match is bounded to that length.
        m = FLAT_DICT.match(self.text, self.pos, self.pos + FLAT_CACHE_LIMIT)
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
