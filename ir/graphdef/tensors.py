"""Decode a TensorProto's numeric payload to NumPy, without expanding splats.

A TensorProto may store the same values three ways: raw little-endian bytes in
``tensor_content``; a typed repeated field (``float_val``, ``int_val``, ...) holding
every element; or that field truncated, where the last value repeats to fill the shape
and an empty field means all zeros. Comparison (and later the importer's dense
attributes) needs one form, so this module decodes all three to a :class:`Payload`
in the dtype's storage type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from egraft.ir.graphdef.messages import DataType, TensorProto, TensorShapeProto


@dataclass(frozen=True)
class Storage:
    """Where a dtype's values live: the repeated field, its element type, and its width.

    ``parts`` is 2 for complex dtypes, whose repeated field interleaves real and
    imaginary halves.
    """

    field: str
    numpy: np.dtype
    parts: int = 1


def _s(field: str, dtype: str, parts: int = 1) -> Storage:
    return Storage(field, np.dtype(dtype).newbyteorder("<"), parts)


# half and bfloat16 are kept as their 16-bit patterns (``half_val`` holds the bits), so
# decoding needs no bfloat16 support in NumPy.
STORAGE: dict[int, Storage] = {
    DataType.DT_FLOAT: _s("float_val", "f4"),
    DataType.DT_DOUBLE: _s("double_val", "f8"),
    DataType.DT_INT32: _s("int_val", "i4"),
    DataType.DT_UINT8: _s("int_val", "u1"),
    DataType.DT_INT16: _s("int_val", "i2"),
    DataType.DT_INT8: _s("int_val", "i1"),
    DataType.DT_COMPLEX64: _s("scomplex_val", "f4", 2),
    DataType.DT_INT64: _s("int64_val", "i8"),
    DataType.DT_BOOL: _s("bool_val", "u1"),
    DataType.DT_QINT8: _s("int_val", "i1"),
    DataType.DT_QUINT8: _s("int_val", "u1"),
    DataType.DT_QINT32: _s("int_val", "i4"),
    DataType.DT_BFLOAT16: _s("half_val", "u2"),
    DataType.DT_QINT16: _s("int_val", "i2"),
    DataType.DT_QUINT16: _s("int_val", "u2"),
    DataType.DT_UINT16: _s("int_val", "u2"),
    DataType.DT_COMPLEX128: _s("dcomplex_val", "f8", 2),
    DataType.DT_HALF: _s("half_val", "u2"),
    DataType.DT_UINT32: _s("uint32_val", "u4"),
    DataType.DT_UINT64: _s("uint64_val", "u8"),
}


def num_elements(shape: TensorShapeProto) -> int | None:
    """Element count of a fully known shape; None if the rank or a dimension is unknown."""
    if shape.unknown_rank:
        return None
    count = 1
    for dim in shape.dim:
        if dim.size < 0:
            return None
        count *= dim.size
    return count


@dataclass(frozen=True)
class Payload:
    """A tensor's values as stored: ``head`` rows, then the last row repeated (or zeros
    when ``head`` is empty) up to ``count`` elements.

    Kept unexpanded because splat tensors may be huge (TF's round-trip suite has a
    2**40-element one); ``head`` has shape ``(k, 1)``, or ``(k, 2)`` for complex.
    """

    head: np.ndarray
    count: int


def tensor_payload(tensor: TensorProto) -> Payload | None:
    """The tensor's values in storage type, whichever of the three encodings it uses.

    Returns None when the dtype has no numeric storage here (string, resource, variant,
    float8 and sub-byte types), when the shape is not fully known, or when the payload
    is inconsistent with the shape (too many values, a ragged ``tensor_content``): such
    tensors can only be compared field by field.
    """
    storage = STORAGE.get(tensor.dtype)
    count = num_elements(tensor.tensor_shape)
    if storage is None or count is None:
        return None
    if tensor.tensor_content:
        if len(tensor.tensor_content) != count * storage.numpy.itemsize * storage.parts:
            return None
        flat = np.frombuffer(tensor.tensor_content, dtype=storage.numpy)
        return Payload(flat.reshape(count, storage.parts), count)
    values = np.asarray(getattr(tensor, storage.field))
    if values.size % storage.parts or values.size // storage.parts > count:
        return None
    return Payload(values.astype(storage.numpy).reshape(-1, storage.parts), count)
