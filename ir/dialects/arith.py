"""The arith dialect: constants, integer and float arithmetic, comparisons,
select and casts, plus the 2019 `std` spellings of the same ops.

Ops come in a few families that share one custom form each (binary ops
`%r = arith.addi %a, %b : i32`, casts `%r = arith.index_cast %a : i32 to
index`), so each family is one parse/print pair and a table of records.
2019 files wrote these ops without a dialect prefix (`addi`, `constant`,
`divi_signed`, `cmpi "slt", ...`); `REGISTRY.legacy_names` maps them here.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error

SignlessIntegerLike = C.shaped_or_scalar(C.SignlessIntegerOrIndex)
FloatLike = C.shaped_or_scalar(C.AnyFloat)
BoolLike = C.shaped_or_scalar(C.I1)
AnyIntLike = C.shaped_or_scalar(C.AnyInteger | C.Index)


# ------------------------------------------------------------------ shared assembly pieces


def parse_operands_and_type(p: FormParser, count: int | None = None):
    """`%a, %b : type` with every operand of that one type."""
    refs = p.parse_operand_ref_list()
    if count is not None and len(refs) != count:
        raise p.error(f"expected {count} operands", refs[0][2] if refs else None)
    p.parse_punct(":")
    t = p.parse_type()
    return p.resolve_operands(refs, [t] * len(refs)), t


# Flag attributes printed as a keyword after the operands (`overflow<nsw>`,
# `fastmath<fast>`), and elided when they hold their default `none`.
_FLAG_KEYWORDS = {"overflowFlags": "overflow", "fastmath": "fastmath"}
_FLAG_NAMES = tuple(_FLAG_KEYWORDS)


def parse_flags(p: FormParser, attrs: dict) -> None:
    """Read `overflow<...>` / `fastmath<...>` into `attrs`."""
    for name, keyword in _FLAG_KEYWORDS.items():
        p.skip_ws()
        if p.text.startswith(keyword + "<", p.pos):
            p.pos += len(keyword)
            attrs[name] = A.DialectAttr("arith", keyword + p.balanced_text())


def flags_text(op: Operation) -> str:
    """The non-default flags of an op, as ` overflow<nsw>` / ` fastmath<fast>`."""
    props = op.properties
    if not props:
        return ""
    text = ""
    for name in _FLAG_NAMES:
        flag = props.get(name)
        if flag is not None:
            piece = _FLAG_TEXT.get(flag)
            if piece is None:
                piece = _FLAG_TEXT[flag] = _flag_piece(flag)
            text += piece
    return text


_FLAG_TEXT: dict[A.Attribute, str] = {}  # flag attributes are uniqued: print each once


def _flag_piece(flag: A.Attribute) -> str:
    if isinstance(flag, A.DialectAttr) and flag.dialect == "arith" and flag.params != "none":
        return f" {flag.mnemonic}<{flag.params}>"
    return ""


def print_operands_and_type(pr: FormPrinter, op: Operation, elided: Sequence[str] = _FLAG_NAMES) -> None:
    """`name %a, %b flags {attrs} : type` (the type of the first operand);
    `elided` names the attributes the form itself shows."""
    refs = pr.value_names
    text = pr.op_name_text(op) + " " + ", ".join([refs[v] for v in op.operands]) + flags_text(op)
    if op.attributes or any(k not in elided for k in op.properties):
        pr.write(text)
        pr.print_op_attr_dict(op, elided=elided)
        text = ""
    pr.write(f"{text} : {op.operands[0].type}")


def _parse_operands_flags_type(p: FormParser) -> tuple[list, dict, T.Type]:
    """`%a, %b flags {attrs} : t`: the operand references, the attributes (flags included) and `t`."""
    refs = p.parse_operand_ref_list()
    attrs: dict = {}
    parse_flags(p, attrs)
    attrs.update(p.parse_optional_attr_dict())
    p.parse_punct(":")
    return refs, attrs, p.parse_type()


def _parse_same_type_trailing_attrs(p: FormParser) -> Operation:
    """Binary ops: `%a, %b flags {attrs} : t` (attributes before the colon)."""
    refs, attrs, t = _parse_operands_flags_type(p)
    return p.create_op(operands=p.resolve_operands(refs, [t] * len(refs)), result_types=[t], attributes=attrs)


SAME_TYPE_FORM = CustomForm(_parse_same_type_trailing_attrs, print_operands_and_type)


# ------------------------------------------------------------------ constant


def _parse_constant(p: FormParser) -> Operation:
    if p.peek() == "@":  # 2019's `constant @f : (i32) -> ()` is today's func.constant
        return REGISTRY.ops["func.constant"].assembly.parse(p)  # type: ignore[union-attr]
    attrs = p.parse_optional_attr_dict()
    value = p.parse_attribute()
    t = getattr(value, "type", None)
    if t is None:
        raise p.error("expected a typed attribute for the constant value")
    attrs["value"] = value
    return p.create_op("arith.constant", result_types=[t], attributes=attrs)


def _print_constant(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op))
    pr.print_op_attr_dict(op, elided=("value",))
    pr.write(" ")
    pr.print_attribute(op.attr("value"))


def constant_result_name(op: Operation) -> Sequence[str | None]:
    """`%c42_i32`, `%c0` (index), `%true`/`%false`, else `%cst`, as MLIR names them."""
    value = op.attr("value")
    if isinstance(value, A.IntegerAttr):
        t = op.results[0].type
        if isinstance(t, T.IntegerType) and t.width == 1:
            return ["true" if value.value else "false"]
        return [f"c{value.value}_{t}" if isinstance(t, T.IntegerType) else f"c{value.value}"]
    return ["cst"]


def _verify_constant(op: Operation) -> None:
    value = op.attr("value")
    if getattr(value, "type", None) is not op.results[0].type:
        raise op_error(op, "value type must match the result type")


CONSTANT = OpDef(
    "arith.constant",
    summary="integer or floating point constant",
    description="Materializes a typed constant (scalar, vector or tensor). 2019's `constant` parses to it.",
    attributes=[("value", C.TypedAttr)],
    results=[("result", C.AnyType)],
    traits=(Traits.Pure, Traits.ConstantLike),
    assembly=CustomForm(_parse_constant, _print_constant),
    verify=_verify_constant,
    result_names=constant_result_name,
)


# ------------------------------------------------------------------ binary and unary ops


def _binary(mnemonic: str, operand: C.Constraint, summary: str, commutative: bool = False) -> OpDef:
    traits = (Traits.Pure, Traits.SameOperandsAndResultType) + ((Traits.Commutative,) if commutative else ())
    return OpDef(f"arith.{mnemonic}", summary=summary, operands=[("lhs", operand), ("rhs", operand)],
                 attributes=[("overflowFlags", C.AnyAttr, True), ("fastmath", C.AnyAttr, True)],
                 results=[("result", operand)], traits=traits, assembly=SAME_TYPE_FORM)


_INT_BINARY = [
    ("addi", "integer addition", True), ("subi", "integer subtraction", False),
    ("muli", "integer multiplication", True), ("divsi", "signed integer division", False),
    ("divui", "unsigned integer division", False), ("ceildivsi", "signed ceil integer division", False),
    ("ceildivui", "unsigned ceil integer division", False),
    ("floordivsi", "signed floor integer division", False), ("remsi", "signed integer remainder", False),
    ("remui", "unsigned integer remainder", False), ("andi", "integer binary and", True),
    ("ori", "integer binary or", True), ("xori", "integer binary xor", True),
    ("shli", "integer left-shift", False), ("shrsi", "signed integer right-shift", False),
    ("shrui", "unsigned integer right-shift", False), ("maxsi", "signed integer maximum", True),
    ("minsi", "signed integer minimum", True), ("maxui", "unsigned integer maximum", True),
    ("minui", "unsigned integer minimum", True),
]
_FLOAT_BINARY = [
    ("addf", "floating point addition", True), ("subf", "floating point subtraction", False),
    ("mulf", "floating point multiplication", True), ("divf", "floating point division", False),
    ("remf", "floating point remainder", False), ("maximumf", "floating-point maximum", True),
    ("minimumf", "floating-point minimum", True), ("maxnumf", "floating-point maximum", True),
    ("minnumf", "floating-point minimum", True),
]

BINARY_OPS = [_binary(m, SignlessIntegerLike, s, c) for m, s, c in _INT_BINARY] + \
             [_binary(m, FloatLike, s, c) for m, s, c in _FLOAT_BINARY]

NEGF = OpDef("arith.negf", summary="floating point negation", operands=[("operand", FloatLike)],
             attributes=[("fastmath", C.AnyAttr, True)], results=[("result", FloatLike)],
             traits=(Traits.Pure, Traits.SameOperandsAndResultType), assembly=SAME_TYPE_FORM)


# ------------------------------------------------------------------ comparisons


CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
                   "ule", "une", "uno", "true")
_PREDICATES = {"arith.cmpi": CMPI_PREDICATES, "arith.cmpf": CMPF_PREDICATES}


def _i1_like(t: T.Type) -> T.Type:
    """i1, or the same shape of i1 (a comparison's result type)."""
    if isinstance(t, T.VectorType):
        return T.VectorType(t.shape, T.i1, t.scalable)
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, T.i1, None)
    if isinstance(t, T.UnrankedTensorType):
        return T.UnrankedTensorType(T.i1)
    return T.i1


def _parse_cmp(p: FormParser) -> Operation:
    names = _PREDICATES[p.op_name]
    p.skip_ws()
    pos = p.pos
    word = p.parse_optional_string()  # 2019: cmpi "slt", ...
    quoted = word is not None
    if word is None:
        word = p.parse_optional_bare_id()
    if word not in names and quoted:  # 2019's wording for its quoted form
        raise p.error(f'unknown comparison predicate "{word}"', pos)
    if word not in names and getattr(p, "std_era", False):  # 2019 wanted a string there
        raise p.error("expected string comparison predicate attribute", pos)
    if word not in names:
        raise p.error(f"invalid predicate '{word}'" if word else "expected string or keyword containing "
                      "one of the following enum values for attribute 'predicate' [" + ", ".join(names) + "]",
                      pos)
    p.parse_punct(",")
    refs, attrs, t = _parse_operands_flags_type(p)
    if isinstance(t, T.FunctionType) and getattr(p, "std_era", False):
        raise p.error("expected type with valid i1 shape", getattr(p, "op_start", None))  # 2019
    attrs["predicate"] = A.IntegerAttr(names.index(word), T.i64)
    return p.create_op(operands=p.resolve_operands(refs, [t, t]), result_types=[_i1_like(t)],
                       attributes=attrs)


def _print_cmp(pr: FormPrinter, op: Operation) -> None:
    pred = op.attr("predicate")
    pr.write(f"{pr.op_name_text(op)} {_PREDICATES[op.name][pred.value]}, ")
    pr.print_operands(op.operands)
    pr.write(flags_text(op))
    pr.print_op_attr_dict(op, elided=("predicate", *_FLAG_NAMES))
    pr.write(" : ")
    pr.print_type(op.operands[0].type)


def _predicate_cases(names: tuple[str, ...]) -> C.Constraint:
    """MLIR's enum attribute: an integer naming one of the predicates (MLIR
    wants it 64-bit; the width is not checked, only the range, which the
    printer indexes by)."""
    cases = ", ".join(str(i) for i in range(len(names)))
    return C.Constraint(f"allowed 64-bit signless integer cases: {cases}",
                        lambda a: isinstance(a, A.IntegerAttr) and 0 <= a.value < len(names))


def _cmp(name: str, operand: C.Constraint, summary: str) -> OpDef:
    return OpDef(name, summary=summary, operands=[("lhs", operand), ("rhs", operand)],
                 attributes=[("predicate", _predicate_cases(_PREDICATES[name])), ("fastmath", C.AnyAttr, True)],
                 results=[("result", BoolLike)], traits=(Traits.Pure, Traits.SameTypeOperands),
                 assembly=CustomForm(_parse_cmp, _print_cmp))


CMPI = _cmp("arith.cmpi", SignlessIntegerLike, "integer comparison operation")
CMPF = _cmp("arith.cmpf", FloatLike, "floating-point comparison operation")


# ------------------------------------------------------------------ select


def _parse_select(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    if len(refs) != 3:
        raise p.error("expected 3 operands", refs[0][2] if refs else None)
    attrs = p.parse_optional_attr_dict()
    types = p.parse_colon_type_list()
    cond_t, t = (T.i1, types[0]) if len(types) == 1 else (types[0], types[1])
    if len(types) == 1 and getattr(p, "std_era", False):
        # 2019's `select %c, %a, %b : tensor<4xi32>` took an i1 condition of the same shape.
        if isinstance(t, T.FunctionType):
            raise p.error("expected type with valid i1 shape", getattr(p, "op_start", None))
        cond_t = _i1_like(t)
    return p.create_op("arith.select", p.resolve_operands(refs, [cond_t, t, t]), [t], attrs)


def _print_select(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operands(op.operands)
    pr.print_op_attr_dict(op)
    pr.write(" : ")
    if op.operands[0].type is not T.i1:
        pr.print_type(op.operands[0].type)
        pr.write(", ")
    pr.print_type(op.results[0].type)


def _verify_select(op: Operation) -> None:
    a, b = op.operands[1].type, op.operands[2].type
    if a is not b or op.results[0].type is not a:
        raise op_error(op, "failed to verify that all of {true_value, false_value, result} have same type")


SELECT = OpDef(
    "arith.select",
    summary="select operation",
    operands=[("condition", BoolLike), ("true_value", C.AnyType), ("false_value", C.AnyType)],
    results=[("result", C.AnyType)],
    traits=(Traits.Pure,),
    assembly=CustomForm(_parse_select, _print_select),
    verify=_verify_select,
)


# ------------------------------------------------------------------ casts


def parse_cast(p: FormParser) -> Operation:
    """`%a {attrs} : from to into` (shared by every cast-like op)."""
    ref = p.parse_operand_ref()
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    src = p.parse_type()
    p.parse_keyword("to")
    dst = p.parse_type()
    return p.create_op(operands=p.resolve_operands([ref], [src]), result_types=[dst], attributes=attrs)


def print_cast(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.print_op_attr_dict(op)
    pr.write(f" : {op.operands[0].type} to {op.results[0].type}")


CAST_FORM = CustomForm(parse_cast, print_cast)
IntOrIndexLike = C.shaped_or_scalar(C.SignlessIntegerOrIndex)

_CASTS = [
    ("index_cast", IntOrIndexLike, IntOrIndexLike, "cast between index and integer types"),
    ("index_castui", IntOrIndexLike, IntOrIndexLike, "unsigned cast between index and integer types"),
    ("extsi", SignlessIntegerLike, SignlessIntegerLike, "integer sign extension"),
    ("extui", SignlessIntegerLike, SignlessIntegerLike, "integer zero extension"),
    ("trunci", SignlessIntegerLike, SignlessIntegerLike, "integer truncation"),
    ("sitofp", SignlessIntegerLike, FloatLike, "cast from signed integer to floating-point"),
    ("uitofp", SignlessIntegerLike, FloatLike, "cast from unsigned integer to floating-point"),
    ("fptosi", FloatLike, SignlessIntegerLike, "cast from floating-point to signed integer"),
    ("fptoui", FloatLike, SignlessIntegerLike, "cast from floating-point to unsigned integer"),
    ("extf", FloatLike, FloatLike, "cast from floating-point to wider floating-point"),
    ("truncf", FloatLike, FloatLike, "cast from floating-point to narrower floating-point"),
    ("bitcast", C.AnyType, C.AnyType, "bitcast between values of equal bit width"),
]

def _element(t: T.Type) -> T.Type:
    return getattr(t, "element_type", t) if not isinstance(t, T.ComplexType) else t


def _verify_width_change(wider: bool):
    """MLIR's check of extsi/extui/extf (the result wider) and trunci/truncf (narrower)."""
    def verify(op: Operation) -> None:
        src, dst = _element(op.operands[0].type), _element(op.results[0].type)
        sw, dw = getattr(src, "width", None), getattr(dst, "width", None)
        if sw is None or dw is None or type(src) is not type(dst):
            return
        if wider and dw <= sw:
            raise op_error(op, f"result type '{dst}' must be wider than operand type '{src}'")
        if not wider and dw >= sw:
            raise op_error(op, f"result type '{dst}' must be shorter than operand type '{src}'")
    return verify


def _verify_index_cast(op: Operation) -> None:
    """Exactly one side is `index` (MLIR's areCastCompatible for index_cast)."""
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(_element(src), T.IndexType) == isinstance(_element(dst), T.IndexType):
        raise op_error(op, f"operand type '{src}' and result type '{dst}' are cast incompatible")


_CAST_VERIFIERS = {"extsi": _verify_width_change(True), "extui": _verify_width_change(True),
                   "extf": _verify_width_change(True), "trunci": _verify_width_change(False),
                   "truncf": _verify_width_change(False), "index_cast": _verify_index_cast,
                   "index_castui": _verify_index_cast}

CAST_OPS = [OpDef(f"arith.{m}", summary=s, operands=[("in", src)], results=[("out", dst)],
                  traits=(Traits.Pure,), assembly=CAST_FORM, verify=_CAST_VERIFIERS.get(m))
            for m, src, dst, s in _CASTS]


ARITH = REGISTRY.dialect("arith", summary="Basic integer and floating point arithmetic.")
ARITH.add(CONSTANT, *BINARY_OPS, NEGF, CMPI, CMPF, SELECT, *CAST_OPS)


# ------------------------------------------------------------------ 2019 spellings

_LEGACY = {
    "constant": "constant", "addi": "addi", "subi": "subi", "muli": "muli", "divi_signed": "divsi",
    "divis": "divsi", "divi_unsigned": "divui", "diviu": "divui", "remi_signed": "remsi", "remis": "remsi",
    "remi_unsigned": "remui", "remiu": "remui", "and": "andi", "or": "ori", "xor": "xori",
    "shift_left": "shli", "shift_right_signed": "shrsi", "shift_right_unsigned": "shrui",
    "cmpi": "cmpi", "cmpf": "cmpf", "select": "select", "index_cast": "index_cast", "addf": "addf",
    "subf": "subf", "mulf": "mulf", "divf": "divf", "remf": "remf", "negf": "negf", "sitofp": "sitofp",
    "uitofp": "uitofp", "fptosi": "fptosi", "fptoui": "fptoui", "sexti": "extsi", "zexti": "extui",
    "trunci": "trunci", "fpext": "extf", "fptrunc": "truncf", "bitcast": "bitcast",
}
for _old, _new in _LEGACY.items():
    REGISTRY.legacy_names[_old] = REGISTRY.legacy_names[f"std.{_old}"] = f"arith.{_new}"
