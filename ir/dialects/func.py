"""The func dialect: `func.func`, `func.return`, `func.call`.

The function signature syntax (`@name(%arg0: i32 {attrs}) -> (i32 {attrs})
attributes {...}`) is shared with other function-like ops (tfg.func), so its
parser and printer live here as reusable pieces.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.diagnostics import DiagnosticError
from egraft.ir.core.operation import Operation, Region
from egraft.ir.core.traits import Traits
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error


# ------------------------------------------------------------------ signatures


def parse_function_signature(p: FormParser, *, allow_named: bool = True):
    """`(%a: i32 {attrs} loc(..), ...) -> (results)`: returns
    (entry args or None for a declaration, input types, arg attr dicts,
    result types, result attr dicts)."""
    p.parse_punct("(")
    entry: list | None = []
    types: list[T.Type] = []
    arg_attrs: list[dict] = []
    if not p.parse_optional_punct(")"):
        while True:
            ref = p.parse_optional_operand_ref() if allow_named else None
            if ref is not None:
                if entry is None:
                    raise p.error("expected type instead of SSA identifier", ref[2])
                p.parse_punct(":")
                t = p.parse_type()
                attrs = p.parse_optional_attr_dict()
                loc = p.parse_optional_trailing_location()
                entry.append((ref, t, loc))
            else:
                if entry:
                    raise p.error("expected SSA identifier")
                entry = None
                t = p.parse_type()
                attrs = p.parse_optional_attr_dict()
            types.append(t)
            arg_attrs.append(attrs)
            if p.parse_optional_punct(")"):
                break
            p.parse_punct(",")
    if entry is not None and not entry and not types:
        entry = []
    results, res_attrs = parse_function_results(p)
    return entry, types, arg_attrs, results, res_attrs


def parse_function_results(p: FormParser, parenthesized: bool = False) -> tuple[list[T.Type], list[dict]]:
    """`-> type` or `-> (type {attrs}, ...)` (nothing without `->`); with
    `parenthesized` the list must be in parentheses, as tfg.func writes it."""
    results: list[T.Type] = []
    res_attrs: list[dict] = []
    if not p.parse_optional_punct("->"):
        return results, res_attrs
    if parenthesized:
        p.parse_punct("(")
    elif not p.parse_optional_punct("("):
        return [p.parse_type()], [{}]
    if not p.parse_optional_punct(")"):
        while True:
            results.append(p.parse_type())
            res_attrs.append(p.parse_optional_attr_dict())
            if p.parse_optional_punct(")"):
                break
            p.parse_punct(",")
    return results, res_attrs


def attr_dict_array(dicts: Sequence[dict]) -> A.ArrayAttr | None:
    if not any(dicts):
        return None
    return A.ArrayAttr(tuple(A.DictionaryAttr(tuple(d.items())) for d in dicts))


def print_function_signature(pr: FormPrinter, op: Operation, region: Region | None, inputs: Sequence[T.Type],
                             results: Sequence[T.Type]) -> None:
    arg_attrs = op.attr("arg_attrs")
    res_attrs = op.attr("res_attrs")
    pr.write("(")
    parts = []
    block = region.blocks[0] if region is not None and region.blocks else None
    for i, t in enumerate(inputs):
        piece = f"{pr.value_name(block.args[i])}: {t}" if block is not None else str(t)
        if isinstance(arg_attrs, A.ArrayAttr) and i < len(arg_attrs) and arg_attrs[i].entries:
            piece += " " + pr.attr_text(arg_attrs[i])
        if block is not None and pr.debuginfo:
            piece += " " + pr.loc_text(block.args[i].loc)
        parts.append(piece)
    pr.write(", ".join(parts) + ")")
    if results:
        has_res_attrs = isinstance(res_attrs, A.ArrayAttr) and any(d.entries for d in res_attrs)
        if len(results) == 1 and not has_res_attrs and not isinstance(results[0], T.FunctionType):
            pr.write(f" -> {results[0]}")
        else:
            items = []
            for i, t in enumerate(results):
                piece = str(t)
                if has_res_attrs and res_attrs[i].entries:
                    piece += " " + pr.attr_text(res_attrs[i])
                items.append(piece)
            pr.write(" -> (" + ", ".join(items) + ")")


# ------------------------------------------------------------------ func.func

_FUNC_ELIDED = ("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs")


def _parse_func(p: FormParser) -> Operation:
    visibility = None
    for vis in ("private", "public", "nested"):
        if p.parse_optional_keyword(vis):
            visibility = vis
            break
    name = p.parse_symbol("symbol name")
    entry, inputs, arg_attrs, results, res_attrs = parse_function_signature(p)
    attrs = {}
    if p.parse_optional_keyword("attributes"):
        attrs = p.parse_attr_dict()
    attrs["sym_name"] = A.StringAttr(name)
    attrs["function_type"] = A.TypeAttr(T.FunctionType(tuple(inputs), tuple(results)))
    if visibility is not None:
        attrs["sym_visibility"] = A.StringAttr(visibility)
    for key, dicts in (("arg_attrs", arg_attrs), ("res_attrs", res_attrs)):
        arr = attr_dict_array(dicts)
        if arr is not None:
            attrs[key] = arr
    region = Region()
    if p.peek() == "{":
        # 2019's `func @f(f32) { ^bb0(%a: f32): ... }`: unnamed arguments, and
        # the body's labeled entry block declares them (the verifier checks
        # that its arguments match the signature).
        region = p.parse_region(entry, isolated=True, default_dialect="func")
    return p.create_op("func.func", attributes=attrs, regions=[region])


def _print_func(pr: FormPrinter, op: Operation) -> None:
    pr.write("func.func" if pr.default_dialects[-1] != "func" else "func")
    vis = op.attr("sym_visibility")
    if vis is not None:
        pr.write(f" {vis.value}")
    pr.write(" " + A.symbol_text(op.attr("sym_name").value))
    ft = op.attr("function_type").value
    region = op.regions[0]
    print_function_signature(pr, op, region if region.blocks else None, ft.inputs, ft.results)
    pr.print_op_attr_dict(op, elided=_FUNC_ELIDED, with_keyword=True)
    if region.blocks:
        pr.write(" ")
        pr.print_region(region, print_entry_args=False, default_dialect="func")


def _verify_func(op: Operation) -> None:
    ft = op.attr("function_type")
    if not isinstance(ft, A.TypeAttr) or not isinstance(ft.value, T.FunctionType):
        raise _err(op, "requires attribute 'function_type' of function type")
    region = op.regions[0]
    if region.blocks:
        args = region.blocks[0].args
        if len(args) != len(ft.value.inputs):
            raise _err(op, f"entry block must have {len(ft.value.inputs)} arguments to match function signature")
        for i, (a, t) in enumerate(zip(args, ft.value.inputs)):
            if a.type is not t:
                raise _err(op, f"type of entry block argument #{i}({a.type}) must match the type of the "
                               f"corresponding argument in function signature({t})")


def _err(op: Operation, msg: str) -> DiagnosticError:
    return op_error(op, msg)


FUNC = OpDef(
    "func.func",
    summary="An operation with a name containing a single SSACFG region",
    description="A function: a symbol with a function type and, unless it is a declaration, a body "
                "whose entry block arguments are the function's arguments. 2019's `func @f(...)` "
                "spelling parses to it.",
    attributes=[("sym_name", C.SymbolNameAttr), ("function_type", C.FunctionTypeAttr),
                ("sym_visibility", C.StrAttr, True), ("arg_attrs", C.DictArrayAttr, True),
                ("res_attrs", C.DictArrayAttr, True)],
    regions=[RegionDef("body")],
    traits=(Traits.IsolatedFromAbove, Traits.Symbol, Traits.FunctionLike, Traits.AffineScope),
    assembly=CustomForm(_parse_func, _print_func),
    verify=_verify_func,
    default_dialect="func",
)


# ------------------------------------------------------------------ return / call


def _parse_return(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    types = p.parse_colon_type_list() if refs else []
    return p.create_op("func.return", p.resolve_operands(refs, types))


def print_return_like(pr: FormPrinter, op: Operation) -> None:
    """`name %a, %b : t1, t2` (shared by terminators that return values)."""
    pr.write(pr.op_name_text(op))
    if op.operands:
        pr.write(" ")
        pr.print_operands(op.operands)
    pr.print_op_attr_dict(op)
    if op.operands:
        pr.write(" : ")
        pr.print_types(v.type for v in op.operands)


def _verify_return(op: Operation) -> None:
    parent = op.parent_op
    if parent is None or parent.name != "func.func":
        return
    ft = parent.attr("function_type").value
    if len(op.operands) != len(ft.results):
        raise _err(op, f"has {len(op.operands)} operands, but enclosing function (@{parent.attr('sym_name').value}) "
                       f"returns {len(ft.results)}")
    for i, (v, t) in enumerate(zip(op.operands, ft.results)):
        if v.type is not t:
            raise _err(op, f"type of return operand {i} ('{v.type}') doesn't match function result type ('{t}') "
                           f"in function @{parent.attr('sym_name').value}")


RETURN = OpDef(
    "func.return",
    summary="Function return operation",
    operands=[("operands", Variadic(C.AnyType))],
    # A function's terminator, and a graybox's (the RFC gives its body a function's blocks); MLIR's
    # HasParent<FuncOp> rejects it anywhere else (an affine.for body must end in affine.yield).
    traits=(Traits.Pure, Traits.Terminator, Traits.ReturnLike, Traits.ParentOneOf(("func.func", "affine.graybox"))),
    assembly=CustomForm(_parse_return, print_return_like),
    verify=_verify_return,
)


def _parse_call(p: FormParser) -> Operation:
    callee = p.parse_symbol()
    refs = p.parse_operand_ref_list("()")
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    ft = p.parse_function_type()
    attrs["callee"] = A.SymbolRefAttr(callee)
    return p.create_op("func.call", p.resolve_operands(refs, ft.inputs), ft.results, attrs)


def _print_call(pr: FormPrinter, op: Operation) -> None:
    pr.write(f"{pr.op_name_text(op)} {op.attr('callee')}(")
    pr.print_operands(op.operands)
    pr.write(")")
    pr.print_op_attr_dict(op, elided=("callee",))
    pr.write(" : ")
    pr.print_function_type(op.operand_types, op.result_types)


CALL = OpDef(
    "func.call",
    summary="Call operation",
    operands=[("operands", Variadic(C.AnyType))],
    attributes=[("callee", C.FlatSymbolRefAttr), ("arg_attrs", C.DictArrayAttr, True),
                ("res_attrs", C.DictArrayAttr, True), ("no_inline", C.UnitAttr, True)],
    results=[("results", Variadic(C.AnyType))],
    traits=(Traits.MemoryEffects(("read", "write")),),
    assembly=CustomForm(_parse_call, _print_call),
)

# ------------------------------------------------------------------ func.constant


def _parse_func_constant(p: FormParser) -> Operation:
    """`func.constant @f : (i32) -> ()` (and 2019's `constant @f : ...`, which
    the `constant` form hands here when its value is a symbol).  Inside a
    function, `func` is the default dialect, so 2019's `constant 0 : i32`
    arrives here too: any other value is arith.constant's."""
    if p.peek() != "@":
        return REGISTRY.ops["arith.constant"].assembly.parse(p)  # type: ignore[union-attr]
    callee = p.parse_symbol()
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = p.parse_type()
    attrs["value"] = A.SymbolRefAttr(callee)
    return p.create_op("func.constant", result_types=[t], attributes=attrs)


def _print_func_constant(pr: FormPrinter, op: Operation) -> None:
    pr.write(f"{pr.op_name_text(op)} {op.attr('value')}")
    pr.print_op_attr_dict(op, elided=("value",))
    pr.write(" : ")
    pr.print_type(op.results[0].type)


def _verify_func_constant(op: Operation) -> None:
    from egraft.ir.core.symbols import SymbolTable

    ref = op.attr("value")
    fn = SymbolTable.lookup_from(op, ref)
    if fn is None or fn.name != "func.func":
        raise _err(op, f"reference to undefined function '{ref.root}'")  # type: ignore[union-attr]
    if fn.attr("function_type").value is not op.results[0].type:  # type: ignore[union-attr]
        raise _err(op, "reference to function with mismatched type")


CONSTANT = OpDef(
    "func.constant",
    summary="Constant",
    description="A function value: the symbol of a `func.func` whose type is the result's. "
                "2019's `constant @f : (i32) -> ()` parses to it.",
    attributes=[("value", C.FlatSymbolRefAttr)],
    results=[("result", C.AnyType)],
    traits=(Traits.Pure,),
    assembly=CustomForm(_parse_func_constant, _print_func_constant),
    verify=_verify_func_constant,
    result_names=["f"],
)

FUNC_DIALECT = REGISTRY.dialect("func", summary="Functions, calls and returns.")
FUNC_DIALECT.add(FUNC, RETURN, CALL, CONSTANT)
REGISTRY.legacy_names.update({"func": "func.func", "return": "func.return", "call": "func.call",
                              "std.return": "func.return", "std.call": "func.call"})
