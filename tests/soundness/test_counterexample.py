"""`check_rule` (passes/soundness/counterexample.py): verdicts on rules known right and
known wrong, and counterexamples that really show the rule wrong when run again."""

from __future__ import annotations

import numpy as np
import pytest

from egraft.ir.core import types as T
from egraft.ir.semantics.compare import UnsoundRewrite, check_agreement
from egraft.ir.syntax.parser import parse
from egraft.passes.soundness.counterexample import (NEVER_APPLIED, NOT_CHECKED, SOUND, UNSOUND, check_rule,
                                                   value_text)
from egraft.patterns.rule_file import parse_rule_file

RULES = """\
mulf-zero: arith.mulf(x, c) => c if splat(c, 0.0)
divf-self: arith.divf(x, x) => arith.constant {value = one_of(x)}
addf-poszero: arith.addf(x, c) => x if splat(c, 0.0)
subf-self: arith.subf(x, x) => arith.constant {value = zero_of(x)}
addi-wrong-assoc: arith.addi(arith.addi(x, y), z) => arith.addi(x, arith.muli(y, z))
tf-add-comm: tf.AddV2(x, y) => tf.AddV2(y, x)
addi-comm: arith.addi(x, y) => arith.addi(y, x)
negf-negf: arith.negf(arith.negf(x)) => x
addf-negzero: arith.addf(x, c) => x if splat(c, -0.0)
never: arith.mulf(x, c) => x if splat(c, 1.0), splat(c, 2.0)
no-semantics: tf.MaxPool(x) => x
mulf-zero-fast: arith.mulf(x, c) {fastmath = #arith.fastmath<fast>} => c if splat(c, 0.0)
mulf-zero-finite: arith.mulf(x, c) {fastmath = #arith.fastmath<nnan,ninf>} => c if splat(c, 0.0)
"""
RULE = {r.name: r for r in parse_rule_file(RULES, "t.rules")["t"]}


@pytest.mark.parametrize("name", ["mulf-zero", "divf-self", "addf-poszero", "subf-self", "addi-wrong-assoc"])
def test_wrong_rules_get_a_counterexample_that_shows_it(name: str) -> None:
    verdict = check_rule(RULE[name], examples=60)
    assert verdict.status == UNSOUND, verdict
    found = verdict.counterexample
    assert found is not None and found.before != found.after
    before = parse(f"module {{\n{found.function}\n}}")
    after = parse(f"module {{\n{found.rewritten}\n}}")
    with pytest.raises(UnsoundRewrite):
        check_agreement(before, after, list(found.values), True, None)
    assert all(line.startswith("%arg") and " : " in line for line in found.inputs)


def test_float_traps_are_nan_inf_or_signed_zero() -> None:
    """x * 0.0 -> 0.0 and x / x -> 1.0 fail on a NaN, an infinity, or a zero (the issue's examples)."""
    for name in ("mulf-zero", "divf-self"):
        found = check_rule(RULE[name], examples=60).counterexample
        assert found is not None
        assert any(word in " ".join(found.inputs + found.before) for word in ("nan", "inf", "0.0")), found


@pytest.mark.parametrize("name", ["tf-add-comm", "addi-comm", "negf-negf", "addf-negzero"])
def test_right_rules_are_sound(name: str) -> None:
    verdict = check_rule(RULE[name], examples=40)
    assert verdict.status == SOUND and verdict.programs > 0, verdict


def test_rules_that_never_apply_and_ops_without_semantics_are_reported() -> None:
    assert check_rule(RULE["never"], examples=20).status == NEVER_APPLIED
    unknown = check_rule(RULE["no-semantics"], examples=20)
    assert unknown.status == NOT_CHECKED and "tf.MaxPool" in unknown.reason


def test_values_print_as_mlir_constants() -> None:
    assert value_text(np.float32("inf"), T.f32) == "inf : f32"
    assert value_text(np.array([1.0, np.nan], np.float32), T.RankedTensorType((2,), T.f32)) == \
        "dense<[1.0, nan]> : tensor<2xf32>"
    assert value_text(np.array(True), T.i1) == "true : i1"


def test_fast_math_flags_are_what_the_rule_claims() -> None:
    """x * 0.0 -> 0.0 holds under `fast` (NaN and Inf are poison, the sign of a zero is free);
    with only nnan and ninf the sign of zero still counts: -0.0 * 0.0 is -0.0."""
    assert check_rule(RULE["mulf-zero-fast"], examples=40).status == SOUND
    finite = check_rule(RULE["mulf-zero-finite"], examples=60)
    assert finite.status == UNSOUND and finite.counterexample is not None
    assert "-0.0" in " ".join(finite.counterexample.inputs + finite.counterexample.before)
