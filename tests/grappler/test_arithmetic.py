"""tf-arithmetic (patterns/grappler/arithmetic.py): every rule through the soundness harness,
the float rules on bounded inputs, what must be refused, generated-graph properties (shape
programs and integer arithmetic programs, bit-exact), and the TF kernel facts the rules rely
on (AddN's order, Cast chains, Einsum's semantics).

The harness draws any element type and any value; the rules that regroup float arithmetic
(re-association, the hoisted factor) are exact on integers, so the harness checks them
exactly on integer types, and on floats they are checked on programs with bounded inputs
(|x| <= 100) against rtol 1e-4, as the batchnorm rules are: near overflow a regrouped
product is not the original (which is why they are tagged approx).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from egraft.ir import parse, print_ir
from egraft.ir.core import types as T
from egraft.ir.semantics import run_function
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness import assert_pass_sound, assert_rule_sound
from egraft.patterns import rule_set
from egraft.patterns.grappler import arithmetic as ar

SET = "tf-arithmetic"
DRIVERS = ("greedy", "egraph")
OWN = [r for r in ar.RULES if r not in ar.SHARED]  # the shared ones are tf-canonical's (tested there)
#: Squeeze's axes are an attribute and ExpandDims's an operand, drawn independently: they
#: rarely agree; the harness draws no Einsum equations. These are checked on the modules
#: of test_squeeze_expanddims_transposes_cancel and test_einsum_matrix_products.
DRAWN_ELSEWHERE = {"squeeze-of-expanddims", "expanddims-of-squeeze", "einsum-to-matmul", "einsum-to-batchmatmulv2"}

_INTEGER_TYPES = st.builds(lambda et, shape: T.RankedTensorType(tuple(shape), et),
                           st.sampled_from([T.i8, T.i32, T.i64]), st.lists(st.integers(1, 3), max_size=3))
#: Square matrices (batched or not), so that a transposed operand still multiplies.
_SQUARE_TYPES = st.builds(lambda n, batch, rank: T.RankedTensorType(((batch,) if rank == 3 else ()) + (n, n), T.f32),
                          st.integers(1, 3), st.integers(1, 2), st.sampled_from([2, 3]))
#: The float-regrouping rules: exact on integers, where the harness checks them exactly.
_EXACT_ON_INTEGERS = {r.name for r in ar.REASSOCIATE} | {"hoist-common-factor"}
_PRODUCTS = {r.name for r in ar.TRANSPOSE_INTO_PRODUCT}


@pytest.mark.parametrize("rule", OWN, ids=[r.name for r in OWN])
def test_rule_is_sound(rule) -> None:
    if rule.name in DRAWN_ELSEWHERE:
        pytest.skip("attributes the harness cannot draw: checked on the modules below")
    examples = 4 if rule.name.startswith("concat-of-") else 8  # 15 of them, each variadic: keep it cheap
    if rule.name in _EXACT_ON_INTEGERS:
        assert_rule_sound(rule, examples=examples, exact=True, types=_INTEGER_TYPES)
    else:
        assert_rule_sound(rule, examples=examples, types=_SQUARE_TYPES if rule.name in _PRODUCTS else None)


def test_the_set_is_registered_with_the_shared_rules() -> None:
    s = rule_set(SET)
    names = {r.name for r in s.rules}
    assert {"neg-neg", "sub-of-neg", "reshape-reshape", "transpose-transpose", "concat-of-relu-4"} <= names
    canonical = {r.name: r for r in rule_set("tf-canonical").rules}
    assert all(canonical[r.name] is r for r in ar.SHARED)


def _run(text: str, driver: str) -> str:
    module = parse(text)
    PassManager(parse_pipeline(f"builtin.module(func.func(canonicalize{{rules={SET} driver={driver}}}))")).run(module)
    return print_ir(module)


def assert_rewrites_soundly(text: str, driver: str, examples: int = 20) -> str:
    """Run the set; the function must compute the same on bounded random inputs (rtol 1e-4,
    atol 1e-4). The inputs are whole numbers in [-100, 100]: products and sums of them are exact
    in float32 in any order, so a regrouped sum agrees however much it cancels (CI once drew
    rows whose sum cancels to 0 against terms of 4e3: 2.4e-4 of rounding), while a wrong rewrite
    still computes another number. Returns the rewritten IR."""
    before = parse(text)
    after_text = _run(text, driver)
    after = parse(after_text)
    (func,) = [o for o in before.walk() if o.name == "func.func"]
    shapes = [tuple(a.type.shape) for a in func.regions[0].blocks[0].args]
    floats = st.integers(-100, 100).map(np.float32)

    @settings(max_examples=examples, deadline=None, database=None)
    @given(st.tuples(*(hnp.arrays(np.float32, s, elements=floats) for s in shapes)))
    def check(inputs) -> None:
        for e, a in zip(run_function(before, list(inputs)), run_function(after, list(inputs))):
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4)

    check()
    return after_text


_T = "tensor<2x3xf32>"


def _const(name: str, values: str, shape: str = "3") -> str:
    return f'  %{name} = "tf.Const"() {{value = dense<{values}> : tensor<{shape}xf32>}} : () -> tensor<{shape}xf32>\n'


def _binary(name: str, opname: str, a: str, b: str, bt: str = "tensor<3xf32>") -> str:
    return f'  %{name} = "tf.{opname}"(%{a}, %{b}) : ({_T}, {bt}) -> {_T}\n'


def _pair(k: int, inner: str, outer: str) -> str:
    """outer(inner(x, a), b) with constants of its own (no two pairs are one expression)."""
    return (_const(f"a{k}", f"[1.5, -0.25, {k}.0]") + _const(f"b{k}", f"[2.0, 4.0, -0.{k}]")
            + _binary(f"i{k}", inner, "x", f"a{k}") + _binary(f"o{k}", outer, f"i{k}", f"b{k}"))


_PAIRS = [("Mul", "Mul"), ("AddV2", "AddV2"), ("Sub", "Sub"), ("Sub", "AddV2"), ("AddV2", "Sub")]
FLOATS = ("func.func @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %z: tensor<3xf32>) -> "
          f"({_T}, {_T}, {_T}, {_T}, {_T}, {_T}) {{\n"
          + "".join(_pair(k, inner, outer) for k, (inner, outer) in enumerate(_PAIRS, 1))
          + _binary("h1", "Mul", "x", "y", _T) + _binary("h2", "Mul", "x", "z") + _binary("h3", "AddV2", "h1", "h2", _T)
          + f"  return %o1, %o2, %o3, %o4, %o5, %h3 : {_T}, {_T}, {_T}, {_T}, {_T}, {_T}\n}}\n")


@pytest.mark.parametrize("driver", DRIVERS)
def test_float_reassociation_and_hoisting(driver: str) -> None:
    """Each pair of ops with two constants becomes one op with one folded constant; the
    common factor x is multiplied once (its second factor broadcasts)."""
    out = assert_rewrites_soundly(FLOATS, driver)
    arithmetic = sum(out.count(f'"tf.{n}"') for n in ("Mul", "AddV2", "Sub"))
    assert arithmetic == 5 + 2, out  # one op per reassociated pair, Mul(x, AddV2(y, z))


@pytest.mark.parametrize("driver", DRIVERS)
def test_overflowing_constant_product_is_refused(driver: str) -> None:
    text = ("func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
            + _const("c1", "[1.0e30, 1.0, 2.0]") + _const("c2", "[1.0e30, 1.0, 2.0]")
            + '  %m1 = "tf.Mul"(%x, %c1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n'
            + '  %m2 = "tf.Mul"(%m1, %c2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n'
            + "  return %m2 : tensor<3xf32>\n}\n")
    assert _run(text, driver).count('"tf.Mul"') == 2


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_op_with_another_consumer_is_not_rewritten(driver: str) -> None:
    """Grappler's single-consumer condition: a Relu also returned is not hoisted out of the
    concat, a Mul also returned keeps the common factor where it is (either would add ops)."""
    relu = "tensor<2xf32>"
    text = (f"func.func @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %z: tensor<3xf32>, %a: {relu}, %b: {relu}) -> "
            f"({_T}, {_T}, tensor<4xf32>, {relu}) {{\n"
            + _binary("h1", "Mul", "x", "y", _T) + _binary("h2", "Mul", "x", "z") + _binary("h3", "AddV2", "h1", "h2", _T)
            + f'  %ra = "tf.Relu"(%a) : ({relu}) -> {relu}\n  %rb = "tf.Relu"(%b) : ({relu}) -> {relu}\n'
            + '  %ax = "tf.Const"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>\n'
            + f'  %c = "tf.ConcatV2"(%ra, %rb, %ax) : ({relu}, {relu}, tensor<i32>) -> tensor<4xf32>\n'
            + f"  return %h3, %h1, %c, %rb : {_T}, {_T}, tensor<4xf32>, {relu}\n}}\n")
    out = _run(text, driver)
    assert out.count('"tf.Mul"') == 2 and out.count('"tf.Relu"') == 2, out


@pytest.mark.parametrize("driver", DRIVERS)
def test_activation_the_remapper_fuses_is_not_hoisted(driver: str) -> None:
    """Relu(BiasAdd(..)) branches stay: the remapper fuses each Relu into its producer (no
    node), where a hoisted Relu after the concat would cost one."""
    t = "tensor<2x2xf32>"
    text = (f"func.func @f(%a: {t}, %b: {t}, %bias: tensor<2xf32>) -> tensor<4x2xf32> {{\n"
            + "".join(f'  %{v}b = "tf.BiasAdd"(%{v}, %bias) {{data_format = "NHWC"}} : ({t}, tensor<2xf32>) -> {t}\n'
                      f'  %{v}r = "tf.Relu"(%{v}b) : ({t}) -> {t}\n' for v in "ab")
            + '  %ax = "tf.Const"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>\n'
            + f'  %c = "tf.ConcatV2"(%ar, %br, %ax) : ({t}, {t}, tensor<i32>) -> tensor<4x2xf32>\n'
            + "  return %c : tensor<4x2xf32>\n}\n")
    assert _run(text, driver).count('"tf.Relu"') == 2


SHAPES = """func.func @f(%x: tensor<2x3xf32>, %w: tensor<1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>, tensor<3x2xf32>, tensor<6xf32>, tensor<2x3x1xf32>) {
  %pos = "tf.Const"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %neg = "tf.Const"() {value = dense<-1> : tensor<i32>} : () -> tensor<i32>
  %zero = "tf.Const"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %e1 = "tf.ExpandDims"(%x, %pos) : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x1x3xf32>
  %s1 = "tf.Squeeze"(%e1) {squeeze_dims = [1]} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
  %e2 = "tf.ExpandDims"(%x, %neg) : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x3x1xf32>
  %s2 = "tf.Squeeze"(%e2) {squeeze_dims = [-1]} : (tensor<2x3x1xf32>) -> tensor<2x3xf32>
  %q = "tf.Squeeze"(%w) {squeeze_dims = [0]} : (tensor<1x3xf32>) -> tensor<3xf32>
  %e3 = "tf.ExpandDims"(%q, %zero) : (tensor<3xf32>, tensor<i32>) -> tensor<1x3xf32>
  %p = "tf.Const"() {value = dense<[1, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %t1 = "tf.Transpose"(%x, %p) : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  %t2 = "tf.Transpose"(%t1, %p) : (tensor<3x2xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  %t3 = "tf.Transpose"(%t2, %p) : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  %flat = "tf.Const"() {value = dense<[6]> : tensor<1xi32>} : () -> tensor<1xi32>
  %e4 = "tf.ExpandDims"(%x, %zero) : (tensor<2x3xf32>, tensor<i32>) -> tensor<1x2x3xf32>
  %r = "tf.Reshape"(%e4, %flat) : (tensor<1x2x3xf32>, tensor<1xi32>) -> tensor<6xf32>
  %kept = "tf.ExpandDims"(%x, %neg) : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x3x1xf32>
  return %s1, %s2, %e3, %t3, %r, %kept : tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>, tensor<3x2xf32>, tensor<6xf32>, tensor<2x3x1xf32>
}
"""


@pytest.mark.parametrize("driver", DRIVERS)
def test_squeeze_expanddims_transposes_cancel(driver: str) -> None:
    """Squeeze/ExpandDims pairs on one axis (positive and negative) cancel, three transposes
    by [1, 0] are one, a reshape ignores the ExpandDims before it; exact."""
    assert_pass_sound(SHAPES, f"builtin.module(func.func(canonicalize{{rules={SET} driver={driver}}}))",
                      examples=15)
    out = _run(SHAPES, driver)
    assert out.count('"tf.Squeeze"') == 0 and out.count('"tf.Transpose"') == 1, out
    assert out.count('"tf.ExpandDims"') == 1, out  # only %kept, which nothing undoes


@pytest.mark.parametrize("driver", DRIVERS)
def test_narrowing_cast_chain_is_kept(driver: str) -> None:
    """f32 -> f16 -> f32 rounds to half precision: not the identity, never removed; f16 ->
    f32 -> f64 is one cast."""
    text = """func.func @f(%x: tensor<3xf32>, %h: tensor<3xf16>) -> (tensor<3xf32>, tensor<3xf64>) {
  %a = "tf.Cast"(%x) {Truncate = false} : (tensor<3xf32>) -> tensor<3xf16>
  %b = "tf.Cast"(%a) {Truncate = false} : (tensor<3xf16>) -> tensor<3xf32>
  %c = "tf.Cast"(%h) {Truncate = false} : (tensor<3xf16>) -> tensor<3xf32>
  %d = "tf.Cast"(%c) {Truncate = false} : (tensor<3xf32>) -> tensor<3xf64>
  return %b, %d : tensor<3xf32>, tensor<3xf64>
}
"""
    out = _run(text, driver)
    assert out.count('"tf.Cast"') == 3, out
    assert_pass_sound(text, f"builtin.module(func.func(canonicalize{{rules={SET} driver={driver}}}))", examples=15)


PRODUCTS = """func.func @f(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<2x4x3xf32>, %c: tensor<2x4x5xf32>) -> (tensor<2x4xf32>, tensor<2x3x5xf32>) {
  %p = "tf.Const"() {value = dense<[1, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %wt = "tf.Transpose"(%w, %p) : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<3x4xf32>
  %m = "tf.MatMul"(%x, %wt) {transpose_a = false, transpose_b = false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %q = "tf.Const"() {value = dense<[0, 2, 1]> : tensor<3xi32>} : () -> tensor<3xi32>
  %bt = "tf.Transpose"(%b, %q) : (tensor<2x4x3xf32>, tensor<3xi32>) -> tensor<2x3x4xf32>
  %bm = "tf.BatchMatMulV2"(%bt, %c) {adj_x = false, adj_y = false} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %m, %bm : tensor<2x4xf32>, tensor<2x3x5xf32>
}
"""


@pytest.mark.parametrize("driver", DRIVERS)
def test_transposes_fold_into_products(driver: str) -> None:
    """MatMul(x, Transpose(w)) is MatMul(x, w, transpose_b), a batched product takes adj_x
    for a transpose of its last two axes: no Transpose is left (Grappler's
    FoldTransposeIntoMatMul)."""
    out = assert_rewrites_soundly(PRODUCTS, driver, examples=8)
    assert out.count('"tf.Transpose"') == 0 and "transpose_b = true" in out and "adj_x = true" in out, out


# ------------------------------------------------------------------ a generated-graph property

_UNARY = ("Relu", "Neg", "Sigmoid", "Abs")  # Abs: not hoisted (no record), stays


@st.composite
def shape_programs(draw) -> str:
    """A random chain over a rank-3 f32 input of the ops the exact rules rewrite: transposes,
    ExpandDims (sometimes squeezed back), reshapes, widening cast pairs, unary ops, and
    concats of two unary branches. Shapes are tracked here, so every program is well typed."""
    shape = start = tuple(draw(st.lists(st.integers(1, 3), min_size=3, max_size=3)))
    lines, consts, cur, n = [], [], "%x", [0]

    def fresh() -> str:
        n[0] += 1
        return f"%v{n[0]}"

    def ty(s) -> str:
        return "tensor<" + "".join(f"{d}x" for d in s) + "f32>"

    def const(values: list[int]) -> str:
        name = f"%k{len(consts)}"
        consts.append(f'  {name} = "tf.Const"() {{value = dense<{values}> : tensor<{len(values)}xi32>}} : () -> '
                      f"tensor<{len(values)}xi32>\n")
        return name

    for _ in range(draw(st.integers(2, 7))):
        kind = draw(st.sampled_from(("transpose", "expand", "reshape", "cast", "unary", "concat")))
        out = fresh()
        if kind == "transpose":
            perm = draw(st.permutations(list(range(len(shape)))))
            new = tuple(shape[p] for p in perm)
            lines.append(f'  {out} = "tf.Transpose"({cur}, {const(list(perm))}) : ({ty(shape)}, '
                         f"tensor<{len(perm)}xi32>) -> {ty(new)}\n")
        elif kind == "expand":
            axis = draw(st.integers(-len(shape) - 1, len(shape)))
            pos = axis if axis >= 0 else axis + len(shape) + 1
            new = shape[:pos] + (1,) + shape[pos:]
            k = const([axis])
            lines.append(f'  {out} = "tf.ExpandDims"({cur}, {k}) : ({ty(shape)}, tensor<1xi32>) -> {ty(new)}\n')
            if draw(st.booleans()):
                back = fresh()
                lines.append(f'  {back} = "tf.Squeeze"({out}) {{squeeze_dims = [{axis}]}} : ({ty(new)}) -> '
                             f"{ty(shape)}\n")
                out, new = back, shape
        elif kind == "reshape":
            new = draw(st.sampled_from([shape, tuple(reversed(shape)), (int(np.prod(shape)),)]))
            lines.append(f'  {out} = "tf.Reshape"({cur}, {const(list(new))}) : ({ty(shape)}, tensor<{len(new)}xi32>)'
                         f" -> {ty(new)}\n")
        elif kind == "cast":
            wide = fresh()
            lines.append(f'  {wide} = "tf.Cast"({cur}) : ({ty(shape)}) -> {ty(shape).replace("f32", "f64")}\n')
            lines.append(f'  {out} = "tf.Cast"({wide}) : ({ty(shape).replace("f32", "f64")}) -> {ty(shape)}\n')
            new = shape
        elif kind == "unary":
            lines.append(f'  {out} = "tf.{draw(st.sampled_from(_UNARY))}"({cur}) : ({ty(shape)}) -> {ty(shape)}\n')
            new = shape
        else:
            u = draw(st.sampled_from(_UNARY))
            axis = draw(st.integers(0, len(shape) - 1))
            a, b = fresh(), fresh()
            lines.append(f'  {a} = "tf.{u}"({cur}) : ({ty(shape)}) -> {ty(shape)}\n')
            lines.append(f'  {b} = "tf.{u}"({cur}) : ({ty(shape)}) -> {ty(shape)}\n')
            new = shape[:axis] + (shape[axis] * 2,) + shape[axis + 1:]
            ax = fresh()
            lines.append(f'  {ax} = "tf.Const"() {{value = dense<{axis}> : tensor<i32>}} : () -> tensor<i32>\n')
            lines.append(f'  {out} = "tf.ConcatV2"({a}, {b}, {ax}) : ({ty(shape)}, {ty(shape)}, tensor<i32>) -> '
                         f"{ty(new)}\n")
        cur, shape = out, new
    return (f"func.func @g(%x: {ty(start)}) -> {ty(shape)} {{\n" + "".join(consts) + "".join(lines)
            + f"  return {cur} : {ty(shape)}\n}}\n")


@pytest.mark.parametrize("driver", DRIVERS)
def test_generated_shape_programs_keep_their_values(driver: str) -> None:
    """The set on random chains of the ops its exact rules rewrite: the interpreter gives
    the same values, bit for bit, before and after (and the set never adds ops)."""
    @settings(max_examples=15, deadline=None, database=None)
    @given(shape_programs(), st.integers(0, 2**32 - 1))
    def check(text: str, seed: int) -> None:
        before = parse(text)
        after_text = _run(text, driver)
        (func,) = [o for o in before.walk() if o.name == "func.func"]
        shape = tuple(func.regions[0].blocks[0].args[0].type.shape)
        x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        (expected,), (actual,) = run_function(before, [x]), run_function(parse(after_text), [x])
        assert expected.shape == actual.shape and np.array_equal(expected, actual), after_text
        assert after_text.count('"tf.') <= text.count('"tf.'), after_text

    check()


# ------------------------------------------------------------------ TensorFlow's kernels


@pytest.mark.tf
def test_tensorflow_addn_of_three_adds_in_order() -> None:
    """addn-of-addv2-chain is exact because TF's AddN kernel computes (x + y) + z: checked on
    float32 values whose sums cancel and round (another order would differ)."""
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal(4096).astype(np.float32) * rng.choice([1e-4, 1.0, 1e4], 4096).astype(np.float32)
               for _ in range(3))
    got = tf.raw_ops.AddN(inputs=[x, y, z]).numpy()
    assert np.array_equal(got, (x + y) + z)
    assert not np.array_equal((x + y) + z, x + (y + z))  # the check can tell the orders apart


_CAST_TYPES = (np.bool_, np.int8, np.int32, np.int64, np.float16, np.float32, np.float64)
_IR = {np.bool_: T.i1, np.int8: T.i8, np.int32: T.i32, np.int64: T.i64, np.float16: T.f16, np.float32: T.f32,
       np.float64: T.f64}


def _values(dtype, target) -> np.ndarray:
    """Values of `dtype` that cast to `target` defined (floats in the target's integer range)."""
    rng = np.random.default_rng(1)
    if dtype is np.bool_:
        return rng.integers(0, 2, 64).astype(bool)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.concatenate([[info.min, info.max, 0, -1, 1], rng.integers(info.min, info.max, 59)]).astype(dtype)
    bound = 100.0 if np.issubdtype(target, np.integer) else 6e4  # beyond the range: undefined (C++)
    return np.concatenate([[0.0, -0.0, 0.5, -1.5, 2.5], rng.uniform(-bound, bound, 59)]).astype(dtype)


@pytest.mark.tf
def test_tensorflow_agrees_with_the_cast_chains_the_rule_removes() -> None:
    """For every (x, middle, result) element type triple the rule accepts, TF's Cast(Cast(x,
    middle), result) equals Cast(x, result) (floats within an integer result's range: beyond
    it the cast is undefined in C++, and the interpreter says so); and it refuses the chains
    TF shows differ."""
    tf = pytest.importorskip("tensorflow")
    accepted = 0
    for src in _CAST_TYPES:
        for mid in _CAST_TYPES:
            for dst in _CAST_TYPES:
                if not ar._one_cast(_IR[src], _IR[mid], _IR[dst]):
                    continue
                x = _values(src, dst)
                chain = tf.cast(tf.cast(x, mid), dst).numpy()
                direct = tf.cast(x, dst).numpy()
                assert np.array_equal(chain, direct, equal_nan=True), (src, mid, dst)
                accepted += 1
    assert accepted > 60
    assert not ar._holds_every_value(T.i64, T.f64) and not ar._holds_every_value(T.f32, T.f16)
    assert not ar._one_cast(T.i32, T.f64, T.i8)
    wide = _values(np.int32, np.float64)  # through a float out of int8's range (C++: undefined), directly wraps
    assert not np.array_equal(tf.cast(tf.cast(wide, tf.float64), tf.int8).numpy(), tf.cast(wide, tf.int8).numpy())
    big = np.array([2**62 + 1], np.int64)  # the i64 -> f64 -> i64 chain TF rounds
    assert tf.cast(tf.cast(big, tf.float64), tf.int64).numpy()[0] != big[0]


# ------------------------------------------------------------------ Einsum

#: (equation, a shape, b shape, out shape, becomes): matrix-product forms and ones that are not.
EINSUMS = [
    ("ij,jk->ik", (2, 3), (3, 4), (2, 4), "MatMul"),
    ("ji,jk->ik", (3, 2), (3, 4), (2, 4), "MatMul"),
    ("ij,kj->ik", (2, 3), (4, 3), (2, 4), "MatMul"),
    ("bij,bjk->bik", (2, 2, 3), (2, 3, 4), (2, 2, 4), "BatchMatMulV2"),
    ("abc,cd->abd", (2, 2, 3), (3, 4), (2, 2, 4), "BatchMatMulV2"),
    ("...ij,...kj->...ik", (2, 2, 3), (2, 4, 3), (2, 2, 4), "BatchMatMulV2"),
    ("BTNH,BSNH->BNTS", (1, 2, 2, 3), (1, 4, 2, 3), (1, 2, 2, 4), "Einsum"),  # bert4's: needs transposes
    ("ij,jk->ki", (2, 3), (3, 4), (4, 2), "Einsum"),
]


def _tensor(shape) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def _einsum_module(eq: str, a, b, out) -> str:
    return (f"func.func @e(%a: {_tensor(a)}, %b: {_tensor(b)}) -> {_tensor(out)} {{\n"
            f'  %r = "tf.Einsum"(%a, %b) {{equation = "{eq}"}} : ({_tensor(a)}, {_tensor(b)}) -> {_tensor(out)}\n'
            f"  return %r : {_tensor(out)}\n}}\n")


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("case", EINSUMS, ids=[c[0] for c in EINSUMS])
def test_einsum_matrix_products(case, driver: str) -> None:
    eq, a, b, out, becomes = case
    after = assert_rewrites_soundly(_einsum_module(eq, a, b, out), driver, examples=8)
    assert f'"tf.{becomes}"' in after and after.count('"tf.') == 1, after


@pytest.mark.tf
def test_interpreter_einsum_agrees_with_tensorflow() -> None:
    """The interpreter's Einsum (numpy) against TF's kernel on the equations above (bert4's
    attention ones included), float32, rtol 1e-5."""
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(2)
    for eq, a, b, out, _ in EINSUMS:
        x, y = rng.standard_normal(a).astype(np.float32), rng.standard_normal(b).astype(np.float32)
        (ours,) = run_function(parse(_einsum_module(eq, a, b, out)), [x, y])
        np.testing.assert_allclose(ours, tf.einsum(eq, x, y).numpy(), rtol=1e-5, atol=1e-6)


@st.composite
def integer_programs(draw) -> str:
    """A random chain over i32 values x, y (2x3) of the ops the re-association, hoisting,
    AddN and cast rules rewrite, with random constants (per-column or scalar): exact on
    integers (wrapping), so the values must agree bit for bit."""
    t, lines, n = "tensor<2x3xi32>", [], [0]

    def fresh(prefix: str = "v") -> str:
        n[0] += 1
        return f"%{prefix}{n[0]}"

    def const() -> tuple[str, str]:
        name, shape = fresh("k"), draw(st.sampled_from(["3", ""]))
        ct = f"tensor<{shape}xi32>" if shape else "tensor<i32>"
        values = draw(st.lists(st.integers(-2**31, 2**31 - 1), min_size=int(shape or 1), max_size=int(shape or 1)))
        lines.append(f'  {name} = "tf.Const"() {{value = dense<{values if shape else values[0]}> : {ct}}} : () -> {ct}\n')
        return name, ct

    cur = "%x"
    for _ in range(draw(st.integers(2, 6))):
        kind = draw(st.sampled_from(("pair", "hoist", "chain", "cast")))
        if kind == "pair":
            for opname in (draw(st.sampled_from(("Mul", "AddV2", "Sub"))), draw(st.sampled_from(("Mul", "AddV2", "Sub")))):
                c, ct = const()
                out = fresh()
                lines.append(f'  {out} = "tf.{opname}"({cur}, {c}) : ({t}, {ct}) -> {t}\n')
                cur = out
        elif kind == "hoist":
            a, b, out = fresh(), fresh(), fresh()
            lines.append(f'  {a} = "tf.Mul"({cur}, %y) : ({t}, {t}) -> {t}\n  {b} = "tf.Mul"({cur}, %x) : ({t}, {t}) -> {t}\n'
                         f'  {out} = "tf.AddV2"({a}, {b}) : ({t}, {t}) -> {t}\n')
            cur = out
        elif kind == "chain":
            a, out = fresh(), fresh()
            lines.append(f'  {a} = "tf.AddV2"({cur}, %y) : ({t}, {t}) -> {t}\n  {out} = "tf.AddV2"({a}, %x) : ({t}, {t}) -> {t}\n')
            cur = out
        else:
            wide, out = fresh(), fresh()
            lines.append(f'  {wide} = "tf.Cast"({cur}) : ({t}) -> tensor<2x3xi64>\n'
                         f'  {out} = "tf.Cast"({wide}) : (tensor<2x3xi64>) -> {t}\n')
            cur = out
    return f"func.func @g(%x: {t}, %y: {t}) -> {t} {{\n" + "".join(lines) + f"  return {cur} : {t}\n}}\n"


@pytest.mark.parametrize("driver", DRIVERS)
def test_generated_integer_programs_keep_their_values(driver: str) -> None:
    """The float-regrouping rules are exact on integers: on random chains of them the
    interpreter gives the same i32 values before and after (wrapping included)."""
    @settings(max_examples=15, deadline=None, database=None)
    @given(integer_programs(), st.integers(0, 2**32 - 1))
    def check(text: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        x, y = (rng.integers(-2**31, 2**31, (2, 3)).astype(np.int32) for _ in range(2))
        after_text = _run(text, driver)
        (expected,), (actual,) = run_function(parse(text), [x, y]), run_function(parse(after_text), [x, y])
        assert np.array_equal(expected, actual), after_text
        assert after_text.count('"tf.') <= text.count('"tf.'), after_text

    check()


@pytest.mark.parametrize("driver", DRIVERS)
def test_einsum_of_constants_folds(driver: str) -> None:
    """tf-constant-folding folds an Einsum of constants by its evaluator (the harness draws no
    equations, so tests/grappler/test_constant_folding.py leaves fold-Einsum-* to this test)."""
    text = """func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %a = "tf.Const"() {value = dense<[[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = "tf.Const"() {value = dense<[[0.5, -2.0, 1.0], [3.0, 1.0, -1.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %e = "tf.Einsum"(%a, %b) {equation = "ij,kj->ik"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  %r = "tf.AddV2"(%x, %e) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
"""
    pipeline = f"builtin.module(func.func(canonicalize{{rules=tf-constant-folding driver={driver}}}))"
    assert_pass_sound(text, pipeline, examples=10)
    module = parse(text)
    PassManager(parse_pipeline(pipeline)).run(module)
    assert '"tf.Einsum"' not in print_ir(module)


_RESHAPE_PLUS_ZEROS = """
func.func @f(%x: tensor<2x6xf32>) -> tensor<*xf32> {
  %s = "tf.Const"() {value = dense<[-1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
  %z = "tf.Const"() {value = dense<0.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %r = "tf.Reshape"(%x, %s) : (tensor<2x6xf32>, tensor<3xi32>) -> tensor<*xf32>
  %b = "tf.AddV2"(%z, %r) : (tensor<2x3xf32>, tensor<*xf32>) -> tensor<*xf32>
  %z3 = "tf.Const"() {value = dense<0.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %b3 = "tf.AddV2"(%r, %z3) : (tensor<*xf32>, tensor<2x1x1x1xf32>) -> tensor<*xf32>
  %o = "tf.Mul"(%b, %b3) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %o : tensor<*xf32>
}
"""


@pytest.mark.parametrize("driver", DRIVERS)
def test_zeros_added_after_a_reshape_go_unless_they_broadcast(driver: str) -> None:
    """BERT's Q/K/V biases of zeros: the add after the Reshape to (-1, 2, 3) goes; zeros of
    shape (2, 1, 1, 1) would add an axis, so that add stays (the interpreter agrees)."""
    after = assert_rewrites_soundly(_RESHAPE_PLUS_ZEROS, driver)
    assert after.count('"tf.AddV2"') == 1 and "tensor<2x1x1x1xf32>) -> tensor<*xf32>" in after, after
