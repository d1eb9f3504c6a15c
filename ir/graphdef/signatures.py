"""What the importer and exporter both need from an OpDef: output types and segments.

A node's results follow its OpDef's output args, each expanded by its
``number_attr`` (N copies) or ``type_list_attr`` (one per listed type). Function
bodies name results by segment (``"split:output:2"``), so the same expansion gives
the segment of each result on export. Also here: TensorFlow's tensor-name syntax.
"""

from __future__ import annotations

from typing import Mapping

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.graphdef.convert_types import ConversionError, dtype_to_type, type_to_dtype
from egraft.ir.graphdef.messages import OpDef

#: (output arg name, first result index, number of results) per output arg.
Segments = list[tuple[str, int, int]]


def output_types(op_def: OpDef, attrs: Mapping[str, A.Attribute]) -> tuple[list[T.Type], Segments]:
    """Unranked result types of a node and the segment of each output arg."""
    types: list[T.Type] = []
    segments: Segments = []
    for arg in op_def.output_arg:
        start = len(types)
        if arg.type_list_attr:
            value = attrs.get(arg.type_list_attr)
            if not isinstance(value, A.ArrayAttr):
                raise ConversionError(f"Type attr not found: {arg.type_list_attr}")
            for item in value:
                if not isinstance(item, A.TypeAttr):
                    raise ConversionError(f"Expected '{arg.type_list_attr}' to be a list of types")
                types.append(T.UnrankedTensorType(item.value))
        else:
            count = 1
            if arg.number_attr:
                value = attrs.get(arg.number_attr)
                if not isinstance(value, A.IntegerAttr):
                    raise ConversionError(f"Type attr not found: {arg.number_attr}")
                count = value.value
            if arg.type:
                dtype = dtype_to_type(arg.type + (100 if arg.is_ref else 0))
            elif not arg.type_attr:
                raise ConversionError(f"Arg '{arg.name}' has invalid type and no type attribute")
            else:
                value = attrs.get(arg.type_attr)
                if not isinstance(value, A.TypeAttr):
                    raise ConversionError(f"Type attr not found: {arg.type_attr}")
                dtype = value.value
                if arg.is_ref:
                    dtype = _ref_of(dtype)
            types += [T.UnrankedTensorType(dtype)] * count
        segments.append((arg.name, start, len(types) - start))
    return types, segments


def _ref_of(t: T.Type) -> T.Type:
    dtype = type_to_dtype(t)
    return dtype_to_type(dtype + 100) if dtype < 100 else t


def segment_of(segments: Segments, index: int) -> tuple[str, int] | None:
    """(output arg name, index inside it) of result ``index``."""
    for name, start, size in segments:
        if start <= index < start + size:
            return name, index - start
    return None


def parse_tensor_name(name: str) -> tuple[str, int]:
    """``"x:2"`` -> ("x", 2); ``"^x"`` -> ("x", -1); ``"x:out:1"`` -> ("x:out", 1)."""
    if name.startswith("^"):
        return name[1:], -1
    node, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return node, int(index)
    return name, 0


def _arg_counts(args, total: int, attrs: Mapping[str, A.Attribute]) -> list[int] | None:
    """How many values each arg takes: fixed ones count 1 (or their known N / list
    length); at most one arg of unknown size takes the rest."""
    counts: list[int | None] = []
    for arg in args:
        if arg.type_list_attr:
            value = attrs.get(arg.type_list_attr)
            counts.append(len(value) if isinstance(value, A.ArrayAttr) else None)
        elif arg.number_attr:
            value = attrs.get(arg.number_attr)
            counts.append(value.value if isinstance(value, A.IntegerAttr) else None)
        else:
            counts.append(1)
    unknown = [i for i, c in enumerate(counts) if c is None]
    if len(unknown) > 1:
        return None
    if unknown:
        counts[unknown[0]] = total - sum(c for c in counts if c is not None)
    return counts if sum(counts) == total and min(counts, default=0) >= 0 else None  # type: ignore[arg-type]


def derived_attrs(op_def: OpDef, attrs: Mapping[str, A.Attribute], operand_types: list[T.Type],
                  result_types: list[T.Type]) -> dict[str, A.Attribute]:
    """The type, number and type-list attributes an op's values imply but ``attrs``
    lacks (TF's MLIR leaves them out: ``tf.Const`` has no ``dtype``)."""
    found: dict[str, A.Attribute] = {}

    def element(t: T.Type) -> T.Type:
        return t.element_type if isinstance(t, T.ShapedType) else t

    for args, types in ((op_def.input_arg, operand_types), (op_def.output_arg, result_types)):
        counts = _arg_counts(args, len(types), {**attrs, **found})
        if counts is None:
            continue
        pos = 0
        for arg, count in zip(args, counts):
            chunk = types[pos:pos + count]
            pos += count
            if arg.type_list_attr and arg.type_list_attr not in attrs:
                found[arg.type_list_attr] = A.ArrayAttr(tuple(A.TypeAttr(element(t)) for t in chunk))
            if arg.number_attr and arg.number_attr not in attrs:
                found[arg.number_attr] = A.IntegerAttr(count, T.i64)
            if arg.type_attr and arg.type_attr not in attrs and chunk:
                try:
                    dtype = element(chunk[0])
                    found[arg.type_attr] = A.TypeAttr(_unref(dtype) if arg.is_ref else dtype)
                except ConversionError:
                    pass
    shape_def = next((a for a in op_def.attr if a.name == "shape" and a.type == "shape"), None)
    if shape_def is not None and "shape" not in attrs and not shape_def.HasField("default_value") \
            and len(result_types) == 1 and isinstance(result_types[0], T.ShapedType):
        # PlaceholderWithDefault: TF's MLIR keeps the shape only in the result type.
        shape = result_types[0].shape
        dims = "*" if shape is None else "x".join("?" if d == T.DYNAMIC else str(d) for d in shape)
        found["shape"] = A.DialectAttr("tf_type", f"shape<{dims}>")
    return found


def _unref(t: T.Type) -> T.Type:
    dtype = type_to_dtype(t)
    return dtype_to_type(dtype - 100) if dtype > 100 else t
