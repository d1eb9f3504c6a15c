"""The memref dialect: allocation, access, casts and views of memrefs.

2019 files spelled these ops without a prefix (`alloc`, `load`, `dim %m, 0`,
`memref_cast`); `REGISTRY.legacy_names` maps them here.  2019's `dim` took
its index as an integer attribute: the parser materializes an index
constant before the op, so that the result is today's `memref.dim`.
Mixed static/dynamic index lists (`[%a, 4, %b]`, subview and friends) are
parsed and printed by one shared pair of helpers.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.arith import CAST_FORM, CONSTANT
from egraft.ir.dialects.strided import strides_and_offset
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, Variadic
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error

_DYNAMIC_INDEX = -(2 ** 63)  # MLIR's ShapedType::kDynamic in static index arrays


def _memref_type(p: FormParser, pos: int | None = None) -> T.MemRefType:
    t = p.parse_type()
    if not isinstance(t, (T.MemRefType, T.UnrankedMemRefType)):
        raise p.error("invalid kind of type specified", pos)
    return t


# ------------------------------------------------------------------ alloc / alloca


def _parse_alloc(p: FormParser) -> Operation:
    dyn = p.parse_operand_ref_list("()")
    syms = p.parse_operand_ref_list("[]") if p.peek() == "[" else []
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = _memref_type(p)
    idx = [T.index] * (len(dyn) + len(syms))
    attrs["operandSegmentSizes"] = A.DenseArrayAttr(T.i32, (len(dyn), len(syms)))
    return p.create_op(operands=p.resolve_operands(dyn + syms, idx), result_types=[t], attributes=attrs)


def _print_alloc(pr: FormPrinter, op: Operation) -> None:
    groups = op.opdef.operand_groups(op)
    pr.write(pr.op_name_text(op) + "(")
    pr.print_operands(groups["dynamicSizes"])
    pr.write(")")
    if groups["symbolOperands"]:
        pr.write("[")
        pr.print_operands(groups["symbolOperands"])
        pr.write("]")
    pr.print_op_attr_dict(op, elided=("operandSegmentSizes",))
    pr.write(" : ")
    pr.print_type(op.results[0].type)


def _verify_alloc(op: Operation) -> None:
    t = op.results[0].type
    if not isinstance(t, T.MemRefType):
        raise op_error(op, "result must be a memref")
    dyn = op.opdef.operand_groups(op)["dynamicSizes"]
    if len(dyn) != sum(1 for d in t.shape if d == T.DYNAMIC):
        raise op_error(op, "dimension operand count does not equal memref dynamic dimension count")
    symbols = op.opdef.operand_groups(op)["symbolOperands"]
    expected = t.layout.value.num_symbols if isinstance(t.layout, A.AffineMapAttr) else 0
    if len(symbols) != expected:
        raise op_error(op, f"symbol operand count does not equal memref symbol count: expected {expected}, "
                           f"got {len(symbols)}")


def _alloc(name: str, summary: str) -> OpDef:
    return OpDef(f"memref.{name}", summary=summary,
                 operands=[("dynamicSizes", Variadic(C.Index)), ("symbolOperands", Variadic(C.Index))],
                 attributes=[("alignment", C.AnyIntAttr, True)], results=[("memref", C.AnyRankedMemRef)],
                 traits=(Traits.AttrSizedOperandSegments, Traits.MemoryEffects(("alloc",))),
                 assembly=CustomForm(_parse_alloc, _print_alloc), verify=_verify_alloc, result_names=[name])


ALLOC = _alloc("alloc", "memory allocation operation")
ALLOCA = _alloc("alloca", "stack memory allocation operation")


# ------------------------------------------------------------------ dealloc / load / store


def _parse_dealloc(p: FormParser) -> Operation:
    ref = p.parse_operand_ref()
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    return p.create_op(operands=[p.resolve_operand(ref, _memref_type(p))], attributes=attrs)


def _print_dealloc(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.print_op_attr_dict(op)
    pr.write(f" : {op.operands[0].type}")


DEALLOC = OpDef("memref.dealloc", summary="memory deallocation operation", operands=[("memref", C.AnyMemRef)],
                traits=(Traits.MemoryEffects(("free",)),), assembly=CustomForm(_parse_dealloc, _print_dealloc))


def parse_indexed_access(p: FormParser):
    """`%m[%i, %j] {attrs} : memref<...>`: the memref, index values, attributes and type."""
    ref = p.parse_operand_ref()
    idx = p.parse_operand_ref_list("[]")
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = _memref_type(p)
    return p.resolve_operand(ref, t), p.resolve_operands(idx, [T.index] * len(idx)), attrs, t


def print_indexed_access(pr: FormPrinter, memref, indices, op) -> None:
    pr.print_operand(memref)
    pr.write("[")
    pr.print_operands(indices)
    pr.write("]")
    pr.print_op_attr_dict(op)
    pr.write(f" : {memref.type}")


def _parse_load(p: FormParser) -> Operation:
    memref, idx, attrs, t = parse_indexed_access(p)
    return p.create_op("memref.load", [memref, *idx], [t.element_type], attrs)


def _print_load(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    print_indexed_access(pr, op.operands[0], op.operands[1:], op)


def _parse_store(p: FormParser) -> Operation:
    vref = p.parse_operand_ref()
    p.parse_punct(",")
    memref, idx, attrs, t = parse_indexed_access(p)
    value = p.resolve_operand(vref, t.element_type)
    return p.create_op("memref.store", [value, memref, *idx], attributes=attrs)


def _print_store(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.write(", ")
    print_indexed_access(pr, op.operands[1], op.operands[2:], op)


def _verify_access(op: Operation, memref, indices) -> None:
    t = memref.type
    if isinstance(t, T.MemRefType) and len(indices) != len(t.shape):
        raise op_error(op, "incorrect number of indices for load, expected "
                           f"{len(t.shape)} but got {len(indices)}")


LOAD = OpDef(
    "memref.load", summary="load operation",
    operands=[("memref", C.AnyMemRef), ("indices", Variadic(C.Index))],
    attributes=[("nontemporal", C.BoolAttr, True)], results=[("result", C.AnyType)],
    traits=(Traits.MemoryEffects(("read",)),), assembly=CustomForm(_parse_load, _print_load),
    verify=lambda op: _verify_access(op, op.operands[0], op.operands[1:]),
)
STORE = OpDef(
    "memref.store", summary="store operation",
    operands=[("value", C.AnyType), ("memref", C.AnyMemRef), ("indices", Variadic(C.Index))],
    attributes=[("nontemporal", C.BoolAttr, True)],
    traits=(Traits.MemoryEffects(("write",)),), assembly=CustomForm(_parse_store, _print_store),
    verify=lambda op: _verify_access(op, op.operands[1], op.operands[2:]),
)


# ------------------------------------------------------------------ casts, dim, rank, copy


def _cast_compatible(a: T.Type, b: T.Type) -> bool:
    """MLIR's memref.cast rule: one element type and memory space; ranked to
    ranked of one rank with agreeing static sizes and, when the layouts differ,
    agreeing static strides and offset; ranked to or from unranked, but not
    unranked to unranked."""
    if a.element_type is not b.element_type or a.memory_space != b.memory_space:  # type: ignore[attr-defined]
        return False
    if not isinstance(a, T.MemRefType) or not isinstance(b, T.MemRefType):
        return isinstance(a, T.MemRefType) or isinstance(b, T.MemRefType)
    if len(a.shape) != len(b.shape) or any(x != y and T.DYNAMIC not in (x, y) for x, y in zip(a.shape, b.shape)):
        return False
    if a.layout == b.layout:
        return True
    sa, sb = strides_and_offset(a), strides_and_offset(b)
    if sa is None or sb is None or len(sa[0]) != len(sb[0]):
        return False
    return all(x is None or y is None or x == y for x, y in zip((*sa[0], sa[1]), (*sb[0], sb[1])))


def _verify_cast(op: Operation) -> None:
    a, b = op.operands[0].type, op.results[0].type
    if not _cast_compatible(a, b):
        raise op_error(op, f"operand type '{a}' and result type '{b}' are cast incompatible")


CAST = OpDef("memref.cast", summary="memref cast operation", operands=[("source", C.AnyMemRef)],
             results=[("dest", C.AnyMemRef)], traits=(Traits.Pure,), assembly=CAST_FORM, verify=_verify_cast,
             result_names=["cast"])
MEMORY_SPACE_CAST = OpDef("memref.memory_space_cast", summary="memref memory space cast operation",
                          operands=[("source", C.AnyMemRef)], results=[("dest", C.AnyMemRef)],
                          traits=(Traits.Pure,), assembly=CAST_FORM, result_names=["memspacecast"])


def _parse_dim(p: FormParser) -> Operation:
    ref = p.parse_operand_ref()
    p.parse_punct(",")
    p.skip_ws()
    literal_pos = p.pos
    literal = p.parse_optional_integer()
    if literal is not None and not -(1 << 63) <= literal < (1 << 63):  # an index attribute in 2019
        raise p.error("integer constant out of range for attribute", literal_pos)
    index_ref = p.parse_operand_ref() if literal is None else None
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = p.parse_type()
    if literal is not None:  # 2019: the index is an attribute
        const = CONSTANT.build(result_types=[T.index], value=A.IntegerAttr(literal, T.index))
        p.materialized.append(const)
        index = const.results[0]
    else:
        index = p.resolve_operand(index_ref, T.index)
    return p.create_op("memref.dim", [p.resolve_operand(ref, t), index], [T.index], attrs)


def _print_dim(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operands(op.operands)
    pr.print_op_attr_dict(op)
    pr.write(f" : {op.operands[0].type}")


DIM = OpDef("memref.dim", summary="dimension index operation",
            operands=[("source", C.AnyMemRef), ("index", C.Index)], results=[("result", C.Index)],
            traits=(Traits.Pure,), assembly=CustomForm(_parse_dim, _print_dim), result_names=["dim"])


def _parse_rank(p: FormParser) -> Operation:
    ref = p.parse_operand_ref()
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    return p.create_op(operands=[p.resolve_operand(ref, p.parse_type())], result_types=[T.index], attributes=attrs)


RANK = OpDef("memref.rank", summary="rank operation", operands=[("memref", C.AnyMemRef)],
             results=[("result", C.Index)], traits=(Traits.Pure,),
             assembly=CustomForm(_parse_rank, _print_dealloc))


def _parse_copy(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    src = p.parse_type()
    p.parse_keyword("to")
    dst = p.parse_type()
    return p.create_op(operands=p.resolve_operands(refs, [src, dst]), attributes=attrs)


def _print_copy(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operands(op.operands)
    pr.print_op_attr_dict(op)
    pr.write(f" : {op.operands[0].type} to {op.operands[1].type}")


COPY = OpDef("memref.copy", summary="copy operation", operands=[("source", C.AnyMemRef), ("target", C.AnyMemRef)],
             traits=(Traits.MemoryEffects(("read", "write")),), assembly=CustomForm(_parse_copy, _print_copy))


# ------------------------------------------------------------------ mixed static/dynamic index lists


def parse_mixed_indices(p: FormParser) -> tuple[list, list[int]]:
    """`[%a, 4, %b]`: the SSA refs and the static values (dynamic ones marked)."""
    p.parse_punct("[")
    refs: list = []
    static: list[int] = []
    if not p.parse_optional_punct("]"):
        while True:
            n = p.parse_optional_integer()
            if n is None:
                refs.append(p.parse_operand_ref())
                static.append(_DYNAMIC_INDEX)
            else:
                static.append(n)
            if p.parse_optional_punct("]"):
                break
            p.parse_punct(",")
    return refs, static


def print_mixed_indices(pr: FormPrinter, values: Sequence, static: A.DenseArrayAttr) -> None:
    it = iter(values)
    parts = [pr.value_name(next(it)) if s == _DYNAMIC_INDEX else str(s) for s in static.values]
    pr.write("[" + ", ".join(parts) + "]")


_SUBVIEW_LISTS = ("offsets", "sizes", "strides")


def _parse_offsets_sizes_strides(p: FormParser, source_ref, prefixes: Sequence[str] = ("", "", "")):
    """Three mixed lists after optional keyword prefixes (`offset:`, ...)."""
    groups = []
    for i, prefix in enumerate(prefixes):
        if prefix:
            if i:
                p.parse_punct(",")
            p.parse_keyword(prefix)
            p.parse_punct(":")
        groups.append(parse_mixed_indices(p))
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    src = p.parse_type()
    p.parse_keyword("to")
    dst = p.parse_type()
    operands = [p.resolve_operand(source_ref, src)]
    for refs, _ in groups:
        operands += p.resolve_operands(refs, [T.index] * len(refs))
    for name, (refs, static) in zip(_SUBVIEW_LISTS, groups):
        attrs[f"static_{name}"] = A.DenseArrayAttr(T.i64, tuple(static))
    attrs["operandSegmentSizes"] = A.DenseArrayAttr(T.i32, (1, *(len(r) for r, _ in groups)))
    return p.create_op(operands=operands, result_types=[dst], attributes=attrs)


def _print_offsets_sizes_strides(pr: FormPrinter, op, prefixes: Sequence[str] = ("", "", ""), sep: str = " ") -> None:
    groups = op.opdef.operand_groups(op)
    for i, (name, prefix) in enumerate(zip(_SUBVIEW_LISTS, prefixes)):
        if i:
            pr.write(sep)
        if prefix:
            pr.write(f"{prefix}: ")
        print_mixed_indices(pr, groups[name], op.attr(f"static_{name}"))
    pr.print_op_attr_dict(op, elided=("operandSegmentSizes", "static_offsets", "static_sizes", "static_strides"))
    pr.write(f" : {op.operands[0].type} to {op.results[0].type}")


def _parse_subview(p: FormParser) -> Operation:
    return _parse_offsets_sizes_strides(p, p.parse_operand_ref())


def _print_subview(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    _print_offsets_sizes_strides(pr, op)


_REINTERPRET_PREFIXES = ("offset", "sizes", "strides")


def _parse_reinterpret_cast(p: FormParser) -> Operation:
    ref = p.parse_operand_ref()
    p.parse_keyword("to")
    return _parse_offsets_sizes_strides(p, ref, _REINTERPRET_PREFIXES)


def _print_reinterpret_cast(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.write(" to ")
    _print_offsets_sizes_strides(pr, op, _REINTERPRET_PREFIXES, sep=", ")


def _view_like(name: str, summary: str, form: CustomForm, hint: str) -> OpDef:
    return OpDef(f"memref.{name}", summary=summary,
                 operands=[("source", C.AnyMemRef), ("offsets", Variadic(C.Index)), ("sizes", Variadic(C.Index)),
                           ("strides", Variadic(C.Index))],
                 attributes=[(f"static_{n}", C.AnyAttr) for n in _SUBVIEW_LISTS],
                 results=[("result", C.AnyMemRef)], traits=(Traits.Pure, Traits.AttrSizedOperandSegments),
                 assembly=form, result_names=[hint])


SUBVIEW = _view_like("subview", "memref subview operation", CustomForm(_parse_subview, _print_subview), "subview")
REINTERPRET_CAST = _view_like("reinterpret_cast", "memref reinterpret cast operation",
                              CustomForm(_parse_reinterpret_cast, _print_reinterpret_cast), "reinterpret_cast")


def _parse_view(p: FormParser) -> Operation:
    ref = p.parse_operand_ref()
    shift = p.parse_operand_ref_list("[]")
    sizes = p.parse_operand_ref_list("[]")
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    src = p.parse_type()
    p.parse_keyword("to")
    dst = p.parse_type()
    operands = [p.resolve_operand(ref, src)] + p.resolve_operands(shift + sizes, [T.index] * (len(shift) + len(sizes)))
    return p.create_op(operands=operands, result_types=[dst], attributes=attrs)


def _print_view(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.write("[")
    pr.print_operand(op.operands[1])
    pr.write("][")
    pr.print_operands(op.operands[2:])
    pr.write("]")
    pr.print_op_attr_dict(op)
    pr.write(f" : {op.operands[0].type} to {op.results[0].type}")


VIEW = OpDef("memref.view", summary="memref view operation",
             operands=[("source", C.AnyMemRef), ("byte_shift", C.Index), ("sizes", Variadic(C.Index))],
             results=[("result", C.AnyMemRef)], traits=(Traits.Pure,),
             assembly=CustomForm(_parse_view, _print_view), result_names=["view"])


MEMREF = REGISTRY.dialect("memref", summary="Memref allocation, access, casts and views.")
MEMREF.add(ALLOC, ALLOCA, DEALLOC, LOAD, STORE, CAST, MEMORY_SPACE_CAST, DIM, RANK, COPY, SUBVIEW,
           REINTERPRET_CAST, VIEW)
_LEGACY = {"alloc": "alloc", "alloca": "alloca", "dealloc": "dealloc", "load": "load", "store": "store",
           "memref_cast": "cast", "dim": "dim", "rank": "rank"}
# 2019's `view` and `subview` meant something else (ir/dialects/std_era.py: `std.view`, `std.subview`).
for _old, _new in _LEGACY.items():
    REGISTRY.legacy_names[_old] = REGISTRY.legacy_names[f"std.{_old}"] = f"memref.{_new}"
