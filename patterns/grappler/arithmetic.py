"""Grappler's arithmetic optimizer as a rule set: `tf-arithmetic`.

Grappler's ArithmeticOptimizer is a list of stages, each a local rewrite of a node and
its inputs (plus ConstantPushDown, which Grappler runs in constant folding). Here each
rewrite is a rule. Where a rewrite would keep an inner op alive for another consumer (and
so add nodes), Grappler asks that op to have one consumer; the rules say the same
(`once`), which reads the IR's uses, so those rules are greedy-only (on the e-graph driver
they run greedily after extraction). The family runs on the greedy driver, as Grappler's
stages do: on inceptionv3 the e-graph round trip costs 2.9 s CPU for the same result the
greedy driver reaches in 0.14 s. What a stage does and how it is stated here:

* **Constant re-association** (ConstantPushDown): `Mul(Mul(x, c1), c2)` -> `Mul(x, c1*c2)`,
  and the `AddV2`/`Sub` mixes, the new constant computed by the interpreter's evaluator
  (`constant_folding.evaluate`, dtype-exact). Broadcasting is associative, so the shape is
  the original's whatever x's. Exact on integers (wrapping `+` and `*` are associative);
  on floats it regroups a rounding (and `x * 1e30 * 1e-30` is not `x * 1.0` near overflow),
  as Grappler does: tagged "approx". A float constant that overflows, or a product that
  underflows, from finite nonzero constants is not built. Grappler's Div forms are left out.
* **AddN formation** (AddOpsRewrite): a chain `AddV2(AddV2(x, y), z)` of operands of one
  static type (Grappler: symbolically equal shapes, so no broadcast) is `AddN(x, y, z)`,
  which TF's kernel sums in operand order. Grappler also renames a single AddV2 of equal
  shapes to AddN; that removes nothing and is left out.
* **Common factors hoisted** (HoistCommonFactor): `AddV2(Mul(x, y), Mul(x, z))` ->
  `Mul(x, AddV2(y, z))`. Grappler asks the unique factors' shapes to match (so that the
  inner sum does not broadcast more than before); soundness needs no shape condition (if
  the original broadcasts, so does the new form, to the same shape), and the Muls must
  have one consumer (`once`), so no shape condition is asked.
  Exact on integers (wrapping arithmetic distributes); on floats distributivity rounds
  differently, and x*y + x*z may overflow where x * (y + z) does not: "approx". Grappler's
  common denominator form (`y/x + z/x` -> `(y + z)/x`) is left out: at x = 0 it gives
  Inf where the original gives NaN (1/0 - 1/0), which the interpreter check rejects.
* **Shape ops** (RemoveIdentityTranspose, RemoveRedundantReshape): a transpose of a
  transpose is one transpose by the composed permutation, a transpose by the identity
  permutation is its operand, a reshape to the operand's static shape (or to its Shape) is
  the operand, a reshape ignores a Squeeze or ExpandDims before it (only the element order
  counts), and
  `Squeeze(ExpandDims(x, d), [d])` / `ExpandDims(Squeeze(x, [d]), d)` are x. All exact
  (elements only move).
* **Cast chains** (RemoveRedundantCast): `Cast(Cast(x))` is one Cast when the middle type
  holds every value of x's exactly (bool to anything, integers to wider integers and to
  floats whose significand holds all their bits, floats to wider floats), so the outer
  cast sees x's own values; but not an integer through a float to a narrower integer (the
  integer cast wraps, an out-of-range float to integer cast is undefined: checked in TF).
  Narrowing in the middle (f32 -> f16 -> f32) is not value-preserving, never rewritten.
* **Concat of unary chains** (HoistCWiseUnaryChains): `ConcatV2(Relu(a), Relu(b), axis)` is
  `Relu(ConcatV2(a, b, axis))` for an elementwise unary op, exact; applied op by op it
  hoists whole chains (inceptionv3's mixed blocks: 31 Relus in Grappler's arithmetic
  stage). Unlike Grappler, not where an operand is a convolution or product (through its
  bias): the remapper, which runs next, fuses the activation there at no node, and a
  hoisted Relu would cost one per concat (inceptionv3 with the remapper: 328 nodes with
  Grappler's hoisting, 319 without).
* **Transposes folded into products** (FoldTransposeIntoMatMul): `MatMul(Transpose(a,
  [1, 0]), b)` is `MatMul(a, b)` with `transpose_a` flipped (either operand), and a
  `BatchMatMulV2` operand transposed in its last two axes flips `adj_x`/`adj_y` (floats
  only: adj conjugates complex values). "approx": TF's kernel may sum a transposed layout
  in another order.
* **Einsum** as `MatMul` / `BatchMatMulV2` where the equation is a (batched) matrix product
  (`matmul_form`: ij,jk->ik with transposes as flags, leading batch labels, one operand's
  batch absent as BatchMatMulV2 broadcasts it). Not Grappler's (TF's MLIR has it as a
  pass); an Einsum that needs transposes (BERT's attention, BTNH,BSNH->BNTS) stays.
  Float only, "approx" (the interpreter's einsum may sum in another order).
* **Reciprocal** is left out: `Mul(x, Reciprocal(y))` -> `RealDiv(x, y)` differs by more
  than rounding where 1/y overflows (y subnormal: 0 * Inf is NaN, 0 / y is 0), and
  Grappler's own direction (constant folding's `x / c` -> `x * (1/c)` for float c) removes
  no node.

Already in other sets, shared here by reference and not restated: `Neg(Neg(x))`,
`AddV2(x, Neg(y))`, `AddV2(Neg(x), y)`, `Sub(x, Neg(y))` and a Reshape of a Reshape
and a Cast to the same type (tf-canonical, Grappler's RemoveNegation, RemoveInvolution and
RemoveRedundantCast), and `Identity`, `Snapshot`,
`StopGradient` (grappler-dependency, which runs after this family).
"""

from __future__ import annotations

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.semantics import Unsupported, attribute_value, storage_dtype

from egraft.patterns.checks import float_element, is_constant, is_splat, pred, same_type, static_shape
from egraft.patterns.dsl import const_of, op, rule, type_of, var
from egraft.patterns.grappler.constant_folding import dense_attr, evaluate
from egraft.patterns.rule import ConstOf, Native, Rule, TypeOf, Var
from egraft.patterns.rule_sets import register_rule_set
from egraft.patterns.tf_rules import CANONICAL

x, y, z, c1, c2 = var("x"), var("y"), var("z"), var("c1"), var("c2")
p1, p2, d = var("p1"), var("p2"), var("d")
_APPROX = ("approx",)


def _used_once(op_) -> bool:
    """The op's results have one use in all (the rewritten op): replacing it removes it."""
    return sum(1 for r in op_.results for _ in r.uses) == 1


def once(*names: str) -> list:
    """Grappler's single-consumer condition on the bound ops `names`: a rewrite that would
    keep one of them alive for another user adds nodes instead of removing them. It reads
    the IR's uses, so these rules are greedy-only (on the e-graph driver they run greedily
    after extraction)."""
    return [pred(f"{n}{_ONE_USE}", _used_once, Var(n)) for n in names]


_ONE_USE = " has one use"

# ------------------------------------------------------------------ constant re-association


def _combined(name: str):
    """Native: `name` (tf.Mul, tf.AddV2, tf.Sub) of two constants, as TF computes it. A float
    result that overflows to infinity, or a product that underflows below the normal range,
    from finite (nonzero) factors is refused: regrouping x * c1 * c2 around it would change
    far more than the rounding for ordinary x."""
    def fn(a: A.Attribute, b: A.Attribute) -> A.Attribute | None:
        if not isinstance(a, A.DenseElementsAttr) or not isinstance(b, A.DenseElementsAttr):
            return None
        et = T.element_type(a.type)
        out = evaluate(name, (), [a, b], T.UnrankedTensorType(et), [])
        if out is None:
            return None
        if out.dtype.kind == "f":
            left, right = (np.broadcast_to(attribute_value(c, c.type), out.shape) for c in (a, b))
            finite = np.isfinite(left) & np.isfinite(right)
            tiny = np.abs(out) < np.finfo(out.dtype).tiny
            if (finite & ~np.isfinite(out)).any() or (
                    name == "tf.Mul" and (finite & (left != 0) & (right != 0) & tiny).any()):
                return None
        return dense_attr(out, et)
    return fn


def _combined_type(a: A.Attribute, b: A.Attribute) -> T.Type | None:
    """The type of an op of two constants: their broadcast shape, a's element type."""
    if not isinstance(a, A.DenseElementsAttr) or not isinstance(b, A.DenseElementsAttr):
        return None
    try:
        shape = np.broadcast_shapes(tuple(a.type.shape), tuple(b.type.shape))
    except ValueError:
        return None
    return T.RankedTensorType(shape, T.element_type(a.type))


def _reassociate(name: str, inner: str, outer: str, combine: str, swap: bool, result: str, doc: str) -> Rule:
    """`outer(inner(x, c1), c2)` -> `result(x, combine(c1, c2))` (`swap`: combine(c2, c1))."""
    order = (ConstOf("c2"), ConstOf("c1")) if swap else (ConstOf("c1"), ConstOf("c2"))
    folded = op("tf.Const", value=Native(f"{name}-constant", _combined(combine), order, "attr"),
                types=[Native(f"{name}-type", _combined_type, order, "type")])
    return rule(name, op(outer, op(inner, x, c1).bind("inner"), c2), op(result, x, folded),
                where=[is_constant(c1), is_constant(c2), *once("inner")],
                commutative=True, tags=_APPROX,
                doc=doc + "; exact on integers (wrapping arithmetic is associative), regrouped rounding on "
                          "floats (Grappler's ConstantPushDown does the same)")


REASSOCIATE = [
    _reassociate("mul-mul-constants", "tf.Mul", "tf.Mul", "tf.Mul", False, "tf.Mul",
                 "(x * c1) * c2 = x * (c1 * c2)"),
    _reassociate("addv2-addv2-constants", "tf.AddV2", "tf.AddV2", "tf.AddV2", False, "tf.AddV2",
                 "(x + c1) + c2 = x + (c1 + c2)"),
    _reassociate("sub-sub-constants", "tf.Sub", "tf.Sub", "tf.AddV2", False, "tf.Sub",
                 "(x - c1) - c2 = x - (c1 + c2)"),
    _reassociate("addv2-sub-constants", "tf.Sub", "tf.AddV2", "tf.Sub", True, "tf.AddV2",
                 "(x - c1) + c2 = x + (c2 - c1)"),
    _reassociate("sub-addv2-constants", "tf.AddV2", "tf.Sub", "tf.Sub", False, "tf.AddV2",
                 "(x + c1) - c2 = x + (c1 - c2)"),
]

# ------------------------------------------------------------------ AddN and common factors


def _broadcast_types(s: T.Type, t: T.Type) -> T.Type:
    """The type of an elementwise op of values of types s and t: their broadcast shape when
    both are ranked (a dynamic size where either is), else unranked; s's element type."""
    et = T.element_type(s)
    if not (isinstance(s, T.RankedTensorType) and isinstance(t, T.RankedTensorType)):
        return T.UnrankedTensorType(et)
    a, b = tuple(s.shape), tuple(t.shape)
    if -1 in a or -1 in b:
        n = max(len(a), len(b))
        return T.RankedTensorType((-1,) * n, et)
    try:
        return T.RankedTensorType(np.broadcast_shapes(a, b), et)
    except ValueError:
        return T.UnrankedTensorType(et)


def _sum_of(u: Var, v: Var) -> object:
    """AddV2(u, v), typed by broadcasting (a nested result op needs its own type)."""
    typed = Native("sum-type", _broadcast_types, (TypeOf(u.name), TypeOf(v.name)), "type")
    return op("tf.AddV2", u, v, types=[typed])


AGGREGATE = [
    rule("addn-of-addv2-chain", op("tf.AddV2", op("tf.AddV2", x, y), z).bind("m"), op("tf.AddN", [x, y, z]),
         where=[static_shape(x), same_type(x, y), same_type(x, z), same_type(x, "m")],
         doc="(x + y) + z of one static type is AddN(x, y, z): TF's AddN kernel adds its operands in "
             "order, (x + y) + z, so the sum is the same (Grappler's AddOpsRewrite, equal shapes)"),
    rule("hoist-common-factor", op("tf.AddV2", op("tf.Mul", x, y).bind("xy"), op("tf.Mul", x, z).bind("xz")),
         op("tf.Mul", x, _sum_of(y, z)), where=once("xy", "xz"), commutative=True, tags=_APPROX,
         doc="x*y + x*z = x * (y + z) (Grappler's HoistCommonFactor): distributivity, equal up to rounding "
             "(not where x*y + x*z overflows or cancels infinities); both sides broadcast to one shape"),
]

# ------------------------------------------------------------------ shape ops


def _ints(c: A.Attribute) -> np.ndarray | None:
    """A small integer constant's elements (a permutation, an axis), or None."""
    if not isinstance(c, A.DenseElementsAttr) or not isinstance(T.element_type(c.type), T.IntegerType):
        return None
    try:
        return np.asarray(attribute_value(c, c.type)).reshape(-1).astype(np.int64)
    except (Unsupported, ValueError):
        return None


def _composed_perm(a: A.Attribute, b: A.Attribute) -> A.Attribute | None:
    """The permutation of Transpose(Transpose(x, a), b): element i is a[b[i]]."""
    pa, pb = _ints(a), _ints(b)
    if pa is None or pb is None or len(pa) != len(pb) or sorted(pb.tolist()) != list(range(len(pb))):
        return None
    return dense_attr(pa[pb].astype(storage_dtype(T.element_type(a.type))), T.element_type(a.type))


def _is_identity_perm(p: A.Attribute) -> bool:
    perm = _ints(p)
    return perm is not None and perm.tolist() == list(range(len(perm)))


def _squeezes_axis(dims: A.Attribute | None, axis: A.Attribute) -> bool:
    """Squeeze's `squeeze_dims` is exactly [axis], axis an ExpandDims `dim` constant of one
    element: the same integer, so the same position (negative axes count from the end of
    the rank-(r+1) value in both ops)."""
    got = _ints(axis)
    if not isinstance(dims, A.ArrayAttr) or got is None or got.size != 1:
        return False
    values = [e.value for e in dims.value if isinstance(e, A.IntegerAttr)]
    return len(values) == len(dims.value) == 1 and values[0] == int(got[0])


sd = var("sd")
_perm_type = [type_of("p1")]

SHAPES = [
    rule("transpose-transpose", op("tf.Transpose", op("tf.Transpose", x, p1).bind("inner"), p2),
         op("tf.Transpose", x, op("tf.Const", value=Native("composed-perm", _composed_perm,
                                                            (ConstOf("p1"), ConstOf("p2")), "attr"),
                                  types=_perm_type)),
         where=[is_constant(p1), is_constant(p2), *once("inner")],
         doc="transpose(transpose(x, p1), p2) = transpose(x, p1[p2]): elements only move (exact)"),
    rule("transpose-identity", op("tf.Transpose", x, p1).bind("m"), x,
         where=[is_constant(p1), pred("p1 is the identity permutation", _is_identity_perm, const_of("p1")),
                same_type(x, "m")],
         doc="a transpose by [0, 1, ..., n-1] is its operand (Grappler's RemoveIdentityTranspose)"),
    rule("reshape-same-shape", op("tf.Reshape", x, var("s")).bind("m"), x,
         where=[static_shape(x), same_type(x, "m")],
         doc="a reshape to the operand's own static shape is the operand (Grappler's RemoveRedundantReshape)"),
    rule("reshape-to-own-shape", op("tf.Reshape", x, op("tf.Shape", x)).bind("m"), x, where=[same_type(x, "m")],
         doc="Reshape(x, Shape(x)) is x, whatever x's shape (GraphDef imports carry no static shapes)"),
    rule("reshape-of-squeeze", op("tf.Reshape", op("tf.Squeeze", x), var("s")), op("tf.Reshape", x, var("s")),
         doc="Reshape reads only the elements in order, which Squeeze keeps: the Squeeze is not needed"),
    rule("reshape-of-expanddims", op("tf.Reshape", op("tf.ExpandDims", x, d), var("s")),
         op("tf.Reshape", x, var("s")),
         doc="Reshape reads only the elements in order, which ExpandDims keeps: the ExpandDims is not needed"),
    rule("squeeze-of-expanddims", op("tf.Squeeze", op("tf.ExpandDims", x, d), squeeze_dims=sd).bind("m"), x,
         where=[is_constant(d), pred("squeeze_dims is [d]", _squeezes_axis, sd, const_of("d")), same_type(x, "m")],
         doc="Squeeze(ExpandDims(x, d), [d]) = x: the size-1 axis inserted is the one removed"),
    rule("expanddims-of-squeeze", op("tf.ExpandDims", op("tf.Squeeze", x, squeeze_dims=sd), d).bind("m"), x,
         where=[is_constant(d), pred("squeeze_dims is [d]", _squeezes_axis, sd, const_of("d")), same_type(x, "m")],
         doc="ExpandDims(Squeeze(x, [d]), d) = x: the size-1 axis removed comes back where it was (Squeeze "
             "fails unless that axis has size 1)"),
]

# ------------------------------------------------------------------ casts

#: Element types a Cast chain may pass through (bf16 and complex left out: numpy's casting
#: table does not describe TF's bfloat16, and complex to real casts drop a part).
_PLAIN = "biuf"


def _holds_every_value(src: T.Type, mid: T.Type) -> bool:
    """Every value of element type `src` is a value of `mid`: bool to anything, integers to
    integers whose range contains theirs, integers to floats whose significand holds all their
    bits, floats to wider floats. (numpy's "safe" casting is not this: it calls i64 -> f64
    safe, and i64 2^63 - 1 has no f64.)"""
    try:
        a, b = storage_dtype(T.element_type(src)), storage_dtype(T.element_type(mid))
    except (Unsupported, AttributeError):
        return False
    if any(getattr(T.element_type(t), "name", "") == "bf16" for t in (src, mid)):
        return False
    if a.kind == "b":
        return b.kind in _PLAIN
    if a.kind in "iu" and b.kind in "iu":
        return bool(np.can_cast(a, b, "safe"))
    if a.kind in "iu" and b.kind == "f":
        return a.itemsize * 8 - (a.kind == "i") <= np.finfo(b).nmant + 1
    return a.kind == b.kind == "f" and b.itemsize >= a.itemsize


def _one_cast(src: T.Type, mid: T.Type, dst: T.Type) -> bool:
    """Cast(Cast(x, mid), dst) = Cast(x, dst): the middle type holds every value of x's, and
    an integer x that passes through a float to an integer type that does not hold it is
    excluded: the integer cast wraps (defined), a float out of the integer range has no
    defined cast (C++; TF's CPU kernel saturates some and wraps others)."""
    if not _holds_every_value(src, mid):
        return False
    kinds = [storage_dtype(T.element_type(t)).kind for t in (src, mid)]
    try:
        out = storage_dtype(T.element_type(dst))
    except (Unsupported, AttributeError):
        return False
    if kinds[0] in "iu" and kinds[1] == "f" and out.kind in "iu":
        return _holds_every_value(src, dst)
    return True


CASTS = [
    rule("cast-of-widening-cast", op("tf.Cast", op("tf.Cast", x).bind("mid")).bind("m"),
         op("tf.Cast", x, copy_attrs="m"),
         where=[pred("the chain is one cast", _one_cast, type_of("x"), type_of("mid"), type_of("m"))],
         doc="Cast(Cast(x, wider), T) = Cast(x, T) when the middle type holds every value of x's type exactly "
             "(bool to anything, i8 -> i16/i32/i64/f16/f32/f64, i32 -> i64/f64, f16 -> f32/f64, f32 -> f64, "
             "unsigned to wider): the outer cast then converts x's own values; except an integer through a "
             "float to an integer type that does not hold it (int to int wraps, an out-of-range float to int is "
             "undefined). "
             "Narrowing in the middle (f32 -> f16 -> f32, i32 -> f32) rounds and is never removed"),
]

# ------------------------------------------------------------------ unary ops hoisted out of Concat

#: Elementwise unary ops hoisted out of ConcatV2 (Grappler hoists any chain of elementwise
#: unary ops; these are the ones with an op record, which the e-graph needs to build them,
#: and an evaluator: Tanh and Abs have no record yet).
HOISTED_UNARY = ("tf.Relu", "tf.Relu6", "tf.Sigmoid", "tf.Neg", "tf.Square")
#: Concats of up to this many values (inception's mixed blocks concatenate 2 to 4 branches).
MAX_CONCAT = 4


#: Ops the remapper fuses a following activation into (through a bias add): an activation
#: after one of them costs no node once fused, and one node if hoisted out of the concat.
_FUSES_ACTIVATION = frozenset({"tf.BiasAdd", "tf.AddV2", "tf.Conv2D", "tf.DepthwiseConv2dNative", "tf.MatMul",
                               "tf.FusedBatchNorm", "tf.FusedBatchNormV2", "tf.FusedBatchNormV3",
                               "tf._FusedConv2D", "tf._FusedMatMul", "tf._FusedDepthwiseConv2dNative"})


def _not_fusable(*values) -> bool:
    """No operand is produced by an op the remapper (the next family) fuses an activation
    into: hoisting those would trade a fusion (no node) for a Relu after the concat."""
    return not any(getattr(v.owner_op, "name", None) in _FUSES_ACTIVATION for v in values)


def _hoist_out_of_concat(unary: str, n: int) -> Rule:
    values = [var(f"a{i}") for i in range(n)]
    short = unary[len("tf."):].lower()
    source = op("tf.ConcatV2", [op(unary, v).bind(f"u{i}") for i, v in enumerate(values)], var("axis")).bind("m")
    return rule(f"concat-of-{short}-{n}", source, op(unary, op("tf.ConcatV2", values, var("axis"), types=[type_of("m")])),
                where=[*once(*(f"u{i}" for i in range(n))),
                       pred("no operand is fused with its activation by the remapper", _not_fusable, *values)],
                doc=f"ConcatV2 of {n} {unary[3:]}s is the {unary[3:]} of the ConcatV2: an elementwise op commutes "
                    "with moving elements (Grappler's HoistCWiseUnaryChains, one op of the chain at a time; exact). "
                    "Not where an operand comes from an op the remapper fuses the activation into (a convolution "
                    "or product, through its bias): fused, the activation costs no node")


HOIST = [_hoist_out_of_concat(u, n) for u in HOISTED_UNARY for n in range(2, MAX_CONCAT + 1)]

# ------------------------------------------------------------------ Einsum as a matrix product


def _labels(term: str) -> list[str] | None:
    """An operand's dimension labels, `...` as one label; None if a label repeats (a
    diagonal or trace, not a matrix product)."""
    term = term.strip()
    labels, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            labels.append("...")
            i += 3
        elif term[i].isalpha():
            labels.append(term[i])
            i += 1
        else:
            return None
    return labels if len(set(labels)) == len(labels) else None


def matmul_form(equation: str) -> tuple[bool, bool, bool] | None:
    """(batched, transpose_a, transpose_b) when the two-operand `equation` is a (batched)
    matrix product: each operand ends in its matrix's two labels, sharing one contracted
    label j (absent from the output), the output ends in (i, k), and the batch labels before
    them are the output's, in order, in each operand or absent from one (BatchMatMulV2
    broadcasts a missing batch). None otherwise."""
    if equation.count("->") != 1:
        return None
    inputs, out_term = equation.split("->")
    terms = inputs.split(",")
    if len(terms) != 2:
        return None
    a, b, out = _labels(terms[0]), _labels(terms[1]), _labels(out_term)
    if a is None or b is None or out is None or min(len(a), len(b), len(out)) < 2:
        return None
    (a_batch, (a1, a2)), (b_batch, (b1, b2)) = (a[:-2], a[-2:]), (b[:-2], b[-2:])
    out_batch, (i, k) = out[:-2], out[-2:]
    if "..." in (a1, a2, b1, b2, i, k):
        return None
    shared = {a1, a2} & {b1, b2}
    if len(shared) != 1:
        return None
    (j,) = shared
    if j in out or {a1, a2} - {j} != {i} or {b1, b2} - {j} != {k} or i == k:
        return None
    if any(batch not in (out_batch, []) for batch in (a_batch, b_batch)) or out_batch not in (a_batch, b_batch):
        return None
    return bool(out_batch), a1 == j, b2 == j


def _einsum_attr(index: int, batched: bool):
    """Native: the transpose flag `index` (0: a, 1: b) of the product the equation is."""
    def fn(eq: A.Attribute) -> A.Attribute | None:
        form = matmul_form(eq.value) if isinstance(eq, A.StringAttr) else None
        return None if form is None or form[0] != batched else A.BoolAttr(form[1 + index])
    return fn


def _is_form(batched: bool):
    def fn(eq: A.Attribute) -> bool:
        form = matmul_form(eq.value) if isinstance(eq, A.StringAttr) else None
        return form is not None and form[0] == batched
    return fn


def _einsum_rule(batched: bool) -> Rule:
    name, flags = ("tf.BatchMatMulV2", ("adj_x", "adj_y")) if batched else ("tf.MatMul", ("transpose_a", "transpose_b"))
    eq = var("eq")
    attrs = {f: Native(f"einsum-{f}", _einsum_attr(n, batched), (eq,), "attr") for n, f in enumerate(flags)}
    kind = "a batched matrix product (batch labels leading, broadcast where one operand lacks them)" if batched \
        else "a matrix product of two matrices"
    return rule(f"einsum-to-{name[3:].lower()}", op("tf.Einsum", [x, y], equation=eq), op(name, x, y, **attrs),
                where=[float_element(x), pred(f"the equation is {kind}", _is_form(batched), eq)], tags=_APPROX,
                doc=f"Einsum whose equation is {kind} (ij,jk->ik; ji,jk->ik is transpose_a; ij,kj->ik "
                    f"transpose_b) is {name[3:]}: the same sums of products. TF's Einsum kernel itself runs "
                    "a batched matrix product; the interpreter's einsum may sum in another order, so equal "
                    "up to rounding (approx). Floats only (adj_x conjugates complex operands)")


EINSUM = [_einsum_rule(False), _einsum_rule(True)]

# ------------------------------------------------------------------ transposes folded into products


def _swaps_last_two(rank: int | None):
    """The permutation swaps the last two axes and keeps the others (of `rank` if given)."""
    def fn(p: A.Attribute) -> bool:
        perm = _ints(p)
        if perm is None or len(perm) < 2 or (rank is not None and len(perm) != rank):
            return False
        n = len(perm)
        return perm.tolist() == [*range(n - 2), n - 1, n - 2]
    return fn


def _flipped(flag: A.Attribute | None) -> A.Attribute:
    """The flag negated (absent: its default, false)."""
    return A.BoolAttr(not (isinstance(flag, A.IntegerAttr) and flag.value))


def _fold_transpose(product: str, flags: tuple[str, str], side: int, rank: int | None) -> Rule:
    """product(Transpose(x), y) -> product(x, y) with the operand's flag flipped (side 0),
    or the same for the second operand (side 1)."""
    t, other = op("tf.Transpose", x, p1), y
    operands = (t, other) if side == 0 else (other, t)
    fa, fb = var("fa"), var("fb")
    bound = {flags[0]: fa, flags[1]: fb}
    built = {flags[0]: fa, flags[1]: fb}
    built[flags[side]] = Native(f"flip-{flags[side]}", _flipped, (bound[flags[side]],), "attr")
    short = product[3:].lower()
    return rule(f"{short}-of-transpose-{'ab'[side]}", op(product, *operands, **bound),
                op(product, *((x, y) if side == 0 else (y, x)), **built),
                where=[is_constant(p1), pred("the permutation swaps the last two axes", _swaps_last_two(rank),
                                             const_of("p1")), float_element(x)],
                tags=_APPROX,
                doc=f"{product[3:]} of a transposed operand is {product[3:]} with that operand's {flags[side]} "
                    "flipped: the same products (Grappler's FoldTransposeIntoMatMul). Floats only (adj_x "
                    "conjugates complex values); TF's kernel may block the sums differently for a transposed "
                    "layout, so equal up to rounding (approx)")


TRANSPOSE_INTO_PRODUCT = [
    *(_fold_transpose("tf.MatMul", ("transpose_a", "transpose_b"), side, 2) for side in (0, 1)),
    *(_fold_transpose("tf.BatchMatMulV2", ("adj_x", "adj_y"), side, None) for side in (0, 1)),
]

def _reshape_absorbs(shape: A.Attribute | None, zeros: A.Attribute | None) -> bool:
    """Adding ``zeros`` to a value reshaped to the constant ``shape`` leaves its shape as it is:
    the zeros have no more axes than the shape, and each of theirs is 1 or the shape's (known)
    extent there; axes the zeros do not reach may be -1 (inferred by the reshape)."""
    if not isinstance(shape, A.DenseElementsAttr) or not isinstance(getattr(zeros, "type", None), T.RankedTensorType):
        return False
    dims = tuple(int(d) for d in shape.to_numpy().reshape(-1))
    added = tuple(zeros.type.shape)
    return len(added) <= len(dims) and all(a == 1 or a == d >= 0 for a, d in zip(reversed(added), reversed(dims)))


NEUTRAL = [
    rule("addv2-zero-after-reshape", op("tf.AddV2", op("tf.Reshape", y, z).bind("r"), c1), var("r"),
         where=[is_splat(c1, 0), is_constant(z), pred("the zeros keep the reshaped shape", _reshape_absorbs,
                                                      const_of("z"), const_of("c1"))],
         commutative=True, tags=("approx",),
         doc="a value reshaped to a known shape plus zeros that broadcast into that shape is the value "
             "(Grappler drops x + 0 where shapes say the add does not broadcast; GraphDef imports carry no "
             "static types, but a Reshape to a constant shape does: BERT's Q/K/V biases of zeros). On floats "
             "-0.0 + 0.0 is +0.0 (approx)"),
    rule("biasadd-zero", op("tf.BiasAdd", x, y), x, where=[is_splat(y, 0)], tags=("approx",),
         doc="adding a bias of zeros is the value itself (Grappler's constant folding drops it; a BiasAdd "
             "never broadcasts the value's shape). On floats x + 0.0 turns a -0.0 into +0.0, so equal as "
             "numbers but not bit for bit (approx), as Grappler accepts"),
]

#: tf-canonical's rules that are Grappler arithmetic stages, shared (not restated) so that
#: running both sets applies each once.
SHARED = [r for r in CANONICAL if r.name in ("neg-neg", "addv2-of-neg-left", "addv2-of-neg-right", "sub-of-neg",
                                              "reshape-reshape", "cast-same-type")]

RULES = [*REASSOCIATE, *AGGREGATE, *SHAPES, *CASTS, *HOIST, *EINSUM, *TRANSPOSE_INTO_PRODUCT, *NEUTRAL, *SHARED]

#: The rules with Grappler's single-consumer condition (`once`), which reads the IR.
GREEDY_ONLY = [r for r in RULES if any(getattr(c, "name", "").endswith(_ONE_USE) for c in r.where)]

register_rule_set("tf-arithmetic", [r for r in RULES if r not in GREEDY_ONLY],
                  "Grappler's arithmetic optimizer: constants re-associated, AddN chains, common factors "
                  "hoisted, transposes/reshapes/squeezes that cancel, widening cast chains, unary ops hoisted "
                  "out of concats, Einsum as MatMul/BatchMatMulV2", greedy_rules=GREEDY_ONLY)
