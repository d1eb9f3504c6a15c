"""`affine.graybox`: a region that opens a new affine scope in place.

As the graybox RFC specifies it (with the results added in review): the op
takes memrefs only, bound 1:1 to its entry block's arguments, holds a
function-like body of one or more blocks ending in `return`, and yields the
returned values as its results.  It is an AffineScope but not isolated from
above: any non-memref value that dominates it may be used inside (and is a
symbol there), while memrefs must come in as operands, so affine analyses
see every memref a graybox touches on its operand list.

    %v = affine.graybox [%rI, %rM] = (%I, %M) : (memref<128xi32>, memref<1024xf32>) -> f32 {
      ...
      return %x : f32
    }
"""

from __future__ import annotations

from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.affine_dims import GRAYBOX, walk_affine
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error


def _parse_graybox(p: FormParser) -> Operation:
    """Today's `[%args] = (%memrefs) : (types) -> (results)`, or the RFC's
    draft `[%A, %S] : (types)` (just `[]` when nothing is captured), whose
    region names each captured memref as the operand is named outside: the
    entry arguments take the operands' names and shadow them inside."""
    args = p.parse_operand_ref_list("[]")
    shadowing = not p.parse_optional_punct("=")
    refs = args if shadowing else p.parse_operand_ref_list("()")
    colon = p.parse_optional_punct(":")
    if not colon and not shadowing:
        p.parse_punct(":")  # reports the missing colon
    p.skip_ws()
    pos = p.pos
    if shadowing:
        inputs = p.parse_paren_type_list() if colon else []
        results = p.parse_function_result_types() if p.parse_optional_punct("->") else []
        ft = T.FunctionType(tuple(inputs), tuple(results))
    else:
        ft = p.parse_function_type()
    if len(ft.inputs) != len(refs):
        raise p.error(f"{len(refs)} operands present, but expected {len(ft.inputs)}", pos)
    if len(args) != len(refs):
        raise p.error("region argument count does not match operand count", pos)
    operands = p.resolve_operands(refs, ft.inputs)
    region = p.parse_region([(a, t, None) for a, t in zip(args, ft.inputs)], default_dialect="func",
                            enable_name_shadowing=shadowing)
    attrs = p.parse_optional_attr_dict()
    return p.create_op(GRAYBOX, operands, ft.results, attrs, regions=[region])


def _print_graybox(pr: FormPrinter, op: Operation) -> None:
    region = op.regions[0]
    args = region.blocks[0].args if region.blocks else []
    pr.write(f"{pr.op_name_text(op)} [")
    pr.print_operands(args)
    pr.write("] = (")
    pr.print_operands(op.operands)
    pr.write(") : ")
    pr.print_function_type(op.operand_types, op.result_types)
    pr.write(" ")
    pr.print_region(region, print_entry_args=False, default_dialect="func")
    pr.print_op_attr_dict(op)


def _is_captured(value, op: Operation) -> bool:
    """Defined inside `op` (a region argument, or by an op in its body)."""
    block = value.parent_block
    while block is not None:
        owner = block.parent_op
        if owner is op:
            return True
        if owner is None:
            return False
        block = owner.parent
    return False


def _verify_graybox(op: Operation) -> None:
    region = op.regions[0]
    if not region.blocks:
        return
    args = region.blocks[0].args
    if len(args) != len(op.operands):
        raise op_error(op, "region argument count does not match operand count")
    for i, (a, v) in enumerate(zip(args, op.operands)):
        if a.type is not v.type:
            raise op_error(op, f"region argument {i} does not match corresponding operand")
    for inner in walk_affine(op):
        if inner is op:
            continue
        for v in inner.operands:
            if isinstance(v.type, (T.MemRefType, T.UnrankedMemRefType)) and not _is_captured(v, op):
                raise op_error(op, "incoming memref not explicitly captured")
    for block in region.blocks:
        term = block.last
        if term is not None and term.name == "func.return":
            if [v.type for v in term.operands] != op.result_types:
                raise op_error(op, "return operand types do not match the graybox's result types")


GRAYBOX_OP = OpDef(
    GRAYBOX,
    summary="a region opening a new affine scope, with its memrefs captured explicitly",
    description="Runs its region once, in place; memref operands bind 1:1 to the entry block's "
                "arguments, other values from above are used directly and are symbols inside. "
                "Blocks end in `return`, whose operands become the op's results.",
    operands=[("memrefs", Variadic(C.AnyMemRef))],
    results=[("results", Variadic(C.AnyType))],
    regions=[RegionDef("region")],
    traits=(Traits.AffineScope, Traits.RecursiveMemoryEffects),
    assembly=CustomForm(_parse_graybox, _print_graybox),
    verify=_verify_graybox,
    default_dialect="func",
)

REGISTRY.dialect("affine").add(GRAYBOX_OP)
# The op's later name in mlirx (`affine.execute_region`, same syntax) is read as an alias.
REGISTRY.legacy_names["affine.execute_region"] = GRAYBOX
