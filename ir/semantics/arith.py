"""Semantics of the `arith` dialect (and the 2019 `std` spellings, which parse into it).

Integer ops compute exactly on Python ints and wrap to the type's width
(index: 64 bits).  Signless values are stored as their signed reading; the
unsigned ops (`divui`, `cmpi ult`, `extui`, ...) reread the bit pattern.
Following MLIR's LangRef (which follows LLVM): division and remainder by zero
and signed division overflow are undefined behaviour; a shift by at least the
width, `fptosi`/`fptoui` out of range and overflow under `overflow<nsw/nuw>`
give poison.  Both raise `Undefined`, so tests exclude such inputs.
Float ops are IEEE 754 (numpy's float arithmetic is correctly rounded),
with NaN, infinities and signed zeros as they fall.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import Interpreter, evaluator
from egraft.ir.semantics.values import (Undefined, Unsupported, as_signed, as_unsigned, attribute_value,
                                        int_width, storage_dtype, to_ints, wrap)


def _et(op: Operation) -> T.Type:
    return T.element_type(op.results[0].type)


def _flags(op: Operation) -> str:
    flag = op.attr("overflowFlags")
    return flag.params if isinstance(flag, A.DialectAttr) else ""


@evaluator("arith.constant")
def _constant(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return attribute_value(op.attr("value"), op.results[0].type)


# ------------------------------------------------------------------ integer arithmetic


def _int_op(exact: Callable[[Any, Any, int], Any], signed: bool, overflow_checked: bool = False):
    """An integer binary op: operands read signed or unsigned, `exact(a, b, width)`
    on Python ints (may raise Undefined), the result wrapped to the width."""
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        et = _et(op)
        w = int_width(et)
        read = as_signed if signed else as_unsigned
        a, b = read(to_ints(args[0]), w), read(to_ints(args[1]), w)
        out = np.frompyfunc(lambda x, y: exact(x, y, w), 2, 1)(a, b) if a.size else a
        if overflow_checked and a.size:
            _check_overflow(op, to_ints(args[0]), to_ints(args[1]), w)
        return wrap(out, et)
    return run


def _check_overflow(op: Operation, a: np.ndarray, b: np.ndarray, w: int) -> None:
    """`overflow<nsw>` / `overflow<nuw>`: a result out of the signed/unsigned range is poison."""
    flags = _flags(op)
    exact = {"arith.addi": lambda x, y: x + y, "arith.subi": lambda x, y: x - y,
             "arith.muli": lambda x, y: x * y, "arith.shli": lambda x, y: x << y}[op.name]
    if "nsw" in flags:
        r = np.asarray(np.frompyfunc(exact, 2, 1)(as_signed(a, w), as_unsigned(b, w) if op.name == "arith.shli"
                                                 else as_signed(b, w)), dtype=object)
        if any(not -(1 << (w - 1)) <= int(v) < (1 << (w - 1)) for v in r.flat):
            raise Undefined(f"{op.name} overflow<nsw> overflows")
    if "nuw" in flags:
        r = np.asarray(np.frompyfunc(exact, 2, 1)(as_unsigned(a, w), as_unsigned(b, w)), dtype=object)
        if any(not 0 <= int(v) < (1 << w) for v in r.flat):
            raise Undefined(f"{op.name} overflow<nuw> overflows")


def _nonzero(b: int) -> None:
    if b == 0:
        raise Undefined("integer division by zero")


def _no_signed_overflow(a: int, b: int, w: int) -> None:
    _nonzero(b)
    if b == -1 and a == -(1 << (w - 1)):
        raise Undefined("signed division overflow (INT_MIN / -1)")


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _divsi(a: int, b: int, w: int) -> int:
    _no_signed_overflow(a, b, w)
    return _trunc_div(a, b)


def _ceildivsi(a: int, b: int, w: int) -> int:
    _no_signed_overflow(a, b, w)
    return -((-a) // b)


def _floordivsi(a: int, b: int, w: int) -> int:
    _no_signed_overflow(a, b, w)
    return a // b


def _remsi(a: int, b: int, w: int) -> int:
    _no_signed_overflow(a, b, w)
    return a - b * _trunc_div(a, b)


def _unsigned(fn: Callable[[int, int], int]) -> Callable[[int, int, int], int]:
    def run(a: int, b: int, w: int) -> int:
        _nonzero(b)
        return fn(a, b)
    return run


def _shift(fn: Callable[[int, int], int]) -> Callable[[int, int, int], int]:
    """Shift amounts are read unsigned; at least the width gives poison."""
    def run(a: int, b: int, w: int) -> int:
        amount = b & ((1 << w) - 1)
        if amount >= w:
            raise Undefined(f"shift by {amount} >= width {w}")
        return fn(a, amount)
    return run


_INT_OPS: dict[str, tuple[Callable[[Any, Any, int], Any], bool]] = {
    "addi": (lambda a, b, w: a + b, True), "subi": (lambda a, b, w: a - b, True),
    "muli": (lambda a, b, w: a * b, True), "andi": (lambda a, b, w: a & b, False),
    "ori": (lambda a, b, w: a | b, False), "xori": (lambda a, b, w: a ^ b, False),
    "divsi": (_divsi, True), "ceildivsi": (_ceildivsi, True), "floordivsi": (_floordivsi, True),
    "remsi": (_remsi, True),
    "divui": (_unsigned(lambda a, b: a // b), False), "ceildivui": (_unsigned(lambda a, b: -((-a) // b)), False),
    "remui": (_unsigned(lambda a, b: a % b), False),
    "shli": (_shift(lambda a, n: a << n), False), "shrui": (_shift(lambda a, n: a >> n), False),
    "shrsi": (_shift(lambda a, n: a >> n), True),  # Python's >> of a negative int is arithmetic
    "maxsi": (lambda a, b, w: max(a, b), True), "minsi": (lambda a, b, w: min(a, b), True),
    "maxui": (lambda a, b, w: max(a, b), False), "minui": (lambda a, b, w: min(a, b), False),
}
for _name, (_fn, _signed) in _INT_OPS.items():
    evaluator(f"arith.{_name}")(_int_op(_fn, _signed, _name in ("addi", "subi", "muli", "shli")))


# ------------------------------------------------------------------ float arithmetic


def _ieee_extremum(pick_max: bool, propagate_nan: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """maximumf/minimumf (NaN wins, -0.0 < +0.0) and maxnumf/minnumf (a number
    beats a quiet NaN; on equal zeros the same signed-zero order is used)."""
    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.maximum(a, b) if pick_max else np.minimum(a, b)
        both_zero = (a == 0) & (b == 0)
        a_neg = np.signbit(a)
        zero_pick = np.where(a_neg == pick_max, b, a)  # max: prefer the positive zero
        out = np.where(both_zero, zero_pick, out)
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if propagate_nan:
            out = np.where(nan_a, a, np.where(nan_b, b, out))
        else:
            out = np.where(nan_a, b, np.where(nan_b, a, out))
        return np.asarray(out, a.dtype)
    return run


def fastmath_poison(op: Operation, values: list[np.ndarray]) -> None:
    """`fastmath<nnan>` / `<ninf>` (and `fast`): a NaN / Inf operand or result is poison.

    The other flags (nsz, reassoc, arcp, contract, afn) license results that
    differ from IEEE; they are not modelled: rules relying on them are
    compared with a tolerance (tag "approx"), which ignores zero signs."""
    flag = op.attr("fastmath")
    if not isinstance(flag, A.DialectAttr):
        return
    flags = set(flag.params.replace(" ", "").split(","))
    fast = "fast" in flags
    if (fast or "nnan" in flags) and any(np.isnan(v).any() for v in values):
        raise Undefined(f"{op.name} fastmath<{flag.params}> on NaN")
    if (fast or "ninf" in flags) and any(np.isinf(v).any() for v in values):
        raise Undefined(f"{op.name} fastmath<{flag.params}> on Inf")


def _float_op(fn: Callable[..., Any]):
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        out = np.asarray(fn(*args), args[0].dtype)
        fastmath_poison(op, [*args, out])
        return out
    return run


_FLOAT_OPS: dict[str, Callable[..., Any]] = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide, "remf": np.fmod,
    "negf": np.negative,  # flips the sign bit, of zeros and NaNs too
    "maximumf": _ieee_extremum(True, True), "minimumf": _ieee_extremum(False, True),
    "maxnumf": _ieee_extremum(True, False), "minnumf": _ieee_extremum(False, False),
}
for _name, _fn in _FLOAT_OPS.items():
    evaluator(f"arith.{_name}")(_float_op(_fn))


# ------------------------------------------------------------------ comparisons and select

_CMPI: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {
    "eq": (lambda a, b: a == b, True), "ne": (lambda a, b: a != b, True),
    "slt": (lambda a, b: a < b, True), "sle": (lambda a, b: a <= b, True),
    "sgt": (lambda a, b: a > b, True), "sge": (lambda a, b: a >= b, True),
    "ult": (lambda a, b: a < b, False), "ule": (lambda a, b: a <= b, False),
    "ugt": (lambda a, b: a > b, False), "uge": (lambda a, b: a >= b, False),
}
_CMPI_NAMES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


@evaluator("arith.cmpi")
def _cmpi(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    fn, signed = _CMPI[_CMPI_NAMES[op.attr("predicate").value]]
    w = int_width(T.element_type(op.operands[0].type))
    read = as_signed if signed else as_unsigned
    a, b = read(to_ints(args[0]), w), read(to_ints(args[1]), w)
    return np.asarray(fn(a, b) if a.size else np.zeros(a.shape), np.bool_)


_CMPF_NAMES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
               "ule", "une", "uno", "true")
_CMPF_BASE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal,
    "ne": np.not_equal,
}


@evaluator("arith.cmpf")
def _cmpf(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    """`o*` predicates are false when either operand is NaN, `u*` ones true."""
    a, b = args
    fastmath_poison(op, args)
    pred = _CMPF_NAMES[op.attr("predicate").value]
    unordered = np.isnan(a) | np.isnan(b)
    if pred in ("false", "true"):
        out = np.full(np.shape(a), pred == "true")
    elif pred in ("ord", "uno"):
        out = ~unordered if pred == "ord" else unordered
    else:
        base = _CMPF_BASE[pred[1:]](a, b)
        out = (base & ~unordered) if pred[0] == "o" else (base | unordered)
    return np.asarray(out, np.bool_)


@evaluator("arith.select")
def _select(interp: Interpreter, op: Operation, args: list) -> Any:
    cond, a, b = args
    if not isinstance(a, np.ndarray):
        return a if bool(cond) else b  # memrefs and other non-array values
    return np.asarray(np.where(cond, a, b), a.dtype)


# ------------------------------------------------------------------ casts


def _int_cast(signed_source: bool):
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        w = int_width(T.element_type(op.operands[0].type))
        ints = to_ints(args[0])
        return wrap(as_signed(ints, w) if signed_source else as_unsigned(ints, w), _et(op))
    return run


for _name in ("index_cast", "extsi", "trunci"):
    evaluator(f"arith.{_name}")(_int_cast(True))
for _name in ("index_castui", "extui"):
    evaluator(f"arith.{_name}")(_int_cast(False))


def int_to_float(value: int, dtype: np.dtype) -> Any:
    """The integer correctly rounded (to nearest even) into `dtype`.

    Python's `float(int)` rounds once to f64; a narrower target would round
    twice, so an inexact f64 is first made round-to-odd, which makes the
    second rounding correct (f64 has more than twice the precision bits)."""
    f = float(value) if abs(value) < 2 ** 1024 else math.copysign(math.inf, value)
    if np.dtype(dtype) != np.float64 and math.isfinite(f) and int(f) != value:
        if abs(int(f)) > abs(value):
            f = float(np.nextafter(f, 0.0))
        bits = np.float64(f).view(np.uint64) | np.uint64(1)
        f = float(bits.view(np.float64))
    return np.asarray(f).astype(dtype)


def _to_float(signed_source: bool):
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        w = int_width(T.element_type(op.operands[0].type))
        ints = to_ints(args[0])
        ints = as_signed(ints, w) if signed_source else as_unsigned(ints, w)
        dtype = storage_dtype(_et(op))
        flat = [int_to_float(int(v), dtype) for v in ints.flat]
        return np.array(flat, dtype).reshape(ints.shape)
    return run


evaluator("arith.sitofp")(_to_float(True))
evaluator("arith.uitofp")(_to_float(False))


def _to_int(signed_target: bool):
    """Round toward zero; NaN, infinities and values out of range give poison."""
    def run(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
        et = _et(op)
        w = int_width(et)
        lo, hi = (-(1 << (w - 1)), 1 << (w - 1)) if signed_target else (0, 1 << w)
        out = []
        for x in np.asarray(args[0], np.float64).flat:
            if not math.isfinite(x) or not lo <= math.trunc(x) < hi:
                raise Undefined(f"{op.name} of {x} is out of range of {et}")
            out.append(math.trunc(x))
        return wrap(np.array(out, dtype=object).reshape(np.shape(args[0])), et)
    return run


evaluator("arith.fptosi")(_to_int(True))
evaluator("arith.fptoui")(_to_int(False))


@evaluator("arith.extf", "arith.truncf")
def _float_cast(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    return np.asarray(args[0]).astype(storage_dtype(_et(op)))  # exact, resp. round to nearest even


@evaluator("arith.bitcast")
def _bitcast(interp: Interpreter, op: Operation, args: list) -> np.ndarray:
    src, dst = T.element_type(op.operands[0].type), _et(op)
    if T.is_integer_like(src) and int_width(src) not in (8, 16, 32, 64):
        raise Unsupported(f"bitcast of {src}")
    return np.ascontiguousarray(args[0]).view(storage_dtype(dst)).reshape(np.shape(args[0]))
