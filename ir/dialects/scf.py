"""The structured control flow dialect: `scf.for`, `scf.if` and `scf.yield`,
with 2019's `loop.*` spellings.

    scf.for %i = %lb to %ub step %s iter_args(%acc = %init) -> (f32) { ... scf.yield %v : f32 }
    scf.if %cond -> (f32) { scf.yield %a : f32 } else { scf.yield %b : f32 }

Late-2019 MLIR called this dialect `loop` (`loop.for`, `loop.if`, ended by an
implicit `loop.terminator`); it became `scf` in 2020, when `loop.terminator`
gave way to `scf.yield` (which can carry values) and `for`/`if` gained
results.  The 2019 ops are the operand-less subset of today's, so their
spellings read as today's ops (`REGISTRY.legacy_names`) and print as today's.
`scf.for`'s bounds and step are index or signless integer values (the type
follows `:` after the loop header when it is not index); the step must be
positive at run time, and a constant step that is not is refused, as MLIR
does.  Region terminators with no values are implicit in the custom form.
`scf.parallel`, `scf.while` and `scf.execute_region` are not here.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.func import print_return_like
from egraft.ir.dialects.region_forms import (ensure_terminator, parse_iter_args, parse_then_else, parse_yield,
                                             print_iter_args, print_then_else)
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error

# ------------------------------------------------------------------ scf.yield


def _parse_yield(p: FormParser) -> Operation:
    return parse_yield(p, "scf.yield")


def _verify_yield(op: Operation) -> None:
    parent = op.parent_op
    if parent is None:
        return
    edge = f"along control flow edge from Region #{parent.regions.index(op.parent_region)} to parent results"
    if len(parent.results) != len(op.operands):
        raise op_error(parent, f"{edge}: source has {len(op.operands)} operands, but target successor "
                               f"needs {len(parent.results)}")
    for i, (r, v) in enumerate(zip(parent.results, op.operands)):
        if r.type != v.type:
            raise op_error(parent, f"{edge}: source type #{i} {v.type} should match input type #{i} {r.type}")


YIELD = OpDef(
    "scf.yield",
    summary="loop yield and termination operation",
    operands=[("results", Variadic(C.AnyType))],
    traits=(Traits.Pure, Traits.Terminator, Traits.ReturnLike, Traits.ParentOneOf(("scf.for", "scf.if"))),
    assembly=CustomForm(_parse_yield, print_return_like),
    verify=_verify_yield,
)


def _yield() -> Operation:
    return YIELD.build([])


# ------------------------------------------------------------------ scf.for


def _parse_for(p: FormParser) -> Operation:
    iv = p.parse_operand_ref()
    if iv[1] >= 0:
        raise p.error("result number not allowed", iv[2])
    p.parse_punct("=")
    bounds = [p.parse_operand_ref()]
    p.parse_keyword("to")
    bounds.append(p.parse_operand_ref())
    p.parse_keyword("step")
    bounds.append(p.parse_operand_ref())
    pairs, result_types = parse_iter_args(p, "mismatch in number of loop-carried values and defined values")
    iv_type = p.parse_type() if p.parse_optional_punct(":") else T.index
    operands = p.resolve_operands(bounds, [iv_type] * 3)
    operands += [p.resolve_operand(init, t) for (_, init), t in zip(pairs, result_types)]
    entry = [(iv, iv_type, None)] + [(arg, t, None) for (arg, _), t in zip(pairs, result_types)]
    region = p.parse_region(entry)
    ensure_terminator(region, _yield)
    attrs = p.parse_optional_attr_dict()
    return p.create_op("scf.for", operands, result_types, attrs, regions=[region])


def _print_for(pr: FormPrinter, op: Operation) -> None:
    lb, ub, step, *inits = op.operands
    body = op.regions[0].blocks[0]
    pr.write(f"{pr.op_name_text(op)} {pr.value_name(body.args[0])} = {pr.value_name(lb)} to "
             f"{pr.value_name(ub)} step {pr.value_name(step)}")
    print_iter_args(pr, body.args[1:], inits, op.result_types)
    if lb.type is not T.index:
        pr.write(f" : {lb.type}")
    pr.write(" ")
    pr.print_region(op.regions[0], print_entry_args=False, print_block_terminators=bool(inits))
    pr.print_op_attr_dict(op)


def _constant_int(value) -> int | None:
    owner = value.owner if hasattr(value, "owner") else None
    if isinstance(owner, Operation) and owner.name == "arith.constant":
        attr = owner.attr("value")
        if isinstance(attr, A.IntegerAttr):
            return attr.value
    return None


def _verify_for(op: Operation) -> None:
    lb, ub, step, *inits = op.operands
    if not (lb.type == ub.type == step.type):
        raise op_error(op, "failed to verify that all of {lowerBound, upperBound, step} have same type")
    if len(inits) != len(op.results):
        raise op_error(op, "mismatch in number of loop-carried values and defined values")
    const_step = _constant_int(step)
    if const_step is not None and const_step <= 0:
        raise op_error(op, "constant step operand must be positive")
    body = op.regions[0].blocks[0] if op.regions[0].blocks else None
    if body is None or not body.args or body.args[0].type != lb.type:
        raise op_error(op, "expected induction variable to be same type as bounds and step")
    if len(body.args) - 1 != len(op.results):
        raise op_error(op, "mismatch in number of basic block args and defined values")
    for i, (init, arg, res) in enumerate(zip(inits, body.args[1:], op.results)):
        if init.type != res.type:
            raise op_error(op, f"types mismatch between {i}th iter operand and defined value")
        if arg.type != res.type:
            raise op_error(op, f"types mismatch between {i}th iter region arg and defined value")


_INDEX_OR_INT = C.any_of("index or signless integer", C.Index, C.AnyInteger)

FOR = OpDef(
    "scf.for",
    summary="for operation",
    description="A loop from a lower bound to an upper bound (exclusive) by a positive step, carrying "
                "`iter_args` values from one iteration to the next and out as results.",
    operands=[("lowerBound", _INDEX_OR_INT), ("upperBound", _INDEX_OR_INT), ("step", _INDEX_OR_INT),
              ("initArgs", Variadic(C.AnyType))],
    results=[("results", Variadic(C.AnyType))],
    regions=[RegionDef("region", single_block=True)],
    traits=(Traits.RecursiveMemoryEffects, Traits.SingleBlockImplicitTerminator("scf.yield")),
    assembly=CustomForm(_parse_for, _print_for),
    verify=_verify_for,
)


# ------------------------------------------------------------------ scf.if


def _parse_if(p: FormParser) -> Operation:
    cond = p.resolve_operand(p.parse_operand_ref(), T.i1)
    result_types = p.parse_function_result_types() if p.parse_optional_punct("->") else []
    regions = parse_then_else(p, _yield)
    attrs = p.parse_optional_attr_dict()
    return p.create_op("scf.if", [cond], result_types, attrs, regions=regions)


def _print_if(pr: FormPrinter, op: Operation) -> None:
    pr.write(f"{pr.op_name_text(op)} {pr.value_name(op.operands[0])}")
    pr.print_arrow_types(op.result_types)
    print_then_else(pr, op)
    pr.print_op_attr_dict(op)


def _verify_if(op: Operation) -> None:
    if op.results and not op.regions[1].blocks:
        raise op_error(op, "must have an else block if defining values")
    for i, region in enumerate(op.regions):
        if region.blocks and region.blocks[0].args:
            raise op_error(op, f"region #{i} should have no arguments")


IF = OpDef(
    "scf.if",
    summary="if-then-else operation",
    operands=[("condition", C.I1)],
    results=[("results", Variadic(C.AnyType))],
    regions=[RegionDef("thenRegion", single_block=True), RegionDef("elseRegion", single_block=True)],
    traits=(Traits.RecursiveMemoryEffects, Traits.SingleBlockImplicitTerminator("scf.yield")),
    assembly=CustomForm(_parse_if, _print_if),
    verify=_verify_if,
)


SCF = REGISTRY.dialect("scf", summary="Structured control flow: loops and conditionals with regions.")
SCF.add(YIELD, FOR, IF)

#: 2019's `loop` dialect spellings (renamed `scf` in 2020; `loop.terminator` became `scf.yield`).
LOOP_2019_NAMES = {"loop.for": "scf.for", "loop.if": "scf.if", "loop.terminator": "scf.yield",
                   "loop.yield": "scf.yield"}
REGISTRY.legacy_names.update(LOOP_2019_NAMES)
