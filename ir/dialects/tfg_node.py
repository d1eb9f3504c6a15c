"""The TensorFlow node form shared by every tfg op that is a graph node.

    %AddV2, %ctl = AddV2(%a, %b) [%ctl_1] device("GPU") assigned_device("TPU")
                   name("add") {T = i32} : (tensor<*xi32>, tensor<*xi32>) -> (tensor<*xi32>)

Data operands go in parentheses and control operands in brackets; the
requested device, assigned device and node name are the `_mlir_device`,
`_mlir_assigned_device` and `_mlir_name` attributes, printed as keywords; the
type omits control tokens, and the op returns its data results then one
`!tf_type.control`.  When an op has no data results the type is just the
list of data operand types.  Unregistered tfg ops (every TensorFlow op) use
this form as the dialect's fallback, and so do the registered functional
control-flow ops (If, Case, While, For), which have no form of their own.

Results are named as TensorFlow's printer names them: the first data result
after the op (`%AddV2`), the control token `%ctl`.
"""

from __future__ import annotations

import re
from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.dialects.tfg_types import CONTROL, first_misplaced, split_data_control
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter

KEYWORD_ATTRS = (("device", "_mlir_device"), ("assigned_device", "_mlir_assigned_device"),
                 ("name", "_mlir_name"))
"""The keyword spelling and attribute name of a node's device and name, in printing order."""
KEYWORD_ATTR_NAMES = tuple(name for _, name in KEYWORD_ATTRS)


# ------------------------------------------------------------------ parsing pieces


def parse_optional_ref_list(p: FormParser, open_: str, close: str) -> list[tuple[str, int, int]]:
    """`(%a, %b)` (or with brackets) if present, else nothing."""
    if not p.parse_optional_punct(open_):
        return []
    if p.parse_optional_punct(close):
        return []
    refs = p.parse_operand_ref_list()
    p.parse_punct(close)
    return refs


def parse_keyword_attrs(p: FormParser, attrs: dict[str, A.Attribute]) -> None:
    """`device("..") assigned_device("..") name("..")` then an optional attribute dictionary."""
    for keyword, attr_name in KEYWORD_ATTRS:
        if p.parse_optional_keyword(keyword):
            p.parse_punct("(")
            attrs[attr_name] = A.StringAttr(p.parse_string("string attribute"))
            p.parse_punct(")")
    attrs.update(p.parse_optional_attr_dict())


def print_keyword_attrs(pr: FormPrinter, op: Operation, elided: Sequence[str] = ()) -> None:
    all_attrs = op.all_attributes()
    for keyword, attr_name in KEYWORD_ATTRS:
        value = all_attrs.get(attr_name)
        if isinstance(value, A.StringAttr):
            pr.write(f" {keyword}({A.escape_string(value.value)})")
    pr.print_op_attr_dict(op, elided=(*elided, *KEYWORD_ATTR_NAMES))


# ------------------------------------------------------------------ the node form


def parse_node(p: FormParser) -> Operation:
    refs = parse_optional_ref_list(p, "(", ")")
    num_data = len(refs)
    refs += parse_optional_ref_list(p, "[", "]")
    attrs: dict[str, A.Attribute] = {}
    parse_keyword_attrs(p, attrs)
    results: list[T.Type] = []
    types: list[T.Type] = []
    p.skip_ws()
    type_pos = p.pos
    if p.parse_optional_punct(":"):
        type_pos = p.pos
        # A leading '(' can only start a function type (parsed through its cache).
        types = [p.parse_function_type()] if p.peek() == "(" else p.parse_type_list()
        if len(types) == 1 and isinstance(types[0], T.FunctionType):
            fn = types[0]
            if len(fn.inputs) != num_data:
                raise p.error(f"got {num_data} non-control operands, but the type defines "
                              f"{len(fn.inputs)} input types", type_pos)
            types, results = list(fn.inputs), list(fn.results)
    types = (types + [CONTROL] * len(refs))[:len(refs)]
    operands = p.resolve_operands(refs, types, type_pos)
    return p.create_op(operands=operands, result_types=[*results, CONTROL], attributes=attrs)


def write_operand_list(pr: FormPrinter, values: Sequence, open_: str, close: str, lead: str = "") -> None:
    """`lead` + `(a, b)` or `[a, b]`; nothing for no values."""
    if values:
        pr.write(lead + open_)
        pr.print_operands(values)
        pr.write(close)


def print_node(pr: FormPrinter, op: Operation) -> None:
    if first_misplaced(op.operand_types) is not None or first_misplaced(op.result_types) is not None:
        pr.print_generic_op(op)
        return
    pr.write(pr.op_name_text(op))
    data, ctls = split_data_control(op.operands)
    write_operand_list(pr, data, "(", ")")
    write_operand_list(pr, ctls, "[", "]", " ")
    print_keyword_attrs(pr, op)
    results = split_data_control(op.results)[0]
    if results:
        pr.write(" : (" + ", ".join(str(v.type) for v in data) + ") -> ("
                 + ", ".join(str(r.type) for r in results) + ")")
    elif data:
        pr.write(" : ")
        pr.print_types(v.type for v in data)


NODE_FORM = CustomForm(parse_node, print_node)


# ------------------------------------------------------------------ names


_INVALID_NAME_CHARS = re.compile(r"[^\w$.\-]")


def sanitize_name(name: str) -> str:
    """An SSA name hint made printable, as MLIR's printer does."""
    name = _INVALID_NAME_CHARS.sub("_", name)
    return "_" + name if name[:1].isdigit() else name


def node_result_names(op: Operation) -> list[str | None]:
    """The first data result is named after the op, the control token `ctl`."""
    results = op.results
    names: list[str | None] = [None] * len(results)
    if len(results) > 1 and results[0].type is not CONTROL:
        names[0] = sanitize_name(op.name.split(".", 1)[-1])
    if any(r.type is CONTROL for r in results):
        names[-1] = "ctl"
    return names


# ------------------------------------------------------------------ verification


def node_error(op: Operation) -> str | None:
    """What TensorFlow rejects in any node of a graph or function body: control
    operands or results before data ones, and empty device or name keywords."""
    for kind, types in (("input", op.operand_types), ("result", op.result_types)):
        bad = first_misplaced(types)
        if bad is not None:
            return f"found non-control {kind} in position #{bad[0]} after control {kind} in position #{bad[1]}"
    all_attrs = op.all_attributes()
    for name in KEYWORD_ATTR_NAMES:
        value = all_attrs.get(name)
        if isinstance(value, A.StringAttr) and not value.value:
            return f"{name} has empty value. Only insert this attribute when it has a value"
    return None
