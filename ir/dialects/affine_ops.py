"""The affine dialect: loops, conditionals, accesses and index arithmetic
whose bounds and subscripts are affine maps of dimension and symbol values.

`ir/core/affine.py` holds the expressions, maps and sets themselves.  This
module holds `affine.apply`/`min`/`max`, `affine.if`, `delinearize_index`, the
loads and stores, and the dialect; `affine_loops.py` the loops and their
`affine.yield`; `affine_forms.py` the assembly pieces and dim/symbol checks they
share.  Custom forms print maps the way MLIR does, subscripts inline over SSA
names (`%A[%i + 1, symbol(%n)]`); verifiers apply the dim/symbol rules of
`affine_dims` with MLIR's wording.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation, Value
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.affine_dims import get_affine_scope, is_valid_affine_index_operand
from egraft.ir.dialects.affine_forms import (SSAExprParser, parse_dim_and_symbol_list,
                                             print_affine_exprs_of_ssa_ids, print_dim_and_symbol_list,
                                             resolve_indices, verify_dims_and_symbols)
from egraft.ir.dialects.affine_loops import FOR, PARALLEL, YIELD, build_yield
from egraft.ir.dialects.region_forms import parse_then_else, print_then_else
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error


# ------------------------------------------------------------------ affine.apply / min / max


def _parse_map_op(p: FormParser) -> Operation:
    pos = p.pos
    attr = p.parse_attribute()
    if not isinstance(attr, A.AffineMapAttr):
        raise p.error("expected affine map", pos)
    dims, syms = parse_dim_and_symbol_list(p)
    if p.op_name == "affine.apply" and (len(dims) != attr.value.num_dims or len(syms) != attr.value.num_symbols):
        raise p.error("dimension or symbol index mismatch", pos)
    attrs = p.parse_optional_attr_dict()
    attrs["map"] = attr
    return p.create_op(operands=resolve_indices(p, dims + syms), result_types=[T.index], attributes=attrs)


def _print_map_op(pr: FormPrinter, op: Operation) -> None:
    amap = op.attr("map")
    pr.write(pr.op_name_text(op) + " ")
    pr.print_attribute(amap)
    print_dim_and_symbol_list(pr, op.operands, amap.value.num_dims)
    pr.print_op_attr_dict(op, elided=("map",))


def _verify_map_op(op: Operation) -> None:
    amap = op.attr("map").value
    if len(op.operands) != amap.num_dims + amap.num_symbols:
        raise op_error(op, "operand count and affine map dimension and symbol count must match")
    if op.name == "affine.apply" and len(amap.results) != 1:
        raise op_error(op, "mapping must produce one value")
    if op.name != "affine.apply":
        verify_dims_and_symbols(op, op.operands, amap.num_dims)


def _map_op(name: str, summary: str) -> OpDef:
    return OpDef(f"affine.{name}", summary=summary, operands=[("mapOperands", Variadic(C.Index))],
                 attributes=[("map", C.AffineMapAttr)], results=[("result", C.Index)], traits=(Traits.Pure,),
                 assembly=CustomForm(_parse_map_op, _print_map_op), verify=_verify_map_op)


APPLY = _map_op("apply", "affine apply operation")
MIN = _map_op("min", "min operation")
MAX = _map_op("max", "max operation")


# ------------------------------------------------------------------ affine.if


def _parse_if(p: FormParser) -> Operation:
    pos = p.pos
    attr = p.parse_attribute()
    if not isinstance(attr, A.IntegerSetAttr):
        raise p.error("expected integer set attribute", pos)
    dims, syms = parse_dim_and_symbol_list(p)
    if len(dims) != attr.value.num_dims:
        raise p.error("dim operand count and integer set dim count must match", pos)
    if len(syms) != attr.value.num_symbols:
        raise p.error("symbol operand count and integer set symbol count must match", pos)
    result_types = p.parse_function_result_types() if p.parse_optional_punct("->") else []
    regions = parse_then_else(p, build_yield)
    attrs = p.parse_optional_attr_dict()
    attrs["condition"] = attr
    return p.create_op("affine.if", resolve_indices(p, dims + syms), result_types, attrs, regions=regions)


def _print_if(pr: FormPrinter, op: Operation) -> None:
    cond = op.attr("condition")
    pr.write(pr.op_name_text(op) + " ")
    pr.print_attribute(cond)
    print_dim_and_symbol_list(pr, op.operands, cond.value.num_dims)
    pr.print_arrow_types(op.result_types)
    print_then_else(pr, op)
    pr.print_op_attr_dict(op, elided=("condition",))


def _verify_if(op: Operation) -> None:
    cond = op.attr("condition").value
    if len(op.operands) != cond.num_dims + cond.num_symbols:
        raise op_error(op, "operand count and condition integer set dimension and symbol count must match")
    for i, region in enumerate(op.regions):
        if region.blocks and region.blocks[0].args:
            raise op_error(op, f"region #{i} should have no arguments")
    verify_dims_and_symbols(op, op.operands, cond.num_dims)


IF = OpDef(
    "affine.if",
    summary="if-then-else operation",
    operands=[("operands", Variadic(C.AnyType))],
    attributes=[("condition", C.IntegerSetAttr)],
    results=[("results", Variadic(C.AnyType))],
    regions=[RegionDef("thenRegion", single_block=True), RegionDef("elseRegion", single_block=True)],
    traits=(Traits.RecursiveMemoryEffects, Traits.SingleBlockImplicitTerminator("affine.yield")),
    assembly=CustomForm(_parse_if, _print_if),
    verify=_verify_if,
)


# ------------------------------------------------------------------ affine.delinearize_index


def _parse_delinearize(p: FormParser) -> Operation:
    index = p.parse_operand_ref()
    p.parse_keyword("into")
    basis = p.parse_operand_ref_list("()")
    attrs = p.parse_optional_attr_dict()
    result_types = p.parse_colon_type_list()
    return p.create_op(operands=resolve_indices(p, [index, *basis]), result_types=result_types, attributes=attrs)


def _print_delinearize(pr: FormPrinter, op: Operation) -> None:
    pr.write(f"{pr.op_name_text(op)} ")
    pr.print_operand(op.operands[0])
    pr.write(" into (")
    pr.print_operands(op.operands[1:])
    pr.write(")")
    pr.print_op_attr_dict(op)
    pr.write(" : ")
    pr.print_types(op.result_types)


def _verify_delinearize(op: Operation) -> None:
    basis = op.operands[1:]
    if not basis:
        raise op_error(op, "basis should not be empty")
    if len(op.results) != len(basis):
        raise op_error(op, "should return an index for each basis element")


DELINEARIZE_INDEX = OpDef(
    "affine.delinearize_index",
    summary="delinearize an index",
    description="Splits a linear index into one index per basis element (the sizes of a row-major "
                "iteration space), as the operands of the basis give them.",
    operands=[("linear_index", C.Index), ("basis", Variadic(C.Index))],
    results=[("multi_index", Variadic(C.Index))],
    traits=(Traits.Pure,),
    assembly=CustomForm(_parse_delinearize, _print_delinearize),
    verify=_verify_delinearize,
)


# ------------------------------------------------------------------ loads and stores


def _parse_access(p: FormParser):
    """`%A[exprs] {attrs} : memref<...>[, vector<...>]` of a load or store."""
    ref = p.parse_operand_ref()
    sp = SSAExprParser(p)
    exprs = sp.expr_list("[", "]")
    amap, idx_refs = sp.map_and_refs(exprs)
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = p.parse_type()
    if not isinstance(t, T.MemRefType):
        raise p.error("expected memref type")
    vector = None
    if p.op_name.startswith("affine.vector_"):
        p.parse_punct(",")
        vector = p.parse_type()
    attrs["map"] = A.AffineMapAttr(amap)
    return p.resolve_operand(ref, t), resolve_indices(p, idx_refs), attrs, t, vector


def _print_access(pr: FormPrinter, op, memref: Value, indices: Sequence[Value], vector: T.Type | None) -> None:
    pr.print_operand(memref)
    pr.write("[")
    print_affine_exprs_of_ssa_ids(pr, op.attr("map").value, indices)
    pr.write("]")
    pr.print_op_attr_dict(op, elided=("map",))
    pr.write(f" : {memref.type}")
    if vector is not None:
        pr.write(f", {vector}")


def _parse_load(p: FormParser) -> Operation:
    memref, idx, attrs, t, vector = _parse_access(p)
    return p.create_op(operands=[memref, *idx], result_types=[vector or t.element_type], attributes=attrs)


def _print_load(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    vector = op.results[0].type if op.name == "affine.vector_load" else None
    _print_access(pr, op, op.operands[0], op.operands[1:], vector)


def _parse_store(p: FormParser) -> Operation:
    vref = p.parse_operand_ref()
    p.parse_punct(",")
    memref, idx, attrs, t, vector = _parse_access(p)
    value = p.resolve_operand(vref, vector or t.element_type)
    return p.create_op(operands=[value, memref, *idx], attributes=attrs)


def _print_store(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.write(", ")
    vector = op.operands[0].type if op.name == "affine.vector_store" else None
    _print_access(pr, op, op.operands[1], op.operands[2:], vector)


def _verify_indexing(op: Operation, memref: Value, indices: Sequence[Value]) -> None:
    amap = op.attr("map").value
    t = memref.type
    if len(amap.results) != len(t.shape):
        raise op_error(op, "affine map num results must equal memref rank")
    if amap.num_dims + amap.num_symbols != len(indices):
        raise op_error(op, "expects as many subscripts as affine map inputs")
    scope = get_affine_scope(op)
    for v in indices:
        if v.type is not T.index:
            raise op_error(op, "index to load must have 'index' type")
        if not is_valid_affine_index_operand(v, scope):
            raise op_error(op, "index must be a dimension or symbol identifier")


def _verify_vector_type(op: Operation, memref: Value, vector: T.Type) -> None:
    if not isinstance(vector, T.VectorType) or memref.type.element_type is not vector.element_type:
        raise op_error(op, "requires memref and vector types of the same elemental type")


def _verify_load(op: Operation) -> None:
    memref = op.operands[0]
    if op.name == "affine.vector_load":
        _verify_vector_type(op, memref, op.results[0].type)
    elif op.results[0].type is not memref.type.element_type:
        raise op_error(op, "result type must match element type of memref")
    _verify_indexing(op, memref, op.operands[1:])


def _verify_store(op: Operation) -> None:
    value, memref = op.operands[0], op.operands[1]
    if op.name == "affine.vector_store":
        _verify_vector_type(op, memref, value.type)
    elif value.type is not memref.type.element_type:
        raise op_error(op, "value to store must have the same type as memref element type")
    _verify_indexing(op, memref, op.operands[2:])


def _load(name: str, summary: str) -> OpDef:
    return OpDef(f"affine.{name}", summary=summary,
                 operands=[("memref", C.AnyRankedMemRef), ("indices", Variadic(C.Index))],
                 attributes=[("map", C.AffineMapAttr)], results=[("result", C.AnyType)],
                 traits=(Traits.MemoryEffects(("read",)),), assembly=CustomForm(_parse_load, _print_load),
                 verify=_verify_load)


def _store(name: str, summary: str) -> OpDef:
    return OpDef(f"affine.{name}", summary=summary,
                 operands=[("value", C.AnyType), ("memref", C.AnyRankedMemRef), ("indices", Variadic(C.Index))],
                 attributes=[("map", C.AffineMapAttr)], traits=(Traits.MemoryEffects(("write",)),),
                 assembly=CustomForm(_parse_store, _print_store), verify=_verify_store)


LOAD = _load("load", "affine load operation")
STORE = _store("store", "affine store operation")
VECTOR_LOAD = _load("vector_load", "affine vector load operation")
VECTOR_STORE = _store("vector_store", "affine vector store operation")


AFFINE = REGISTRY.dialect("affine", summary="Affine loops, conditionals and accesses with dim/symbol rules.")
AFFINE.add(APPLY, MIN, MAX, YIELD, FOR, PARALLEL, IF, DELINEARIZE_INDEX, LOAD, STORE, VECTOR_LOAD, VECTOR_STORE)
