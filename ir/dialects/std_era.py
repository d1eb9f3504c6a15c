"""2019 spellings of ops that kept their meaning but changed their name.

The parser consults `REGISTRY.legacy_names` for a name it does not know (custom
and generic forms alike); the op is built, verified and printed under today's
name.  Spellings that moved with a dialect live with that dialect (`arith.py`:
`addi`, `constant`, `cmpi "slt"`; `memref.py`: `alloc`, `load`, `memref_cast`,
`dim`; `cf.py`: `br`, `cond_br`; `func.py`: `func`, `return`, `call`); this
module holds the rest, which belong to no single dialect module:

| 2019 | today |
| --- | --- |
| `tf_executor.SwitchN %d, %i of N` | `tf_executor._SwitchN` (renamed in 2020; same form) |
| `tf_executor.island` etc. | unchanged (their 2019 forms are parsed by their own records) |
| `std.br`/`std.cond_br`, `std.dim`, ... | see the dialect modules above |

Ops of 2019 with no counterpart in egraft (`loop.for`, `std.exp`, `absf`,
`tensor_load`, `extract_element`, `dma_start`, `prefetch`, `constant @f`, the
`_tf` control dialect) are not aliased.  In a 2019-syntax file
(`ir/syntax/era.py`) those of a dialect egraft lacks (`loop`, `_tf`) read as
unregistered ops in the generic form; `std.*` ones are refused, as 2019's
closed `std` dialect refused ops it did not know.
"""

from __future__ import annotations

from typing import Callable

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.core.operation import Operation
from egraft.ir.dialects import tf_executor  # noqa: F401  (registers tf_executor._SwitchN first)
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error

STD_ERA_NAMES = {
    "tf_executor.SwitchN": "tf_executor._SwitchN",
}

for _old, _new in STD_ERA_NAMES.items():
    assert _new in REGISTRY.ops, _new
    REGISTRY.legacy_names[_old] = _new


# ------------------------------------------------------------------ the 2019 `std` verifier's rules
#
# Text in 2019 syntax (`ir/syntax/era.py`) is verified with these checks first
# (`verify(top, era_checks=ERA_2019_CHECKS)`, keyed by the op's name today):
# where 2019's `std` verifier applied another rule than today's op does, or
# reported the same rule in other words at another point, the 2019 rule
# decides, so a 2019 file's `expected-error` lines hold.  The ops keep
# today's names and records; a check only raises, it never changes the IR.


def _error(op: Operation, message: str) -> DiagnosticError:
    """2019's `op.emitError()`: at the op, without the `'name' op` prefix."""
    return DiagnosticError(Diagnostic("error", message, op.loc))


def _shape(t: T.Type) -> tuple[int, ...] | None | bool:
    """The shape 2019's `verifyCompatibleShape` compares: False for a type
    that is not shaped, None for an unranked one."""
    return t.shape if isinstance(t, T.ShapedType) else False


def _shapes_compatible(a: T.Type, b: T.Type) -> bool:
    """2019's `verifyCompatibleShape`: both shaped or neither; unranked fits
    anything; ranked shapes of one rank whose sizes agree or are dynamic."""
    sa, sb = _shape(a), _shape(b)
    if sa is False or sb is False:
        return sa is False and sb is False
    if sa is None or sb is None:
        return True
    return len(sa) == len(sb) and all(x == y or T.DYNAMIC in (x, y) for x, y in zip(sa, sb))


def _check_same_shape(op: Operation) -> None:
    """2019's SameOperandsAndResultShape trait (verified before the op's own rules)."""
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    if types and not all(_shapes_compatible(t, types[0]) for t in types[1:]):
        raise op_error(op, "requires the same shape for all operands and results")


def _cast_check(compatible: Callable[[T.Type, T.Type], bool]) -> Callable[[Operation], None]:
    """2019's cast ops (`index_cast`, `sitofp`, `fpext`, `fptrunc`): operand and
    result of any type, the same shape, and `areCastCompatible` decides."""
    def check(op: Operation) -> None:
        if len(op.operands) != 1 or len(op.results) != 1:
            return  # the record reports the counts
        _check_same_shape(op)
        src, dst = op.operands[0].type, op.results[0].type
        a, b = src, dst
        if isinstance(a, T.VectorType) and isinstance(b, T.VectorType):
            a, b = a.element_type, b.element_type  # equal shapes: checked above
        if not compatible(a, b):
            raise _error(op, f"operand type '{src}' and result type '{dst}' are cast incompatible")
    return check


def _float_width(t: T.Type) -> int | None:
    return t.width if isinstance(t, T.FloatType) else None  # type: ignore[attr-defined]


def _index_cast_ok(a: T.Type, b: T.Type) -> bool:
    if isinstance(a, T.IndexType):
        return isinstance(b, T.IntegerType)
    return isinstance(b, T.IndexType) and isinstance(a, T.IntegerType)


def _fpext_ok(a: T.Type, b: T.Type) -> bool:
    wa, wb = _float_width(a), _float_width(b)
    return wa is not None and wb is not None and wa < wb


def _fptrunc_ok(a: T.Type, b: T.Type) -> bool:
    wa, wb = _float_width(a), _float_width(b)
    return wa is not None and wb is not None and wa > wb


def _sitofp_ok(a: T.Type, b: T.Type) -> bool:
    return isinstance(a, T.IntegerType) and isinstance(b, T.FloatType)


def _int_resize_check(extends: bool) -> Callable[[Operation], None]:
    """2019's `sexti`/`zexti`/`trunci`: `index` refused on either side (today's
    records admit it), then the width rule in 2019's words for `trunci`."""
    def check(op: Operation) -> None:
        if len(op.operands) != 1 or len(op.results) != 1:
            return
        src, dst = T.element_type(op.operands[0].type), T.element_type(op.results[0].type)
        if isinstance(src, T.IndexType):
            raise _error(op, f"'{src}' is not a valid operand type")
        if isinstance(dst, T.IndexType):
            raise _error(op, f"'{dst}' is not a valid result type")
        if not extends and isinstance(src, T.IntegerType) and isinstance(dst, T.IntegerType) \
                and src.width <= dst.width:
            raise _error(op, f"operand type '{src}' must be wider than result type '{dst}'")
    return check


def _like(t: T.Type, kinds: tuple[type, ...], width: int | None = None) -> bool:
    """2019's `IntegerLike`/`FloatLike`/`BoolLike`: the type, or a vector or tensor of it."""
    e = t.element_type if isinstance(t, (T.VectorType, T.RankedTensorType, T.UnrankedTensorType)) else t
    return isinstance(e, kinds) and (width is None or getattr(e, "width", None) == width)


_INTEGER_LIKE = ((T.IntegerType, T.IndexType), None, "integer-like")
_FLOAT_LIKE = ((T.FloatType,), None, "floating-point-like")
_BOOL_LIKE = ((T.IntegerType,), 1, "bool-like")


_Rule = tuple[tuple[type, ...], "int | None", str]


def _check_constraints(op: Operation, operands: _Rule, results: _Rule) -> None:
    """2019's generated operand and result checks, in 2019's constraint names."""
    for what, values, rule in (("operand", op.operands, operands), ("result", op.results, results)):
        if rule is None:
            continue
        kinds, width, name = rule
        for i, v in enumerate(values):
            if not _like(v.type, kinds, width):
                raise op_error(op, f"{what} #{i} must be {name}, but got '{v.type}'")


def _check_same_operand_types(op: Operation) -> None:
    """2019's SameTypeOperands trait."""
    if any(v.type is not op.operands[0].type for v in op.operands[1:]):
        raise op_error(op, "requires all operands to have the same type")


def _check_cmpi(op: Operation) -> None:
    """2019's `cmpi`: traits, then the predicate (an attribute constraint of
    its ODS record, so before the operands), operands, result."""
    _check_same_operand_types(op)
    _check_same_shape(op)
    pred = op.attr("predicate")
    if pred is None:
        raise op_error(op, "requires attribute 'predicate'")
    cases = ", ".join(str(i) for i in range(10))
    if not isinstance(pred, A.IntegerAttr) or pred.type is not T.i64 or not 0 <= pred.value < 10:
        raise op_error(op, f"attribute 'predicate' failed to satisfy constraint: allowed 64-bit integer cases: {cases}")
    _check_constraints(op, _INTEGER_LIKE, _BOOL_LIKE)


def _check_cmpf(op: Operation) -> None:
    """2019's `cmpf`: traits, operands, result, then its hand-written predicate check."""
    _check_same_operand_types(op)
    _check_same_shape(op)
    _check_constraints(op, _FLOAT_LIKE, _BOOL_LIKE)
    pred = op.attr("predicate")
    if not isinstance(pred, A.IntegerAttr):
        raise op_error(op, "requires an integer attribute named 'predicate'")
    if not 0 <= pred.value < 16:
        raise op_error(op, "'predicate' attribute value out of range")


def _check_select(op: Operation) -> None:
    """2019's `select`: same shape for all, a bool-like condition, then its
    hand-written check that both choices have one type."""
    _check_same_shape(op)
    if len(op.operands) != 3:
        return
    if not _like(op.operands[0].type, *_BOOL_LIKE[:2]):
        raise op_error(op, f"operand #0 must be bool-like, but got '{op.operands[0].type}'")
    if op.operands[1].type is not op.operands[2].type:
        raise op_error(op, "requires 'true' and 'false' arguments to be of the same type")


def _check_constant(op: Operation) -> None:
    """2019's `constant`: the attribute's type (none for an untyped one, such
    as a string) must be the result type; then the kinds it accepted."""
    value = op.attr("value")
    if value is None:
        raise op_error(op, "requires a 'value' attribute")
    vtype = getattr(value, "type", None)
    rtype = op.results[0].type if op.results else None
    if vtype is not None and vtype is not rtype:
        raise op_error(op, f"requires attribute's type ('{vtype}') to match op's return type ('{rtype}')")
    if isinstance(value, (A.IntegerAttr, A.FloatAttr, A.DenseElementsAttr)) or \
            (isinstance(rtype, T.NoneType) and isinstance(value, A.UnitAttr)):
        return
    raise op_error(op, f"unsupported 'value' attribute: {value}")


ERA_2019_CHECKS: dict[str, Callable[[Operation], None]] = {
    "arith.index_cast": _cast_check(_index_cast_ok),
    "arith.sitofp": _cast_check(_sitofp_ok),
    "arith.extf": _cast_check(_fpext_ok),
    "arith.truncf": _cast_check(_fptrunc_ok),
    "arith.extsi": _int_resize_check(True),
    "arith.extui": _int_resize_check(True),
    "arith.trunci": _int_resize_check(False),
    "arith.cmpi": _check_cmpi,
    "arith.cmpf": _check_cmpf,
    "arith.select": _check_select,
    "arith.constant": _check_constant,
}
