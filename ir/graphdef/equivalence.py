"""Field-by-field difference of two protobuf messages under TensorFlow's equivalence.

TensorFlow's round-trip check compares GraphDefs with protobuf's
``MessageDifferencer::Equivalent``: a field left unset equals one set to its default
(so ``tensor_shape {}`` equals no ``tensor_shape``), map fields compare as maps, and
repeated fields compare in order. Before that it rewrites every tensor attribute to a
canonical compressed encoding, replaces NaNs by a fixed number and blanks string
tensors. This module does the same comparison directly on values: tensors are decoded
(:mod:`.tensors`) and compared element by element with all NaNs equal, and string
tensor values are ignored unless asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from egraft.ir.graphdef.messages import DataType, TensorProto
from egraft.ir.graphdef.tensors import Payload, tensor_payload


@dataclass(frozen=True)
class Options:
    """Comparison switches; the defaults reproduce TensorFlow's round-trip check."""

    #: TF blanks DT_STRING tensor payloads before comparing; True compares them.
    compare_string_tensors: bool = False


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _show(field: FieldDescriptor, value: object) -> str:
    if field.enum_type is not None and isinstance(value, int):
        enum_value = field.enum_type.values_by_number.get(value)
        return enum_value.name if enum_value is not None else str(value)
    if isinstance(value, Message):
        return "{" + " ".join(str(value).split()) + "}"
    return repr(value)


def _scalar_equal(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _canonical_bits(values: np.ndarray, dtype: int) -> np.ndarray:
    """Bit patterns with every NaN mapped to one pattern, so NaN payloads don't matter."""
    if dtype == DataType.DT_BFLOAT16:
        nan = ((values & 0x7F80) == 0x7F80) & ((values & 0x007F) != 0)
        return np.where(nan, np.uint16(0x7FC0), values)
    floats = values.view(np.float16) if dtype == DataType.DT_HALF else values
    if floats.dtype.kind != "f":
        return values
    bits = floats.view(np.dtype(f"u{floats.dtype.itemsize}"))
    return np.where(np.isnan(floats), np.iinfo(bits.dtype).max, bits)


def _canonical_head(payload: Payload, dtype: int) -> np.ndarray:
    """The shortest head with the same meaning: trailing repeats trimmed, and a splat of
    +0 bit patterns dropped entirely (TF's compression does both; -0.0 stays)."""
    bits = _canonical_bits(payload.head, dtype)
    rows = len(bits)
    while rows > 1 and np.array_equal(bits[rows - 1], bits[rows - 2]):
        rows -= 1
    if rows == 1 and not bits[0].any():
        rows = 0
    return bits[:rows]


def _element(head: np.ndarray, index: int) -> np.ndarray:
    if len(head) == 0:
        return np.zeros(head.shape[1:], dtype=head.dtype)
    return head[min(index, len(head) - 1)]


def diff_tensors(a: TensorProto, b: TensorProto, path: str, options: Options) -> list[str]:
    """Compare two tensors by dtype, shape and decoded values, whatever their encoding."""
    out = diff_messages(a, b, path, options, skip=_TENSOR_PAYLOAD)
    if out or a.dtype != b.dtype:
        return out
    if a.dtype == DataType.DT_STRING and not options.compare_string_tensors:
        return []
    pa, pb = tensor_payload(a), tensor_payload(b)
    if pa is None or pb is None:
        return diff_messages(a, b, path, options, only=_TENSOR_PAYLOAD)
    ha, hb = _canonical_head(pa, a.dtype), _canonical_head(pb, b.dtype)
    if np.array_equal(ha, hb):
        return []
    first = next(i for i in range(max(len(ha), len(hb)) + 1)
                 if not np.array_equal(_element(ha, i), _element(hb, i)))
    shown = [_element(p.head, first).tolist() for p in (pa, pb)]
    return [f"{path}: tensor values differ, first at flat index {first}: "
            f"expected {shown[0]!r}, got {shown[1]!r}"]


_TENSOR_PAYLOAD = frozenset(
    f.name for f in TensorProto.DESCRIPTOR.fields if f.name not in ("dtype", "tensor_shape", "version_number"))


def _diff_field(a: Message, b: Message, field: FieldDescriptor, path: str,
                options: Options) -> list[str]:
    name = field.name
    va, vb = getattr(a, name), getattr(b, name)
    if _is_map(field):
        value_field = field.message_type.fields_by_name["value"]
        out = []
        for key in sorted(set(va) | set(vb), key=str):
            where = f"{path}.{name}[{key!r}]"
            if key not in vb:
                out.append(f"{where}: only in expected")
            elif key not in va:
                out.append(f"{where}: only in actual")
            elif value_field.message_type is not None:
                out += _diff_value(va[key], vb[key], where, options)
            elif not _scalar_equal(va[key], vb[key]):
                out.append(f"{where}: expected {_show(value_field, va[key])}, "
                           f"got {_show(value_field, vb[key])}")
        return out
    if field.is_repeated:
        out = []
        for i, (x, y) in enumerate(zip(va, vb)):
            where = f"{path}.{name}[{i}]"
            if field.message_type is not None:
                out += _diff_value(x, y, where, options)
            elif not _scalar_equal(x, y):
                out.append(f"{where}: expected {_show(field, x)}, got {_show(field, y)}")
        if len(va) != len(vb):
            longer, side = (va, "expected") if len(va) > len(vb) else (vb, "actual")
            extra = ", ".join(_show(field, v) for v in list(longer)[min(len(va), len(vb)):][:3])
            out.append(f"{path}.{name}: {len(va)} vs {len(vb)} entries; extra in {side}: {extra}"
                       + (", ..." if abs(len(va) - len(vb)) > 3 else ""))
        return out
    if field.message_type is not None:
        return _diff_value(va, vb, f"{path}.{name}", options)
    if _scalar_equal(va, vb):
        return []
    return [f"{path}.{name}: expected {_show(field, va)}, got {_show(field, vb)}"]


def _diff_value(a: Message, b: Message, path: str, options: Options) -> list[str]:
    if isinstance(a, TensorProto) and isinstance(b, TensorProto):
        return diff_tensors(a, b, path, options)
    return diff_messages(a, b, path, options)


def _oneof_mismatches(a: Message, b: Message, descriptor: Descriptor,
                      path: str) -> tuple[list[str], set[str]]:
    """Report oneofs holding different alternatives; an unset field would otherwise
    compare equal to a default-valued one of another kind (``i: 0`` vs ``f: 0``)."""
    out, skipped = [], set()
    for oneof in descriptor.oneofs:
        wa, wb = a.WhichOneof(oneof.name), b.WhichOneof(oneof.name)
        if wa != wb:
            out.append(f"{path}: expected {wa or 'no value'}, got {wb or 'no value'}")
            skipped.update(f.name for f in oneof.fields)
    return out, skipped


def diff_messages(a: Message, b: Message, path: str, options: Options = Options(),
                  skip: frozenset[str] = frozenset(),
                  only: frozenset[str] | None = None) -> list[str]:
    """Differences between two messages of one type, as ``path: ...`` lines."""
    descriptor = a.DESCRIPTOR
    out, oneof_skipped = _oneof_mismatches(a, b, descriptor, path)
    for field in descriptor.fields:
        if field.name in skip or field.name in oneof_skipped:
            continue
        if only is not None and field.name not in only:
            continue
        out += _diff_field(a, b, field, path, options)
    return out
