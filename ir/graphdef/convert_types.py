"""TensorFlow dtypes, shapes and full types <-> egraft types and ``#tf_type`` attributes.

One table maps every ``DataType`` to the MLIR type TF's importer gives it (``DT_FLOAT``
-> ``f32``, ``DT_STRING`` -> ``!tf_type.string``, ``DT_FLOAT_REF`` ->
``!tf_type.f32ref``); both directions read it, so they cannot drift apart. Shapes are
``#tf_type.shape<2x?x3>`` / ``<*>``; full types ``#tf_type.full_type<array<tensor<var "T">>>``.
Attributes without egraft structure are ``DialectAttr`` text, so this module also
parses those two bodies back.
"""

from __future__ import annotations

import re

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.graphdef.messages import DataType, FullTypeDef, TensorShapeProto
from tensorboard.compat.proto import full_type_pb2

_D = DataType


def _tf(name: str) -> T.Type:
    return T.dialect_type("tf_type", name)


#: DataType -> (MLIR type, mnemonic of its ``*ref`` flavour).
_DTYPES: dict[int, tuple[T.Type, str]] = {
    _D.DT_FLOAT: (T.f32, "f32ref"), _D.DT_DOUBLE: (T.f64, "f64ref"),
    _D.DT_INT32: (T.i32, "int32ref"), _D.DT_UINT8: (T.IntegerType(8, "u"), "uint8ref"),
    _D.DT_INT16: (T.i16, "int16ref"), _D.DT_INT8: (T.i8, "int8ref"),
    _D.DT_STRING: (_tf("string"), "stringref"), _D.DT_COMPLEX64: (T.ComplexType(T.f32), "complex64ref"),
    _D.DT_INT64: (T.i64, "int64ref"), _D.DT_BOOL: (T.i1, "boolref"),
    _D.DT_QINT8: (_tf("qint8"), "qint8ref"), _D.DT_QUINT8: (_tf("quint8"), "quint8ref"),
    _D.DT_QINT32: (_tf("qint32"), "qint32ref"), _D.DT_BFLOAT16: (T.bf16, "bfloat16ref"),
    _D.DT_QINT16: (_tf("qint16"), "qint16ref"), _D.DT_QUINT16: (_tf("quint16"), "quint16ref"),
    _D.DT_UINT16: (T.IntegerType(16, "u"), "uint16ref"),
    _D.DT_COMPLEX128: (T.ComplexType(T.f64), "complex128ref"), _D.DT_HALF: (T.f16, "halfref"),
    _D.DT_RESOURCE: (_tf("resource"), "resourceref"), _D.DT_VARIANT: (_tf("variant"), "variantref"),
    _D.DT_UINT32: (T.IntegerType(32, "u"), "uint32ref"), _D.DT_UINT64: (T.IntegerType(64, "u"), "uint64ref"),
    _D.DT_FLOAT8_E5M2: (T.FloatType("f8E5M2"), "float8e5m2ref"),
    _D.DT_FLOAT8_E4M3FN: (T.FloatType("f8E4M3FN"), "float8e4m3fnref"),
    _D.DT_FLOAT8_E4M3FNUZ: (T.FloatType("f8E4M3FNUZ"), "float8e4m3fnuzref"),
    _D.DT_FLOAT8_E4M3B11FNUZ: (T.FloatType("f8E4M3B11FNUZ"), "float8e4m3b11fnuzref"),
    _D.DT_FLOAT8_E5M2FNUZ: (T.FloatType("f8E5M2FNUZ"), "float8e5m2fnuzref"),
    _D.DT_INT4: (T.IntegerType(4), "int4ref"), _D.DT_UINT4: (T.IntegerType(4, "u"), "uint4ref"),
}
_REF_OFFSET = 100
_TYPE_TO_DTYPE: dict[T.Type, int] = {}
for _dtype, (_type, _ref) in _DTYPES.items():
    _TYPE_TO_DTYPE[_type] = _dtype
    _TYPE_TO_DTYPE[_tf(_ref)] = _dtype + _REF_OFFSET


class ConversionError(Exception):
    """A value TF's importer or exporter would reject; the caller adds which node."""


def dtype_to_type(dtype: int) -> T.Type:
    """The element type of a ``DataType`` (ref dtypes become ``!tf_type.*ref``)."""
    base, is_ref = (dtype - _REF_OFFSET, True) if dtype > _REF_OFFSET else (dtype, False)
    entry = _DTYPES.get(base)
    if entry is None:
        name = DataType.Name(dtype) if dtype in DataType.values() else str(dtype)
        raise ConversionError(f"unsupported data type {name}")
    return _tf(entry[1]) if is_ref else entry[0]


def type_to_dtype(t: T.Type) -> int:
    """The ``DataType`` of an element type; subtyped resources/variants drop the subtype."""
    found = _TYPE_TO_DTYPE.get(t)
    if found is None and isinstance(t, T.DialectType) and t.dialect == "tf_type":
        found = _TYPE_TO_DTYPE.get(_tf(t.mnemonic))
    if found is None:
        raise ConversionError(f"type {t} has no TensorFlow data type")
    return found


def element_dtype(t: T.Type) -> int:
    """The ``DataType`` of a tensor type's elements (or of a bare element type)."""
    return type_to_dtype(t.element_type if isinstance(t, T.ShapedType) else t)


# ------------------------------------------------------------------ shapes


def shape_attr(shape: TensorShapeProto) -> A.DialectAttr:
    if shape.unknown_rank:
        return A.DialectAttr("tf_type", "shape<*>")
    dims = "x".join("?" if d.size == -1 else str(d.size) for d in shape.dim)
    return A.DialectAttr("tf_type", f"shape<{dims}>")


def shape_dims(attr: A.Attribute) -> list[int] | None:
    """The sizes of a ``#tf_type.shape`` (-1 unknown), None for unknown rank."""
    if not (isinstance(attr, A.DialectAttr) and attr.mnemonic == "shape"):
        raise ConversionError(f"expected a #tf_type.shape attribute, got {attr}")
    body = attr.params.strip()
    if body == "*":
        return None
    return [-1 if d == "?" else int(d) for d in body.split("x")] if body else []


def fill_shape(proto: TensorShapeProto, dims: list[int] | None) -> None:
    proto.SetInParent()  # a scalar shape has no fields but must still be present
    if dims is None:
        proto.unknown_rank = True
        return
    for d in dims:
        proto.dim.add().size = d


# ------------------------------------------------------------------ full types

_FT_NAMES = {v: k[len("TFT_"):].lower() for k, v in full_type_pb2.FullTypeId.items()}
_FT_IDS = {name: v for v, name in _FT_NAMES.items()}


def full_type_text(ft: FullTypeDef) -> str:
    """``array<tensor<var "T">>``: the body TF prints inside ``#tf_type.full_type<...>``."""
    text = _FT_NAMES.get(ft.type_id, str(ft.type_id))
    if ft.args:
        text += "<" + ", ".join(full_type_text(a) for a in ft.args) + ">"
    which = ft.WhichOneof("attr")
    if which == "s":
        text += " " + A.escape_string(ft.s)
    elif which == "i":
        text += f" {ft.i} : i64"
    return text


def full_type_attr(ft: FullTypeDef) -> A.DialectAttr:
    return A.DialectAttr("tf_type", f"full_type<{full_type_text(ft)}>")


_FT_TOKEN = re.compile(r'\s*(?:([A-Za-z_][\w]*)|("(?:[^"\\]|\\.)*")|(-?\d+)\s*:\s*i64|([<>,]))')


def _unescape(literal: str) -> bytes:
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        if body[i] == "\\":
            nxt = body[i + 1]
            if nxt == "\\":
                out.append(0x5C)
                i += 2
            else:
                out.append(int(body[i + 1:i + 3], 16))
                i += 3
        else:
            out += body[i].encode("utf-8")
            i += 1
    return bytes(out)


def parse_full_type(attr: A.Attribute, out: FullTypeDef) -> None:
    """Fill ``out`` from ``#tf_type.full_type<...>``."""
    if not (isinstance(attr, A.DialectAttr) and attr.mnemonic == "full_type"):
        raise ConversionError(f"expected a #tf_type.full_type attribute, got {attr}")
    text = attr.params
    pos = _parse_ft(text, 0, out)
    if text[pos:].strip():
        raise ConversionError(f"unexpected {text[pos:].strip()!r} in full type {attr}")


def _parse_ft(text: str, pos: int, out: FullTypeDef) -> int:
    m = _FT_TOKEN.match(text, pos)
    if m is None or m.group(1) is None or m.group(1) not in _FT_IDS:
        raise ConversionError(f"invalid full type at {text[pos:]!r}")
    out.type_id = _FT_IDS[m.group(1)]
    pos = m.end()
    m = _FT_TOKEN.match(text, pos)
    if m is not None and m.group(4) == "<":
        pos = m.end()
        while True:
            pos = _parse_ft(text, pos, out.args.add())
            m = _FT_TOKEN.match(text, pos)
            if m is None or m.group(4) not in (",", ">"):
                raise ConversionError(f"expected ',' or '>' in full type at {text[pos:]!r}")
            pos = m.end()
            if m.group(4) == ">":
                break
        m = _FT_TOKEN.match(text, pos)
    if m is not None and m.group(2) is not None:
        out.s = _unescape(m.group(2))
        pos = m.end()
    elif m is not None and m.group(3) is not None:
        out.i = int(m.group(3))
        pos = m.end()
    return pos
