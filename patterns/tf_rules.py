"""Built-in tf rule sets: `tf-canonical` (TF's canonicalize.td and its folds, as rules),
`tf-fast-math` (float identities that ignore NaN and Inf, opt-in) and `tf-multi`
(Tensat-style multi-root rules).

The canonical rules are sound on every element type where they say so: the
ones that rely on arithmetic identities check the element type or that no
broadcast changes the result type (`same_type(x, m)`: the op's result has x's
type, so broadcasting x against the constant leaves it as it was). Rules TF has
that are not exact are left out or tagged "approx" (see each doc): TF folds
`Reciprocal(Reciprocal(x))` to x (an Involution trait), which rounding and integer
division make false, and `x + 0.0` to x, which is false for x = -0.0.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

from .canon_fold import float_splat_bits
from .checks import (element_type_is, float_element, has_rank, integer_element, is_splat, pred, same_type,
                     static_shape)
from .dsl import _, op, rule, type_of, var
from .native_types import concat_type
from .natives import zero_of
from .rule import Native, TypeOf
from .rule_sets import register_rule_set

x, y, c, s = var("x"), var("y"), var("c"), var("s")
m = var("m")
ax, ay, e = var("ax"), var("ay"), var("e")


def _real(v):
    """Real numbers (floats or integers): not complex, not strings."""
    return float_element(v) | integer_element(v)


def direct_bitcast(src: T.Type, dst: T.Type) -> bool:
    """A single Bitcast from `src` gives `dst`: the element widths' ratio moves the last
    dimension as TF's Bitcast does (both ranked and static where it matters)."""
    if not (isinstance(src, T.RankedTensorType) and isinstance(dst, T.RankedTensorType)):
        return False
    try:
        a, b = T.element_type(src).width, T.element_type(dst).width
    except AttributeError:
        return False
    if a == b:
        return src.shape == dst.shape
    if a > b:
        return a % b == 0 and dst.shape == (*src.shape, a // b)
    return b % a == 0 and src.shape[-1:] == (b // a,) and dst.shape == src.shape[:-1]


_COMPARE_NOT = {"tf.Greater": "tf.LessEqual", "tf.GreaterEqual": "tf.Less", "tf.Less": "tf.GreaterEqual",
                "tf.LessEqual": "tf.Greater"}


def _not_of_compare(name: str, where: list, doc: str, suffix: str = ""):
    short = name[3:].lower().replace("equal", "-equal").strip("-")
    return rule(f"logical-not-of-{short}{suffix}", op("tf.LogicalNot", op(name, x, y)), op(_COMPARE_NOT[name], x, y),
                where=where, doc=doc)


CANONICAL = [
    rule("add-to-addv2", op("tf.Add", x, y), op("tf.AddV2", x, y),
         where=[float_element(x) | integer_element(x)], doc="Add on numbers is AddV2 (Add also concatenates strings)"),
    rule("addv2-of-neg-left", op("tf.AddV2", op("tf.Neg", x), y), op("tf.Sub", y, x), doc="-x + y = y - x"),
    rule("addv2-of-neg-right", op("tf.AddV2", x, op("tf.Neg", y)), op("tf.Sub", x, y), doc="x + -y = x - y"),
    rule("neg-neg", op("tf.Neg", op("tf.Neg", x)), x,
         doc="--x = x: an involution (exact: floats flip the sign bit, integers wrap, -(-MIN) = MIN)"),
    rule("logical-not-not", op("tf.LogicalNot", op("tf.LogicalNot", x)), x, where=[element_type_is(x, T.i1)],
         doc="!!x = x on booleans (an involution; LogicalNot is only defined on bool tensors)"),
    rule("conj-conj", op("tf.Conj", op("tf.Conj", x)), x, doc="conj(conj(x)) = x (an involution, exact)"),
    rule("invert-invert", op("tf.Invert", op("tf.Invert", x)), x, doc="~~x = x, bit by bit (an involution)"),
    rule("identity", op("tf.Identity", x), x,
         doc="Identity forwards its input (also inside tf_executor islands, whose regions the engines see)"),
    rule("sub-self-static", op("tf.Sub", x, x).bind("m"), op("tf.Const", value=zero_of(x)),
         where=[integer_element(x), static_shape(x), same_type(x, m)],
         doc="x - x = 0 on integers (wrapping), as a constant when the shape is static. Never on floats: "
             "Inf - Inf and NaN - NaN are NaN (tf-fast-math has the float version)"),
    rule("sub-self-dynamic", op("tf.Sub", x, x).bind("m"), op("tf.ZerosLike", x),
         where=[integer_element(x), ~static_shape(x), same_type(x, m)],
         doc="x - x = 0 on integers of a dynamic shape: ZerosLike(x) (no constant can be built)"),
    rule("mul-one", op("tf.Mul", x, c).bind("m"), x,
         where=[is_splat(c, 1), same_type(x, m), static_shape(x) | has_rank(c, 0)], commutative=True,
         doc="x * 1 = x (NaN stays NaN) when no broadcast changes the shape: equal types say so only "
             "when they are static (two tensor<*xf32> or tensor<?x3xf32> may differ at run time), or "
             "when the 1 is a scalar"),
    rule("addv2-zero", op("tf.AddV2", x, c).bind("m"), x,
         where=[(integer_element(x) & is_splat(c, 0)) | float_splat_bits(c, -0.0), same_type(x, m),
                static_shape(x) | has_rank(c, 0)],
         commutative=True,
         doc="x + 0 = x when no broadcast changes the shape (as for mul-one): on integers, and on floats only for -0.0 "
             "(-0.0 + 0.0 is +0.0, so TF's float x + 0.0 → x is not exact)"),
    rule("realdiv-sqrt", op("tf.RealDiv", x, op("tf.Sqrt", y)), op("tf.Mul", x, op("tf.Rsqrt", y)),
         tags=("approx",), doc="x / sqrt(y) = x * rsqrt(y): TF's rule, equal up to rounding (tagged approx)"),
    rule("reshape-reshape", op("tf.Reshape", op("tf.Reshape", x, _), s), op("tf.Reshape", x, s),
         doc="only the last reshape counts"),
    rule("cast-same-type", op("tf.Cast", x).bind("m"), x, where=[same_type(x, m)], doc="a cast to the same type"),
    # The rest of canonicalize.td.
    rule("batchmatmul-to-matmul", op("tf.BatchMatMul", x, y, adj_x=ax, adj_y=ay),
         op("tf.MatMul", x, y, transpose_a=ax, transpose_b=ay),
         where=[has_rank(x, 2), has_rank(y, 2), _real(x)],
         doc="a batch of one matrix product is MatMul: the same products and sums. Real elements only: "
             "adj_x conjugates complex entries and transpose_a does not"),
    rule("batchmatmulv2-to-matmul", op("tf.BatchMatMulV2", x, y, adj_x=ax, adj_y=ay),
         op("tf.MatMul", x, y, transpose_a=ax, transpose_b=ay),
         where=[has_rank(x, 2), has_rank(y, 2), _real(x)],
         doc="BatchMatMulV2 of two rank-2 operands (no batch dimensions to broadcast) is MatMul; "
             "real elements only (adj_x conjugates, transpose_a does not)"),
    rule("bitcast-same-type", op("tf.Bitcast", x).bind("m"), x, where=[same_type(x, m)],
         doc="a Bitcast to its operand's type reads the same bytes as the same elements. TF asks only for "
             "the same element type (the shape is then the operand's); equal types keep every use typed"),
    rule("bitcast-bitcast", op("tf.Bitcast", op("tf.Bitcast", x)).bind("m"), op("tf.Bitcast", x),
         where=[pred("a direct Bitcast of x gives m's type", direct_bitcast, type_of(x), type_of(m))],
         doc="Bitcast keeps the byte sequence, so two bitcasts read x's bytes as m's elements, as one does. "
             "TF applies it always, which is false for the shape: i16[2] → i32[] → i8[4] is i8[4], a direct "
             "bitcast gives i8[2,2]; so only when a direct Bitcast of x has m's type"),
    rule("logical-not-of-equal", op("tf.LogicalNot", op("tf.Equal", x, y, incompatible_shape_error=e)),
         op("tf.NotEqual", x, y, incompatible_shape_error=e),
         doc="!(x == y) is x != y element by element, NaN included (NaN == NaN is false, NaN != NaN true); "
             "with incompatible shapes and the flag off, Equal gives false and NotEqual true"),
    rule("logical-not-of-not-equal", op("tf.LogicalNot", op("tf.NotEqual", x, y, incompatible_shape_error=e)),
         op("tf.Equal", x, y, incompatible_shape_error=e),
         doc="!(x != y) is x == y, NaN included (see logical-not-of-equal)"),
    *[_not_of_compare(n, [integer_element(x)],
                      f"!({n[3:]}) is its complement on integers (a total order). Not on floats: every "
                      "comparison with NaN is false, so the negation is true and the complement false "
                      "(the float version is in tf-fast-math)")
      for n in _COMPARE_NOT],
    rule("square-of-sub", op("tf.Square", op("tf.Sub", x, y)), op("tf.SquaredDifference", x, y),
         where=[_real(x)],
         doc="(x - y)² is SquaredDifference(x, y): the same subtraction and product (wrapping on integers). "
             "Real elements only: SquaredDifference multiplies by the conjugate, Square does not"),
    rule("sub-of-neg", op("tf.Sub", x, op("tf.Neg", y)), op("tf.AddV2", x, y),
         doc="x - (-y) = x + y exactly: IEEE subtraction is addition of the negation and -(-y) = y; "
             "integers wrap (-MIN = MIN, and x - MIN = x + MIN modulo 2^n)"),
    rule("div-sqrt", op("tf.Div", x, op("tf.Sqrt", y)), op("tf.Mul", x, op("tf.Rsqrt", y)),
         tags=("approx",), doc="x / sqrt(y) = x * rsqrt(y) (Sqrt is float-only, so Div divides floats); "
                               "equal up to rounding (tagged approx)"),
    rule("xdivy-sqrt", op("tf.Xdivy", x, op("tf.Sqrt", y)), op("tf.MulNoNan", op("tf.Rsqrt", y), x),
         tags=("approx",),
         doc="xdivy(x, sqrt y) = 0 where x = 0, else x / sqrt(y); MulNoNan(rsqrt y, x) = 0 where x = 0, "
             "else rsqrt(y) * x. Equal up to rounding, also at y = 0 (±Inf both), y = Inf (±0 both) and "
             "NaN (tagged approx)"),
]

_AXIS1 = A.DenseElementsAttr(T.RankedTensorType((), T.i32), 1)
_SCALAR_I32 = T.RankedTensorType((), T.i32)
w1, w2 = var("w1"), var("w2")
_axis = op("tf.Const", value=_AXIS1, types=[_SCALAR_I32]).bind("axis")
_wide = op("tf.MatMul", x, op("tf.ConcatV2", [w1, w2], _axis,
                              types=[Native("concat-type", concat_type(1), (TypeOf("w1"), TypeOf("w2")), "type")]),
           types=[Native("concat-type", concat_type(1), (TypeOf("m1"), TypeOf("m2")), "type")])
_split = op("tf.Split", _axis, _wide, num_split=A.IntegerAttr(2, T.i64),
            types=[type_of("m1"), type_of("m2")]).bind("split")

MULTI = [
    rule("matmul-shared-lhs",
         [op("tf.MatMul", x, w1, transpose_a=False, transpose_b=False).bind("m1"),
          op("tf.MatMul", x, w2, transpose_a=False, transpose_b=False).bind("m2")],
         [_split[0], _split[1]],
         where=[has_rank(w1, 2), static_shape(w1), same_type(w1, w2)],
         doc="two MatMuls of one lhs become one MatMul of the concatenated rhs, split (Tensat)",
         tags=("expand",)),
]

FAST_MATH = [
    *[_not_of_compare(n, [float_element(x)],
                      f"!({n[3:]}) as its complement on floats, assuming no NaN (opt-in)", "-float")
      for n in _COMPARE_NOT],
    rule("log-of-softmax", op("tf.Log", op("tf.Softmax", x)), op("tf.LogSoftmax", x), where=[float_element(x)],
         tags=("approx",),
         doc="log(softmax x) = logsoftmax x in real arithmetic, but where softmax underflows to 0 the log "
             "is -Inf and LogSoftmax finite (x = [0, -200] in f32): more accurate, not equal (opt-in)"),
    rule("sub-self-float-static", op("tf.Sub", x, x).bind("m"), op("tf.Const", value=zero_of(x)),
         where=[float_element(x), static_shape(x), same_type(x, m)],
         doc="x - x = 0 on floats, assuming no NaN or Inf (only in the opt-in tf-fast-math set)"),
    rule("sub-self-float-dynamic", op("tf.Sub", x, x).bind("m"), op("tf.ZerosLike", x),
         where=[float_element(x), ~static_shape(x), same_type(x, m)],
         doc="x - x = 0 on floats of a dynamic shape, assuming no NaN or Inf (opt-in)"),
]

register_rule_set("tf-canonical", CANONICAL, "TF's canonicalization rules that are exact, and tf_executor's "
                  "(empty islands and graphs, a structural step)", structural=("tf-executor-canonical",))
register_rule_set("tf-fast-math", FAST_MATH, "float identities that assume no NaN or Inf (opt-in)")
register_rule_set("tf-multi", (), "multi-root rules (Tensat's multi-pattern rules; they build tf.Split, "
                  "which has no record, so the e-graph cannot hold them)", greedy_rules=MULTI)
