"""TensorFlow's types (`!tf_type.*`, `!tf_executor.*`) and the checks built on them.

The types stay `DialectType`s holding their text (so unknown spellings still
round-trip); this module gives them structure where verification needs it:
which mnemonics exist, what a `*ref` type or a `resource<...>` subtype drops
to, control/token types, and TF's broadcast-compatibility rule that the
executor ops (Merge, Switch, Enter, Exit, _SwitchN) check their data against.
"""

from __future__ import annotations

from egraft.ir.core import types as T
from egraft.ir.core.diagnostics import DiagnosticError
from egraft.ir.records.constraints import Constraint
from egraft.ir.records.registry import REGISTRY
from egraft.ir.syntax.attr_parser import AttributeParser

# ------------------------------------------------------------------ tf_type

# Element types without a ref flavour's builtin counterpart.
_OPAQUE = ("string", "resource", "variant")
_QUANTIZED = ("qint8", "qint16", "qint32", "quint8", "quint16")

# `*ref` mnemonic -> the type the ref reads as (TensorFlow's DT_*_REF dtypes).
_REF_BASES: dict[str, T.Type] = {
    "halfref": T.f16, "f32ref": T.f32, "f64ref": T.f64, "bfloat16ref": T.bf16, "boolref": T.i1,
    "int4ref": T.IntegerType(4), "int8ref": T.i8, "int16ref": T.i16, "int32ref": T.i32, "int64ref": T.i64,
    "uint4ref": T.IntegerType(4, "u"), "uint8ref": T.IntegerType(8, "u"),
    "uint16ref": T.IntegerType(16, "u"), "uint32ref": T.IntegerType(32, "u"),
    "uint64ref": T.IntegerType(64, "u"),
    "complex64ref": T.ComplexType(T.f32), "complex128ref": T.ComplexType(T.f64),
    "float8e4m3fnref": T.FloatType("f8E4M3FN"), "float8e5m2ref": T.FloatType("f8E5M2"),
    "float8e4m3fnuzref": T.FloatType("f8E4M3FNUZ"), "float8e5m2fnuzref": T.FloatType("f8E5M2FNUZ"),
    "float8e4m3b11fnuzref": T.FloatType("f8E4M3B11FNUZ"),
}
_REF_BASES.update({f"{name}ref": T.dialect_type("tf_type", name) for name in _OPAQUE + _QUANTIZED})

# TensorFlow's 2019 element types that became builtin types early in 2020 (`!tf.uint8` is
# `ui8` today, `!tf.complex64` `complex<f32>`): read so when written in 2019's `tf` namespace.
TF_2019_BUILTIN_TYPES: dict[str, T.Type] = {
    f"tf.{name}": _REF_BASES[f"{name}ref"]
    for name in ("uint8", "uint16", "uint32", "uint64", "complex64", "complex128")}
REGISTRY.legacy_types.update(TF_2019_BUILTIN_TYPES)

# `tensor` is tfg's type of a tensor whose dtype is not known.
TF_TYPE_MNEMONICS = frozenset(_OPAQUE + _QUANTIZED + ("control", "tensor") + tuple(_REF_BASES))
"""Every `!tf_type.<mnemonic>` TensorFlow defines."""

_WITH_SUBTYPES = ("resource", "variant")


def _tf_type(t: T.Type) -> str | None:
    """The mnemonic of a `!tf_type` type, else None."""
    if isinstance(t, T.DialectType) and t.dialect == "tf_type":
        return t.mnemonic
    return None


def is_ref(t: T.Type) -> bool:
    """`!tf_type.f32ref` and friends (TF1 reference dtypes)."""
    return _tf_type(t) in _REF_BASES


def is_resource(t: T.Type) -> bool:
    return _tf_type(t) == "resource"


def drop_ref_and_subtypes(t: T.Type) -> T.Type:
    """The element type a ref reads as, and `resource<...>`/`variant<...>`
    without their subtypes: the types TF compares when broadcasting."""
    m = _tf_type(t)
    if m is None:
        return t
    if m in _REF_BASES:
        return _REF_BASES[m]
    if m in _WITH_SUBTYPES and t.body != m:  # type: ignore[union-attr]
        return T.dialect_type("tf_type", m)
    return t


def verify_tf_type(body: str) -> str | list[str] | None:
    """Parser hook for `!tf_type.<body>`: unknown mnemonics, and resource or
    variant subtypes that are not tensors of TensorFlow element types (with
    TensorFlow's two diagnostics: the subtype's problem, then the type's)."""
    mnemonic = body.split("<", 1)[0]
    if mnemonic not in TF_TYPE_MNEMONICS:
        return f"unknown TensorFlow type: {mnemonic}"
    if mnemonic in _WITH_SUBTYPES and "<" in body:
        problem = _subtype_problem(body[len(mnemonic) + 1:-1])
        if problem is not None:
            return [problem, f"invalid {mnemonic} type"]
    return None


def _subtype_problem(params: str) -> str | None:
    """Why `params` is not a comma-separated list of TensorFlow tensor types."""
    p = AttributeParser(params, "<subtypes>")
    try:
        while True:
            t = p.parse_type()
            if not isinstance(t, _TENSOR):
                return "invalid kind of type specified"
            if not is_tf_element_type(t.element_type):
                return f"invalid subtype: '{t}'"
            if not p.parse_optional_punct(","):
                break
    except DiagnosticError as err:
        return err.diagnostics[0].message
    return None if p.at_end() else "expected '>'"


def is_tf_element_type(t: T.Type) -> bool:
    """Element types a TensorFlow tensor may hold."""
    return isinstance(t, (T.IntegerType, T.FloatType, T.ComplexType)) or _tf_type(t) is not None


# ------------------------------------------------------------------ tf_executor

CONTROL = T.dialect_type("tf_executor", "control")
TOKEN = T.dialect_type("tf_executor", "token")


def verify_tf_executor_type(body: str) -> str | None:
    """Parser hook for `!tf_executor.<body>`: only control and token exist."""
    if body not in ("control", "token"):
        return f"unknown tf_executor type: {body}"
    return None


def is_control(t: T.Type) -> bool:
    return t is CONTROL


# ------------------------------------------------------------------ constraints

Control = Constraint("control", is_control)
Token = Constraint("token", lambda t: t is TOKEN)
_TENSOR = (T.RankedTensorType, T.UnrankedTensorType)
TFTensor = Constraint("tensor of tf.dtype values", lambda t: isinstance(t, _TENSOR))
BoolTensor = Constraint("tensor of 1-bit signless integer values",
                        lambda t: isinstance(t, _TENSOR) and t.element_type is T.i1)
I32Tensor = Constraint("tensor of 32-bit signless integer values",
                       lambda t: isinstance(t, _TENSOR) and t.element_type is T.i32)
IndexTensor = Constraint("tensor of 32/64-bit signed integer values",
                         lambda t: isinstance(t, _TENSOR) and t.element_type in (T.i32, T.i64))
ResourceTensor = Constraint("tensor of resource values",
                            lambda t: isinstance(t, _TENSOR) and is_resource(t.element_type))


# ------------------------------------------------------------------ broadcasting


def broadcast_compatible(a: T.Type, b: T.Type) -> bool:
    """Whether TF's broadcast of two tensor types exists once refs and
    subtypes are dropped: same element type, and right-aligned dimensions
    equal, 1 or dynamic (unranked tensors broadcast with any shape)."""
    if not isinstance(a, _TENSOR) or not isinstance(b, _TENSOR):
        return a is b
    if drop_ref_and_subtypes(a.element_type) is not drop_ref_and_subtypes(b.element_type):
        return False
    if a.shape is None or b.shape is None:
        return True
    for x, y in zip(reversed(a.shape), reversed(b.shape)):
        if x != y and 1 not in (x, y) and T.DYNAMIC not in (x, y):
            return False
    return True
