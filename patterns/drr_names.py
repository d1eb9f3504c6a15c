"""What DRR names mean in Python: op classes, ODS constraints, recognized C++ predicates.

DRR refers to ops by their TableGen class (`TF_AddOp`, `Arith_AddIOp`) and to
constraints by ODS names (`TF_NumberTensor`, `F32Attr`); this module maps
those names onto op records and `ir.constraints`.  Positional DRR arguments
are operands then attributes in ODS order, so an op's *signature* comes from
its egraft record or, for TF ops without one, from TensorFlow's op registry
snapshot (inputs, then the attributes that are not derived from operand
types or counts).  A few C++ predicates that DRR files use verbatim are
recognized by their text and become built-in checks; anything else needs a
Python implementation supplied by name.
"""

from __future__ import annotations

import re
from typing import Callable

from egraft.ir.records import constraints as C
from egraft.ir.core import types as T
from egraft.ir.records.opdef import SINGLE
from egraft.ir.records.registry import REGISTRY

from . import checks
from .rule import Check

# ------------------------------------------------------------------ ops

_DIALECT_PREFIXES = {"TF": "tf", "Arith": "arith", "Std": "arith", "MemRef": "memref", "Affine": "affine",
                     "TFExecutor": "tf_executor", "TfExecutor": "tf_executor", "TFG": "tfg", "Func": "func"}


def op_name(cls: str) -> str | None:
    """`TF_AddV2Op` -> `tf.AddV2`, `Arith_AddIOp` -> `arith.addi` (through the records); None if not an op."""
    m = re.fullmatch(r"([A-Za-z]+)_(\w+?)Op", cls)
    if m is None or m.group(1) not in _DIALECT_PREFIXES:
        return None
    dialect, mnemonic = _DIALECT_PREFIXES[m.group(1)], m.group(2)
    if dialect == "tf":
        return f"tf.{mnemonic}"
    d = REGISTRY.dialects.get(dialect)
    for name in (d.ops if d is not None else ()):
        short = name.split(".", 1)[1]
        if short.replace("_", "").lower() == mnemonic.lower():
            return name
    return f"{dialect}.{mnemonic.lower()}"


def signature(name: str) -> tuple[list[str], list[str], int | None] | None:
    """(operand group kinds, attribute names in ODS order, result count or None) of an op."""
    opdef = REGISTRY.lookup(name)
    if name.startswith("tf."):
        from egraft.ir.graphdef.op_registry import lookup_op

        tf_def = lookup_op(name[3:])
        if tf_def is not None:
            derived = {a.type_attr for a in tf_def.input_arg} | {a.number_attr for a in tf_def.input_arg} \
                | {a.type_list_attr for a in tf_def.input_arg} | {a.type_attr for a in tf_def.output_arg} \
                | {a.number_attr for a in tf_def.output_arg} | {a.type_list_attr for a in tf_def.output_arg}
            operands = ["variadic" if a.number_attr or a.type_list_attr else SINGLE for a in tf_def.input_arg]
            attrs = [a.name for a in tf_def.attr if a.name not in derived and a.type not in ("type", "list(type)")]
            fixed = all(not (a.number_attr or a.type_list_attr) for a in tf_def.output_arg)
            return operands, attrs, len(tf_def.output_arg) if fixed else None
    if opdef is None:
        return None
    fixed = all(r.kind == SINGLE for r in opdef.results)
    return [d.kind for d in opdef.operands], [a.name for a in opdef.attributes], \
        len(opdef.results) if fixed else None


# ------------------------------------------------------------------ constraints


def _tf_elements(summary: str, pred: Callable[[T.Type], bool]) -> C.Constraint:
    return C.Constraint(summary, lambda t: isinstance(t, T.ShapedType) and pred(t.element_type))


def _is_number(e: T.Type) -> bool:
    return isinstance(e, (T.IntegerType, T.IndexType, T.FloatType, T.ComplexType))


TYPE_CONSTRAINTS: dict[str, C.Constraint] = {
    "AnyType": C.AnyType, "AnyTensor": C.AnyTensor, "AnyRankedTensor": C.AnyRankedTensor,
    "AnyInteger": C.AnyInteger, "AnySignlessInteger": C.AnySignlessInteger, "Index": C.Index, "I1": C.I1,
    "AnyMemRef": C.AnyMemRef, "AnyVector": C.AnyVector,
    "F32": C.Constraint("f32", lambda t: t is T.f32), "F64": C.Constraint("f64", lambda t: t is T.f64),
    "I32": C.Constraint("i32", lambda t: t is T.i32), "I64": C.Constraint("i64", lambda t: t is T.i64),
    "TF_Tensor": C.AnyTensor,
    "TF_NumberTensor": _tf_elements("tensor of number values", _is_number),
    "TF_FloatTensor": _tf_elements("tensor of floating-point values", lambda e: isinstance(e, T.FloatType)),
    "TF_IntTensor": _tf_elements("tensor of integer values", lambda e: isinstance(e, T.IntegerType)),
    "TF_Int32Tensor": _tf_elements("tensor of 32-bit integer values", lambda e: e is T.i32),
    "TF_Int64Tensor": _tf_elements("tensor of 64-bit integer values", lambda e: e is T.i64),
    "TF_BoolTensor": _tf_elements("tensor of bool values", lambda e: e is T.i1),
    "F32Tensor": _tf_elements("tensor of f32 values", lambda e: e is T.f32),
    "I32Tensor": _tf_elements("tensor of i32 values", lambda e: e is T.i32),
    "I64Tensor": _tf_elements("tensor of i64 values", lambda e: e is T.i64),
    "AnyStaticShapeTensor": C.Constraint("statically shaped tensor",
                                         lambda t: isinstance(t, T.RankedTensorType) and t.has_static_shape),
}

ATTR_CONSTRAINTS: dict[str, C.Constraint] = {
    "AnyAttr": C.AnyAttr, "StrAttr": C.StrAttr, "BoolAttr": C.BoolAttr, "UnitAttr": C.UnitAttr,
    "TypeAttr": C.TypeAttr, "ArrayAttr": C.ArrayAttr, "DictionaryAttr": C.DictAttr, "ElementsAttr": C.ElementsAttr,
    "I32Attr": C.I32Attr, "I64Attr": C.I64Attr, "F32Attr": C.F32Attr, "IndexAttr": C.IndexAttr,
    "APIntAttr": C.AnyIntAttr, "AnyI64Attr": C.I64Attr, "F64Attr": C.AnyFloatAttr, "I64ArrayAttr": C.I64ArrayAttr,
    "StrArrayAttr": C.StrArrayAttr, "SymbolRefAttr": C.SymbolRefAttr, "FlatSymbolRefAttr": C.FlatSymbolRefAttr,
    "AffineMapAttr": C.AffineMapAttr,
}

# Element types of the attribute classes `ConstantAttr<Class, "text">` uses.
CONSTANT_ATTR_TYPES: dict[str, T.Type] = {
    "I1Attr": T.i1, "BoolAttr": T.i1, "I32Attr": T.i32, "I64Attr": T.i64, "IndexAttr": T.index,
    "F32Attr": T.f32, "F64Attr": T.f64, "APIntAttr": T.i64,
}


def rank_pred(args: tuple) -> C.Constraint | None:
    """`HasAnyRankOfPred<[2, 3]>` as a type constraint."""
    ranks = tuple(args[0]) if args and isinstance(args[0], list) else ()
    return C.Constraint(f"rank in {list(ranks)}",
                        lambda t: isinstance(t, T.ShapedType) and t.has_rank and t.rank in ranks)


TYPE_PREDICATES: dict[str, Callable[[tuple], C.Constraint | None]] = {
    "HasAnyRankOfPred": rank_pred,
    "HasStaticShapePred": lambda _: C.Constraint("static shape",
                                                 lambda t: isinstance(t, T.ShapedType) and t.has_static_shape),
    "HasRankPred": lambda _: C.Constraint("ranked", lambda t: isinstance(t, T.ShapedType) and t.has_rank),
}


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# C++ predicate texts DRR files use verbatim, recognized as built-in checks ($0, $1 = arguments).
KNOWN_CPREDS: dict[str, Callable[..., Check]] = {
    _squash("$0.getType() == $1.getType()"): checks.same_type,
    _squash("getElementTypeOrSelf($0) == getElementTypeOrSelf($1)"): checks.same_element_type,
    _squash("$0.hasOneUse()"): checks.has_one_use,
    _squash("$_self.hasOneUse()"): checks.has_one_use,
}


def known_cpred(text: str) -> Callable[..., Check] | None:
    return KNOWN_CPREDS.get(_squash(text))
