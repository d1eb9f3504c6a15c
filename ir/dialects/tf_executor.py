"""The `tf_executor` dialect: TensorFlow's executor model (dataflow, deadness,
control dependencies) as a graph of islands and control-flow primitives.

The dialect is closed.  Every op's custom form is TensorFlow's: a short
`: type` when data and results agree and the full functional type otherwise,
names `%outputs`/`%control`/`%output`/`%token`/... for results, and the
`island wraps "tf.X"(...)` short form for an island that forwards the results
of a single op.  Verification follows TensorFlow's rules and wording.
"""

from __future__ import annotations

from egraft.ir.core.operation import Operation, Region
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.tf_executor_cflow import (CONTROL_TRIGGER, ENTER, EXIT, LOOP_COND, MERGE, RECV, SEND,
                                                  SINK, SOURCE, SWITCH, SWITCH_N)
from egraft.ir.dialects.tf_executor_forms import (GRAPH_OP, IN_GRAPH, VALUES_TYPES_FORM, ensure_terminator,
                                                  grouped_names, verify_body_block, verify_control_last)
from egraft.ir.dialects.tf_types import CONTROL, Control, is_control, verify_tf_executor_type
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter, custom_error, finish_op
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error

# ------------------------------------------------------------------ graph


def _parse_graph(p: FormParser) -> Operation:
    """Today's `graph {...}` takes its result types from the fetch; the 2019
    design's `graph : t1, t2 {...}` states them (the verifier compares them
    with the fetch)."""
    declared = p.parse_colon_type_list() if p.peek() == ":" else None
    pos = p.pos
    region = p.parse_region()
    if len(region.blocks) > 1:
        raise custom_error(p, "expects a single block region", pos)
    fetch = ensure_terminator(p, region, "tf_executor.fetch")
    if fetch.name != "tf_executor.fetch":
        raise custom_error(p, "expects a tf_executor.fetch terminator", pos)
    if declared is not None:
        return finish_op(p, [], declared, regions=[region])
    results = []
    for v in fetch.operands:
        if is_control(v.type):
            break
        results.append(v.type)
    return finish_op(p, [], results, regions=[region])


def _print_graph(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_region(op.regions[0], print_entry_args=False)
    pr.print_op_attr_dict(op)


def _verify_graph(op: Operation) -> None:
    verify_body_block(op)
    block = op.regions[0].blocks[0]
    for inner in block:
        if inner.dialect != "tf_executor":
            raise op_error(inner, "unallowed inside a tf_executor.graph region")
        if inner.name == GRAPH_OP:
            raise op_error(inner, "unallowed directly inside another tf_executor.graph")
    fetch = block.last
    if fetch.name != "tf_executor.fetch":
        raise op_error(fetch, "invalid tf_executor.graph terminator, fetch expected")
    n = len(op.results)
    if len(fetch.operands) < n:
        raise op_error(fetch, "does not have enough operands to cover the graph returned values")
    for i, v in enumerate(fetch.operands):
        if is_control(v.type):
            if i != n:
                raise op_error(fetch, f"operand #{i} is a control type, can't be bound to a graph result")
            break
        if i >= n:
            raise op_error(fetch, f"operand #{i} does not have a graph results to bind")
        if op.results[i].type is not v.type:
            raise op_error(fetch, f"operand #{i} type mismatch graph results")


GRAPH = OpDef(
    GRAPH_OP,
    summary="A dataflow graph run by the TensorFlow executor",
    description="Holds a single block of `tf_executor` ops that execute as soon as their inputs are "
                "available, possibly concurrently, with values that may be dead.  The block ends with "
                "`tf_executor.fetch` (added implicitly when omitted); the fetch's non-control operands are "
                "the graph's results.  Feeds are values captured from the enclosing region.",
    results=[("results", Variadic(C.AnyType))],
    regions=[RegionDef("body")],
    traits=(Traits.SingleBlockImplicitTerminator("tf_executor.fetch"),),
    assembly=CustomForm(_parse_graph, _print_graph),
    verify=_verify_graph,
)

FETCH = OpDef(
    "tf_executor.fetch",
    summary="Terminates a graph and names its results",
    description="Its data operands become the results of the enclosing `tf_executor.graph`; control "
                "operands, which must come last, only delay the graph's completion.",
    operands=[("fetches", Variadic(C.AnyType))],
    traits=(Traits.Terminator, IN_GRAPH, Traits.ReturnLike, Traits.Pure),
    assembly=VALUES_TYPES_FORM,
    verify=verify_control_last,
)

# ------------------------------------------------------------------ island


def _parse_island(p: FormParser) -> Operation:
    """Today's `island(%ctl) {...}` takes its result types from the yield; the
    2019 design's `island(%ctl) : (control types) -> (data types) {...}`
    states them (the control result stays implicit; the verifier compares the
    data types with the yield)."""
    pos = p.pos
    controls = p.parse_operand_ref_list("()") if p.peek() == "(" else []
    declared = None
    if p.peek() == ":":
        p.parse_punct(":")
        p.skip_ws()
        pos = p.pos
        signature = p.parse_function_type()
        operands = p.resolve_operands(controls, signature.inputs, pos)
        declared = list(signature.results)
    else:
        operands = p.resolve_operands(controls, [CONTROL] * len(controls), pos)
    region = Region()
    loc = None
    if declared is None and p.parse_optional_keyword("wraps"):
        # The wrapped op lives in the island's block; its results are yielded as they are.
        block = region.add_block()
        p.skip_ws()
        wrapped = block.append(p.parse_operation())
        loc = wrapped.loc
        block.append(p.create_op("tf_executor.yield", wrapped.results)).loc = loc
    else:
        region = p.parse_region()
    yield_op = ensure_terminator(p, region, "tf_executor.yield")
    data = yield_op.operand_types if declared is None else declared
    op = finish_op(p, operands, [*data, CONTROL], regions=[region])
    if loc is not None:
        op.loc = loc
    return op


def _wrapped_op(op: Operation) -> Operation | None:
    """The single op an island forwards exactly, when the `wraps` form can
    print it without losing attributes or locations."""
    if op.all_attributes() or len(op.regions[0].blocks) != 1:
        return None
    block = op.regions[0].blocks[0]
    wrapped, yield_op = block.first, block.last
    if wrapped is None or wrapped is yield_op or wrapped.next is not yield_op:
        return None
    if wrapped.loc != op.loc or yield_op.loc != op.loc:
        return None
    if len(wrapped.results) != len(yield_op.operands) or \
            any(r is not v for r, v in zip(wrapped.results, yield_op.operands)):
        return None
    return wrapped


def _print_island(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op))
    if op.operands:
        pr.write("(")
        pr.print_operands(op.operands)
        pr.write(")")
    wrapped = _wrapped_op(op)
    if wrapped is not None:
        pr.write(" wraps ")
        pr.print_generic_op(wrapped)
        return
    pr.write(" ")
    pr.print_region(op.regions[0], print_entry_args=False)
    pr.print_op_attr_dict(op)


def _verify_island(op: Operation) -> None:
    verify_body_block(op)
    block = op.regions[0].blocks[0]
    if block.args:
        raise op_error(op, "expects body without any arguments")
    yield_op = block.last
    if yield_op.name != "tf_executor.yield":
        raise op_error(yield_op, "invalid tf_executor.island terminator, yield expected")
    n = len(op.results) - 1
    if len(yield_op.operands) != n:
        raise op_error(yield_op, f"has {len(yield_op.operands)} operand, but island returns {n}")
    for i, v in enumerate(yield_op.operands):
        if op.results[i].type is not v.type:
            raise op_error(yield_op, f"operand #{i} type mismatch island results")
    for i, r in enumerate(op.results[:-1]):
        if is_control(r.type):
            raise op_error(yield_op, f"unexpected control type for operand #{i}")


def _island_names(op: Operation) -> list[str | None]:
    return grouped_names(op, "outputs")


ISLAND = OpDef(
    "tf_executor.island",
    summary="A region of ordinary sequential computation inside a graph",
    description="Wraps `tf` ops so that they take part in the executor's dataflow.  The island runs "
                "once its control operands and captured values are available and not dead; its results "
                "are the operands of the `tf_executor.yield` ending its block, plus a control token.  "
                "An island that just forwards the results of one op prints as "
                "`tf_executor.island wraps \"tf.X\"(...) ...`.",
    operands=[("controlInputs", Variadic(Control))],
    results=[("outputs", Variadic(C.AnyType)), ("control", Control)],
    regions=[RegionDef("body")],
    traits=(IN_GRAPH, Traits.SingleBlockImplicitTerminator("tf_executor.yield"),
            Traits.RecursiveMemoryEffects),
    assembly=CustomForm(_parse_island, _print_island),
    verify=_verify_island,
    result_names=_island_names,
)

YIELD = OpDef(
    "tf_executor.yield",
    summary="Terminates an island and names its results",
    operands=[("fetches", Variadic(C.AnyType))],
    traits=(Traits.Terminator, Traits.HasParent(("tf_executor.island",)), Traits.ReturnLike, Traits.Pure),
    assembly=VALUES_TYPES_FORM,
)

# ------------------------------------------------------------------ the dialect

TF_EXECUTOR = REGISTRY.dialect(
    "tf_executor",
    summary="TensorFlow's executor model: dataflow graphs with deadness and control dependencies.",
    description="A `tf_executor.graph` holds islands (`tf_executor.island`, which wrap ordinary `tf` "
                "ops) and the executor's control-flow primitives (Switch, Merge, Enter, Exit, "
                "NextIteration, LoopCond, ControlTrigger).  Ops run when their inputs are ready; values "
                "may be dead, and deadness propagates through every op except Merge and ControlTrigger.  "
                "Besides their data results, ops produce a `!tf_executor.control` token that other ops "
                "take as a control dependency; `!tf_executor.token` links the two halves of "
                "NextIteration.",
    open=False,
    verify_type=verify_tf_executor_type,
)
TF_EXECUTOR.add(GRAPH, FETCH, ISLAND, YIELD, SWITCH, SWITCH_N, MERGE, ENTER, EXIT, LOOP_COND, SOURCE, SINK,
                CONTROL_TRIGGER, SEND, RECV)
