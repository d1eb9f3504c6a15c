"""`affine.dma_start` and `affine.dma_wait`: asynchronous copies whose subscripts are affine.

    affine.dma_start %src[%i + 3, %j], %dst[%k], %tag[%c0], %n [, %stride, %per_stride]
        : memref<40x128xf32>, memref<2x1024xf32, 2>, memref<1xi32>
    affine.dma_wait %tag[%c0], %n : memref<1xi32>

`dma_start` copies `%n` elements from the source, starting at its subscript,
to the destination, starting at its subscript (row-major order; the two need
not have the same rank), and marks completion in the tag memref element;
`dma_wait` blocks until the DMA marked at the tag is done.  Subscripts are
affine expressions over SSA names, as for `affine.load`; each access keeps its
map in `src_map`/`dst_map`/`tag_map` and its map's inputs as operands, so the
operands are `[src, src inputs..., dst, dst inputs..., tag, tag inputs..., n,
(stride, per_stride)]`.  MLIR's forms and verifier (index-typed operands that
are valid dims or symbols, the operand count, memref kinds), with two stricter
points stated here: each map has as many results as its memref has dimensions
(MLIR does not check it; a mismatched subscript has no meaning), and
`dma_wait` reads *and writes* memory (MLIR gives it a read of the tag only,
which lets a pass drop a wait nothing uses; here it keeps its place relative
to the accesses of the copied data).  `dma_start` reads and writes memory.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation, Value
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.affine_dims import get_affine_scope, is_valid_affine_index_operand
from egraft.ir.dialects.affine_forms import SSAExprParser, print_affine_exprs_of_ssa_ids, resolve_indices
from egraft.ir.dialects.affine_ops import AFFINE
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, Variadic
from egraft.ir.verifier import op_error

START_MAPS = ("src_map", "dst_map", "tag_map")
_ROLES = ("src", "dst", "tag")
_KIND = {"src": "source", "dst": "destination", "tag": "tag"}


def _parse_subscripted(p: FormParser) -> tuple:
    """`%m[affine exprs over SSA names]` -> (memref ref, map, refs of the map's inputs)."""
    ref = p.parse_operand_ref()
    sp = SSAExprParser(p)
    amap, refs = sp.map_and_refs(sp.expr_list("[", "]"))
    return ref, amap, refs


def _print_subscripted(pr: FormPrinter, memref: Value, amap, inputs: Sequence[Value]) -> None:
    pr.print_operand(memref)
    pr.write("[")
    print_affine_exprs_of_ssa_ids(pr, amap, inputs)
    pr.write("]")


def _resolve_access(p: FormParser, access: tuple, t: T.Type) -> list[Value]:
    ref, amap, refs = access
    return [p.resolve_operand(ref, t), *resolve_indices(p, refs)]


def access_groups(op: Operation, names: Sequence[str]) -> tuple[list[tuple[Value, list[Value]]], list[Value]]:
    """The (memref, map inputs) of each access named by `names`, and the operands after them."""
    ops, groups, i = op.operands, [], 0
    for name in names:
        attr = op.attr(name)
        n = attr.value.num_dims + attr.value.num_symbols if isinstance(attr, A.AffineMapAttr) else 0
        groups.append((ops[i], list(ops[i + 1:i + 1 + n])))
        i += 1 + n
    return groups, list(ops[i:])


# ------------------------------------------------------------------ affine.dma_start


def _parse_dma_start(p: FormParser) -> Operation:
    accesses = []
    for i in range(3):
        if i:
            p.parse_punct(",")
        accesses.append(_parse_subscripted(p))
    p.parse_punct(",")
    count = p.parse_operand_ref()
    strides = []  # MLIR's trailing operand list: `, %s, %e`, or a lone `,` before the types
    if p.parse_optional_punct(","):
        while (ref := p.parse_optional_operand_ref()) is not None:
            strides.append(ref)
            if not p.parse_optional_punct(","):
                break
    if len(strides) not in (0, 2):
        raise p.error("expected two stride related operands", getattr(p, "op_start", None))
    attrs = p.parse_optional_attr_dict()
    types = p.parse_colon_type_list()
    if len(types) != 3:
        raise p.error("expected three types", getattr(p, "op_start", None))
    operands: list[Value] = []
    for access, t, name in zip(accesses, types, START_MAPS):
        operands += _resolve_access(p, access, t)
        attrs[name] = A.AffineMapAttr(access[1])
    operands += resolve_indices(p, [count, *strides])
    return p.create_op(operands=operands, attributes=attrs)


def _print_dma_start(pr: FormPrinter, op: Operation) -> None:
    groups, rest = access_groups(op, START_MAPS)
    pr.write(pr.op_name_text(op) + " ")
    for (memref, inputs), name in zip(groups, START_MAPS):
        _print_subscripted(pr, memref, op.attr(name).value, inputs)
        pr.write(", ")
    pr.print_operands(rest)
    pr.print_op_attr_dict(op, elided=START_MAPS)
    pr.write(" : " + ", ".join(str(memref.type) for memref, _ in groups))


def _verify_access(op: Operation, role: str, memref: Value, amap, inputs: Sequence[Value], scope) -> None:
    if not isinstance(memref.type, T.MemRefType):
        raise op_error(op, f"expected DMA {_KIND[role]} to be of memref type")
    if len(amap.results) != memref.type.rank:
        raise op_error(op, f"{role} map num results must equal {_KIND[role]} memref rank")
    prefix = f"{role} " if op.name == "affine.dma_start" else ""  # MLIR's dma_wait names no role
    for v in inputs:
        if v.type is not T.index:
            raise op_error(op, f"{prefix}index to {op.name[len('affine.'):]} must have 'index' type")
        if not is_valid_affine_index_operand(v, scope):
            raise op_error(op, f"{prefix}index must be a dimension or symbol identifier")


def _verify_dma_start(op: Operation) -> None:
    groups, rest = access_groups(op, START_MAPS)
    if len(rest) not in (1, 3):
        raise op_error(op, "incorrect number of operands")
    scope = get_affine_scope(op)
    for (memref, inputs), name, role in zip(groups, START_MAPS, _ROLES):
        _verify_access(op, role, memref, op.attr(name).value, inputs, scope)


# ------------------------------------------------------------------ affine.dma_wait


def _parse_dma_wait(p: FormParser) -> Operation:
    access = _parse_subscripted(p)
    p.parse_punct(",")
    count = p.parse_operand_ref()
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = p.parse_type()
    operands = _resolve_access(p, access, t) + resolve_indices(p, [count])
    attrs["tag_map"] = A.AffineMapAttr(access[1])
    return p.create_op(operands=operands, attributes=attrs)


def _print_dma_wait(pr: FormPrinter, op: Operation) -> None:
    [(tag, inputs)], rest = access_groups(op, ("tag_map",))
    pr.write(pr.op_name_text(op) + " ")
    _print_subscripted(pr, tag, op.attr("tag_map").value, inputs)
    pr.write(", ")
    pr.print_operands(rest)
    pr.print_op_attr_dict(op, elided=("tag_map",))
    pr.write(f" : {tag.type}")


def _verify_dma_wait(op: Operation) -> None:
    [(tag, inputs)], rest = access_groups(op, ("tag_map",))
    if len(rest) != 1:
        raise op_error(op, "incorrect number of operands")
    _verify_access(op, "tag", tag, op.attr("tag_map").value, inputs, get_affine_scope(op))


_EFFECTS = (Traits.MemoryEffects(("read", "write")),)
DMA_START = OpDef(
    "affine.dma_start",
    summary="affine DMA start operation",
    description="Starts a copy of a number of elements between two memrefs; completion is marked in a tag.",
    operands=[("operands", Variadic(C.AnyType))],
    attributes=[(name, C.AffineMapAttr) for name in START_MAPS],
    traits=_EFFECTS,
    assembly=CustomForm(_parse_dma_start, _print_dma_start),
    verify=_verify_dma_start,
)
DMA_WAIT = OpDef(
    "affine.dma_wait",
    summary="affine DMA wait operation",
    description="Blocks until the DMA whose completion is marked at the tag element is done.",
    operands=[("operands", Variadic(C.AnyType))],
    attributes=[("tag_map", C.AffineMapAttr)],
    traits=_EFFECTS,
    assembly=CustomForm(_parse_dma_wait, _print_dma_wait),
    verify=_verify_dma_wait,
)

AFFINE.add(DMA_START, DMA_WAIT)
