"""Constant folding for canonicalization rules: element-wise arithmetic with each type's semantics.

`natives.fold` computes in numpy's int64, which is right for tf's i64 tensors but not
for `arith` on `i8` or `i1`: MLIR's arith ops wrap at the width of their type, and a
signless integer is printed signed (`200 : i8` is `-56`). Here every integer is a
Python int reduced to the type's width (two's complement, stored signed, `i1` as 0/1),
floats are computed in the type's own precision (numpy's float16/32/64; other float
types decline), and a fold whose result is undefined (division by zero, signed
overflow of division, a shift by the width or more) declines, so the op stays.

`folder(name, fn, *operands, result=r)` makes the native a rule uses: it reads the
constants producing the operands (`ConstOf`) and the result's type (`TypeOf(r)`),
applies `fn` per element (scalar operands broadcast over a dense one, which only
`select` needs) and builds an attribute of the result type.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

from .fold_limits import allows
from .rule import Check, ConstOf, Native, TypeOf, Var

INDEX_WIDTH = 64
_NP_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _n(v: Var | str) -> str:
    return v.name if isinstance(v, Var) else v


def width(t: T.Type) -> int | None:
    """Bit width of an integer or index element type (None for anything else)."""
    et = T.element_type(t)
    if isinstance(et, T.IndexType):
        return INDEX_WIDTH
    return et.width if isinstance(et, T.IntegerType) else None


def wrap(value: int, bits: int) -> int:
    """`value` modulo 2^bits, as the signed number MLIR stores (i1: 0 or 1)."""
    value &= (1 << bits) - 1
    if bits > 1 and value >> (bits - 1):
        value -= 1 << bits
    return value


def signed(value: int, bits: int) -> int:
    """The two's complement value of `bits` bits (i1's true is -1, as signed ops see it)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def unsigned(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


def elements(attr: A.Attribute, who: str = "a fold") -> list[Any] | None:
    """The elements of a scalar or dense constant (Python ints or floats), or None.

    A splat gives its one value, and a one-element list stands for "every element" to
    `apply` and `build`, so folding splats costs the same at any shape. Any other dense
    constant is read element by element, if `fold_limits` allows ``who`` that many."""
    if isinstance(attr, A.IntegerAttr):
        return [int(attr.value)]
    if isinstance(attr, A.FloatAttr):
        return [float(attr.value)]
    if not isinstance(attr, A.DenseElementsAttr) or A.numpy_dtype(attr.element_type) is None:
        return None
    splat = _splat_value(attr)
    if splat is not None:
        return [splat]
    shape = getattr(attr.type, "shape", None) or ()
    if not allows(math.prod(shape), who):
        return None
    try:
        arr = attr.to_numpy()
    except ValueError:
        return None
    if arr.dtype == object:
        return None
    return [x.item() if hasattr(x, "item") else x for x in arr.reshape(-1)]


def _splat_value(attr: A.DenseElementsAttr) -> Any:
    """The value of every element of a splat (also one stored as a single hex element), as
    `to_numpy` would give it (the element type's precision); None when not a splat."""
    dtype = A.numpy_dtype(attr.element_type)
    data = attr.data
    if isinstance(data, bytes) and len(data) == np.dtype(dtype).itemsize:
        return np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<"))[0].item()
    if not attr.is_splat or isinstance(data, (tuple, str, bytes)):
        return None
    return np.array(data, dtype=dtype).item()


def build(rtype: T.Type, values: list[Any]) -> A.Attribute | None:
    """A constant attribute of `rtype` holding `values` (one value: scalar or splat)."""
    et = T.element_type(rtype)
    if isinstance(et, T.FloatType):
        np_type = _NP_FLOAT.get(et.name)
        if np_type is None:
            return None
        with np.errstate(over="ignore"):  # out of the type's range rounds to ±inf, as IEEE says
            values = [float(np_type(v)) for v in values]
    else:
        bits = width(et)
        if bits is None:
            return None
        values = [wrap(int(v), bits) for v in values]
        if bits == 1 and isinstance(rtype, T.ShapedType):
            values = [bool(v) for v in values]
    if isinstance(rtype, T.ShapedType):
        if not rtype.has_static_shape:
            return None
        count = math.prod(rtype.shape)
        if len(values) not in (1, count):
            return None
        return A.DenseElementsAttr(rtype, values[0] if len(values) == 1 else tuple(values))
    if len(values) != 1:
        return None
    return A.float_attr(values[0], et) if isinstance(et, T.FloatType) else A.IntegerAttr(values[0], et)


def apply(fn: Callable[..., Any], operands: list[list[Any]]) -> list[Any] | None:
    """`fn` per element, a one-element operand broadcast over the others; None if any declines."""
    n = max(len(o) for o in operands)
    if any(len(o) not in (1, n) for o in operands):
        return None
    out = []
    for i in range(n):
        r = fn(*(o[0] if len(o) == 1 else o[i] for o in operands))
        if r is None:
            return None
        out.append(r)
    return out


def folder(name: str, fn: Callable[..., Any], *operands: Var | str, result: Var | str,
           bits_of: Var | str | None = None) -> Native:
    """A native folding the constants producing `operands` into a constant of `result`'s type.

    `fn(*elements, bits=w)` gets the operands' elements; `w` is the width of
    `bits_of`'s (default: the first operand's) integer element type, None for floats."""
    source = _n(bits_of or operands[0])

    def run(*args: Any) -> A.Attribute | None:
        *consts, src_type, rtype = args
        values = [elements(c, name) for c in consts]
        if any(v is None or not v for v in values):
            return None
        bits = width(src_type)
        if bits is not None:
            values = [[signed(int(x), bits) for x in v] for v in values]  # type: ignore[union-attr]
        out = apply(lambda *xs: fn(*xs, bits=bits), values)  # type: ignore[arg-type]
        return None if out is None else build(rtype, out)

    return Native(name, run, tuple(ConstOf(_n(o)) for o in operands) + (TypeOf(source), TypeOf(_n(result))))


def typed_constant(name: str, fn: Callable[..., Any], v: Var | str, *attrs: Var | str) -> Native:
    """A constant of `v`'s type computed from attributes only (`fn(*attrs) -> element`)."""
    def run(*args: Any) -> A.Attribute | None:
        *values, t = args
        x = fn(*values)
        return None if x is None else build(t, [x])
    return Native(name, run, tuple(Var(_n(a)) for a in attrs) + (TypeOf(_n(v)),))


def float_splat_bits(v: Var | str, value: float) -> Check:
    """The constant producing `v` is a float splat equal to `value` bit for bit (so -0.0 is not 0.0)."""
    want = (value, math.copysign(1.0, value))

    def fn(c: A.Attribute) -> bool:
        xs = elements(c, f"check float splat {value!r}")
        return bool(xs) and isinstance(T.element_type(c.type), T.FloatType) and all(  # type: ignore[union-attr]
            isinstance(x, float) and (x, math.copysign(1.0, x)) == want for x in xs)
    return Check(f"{_n(v)} is the float splat {value!r}", fn, (ConstOf(_n(v)),), "splat", (value,))


def int_splat(v: Var | str, value: int) -> Check:
    """The constant producing `v` is an integer splat equal to `value` at its width (-1 = all ones)."""
    def fn(c: A.Attribute) -> bool:
        xs = elements(c, f"check integer splat {value}")
        bits = width(c.type)  # type: ignore[union-attr]
        return bool(xs) and bits is not None and all(wrap(int(x), bits) == wrap(value, bits) for x in xs)
    return Check(f"{_n(v)} is the integer splat {value}", fn, (ConstOf(_n(v)),), "splat", (value,))


# ------------------------------------------------------------------ element functions


def _div_s(a: int, b: int, bits: int) -> int | None:
    if b == 0 or (a == -(1 << (bits - 1)) and b == -1 and bits > 1):
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _rem_s(a: int, b: int, bits: int) -> int | None:
    q = _div_s(a, b, bits)
    return None if q is None else a - q * b


def _shift(kind: str) -> Callable[..., int | None]:
    def fn(a: int, b: int, bits: int) -> int | None:
        s = unsigned(b, bits)
        if s >= bits:
            return None  # poison in MLIR: leave the op
        if kind == "shl":
            return a << s
        return unsigned(a, bits) >> s if kind == "shru" else a >> s
    return fn


INT_BINARY: dict[str, Callable[..., int | None]] = {
    "addi": lambda a, b, bits: a + b,
    "subi": lambda a, b, bits: a - b,
    "muli": lambda a, b, bits: a * b,
    "andi": lambda a, b, bits: a & b,
    "ori": lambda a, b, bits: a | b,
    "xori": lambda a, b, bits: a ^ b,
    "divsi": _div_s,
    "remsi": _rem_s,
    "divui": lambda a, b, bits: None if unsigned(b, bits) == 0 else unsigned(a, bits) // unsigned(b, bits),
    "remui": lambda a, b, bits: None if unsigned(b, bits) == 0 else unsigned(a, bits) % unsigned(b, bits),
    "shli": _shift("shl"),
    "shrsi": _shift("shrs"),
    "shrui": _shift("shru"),
    "maxsi": lambda a, b, bits: max(a, b),
    "minsi": lambda a, b, bits: min(a, b),
    "maxui": lambda a, b, bits: a if unsigned(a, bits) >= unsigned(b, bits) else b,
    "minui": lambda a, b, bits: a if unsigned(a, bits) <= unsigned(b, bits) else b,
}

#: arith.cmpi predicates by their enum value: (signed?, relation) on (a, b).
CMPI: dict[int, Callable[..., bool]] = {
    0: lambda a, b, bits: a == b,
    1: lambda a, b, bits: a != b,
    2: lambda a, b, bits: a < b,
    3: lambda a, b, bits: a <= b,
    4: lambda a, b, bits: a > b,
    5: lambda a, b, bits: a >= b,
    6: lambda a, b, bits: unsigned(a, bits) < unsigned(b, bits),
    7: lambda a, b, bits: unsigned(a, bits) <= unsigned(b, bits),
    8: lambda a, b, bits: unsigned(a, bits) > unsigned(b, bits),
    9: lambda a, b, bits: unsigned(a, bits) >= unsigned(b, bits),
}

#: Predicates true of (x, x): eq, sle, sge, ule, uge.
CMPI_REFLEXIVE = frozenset({0, 3, 5, 7, 9})


def float_binary(op: Callable[[Any, Any], Any]) -> Callable[..., float]:
    """An IEEE operation in the precision of the result (`build` rounds to the type)."""
    def fn(a: float, b: float, bits: None) -> float:
        with np.errstate(all="ignore"):
            return float(op(np.float64(a), np.float64(b)))
    return fn


FLOAT_BINARY: dict[str, Callable[..., float]] = {
    "addf": float_binary(np.add),
    "subf": float_binary(np.subtract),
    "mulf": float_binary(np.multiply),
    "divf": float_binary(np.divide),
}
