"""TensorFlow control flow in tfg: the functional ops and their region forms.

The functional ops (If, Case, While, For, with Stateless/Stateful variants)
are ordinary nodes whose branches and bodies are `#tf_type.func` references
to `tfg.func`s; they print in the node form and their verifiers compare the
callee signatures with the op's data operands and results.  The region ops
(IfRegion, CaseRegion, WhileRegion, ForRegion and variants) inline those
functions as single-block graph regions ended by `tfg.yield` (or, for a while
condition, `tfg.condition`); loop regions take each data value followed later
by its control token as block arguments.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation, Region
from egraft.ir.core.symbols import SymbolTable
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.tfg_func import check_single_nonempty_block
from egraft.ir.dialects.tfg_node import (NODE_FORM, node_result_names, parse_optional_ref_list,
                                         write_operand_list)
from egraft.ir.dialects.tfg_types import (CONTROL, are_cast_compatible, func_attr_symbol, region_attrs,
                                          split_data_control)
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import AttrDef, OpDef, RegionDef, Variadic, VARIADIC
from egraft.ir.verifier import op_error

TFG = "tfg"
_SEGMENTS = "operandSegmentSizes"

Control = C.dialect_type("tf_type", "control")
OpaqueTensor = C.dialect_type("tf_type", "tensor")
I1Tensor = C.tensor_of("1-bit signless integer", C.I1)
I32Tensor = C.tensor_of("32-bit signless integer",
                        C.Constraint("32-bit signless integer", lambda t: t is T.i32))
TensorOrControl = C.AnyTensor | OpaqueTensor | Control
FuncAttr = C.Constraint("func attribute", lambda a: func_attr_symbol(a) is not None)
RegionAttrs = C.Constraint("region attributes", lambda a: region_attrs(a) is not None)
ShapesAttr = C.array_of(C.dialect_attr("tf_type", "shape"))


def _or_opaque(c: C.Constraint) -> C.Constraint:
    return C.Constraint(f"{c.summary} or opaque tensor", lambda t: c(t) or OpaqueTensor(t))


def _segments(*sizes: int) -> A.DenseArrayAttr:
    return A.DenseArrayAttr(T.i32, tuple(sizes))


# ------------------------------------------------------------------ shared syntax


def _parse_graph_region(p: FormParser) -> Region:
    return p.parse_region(default_dialect=TFG)


def _print_graph_region(pr: FormPrinter, region: Region) -> None:
    pr.print_region(region, print_entry_args=True, default_dialect=TFG)


# ------------------------------------------------------------------ terminators


def _parse_terminator_tail(p: FormParser) -> tuple[list, int, int, dict]:
    """`(data) [ctls] {attrs} : data types`, shared by yield and condition:
    the resolved operands, the two group sizes and the attributes."""
    data = parse_optional_ref_list(p, "(", ")")
    ctls = parse_optional_ref_list(p, "[", "]")
    attrs = p.parse_optional_attr_dict()
    types = p.parse_colon_type_list() if data else []
    operands = p.resolve_operands(data, types) + p.resolve_operands(ctls, [CONTROL] * len(ctls))
    return operands, len(data), len(ctls), attrs


def _print_terminator_tail(pr: FormPrinter, op: Operation, data: list, ctls: list, data_lead: str) -> None:
    write_operand_list(pr, data, "(", ")", data_lead)
    write_operand_list(pr, ctls, "[", "]", " ")
    pr.print_op_attr_dict(op, elided=(_SEGMENTS,))
    if data:
        pr.write(" : ")
        pr.print_types(v.type for v in data)


def _parse_yield(p: FormParser) -> Operation:
    operands, n_data, n_ctls, attrs = _parse_terminator_tail(p)
    return p.create_op(operands=operands, attributes=attrs,
                       properties={_SEGMENTS: _segments(n_data, n_ctls)})


def _print_yield(pr: FormPrinter, op: Operation) -> None:
    data, ctls = split_data_control(op.operands)
    pr.write(pr.op_name_text(op))
    _print_terminator_tail(pr, op, data, ctls, "")


YIELD = OpDef(
    "tfg.yield",
    summary="TF graph terminator for control-flow regions.",
    description="Ends a region of a control-flow op: data values for the successor (the parent's "
                "results or the next loop iteration), then control tokens the parent's control "
                "result depends on.",
    operands=[("args", Variadic(C.AnyTensor | OpaqueTensor)), ("ctls", Variadic(Control))],
    traits=(Traits.Pure, Traits.ReturnLike, Traits.Terminator, Traits.AttrSizedOperandSegments),
    assembly=CustomForm(_parse_yield, _print_yield),
)


def _parse_condition(p: FormParser) -> Operation:
    cond = p.parse_operand_ref()
    p.parse_punct(":")
    cond_type = p.parse_type()
    condition = p.resolve_operand(cond, cond_type)
    operands, n_data, n_ctls, attrs = _parse_terminator_tail(p)
    return p.create_op(operands=[condition, *operands], attributes=attrs,
                       properties={_SEGMENTS: _segments(1, n_data, n_ctls)})


def _print_condition(pr: FormPrinter, op: Operation) -> None:
    cond = op.operands[0]
    data, ctls = split_data_control(op.operands[1:])
    pr.write(f"{pr.op_name_text(op)} {pr.value_name(cond)} : {cond.type}")
    _print_terminator_tail(pr, op, data, ctls, " ")


CONDITION = OpDef(
    "tfg.condition",
    summary="TF graph terminator op for while-loop condition regions.",
    description="Ends a while condition region: the i1 condition, the values forwarded to the body "
                "(or to the loop results when false), then control tokens.",
    operands=[("cond", I1Tensor), ("args", Variadic(C.AnyTensor | OpaqueTensor)),
              ("ctls", Variadic(Control))],
    traits=(Traits.Pure, Traits.ReturnLike, Traits.Terminator, Traits.AttrSizedOperandSegments),
    assembly=CustomForm(_parse_condition, _print_condition),
)


# ------------------------------------------------------------------ region op verification


def _terminated_by(region: Region, name: str) -> bool:
    return bool(region.blocks) and region.blocks[0].last is not None and region.blocks[0].last.name == name


def _data_args(region: Region) -> list:
    """The first half of a loop region's arguments: its data values."""
    args = region.blocks[0].args if region.blocks else []
    return args[:len(args) // 2]


def _check_preserved_attrs(op: Operation, pairs: Sequence[tuple[Region, A.Attribute | None]]) -> None:
    """Region attributes must have one argument attribute per data block
    argument and one result attribute per value the region yields."""
    for region, attr in pairs:
        ra = region_attrs(attr)
        if ra is None or not region.blocks:
            continue
        index = op.regions.index(region)
        num_args = len(_data_args(region))
        if num_args != len(ra.arg_attrs):
            raise op_error(op, f"region #{index} has {num_args} argument(s) but preserved attributes has "
                               f"{len(ra.arg_attrs)}")
        term = region.blocks[0].last
        num_rets = 1 if term.name == "tfg.condition" else len(split_data_control(term.operands)[0])
        if num_rets != len(ra.res_attrs):
            raise op_error(op, f"region #{index} has {num_rets} result(s) but preserved attributes has "
                               f"{len(ra.res_attrs)}")


def _check_loop_args(op: Operation, region: Region) -> None:
    index = op.regions.index(region)
    for arg in _data_args(region):
        if arg.type is CONTROL:
            raise op_error(op, f"region #{index} argument #{arg.index} should not be a control token")


def _check_control_args(op: Operation) -> None:
    """Every region has as many control token arguments as data arguments."""
    for i, region in enumerate(op.regions):
        args = region.blocks[0].args if region.blocks else []
        n_ctl = sum(1 for a in args if a.type is CONTROL)
        if n_ctl != len(args) - n_ctl:
            raise op_error(op, f"region #{i} expected same number of data values and control tokens "
                               f"({len(args) - n_ctl} vs. {n_ctl})")


def _verify_if_region(op: Operation) -> None:
    check_single_nonempty_block(op)
    for region, which in zip(op.regions, ("then", "else")):
        if not _terminated_by(region, "tfg.yield"):
            raise op_error(op, f"{which} region must be terminated by a 'tfg.yield'")
    _check_preserved_attrs(op, [(op.regions[0], op.attr("then_region_attrs")),
                                (op.regions[1], op.attr("else_region_attrs"))])
    _check_control_args(op)


def _verify_case_region(op: Operation) -> None:
    check_single_nonempty_block(op)
    for i, region in enumerate(op.regions):
        if not _terminated_by(region, "tfg.yield"):
            raise op_error(op, f"branch region #{i} is not terminated by a 'tfg.yield' op")
    branch_attrs = op.attr("branch_attrs")
    if isinstance(branch_attrs, A.ArrayAttr) and len(branch_attrs) != len(op.regions):
        raise op_error(op, f"has {len(op.regions)} regions but {len(branch_attrs)} branch function attributes")
    attrs = op.attr("region_attrs")
    if isinstance(attrs, A.ArrayAttr):
        if len(attrs) != len(op.regions):
            raise op_error(op, f"expected {len(op.regions)} region attribute(s) but got {len(attrs)}")
        _check_preserved_attrs(op, list(zip(op.regions, attrs)))
    _check_control_args(op)


def _verify_while_region(op: Operation) -> None:
    check_single_nonempty_block(op)
    cond, body = op.regions
    if not _terminated_by(cond, "tfg.condition"):
        raise op_error(op, "condition region must be terminated by a 'tfg.condition' op")
    if not _terminated_by(body, "tfg.yield"):
        raise op_error(op, "body region must be terminated by a 'tfg.yield' op")
    _check_loop_args(op, cond)
    _check_loop_args(op, body)
    _check_preserved_attrs(op, [(cond, op.attr("cond_region_attrs")), (body, op.attr("body_region_attrs"))])
    _check_control_args(op)


def _verify_for_region(op: Operation) -> None:
    check_single_nonempty_block(op)
    body = op.regions[0]
    if not _terminated_by(body, "tfg.yield"):
        raise op_error(op, "body region must be terminated by a 'tfg.yield' op")
    args = body.blocks[0].args
    if not args:
        raise op_error(op, "expected the body block to have at least have the loop index as an argument")
    index = args[0].type
    if not isinstance(index, (T.RankedTensorType, T.UnrankedTensorType)) or index.element_type is not T.i32:
        raise op_error(op, "expected first body block argument to be an i32 tensor")
    _check_loop_args(op, body)
    _check_preserved_attrs(op, [(body, op.attr("region_attrs"))])
    _check_control_args(op)


# ------------------------------------------------------------------ region op syntax


def _parse_if_region(p: FormParser) -> Operation:
    cond = p.parse_operand_ref()
    ctls = parse_optional_ref_list(p, "[", "]")
    p.parse_keyword("then")
    then_region = _parse_graph_region(p)
    p.parse_keyword("else")
    else_region = _parse_graph_region(p)
    return _finish_selector_region_op(p, cond, ctls, [then_region, else_region])


def _finish_selector_region_op(p: FormParser, selector, ctls: list, regions: list) -> Operation:
    """`{attrs} : (selector type) -> results`, the tail IfRegion and
    CaseRegion share; builds the op with its control result."""
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    p.skip_ws()
    pos = p.pos
    fn = p.parse_function_type()
    if len(fn.inputs) != 1:
        raise p.error(f"1 operands present, but expected {len(fn.inputs)}", pos)
    operands = [p.resolve_operand(selector, fn.inputs[0])] + p.resolve_operands(ctls, [CONTROL] * len(ctls))
    return p.create_op(operands=operands, result_types=[*fn.results, CONTROL], attributes=attrs,
                       regions=regions)


def _print_region_types(pr: FormPrinter, inputs: Sequence[T.Type], op: Operation) -> None:
    pr.write(" : ")
    pr.print_function_type(inputs, [r.type for r in split_data_control(op.results)[0]])


def _print_if_region(pr: FormPrinter, op: Operation) -> None:
    cond, ctls = op.operands[0], op.operands[1:]
    pr.write(f"{pr.op_name_text(op)} {pr.value_name(cond)}")
    write_operand_list(pr, ctls, "[", "]", " ")
    pr.write(" then ")
    _print_graph_region(pr, op.regions[0])
    pr.write(" else ")
    _print_graph_region(pr, op.regions[1])
    pr.print_op_attr_dict(op)
    _print_region_types(pr, [cond.type], op)


def _parse_case_region(p: FormParser) -> Operation:
    index = p.parse_operand_ref()
    ctls = parse_optional_ref_list(p, "[", "]")
    regions = [_parse_graph_region(p)]
    while p.parse_optional_punct(","):
        regions.append(_parse_graph_region(p))
    return _finish_selector_region_op(p, index, ctls, regions)


def _print_case_region(pr: FormPrinter, op: Operation) -> None:
    index, ctls = op.operands[0], op.operands[1:]
    pr.write(f"{pr.op_name_text(op)} {pr.value_name(index)}")
    write_operand_list(pr, ctls, "[", "]", " ")
    for i, region in enumerate(op.regions):
        pr.write(", " if i else " ")
        _print_graph_region(pr, region)
    pr.print_op_attr_dict(op)
    _print_region_types(pr, [index.type], op)


def _parse_while_region(p: FormParser) -> Operation:
    init = parse_optional_ref_list(p, "(", ")")
    ctls = parse_optional_ref_list(p, "[", "]")
    cond = _parse_graph_region(p)
    p.parse_keyword("do")
    body = _parse_graph_region(p)
    attrs = p.parse_optional_attr_dict()
    types: list[T.Type] = []
    results: list[T.Type] = []
    if p.parse_optional_punct(":"):
        fn = p.parse_function_type()
        types, results = list(fn.inputs), list(fn.results)
    operands = p.resolve_operands(init, types) + p.resolve_operands(ctls, [CONTROL] * len(ctls))
    return p.create_op(operands=operands, result_types=[*results, CONTROL], attributes=attrs,
                       properties={_SEGMENTS: _segments(len(init), len(ctls))}, regions=[cond, body])


def _print_while_region(pr: FormPrinter, op: Operation) -> None:
    init, ctls = split_data_control(op.operands)
    pr.write(pr.op_name_text(op))
    write_operand_list(pr, init, "(", ")")
    write_operand_list(pr, ctls, "[", "]", " ")
    pr.write(" ")
    _print_graph_region(pr, op.regions[0])
    pr.write(" do ")
    _print_graph_region(pr, op.regions[1])
    pr.print_op_attr_dict(op, elided=(_SEGMENTS,))
    if init or len(op.results) > 1:
        _print_region_types(pr, [v.type for v in init], op)


def _parse_for_region(p: FormParser) -> Operation:
    init = parse_optional_ref_list(p, "(", ")")
    ctls = parse_optional_ref_list(p, "[", "]")
    bounds = []
    for kw in ("from", "to", "by"):
        p.parse_keyword(kw)
        bounds.append(p.parse_operand_ref())
    body = _parse_graph_region(p)
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    p.skip_ws()
    pos = p.pos
    types = p.parse_paren_type_list()
    results = p.parse_paren_type_list() if p.parse_optional_punct("->") else []
    if len(types) != 3 + len(init):
        raise p.error(f"{3 + len(init)} operands present, but expected {len(types)}", pos)
    operands = p.resolve_operands(bounds + init, types) + p.resolve_operands(ctls, [CONTROL] * len(ctls))
    return p.create_op(operands=operands, result_types=[*results, CONTROL], attributes=attrs,
                       properties={_SEGMENTS: _segments(1, 1, 1, len(init), len(ctls))}, regions=[body])


def _print_for_region(pr: FormPrinter, op: Operation) -> None:
    data, ctls = split_data_control(op.operands)
    bounds, init = data[:3], data[3:]
    pr.write(pr.op_name_text(op))
    write_operand_list(pr, init, "(", ")")
    write_operand_list(pr, ctls, "[", "]", " ")
    pr.write(" from {} to {} by {} ".format(*(pr.value_name(v) for v in bounds)))
    _print_graph_region(pr, op.regions[0])
    pr.print_op_attr_dict(op, elided=(_SEGMENTS,))
    pr.write(" : (" + ", ".join(str(v.type) for v in data) + ")")
    outs = split_data_control(op.results)[0]
    if outs:
        pr.write(" -> (" + ", ".join(str(r.type) for r in outs) + ")")


# ------------------------------------------------------------------ functional op verification


def _lookup_func(op: Operation, attr: A.Attribute | None) -> Operation | None:
    ref = func_attr_symbol(attr)
    if ref is None:
        return None
    found = SymbolTable.lookup_from(op, ref)
    return found if found is not None and found.name == "tfg.func" else None


def _split_operands_results(op: Operation) -> tuple[list[T.Type], list[T.Type]]:
    """TensorFlow's VerifyOperands/VerifyResults: controls last, exactly one control result, last."""
    types = op.operand_types
    first = next((i for i, t in enumerate(types) if t is CONTROL), len(types))
    if any(t is not CONTROL for t in types[first:]):
        raise op_error(op, "not all control tokens come after non-control operands")
    results = op.result_types
    if CONTROL not in results:
        raise op_error(op, "does not define a control result")
    if results.index(CONTROL) != len(results) - 1:
        raise op_error(op, "must have a control token result as and only as its last result")
    return types[:first], results[:-1]


def _check_signature(op: Operation, func: Operation, operands: Sequence[T.Type], results: Sequence[T.Type],
                     what: str) -> None:
    fn = func.attr("function_type").value

    def fail(message: str) -> None:
        err = op_error(op, f"{what} function {message}")
        err.diagnostics[0].attach_note("see referenced function", func.loc)
        raise err

    if len(operands) * 2 != len(fn.inputs):
        fail(f"has {len(fn.inputs) // 2} arguments but was provided {len(operands)}")
    if len(results) != len(fn.results):
        fail(f"has {len(fn.results)} results but expected {len(results)}")
    if func.attr("generic") is not None:
        return
    for i, t in enumerate(operands):
        arg = fn.inputs[2 * i]
        if not are_cast_compatible(arg, t):
            fail(f"argument #{i} type '{arg}' is not compatible with corresponding operand type: '{t}'")
    for i, t in enumerate(results):
        ret = fn.results[i]
        if not are_cast_compatible(ret, t):
            fail(f"result #{i} type '{ret}' is not compatible with corresponding result type: '{t}'")


def _check_type_array(op: Operation, types: Sequence[T.Type], array: A.Attribute | None, kind: str) -> None:
    if not isinstance(array, A.ArrayAttr):
        return
    if len(types) != len(array):
        raise op_error(op, f"has {len(types)} {kind}s but {len(array)} {kind} types")
    for i, (t, dtype) in enumerate(zip(types, array)):
        if isinstance(dtype, A.TypeAttr) and not are_cast_compatible(t, T.UnrankedTensorType(dtype.value)):
            raise op_error(op, f"{kind} #{i} is incompatible with dtype '{dtype.value}', got: '{t}'")


def _check_type_arrays(op: Operation, args: Sequence[T.Type], results: Sequence[T.Type]) -> None:
    both = op.attr("T")
    _check_type_array(op, args, both if both is not None else op.attr("Tin"), "argument")
    _check_type_array(op, results, both if both is not None else op.attr("Tout"), "result")


def _verify_if(op: Operation) -> None:
    ins, outs = _split_operands_results(op)
    for key, what in (("then_branch", "then"), ("else_branch", "else")):
        func = _lookup_func(op, op.attr(key))
        if func is not None:
            _check_signature(op, func, ins[1:], outs, what)
    _check_type_arrays(op, [v.type for v in split_data_control(op.operands)[0][1:]], outs)


def _verify_case(op: Operation) -> None:
    ins, outs = _split_operands_results(op)
    for i, branch in enumerate(op.attr("branches")):  # type: ignore[union-attr]
        func = _lookup_func(op, branch)
        if func is not None:
            _check_signature(op, func, ins[1:], outs, f"branch #{i}")
    _check_type_arrays(op, ins[1:], outs)


def _verify_while(op: Operation) -> None:
    ins, outs = _split_operands_results(op)
    cond = _lookup_func(op, op.attr("cond"))
    if cond is not None:
        _check_signature(op, cond, ins, [T.UnrankedTensorType(T.i1)], "cond")
    body = _lookup_func(op, op.attr("body"))
    if body is not None:
        _check_signature(op, body, ins, outs, "body")
    _check_type_arrays(op, ins, outs)


def _verify_for(op: Operation) -> None:
    ins, outs = _split_operands_results(op)
    body = _lookup_func(op, op.attr("body"))
    if body is not None:
        _check_signature(op, body, ins[2:], outs, "body")
    _check_type_arrays(op, ins[3:], outs)


# ------------------------------------------------------------------ records

_OPTIONAL_TYPES = [AttrDef("Tin", C.TypeArrayAttr, True), AttrDef("Tout", C.TypeArrayAttr, True)]
_FUNCTIONAL_RESULTS = [("outs", Variadic(C.AnyType))]


def _functional(name: str, summary: str, operands: list, attributes: list, verify) -> OpDef:
    return OpDef(f"tfg.{name}", summary=summary,
                 description="A TensorFlow node calling `tfg.func`s through `#tf_type.func` attributes; "
                             "printed in the node form.",
                 operands=operands, attributes=attributes, results=_FUNCTIONAL_RESULTS,
                 assembly=NODE_FORM, verify=verify, result_names=node_result_names)


def _region_op(name: str, summary: str, operands: list, attributes: list, regions: list, traits: tuple,
               parse, print_, verify) -> OpDef:
    return OpDef(f"tfg.{name}", summary=summary,
                 description="The region form of a functional control-flow op: single-block graph "
                             "regions ended by `tfg.yield` (or `tfg.condition`).",
                 operands=operands, attributes=attributes, results=_FUNCTIONAL_RESULTS, regions=regions,
                 traits=(Traits.SingleBlock, *traits), assembly=CustomForm(parse, print_), verify=verify,
                 result_names=node_result_names, default_dialect=TFG, graph_regions=True)


def _variants(base: str) -> list[tuple[str, str]]:
    return [(base, ""), (f"Stateless{base}", "stateless "), (f"Stateful{base}", "stateful ")]


FUNCTIONAL_OPS: list[OpDef] = []
REGION_OPS: list[OpDef] = []
for _name, _kind in _variants("If"):
    FUNCTIONAL_OPS.append(_functional(
        _name, f"A {_kind}if operation, in functional form.",
        [("cond", _or_opaque(I1Tensor)), ("args", Variadic(TensorOrControl))],
        [("then_branch", FuncAttr), ("else_branch", FuncAttr), AttrDef("Tcond", C.TypeAttr, True),
         *_OPTIONAL_TYPES, AttrDef("output_shapes", ShapesAttr, True)], _verify_if))
    REGION_OPS.append(_region_op(
        f"{_name}Region", f"A {_kind}if-then-else op with graph regions.",
        [("cond", I1Tensor), ("ctls", Variadic(Control))],
        [AttrDef("then_attrs", C.DictAttr, True), AttrDef("else_attrs", C.DictAttr, True),
         AttrDef("then_region_attrs", RegionAttrs, True), AttrDef("else_region_attrs", RegionAttrs, True)],
        [RegionDef("then_region", single_block=True), RegionDef("else_region", single_block=True)], (),
        _parse_if_region, _print_if_region, _verify_if_region))
for _name, _kind in _variants("Case"):
    FUNCTIONAL_OPS.append(_functional(
        _name, f"A {_kind}case operation, in functional form",
        [("branch_index", _or_opaque(I32Tensor)), ("args", Variadic(TensorOrControl))],
        [("branches", C.array_of(FuncAttr)), *_OPTIONAL_TYPES, AttrDef("output_shapes", ShapesAttr, True)],
        _verify_case))
    REGION_OPS.append(_region_op(
        f"{_name}Region", f"A {_kind}case op with graph regions.",
        [("branch_index", I32Tensor), ("ctls", Variadic(Control))],
        [AttrDef("branch_attrs", C.DictArrayAttr, True),
         AttrDef("region_attrs", C.array_of(RegionAttrs), True)],
        [RegionDef("branches", VARIADIC, single_block=True)], (),
        _parse_case_region, _print_case_region, _verify_case_region))
for _name, _kind in _variants("While"):
    FUNCTIONAL_OPS.append(_functional(
        _name, f"A functional {_kind}while loop operation.", [("args", Variadic(TensorOrControl))],
        [("cond", FuncAttr), ("body", FuncAttr), ("parallel_iterations", C.I64Attr),
         AttrDef("T", C.TypeArrayAttr, True), AttrDef("output_shapes", ShapesAttr, True)], _verify_while))
    REGION_OPS.append(_region_op(
        f"{_name}Region", f"A {_kind}region-based while loop operation.",
        [("init", Variadic(C.AnyTensor | OpaqueTensor)), ("ctls", Variadic(Control))],
        [("parallel_iterations", C.I64Attr), AttrDef("cond_attrs", C.DictAttr, True),
         AttrDef("body_attrs", C.DictAttr, True), AttrDef("cond_region_attrs", RegionAttrs, True),
         AttrDef("body_region_attrs", RegionAttrs, True)],
        [RegionDef("cond_region", single_block=True), RegionDef("body_region", single_block=True)],
        (Traits.AttrSizedOperandSegments,), _parse_while_region, _print_while_region, _verify_while_region))
FUNCTIONAL_OPS.append(_functional(
    "For", "A functional for-loop operation.",
    [("start", _or_opaque(I32Tensor)), ("limit", _or_opaque(I32Tensor)), ("delta", _or_opaque(I32Tensor)),
     ("args", Variadic(TensorOrControl))],
    [("body", FuncAttr), AttrDef("T", C.TypeArrayAttr, True)], _verify_for))
REGION_OPS.append(_region_op(
    "ForRegion", "A for-loop op with a graph region.",
    [("start", I32Tensor), ("limit", I32Tensor), ("delta", I32Tensor),
     ("init", Variadic(C.AnyTensor | OpaqueTensor)), ("ctls", Variadic(Control))],
    [AttrDef("body_attrs", C.DictAttr, True), AttrDef("region_attrs", RegionAttrs, True)],
    [RegionDef("body_region", single_block=True)], (Traits.AttrSizedOperandSegments,),
    _parse_for_region, _print_for_region, _verify_for_region))
