"""The executor's control-flow primitives: Switch, _SwitchN, Merge, Enter,
Exit, LoopCond, NextIteration.Source/Sink and ControlTrigger.

Each mirrors the TensorFlow op of the same name: its deadness semantics,
TensorFlow's custom form, result names and verifier wording.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.dialects.tf_executor_forms import (DEFAULT_PARALLEL_ITERATIONS, I1_SCALAR, I32_SCALAR,
                                                  IN_GRAPH, TENSOR_TYPES, grouped_names, print_name_operands,
                                                  print_type_or_functional, single_type,
                                                  verify_broadcastable, verify_control_last,
                                                  verify_data_outputs, with_controls)
from egraft.ir.dialects.tf_types import CONTROL, TOKEN, BoolTensor, Control, I32Tensor, Token, is_control
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter, custom_error, finish_op
from egraft.ir.records.opdef import AttrDef, OpDef, Variadic
from egraft.ir.verifier import op_error

# ------------------------------------------------------------------ Switch, _SwitchN, Merge


def _parse_switch(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    t = single_type(p)
    if isinstance(t, T.FunctionType):
        if len(t.inputs) < 2:
            raise custom_error(p, " expects a single data type and a predicate")
        types, results = list(t.inputs), list(t.results)
    else:
        if len(refs) < 2:
            raise custom_error(p, " expects a single data type and a predicate")
        types, results = with_controls([t, I1_SCALAR], len(refs)), [t, t, CONTROL]
    return finish_op(p, p.resolve_operands(refs, types), results)


def _print_switch(pr: FormPrinter, op: Operation) -> None:
    if len(op.operands) < 2 or len(op.results) != 3:
        pr.print_generic_op(op)  # malformed (unverified) IR: only the generic form can show it
        return
    print_name_operands(pr, op)
    data, predicate = op.operands[0].type, op.operands[1].type
    # The short form reads back as a `tensor<i1>` predicate: any other predicate needs the functional type.
    short = op.results[0].type is data and op.results[1].type is data and predicate is I1_SCALAR
    print_type_or_functional(pr, op, short, data)
    pr.print_op_attr_dict(op)


def _verify_switch(op: Operation) -> None:
    verify_broadcastable(op, 0, "true result")
    verify_broadcastable(op, 1, "false result")


SWITCH = OpDef(
    "tf_executor.Switch",
    summary="Forwards data to one of two outputs depending on a predicate",
    description="`data` goes to the output the predicate selects; the other output is dead.  If any "
                "input is dead, every output is.",
    operands=[("data", C.AnyType), ("predicate", BoolTensor), ("controlInputs", Variadic(Control))],
    results=[("falseOutput", C.AnyType), ("trueOutput", C.AnyType), ("control", Control)],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_switch, _print_switch),
    verify=_verify_switch,
    result_names=("falseOutput", "trueOutput", "control"),
)


def _parse_switch_n(p: FormParser) -> Operation:
    pos = p.pos
    refs = p.parse_operand_ref_list()
    if len(refs) != 2:
        raise p.error(f"expected 2 operands", pos)
    p.parse_keyword("of")
    num_outs = p.parse_integer("number of outputs")
    if p.peek() == "(":
        refs += p.parse_operand_ref_list("()")
    t = single_type(p)
    if num_outs <= 0:
        raise custom_error(p, " expects a positive number of outputs")
    operands = p.resolve_operands(refs, with_controls([t, I32_SCALAR], len(refs)))
    return finish_op(p, operands, [t] * num_outs + [CONTROL], {"num_outs": A.IntegerAttr(num_outs, T.i64)})


def _print_switch_n(pr: FormPrinter, op: Operation) -> None:
    # The custom form states one type: data and outputs of that type, a `tensor<i32>` index.
    if len(op.operands) < 2 or op.operands[1].type is not I32_SCALAR or \
            any(t is not op.operands[0].type for t in op.result_types[:-1]):
        pr.print_generic_op(op)
        return
    print_name_operands(pr, op, op.operands[:2])
    pr.write(f" of {len(op.results) - 1}")
    if len(op.operands) > 2:
        pr.write(" (")
        pr.print_operands(op.operands[2:])
        pr.write(")")
    pr.write(" : ")
    pr.print_type(op.results[0].type)
    pr.print_op_attr_dict(op, elided=("num_outs",))


def _verify_switch_n(op: Operation) -> None:
    num_outs = op.attr("num_outs").value  # type: ignore[union-attr]
    if len(op.results) != num_outs + 1:
        raise op_error(op, f"expect `num_outs` ({num_outs}) results but got {len(op.results) - 1}")
    data = op.operands[0].type
    if not isinstance(data, TENSOR_TYPES):
        raise op_error(op, f"expects data operand to have tensor type but got '{data}'")
    verify_data_outputs(op, data, op.result_types, data_is_operand=False)


SWITCH_N = OpDef(
    "tf_executor._SwitchN",
    summary="Forwards data to the one of N outputs an index selects",
    description="`data` goes to output `index`; the other outputs are dead.  Printed as "
                "`tf_executor._SwitchN %data, %index of N (%controls) : type`.",
    operands=[("data", C.AnyType), ("index", I32Tensor), ("controlInputs", Variadic(Control))],
    attributes=[("num_outs", C.I64Attr)],
    results=[("outputs", Variadic(C.AnyType)), ("control", Control)],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_switch_n, _print_switch_n),
    verify=_verify_switch_n,
    result_names=lambda op: grouped_names(op, "outputs"),
)


def _parse_merge(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    t = single_type(p)
    if isinstance(t, T.FunctionType):
        types, results = list(t.inputs), list(t.results)
    else:
        types, results = with_controls([t, t], len(refs)), [t, I32_SCALAR, CONTROL]
    return finish_op(p, p.resolve_operands(refs, types), results)


def _print_merge(pr: FormPrinter, op: Operation) -> None:
    if len(op.results) != 3:
        pr.print_generic_op(op)
        return
    print_name_operands(pr, op)
    output = op.results[0].type
    data = [v.type for v in op.operands if not is_control(v.type)]
    # The short form reads back as two data operands of the output's type and a `tensor<i32>` index.
    short = len(data) == 2 and all(t is output for t in data) and \
        all(is_control(v.type) for v in op.operands[2:]) and op.results[1].type is I32_SCALAR
    print_type_or_functional(pr, op, short, output)
    pr.print_op_attr_dict(op)


def _verify_merge(op: Operation) -> None:
    verify_control_last(op)
    if not op.operands:
        raise op_error(op, "expects at least one operand")
    if is_control(op.operands[0].type):
        raise op_error(op, "expects a non-control input")
    verify_data_outputs(op, op.results[0].type, op.operand_types, data_is_operand=True)


MERGE = OpDef(
    "tf_executor.Merge",
    summary="Forwards whichever of its data inputs is alive",
    description="The output is a live input (any one if several are live) and `value_index` its "
                "position; the output is dead only when every data input is dead.",
    operands=[("inputs", Variadic(C.AnyType))],
    results=[("output", C.AnyTensor), ("value_index", I32Tensor), ("control", Control)],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_merge, _print_merge),
    verify=_verify_merge,
    result_names=("output", "value_index", "control"),
)

# ------------------------------------------------------------------ frames: Enter, Exit, LoopCond


def _parse_enter(p: FormParser) -> Operation:
    pos = p.pos
    refs = p.parse_operand_ref_list()
    if not refs:
        raise custom_error(p, " expects at least one data operand", pos)
    p.parse_keyword("frame")
    attrs: dict[str, A.Attribute] = {"frame_name": A.StringAttr(p.parse_string("frame name"))}
    iterations = DEFAULT_PARALLEL_ITERATIONS
    if p.parse_optional_keyword("parallel_iterations"):
        iterations = p.parse_integer("parallel_iterations")
    attrs["parallel_iterations"] = A.IntegerAttr(iterations, T.i64)
    attrs["is_constant"] = A.BoolAttr(p.parse_optional_keyword("constant"))
    t = single_type(p)
    if isinstance(t, T.FunctionType):
        if not t.inputs:
            raise custom_error(p, " expects a data input")
        types, results = list(t.inputs), list(t.results)
    else:
        types, results = with_controls([t], len(refs)), [t, CONTROL]
    return finish_op(p, p.resolve_operands(refs, types), results, attrs)


def _print_enter(pr: FormPrinter, op: Operation) -> None:
    if not op.operands or len(op.results) != 2 or op.attr("frame_name") is None:
        pr.print_generic_op(op)
        return
    print_name_operands(pr, op)
    pr.write(" frame " + A.escape_string(op.attr("frame_name").value))  # type: ignore[union-attr]
    iterations = op.attr("parallel_iterations")
    if iterations is not None and iterations.value != DEFAULT_PARALLEL_ITERATIONS:  # type: ignore[union-attr]
        pr.write(f" parallel_iterations {iterations.value}")  # type: ignore[union-attr]
    constant = op.attr("is_constant")
    if constant is not None and constant.value:  # type: ignore[union-attr]
        pr.write(" constant ")
    data, output = op.operands[0].type, op.results[0].type
    print_type_or_functional(pr, op, data is output, output)
    pr.print_op_attr_dict(op, elided=("frame_name", "parallel_iterations", "is_constant"))


def _verify_to_result(op: Operation) -> None:
    verify_broadcastable(op, 0, "result")


ENTER = OpDef(
    "tf_executor.Enter",
    summary="Forwards its input into a child execution frame",
    description="Starts (or joins) the frame named `frame_name` for a loop; `is_constant` marks a "
                "loop-invariant input and `parallel_iterations` bounds concurrent iterations.  Printed "
                "as `tf_executor.Enter %x frame \"name\" [parallel_iterations N] [constant] : type`.",
    operands=[("data", C.AnyType), ("controlInputs", Variadic(Control))],
    attributes=[("frame_name", C.StrAttr),
                AttrDef("parallel_iterations", C.I64Attr, default=A.IntegerAttr(10, T.i64)),
                AttrDef("is_constant", C.BoolAttr, default=A.BoolAttr(False))],
    results=[("output", C.AnyType), ("control", Control)],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_enter, _print_enter),
    verify=_verify_to_result,
    result_names=("output", "control"),
)


def _parse_exit(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    t = p.parse_colon_type_list()[0]
    return finish_op(p, p.resolve_operands(refs, with_controls([t], len(refs))), [t, CONTROL])


def _print_exit(pr: FormPrinter, op: Operation) -> None:
    # The custom form states one type, for the input and the output alike.
    if not op.operands or len(op.results) != 2 or op.operands[0].type is not op.results[0].type:
        pr.print_generic_op(op)
        return
    print_name_operands(pr, op)
    pr.write(" : ")
    pr.print_type(op.results[0].type)
    pr.print_op_attr_dict(op)


EXIT = OpDef(
    "tf_executor.Exit",
    summary="Forwards its input out of the current execution frame",
    operands=[("data", C.AnyType), ("controlInputs", Variadic(Control))],
    results=[("output", C.AnyType), ("control", Control)],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_exit, _print_exit),
    verify=_verify_to_result,
    result_names=("output", "control"),
)


def _parse_loop_cond(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    if not refs:
        raise custom_error(p, "expects at least one operand")
    t = p.parse_colon_type_list()[0]
    if isinstance(t, T.FunctionType):
        if sum(1 for x in t.inputs if not is_control(x)) != 1:
            raise custom_error(p, " expects a single data type")
        types, results = list(t.inputs), list(t.results)
    else:
        types, results = with_controls([t], len(refs)), [t, CONTROL]
    return finish_op(p, p.resolve_operands(refs, types), results)


def _print_loop_cond(pr: FormPrinter, op: Operation) -> None:
    if not op.operands or len(op.results) != 2:
        pr.print_generic_op(op)
        return
    print_name_operands(pr, op)
    data, output = op.operands[0].type, op.results[0].type
    print_type_or_functional(pr, op, data is output, data)
    pr.print_op_attr_dict(op)


LOOP_COND = OpDef(
    "tf_executor.LoopCond",
    summary="Marks a loop's termination condition",
    description="Forwards its boolean input; the executor uses it as the pivot of the loop.",
    operands=[("input", BoolTensor), ("controlInputs", Variadic(Control))],
    results=[("output", C.AnyType), ("control", Control)],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_loop_cond, _print_loop_cond),
    result_names=("output", "control"),
)

# ------------------------------------------------------------------ NextIteration


def _parse_source(p: FormParser) -> Operation:
    t = p.parse_colon_type_list()[0]
    return finish_op(p, [], [t, TOKEN, CONTROL])


def _print_source(pr: FormPrinter, op: Operation) -> None:
    if len(op.results) != 3 or op.results[1].type is not TOKEN:
        pr.print_generic_op(op)
        return
    pr.write(pr.op_name_text(op) + " : ")
    pr.print_type(op.results[0].type)
    pr.print_op_attr_dict(op)


def _verify_source(op: Operation) -> None:
    token = op.results[1]
    if len(token.uses) != 1:
        raise op_error(op, "expects a single user for produced token")
    if token.uses[0].name != "tf_executor.NextIteration.Sink":
        raise op_error(op, "token should be consumed by a sink op")


SOURCE = OpDef(
    "tf_executor.NextIteration.Source",
    summary="The receiving half of a loop back-edge",
    description="Produces the value its paired `NextIteration.Sink` passes to the next iteration, "
                "and the token linking the pair.  It runs after the sink although no SSA edge says so: "
                "splitting NextIteration in two keeps the graph acyclic.",
    results=[("output", C.AnyType), ("token", Token), ("control", Control)],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_source, _print_source),
    verify=_verify_source,
    result_names=("output", "token", "control"),
)


def _parse_sink(p: FormParser) -> Operation:
    token = p.parse_operand_ref_list("[]")
    refs = token + p.parse_operand_ref_list()
    t = p.parse_colon_type_list()[0]
    return finish_op(p, p.resolve_operands(refs, with_controls([TOKEN, t], len(refs))), [])


def _print_sink(pr: FormPrinter, op: Operation) -> None:
    if len(op.operands) < 2 or op.operands[0].type is not TOKEN:
        pr.print_generic_op(op)
        return
    pr.write(pr.op_name_text(op) + "[")
    pr.print_operand(op.operands[0])
    pr.write("] ")
    pr.print_operands(op.operands[1:])
    pr.write(" : ")
    pr.print_type(op.operands[1].type)
    pr.print_op_attr_dict(op)


def _verify_sink(op: Operation) -> None:
    source = op.operands[0].owner_op
    if source is None:
        raise op_error(op, "expects a token directly produced by a tf_executor.NextIteration.Source op: ")
    if source.name != SOURCE.name:
        raise op_error(op, "expects a token produced by a tf_executor.NextIteration.Source op: ")
    if source.results[0].type is not op.operands[1].type:
        raise op_error(op, f"input type '{op.operands[1].type}' mismatch the tf_executor.NextIteration.Source "
                           f"output type: '{source.results[0].type}'")


SINK = OpDef(
    "tf_executor.NextIteration.Sink",
    summary="The sending half of a loop back-edge",
    description="Passes `input` to the next iteration through the `NextIteration.Source` that produced "
                "`token`; printed as `tf_executor.NextIteration.Sink[%token] %value : type`.",
    operands=[("token", Token), ("input", C.AnyType), ("controlInputs", Variadic(Control))],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_sink, _print_sink),
    verify=_verify_sink,
)

# ------------------------------------------------------------------ ControlTrigger


def _parse_trigger(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    return finish_op(p, p.resolve_operands(refs, [CONTROL] * len(refs)), [CONTROL])


def _print_trigger(pr: FormPrinter, op: Operation) -> None:
    print_name_operands(pr, op)
    pr.print_op_attr_dict(op)


CONTROL_TRIGGER = OpDef(
    "tf_executor.ControlTrigger",
    summary="Joins control dependencies, even dead ones",
    description="A no-op whose control output is always live, even when some control inputs are dead.",
    operands=[("controlInputs", Variadic(Control))],
    results=[("control", Control)],
    traits=(IN_GRAPH,),
    assembly=CustomForm(_parse_trigger, _print_trigger),
)

# ------------------------------------------------------------------ Send, Recv
# A targeted addition: the dialect's design document lists Send and Recv although
# TensorFlow 2.21's tf_executor no longer defines them; they print in generic form.

SEND = OpDef(
    "tf_executor.Send",
    summary="Sends a tensor to the matching Recv (rendezvous)",
    description="Blocks in the rendezvous keyed by its attributes until the matching `tf_executor.Recv` "
                "takes the value; a dead input is sent as dead.",
    operands=[("data", C.AnyType), ("controlInputs", Variadic(Control))],
    results=[("control", Control)],
    traits=(IN_GRAPH,),
)

RECV = OpDef(
    "tf_executor.Recv",
    summary="Receives a tensor from the matching Send (rendezvous)",
    description="Blocks until the matching `tf_executor.Send` has produced its value, which may be dead.",
    operands=[("controlInputs", Variadic(Control))],
    results=[("output", C.AnyType), ("control", Control)],
    traits=(IN_GRAPH,),
)
