"""Matching semantics of rule sources against IR (the greedy driver's matcher)."""

from __future__ import annotations

from egraft.ir import Operation, parse
from egraft.ir.records import constraints as C
from egraft.patterns import (_, attr_is_splat, either, float_element, has_one_use, has_rank, integer_element, is_constant, is_splat,
                             op, pred, ref, rule, same_type, static_shape, type_of, var, vars_)
from egraft.rewrite.greedy.match import Matcher

x, y, c = vars_("x y c")

FUNC = """
func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>, %i: tensor<?xi32>, %n: i32) -> () {
  %one = "tf.Const"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %two = "tf.Const"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %s0 = "tf.Sub"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %s1 = "tf.Sub"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %m0 = "tf.Mul"(%a, %one) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %m1 = "tf.Mul"(%one, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %m2 = "tf.Mul"(%two, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %neg = "tf.Neg"(%s1) : (tensor<2xf32>) -> tensor<2xf32>
  %nn = "tf.Neg"(%neg) : (tensor<2xf32>) -> tensor<2xf32>
  %sp:2 = "tf.Split"(%n, %a) {num_split = 2 : i64} : (i32, tensor<2xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  %cat = "tf.ConcatV2"(%sp#0, %sp#1, %n) : (tensor<1xf32>, tensor<1xf32>, i32) -> tensor<2xf32>
  %swap = "tf.ConcatV2"(%sp#1, %sp#0, %n) : (tensor<1xf32>, tensor<1xf32>, i32) -> tensor<2xf32>
  %addn = "tf.AddN"(%a, %b, %a) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %ii = "tf.Identity"(%i) : (tensor<?xi32>) -> tensor<?xi32>
  %mm = "tf.MatMul"(%a, %b) <{transpose_a = true}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %mm2 = "tf.MatMul"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  "test.use"(%s0, %s1, %m0, %m1, %m2, %nn, %cat, %swap, %addn, %ii, %mm, %mm2) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<?xi32>, tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
"""


def _ops() -> list[Operation]:
    module = parse(FUNC, allow_unregistered=True)
    func = next(o for o in module.walk() if o.name == "func.func")
    return list(func.regions[0].blocks[0])


def _matching(r, ops: list[Operation] | None = None) -> list[Operation]:
    """The ops the rule's first root matches (with all checks)."""
    m = Matcher(r)
    return [o for o in (ops or _ops()) if next(iter(m.matches(o)), None) is not None]


def test_repeated_variable_means_same_value() -> None:
    ops = _ops()
    hits = _matching(rule("r", op("tf.Sub", x, x), x), ops)
    assert hits == [ops[2]]
    assert _matching(rule("r", op("tf.Sub", x, y), x), ops) == [ops[2], ops[3]]


def test_wildcards_match_anything_and_bind_nothing() -> None:
    ops = _ops()
    r = rule("r", op("tf.Sub", _, _).bind("s"), ref("s"))
    assert _matching(r, ops) == [ops[2], ops[3]]


def test_nested_ops_and_bindings() -> None:
    ops = _ops()
    r = rule("r", op("tf.Neg", op("tf.Neg", op("tf.Sub", x, y)).bind("inner")), ref("inner"))
    hits = _matching(r, ops)
    assert hits == [ops[8]]
    (match,) = list(Matcher(r).matches(ops[8]))
    assert match.env["inner"] is ops[7] and match.env["x"] is ops[3].operands[0]
    assert [o.name for o in match.ops] == ["tf.Neg", "tf.Neg", "tf.Sub"]  # pre-order, for fused locations


def test_either_and_implicit_commutativity() -> None:
    ops = _ops()
    plain = rule("r", op("tf.Mul", x, c), x, where=[is_splat(c, 1)])
    assert _matching(plain, ops) == [ops[4]]
    explicit = rule("r", op("tf.Mul", either(x, c)), x, where=[is_splat(c, 1)])
    assert _matching(explicit, ops) == [ops[4], ops[5]]
    implicit = rule("r", op("tf.Mul", x, c), x, where=[is_splat(c, 1)], commutative=True)
    assert _matching(implicit, ops) == [ops[4], ops[5]]
    # tf.Sub has no Commutative trait: the option does not swap it.
    sub = rule("r", op("tf.Sub", x, op("tf.Neg", y)), x, commutative=True)
    assert _matching(sub, ops) == []


def test_constraints_on_values_and_checks() -> None:
    ops = _ops()
    assert _matching(rule("r", op("tf.Identity", var("v", C.tensor_of("i32", C.AnyInteger))), "v"), ops) == [ops[13]]
    assert _matching(rule("r", op("tf.Identity", x), x, where=[integer_element(x)]), ops) == [ops[13]]
    assert _matching(rule("r", op("tf.Identity", x), x, where=[static_shape(x)]), ops) == []
    assert _matching(rule("r", op("tf.Identity", x), x, where=[has_rank(x, 1)]), ops) == [ops[13]]
    assert _matching(rule("r", op("tf.Identity", x), x, where=[~has_rank(x, 1)]), ops) == []
    any_of = float_element(x) | integer_element(x)
    assert _matching(rule("r", op("tf.Identity", x), x, where=[any_of & ~float_element(x)]), ops) == [ops[13]]
    seen = []
    py = pred("records-type", lambda t: seen.append(t) or True, type_of(x))
    assert _matching(rule("r", op("tf.Identity", x), x, where=[py]), ops) == [ops[13]]
    assert str(seen[0]) == "tensor<?xi32>"


def test_constant_checks() -> None:
    ops = _ops()
    consts = rule("r", op("tf.Mul", c, x), x, where=[is_constant(c)])
    assert _matching(consts, ops) == [ops[5], ops[6]]
    assert _matching(rule("r", op("tf.Mul", c, x), x, where=[is_splat(c, 2)]), ops) == []
    assert _matching(rule("r", op("tf.Mul", c, x), x, where=[is_constant(x)]), ops) == [ops[4]]


def test_attribute_splat_checks() -> None:
    ops = _ops()
    one = rule("r", op("tf.Const", value=var("v")).bind("k"), ref("k"), where=[attr_is_splat("v", 1)])
    assert _matching(one, ops) == [ops[0]]
    zero = rule("r", op("tf.Const", value=var("v")).bind("k"), ref("k"), where=[attr_is_splat("v", 0)])
    assert _matching(zero, ops) == []


def test_check_over_ir_values() -> None:
    ops = _ops()
    r = rule("r", op("tf.Neg", x), x, where=[has_one_use(x)])
    assert _matching(r, ops) == [ops[8]]  # %s1 also feeds test.use


def test_same_type_via_op_binding() -> None:
    ops = _ops()
    r = rule("r", op("tf.Mul", x, c).bind("m"), x, where=[same_type(x, "m")])
    assert _matching(r, ops) == [ops[4], ops[5], ops[6]]


def test_multi_result_indexing() -> None:
    ops = _ops()
    split = op("tf.Split", _, x).bind("s")
    in_order = rule("r", op("tf.ConcatV2", [split[0], ref("s", 1)], _), x)
    assert _matching(in_order, ops) == [ops[10]]
    swapped = rule("r", op("tf.ConcatV2", [split[1], ref("s", 0)], _), x)
    assert _matching(swapped, ops) == [ops[11]]


def test_variadic_groups() -> None:
    ops = _ops()
    group = rule("r", op("tf.AddN", var("xs")), op("tf.AddN", var("xs")))
    (match,) = list(Matcher(group).matches(ops[12]))
    assert len(match.env["xs"]) == 3
    fixed = rule("r", op("tf.AddN", [x, y, x]), x)
    assert _matching(fixed, ops) == [ops[12]]
    assert _matching(rule("r", op("tf.AddN", [x, y]), x), ops) == []


def test_attributes_literal_variable_and_default() -> None:
    ops = _ops()
    assert _matching(rule("r", op("tf.MatMul", x, y, transpose_a=True), x), ops) == [ops[14]]
    # An absent attribute reads as the record's default (false).
    assert _matching(rule("r", op("tf.MatMul", x, y, transpose_a=False), x), ops) == [ops[15]]
    both = rule("r", op("tf.MatMul", x, y, transpose_a=var("t")), x)
    (match,) = list(Matcher(both).matches(ops[14]))
    assert match.env["t"].value == 1


def test_multi_root_matches_share_variables() -> None:
    ops = _ops()
    r = rule("r", [op("tf.MatMul", x, y).bind("m1"), op("tf.MatMul", x, y, transpose_a=True).bind("m2")],
             [ref("m2"), None])
    matches = [m for o in ops for m in Matcher(r).matches(o)]
    assert [tuple(m.roots) for m in matches] == [(ops[15], ops[14])]  # never one op as two roots
