"""The harness refutes unsound rules (with NaN/Inf/-0.0 and wrap-around) and accepts sound ones."""

from __future__ import annotations

from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir.core import types as T
from egraft.ir.records.opdef import DimsKind
from egraft.ir.records.registry import REGISTRY
from egraft.ir.semantics import attribute_value
from egraft.passes.soundness import assert_pass_sound, assert_rule_sound
from egraft.passes.soundness.instantiate import _DIMS_DRAWERS, rule_instances
from egraft.patterns import float_element, integer_element, is_splat, op, rule, var
from egraft.patterns.natives import zero_of
from egraft.patterns.tf_rules import CANONICAL

x, c = var("x"), var("c")


def refuted(r, examples: int = 200, types=None) -> bool:
    try:
        assert_rule_sound(r, examples=examples, types=types)
    except AssertionError as e:
        return "differ" in str(e) or "undefined" in str(e)
    return False


def test_float_self_subtraction_is_refuted_by_nan_and_inf():
    bad = rule("subf-self", op("arith.subf", x, x), op("arith.constant", value=zero_of(x)),
               where=[float_element(x)])
    assert refuted(bad)


def test_float_times_zero_is_refuted():
    bad = rule("mulf-zero", op("arith.mulf", x, c), c, where=[is_splat(c, 0.0)])
    assert refuted(bad)


def test_tf_float_sub_self_is_refuted():
    bad = rule("sub-self-float", op("tf.Sub", x, x), op("tf.ZerosLike", x), where=[float_element(x)])
    assert refuted(bad)


def test_integer_rule_assuming_no_wraparound_is_refuted():
    # x + 1 > x holds on mathematical integers, not on wrapping ones
    bad = rule("addi-gt", op("arith.cmpi", op("arith.addi", x, c), x, predicate=_pred("sgt")),
               op("arith.constant", value=_true()), where=[is_splat(c, 1), integer_element(x)])
    assert refuted(bad, types=st.sampled_from([T.i8, T.i32, T.index]))


def test_rule_introducing_undefined_behaviour_is_refuted():
    # x -> x / 1 is fine, but x * 0 -> x / 0 makes a defined program undefined
    bad = rule("muli-zero-to-div", op("arith.muli", x, c), op("arith.divui", x, c), where=[is_splat(c, 0)])
    assert refuted(bad)


def _pred(name: str):
    from egraft.ir.core import attributes as A
    from egraft.ir.core import types as T
    from egraft.ir.dialects.arith import CMPI_PREDICATES

    return A.IntegerAttr(CMPI_PREDICATES.index(name), T.i64)


def _true():
    from egraft.ir.core import attributes as A

    return A.TRUE


@pytest.mark.parametrize("r", [
    rule("subi-self", op("arith.subi", x, x), op("arith.constant", value=zero_of(x))),
    rule("muli-zero", op("arith.muli", x, c), c, where=[is_splat(c, 0)], commutative=True),
    rule("negf-negf", op("arith.negf", op("arith.negf", x)), x),
    rule("mulf-one", op("arith.mulf", x, c), x, where=[is_splat(c, 1.0)]),
], ids=lambda r: r.name)
def test_sound_arith_rules_are_accepted(r):
    assert assert_rule_sound(r, examples=60) >= 1


_TF_SOUND = [r for r in CANONICAL if r.name in ("neg-neg", "identity", "sub-self-int", "mul-one", "addv2-zero",
                                                 "cast-same-type", "addv2-of-neg-left", "reshape-reshape")]


@pytest.mark.parametrize("r", _TF_SOUND, ids=lambda r: r.name)
def test_sound_tf_rules_are_accepted(r):
    assert assert_rule_sound(r, examples=40) >= 1


def test_approximate_rule_needs_a_tolerance():
    realdiv = next(r for r in CANONICAL if r.name == "realdiv-sqrt")
    assert_rule_sound(realdiv, examples=60, exact=False,
                      types=_float_tensors())


def _float_tensors():
    return st.sampled_from([T.RankedTensorType((2, 3), T.f32), T.RankedTensorType((3,), T.f64)])


def test_a_rule_that_never_applies_fails_loudly():
    never = rule("never", op("arith.addi", x, c), x, where=[is_splat(c, 0), is_splat(c, 1)])
    with pytest.raises(AssertionError, match="applied to 0"):
        assert_rule_sound(never, examples=10)


def test_pass_pipeline_soundness_on_a_module():
    text = """func.func @f(%a: i32, %b: f32, %m: memref<4xf32>) -> (i32, f32) {
      %0 = arith.addi %a, %a : i32
      %1 = arith.addi %a, %a : i32
      %2 = arith.muli %0, %1 : i32
      %3 = arith.mulf %b, %b : f32
      %4 = arith.mulf %b, %b : f32
      %5 = arith.subf %3, %4 : f32
      affine.for %i = 0 to 4 {
        affine.store %5, %m[%i] : memref<4xf32>
      }
      return %2, %5 : i32, f32
    }"""
    assert_pass_sound(text, "func.func(cse)", examples=40)


def test_dims_operands_name_declared_operands():
    """An op record's `dims_operand` names one of its operands and a kind the harness can draw."""
    declared = {name: d for name, d in REGISTRY.ops.items() if d.dims_operand}
    assert {"tf.Reshape", "tf.Transpose", "tf.ConcatV2", "tf.Mean"} <= set(declared)
    for name, d in declared.items():
        assert d.dims_operand[0] in {o.name for o in d.operands}, name
    assert set(get_args(DimsKind)) == set(_DIMS_DRAWERS)


@settings(max_examples=40, deadline=None, database=None)
@given(st.data())
def test_dims_operands_are_drawn_as_valid_constants(data):
    """tf.Transpose's `perm` (its record's dims operand) is a constant permutation of the input's
    dimensions; a comparison's result is i1 (its record's result element), whatever the operands."""
    p, y = var("p"), var("y")
    transpose = data.draw(rule_instances(rule("t", op("tf.Transpose", x, p), op("tf.Transpose", x, p))))
    ops = {o.name: o for o in transpose.walk()}
    rank = len(ops["tf.Transpose"].operands[0].type.shape)
    perm = ops["tf.Transpose"].operands[1].owner
    assert perm.name == "tf.Const"
    assert sorted(attribute_value(perm.attr("value"), perm.results[0].type).tolist()) == list(range(rank))
    less = data.draw(rule_instances(rule("l", op("tf.Less", x, y), op("tf.Less", x, y))))
    result = next(o for o in less.walk() if o.name == "tf.Less").results[0]
    assert result.type.element_type == T.i1
