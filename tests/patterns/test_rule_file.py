"""Rule files (patterns/rule_file.py): what a line means, where a mistake is reported, and that
rules read from text are the rules the DSL builds (round trip over generated terms)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir.core.diagnostics import DiagnosticError
from egraft.patterns import op, rule
from egraft.patterns.rule import Native, OpPat, TypeOf, Var
from egraft.patterns.rule_file import parse_rule_file
from egraft.passes.soundness import assert_rule_sound

EXAMPLE = """\
// x * 1.0 is x, NaN and Inf included
mulf-one: arith.mulf(x, c) => x if splat(c, 1.0)

addf-comm: arith.addf(x, y) <=> arith.addf(y, x)
divf-one: arith.divf(x, x) => arith.constant {value = one_of(x)}
[tf-mine]
// two lines of doc
// for one rule
mul-two: tf.Mul(x, c) => tf.AddV2(x, x)
    if splat(c, 2) and same_type(x, c), not constant(x)
trunc: arith.trunci(arith.extsi(x) as e) as r => x if same_type(x, r)  // trailing comment
fm: arith.addf(x, y) {fastmath = f} => arith.addf(y, x) {fastmath = f}
"""


def parse(text: str) -> dict:
    return parse_rule_file(text, "my_rules.rules")


def test_sets_names_docs_and_origins() -> None:
    sets = parse(EXAMPLE)
    assert list(sets) == ["my_rules", "tf-mine"]
    assert [r.name for r in sets["my_rules"]] == ["mulf-one", "addf-comm", "addf-comm-reverse", "divf-one"]
    first = sets["my_rules"][0]
    assert first.doc == "x * 1.0 is x, NaN and Inf included"
    assert (first.origin.file, first.origin.line) == ("my_rules.rules", 2)
    assert sets["my_rules"][1].doc == ""  # a blank line ends a doc
    mul_two = sets["tf-mine"][0]
    assert mul_two.doc == "two lines of doc for one rule" and mul_two.origin.line == 9
    assert [c.name for c in mul_two.where] == ["(c is a splat of 2 and type(x) == type(c))", "not x is a constant"]


def test_terms_are_the_dsl_values() -> None:
    sets = parse(EXAMPLE)
    x, y, c = Var("x"), Var("y"), Var("c")
    by_name = {r.name: r for rules in sets.values() for r in rules}
    assert by_name["addf-comm"].roots == (op("arith.addf", x, y),)
    assert by_name["addf-comm-reverse"].results == ((op("arith.addf", x, y),),)
    constant = by_name["divf-one"].results[0][0]
    assert isinstance(constant, OpPat) and isinstance(constant.attr("value"), Native)
    assert constant.attr("value").args == (TypeOf("x"),)
    trunc = by_name["trunc"].roots[0]
    assert trunc.binding == "r" and trunc.operands[0].binding == "e"
    assert by_name["fm"].roots[0].attr("fastmath") == Var("f")
    assert by_name["mulf-one"].where[0].kind == "splat"  # bit-exact float splat
    assert by_name["mulf-one"].where[0].fn.__qualname__.startswith("float_splat_bits")


@pytest.mark.parametrize("text, line, col, fragment", [
    ("r: arith.mulf(x, c) => y", 1, 24, "'y' is not bound"),
    ("r: arith.mulf(x) => x", 1, 4, "'arith.mulf' takes 2 operands"),
    ("r: arith.nope(x) => x", 1, 4, "unknown op 'arith.nope'"),
    ("r: mulf(x, c) => x", 1, 4, "dialect prefix"),
    ("r arith.mulf(x, c) => x", 1, 3, "expected ':'"),
    ("r: arith.mulf(x, c) -> x", 1, 21, "expected '=>' or '<=>'"),
    ("r: arith.mulf(x, c) => x if splat(c)", 1, 36, "'splat' takes 2 arguments"),
    ("r: arith.mulf(x, c) => x if wat(c)", 1, 29, "unknown check 'wat'"),
    ("r: arith.mulf(x, c) => x if splat(c, one)", 1, 38, "expected a number"),
    ("r: arith.mulf(x, c) => x trailing", 1, 26, "expected 'if'"),
    ("r: x => x", 1, 4, "left-hand side must be an op"),
    ("r: arith.mulf(x, _) => _", 1, 24, "belongs in a pattern"),
    ("r: arith.mulf(x, c) => arith.constant {value = wat(x)}", 1, 48, "not a known attribute function"),
    ("r: arith.mulf(x, c) => arith.constant {value = dense<1.0 : tensor<2xf32>}", 1, 74, "expected ':' and type"),
    ("// fine\n\n  indented: arith.negf(x) => x", 3, 3, "indented line"),
    ("[bad set", 1, 1, "set name in brackets"),
    ("a: arith.negf(arith.negf(x)) => x\na: arith.negf(arith.negf(x)) => x", 2, 1, "already in set"),
    ("ok: arith.negf(arith.negf(x)) => x\nlong: arith.addf(x,\n      y) => z", 3, 13, "'z' is not bound"),
])
def test_mistakes_are_located(text: str, line: int, col: int, fragment: str) -> None:
    with pytest.raises(DiagnosticError) as caught:
        parse(text)
    rendered = caught.value.render()
    assert rendered.startswith(f"my_rules.rules:{line}:{col}: error: "), rendered
    assert fragment in rendered.splitlines()[0]


def test_reverse_rule_needs_every_variable_on_both_sides() -> None:
    with pytest.raises(DiagnosticError, match="r-reverse.: .c. is used in the operands of .arith.mulf. but not bound"):
        parse("r: arith.mulf(x, c) <=> arith.negf(x)")


# ------------------------------------------------------------------ generated rules

BINARY = ("arith.addf", "arith.mulf", "arith.subf", "arith.addi", "arith.muli")
UNARY = ("arith.negf",)
NAMES = ("x", "y", "z", "w")


@st.composite
def terms(draw, depth: int = 3) -> tuple[str, OpPat | Var]:
    """(text, DSL value) of a random term over a few arith ops and variables."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from(NAMES))
        return name, Var(name)
    if draw(st.booleans()):
        name = draw(st.sampled_from(UNARY))
        text, value = draw(terms(depth - 1))
        return f"{name}({text})", op(name, value)
    name = draw(st.sampled_from(BINARY))
    (a, va), (b, vb) = draw(terms(depth - 1)), draw(terms(depth - 1))
    space = draw(st.sampled_from(("", " ", "  ")))
    return f"{name}({a},{space}{b})", op(name, va, vb)


@settings(max_examples=150, deadline=None)
@given(terms(), st.data())
def test_generated_rules_read_as_the_dsl_builds_them(lhs, data) -> None:
    text, value = lhs
    if not isinstance(value, OpPat):
        return
    bound = sorted({n for n in NAMES if f"({n}" in text or f" {n}" in text or f",{n}" in text})
    result = data.draw(st.sampled_from(bound))
    made = parse(f"gen: {text} => {result}")["my_rules"][0]
    assert made == rule("gen", value, Var(result), origin=made.origin)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(EXAMPLE) - 1), st.sampled_from(("", "(", ")", ",", "=>", "{", "}", ":", "if ", "[", "\n ",
                                                          "#", "\"", "_", "1.0", "as ")),
       st.integers(0, 3))
def test_damaged_files_give_a_located_error_or_parse(at: int, insert: str, cut: int) -> None:
    """Any edit of a good file either still parses or is a located `DiagnosticError`."""
    text = EXAMPLE[:at] + insert + EXAMPLE[at + cut:]
    try:
        parse(text)
    except DiagnosticError as e:
        assert e.render().startswith("my_rules.rules:"), e.render()


# ------------------------------------------------------------------ soundness of rules read from text

@pytest.mark.parametrize("text", [
    "mulf-one: arith.mulf(x, c) => x if splat(c, 1.0)",
    "neg-neg: tf.Neg(tf.Neg(x)) => x",
    "addf-negzero: arith.addf(x, c) => x if splat(c, -0.0)",
    "select-same: arith.select(k, x, x) => x",
])
def test_rules_read_from_text_are_sound(text: str) -> None:
    """(No x+y -> y+x here: `assert_rule_sound` applies a rule until it stops, and that one
    never does; `--check-rules` applies a rule once, tests/soundness/test_counterexample.py.)"""
    assert_rule_sound(parse(text)["my_rules"][0], examples=40)


def test_bare_names_in_attributes_are_variables_unless_mlir_words() -> None:
    from egraft.ir.core import attributes as A
    from egraft.ir.core import types as T

    rules = parse("a: arith.addf(x, y) {fastmath = f1} => arith.addf(y, x) {fastmath = f1}\n"
                  "b: tf.Cast(x) {Truncate = false} => x\n"
                  "c: tf.Cast(x) {DstT = f32} => x\n")["my_rules"]
    assert rules[0].roots[0].attr("fastmath") == Var("f1")
    assert rules[1].roots[0].attr("Truncate") == A.BoolAttr(False)
    assert rules[2].roots[0].attr("DstT") == A.TypeAttr(T.f32)


def test_tags_after_the_name() -> None:
    rules = parse("assoc [approx, expand]: arith.addf(arith.addf(x, y), z) => arith.addf(x, arith.addf(y, z))\n"
                  "plain: arith.negf(arith.negf(x)) => x\n")["my_rules"]
    assert rules[0].tags == frozenset({"approx", "expand"}) and rules[1].tags == frozenset()
    with pytest.raises(DiagnosticError, match=r"my_rules.rules:1:6: error: expected a tag"):
        parse("bad [: arith.negf(x) => x")
