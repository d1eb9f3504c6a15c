"""Pieces shared by the tf_executor ops' custom forms and verifiers.

TensorFlow's executor ops share one grammar (data operands then control
operands, `: type` when data and results agree and the functional type
otherwise, a trailing attribute dictionary) and a few checks (control
operands last, TF broadcast compatibility between data and results).
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import types as T
from egraft.ir.core.diagnostics import DiagnosticError
from egraft.ir.core.operation import Operation, Region
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.tf_types import CONTROL, broadcast_compatible, is_control, is_ref
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter, custom_error, finish_op
from egraft.ir.verifier import op_diag, op_error

GRAPH_OP = "tf_executor.graph"
IN_GRAPH = Traits.HasParent((GRAPH_OP,))
I1_SCALAR = T.RankedTensorType((), T.i1)
I32_SCALAR = T.RankedTensorType((), T.i32)
DEFAULT_PARALLEL_ITERATIONS = 10
TENSOR_TYPES = (T.RankedTensorType, T.UnrankedTensorType)

# ------------------------------------------------------------------ shared parse/print pieces


def single_type(p: FormParser) -> T.Type:
    """`: type` where exactly one type (possibly a function type) is allowed."""
    pos = p.pos
    types = p.parse_colon_type_list()
    if len(types) != 1:
        raise custom_error(p, " expects only a single data type", pos)
    return types[0]


def with_controls(types: Sequence[T.Type], n_operands: int) -> list[T.Type]:
    """Data operand types followed by control types for the remaining operands."""
    return list(types) + [CONTROL] * max(0, n_operands - len(types))


def print_type_or_functional(pr: FormPrinter, op: Operation, short: bool, short_type: T.Type) -> None:
    pr.write(" : ")
    if short:
        pr.print_type(short_type)
    else:
        pr.print_function_type(op.operand_types, op.result_types)


def print_name_operands(pr: FormPrinter, op: Operation, operands: Sequence | None = None) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operands(op.operands if operands is None else operands)


def _parse_values_types(p: FormParser) -> Operation:
    """`%a, %b : t1, t2 {attrs}` (fetch and yield)."""
    refs = p.parse_operand_ref_list()
    types = p.parse_colon_type_list() if refs else []
    return finish_op(p, p.resolve_operands(refs, types), [])


def _print_values_types(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op))
    if op.operands:
        pr.write(" ")
        pr.print_operands(op.operands)
        pr.write(" : ")
        pr.print_types(op.operand_types)
    pr.print_op_attr_dict(op)


VALUES_TYPES_FORM = CustomForm(_parse_values_types, _print_values_types)


def ensure_terminator(p: FormParser, region: Region, name: str) -> Operation:
    """MLIR's ensureTerminator: an empty region gets a block, and a block not
    ending in a terminator gets an operand-less `name` op."""
    if not region.blocks:
        region.add_block()
    block = region.blocks[-1]
    last = block.last
    if last is None or last.opdef is None or not last.opdef.has_trait(Traits.Terminator):
        last = block.append(p.create_op(name))
        last.loc = p.loc_at(p.op_start)
    return last


# ------------------------------------------------------------------ verification helpers


def verify_control_last(op: Operation, operands: Sequence | None = None) -> None:
    """Control operands come last.  TensorFlow reports a violation twice, from
    the ODS trait and from the op's own verifier, and its tests expect both."""
    seen_control = False
    for i, v in enumerate(op.operands if operands is None else operands):
        if is_control(v.type):
            seen_control = True
        elif seen_control:
            raise DiagnosticError([
                op_diag(op, "failed to verify that all control inputs must appear after any non-control input"),
                op_diag(op, f"found non-control operand #{i} after control operand")])


def verify_body_block(op: Operation) -> None:
    """The `SizedRegion<1>` body must hold a non-empty block."""
    region = op.regions[0]
    if len(region.blocks) != 1:
        raise op_error(op, "region #0 ('body') failed to verify constraint: region with 1 blocks")
    if region.blocks[0].is_empty:
        raise op_error(op, "expects a non-empty block")


def verify_broadcastable(op: Operation, result_index: int, what: str) -> None:
    if not broadcast_compatible(op.operands[0].type, op.results[result_index].type):
        raise op_error(op, f"failed to verify that data operand must be broadcastable to {what}")


def verify_data_outputs(op: Operation, data: T.Type, outputs: Sequence[T.Type], data_is_operand: bool) -> None:
    """Merge/_SwitchN: each output-side tensor broadcasts with the data side,
    and a ref on the output side needs a ref on the data side."""
    label = "data operands" if data_is_operand else "outputs"
    for t in outputs:
        if is_control(t):
            break
        if not isinstance(t, TENSOR_TYPES):
            raise op_error(op, f"expects {label} to have tensor type but got '{t}'")
        operand, output = (t, data) if data_is_operand else (data, t)
        if is_ref(output.element_type) and not is_ref(operand.element_type):
            raise op_error(op, f"expects same operand and output element type but got '{operand}' vs '{output}'")
        if not broadcast_compatible(operand, output):
            which = ("all operands to be broadcastable with output type" if data_is_operand
                     else "data operand to be broadcastable with all output types")
            raise op_error(op, f"expects {which} but got '{operand}' vs '{output}'")


def grouped_names(op: Operation, group: str) -> list[str | None]:
    """`%group:N, %control`: all data results in one named group."""
    n = len(op.results) - 1
    return ([group] + [None] * (n - 1) if n > 0 else []) + ["control"]
