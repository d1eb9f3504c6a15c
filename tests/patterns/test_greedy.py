"""The greedy driver: rewriting, folding, dead ops, limits, the report, locations, multi-root."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import Operation, parse, print_ir, verify
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.location import FusedLoc, NameLoc
from egraft.patterns import (RuleError, is_splat, native, op, ref, rule, rule_set, vars_, zero_of)
from egraft.rewrite.greedy.driver import GreedyConfig, apply_rules_greedily
from egraft.rewrite.greedy.fold import FOLDERS, register_folder

x, y, c = vars_("x y c")

TOY = [
    rule("subi-self", op("arith.subi", x, x), op("arith.constant", value=zero_of(x))),
    rule("muli-one", op("arith.muli", x, c), x, where=[is_splat(c, 1)], commutative=True),
    rule("tf-sub-self", op("tf.Sub", x, x), op("tf.ZerosLike", x)),
    rule("tf-mul-one", op("tf.Mul", x, c).bind("m"), x, where=[is_splat(c, 1)], commutative=True),
]


def _body(module: Operation) -> list[Operation]:
    func = next(o for o in module.walk() if o.name == "func.func")
    return list(func.regions[0].blocks[0])


def test_toy_rules_on_arith_and_tf() -> None:
    m = parse("""
    func.func @f(%a: i32, %t: tensor<2xf32>) -> (i32, tensor<2xf32>) {
      %c1 = arith.constant 1 : i32
      %0 = arith.subi %a, %a : i32
      %1 = arith.muli %c1, %0 : i32
      %one = "tf.Const"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
      %2 = "tf.Sub"(%t, %t) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %3 = "tf.Mul"(%2, %one) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      return %1, %3 : i32, tensor<2xf32>
    }""")
    report = apply_rules_greedily(m, TOY)
    verify(m)
    assert [o.name for o in _body(m)] == ["arith.constant", "tf.ZerosLike", "func.return"]
    assert "arith.constant 0 : i32" in print_ir(m)
    assert report.converged and report.stop == "converged"
    assert report.rewrites == {"subi-self": 1, "muli-one": 1, "tf-sub-self": 1, "tf-mul-one": 1}
    assert report.erased == 2  # the two constants of 1
    assert report.iterations == 2  # one scan that changes, one that confirms
    assert "converged (converged) after 2 iteration(s): 4 rewrite(s)" in report.summary()


def test_built_ops_get_the_fused_location_of_the_matched_ops() -> None:
    m = parse("""
    func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = "tf.Sqrt"(%b) : (tensor<2xf32>) -> tensor<2xf32> loc("sqrt")
      %1 = "tf.RealDiv"(%a, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("div")
      return %1 : tensor<2xf32>
    }""")
    apply_rules_greedily(m, [r for r in rule_set("tf-canonical").rules if r.name == "realdiv-sqrt"])
    rsqrt, mul = _body(m)[:2]
    assert (rsqrt.name, mul.name) == ("tf.Rsqrt", "tf.Mul")
    assert mul.loc == FusedLoc([NameLoc("div"), NameLoc("sqrt")]) and rsqrt.loc == mul.loc


def test_benefit_orders_rules_then_declaration() -> None:
    src = "func.func @f(%a: i32) -> i32 {\n %0 = arith.subi %a, %a : i32\n return %0 : i32\n}"
    low = rule("low", op("arith.subi", x, x), op("arith.constant", value=zero_of(x)), benefit=1)
    high = rule("high", op("arith.subi", x, y), op("arith.addi", x, y), benefit=5)
    m = parse(src)
    assert apply_rules_greedily(m, [low, high], max_iterations=1).rewrites == {"high": 1}
    tie = rule("tie", op("arith.subi", x, y), op("arith.addi", x, y), benefit=1)
    m = parse(src)
    assert apply_rules_greedily(m, [low, tie], max_iterations=1).rewrites == {"low": 1}


def test_iteration_limit_and_rewrite_limit() -> None:
    src = "func.func @f(%a: i32, %b: i32) -> i32 {\n %0 = arith.addi %a, %b : i32\n return %0 : i32\n}"
    swap = rule("swap", op("arith.addi", x, y), op("arith.addi", y, x))
    report = apply_rules_greedily(parse(src), [swap], max_num_rewrites=25)
    assert (report.converged, report.stop, report.rewrites["swap"]) == (False, "max-num-rewrites", 25)
    once = rule("once", op("arith.subi", x, x), op("arith.constant", value=zero_of(x)))
    report = apply_rules_greedily(parse(src.replace("addi", "subi").replace("%b :", "%a :")), [once],
                                  GreedyConfig(max_iterations=1))
    assert (report.converged, report.stop, report.iterations) == (False, "max-iterations", 1)


def test_a_native_that_declines_leaves_the_ir_untouched() -> None:
    src = "func.func @f(%a: i32) -> i32 {\n %0 = arith.subi %a, %a : i32\n return %0 : i32\n}"
    decline = rule("decline", op("arith.subi", x, x),
                   op("arith.addi", x, op("arith.constant", value=native("never", lambda t: None, "x"))))
    m = parse(src)
    before = print_ir(m)
    report = apply_rules_greedily(m, [decline])
    assert report.converged and not report.rewrites and print_ir(m) == before
    sub = next(o for o in m.walk() if o.name == "arith.subi")
    assert len(sub.operands[0].uses) == 2  # nothing half-built still reads %a


def test_build_natives_copy_attrs_and_explicit_types() -> None:
    m = parse("""
    func.func @f(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = "tf.MatMul"(%a, %b) <{transpose_a = true}> {device = "cpu"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    }""")

    def neg(builder, value):
        return builder.create("tf.Neg", [value], [value.type]).results[0]

    r = rule("mm", op("tf.MatMul", x, y).bind("m"),
             op("tf.MatMul", native("neg", neg, x, kind="build"), y, copy_attrs="m",
                types=[T.RankedTensorType((2, 2), T.f32)]))
    report = apply_rules_greedily(m, [r], max_num_rewrites=1)  # the new MatMul matches again
    neg_op, mm = _body(m)[:2]
    assert report.rewrites == {"mm": 1} and neg_op.name == "tf.Neg"
    assert mm.operands[0] is neg_op.results[0]
    assert mm.attr("transpose_a") == A.BoolAttr(True) and mm.attr("device") == A.StringAttr("cpu")


def test_uninferable_result_types_are_an_error_naming_the_rule() -> None:
    m = parse("func.func @f(%a: i32) -> i32 {\n %0 = arith.subi %a, %a : i32\n return %0 : i32\n}")
    r = rule("types", op("arith.subi", x, x), op("arith.addi", x, op("tf.Unknown")))
    with pytest.raises(RuleError, match=r"rule 'types': cannot infer the result types of 'tf.Unknown'"):
        apply_rules_greedily(m, [r])


def test_folders_and_materializers() -> None:
    def fold_max(op, consts):
        a, b = consts
        if a is None or b is None:
            return None
        return [A.IntegerAttr(max(a.value, b.value), op.results[0].type)]

    register_folder("arith.maxsi", fold_max)
    try:
        m = parse("""
        func.func @f() -> i32 {
          %a = arith.constant 3 : i32
          %b = arith.constant 7 : i32
          %0 = arith.maxsi %a, %b : i32
          return %0 : i32
        }""")
        report = apply_rules_greedily(m, [])
        assert report.folds == 1 and report.erased == 2
        assert [o.name for o in _body(m)] == ["arith.constant", "func.return"]
        assert "arith.constant 7 : i32" in print_ir(m)
        with pytest.raises(ValueError, match="already registered"):
            register_folder("arith.maxsi", fold_max)
    finally:
        FOLDERS.pop("arith.maxsi")


def test_dead_ops_are_erased_only_when_effect_free() -> None:
    m = parse("""
    func.func @f(%a: i32) -> i32 {
      %0 = arith.addi %a, %a : i32
      %1 = arith.muli %0, %0 : i32
      "test.effect"(%a) : (i32) -> ()
      %2 = "test.unknown"(%a) : (i32) -> i32
      return %a : i32
    }""", allow_unregistered=True)
    report = apply_rules_greedily(m, [])
    assert report.erased == 2
    assert [o.name for o in _body(m)] == ["test.effect", "test.unknown", "func.return"]
    assert apply_rules_greedily(m, [], erase_dead=False).erased == 0


def test_multi_root_rule_rewrites_and_checks_dominance() -> None:
    text = """
    func.func @f(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
      %0 = "tf.MatMul"(%x, %w1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %1 = "tf.MatMul"(%x, %w2) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
    }"""
    m = parse(text)
    report = apply_rules_greedily(m, rule_set("tf-multi").rules)
    verify(m)
    assert report.rewrites == {"matmul-shared-lhs": 1} and report.converged
    assert [o.name for o in _body(m)] == ["tf.Const", "tf.ConcatV2", "tf.MatMul", "tf.Split", "func.return"]
    assert "tensor<8x32xf32>" in print_ir(m) and "tensor<4x32xf32>" in print_ir(m)
    # The second rhs computed between the two MatMuls does not dominate the first: no rewrite.
    late = parse("""
    func.func @f(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
      %0 = "tf.MatMul"(%x, %w1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %w2 = "tf.Neg"(%w1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
      %1 = "tf.MatMul"(%x, %w2) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
    }""")
    assert not apply_rules_greedily(late, rule_set("tf-multi").rules).rewrites


def test_context_roots_stay() -> None:
    m = parse("""
    func.func @f(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %0 = "tf.Neg"(%a) : (tensor<2xf32>) -> tensor<2xf32>
      %1 = "tf.Identity"(%a) : (tensor<2xf32>) -> tensor<2xf32>
      return %0, %1 : tensor<2xf32>, tensor<2xf32>
    }""")
    r = rule("ctx", [op("tf.Identity", x).bind("i"), op("tf.Neg", x).bind("n")], [ref("x"), None])
    assert apply_rules_greedily(m, [r]).rewrites == {"ctx": 1}
    assert [o.name for o in _body(m)] == ["tf.Neg", "func.return"]


# ------------------------------------------------------------------ semantics preserved (hypothesis)

_MASK = (1 << 32) - 1
_EVAL = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
         "arith.xori": lambda a, b: a ^ b, "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b}


def _program(draw_ops: list[tuple[str, int, int]], consts: list[int]) -> str:
    lines = ["func.func @f(%a: i32, %b: i32) -> i32 {"]
    names = ["%a", "%b"]
    for i, k in enumerate(consts):
        lines.append(f"  %k{i} = arith.constant {k} : i32")
        names.append(f"%k{i}")
    for i, (name, p, q) in enumerate(draw_ops):
        lines.append(f"  %v{i} = {name} {names[p % len(names)]}, {names[q % len(names)]} : i32")
        names.append(f"%v{i}")
    lines += [f"  return {names[-1]} : i32", "}"]
    return "\n".join(lines)


def _run(module: Operation, a: int, b: int) -> int:
    func = next(o for o in module.walk() if o.name == "func.func")
    block = func.regions[0].blocks[0]
    env = {block.args[0]: a, block.args[1]: b}
    for o in block:
        if o.name == "arith.constant":
            env[o.results[0]] = o.attr("value").value & _MASK
        elif o.name == "func.return":
            return env[o.operands[0]]
        else:
            env[o.results[0]] = _EVAL[o.name](env[o.operands[0]], env[o.operands[1]]) & _MASK
    raise AssertionError("no return")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(_EVAL)), st.integers(0, 40), st.integers(0, 40)), min_size=1,
                max_size=12),
       st.lists(st.sampled_from([0, 1, 2, 7, -1]), max_size=3),
       st.integers(0, _MASK), st.integers(0, _MASK))
def test_arith_canonical_preserves_semantics(prog, consts, a, b) -> None:
    text = _program(prog, consts)
    want = _run(parse(text), a, b)
    m = parse(text)
    report = apply_rules_greedily(m, rule_set("arith-canonical").rules)
    verify(m)
    assert report.converged
    assert _run(m, a, b) == want


@pytest.mark.parametrize("ops", [1, 40])
def test_a_rule_matching_its_own_result_ends_unconverged(ops: int) -> None:
    """`addf(x, y) -> addf(y, x)` re-matches what it builds: MLIR's driver never empties its
    worklist; egraft's ends each scan after its rewrite budget and reports no convergence."""
    x, y = vars_("x y")
    swap = rule("addf-swap", op("arith.addf", x, y), op("arith.addf", y, x))
    body = "\n".join(f"  %{i} = arith.addf %a, %b : f32" for i in range(ops))
    module = parse(f"func.func @f(%a: f32, %b: f32) -> f32 {{\n{body}\n  return %0 : f32\n}}")
    report = apply_rules_greedily(module, [swap], GreedyConfig(max_iterations=3))
    assert not report.converged and report.stop == "max-iterations"
    assert report.rewrites["addf-swap"] == 3 * max(1000, 20 * (ops + 2))  # + func.func, return
    verify(module)
