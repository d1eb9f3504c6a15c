"""Type and attribute constraints, composable like ODS predicates.

A constraint is a named predicate with a human summary (used in verifier
messages and generated docs).  `&`, `|` and `~` compose them, as ODS's
`And`, `Or` and `Neg` do; `Confined` adds attribute refinements such as
`IntMinValue` and `ArrayMinCount`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import attrs

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T


@attrs.frozen
class Constraint:
    """A predicate over a type or an attribute, with a summary for messages."""

    summary: str
    predicate: Callable[[Any], bool] = attrs.field(eq=False)

    def __call__(self, value: Any) -> bool:
        return self.predicate(value)

    def __and__(self, other: "Constraint") -> "Constraint":
        return Constraint(f"{self.summary} and {other.summary}", lambda v: self(v) and other(v))

    def __or__(self, other: "Constraint") -> "Constraint":
        return Constraint(f"{self.summary} or {other.summary}", lambda v: self(v) or other(v))

    def __invert__(self) -> "Constraint":
        return Constraint(f"not {self.summary}", lambda v: not self(v))


def any_of(summary: str, *options: Constraint) -> Constraint:
    return Constraint(summary, lambda v: any(o(v) for o in options))


# ------------------------------------------------------------------ types

AnyType = Constraint("any type", lambda t: True)
Index = Constraint("index", lambda t: t is T.index)
AnySignlessInteger = Constraint("signless integer", lambda t: isinstance(t, T.IntegerType) and t.signedness == "")
AnyInteger = Constraint("integer", lambda t: isinstance(t, T.IntegerType))
AnyFloat = Constraint("floating-point", lambda t: isinstance(t, T.FloatType))
I1 = Constraint("1-bit signless integer", lambda t: t is T.i1)
SignlessIntegerOrIndex = AnySignlessInteger | Index
AnyTensor = Constraint("tensor of any type values",
                       lambda t: isinstance(t, (T.RankedTensorType, T.UnrankedTensorType)))
AnyRankedTensor = Constraint("ranked tensor", lambda t: isinstance(t, T.RankedTensorType))
AnyMemRef = Constraint("memref of any type values",
                       lambda t: isinstance(t, (T.MemRefType, T.UnrankedMemRefType)))
AnyRankedMemRef = Constraint("ranked memref", lambda t: isinstance(t, T.MemRefType))
AnyVector = Constraint("vector", lambda t: isinstance(t, T.VectorType))


def dialect_type(dialect: str, mnemonic: str) -> Constraint:
    return Constraint(f"!{dialect}.{mnemonic}",
                      lambda t: isinstance(t, T.DialectType) and t.dialect == dialect and t.mnemonic == mnemonic)


def tensor_of(summary: str, element: Constraint) -> Constraint:
    return Constraint(f"tensor of {summary} values",
                      lambda t: isinstance(t, (T.RankedTensorType, T.UnrankedTensorType)) and element(t.element_type))


def shaped_or_scalar(scalar: Constraint) -> Constraint:
    """`scalar`, or a tensor/vector of it (arith ops take all three)."""
    return Constraint(f"{scalar.summary}-like",
                      lambda t: scalar(t.element_type if isinstance(t, (T.RankedTensorType, T.UnrankedTensorType,
                                                                         T.VectorType)) else t))


# ------------------------------------------------------------------ attributes

AnyAttr = Constraint("any attribute", lambda a: True)
StrAttr = Constraint("string attribute", lambda a: isinstance(a, A.StringAttr))
BoolAttr = Constraint("bool attribute", lambda a: isinstance(a, A.IntegerAttr) and a.type is T.i1)
UnitAttr = Constraint("unit attribute", lambda a: a is A.UNIT)
TypeAttr = Constraint("type attribute", lambda a: isinstance(a, A.TypeAttr))
FunctionTypeAttr = Constraint("type attribute of function type",
                              lambda a: isinstance(a, A.TypeAttr) and isinstance(a.value, T.FunctionType))
SymbolNameAttr = StrAttr
SymbolRefAttr = Constraint("symbol reference attribute", lambda a: isinstance(a, A.SymbolRefAttr))
FlatSymbolRefAttr = Constraint("flat symbol reference attribute",
                               lambda a: isinstance(a, A.SymbolRefAttr) and not a.nested)
ArrayAttr = Constraint("array attribute", lambda a: isinstance(a, A.ArrayAttr))
DictAttr = Constraint("dictionary of named attribute values", lambda a: isinstance(a, A.DictionaryAttr))
ElementsAttr = Constraint("constant vector/tensor attribute",
                          lambda a: isinstance(a, (A.DenseElementsAttr, A.DenseResourceAttr, A.VerbatimAttr)))
AffineMapAttr = Constraint("AffineMap attribute", lambda a: isinstance(a, A.AffineMapAttr))
IntegerSetAttr = Constraint("IntegerSet attribute", lambda a: isinstance(a, A.IntegerSetAttr))
TypedAttr = Constraint("typed attribute", lambda a: getattr(a, "type", None) is not None)


def int_attr(width: int) -> Constraint:
    return Constraint(f"{width}-bit signless integer attribute",
                      lambda a: isinstance(a, A.IntegerAttr) and isinstance(a.type, T.IntegerType)
                      and a.type.width == width and a.type.signedness == "")


I32Attr = int_attr(32)
I64Attr = int_attr(64)
IndexAttr = Constraint("index attribute", lambda a: isinstance(a, A.IntegerAttr) and a.type is T.index)
AnyIntAttr = Constraint("integer attribute", lambda a: isinstance(a, A.IntegerAttr))
F32Attr = Constraint("32-bit float attribute", lambda a: isinstance(a, A.FloatAttr) and a.type is T.f32)
AnyFloatAttr = Constraint("floating-point attribute", lambda a: isinstance(a, A.FloatAttr))


def array_of(element: Constraint) -> Constraint:
    return Constraint(f"array attribute of {element.summary}",
                      lambda a: isinstance(a, A.ArrayAttr) and all(element(x) for x in a))


I64ArrayAttr = array_of(I64Attr)
StrArrayAttr = array_of(StrAttr)
TypeArrayAttr = array_of(TypeAttr)
DictArrayAttr = array_of(DictAttr)


def str_enum(*values: str) -> Constraint:
    """A string attribute whose value is one of `values` (TF_AnyStrAttrOf)."""
    return Constraint("string attribute whose value is " + ", or ".join(values),
                      lambda a: isinstance(a, A.StringAttr) and a.value in values)


def dialect_attr(dialect: str, mnemonic: str) -> Constraint:
    return Constraint(f"#{dialect}.{mnemonic}",
                      lambda a: isinstance(a, A.DialectAttr) and a.dialect == dialect and a.mnemonic == mnemonic)


def int_min_value(n: int) -> Constraint:
    return Constraint(f"whose minimum value is {n}", lambda a: isinstance(a, A.IntegerAttr) and a.value >= n)


def array_min_count(n: int) -> Constraint:
    return Constraint(f"with at least {n} elements", lambda a: isinstance(a, A.ArrayAttr) and len(a) >= n)


def Confined(base: Constraint, refinements: Iterable[Constraint]) -> Constraint:
    refinements = tuple(refinements)
    summary = " ".join([base.summary, *(r.summary for r in refinements)])
    return Constraint(summary, lambda a: base(a) and all(r(a) for r in refinements))
