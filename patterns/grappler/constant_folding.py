"""Grappler's constant folding as a rule set: `tf-constant-folding`.

**One mechanism, one rule per op.** A tf op whose operands are all constants is replaced by
the constant the reference interpreter (`ir/semantics`) computes for it: the interpreter is
dtype-exact (float32 arithmetic in float32, integers wrap, TF's rounding) and cross-checked
against TF's kernels, so a fold computes what TensorFlow would at run time. The rule
language matches ops by name, so the rules are generated, one per op the interpreter
evaluates (`EVALUATORS`), all sharing one native (`_fold`): it rebuilds the op detached
from the IR (name, bound attributes, the replaced value's type) and runs its evaluator on
the operands' constants. Natives see only types, attributes and constants, so the same
rules run on the e-graph and on the greedy driver. New evaluators get their fold rule for
free. An op with a variadic operand group (`Pack`, `ConcatV2`, `AddN`) gets one rule per
group size up to `MAX_GROUP`.

**Never folded**: forwarding ops (`Identity`, `Snapshot`, `StopGradient`: the
`grappler-dependency` set replaces them by their operand, which copies no payload), ops with effects (`ir/effects.py`'s one definition, which asks TF's
registry for ops without a record: stateful, random, resource and function-calling ops
are effectful), constants themselves, terminators, and ops with several results (a
rule would need one native per result; left out).

**Attributes**: every attribute the op's record declares or TF's registry lists, except
type and count attributes (derived from the types); the evaluator reads them from the
rebuilt op. On the e-graph an attribute is matched only when present (an op relying on a
default is not folded there; the greedy driver binds an absent one as None, the default).

**Size policy** (Grappler's, and onnx-simplifier's users' complaint about 10x larger
models): sizes are the bytes a constant stores, a splat counting one element (it is
written as one value to a GraphDef). A fold whose result stores more than its constant
operands together is refused by `fold-<Op>`; its variant `fold-<Op>-replacing` folds
whatever the size when every constant operand has one use (this op), so that the fold
replaces them. The
variant checks use counts, which only the greedy driver sees, so it is a greedy-only rule
(on the e-graph driver it runs greedily after extraction). Every constant read and every
result is subject to the pass's fold element limit (`patterns/fold_limits.py`).

**Static shapes**: `Shape`, `Rank` and `Size` of a value whose type is static enough, and
`ZerosLike`/`OnesLike` of a static shape (a splat), become constants whatever the operand
(`materialize-*`), as Grappler materializes shapes.

**Equal constants** are not deduplicated here: `cse` merges identical `tf.Const` ops (same
value attribute, same type), and on the e-graph identical constants are one term.

**Where it folds**: `ConstOf` sees a value produced by a constant op. In tf_executor form a
constant in an island of its own reaches its users as the island's result, which `ConstOf`
does not see through (doing so is sound only for islands without control operands: a
dead control input makes the constant dead, and the fold would revive its users), so on a
graph imported from a GraphDef the set folds after `tf-executor-island-coarsening`.

Folded values are computed by numpy: float reductions, matrix products and transcendental
functions may differ from TF's kernels in the last bits (summation order, approximations),
as `ir/semantics/tf_math.py` says.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from egraft.ir import REGISTRY
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation, Value
from egraft.ir.core.traits import Traits
from egraft.ir.effects import declared_effect_free
from egraft.ir.graphdef.op_registry import lookup_op
from egraft.ir.records.opdef import VARIADIC
from egraft.ir.semantics import EVALUATORS, Interpreter, Undefined, Unsupported, attribute_value, storage_dtype

from egraft.patterns.checks import has_one_use, has_rank, is_constant, static_shape
from egraft.patterns.dsl import op, rule, var
from egraft.patterns.fold_limits import allows
from egraft.patterns.rule import ConstOf, Native, Rule, TypeOf, Var
from egraft.patterns.rule_sets import register_rule_set

#: Variadic operand groups are folded up to this many operands (one rule per size).
MAX_GROUP = 4

#: TF attribute kinds derived from operand types and counts (not read by the evaluators as values).
_DERIVED_KINDS = frozenset({"type", "list(type)"})

#: Ops that forward their operand: `grappler-dependency` replaces them by it, which keeps one
#: constant where a fold would copy its payload (megabytes of weights behind every Identity).
FORWARDING = frozenset({"tf.Identity", "tf.Snapshot", "tf.StopGradient"})

#: What a detached evaluation may raise when the op is not foldable on these constants.
_DECLINES = (Undefined, Unsupported, ValueError, TypeError, OverflowError, IndexError, ZeroDivisionError)

_RESULT = "m"

# ------------------------------------------------------------------ which ops, which attributes


def _groups(name: str) -> list[bool] | None:
    """Per operand group, whether it is variadic; None when the op cannot be folded by a rule
    (several results, or no operand shape known)."""
    opdef = REGISTRY.lookup(name)
    if opdef is not None:
        if len(opdef.results) != 1 or opdef.results[0].kind == VARIADIC:
            return None
        return [o.kind == VARIADIC for o in opdef.operands]
    registered = lookup_op(name[len("tf."):])
    if registered is None or len(registered.output_arg) != 1 or registered.output_arg[0].number_attr \
            or registered.output_arg[0].type_list_attr:
        return None
    return [bool(a.number_attr or a.type_list_attr) for a in registered.input_arg]


def _attribute_names(name: str) -> tuple[str, ...]:
    """The attributes an evaluation may read: the record's, else TF's registry's, without the
    derived type and count attributes."""
    opdef = REGISTRY.lookup(name)
    if opdef is not None:
        return tuple(sorted(opdef.attr_names - {"operandSegmentSizes", "resultSegmentSizes"}))
    registered = lookup_op(name[len("tf."):])
    counts = {a.number_attr for a in registered.input_arg} if registered is not None else set()
    return tuple(sorted(a.name for a in (registered.attr if registered is not None else ())
                        if a.type not in _DERIVED_KINDS and a.name not in counts))


def foldable_ops() -> list[str]:
    """The tf ops folded by a generated rule: evaluated by the interpreter, effect-free, not a
    constant nor a terminator nor forwarding, one result."""
    names = []
    for name in sorted(EVALUATORS):
        opdef = REGISTRY.lookup(name)
        if not name.startswith("tf.") or name in FORWARDING or not declared_effect_free(name, opdef):
            continue
        if opdef is not None and (opdef.has_trait(Traits.ConstantLike) or opdef.has_trait(Traits.Terminator)):
            continue
        if _groups(name) is not None:
            names.append(name)
    return names


# ------------------------------------------------------------------ sizes and constants


def stored_bytes(attr: A.Attribute) -> int | None:
    """The bytes a constant stores: one element for a splat or scalar, else every element."""
    et = T.element_type(attr.type)
    try:
        itemsize = storage_dtype(et).itemsize
    except Unsupported:
        return None
    if isinstance(attr, A.DenseElementsAttr) and not attr.is_splat:
        return itemsize * math.prod(attr.type.shape or ())
    return itemsize


def _splat(flat: np.ndarray) -> bool:
    """All elements equal bit for bit (so NaN payloads and the sign of zero count)."""
    if flat.size < 2:
        return True
    rows = np.ascontiguousarray(flat).view(np.uint8).reshape(flat.size, -1)
    return bool((rows == rows[:1]).all())


def _python(x: np.generic, et: T.Type) -> Any:
    if isinstance(et, T.FloatType):
        return float(x)
    if isinstance(et, T.IntegerType) and et.width == 1:
        return bool(x)
    return int(x)


def dense_attr(arr: np.ndarray, et: T.Type) -> A.DenseElementsAttr | None:
    """`arr` as a dense constant of element type `et` (a splat when all elements are equal;
    large non-boolean payloads as little-endian bytes, as TensorFlow's weights are stored)."""
    t = T.RankedTensorType(tuple(arr.shape), et)
    flat = arr.reshape(-1)
    if flat.size and _splat(flat):
        return A.DenseElementsAttr(t, _python(flat[0], et))
    if flat.size > 16 and arr.dtype != np.bool_ and A.numpy_dtype(et) is not None:
        return A.DenseElementsAttr(t, flat.astype(flat.dtype.newbyteorder("<")).tobytes())
    return A.DenseElementsAttr(t, tuple(_python(x, et) for x in flat))


def _compatible(shape: tuple[int, ...], t: T.Type) -> bool:
    """A value of `shape` may stand for a value of type `t` (unranked, or equal where static)."""
    if not isinstance(t, T.RankedTensorType):
        return isinstance(t, T.UnrankedTensorType)
    return len(t.shape) == len(shape) and all(d < 0 or d == s for d, s in zip(t.shape, shape))


def _operand_array(c: A.Attribute, who: str) -> np.ndarray | None:
    if not isinstance(c, A.DenseElementsAttr) or not isinstance(c.type, T.ShapedType) \
            or not c.type.has_static_shape:
        return None
    if not c.is_splat and not allows(math.prod(c.type.shape), who):
        return None
    try:
        return attribute_value(c, c.type)
    except _DECLINES:
        return None


# ------------------------------------------------------------------ the one native


def evaluate(name: str, attr_names: tuple[str, ...], consts: list[A.Attribute], rtype: T.Type,
             attr_values: list[A.Attribute | None]) -> np.ndarray | None:
    """The value of op `name` on constant operands, by its evaluator, or None where TF would
    fail at run time, the interpreter declines, or the value does not fit `rtype`."""
    who = f"tf-constant-folding: {name}"
    arrays = [_operand_array(c, who) for c in consts]
    if any(a is None for a in arrays):
        return None
    attrs = {k: v for k, v in zip(attr_names, attr_values) if v is not None}
    detached = Operation.create(name, [Value(c.type) for c in consts], [rtype], attrs)
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(EVALUATORS[name](Interpreter(check_types=False), detached, arrays))
        dtype = storage_dtype(T.element_type(rtype))
    except _DECLINES:
        return None
    if out.dtype != dtype or not _compatible(out.shape, rtype) or not allows(out.size, who):
        return None
    return out


def _fold(name: str, attr_names: tuple[str, ...], operands: int, replacing: bool) -> Callable[..., Any]:
    """The native of `fold-<name>`: its arguments are the operands' constants, the replaced
    value's type and the attribute values; it returns the folded constant, or None (also when
    the fold grows and does not replace its operands)."""
    def run(*args: Any) -> A.Attribute | None:
        consts, rtype, attr_values = list(args[:operands]), args[operands], list(args[operands + 1:])
        out = evaluate(name, attr_names, consts, rtype, attr_values)
        if out is None:
            return None
        attr = dense_attr(out, T.element_type(rtype))
        inputs = [stored_bytes(c) for c in consts]
        size = stored_bytes(attr) if attr is not None else None
        if size is None or any(i is None for i in inputs):
            return None
        return attr if replacing or size <= sum(inputs) else None  # type: ignore[arg-type]
    return run


# ------------------------------------------------------------------ the rules


def _operand_patterns(groups: list[bool], sizes: tuple[int, ...], recorded: bool) -> tuple[list[Any], list[Var]]:
    """Operand patterns and the flat list of their variables. A variadic group is a list for an
    op with a record (one entry per operand group); an op without a record is matched on its
    flat operand list, so there the group's operands stand in line."""
    patterns: list[Any] = []
    sizes_left = iter(sizes)
    for i, variadic in enumerate(groups):
        if variadic:
            group = [var(f"x{i}_{j}") for j in range(next(sizes_left))]
            patterns.append(group) if recorded else patterns.extend(group)
        else:
            patterns.append(var(f"x{i}"))
    flat = [v for p in patterns for v in (p if isinstance(p, list) else [p])]
    return patterns, flat


def fold_rules(name: str, replacing: bool) -> list[Rule]:
    """The fold rules of op `name`: one per size of its variadic group (if it has one)."""
    groups = _groups(name)
    assert groups is not None, name
    attr_names = _attribute_names(name)
    short = name[len("tf."):]
    variadic = sum(groups)
    size_choices = [(n,) for n in range(1, MAX_GROUP + 1)] if variadic == 1 else [()] if not variadic else []
    made = []
    for sizes in size_choices:
        patterns, flat = _operand_patterns(groups, sizes, REGISTRY.lookup(name) is not None)
        source = op(name, *patterns, attrs={a: var(f"attr_{a}") for a in attr_names}).bind(_RESULT)
        native = Native(f"fold {short}", _fold(name, attr_names, len(flat), replacing),
                        (*(ConstOf(v.name) for v in flat), TypeOf(_RESULT),
                         *(Var(f"attr_{a}") for a in attr_names)), "attr")
        where = [is_constant(v) for v in flat] + ([has_one_use(v) for v in flat] if replacing else [])
        suffix = "".join(f"-{n}" for n in sizes) + ("-replacing" if replacing else "")
        made.append(rule(f"fold-{short}{suffix}", source, op("tf.Const", value=native), where=where,
                         doc=f"{short} of constants is the constant the interpreter computes"
                             + (", of any size when its constant operands have no other use (it replaces them)"
                                if replacing else ", when it stores no more than its operands")))
    return made


def _shape_value(x_type: T.Type, r_type: T.Type, fn: Callable[[tuple[int, ...]], Any],
                 need_static: bool) -> A.Attribute | None:
    """A constant of `r_type`'s element type computed from `x_type`'s shape (None if unknown,
    or if the value does not fit the element type or `r_type`)."""
    if not isinstance(x_type, T.ShapedType) or not x_type.has_rank:
        return None
    if need_static and not x_type.has_static_shape:
        return None
    value = fn(tuple(x_type.shape))
    try:
        dtype = storage_dtype(T.element_type(r_type))
    except Unsupported:
        return None
    arr = np.asarray(value)
    if dtype.kind not in "iu" or (arr.size and (arr.max() > np.iinfo(dtype).max)):
        return None
    out = arr.astype(dtype)
    return dense_attr(out, T.element_type(r_type)) if _compatible(out.shape, r_type) else None


def _splat_like(value: int) -> Callable[[T.Type, T.Type], A.Attribute | None]:
    def run(x_type: T.Type, r_type: T.Type) -> A.Attribute | None:
        if not isinstance(x_type, T.ShapedType) or not x_type.has_static_shape \
                or not _compatible(tuple(x_type.shape), r_type) or not allows(1, "tf-constant-folding"):
            return None
        et = T.element_type(r_type)
        try:
            one = np.asarray(value, storage_dtype(et))
        except Unsupported:
            return None
        return A.DenseElementsAttr(T.RankedTensorType(tuple(x_type.shape), et), _python(one, et))
    return run


_x = var("x")


def _materialize(name: str, short: str, fn: Callable[[T.Type, T.Type], A.Attribute | None], check: Any,
                 doc: str) -> Rule:
    return rule(f"materialize-{short}", op(name, _x).bind(_RESULT),
                op("tf.Const", value=Native(f"materialize {short}", fn, (TypeOf("x"), TypeOf(_RESULT)), "attr")),
                where=[check], doc=doc)


MATERIALIZE = [
    _materialize("tf.Shape", "shape", lambda x, r: _shape_value(x, r, lambda s: list(s), True), static_shape(_x),
                 "Shape of a value of static shape is that shape, whatever the value"),
    _materialize("tf.Rank", "rank", lambda x, r: _shape_value(x, r, len, False), has_rank(_x),
                 "Rank of a ranked value is its rank, whatever the value"),
    _materialize("tf.Size", "size", lambda x, r: _shape_value(x, r, math.prod, True), static_shape(_x),
                 "Size of a value of static shape is its element count, whatever the value"),
    _materialize("tf.ZerosLike", "zeros-like", _splat_like(0), static_shape(_x),
                 "ZerosLike of a static shape is a splat of zeros (NaN and Inf in x do not matter)"),
    _materialize("tf.OnesLike", "ones-like", _splat_like(1), static_shape(_x),
                 "OnesLike of a static shape is a splat of ones"),
]

FOLDS = [r for name in foldable_ops() for r in fold_rules(name, replacing=False)]
REPLACING = [r for name in foldable_ops() for r in fold_rules(name, replacing=True)]

register_rule_set("tf-constant-folding", [*MATERIALIZE, *FOLDS],
                  "Grappler's constant folding: every effect-free tf op the interpreter evaluates, on "
                  "constant operands, becomes a constant (never growing the model unless the fold "
                  "replaces its operands: the -replacing rules, greedy-only); static shapes materialized",
                  greedy_rules=REPLACING)
