"""Builtin and dialect attributes.

Attributes are immutable values.  The scalar ones are uniqued like types;
the container ones (arrays, dictionaries, dense elements) compare by value.
Anything egraft has no structure for (`#tf_type.shape<1x2>`, `#foo.bar<...>`)
is a `DialectAttr` holding its body text verbatim, so it round-trips.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from egraft.ir.core import types as T
from egraft.ir.core.floats import format_float, round_to
from egraft.ir.core.uniqued import Uniqued
from egraft.ir.core.uniqued import exact as exact_key

if TYPE_CHECKING:
    import numpy as np


class Attribute(Uniqued):
    __slots__ = ()


# Printable ASCII but the quote and the backslash: kept as is.
_PLAIN_TEXT = re.compile(r'[ !#-\[\]-~]*+')
_PLAIN_BYTES = re.compile(rb'[ !#-\[\]-~]++')
_ESCAPED_BYTE = [f"\\{b:02X}" for b in range(256)]
_ESCAPED_BYTE[ord("\\")] = "\\\\"


def escape_string(value: str | bytes) -> str:
    """MLIR's string literal escaping: printable ASCII kept, backslash
    doubled, every other byte (quote and newline too) as `\\XX` in hex
    (llvm::printEscapedString writes `"` as \\22).  Plain text is copied
    whole and the rest in runs: a 50 MB string is not split into 50 million
    one-character pieces."""
    if isinstance(value, str):
        if _PLAIN_TEXT.fullmatch(value):
            return '"' + value + '"'
        value = value.encode("utf-8")
    out = []
    pos = 0
    for m in _PLAIN_BYTES.finditer(value):
        out.extend(_ESCAPED_BYTE[b] for b in value[pos:m.start()])
        out.append(m.group().decode("ascii"))
        pos = m.end()
    out.extend(_ESCAPED_BYTE[b] for b in value[pos:])
    return '"' + "".join(out) + '"'


class StringAttr(Attribute):
    """A string; `value` is `str` when it is valid UTF-8, else `bytes`."""

    __slots__ = _fields = ("value", "type")
    _defaults = (None,)

    def _render(self) -> str:
        text = escape_string(self.value)
        return text if self.type is None else f"{text} : {self.type}"


class IntegerAttr(Attribute):
    __slots__ = _fields = ("value", "type")

    def _render(self) -> str:
        if self.type is T.i1:
            return "true" if self.value else "false"
        return f"{self.value} : {self.type}"

    def render_without_type(self) -> str:
        if self.type is T.i1:
            return "true" if self.value else "false"
        return str(self.value)


def BoolAttr(value: bool) -> IntegerAttr:
    return IntegerAttr(1 if value else 0, T.i1)


class FloatAttr(Attribute):
    __slots__ = _fields = ("value", "type")

    def _render(self) -> str:
        return f"{self.render_without_type()} : {self.type}"

    def render_without_type(self) -> str:
        return format_float(self.value, self.type.name)


class UnitAttr(Attribute):
    __slots__ = ()

    def _render(self) -> str:
        return "unit"


class TypeAttr(Attribute):
    __slots__ = _fields = ("value",)

    def _render(self) -> str:
        return str(self.value)


_BARE_SYMBOL = re.compile(r"[A-Za-z_][\w$.]*\Z")


def symbol_text(name: str) -> str:
    return "@" + (name if _BARE_SYMBOL.match(name) else escape_string(name))


class SymbolRefAttr(Attribute):
    """`@root` or `@root::@nested::@leaf`."""

    __slots__ = _fields = ("root", "nested")
    _defaults = ((),)

    def _render(self) -> str:
        return "::".join(symbol_text(s) for s in (self.root, *self.nested))

    @property
    def leaf(self) -> str:
        return self.nested[-1] if self.nested else self.root


def element_text(attr: Attribute) -> str:
    """An array element's text: MLIR elides the default types (i64, f64)
    there, except after a float printed as hex bits, which would read back
    as an integer."""
    if isinstance(attr, (IntegerAttr, FloatAttr)) and attr.type in (T.i64, T.f64):
        text = attr.render_without_type()
        if not (isinstance(attr, FloatAttr) and text.startswith(("0x", "-0x"))):
            return text
    return str(attr)


class ArrayAttr(Attribute):
    __slots__ = _fields = ("value",)

    def _render(self) -> str:
        return "[" + ", ".join(map(element_text, self.value)) + "]"

    def __iter__(self) -> Iterator[Attribute]:
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)

    def __getitem__(self, i: int) -> Attribute:
        return self.value[i]


def _key_text(name: str) -> str:
    return name if _BARE_KEY.match(name) else escape_string(name)


_BARE_KEY = re.compile(r"[A-Za-z_][\w$.]*\Z")


def dict_entries_text(entries: Sequence[tuple[str, Attribute]]) -> str:
    parts = []
    for k, v in entries:
        parts.append(_key_text(k) if v is UNIT else f"{_key_text(k)} = {v}")
    return ", ".join(parts)


class DictionaryAttr(Attribute):
    """A dictionary; MLIR keeps its entries sorted by name."""

    __slots__ = _fields = ("entries",)

    @classmethod
    def _normalize(cls, args: tuple) -> tuple:
        return (tuple(sorted(args[0], key=lambda kv: kv[0])),)

    def _render(self) -> str:
        return "{" + dict_entries_text(self.entries) + "}"

    def get(self, name: str, default: Any = None) -> Any:
        for k, v in self.entries:
            if k == name:
                return v
        return default

    def as_dict(self) -> dict[str, Attribute]:
        return dict(self.entries)


class DenseArrayAttr(Attribute):
    """`array<i64: 1, 2>`, the storage of properties such as operandSegmentSizes."""

    __slots__ = _fields = ("element_type", "values")

    def _render(self) -> str:
        if not self.values:
            return f"array<{self.element_type}>"
        et = self.element_type
        if isinstance(et, T.FloatType):
            items = [format_float(v, et.name) for v in self.values]
        elif et is T.i1:
            items = ["true" if v else "false" for v in self.values]
        else:
            items = [str(v) for v in self.values]
        return f"array<{et}: {', '.join(items)}>"


class DialectAttr(Attribute):
    """A dialect attribute kept as text: `#tf_type.shape<1x2>` has dialect
    `tf_type` and body `shape<1x2>`."""

    __slots__ = ("dialect", "body", "mnemonic")
    _fields = ("dialect", "body")

    def _derive(self) -> None:
        self.mnemonic = T.leading_identifier(self.body)

    def _render(self) -> str:
        if re.match(r"[A-Za-z_][\w$.]*(?:<.*>)?\Z", self.body, re.S):
            return f"#{self.dialect}.{self.body}"
        escaped = self.body.replace("\\", "\\\\").replace('"', '\\"')
        return f'#{self.dialect}<"{escaped}">'

    @property
    def params(self) -> str:
        start = self.body.find("<")
        return self.body[start + 1:-1] if start >= 0 else ""


_TF_TYPE_ATTRS = ("shape", "func", "version", "placeholder", "full_type")


def dialect_attr(dialect: str, body: str) -> DialectAttr:
    """Build a dialect attribute, normalizing TensorFlow's 2019 (`tf`) and early
    TF Graph IR (`tfg`) namespaces of its `tf_type` attributes."""
    if dialect in ("tf", "tfg") and body.split("<", 1)[0] in _TF_TYPE_ATTRS:
        dialect = "tf_type"
    return DialectAttr(dialect, body)


class VerbatimAttr(Attribute):
    """A builtin attribute egraft keeps as text (`strided<[1], offset: ?>`,
    `opaque<"tf", "0x...">`, `sparse<...>`), including its trailing type."""

    __slots__ = _fields = ("text",)

    def _render(self) -> str:
        return self.text


class AffineMapAttr(Attribute):
    __slots__ = _fields = ("value",)

    def _render(self) -> str:
        return f"affine_map<{self.value}>"


class IntegerSetAttr(Attribute):
    __slots__ = _fields = ("value",)

    def _render(self) -> str:
        return f"affine_set<{self.value}>"


class DenseResourceAttr(Attribute):
    """`dense_resource<name> : type`; the blob lives in the file's resources
    section (TensorFlow's elided weights are `__elided__`)."""

    __slots__ = _fields = ("handle", "type")

    def _render(self) -> str:
        return f"dense_resource<{self.handle}> : {self.type}"


HEX_THRESHOLD = 100
"""MLIR prints non-splat dense elements with more elements than this as hex."""

_NP_DTYPES = {
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
    "si8": "int8", "si16": "int16", "si32": "int32", "si64": "int64",
    "f16": "float16", "f32": "float32", "f64": "float64", "index": "int64",
}


def numpy_dtype(element_type: T.Type) -> Any:
    """The numpy dtype storing elements of the type (None if there is none).  numpy is
    imported by the first caller, not with the IR: a run that never decodes a dense
    payload (most egraft-opt runs) does not pay ~0.1 s for it."""
    import numpy as np

    if isinstance(element_type, T.IntegerType) and element_type.width not in (1, 8, 16, 32, 64):
        return np.int64
    name = _NP_DTYPES.get(str(element_type))
    return None if name is None else np.dtype(name).type


class DenseElementsAttr(Attribute):
    """`dense<...> : type`.

    `data` is one of: a scalar (a splat), a flat tuple of scalars in
    row-major order, or, for numeric elements, `bytes` of the raw little-endian
    storage (a byte per i1 element), kept undecoded until someone asks for the
    values: TensorFlow's weights are megabytes, read from a GraphDef's
    `tensor_content` and written back to it, and converting them to text and
    back cost seconds per model. MLIR's hex text (`"0x..."`) given as `data` is
    stored as those bytes, so equal payloads are one attribute whatever their
    source; it is printed in hex again. Scalars are int, float, bool, str/bytes
    (for string tensors) or a (re, im) tuple (complex).
    """

    __slots__ = _fields = ("type", "data")

    @classmethod
    def _normalize(cls, args: tuple) -> tuple:
        """All-equal element lists become splats, as MLIR stores them."""
        type, data = args
        if isinstance(data, str) and data.startswith("0x") and isinstance(type.element_type, _NUMERIC):
            data = bytes.fromhex(data[2:])
        if isinstance(data, tuple) and len(data) > 1 and not isinstance(data[0], tuple) \
                and not _is_complex_scalar(data, type) \
                and all(exact_key(x) == exact_key(data[0]) for x in data):
            data = data[0]
        return (type, data)

    @property
    def is_splat(self) -> bool:
        if _is_complex_scalar(self.data, self.type):
            return True
        return not isinstance(self.data, tuple) and not _is_storage(self.data, self.type.element_type)

    @property
    def element_type(self) -> T.Type:
        return self.type.element_type

    def to_numpy(self) -> np.ndarray:
        """The elements as a numpy array of the attribute's shape."""
        import numpy as np

        et = self.type.element_type
        shape = self.type.shape or ()
        if _is_storage(self.data, et):
            dtype = numpy_dtype(et)
            if dtype is None:
                raise ValueError(f"no numpy storage for {et}")
            raw = self.data if isinstance(self.data, bytes) else bytes.fromhex(self.data[2:])
            arr = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"))
            count = int(np.prod(shape)) if shape else 1
            if arr.size == 1 and count != 1:
                arr = np.full(count, arr[0])
            return arr.reshape(shape).astype(dtype)
        dtype = numpy_dtype(et) or object
        if isinstance(self.data, tuple):
            return np.array(self.data, dtype=dtype).reshape(shape)
        return np.full(shape, self.data, dtype=dtype)

    def _render(self) -> str:
        return f"dense<{self.render_body()}> : {self.type}"

    def render_body(self) -> str:
        data = self.data
        et = self.type.element_type
        if _is_storage(data, et):
            if _is_bit(et):  # stored a byte per element, printed packed
                return f'"{_hex_of(self.to_numpy())}"'
            return f'"0x{data.hex().upper()}"' if isinstance(data, bytes) else f'"{data}"'  # no escaping needed
        if not isinstance(data, tuple) or _is_complex_scalar(data, self.type):
            return _scalar_text(data, et)
        shape = self.type.shape or ()
        if len(data) > HEX_THRESHOLD and numpy_dtype(et) is not None and not isinstance(data[0], (str, bytes, tuple)):
            return f'"{_hex_of(self.to_numpy())}"'
        return _nested_text([_scalar_text(x, et) for x in data], list(shape))


def _is_complex_scalar(data: Any, type: T.Type) -> bool:
    """A complex splat is one `(re, im)` pair, whereas complex element lists hold
    pairs; without this check the pair would read as two equal scalars."""
    return (isinstance(type.element_type, T.ComplexType) and isinstance(data, tuple)  # type: ignore[attr-defined]
            and len(data) == 2 and not isinstance(data[0], tuple))


def _is_storage(data: Any, element_type: T.Type) -> bool:
    """Whether ``data`` is raw storage rather than a splat: `bytes` of numeric elements (a
    numeric scalar is never bytes), or hex text of other element types (whose digits are
    checked: a string element may itself start with "0x")."""
    if isinstance(element_type, _NUMERIC):
        return isinstance(data, bytes)
    return isinstance(data, str) and data.startswith("0x") and _HEX_ONLY.match(data) is not None


_NUMERIC = (T.IntegerType, T.IndexType, T.FloatType, T.ComplexType)


_HEX_ONLY = re.compile(r"0x[0-9A-Fa-f]*\Z")


def _is_bit(t: T.Type) -> bool:
    return isinstance(t, T.IntegerType) and t.width == 1


def _hex_of(arr: np.ndarray) -> str:
    """MLIR's hex text of an array's elements: little-endian, booleans packed
    eight to a byte, lowest bit first (as MLIR stores i1 elements)."""
    import numpy as np

    if arr.dtype == np.bool_:
        return "0x" + np.packbits(arr.reshape(-1), bitorder="little").tobytes().hex().upper()
    return "0x" + arr.astype(arr.dtype.newbyteorder("<")).tobytes().hex().upper()


def unpack_bits_hex(digits: str, count: int) -> str | bool:
    """The stored form of MLIR's hex text of `count` i1 elements (eight to a
    byte, lowest bit first): a byte per element in hex, as numpy and GraphDef
    import keep them, or a bool for a one-byte all-zeros/all-ones splat."""
    if len(digits) == 2 and digits.upper() in ("00", "FF"):
        return digits != "00"
    bits = format(int(digits or "0", 16), f"0{len(digits) * 4}b")
    # Bytes are in order, bits within a byte lowest first.
    ordered = "".join(bits[i:i + 8][::-1] for i in range(0, len(bits), 8))[:count]
    return "0x" + ordered.translate({48: "00", 49: "01"})


def _scalar_text(x: Any, et: T.Type) -> str:
    if isinstance(x, bool) or et is T.i1:
        return "true" if x else "false"
    if isinstance(x, tuple):
        inner = et.element_type if isinstance(et, T.ComplexType) else et
        return "(" + ",".join(_scalar_text(p, inner) for p in x) + ")"
    if isinstance(x, float):
        return format_float(x, et.name if isinstance(et, T.FloatType) else "f64")
    if isinstance(x, (str, bytes)):
        return escape_string(x)
    return str(x)


def _nested_text(items: list[str], shape: list[int]) -> str:
    if not shape:
        return items[0] if items else ""
    if len(shape) == 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested_text(items[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


def float_attr(value: float, type: T.FloatType) -> FloatAttr:
    return FloatAttr(round_to(float(value), type.name), type)


UNIT = UnitAttr()
TRUE = BoolAttr(True)
FALSE = BoolAttr(False)
