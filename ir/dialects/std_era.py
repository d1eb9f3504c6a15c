"""2019's `std` ops: the spellings that kept their meaning, and the ops that did not.

The parser consults `REGISTRY.legacy_names` for a name it does not know (custom
and generic forms alike); the op is built, verified and printed under today's
name.  Spellings that moved with a dialect live with that dialect (`arith.py`:
`addi`, `constant`, `cmpi "slt"`; `memref.py`: `alloc`, `load`, `memref_cast`,
`dim`; `cf.py`: `br`, `cond_br`; `func.py`: `func`, `return`, `call`); this
module holds the rest:

| 2019 | here |
| --- | --- |
| `tf_executor.SwitchN %d, %i of N` | `tf_executor._SwitchN` (renamed in 2020; same form) |
| `affine.terminator` | `affine.yield` (without operands) |
| `view`, `subview` | `std.view`, `std.subview`: 2019's meaning has no spelling today |
| `extract_element`, `splat`, `dma_start`, `dma_wait` | `std.*` records: their dialects are not in egraft |

The `std.*` records keep 2019's forms and rules and print in that form.
Other 2019 ops egraft lacks (`loop.for`, `std.exp`, `absf`, `tensor_load`,
`prefetch`, the `_tf` control dialect) are not read: in a 2019-syntax file
those of a dialect egraft lacks (`loop`, `_tf`) read as unregistered ops in
the generic form; other `std.*` names are refused, as 2019's closed `std`
dialect refused ops it did not know.  The 2019 verifier's rules for the ops
that kept their names are in ir/dialects/std_era_rules.py.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.std_era_rules import ERA_2019_CHECKS, check_subview, check_view, same_memory_space
from egraft.ir.dialects import tf_executor  # noqa: F401  (registers tf_executor._SwitchN first)
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, Variadic
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error

__all__ = ["ERA_2019_CHECKS", "STD_ERA_NAMES"]  # the rules are re-exported for egraft-opt

STD_ERA_NAMES = {
    "tf_executor.SwitchN": "tf_executor._SwitchN",
    "affine.terminator": "affine.yield",  # 2019's (operand-less) end of affine.for/if bodies
}

for _old, _new in STD_ERA_NAMES.items():
    assert _new in REGISTRY.ops, _new
    REGISTRY.legacy_names[_old] = _new


# ------------------------------------------------------------------ 2019 view and subview records
#
# 2019's `view %buf[offset?][sizes]` and `subview %m[offsets][sizes][strides]`
# have no faithful spelling today: their offset counted elements of a strided
# result layout (today's `memref.view` takes a byte shift and an identity
# result), and their lists were each empty (static, read from the result type)
# or one value per dimension (today's `memref.subview` needs a static entry per
# dimension).  So they read as records of their own, `std.view` and
# `std.subview`, verified by 2019's rules above and printed in 2019's form.


def _parse_2019_view(p: FormParser) -> Operation:
    source = p.parse_operand_ref()
    lists = [p.parse_operand_ref_list("[]") for _ in range(2 if p.op_name == "std.view" else 3)]
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    src = p.parse_type()
    p.parse_keyword("to")
    dst = p.parse_type()
    operands = [p.resolve_operand(source, src)]
    for refs in lists:
        operands += p.resolve_operands(refs, [T.index] * len(refs))
    attrs["operandSegmentSizes"] = A.DenseArrayAttr(T.i32, (1, *(len(r) for r in lists)))
    return p.create_op(operands=operands, result_types=[dst], attributes=attrs)


def _print_2019_view(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    for name, values in op.opdef.operand_groups(op).items():
        if name != "source":
            pr.write("[")
            pr.print_operands(values)
            pr.write("]")
    pr.print_op_attr_dict(op, elided=("operandSegmentSizes",))
    pr.write(f" : {op.operands[0].type} to {op.results[0].type}")


_FORM_2019 = CustomForm(_parse_2019_view, _print_2019_view)

STD_VIEW = OpDef("std.view", summary="2019 view of a byte buffer as a strided memref",
                 operands=[("source", C.AnyMemRef), ("offset", Variadic(C.Index)),
                           ("sizes", Variadic(C.Index))],
                 results=[("result", C.AnyMemRef)], traits=(Traits.Pure, Traits.AttrSizedOperandSegments),
                 assembly=_FORM_2019, verify=check_view, result_names=["view"])
STD_SUBVIEW = OpDef("std.subview", summary="2019 strided subview of a memref",
                    operands=[("source", C.AnyMemRef), ("offsets", Variadic(C.Index)),
                              ("sizes", Variadic(C.Index)), ("strides", Variadic(C.Index))],
                    results=[("result", C.AnyMemRef)], traits=(Traits.Pure, Traits.AttrSizedOperandSegments),
                    assembly=_FORM_2019, verify=check_subview, result_names=["subview"])

STD = REGISTRY.dialect("std", summary="2019's standard ops with no counterpart here (view, subview, "
                                      "extract_element, splat, dma_start, dma_wait); the others read as "
                                      "today's arith/func/memref/cf ops.")
STD.add(STD_VIEW, STD_SUBVIEW)
REGISTRY.legacy_names["view"] = "std.view"
REGISTRY.legacy_names["subview"] = "std.subview"


# ------------------------------------------------------------------ other 2019 ops without a dialect here
#
# `extract_element` (today `tensor.extract` / `vector.extractelement`), `splat`
# (today `vector.splat` / `tensor.splat`) and the DMA pair (gone) belong to
# dialects egraft does not have; they read as `std.` records with 2019's
# forms and rules, so 2019 text using them is read, checked and printed.


def _attrs_and_shaped_type(p: FormParser) -> tuple[dict, T.ShapedType]:
    """`{attrs} : shaped-type`, the tail of extract_element's and splat's forms."""
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    pos = p.pos
    t = p.parse_type()
    if not isinstance(t, T.ShapedType):
        raise p.error("invalid kind of type specified", pos)
    return attrs, t


def _parse_extract_element(p: FormParser) -> Operation:
    aggregate = p.parse_operand_ref()
    indices = p.parse_operand_ref_list("[]")
    attrs, t = _attrs_and_shaped_type(p)
    operands = [p.resolve_operand(aggregate, t)] + p.resolve_operands(indices, [T.index] * len(indices))
    return p.create_op(operands=operands, result_types=[t.element_type], attributes=attrs)


def _print_extract_element(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.write("[")
    pr.print_operands(op.operands[1:])
    pr.write("]")
    pr.print_op_attr_dict(op)
    pr.write(f" : {op.operands[0].type}")


def _verify_extract_element(op: Operation) -> None:
    aggregate = op.operands[0].type
    if op.results[0].type is not aggregate.element_type:  # type: ignore[attr-defined]
        raise op_error(op, "result type must match element type of aggregate")
    shape = aggregate.shape  # type: ignore[attr-defined]
    if shape is not None and len(shape) != len(op.operands) - 1:
        raise op_error(op, "incorrect number of indices for extract_element")


STD_EXTRACT_ELEMENT = OpDef(
    "std.extract_element", summary="2019 element read from a vector or tensor",
    operands=[("aggregate", C.any_of("vector of any type values or tensor of any type values",
                                     C.AnyVector, C.AnyTensor)),
              ("indices", Variadic(C.Index))],
    results=[("result", C.AnyType)], traits=(Traits.Pure,),
    assembly=CustomForm(_parse_extract_element, _print_extract_element), verify=_verify_extract_element)


def _parse_splat(p: FormParser) -> Operation:
    ref = p.parse_operand_ref()
    attrs, t = _attrs_and_shaped_type(p)
    return p.create_op(operands=[p.resolve_operand(ref, t.element_type)], result_types=[t], attributes=attrs)


def _print_splat(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.print_op_attr_dict(op)
    pr.write(f" : {op.results[0].type}")


def _verify_splat(op: Operation) -> None:
    if op.operands[0].type is not op.results[0].type.element_type:  # type: ignore[attr-defined]
        raise op_error(op, "operand should be of elemental type of result type")


STD_SPLAT = OpDef(
    "std.splat", summary="2019 vector or tensor of one repeated scalar",
    operands=[("input", C.any_of("integer or float type", C.AnyInteger, C.AnyFloat))],
    results=[("aggregate", C.any_of(
        "vector of any type values or statically shaped tensor of any type values", C.AnyVector,
        C.Constraint("", lambda t: isinstance(t, T.RankedTensorType) and t.has_static_shape)))],
    traits=(Traits.Pure,), assembly=CustomForm(_parse_splat, _print_splat), verify=_verify_splat)


def _dma_memref(p: FormParser, t: T.Type, what: str) -> T.MemRefType:
    if not isinstance(t, T.MemRefType):
        raise p.error(f"expected {what} to be of memref type", getattr(p, "op_start", None))
    return t


def _parse_dma_start(p: FormParser) -> Operation:
    """`dma_start %src[...], %dst[...], %n, %tag[...] [, %stride, %per_stride] : T, T, T`
    (2019 resolved the operands, then checked the types, at the op's name)."""
    parts = []
    for i in range(3):
        if i:
            p.parse_punct(",")
        parts.append((p.parse_operand_ref(), p.parse_operand_ref_list("[]")))
        if i == 1:
            p.parse_punct(",")
            count = p.parse_operand_ref()
    strides = []
    while p.parse_optional_punct(","):
        strides.append(p.parse_operand_ref())
    if len(strides) not in (0, 2):
        raise p.error("expected two stride related operands", getattr(p, "op_start", None))
    attrs = p.parse_optional_attr_dict()
    types = p.parse_colon_type_list()
    if len(types) != 3:
        raise p.error("fewer/more types expected", getattr(p, "op_start", None))
    operands = []
    for (ref, indices), t in zip(parts, types):
        operands.append(p.resolve_operand(ref, t))
        operands += p.resolve_operands(indices, [T.index] * len(indices))
        if ref is parts[1][0]:
            operands.append(p.resolve_operand(count, T.index))
    memrefs = [_dma_memref(p, t, what) for t, what in zip(types, ("source", "destination", "tag"))]
    operands += p.resolve_operands(strides, [T.index] * len(strides))
    if len(parts[0][1]) != memrefs[0].rank or len(parts[1][1]) != memrefs[1].rank:
        raise p.error("memref rank not equal to indices count", getattr(p, "op_start", None))
    if len(parts[2][1]) != memrefs[2].rank:
        raise p.error("tag memref rank not equal to indices count", getattr(p, "op_start", None))
    return p.create_op(operands=operands, attributes=attrs)


def _dma_start_groups(op: Operation) -> list[list]:
    """[src, src indices], [dst, dst indices, count], [tag, tag indices], [strides]."""
    ops, groups, i = list(op.operands), [], 0
    for extra in (0, 1, 0):
        rank = getattr(ops[i].type, "rank", 0) if i < len(ops) else 0
        groups.append(ops[i:i + 1 + rank + extra])
        i += 1 + rank + extra
    groups.append(ops[i:])
    return groups


def _print_dma_start(pr: FormPrinter, op: Operation) -> None:
    (src, *src_idx), (dst, *dst_idx_n), (tag, *tag_idx), strides = _dma_start_groups(op)
    pieces = []
    for mem, idx in ((src, src_idx), (dst, dst_idx_n[:-1]), (tag, tag_idx)):
        pieces.append(f"{pr.value_name(mem)}[{', '.join(pr.value_name(v) for v in idx)}]")
    pieces.insert(2, pr.value_name(dst_idx_n[-1]))
    pieces += [pr.value_name(v) for v in strides]
    pr.write(f"{pr.op_name_text(op)} {', '.join(pieces)}")
    pr.print_op_attr_dict(op)
    pr.write(f" : {src.type}, {dst.type}, {tag.type}")


def _verify_dma_start(op: Operation) -> None:
    groups = _dma_start_groups(op)
    if any(not g or not isinstance(g[0].type, T.MemRefType) for g in groups[:3]):
        # The custom form cannot build this; the generic form can (2019 did not check it).
        raise op_error(op, "expected source, destination and tag to be of memref type")
    src, dst = groups[0][0].type, groups[1][0].type
    if same_memory_space(src, dst):  # type: ignore[arg-type]
        raise op_error(op, "DMA should be between different memory spaces")
    if len(groups[3]) not in (0, 2):
        raise op_error(op, "incorrect number of operands")


def _parse_dma_wait(p: FormParser) -> Operation:
    """`dma_wait %tag[...], %n : T` (the type checked after resolving, at the op's name)."""
    tag = p.parse_operand_ref()
    indices = p.parse_operand_ref_list("[]")
    p.parse_punct(",")
    count = p.parse_operand_ref()
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = p.parse_type()
    operands = [p.resolve_operand(tag, t)] + p.resolve_operands(indices, [T.index] * len(indices))
    operands.append(p.resolve_operand(count, T.index))
    if len(indices) != _dma_memref(p, t, "tag").rank:
        raise p.error("tag memref rank not equal to indices count", getattr(p, "op_start", None))
    return p.create_op(operands=operands, attributes=attrs)


def _print_dma_wait(pr: FormPrinter, op: Operation) -> None:
    tag, *rest = op.operands
    pr.write(f"{pr.op_name_text(op)} {pr.value_name(tag)}[{', '.join(pr.value_name(v) for v in rest[:-1])}], "
             f"{pr.value_name(rest[-1])}")
    pr.print_op_attr_dict(op)
    pr.write(f" : {tag.type}")


_DMA_EFFECTS = (Traits.MemoryEffects(("read", "write")),)
STD_DMA_START = OpDef("std.dma_start", summary="2019 asynchronous copy between memory spaces",
                      operands=[("operands", Variadic(C.AnyType))], traits=_DMA_EFFECTS,
                      assembly=CustomForm(_parse_dma_start, _print_dma_start), verify=_verify_dma_start)
STD_DMA_WAIT = OpDef("std.dma_wait", summary="2019 wait for a DMA's tag",
                     operands=[("operands", Variadic(C.AnyType))], traits=_DMA_EFFECTS,
                     assembly=CustomForm(_parse_dma_wait, _print_dma_wait))

STD.add(STD_EXTRACT_ELEMENT, STD_SPLAT, STD_DMA_START, STD_DMA_WAIT)
for _name in ("extract_element", "splat", "dma_start", "dma_wait"):
    REGISTRY.legacy_names[_name] = f"std.{_name}"
