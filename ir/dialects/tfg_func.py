"""tfg.graph, tfg.func and their terminator and result unpacking ops.

`tfg.graph` is a GraphDef: one unordered graph region of nodes, with the
version attribute.  `tfg.func` is a FunctionDef: each data argument is paired
in memory with a control token argument that the text never shows (the body
refers to it as `%arg.ctl`), arguments are named from their `tfg.name`, and
the body is a graph region ending in `tfg.return`.  A `generic` function is
uninstantiated: its values are `!tf_type.tensor` and node outputs are
unpacked by name with `tfg.get_result`.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation, Region
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.func import attr_dict_array, parse_function_results
from egraft.ir.dialects.tfg_node import (node_error, node_result_names, parse_keyword_attrs,
                                         parse_optional_ref_list, print_keyword_attrs, sanitize_name,
                                         write_operand_list)
from egraft.ir.dialects.tfg_types import (CONTROL, OPAQUE_TENSOR, are_cast_compatible, is_dialect_attr,
                                          split_data_control, version_syntax_error)
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.verifier import op_error

TFG = "tfg"


def check_nodes(region: Region) -> None:
    """TensorFlow's checks of every node directly in a graph or function body."""
    for block in region.blocks:
        for node in block:
            msg = node_error(node)
            if msg is not None:
                raise op_error(node, msg)


def check_single_nonempty_block(op: Operation) -> None:
    """MLIR's SingleBlock trait for regions that need a terminator."""
    for i, region in enumerate(op.regions):
        if len(region.blocks) > 1:
            raise op_error(op, f"expects region #{i} to have 0 or 1 blocks")
        if region.blocks and region.blocks[0].is_empty:
            raise op_error(op, "expects a non-empty block")


# ------------------------------------------------------------------ tfg.graph


def _parse_graph(p: FormParser) -> Operation:
    p.skip_ws()
    pos = p.pos
    version = p.parse_attribute()
    if not is_dialect_attr(version, "version"):
        raise p.error("invalid kind of attribute specified", pos)
    msg = version_syntax_error(version)  # type: ignore[arg-type]
    if msg is not None:
        raise p.error(msg, pos)
    attrs = p.parse_attr_dict() if p.parse_optional_keyword("attributes") else {}
    attrs["version"] = version
    region = p.parse_region(isolated=True, default_dialect=TFG)
    if not region.blocks:
        region.add_block()
    return p.create_op(attributes=attrs, regions=[region])


def _print_graph(pr: FormPrinter, op: Operation) -> None:
    pr.write(f"{pr.op_name_text(op)} {op.attr('version')}")
    pr.print_op_attr_dict(op, elided=("version",), with_keyword=True)
    pr.write(" ")
    pr.print_region(op.regions[0], print_entry_args=False, default_dialect=TFG)


GRAPH = OpDef(
    "tfg.graph",
    summary="Define a flat graph of operations",
    description="An unordered list of TensorFlow nodes: a GraphDef without its function library. "
                "Nodes may use values defined later in the body.",
    attributes=[("version", C.dialect_attr("tf_type", "version"))],
    regions=[RegionDef("nodes", single_block=True)],
    traits=(Traits.IsolatedFromAbove, Traits.SingleBlock, Traits.NoTerminator),
    assembly=CustomForm(_parse_graph, _print_graph),
    verify=lambda op: check_nodes(op.regions[0]),
    default_dialect=TFG,
    graph_regions=True,
)


# ------------------------------------------------------------------ tfg.func

_FUNC_ELIDED = ("generic", "sym_visibility", "function_type", "arg_attrs", "res_attrs", "sym_name")


def _parse_func(p: FormParser) -> Operation:
    attrs: dict[str, A.Attribute] = {}
    for vis in ("public", "private", "nested"):
        if p.parse_optional_keyword(vis):
            attrs["sym_visibility"] = A.StringAttr(vis)
            break
    if p.parse_optional_keyword("generic"):
        attrs["generic"] = A.UNIT
    attrs["sym_name"] = A.StringAttr(p.parse_symbol("valid '@'-identifier for symbol name"))
    p.parse_punct("(")
    entry: list = []
    types: list[T.Type] = []
    arg_attrs: list[dict] = []
    if not p.parse_optional_punct(")"):
        while True:
            ref = p.parse_operand_ref()
            p.parse_punct(":")
            t = p.parse_type()
            # The hidden control token of each argument: `%name.ctl` in the body.
            entry += [(ref, t, None), ((ref[0] + ".ctl", -1, ref[2]), CONTROL, None)]
            types += [t, CONTROL]
            arg_attrs += [p.parse_optional_attr_dict(), {}]
            if p.parse_optional_punct(")"):
                break
            p.parse_punct(",")
    results, res_attrs = parse_function_results(p, parenthesized=True)
    if p.parse_optional_keyword("attributes"):
        attrs.update(p.parse_attr_dict())
    attrs["function_type"] = A.TypeAttr(T.FunctionType(tuple(types), tuple(results)))
    attrs["arg_attrs"] = _dict_array(arg_attrs)
    attrs["res_attrs"] = _dict_array(res_attrs)
    p.skip_ws()
    body_pos = p.pos
    region = p.parse_region(entry, isolated=True, default_dialect=TFG)
    if not region.blocks:
        raise p.error("expected non-empty function body", body_pos)
    return p.create_op(attributes=attrs, regions=[region])


def _dict_array(dicts: list[dict]) -> A.ArrayAttr:
    return attr_dict_array(dicts) or A.ArrayAttr(tuple(A.DictionaryAttr(()) for _ in dicts))


def _print_func(pr: FormPrinter, op: Operation) -> None:
    name = op.attr("sym_name").value
    vis = op.attr("sym_visibility")
    pr.write(pr.op_name_text(op) if pr.default_dialects[-1] == TFG else "tfg.func")
    indent = len("tfg.func") + 3 + len(name)
    if vis is not None:
        pr.write(f" {vis.value}")
        indent += len(vis.value) + 1
    if op.attr("generic") is not None:
        pr.write(" generic")
    pr.write(" " + A.symbol_text(name) + "(")
    fn = op.attr("function_type").value
    args = op.regions[0].blocks[0].args if op.regions[0].blocks else []
    arg_attrs = op.attr("arg_attrs")
    newline = "\n" + pr.indent
    pieces = []
    for i in range(0, len(fn.inputs) - 1, 2):
        piece = f"{pr.value_name(args[i]) if i < len(args) else '%<<UNKNOWN SSA VALUE>>'}: {fn.inputs[i]}"
        pieces.append(piece + _attrs_text(pr, arg_attrs, i))
    # TensorFlow breaks the line after ", ", keeping the space.
    pr.write((", " + newline + " " * indent).join(pieces) + ")")
    if fn.results:
        res_attrs = op.attr("res_attrs")
        items = [f"{t}{_attrs_text(pr, res_attrs, i)}" for i, t in enumerate(fn.results)]
        pr.write(newline + "     -> (" + (", " + newline + " " * 9).join(items) + ")")
    pr.write(newline)
    pr.print_op_attr_dict(op, elided=_FUNC_ELIDED, with_keyword=True)
    pr.write(" ")
    pr.print_region(op.regions[0], print_entry_args=False, default_dialect=TFG)


def _attrs_text(pr: FormPrinter, array: A.Attribute | None, i: int) -> str:
    if not isinstance(array, A.ArrayAttr) or i >= len(array):
        return ""
    d = array[i]
    if not isinstance(d, A.DictionaryAttr) or not d.entries:
        return ""
    return " {" + pr.dict_entries_text(sorted(d.entries)) + "}"


def _func_arg_names(op: Operation, region: Region, block_index: int) -> list[str | None] | None:
    """Data arguments take their `tfg.name`, control tokens that name plus `.ctl`.

    An argument without `tfg.name` is `%argN` (N its block position, as MLIR
    numbers it) and its token `%argN.ctl`: TensorFlow would print the token as
    `%argN+1`, which its own parser cannot read back (it binds `%argN.ctl`)."""
    if block_index != 0 or not region.blocks:
        return None
    args = region.blocks[0].args
    if len(args) % 2 or any(args[i].type is CONTROL or args[i + 1].type is not CONTROL
                            for i in range(0, len(args), 2)):
        return None
    arg_attrs = op.attr("arg_attrs")
    names: list[str | None] = []
    for i in range(0, len(args), 2):
        d = arg_attrs[i] if isinstance(arg_attrs, A.ArrayAttr) and len(arg_attrs) == len(args) else None
        name = d.get("tfg.name") if isinstance(d, A.DictionaryAttr) else None
        base = sanitize_name(name.value) if isinstance(name, A.StringAttr) and isinstance(name.value, str) \
            else f"arg{i}"
        names += [base, base + ".ctl"]
    return names


def _verify_func(op: Operation) -> None:
    check_single_nonempty_block(op)
    fn = op.attr("function_type").value
    region = op.regions[0]
    if not region.blocks or region.blocks[0].is_empty:
        raise op_error(op, "expects a non empty body")
    block = region.blocks[0]
    if len(block.args) != len(fn.inputs):
        raise op_error(op, f"function type indicated {len(fn.inputs)} args but block has {len(block.args)}")
    for i, (t, arg) in enumerate(zip(fn.inputs, block.args)):
        if t is not arg.type:
            raise op_error(op, f"type mismatch for arg #{i}, signature defines '{t}' block arg is '{arg.type}'")
    ret = block.last
    if ret.name != "tfg.return":
        raise op_error(op, f"expects body to be terminated with a tfg.return, but got: {ret.name}")
    if len(fn.results) > len(ret.operands):
        raise op_error(op, f"expects {len(fn.results)} returned values but tfg.return has "
                           f"{len(ret.operands)} operands")
    for i, t in enumerate(fn.results):
        actual = ret.operands[i].type
        if not are_cast_compatible(t, actual):
            raise op_error(op, f"type mismatch for returned value #{i}, expected '{t}' but got '{actual}'")
    for i, v in enumerate(ret.operands[len(fn.results):]):
        if v.type is not CONTROL:
            raise op_error(op, f"returned value #{i} overflow the expected {len(fn.results)} returned value "
                               f"for function {op.attr('sym_name').value}, expected a ControlType but got "
                               f"'{v.type}'")
    check_nodes(region)
    if len(fn.inputs) % 2:
        raise op_error(op, "expects an even number of arguments")
    for key, count, what in (("arg_attrs", len(fn.inputs), "argument attributes for each argument"),
                             ("res_attrs", len(fn.results), "results attributes for each result")):
        arr = op.attr(key)
        if isinstance(arr, A.ArrayAttr) and len(arr) != count:
            raise op_error(op, f"expects {what} ({len(arr)} vs {count})")


FUNC = OpDef(
    "tfg.func",
    summary="Define a function as modeled by FunctionDef.",
    description="A FunctionDef: a symbol whose body is an unordered graph ending in `tfg.return`. Each "
                "data argument is followed by its control token argument (hidden in the text, `%x.ctl` "
                "in the body). `generic` marks an uninstantiated function.",
    attributes=[("generic", C.UnitAttr, True), ("sym_name", C.SymbolNameAttr),
                ("function_type", C.FunctionTypeAttr), ("arg_attrs", C.ArrayAttr, True),
                ("res_attrs", C.ArrayAttr, True), ("description", C.StrAttr, True),
                ("is_stateful", C.UnitAttr, True), ("gradient", C.FlatSymbolRefAttr, True),
                ("resource_arg_unique_ids_keys", C.ElementsAttr, True),
                ("resource_arg_unique_ids_values", C.ElementsAttr, True),
                ("control_output", C.StrArrayAttr, True)],
    regions=[RegionDef("body")],
    traits=(Traits.IsolatedFromAbove, Traits.Symbol, Traits.FunctionLike, Traits.SingleBlock),
    assembly=CustomForm(_parse_func, _print_func),
    verify=_verify_func,
    block_arg_names=_func_arg_names,
    default_dialect=TFG,
    graph_regions=True,
)


# ------------------------------------------------------------------ tfg.return


def _parse_return(p: FormParser) -> Operation:
    refs = parse_optional_ref_list(p, "(", ")")
    ctl_attrs: list[A.Attribute] = []
    if p.parse_optional_punct("["):
        while True:
            ref = p.parse_optional_operand_ref()
            if ref is None:
                break
            refs.append(ref)
            ctl_attrs.append(A.DictionaryAttr(tuple(p.parse_optional_attr_dict().items())))
            if not p.parse_optional_punct(","):
                break
        p.parse_punct("]")
    attrs: dict[str, A.Attribute] = {}
    parse_keyword_attrs(p, attrs)
    attrs["control_ret_attrs"] = A.ArrayAttr(tuple(ctl_attrs))
    types = p.parse_colon_type_list() if p.peek() == ":" else []
    types = (types + [CONTROL] * len(refs))[:len(refs)]
    return p.create_op(operands=p.resolve_operands(refs, types), attributes=attrs)


def _print_return(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op))
    data, ctls = split_data_control(op.operands)
    write_operand_list(pr, data, "(", ")")
    if ctls:
        ctl_attrs = op.attr("control_ret_attrs")
        pieces = []
        for i, v in enumerate(ctls):
            pieces.append(pr.value_name(v) + _attrs_text(pr, ctl_attrs, i))
        pr.write(" [" + ", ".join(pieces) + "]")
    print_keyword_attrs(pr, op, elided=("control_ret_attrs",))
    if data:
        pr.write(" : ")
        pr.print_types(v.type for v in data)


def _verify_return(op: Operation) -> None:
    ctl_attrs = op.attr("control_ret_attrs")
    if len(ctl_attrs) != len(split_data_control(op.operands)[1]):  # type: ignore[arg-type]
        raise op_error(op, "expected as many control result attributes as there are control operands")


RETURN = OpDef(
    "tfg.return",
    summary="Return values from a Function.",
    description="Terminates a `tfg.func` body: the data values returned, then control tokens (each "
                "with its own attribute dictionary, kept in `control_ret_attrs`).",
    operands=[("operands", Variadic(C.AnyType))],
    attributes=[("control_ret_attrs", C.DictArrayAttr)],
    traits=(Traits.Pure, Traits.HasParent(("tfg.func",)), Traits.ReturnLike, Traits.Terminator),
    assembly=CustomForm(_parse_return, _print_return),
    verify=_verify_return,
)


# ------------------------------------------------------------------ tfg.get_result


def _parse_get_result(p: FormParser) -> Operation:
    paren = p.parse_optional_punct("(")
    ref = p.parse_operand_ref()
    if paren:
        p.parse_punct(")")
    attrs = {"name": A.StringAttr(p.parse_string("string attribute"))}
    p.parse_punct(":")
    attrs["number"] = A.IntegerAttr(p.parse_integer(), T.i32)
    if p.parse_optional_keyword("attributes"):
        attrs.update(p.parse_attr_dict())
    return p.create_op(operands=[p.resolve_operand(ref, OPAQUE_TENSOR)], result_types=[OPAQUE_TENSOR],
                       attributes=attrs)


def _print_get_result(pr: FormPrinter, op: Operation) -> None:
    pr.write(f"{pr.op_name_text(op)}(")
    pr.print_operand(op.operands[0])
    pr.write(f") {op.attr('name')} : {op.attr('number').value}")
    pr.print_op_attr_dict(op, elided=("name", "number"), with_keyword=True)


OPAQUE_TENSOR_C = C.dialect_type("tf_type", "tensor")

GET_RESULT = OpDef(
    "tfg.get_result",
    summary="Extract a value out of an opaque tensor in a generic Function.",
    description="In a generic function a node defines one opaque value; `get_result` unpacks one of "
                "its named outputs (`\"output_true\" : 0`).",
    operands=[("value", OPAQUE_TENSOR_C)],
    attributes=[("name", C.StrAttr), ("number", C.I32Attr)],
    results=[("result", OPAQUE_TENSOR_C)],
    traits=(Traits.Pure,),
    assembly=CustomForm(_parse_get_result, _print_get_result),
    result_names=node_result_names,
)
