"""TensorProto <-> dense elements attributes, without a Python object per element.

Import decodes the payload with :func:`.tensors.tensor_payload` (raw content, full or
truncated repeated field) and keeps it as one of the three ``DenseElementsAttr``
storages: a scalar for splats (``dense<-0.0> : tensor<f16>``), a tuple for small
tensors (TF prints those as lists), and for anything larger the raw little-endian
bytes themselves (printed as ``dense<"0x60074B3C...">``), so a weight read from
``tensor_content`` is written back to it without a conversion. Export writes splats to
the repeated field and everything else to ``tensor_content``.

Dtypes with no dense storage (quantized, variant, resource, float8, int4) are kept
as the serialized TensorProto in ``#tf_type.tensor_proto<"0x...">``, so they round
trip bit for bit.
"""

from __future__ import annotations

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.graphdef.convert_types import ConversionError, dtype_to_type, fill_shape, type_to_dtype
from egraft.ir.graphdef.messages import DataType, TensorProto
from egraft.ir.graphdef.tensors import STORAGE, num_elements, tensor_payload

#: Tensors with at most this many elements are kept as value tuples (TF prints lists).
SMALL = 16

_D = DataType
_BITS16 = (_D.DT_HALF, _D.DT_BFLOAT16)
_STRING = _D.DT_STRING


def _tensor_type(tensor: TensorProto) -> T.RankedTensorType:
    shape = tensor.tensor_shape
    if shape.unknown_rank or any(d.size < 0 for d in shape.dim):
        raise ConversionError("tensor shape must be fully known")
    return T.RankedTensorType(tuple(d.size for d in shape.dim), dtype_to_type(tensor.dtype))


def _scalar(row: np.ndarray, dtype: int):
    """A Python scalar (or (re, im) pair) for one stored element."""
    if dtype == _D.DT_HALF:
        return float(row.view(np.float16)[0])
    if dtype == _D.DT_BFLOAT16:
        return float((row.astype(np.uint32) << 16).view(np.float32)[0])
    if dtype == _D.DT_BOOL:
        return bool(row[0])
    if len(row) == 2:
        return (float(row[0]), float(row[1]))
    return row[0].item()


def _opaque(tensor: TensorProto) -> A.DialectAttr:
    return A.DialectAttr("tf_type", f'tensor_proto<"0x{tensor.SerializeToString().hex().upper()}">')


def tensor_attr(tensor: TensorProto) -> A.Attribute:
    """The attribute TF's importer makes of a tensor value."""
    storage = STORAGE.get(tensor.dtype)
    if tensor.dtype == _STRING:
        return _string_attr(tensor)
    if storage is None or tensor.dtype in (_D.DT_QINT8, _D.DT_QUINT8, _D.DT_QINT16, _D.DT_QUINT16,
                                           _D.DT_QINT32):
        return _opaque(tensor)
    ttype = _tensor_type(tensor)
    payload = tensor_payload(tensor)
    if payload is None:
        raise ConversionError(f"tensor payload does not match its shape {list(ttype.shape)}")
    head, count = payload.head, payload.count
    if count == 0:
        return A.DenseElementsAttr(ttype, ())
    if len(head) == 0:
        head = np.zeros((1, storage.parts), dtype=storage.numpy)
    if (head == head[0]).all():  # the tail repeats the last row, so one value fills it all
        return A.DenseElementsAttr(ttype, _scalar(head[0], tensor.dtype))
    if len(head) < count:
        head = np.concatenate([head, np.repeat(head[-1:], count - len(head), axis=0)])
    if count <= SMALL:
        return A.DenseElementsAttr(ttype, tuple(_scalar(row, tensor.dtype) for row in head))
    return A.DenseElementsAttr(ttype, head.astype(storage.numpy).tobytes())


def _string_attr(tensor: TensorProto) -> A.Attribute:
    ttype = _tensor_type(tensor)
    count = num_elements(tensor.tensor_shape) or 0
    values = list(tensor.string_val)
    if len(values) > count:
        raise ConversionError(f"{len(values)} strings for a tensor of {count} elements")
    if count and values and len(set(values)) == 1:
        return A.DenseElementsAttr(ttype, values[0])
    values += [values[-1] if values else b""] * (count - len(values))
    return A.DenseElementsAttr(ttype, tuple(values))


# ------------------------------------------------------------------ export


def _as_bytes(value) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _rows(attr: A.DenseElementsAttr, dtype: int) -> np.ndarray:
    """The values as an array in the dtype's storage type (bits for 16-bit floats)."""
    storage = STORAGE[dtype]
    data = attr.data
    values = [data] if attr.is_splat else list(data)
    if dtype == _D.DT_HALF:
        return np.array(values, dtype=np.float16).view(np.uint16)
    if dtype == _D.DT_BFLOAT16:
        bits = np.array(values, dtype=np.float32).view(np.uint32)
        return (bits >> 16).astype(np.uint16)
    return np.array(values, dtype=storage.numpy).reshape(-1)


def fill_tensor(attr: A.Attribute, out: TensorProto) -> None:
    """Write a dense elements (or opaque tensor) attribute into ``out``."""
    if isinstance(attr, A.DialectAttr) and attr.mnemonic == "tensor_proto":
        out.ParseFromString(bytes.fromhex(attr.params.strip('"')[2:]))
        return
    if not isinstance(attr, A.DenseElementsAttr) or not isinstance(attr.type, T.RankedTensorType):
        raise ConversionError(f"expected a dense tensor attribute, got {attr}")
    dtype = type_to_dtype(attr.type.element_type)
    out.dtype = dtype
    fill_shape(out.tensor_shape, list(attr.type.shape))
    data = attr.data
    if dtype == _STRING:
        out.string_val.extend([_as_bytes(data)] if attr.is_splat else [_as_bytes(v) for v in data])
        return
    storage = STORAGE.get(dtype)
    if storage is None:
        raise ConversionError(f"cannot export dense elements of {attr.type.element_type}")
    field = getattr(out, storage.field)
    if isinstance(data, bytes):  # raw storage (a numeric element is never bytes)
        raw = data
        if len(raw) == attr.type.num_elements * storage.numpy.itemsize * storage.parts:
            out.tensor_content = raw
            return
        rows = np.frombuffer(raw, dtype=storage.numpy)  # a stored splat: one element
    else:
        rows = _rows(attr, dtype)
        if not attr.is_splat and rows.size:
            out.tensor_content = rows.astype(storage.numpy).tobytes()
            return
    # A splat: one value, which TF's truncated encoding repeats over the shape.
    values = rows.tolist()
    field.extend([bool(v) for v in values] if dtype == _D.DT_BOOL else values)
