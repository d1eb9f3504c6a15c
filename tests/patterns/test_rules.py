"""The rule language: building rule values, declaration-time validation, rule sets."""

from __future__ import annotations

import pytest

from egraft.ir.core import attributes as A
from egraft.ir.records import constraints as C
from egraft.patterns import (AllOf, ConstOf, Either, Not, OpPat, ResultOf, Rule, RuleError, TypeOf, Var, _,
                             either, float_element, is_splat, op, pred, ref, register_rule_set, rule, rule_set,
                             rule_sets, rules_of, same_type, source_kinds, var, vars_, zero_of)

x, y, z = vars_("x y z")


def _line_of(marker: str) -> int:
    """The line of this file holding `marker` (to check recorded origins)."""
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if marker in line and "_line_of" not in line)


def test_rule_values_are_plain_data() -> None:
    r = rule("neg-neg", op("tf.Neg", op("tf.Neg", x)), x, doc="--x = x")
    assert r.roots == (OpPat("tf.Neg", (OpPat("tf.Neg", (Var("x"),)),)),)
    assert r.results == ((Var("x"),),)
    assert r.benefit == 2  # DRR's default: the number of source ops
    assert r.doc == "--x = x" and not r.is_multi_root
    again = rule("neg-neg", op("tf.Neg", op("tf.Neg", "x")), "x")
    assert again == r and hash(again) == hash(r)  # strings are variable names; origins do not count


def test_origin_is_the_declaring_line() -> None:
    r = rule("origin", op("tf.Identity", x), x)  # ORIGIN-MARK
    assert r.origin.file == __file__
    assert r.origin.line == _line_of("ORIGIN-MARK")
    assert str(r).endswith(f"test_rules.py:{r.origin.line})")


def test_attributes_bindings_and_result_indexing() -> None:
    m = op("tf.MatMul", x, y, transpose_a=False, transpose_b=var("tb")).bind("m")
    assert m.binding == "m" and m.attr("transpose_a") == A.BoolAttr(False) and m.attr("transpose_b") == Var("tb")
    split = op("tf.Split", _, x).bind("s")
    assert split[1] == ResultOf(split, 1) and ref("s", 0) == ResultOf("s", 0) and ref("s") == Var("s")
    r = rule("idx", op("tf.AddV2", split[0], ref("s", 1)), op("tf.Mul", ref("s", 0), ref("s", 1)))
    assert source_kinds(r) == {"s": "op", "x": "value"}
    assert source_kinds(rule("k", m, x)) == {"m": "op", "x": "value", "y": "value", "tb": "attr"}


def test_either_and_constraints_compose() -> None:
    r = rule("mul-one", op("tf.Mul", either(x, "c")).bind("m"), x,
             where=[is_splat("c", 1) & same_type(x, "m"), ~float_element(x) | pred("always", lambda: True)])
    assert isinstance(r.root.operands[0], Either)
    both, alt = r.where
    assert isinstance(both, AllOf) and both.name == "(c is a splat of 1 and type(x) == type(m))"
    assert isinstance(alt.checks[0], Not)
    assert both.checks[0].args == (ConstOf("c"),) and both.checks[1].args == (TypeOf("x"), TypeOf("m"))
    assert both.checks[0].kind == "splat" and both.checks[0].params == (1,)


def test_constrained_variables() -> None:
    f = var("f", C.AnyFloat)
    r = rule("c", op("arith.addf", f, f), f)
    assert r.root.operands[0].constraint is C.AnyFloat
    with pytest.raises(ValueError):
        var("not a name")


def test_multi_root_rules() -> None:
    w1, w2 = vars_("w1 w2")
    s = op("tf.Split", op("tf.Const", value=A.StringAttr("axis")),
           op("tf.MatMul", x, op("tf.ConcatV2", [w1, w2], _axis())), types=[TypeOf("m1"), TypeOf("m2")]).bind("s")
    r = rule("merge", [op("tf.MatMul", x, w1).bind("m1"), op("tf.MatMul", x, w2).bind("m2")], [s[0], s[1]])
    assert r.is_multi_root and len(r.results) == 2
    assert [o.name for o in r.result_ops()][:2] == ["tf.Split", "tf.Const"]


def _axis() -> OpPat:
    return op("tf.Const", value=A.StringAttr("axis"))


def test_context_roots_are_kept() -> None:
    r = rule("ctx", [op("tf.Neg", x).bind("n"), op("tf.Identity", x).bind("i")], [None, ref("n")])
    assert r.results[0] is None


# ------------------------------------------------------------------ validation errors


@pytest.mark.parametrize("make, message", [
    (lambda: rule("r", op("tf.Sub", x), x), "'tf.Sub' takes 2 operands, the pattern gives 1"),
    (lambda: rule("r", op("arith.addi", either(x, y), z), x), "'arith.addi' takes 2 operands, the pattern gives 3"),
    (lambda: rule("r", op("tf.AddN", [x, y], z), x), "'tf.AddN' takes 1 operand groups, the pattern gives 2"),
    (lambda: rule("r", op("tf_executor.Nope", x), x), "unknown op 'tf_executor.Nope' (dialect 'tf_executor' is closed)"),
    (lambda: rule("r", op("nodialect.Foo", x), x), "unknown dialect in op name 'nodialect.Foo'"),
    (lambda: rule("r", op("Sub", x, x), x), "op name 'Sub' needs a dialect prefix"),
    (lambda: rule("r", op("tf.Sub", x, x), y), "'y' is used in the result but not bound in the source"),
    (lambda: rule("r", op("tf.Sub", x, x), _), "the wildcard cannot be used in the result"),
    (lambda: rule("r", op("tf.Sub", x, x), op("tf.Neg", "q")), "'q' is used in the operands of 'tf.Neg'"),
    (lambda: rule("r", op("tf.Sub", x, x), either(x, x)), "either() is only for source patterns"),
    (lambda: rule("r", op("tf.Cast", x, Truncate=x), x), "'x' is bound both as value and as attr"),
    (lambda: rule("r", op("tf.Sub", x, x), x, where=[same_type(x, "w")]), "'w' is used in check"),
    (lambda: rule("r", [op("tf.Neg", x), op("tf.Neg", y)], [x, y]), "root #1 ('tf.Neg') shares no variable"),
    (lambda: rule("r", [op("tf.Neg", x), op("tf.Abs", x)], [x]), "a rule with 2 roots needs a list of 2 results"),
    (lambda: rule("r", op("tf.Sub", x, x), (x, x)), "root 'tf.Sub' has 1 results, the rule gives 2"),
    (lambda: rule("r", op("tf.Sub", x, x), op("tf.Neg", x, attrs={"a": var("x")})), "which is not an attribute"),
    (lambda: rule("r", op("tf.Sub", x, x), op("tf.Neg", x, copy_attrs=x)), "which is not an op binding"),
    (lambda: rule("r", op("tf.Sub", x, x), zero_of(x)), "cannot replace a value; wrap it in an op"),
    (lambda: rule("r", op("tf.Sub", x, x).bind("s"), ref("x", 1)), "'x' is not an op binding"),
    (lambda: rule("r", op("tf.Sub", x, x).bind("s"), op("tf.Neg", x).bind("s")), "already bound in the source"),
    (lambda: rule("", op("tf.Sub", x, x), x), "a rule needs a name"),
])
def test_validation_errors_point_at_the_rule(make, message: str) -> None:
    with pytest.raises(RuleError) as info:
        make()
    text = str(info.value)
    assert message in text
    assert text.startswith(f"{__file__}:")  # file:line of the declaration (the lambda's line)
    assert info.value.origin is not None and info.value.origin.file == __file__


def test_unregistered_ops_of_open_dialects_are_accepted() -> None:
    made = rule("r", op("tf.AddV2", op("tf.SomeFutureOp", x, y, z), y), x)
    assert [p.name for p in made.source_ops()] == ["tf.AddV2", "tf.SomeFutureOp"]


def test_an_op_of_unknown_effects_cannot_be_erased() -> None:
    # Replacing its result by a value would drop whatever it writes (rule.py, "Effects").
    with pytest.raises(RuleError, match="may write memory"):
        rule("r", op("tf.SomeFutureOp", x, y, z), x)


def test_python_attribute_values_need_types() -> None:
    with pytest.raises(TypeError, match="needs a type"):
        op("tf.Foo", x, n=3)


# ------------------------------------------------------------------ rule sets


def test_rule_sets_register_and_combine() -> None:
    a = rule("a", op("tf.Neg", op("tf.Neg", x)), x)
    b = rule("b", op("tf.Identity", x), x)
    register_rule_set("test-set-1", [a, b], "two rules")
    register_rule_set("test-set-2", [b])
    assert rule_set("test-set-1").rules == (a, b) and rule_set("test-set-1").doc == "two rules"
    assert {"test-set-1", "test-set-2", "tf-canonical", "arith-canonical"} <= set(rule_sets())
    assert [r.name for r in rules_of(["test-set-1", "test-set-2"])] == ["a", "b"]
    with pytest.raises(ValueError, match="already registered"):
        register_rule_set("test-set-1", [a])
    register_rule_set("test-set-1", [a], replace=True)
    with pytest.raises(RuleError, match="duplicate rule name"):
        register_rule_set("test-set-3", [a, a])
    with pytest.raises(KeyError, match="unknown rule set 'nope'"):
        rule_set("nope")


def test_builtin_sets_load_and_validate() -> None:
    for name in ("arith-canonical", "tf-canonical", "tf-multi"):
        rules = rule_set(name).rules
        assert rules and all(isinstance(r, Rule) and r.origin.line > 0 for r in rules)
    assert rule_set("tf-multi").rules[0].is_multi_root
