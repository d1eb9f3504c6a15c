"""The cf dialect: unstructured control flow (`cf.br`, `cf.cond_br`, `cf.assert`).

Successor operands are stored as the op's operands (after the condition of
`cond_br`, split by `operandSegmentSizes`), as MLIR does, so that use lists
and dominance see them like any other operand.  2019's `br`/`cond_br`
parse to these ops.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, Variadic
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error


def _check_successor_operands(op: Operation, block, values) -> None:
    if len(values) != len(block.args):
        raise op_error(op, f"branch has {len(values)} operands for successor #{op.successors.index(block)}, "
                           f"but target block has {len(block.args)}")
    for i, (v, a) in enumerate(zip(values, block.args)):
        if v.type is not a.type:
            raise op_error(op, f"type mismatch for bb argument #{i} of successor #"
                               f"{op.successors.index(block)}")


def _parse_br(p: FormParser) -> Operation:
    dest, values = p.parse_successor_with_operands()
    attrs = p.parse_optional_attr_dict()
    return p.create_op("cf.br", values, attributes=attrs, successors=[dest])


def _print_br(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_successor_with_operands(op.successors[0], op.operands)
    pr.print_op_attr_dict(op)


def _verify_br(op: Operation) -> None:
    _check_successor_operands(op, op.successors[0], op.operands)


BR = OpDef(
    "cf.br",
    summary="branch operation",
    operands=[("destOperands", Variadic(C.AnyType))],
    successors=["dest"],
    traits=(Traits.Pure, Traits.Terminator),
    assembly=CustomForm(_parse_br, _print_br),
    verify=_verify_br,
)


def _parse_cond_br(p: FormParser) -> Operation:
    ref = p.parse_operand_ref()
    cond = p.resolve_operand(ref, T.i1)
    p.parse_punct(",")
    true_dest, true_values = p.parse_successor_with_operands()
    p.parse_punct(",")
    false_dest, false_values = p.parse_successor_with_operands()
    attrs = p.parse_optional_attr_dict()
    attrs["operandSegmentSizes"] = A.DenseArrayAttr(T.i32, (1, len(true_values), len(false_values)))
    return p.create_op("cf.cond_br", [cond, *true_values, *false_values], attributes=attrs,
                       successors=[true_dest, false_dest])


def _print_cond_br(pr: FormPrinter, op: Operation) -> None:
    groups = op.opdef.operand_groups(op)
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.write(", ")
    pr.print_successor_with_operands(op.successors[0], groups["trueDestOperands"])
    pr.write(", ")
    pr.print_successor_with_operands(op.successors[1], groups["falseDestOperands"])
    pr.print_op_attr_dict(op, elided=("operandSegmentSizes", "branch_weights"))


def _verify_cond_br(op: Operation) -> None:
    groups = op.opdef.operand_groups(op)
    _check_successor_operands(op, op.successors[0], groups["trueDestOperands"])
    _check_successor_operands(op, op.successors[1], groups["falseDestOperands"])


COND_BR = OpDef(
    "cf.cond_br",
    summary="conditional branch operation",
    operands=[("condition", C.I1), ("trueDestOperands", Variadic(C.AnyType)),
              ("falseDestOperands", Variadic(C.AnyType))],
    attributes=[("branch_weights", C.AnyAttr, True)],
    successors=["trueDest", "falseDest"],
    traits=(Traits.Pure, Traits.Terminator, Traits.AttrSizedOperandSegments),
    assembly=CustomForm(_parse_cond_br, _print_cond_br),
    verify=_verify_cond_br,
)


def _parse_assert(p: FormParser) -> Operation:
    ref = p.parse_operand_ref()
    p.parse_punct(",")
    msg = p.parse_string("message string")
    attrs = p.parse_optional_attr_dict()
    attrs["msg"] = A.StringAttr(msg)
    return p.create_op("cf.assert", [p.resolve_operand(ref, T.i1)], attributes=attrs)


def _print_assert(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.write(", " + str(op.attr("msg")))
    pr.print_op_attr_dict(op, elided=("msg",))


ASSERT = OpDef(
    "cf.assert",
    summary="Assert operation with message attribute",
    operands=[("arg", C.I1)],
    attributes=[("msg", C.StrAttr)],
    assembly=CustomForm(_parse_assert, _print_assert),
)

CF = REGISTRY.dialect("cf", summary="Unstructured control flow: branches between blocks.")
CF.add(BR, COND_BR, ASSERT)
for _old in ("br", "cond_br", "assert"):
    REGISTRY.legacy_names[_old] = REGISTRY.legacy_names[f"std.{_old}"] = f"cf.{_old}"
