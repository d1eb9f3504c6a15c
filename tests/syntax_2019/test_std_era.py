"""Late-2019 MLIR syntax (issue #14 §5): read it, print today's, keep today's as it was."""

import io
import re
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import DiagnosticError, parse, print_ir, verify
from egraft.ir.core import attributes as A
from egraft.ir.syntax.era import is_std_era, spell_2019
from egraft.passes.cli.main import main as egraft_opt


def roundtrip(text: str, **kwargs) -> str:
    top = parse(textwrap.dedent(text), **kwargs)
    verify(top)
    out = print_ir(top)
    again = parse(out, allow_unregistered=True)  # today's syntax: unknown ops need the flag
    verify(again)
    assert print_ir(again) == out
    return out


def run_opt(text: str, *flags: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = egraft_opt([*flags, "-"], stdin=lambda: textwrap.dedent(text).encode(), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------ functions


def test_unnamed_arguments_with_an_entry_block_print_as_named_arguments():
    out = roundtrip("""
        func @f(f32, i32) -> f32 {
        ^bb0(%a: f32, %b: i32):
          %s = addf %a, %a : f32
          return %s : f32
        }
    """)
    assert "func.func @f(%arg0: f32, %arg1: i32) -> f32 {" in out
    assert "arith.addf %arg0, %arg0 : f32" in out
    assert "^bb0" not in out


def test_entry_block_arguments_must_match_the_signature():
    with pytest.raises(DiagnosticError, match=r"entry block must have 2 arguments to match function signature"):
        verify(parse("func @f(f32, i32) {\n^bb0(%a: f32):\n  return\n}"))
    with pytest.raises(DiagnosticError, match=r"type of entry block argument #0\(i32\) must match"):
        verify(parse("func @f(f32) {\n^bb0(%a: i32):\n  return\n}"))


def test_a_function_without_arguments_may_label_its_entry_block():
    out = roundtrip("func @f() {\n^bb:\n  %c = constant 1 : i32\n  return\n}")
    assert "func.func @f() {" in out and "arith.constant 1 : i32" in out


def test_named_arguments_still_refuse_an_entry_label():
    with pytest.raises(DiagnosticError, match="invalid block name in region with named arguments"):
        parse("func.func @f(%a: f32) {\n^bb0(%b: f32):\n  func.return\n}")


def test_declarations_and_multi_block_bodies():
    out = roundtrip("""
        func @decl(f32) -> f32
        func @g(i1, f32) -> f32 {
        ^entry(%c: i1, %x: f32):
          cond_br %c, ^bb1, ^bb2(%x : f32)
        ^bb1:
          br ^bb2(%x : f32)
        ^bb2(%y: f32):
          return %y : f32
        }
    """)
    assert "func.func @decl(f32) -> f32" in out
    assert "cf.cond_br %arg0, ^bb1, ^bb2(%arg1 : f32)" in out


# ------------------------------------------------------------------ which text is 2019's


@pytest.mark.parametrize("text, era", [
    ("func @f() {\n  return\n}", True),
    ("  func @f()", True),
    ("#map0 = (d0) -> (d0)\n", True),
    ("#set0 = (i, j)[N] : (i >= 0)\n", True),
    ("func.func @f() {\n  func.return\n}", False),
    ("#map = affine_map<(d0) -> (d0)>\n", False),
    ('"foo.func @x"() : () -> ()', False),
    ("module {\n  func.func @f()\n}", False),
])
def test_era_detection(text, era):
    assert is_std_era(text) is era


def test_unregistered_ops_need_no_flag_in_2019_text_only():
    old = 'func @f() {\n  "foo.bar"() : () -> ()\n  "baz"() : () -> ()\n  return\n}'
    verify(parse(old))
    new = 'func.func @f() {\n  "foo.bar"() : () -> ()\n  func.return\n}'
    with pytest.raises(DiagnosticError, match="unregistered dialect"):
        parse(new)
    verify(parse(new, allow_unregistered=True))


def test_2019_std_dialect_stays_closed():
    with pytest.raises(DiagnosticError, match=r"unregistered operation 'std.foo_bar_op' found in dialect \('std'\)"):
        parse('func @f() {\n  %0 = "std.foo_bar_op"() : () -> index\n  return\n}')


# ------------------------------------------------------------------ affine maps and sets


def test_bare_maps_with_named_dimensions():
    top = parse("#map0 = (i, j)[N] -> (i + 1, 4*j + N)\nfunc @f(memref<2x4xi8, #map0>)")
    ftype = next(iter(top.regions[0].ops())).attr("function_type").value
    layout = ftype.inputs[0].layout
    assert str(layout) == "affine_map<(d0, d1)[s0] -> (d0 + 1, d1 * 4 + s0)>"


def test_named_dimension_maps_are_read_only_in_2019_text():
    with pytest.raises(DiagnosticError):
        parse('func.func @f() attributes {m = (i) -> (i)}')
    top = parse('func @f() attributes {m = (i) -> (i), t = (i32) -> i32}')
    f = next(iter(top.regions[0].ops()))
    assert isinstance(f.attr("m"), A.AffineMapAttr)
    assert isinstance(f.attr("t"), A.TypeAttr)  # a builtin type's name: still a function type


def test_bare_affine_ops_and_sets():
    out = roundtrip("""
        func @f(%N: index) {
          affine.for %i = 0 to 10 {
            %t = affine.apply (d0) -> (d0 + 1)(%i)
            affine.if (d0, d1)[s0] : (d1 - d0 >= 0, s0 - d0 - 1 >= 0)(%i, %t)[%N] {
              "foo"() : () -> ()
            }
          }
          return
        }
    """)
    assert "#map = affine_map<(d0) -> (d0 + 1)>" in out and "affine.apply #map(%arg1)" in out
    assert "#set = affine_set<(d0, d1)[s0] : (d1 - d0 >= 0, -d0 + s0 - 1 >= 0)>" in out
    assert "affine.if #set(%arg1, %0)[%arg0]" in out


_NAMES = ["i", "j", "k", "x", "row", "col"]


@st.composite
def _named_map(draw):
    nd = draw(st.integers(1, 3))
    names = _NAMES[:nd]
    sym = draw(st.booleans())
    atoms = names + (["N"] if sym else [])

    def term():
        c = draw(st.integers(-5, 5))
        a = draw(st.sampled_from(atoms))
        op = draw(st.sampled_from(["*", "floordiv", "mod", "+"]))
        if op == "*":
            return f"{c}*{a}"
        if op == "+":
            return f"{a} + {c}"
        return f"{a} {op} {abs(c) + 1}"

    results = [term() for _ in range(draw(st.integers(1, 3)))]
    return names, sym, results


@settings(max_examples=60, deadline=None)
@given(_named_map())
def test_named_maps_mean_what_dN_maps_mean(case):
    """Renaming 2019's dimension names to d0.. and wrapping the map in
    `affine_map<>` gives the same (uniqued) map."""
    names, sym, results = case
    syms = "[N]" if sym else ""
    old = f"({', '.join(names)}){syms} -> ({', '.join(results)})"
    new = old
    for k, n in enumerate(names):
        new = new.replace(f"({n}", f"(d{k}").replace(f" {n}", f" d{k}").replace(f"*{n}", f"*d{k}")
    new = new.replace("[N]", "[s0]").replace(" N", " s0").replace("*N", "*s0").replace("(N", "(s0")
    a = parse(f"#m = {old}\nfunc @f() attributes {{m = #m}}")
    b = parse(f"func.func @f() attributes {{m = affine_map<{new}>}}")
    fa, fb = (next(iter(t.regions[0].ops())) for t in (a, b))
    assert fa.attr("m") is fb.attr("m")


# ------------------------------------------------------------------ op spellings


def test_std_spellings_map_to_todays_ops():
    out = roundtrip("""
        func @f(%m: memref<4xf32>, %i: index, %a: i32, %b: i32) -> memref<?xf32> {
          %c0 = constant 0 : index
          %v = load %m[%i] : memref<4xf32>
          store %v, %m[%c0] : memref<4xf32>
          %p = cmpi "slt", %a, %b : i32
          %s = select %p, %a, %b : i32
          %d = dim %m, 0 : memref<4xf32>
          %n = alloc(%d) : memref<?xf32>
          %c = memref_cast %m : memref<4xf32> to memref<?xf32>
          %e = sexti %s : i32 to i64
          return %c : memref<?xf32>
        }
    """)
    for today in ("arith.constant 0 : index", "memref.load", "memref.store", "arith.cmpi slt",
                  "arith.select", "memref.dim", "memref.alloc(", "memref.cast", "arith.extsi"):
        assert today in out, today


def test_2019_switchn_is_todays_underscore_switchn():
    out = roundtrip("""
        func @f(%arg0: tensor<i32>, %arg1: tensor<*xf32>) -> tensor<*xf32> {
          %fetches = tf_executor.graph {
            %1:6 = tf_executor.SwitchN %arg1, %arg0 of 5 : tensor<*xf32>
            %2:13 = tf_executor.SwitchN %arg1, %arg0 of 12 (%1#5) : tensor<*xf32>
            tf_executor.fetch %2#0 : tensor<*xf32>
          }
          return %fetches : tensor<*xf32>
        }
    """)
    assert "%outputs:5, %control = tf_executor._SwitchN %arg1, %arg0 of 5 : tensor<*xf32>" in out
    assert "%outputs_0:12, %control_1 = tf_executor._SwitchN %arg1, %arg0 of 12 (%control) : tensor<*xf32>" in out


# ------------------------------------------------------------------ diagnostics


def test_spell_2019_names_ops_as_2019_did():
    assert spell_2019("'arith.addf' op operand #0") == "'std.addf' op operand #0"
    assert spell_2019("expects parent op 'func.func', found 'func.return'") == \
        "expects parent op 'func', found 'std.return'"
    assert spell_2019("'tf_executor._SwitchN' op x 'unknown.op'") == "'tf_executor.SwitchN' op x 'unknown.op'"


def test_verify_diagnostics_matches_2019_expected_errors():
    rc, _, err = run_opt("""
        func @f(i32) {
        ^bb0(%a : i32):
          // expected-error@+1 {{'std.addf' op operand #0 must be floating-point-like}}
          %sf = addf %a, %a : i32
          return
        }
    """, "--verify-diagnostics")
    assert rc == 0, err


def test_diagnostics_about_todays_text_keep_todays_names():
    rc, _, err = run_opt("func.func @f(%a: i32) {\n  %s = arith.addf %a, %a : i32\n  func.return\n}")
    assert rc == 1 and "'arith.addf' op operand #0" in err and "std." not in err


def test_bad_2019_input_is_a_located_error():
    rc, _, err = run_opt("func @f(f32) {\n^bb0(%a: f32):\n  %x = addf %a : f32\n  return\n}")
    assert rc == 1 and err.startswith("<stdin>:3:") and "Traceback" not in err


# ------------------------------------------------------------------ smaller 2019 forms


@pytest.mark.parametrize("spaced, compact", [
    ("vector<42 x i32>", "vector<42xi32>"), ("memref<8 x f32>", "memref<8xf32>"),
    ("memref<2 x ? x f32>", "memref<2x?xf32>"), ("tensor<* x f32>", "tensor<*xf32>"),
    ("vector<4 x [4] x f32>", "vector<4x[4]xf32>"),
])
def test_blanks_around_dimension_x(spaced, compact):
    a = next(iter(parse(f"func.func private @f({spaced})").regions[0].ops()))
    b = next(iter(parse(f"func.func private @f({compact})").regions[0].ops()))
    assert a.attr("function_type") is b.attr("function_type")


@pytest.mark.parametrize("bad", ["tensor<4 4xf32>", "vector<4 x>"])
def test_blanks_do_not_make_bad_shapes_good(bad):
    with pytest.raises(DiagnosticError):
        parse(f"func.func private @f({bad})")


def test_function_constants():
    out = roundtrip("""
        func @callee(i32) -> i32
        func @f() -> ((i32) -> i32) {
          %c = constant @callee : (i32) -> i32
          %n = constant 1 : i32
          return %c : (i32) -> i32
        }
    """)
    assert "%f = constant @callee : (i32) -> i32" in out  # func.constant; `func.` elided in a function
    assert "arith.constant 1 : i32" in out
    today = parse(out)
    consts = [op.name for op in today.walk() if op.name.endswith("constant")]
    assert consts == ["func.constant", "arith.constant"]


@pytest.mark.parametrize("body, message", [
    ("%x = constant @bar : (i32) -> ()", "reference to undefined function 'bar'"),
    ("%x = constant @f : (i32) -> ()", "reference to function with mismatched type"),
])
def test_function_constant_verifier(body, message):
    with pytest.raises(DiagnosticError, match=message):
        verify(parse(f"func @f() {{\n  {body}\n  return\n}}"))


@pytest.mark.parametrize("constraint, message", [
    ("i == 1", "expected '0' after '=='"),
    ("i >= 2", "expected '0' after '>='"),
    ("i >= ", "expected '== 0' or '>= 0' at end of affine constraint"),
    ("i <= 0", "expected '== 0' or '>= 0' at end of affine constraint"),
])
def test_2019_sets_compare_with_zero(constraint, message):
    with pytest.raises(DiagnosticError, match=message):
        parse(f"#set0 = (i)[N] : ({constraint})\n")


def test_todays_sets_keep_any_right_hand_side():
    a = parse("#set0 = (i)[N] : (i - 2 >= 0)\nfunc @f() attributes {s = #set0}")
    b = parse("func.func @f() attributes {s = affine_set<(i)[N] : (i >= 2)>}")
    fa, fb = (next(iter(t.regions[0].ops())) for t in (a, b))
    assert fa.attr("s") is fb.attr("s")


def test_generic_form_operand_type_count():
    with pytest.raises(DiagnosticError, match="expected 0 operand types but had 1"):
        parse('func @f() {\n  %1 = "foo"() : (i32) -> i64\n  return\n}')


def test_type_mismatch_notes_the_prior_use():
    rc, _, err = run_opt("""
        func @f(i32, i64) {
        ^bb0(%a : i32, %b : i64): // expected-note {{prior use here}}
          %r = cmpi "eq", %a, %b : i32 // expected-error {{use of value '%b' expects different type than prior uses}}
          return
        }
    """, "--verify-diagnostics")
    assert rc == 0, err


@pytest.mark.parametrize("cast, message", [
    ("arith.extsi %a : i16 to i15", "result type 'i15' must be wider than operand type 'i16'"),
    ("arith.extui %a : i16 to i16", "must be wider"),
    ("arith.trunci %a : i16 to i17", "result type 'i17' must be shorter than operand type 'i16'"),
    ("arith.index_cast %i : index to index", "operand type 'index' and result type 'index' are cast incompatible"),
])
def test_cast_widths_and_index_casts_verify_as_mlir(cast, message):
    text = f"func.func @f(%a: i16, %i: index) {{\n  %0 = {cast}\n  func.return\n}}"
    with pytest.raises(DiagnosticError, match=message):
        verify(parse(text))


@pytest.mark.parametrize("cast", [
    "arith.extsi %a : i16 to i32", "arith.trunci %a : i16 to i8", "arith.index_cast %i : index to i64",
    "arith.index_cast %a : i16 to index",
])
def test_valid_casts_still_verify(cast):
    verify(parse(f"func.func @f(%a: i16, %i: index) {{\n  %0 = {cast}\n  func.return\n}}"))


@pytest.mark.parametrize("text, message", [
    ('func @f(%a: f32) {\n  %r = cmpf "foo", %a, %a : f32\n  return\n}', 'unknown comparison predicate "foo"'),
    ('func @f(%a: i32) {\n  %r = cmpi i1, %a, %a : i32\n  return\n}', "expected string comparison predicate attribute"),
    ("func.func @f(%a: i32) {\n  %r = arith.cmpi foo, %a, %a : i32\n  func.return\n}", "invalid predicate 'foo'"),
])
def test_comparison_predicate_diagnostics(text, message):
    with pytest.raises(DiagnosticError, match=message):
        parse(text)


def test_2019_select_takes_a_condition_of_the_values_shape():
    out = roundtrip("""
        func @f(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
          %c = cmpi "slt", %a, %b : tensor<4xi32>
          %s = select %c, %a, %b : tensor<4xi32>
          return %s : tensor<4xi32>
        }
    """)
    assert "arith.select %0, %arg0, %arg1 : tensor<4xi1>, tensor<4xi32>" in out
    # Today's single type still means a scalar condition.
    today = parse("func.func @g(%c: i1, %a: tensor<4xi32>) -> tensor<4xi32> {\n"
                  "  %s = arith.select %c, %a, %a : tensor<4xi32>\n  func.return %s : tensor<4xi32>\n}")
    verify(today)


@pytest.mark.parametrize("memref, today, era", [
    ("memref<42xi8, (d0, d1) -> (d0, d1)>", "memref layout mismatch between rank and affine map: 1 != 2",
     "memref affine map dimension mismatch"),
    ("memref<2x4xi8, (d0, d1) -> (d1, d0), 1, 2>", "multiple memory spaces specified in memref type",
     "multiple memory spaces specified in memref type"),
    ("memref<2x4xi8, 1, (d0, d1) -> (d1, d0)>", "expected memory space to be last in memref type",
     "affine map after memory space in memref type"),
])
def test_memref_layout_and_space_checks(memref, today, era):
    with pytest.raises(DiagnosticError, match=era):
        parse(f"func @f({memref})")
    with pytest.raises(DiagnosticError, match=today):
        parse(f"func.func private @f({memref.replace('(d0, d1) -> (d0, d1)', 'affine_map<(d0, d1) -> (d0, d1)>').replace('(d0, d1) -> (d1, d0)', 'affine_map<(d0, d1) -> (d1, d0)>')})")


@pytest.mark.parametrize("block, message", [
    ("^bb42 (%0):", "expected ':' and type for SSA operand"),
    ("^bb42 (%a : i32:", "expected ')' to end argument list"),
])
def test_block_argument_list_diagnostics(block, message):
    with pytest.raises(DiagnosticError, match=re.escape(message)):
        parse(f"func.func @f() {{\n  cf.br ^bb42\n{block}\n  func.return\n}}")


def test_no_branch_to_an_entry_block():
    text = "func.func @f() {\n^bb42:\n  cf.br ^bb43\n^bb43:\n  cf.br ^bb42\n}"
    with pytest.raises(DiagnosticError, match="entry block of region may not have predecessors"):
        verify(parse(text))
    verify(parse("func.func @g() {\n  cf.br ^bb1\n^bb1:\n  cf.br ^bb1\n}"))  # a self-loop elsewhere is fine


def test_blank_between_dense_and_its_bracket():
    a = parse("func.func @f() {\n  %c = arith.constant dense <[1, 2]> : tensor<2xi32>\n  func.return\n}")
    b = parse("func.func @f() {\n  %c = arith.constant dense<[1, 2]> : tensor<2xi32>\n  func.return\n}")
    assert print_ir(a) == print_ir(b)


@pytest.mark.parametrize("text, message", [
    ("func.func @f() attributes {a = dense<[4, [5]]> : tensor<2xi32>}",
     "tensor literal is invalid; ranks are not consistent between elements"),
    ("func.func @f() attributes {a = dense<[[1], 2]> : tensor<2x1xi32>}",
     "tensor literal is invalid; ranks are not consistent between elements"),
    ("#set0 = (i)[N, M] : )i >= 0)\n", "expected '\\(' at start of integer set constraint list"),
    ("#map0 = (i) -> i\n", "expected '\\(' at start of affine map range"),
])
def test_literal_and_affine_diagnostics(text, message):
    with pytest.raises(DiagnosticError, match=message):
        parse(text)


def test_symbols_are_defined_once():
    rc, _, err = run_opt("""
        func @redef()  // expected-note {{see existing symbol definition here}}
        func @redef()  // expected-error {{redefinition of symbol named 'redef'}}
    """, "--verify-diagnostics")
    assert rc == 0, err
    verify(parse("func.func private @a()\nfunc.func private @b()"))
