"""The 2019 `std` verifier's rules, applied to text in 2019 syntax (ir/dialects/std_era.py).

Each case is written here (not taken from an upstream file): a 2019-syntax
function whose op breaks one 2019 rule must fail with 2019's message at the
op's line; the same op in today's syntax keeps today's rules; and the
strided-layout reading that the view rules rest on is checked against layouts
generated from known strides and offsets.
"""

import io
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import parse, verify
from egraft.ir.core import types as T
from egraft.ir.dialects.std_era import ERA_2019_CHECKS
from egraft.ir.dialects.strided import strides_and_offset
from egraft.passes.cli.main import main as egraft_opt


def run_opt(text: str, *flags: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = egraft_opt([*flags, "-"], stdin=lambda: textwrap.dedent(text).encode(), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def era_error(body: str, args: str = "") -> str:
    """The diagnostics for a 2019 function whose second line is `body`."""
    rc, _, err = run_opt(f"func @f({args}) {{\n  {body}\n  return\n}}\n")
    assert rc != 0, f"accepted: {body}"
    assert "<stdin>:2:" in err, err  # located at the op
    assert "Traceback" not in err
    return err


def expect_2019(text: str, message: str | None) -> None:
    """`text` reads (message None), or fails with `message` at its line 2."""
    rc, _, err = run_opt(text)
    if message is None:
        assert rc == 0, err
    else:
        assert rc != 0 and "<stdin>:2:" in err and message in err, err


# ------------------------------------------------------------------ casts


@pytest.mark.parametrize("body, args, message", [
    ("%r = index_cast %x : i64 to i32", "%x: i64", "operand type 'i64' and result type 'i32' are cast incompatible"),
    ("%r = index_cast %x : index to index", "%x: index", "are cast incompatible"),
    ("%r = sitofp %x : f16 to f32", "%x: f16", "operand type 'f16' and result type 'f32' are cast incompatible"),
    ("%r = sitofp %x : i8 to i16", "%x: i8", "are cast incompatible"),
    ("%r = fpext %x : f64 to f32", "%x: f64", "operand type 'f64' and result type 'f32' are cast incompatible"),
    ("%r = fpext %x : bf16 to bf16", "%x: bf16", "are cast incompatible"),
    ("%r = fptrunc %x : f16 to f64", "%x: f16", "are cast incompatible"),
    ("%r = fptrunc %x : i64 to f32", "%x: i64", "are cast incompatible"),
    ("%r = fpext %x : vector<4xf16> to vector<3xf32>", "%x: vector<4xf16>",
     "requires the same shape for all operands and results"),
    ("%r = sexti %x : index to i64", "%x: index", "'index' is not a valid operand type"),
    ("%r = zexti %x : i8 to index", "%x: i8", "'index' is not a valid result type"),
    ("%r = trunci %x : index to i8", "%x: index", "'index' is not a valid operand type"),
    ("%r = trunci %x : i8 to i32", "%x: i8", "operand type 'i8' must be wider than result type 'i32'"),
])
def test_2019_cast_rules(body, args, message):
    assert message in era_error(body, args)


@pytest.mark.parametrize("body, args", [
    ("%r = index_cast %x : i64 to index", "%x: i64"),
    ("%r = index_cast %x : index to i1", "%x: index"),
    ("%r = sitofp %x : i64 to f16", "%x: i64"),
    ("%r = fpext %x : vector<2xf16> to vector<2xf64>", "%x: vector<2xf16>"),
    ("%r = fptrunc %x : f64 to bf16", "%x: f64"),
    ("%r = sexti %x : i1 to i64", "%x: i1"),
    ("%r = trunci %x : i64 to i1", "%x: i64"),
])
def test_valid_2019_casts_still_read(body, args):
    rc, out, err = run_opt(f"func @f({args}) {{\n  {body}\n  return\n}}\n")
    assert rc == 0, err


_FLOATS = ["f16", "bf16", "f32", "f64"]


@given(st.sampled_from(_FLOATS), st.sampled_from(_FLOATS), st.sampled_from(["fpext", "fptrunc"]))
@settings(max_examples=40, deadline=None)
def test_2019_float_resizes_agree_with_todays_records(a, b, mnemonic):
    """Two independent statements of one rule: 2019's areCastCompatible (the era
    check) and today's extf/truncf width check must accept the same pairs
    (bf16 and f16 are both 16 bits wide: neither widens the other)."""
    text = f"func @f(%x: {a}) {{\n  %r = {mnemonic} %x : {a} to {b}\n  return\n}}\n"
    era_rc, _, _ = run_opt(text)
    today = text.replace("func @f", "func.func @f").replace(mnemonic, {"fpext": "arith.extf",
                                                                       "fptrunc": "arith.truncf"}[mnemonic])
    today_rc, _, _ = run_opt(today)
    assert (era_rc == 0) == (today_rc == 0)


def test_todays_syntax_keeps_todays_rules():
    """The 2019 checks are not applied to today's text: today's messages stay."""
    rc, _, err = run_opt("func.func @f(%x: f32) {\n  %r = arith.truncf %x : f32 to f64\n  return\n}\n")
    assert rc != 0 and "must be shorter than operand type" in err and "cast incompatible" not in err
    rc, _, err = run_opt("func.func @f(%x: i1) {\n  %r = arith.extsi %x : i1 to i1\n  return\n}\n")
    assert rc != 0 and "must be wider than operand type" in err and "'std." not in err


def test_2019_regions_end_with_their_implied_terminator():
    """2019's SingleBlockImplicitTerminator check, with its note, before the body is verified."""
    rc, _, err = run_opt("func @f() {\n  affine.for %i = 0 to 4 {\n    return\n  }\n  return\n}\n")
    assert rc != 0 and "<stdin>:2:" in err
    assert "'affine.for' op expects regions to end with 'affine.terminator', found 'std.return'" in err
    assert "note: in custom textual format, the absence of terminator implies 'affine.terminator'" in err
    rc, out, err = run_opt('func @f() {\n  affine.for %i = 0 to 4 {\n    "affine.terminator"() : () -> ()\n  }\n  return\n}\n')
    assert rc == 0 and "affine.for" in out, err
    assert set(ERA_2019_CHECKS) >= {"affine.for", "tf_executor.graph", "tf_executor.island"}


@pytest.mark.parametrize("text, message", [
    ("func @f(%a: f32) {\n  %r = addi %a, %a : f32\n  return\n}\n", "'std.addi' op operand #0 must be integer-like"),
    ("func @f() -> i32 {\n  return\n}\n", "'std.return' op has 0 operands, but enclosing function returns 1"),
    ("func @f(%a: i1) {\n  br ^b(%a, %a : i1, i1)\n^b(%x: i1):\n  return\n}\n",
     "branch has 2 operands, but target block has 1"),
])
def test_same_rules_in_2019_words(text, message):
    rc, _, err = run_opt(text)
    assert rc != 0 and message in err, err


# ------------------------------------------------------------------ comparisons, select, constant


@pytest.mark.parametrize("body, args, message", [
    ('%r = "std.cmpi"(%a, %a) {predicate = 12} : (i8, i8) -> i1', "%a: i8",
     "attribute 'predicate' failed to satisfy constraint: allowed 64-bit integer cases: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9"),
    ('%r = "std.cmpi"(%a, %a) {predicate = 1} : (f16, f16) -> i1', "%a: f16", "operand #0 must be integer-like"),
    ('%r = "std.cmpi"(%a, %a) {predicate = 1} : (i8, i8) -> i8', "%a: i8", "result #0 must be bool-like"),
    ('%r = "std.cmpi"(%a, %a) {predicate = 1} : (vector<3xi8>, vector<3xi8>) -> vector<2xi1>', "%a: vector<3xi8>",
     "requires the same shape for all operands and results"),
    ('%r = "std.cmpf"(%a, %a) {predicate = 16} : (f32, f32) -> i1', "%a: f32",
     "'predicate' attribute value out of range"),
    ('%r = "std.cmpf"(%a, %a) {pred = 1} : (f32, f32) -> i1', "%a: f32",
     "requires an integer attribute named 'predicate'"),
    ('%r = "std.cmpf"(%a, %a) {predicate = 1} : (f32, f32) -> i32', "%a: f32", "result #0 must be bool-like"),
    ('%r = "std.select"(%c, %c, %c) : (i8, i8, i8) -> i8', "%c: i8", "operand #0 must be bool-like"),
    ('%r = "std.select"(%c, %a, %b) : (i1, f32, f64) -> f32', "%c: i1, %a: f32, %b: f64",
     "requires 'true' and 'false' arguments to be of the same type"),
    ('%r = "std.select"(%c, %a, %a) : (i1, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>',
     "%c: i1, %a: tensor<2xf32>", "requires the same shape for all operands and results"),
    ('%r = "std.constant"() {value = 7} : () -> i16', "", "requires attribute's type ('i64') to match op's return type ('i16')"),
    ('%r = "std.constant"() {value = "seven"} : () -> i16', "", "unsupported 'value' attribute"),
])
def test_2019_comparison_select_and_constant_rules(body, args, message):
    err = era_error(body, args)
    assert message in err
    assert "'std." in err  # 2019's op names


def test_2019_rules_come_before_a_missing_terminator():
    """2019 verified a block's ops before asking for its terminator."""
    rc, _, err = run_opt('func @f(%a: f32) {\n  %r = "std.cmpf"(%a, %a) {predicate = 99} : (f32, f32) -> i1\n}\n')
    assert rc != 0 and "<stdin>:2:" in err and "value out of range" in err and "no terminator" not in err


# ------------------------------------------------------------------ view and subview


@pytest.mark.parametrize("body, message", [
    ("%v = view %buf[][%n] : memref<64xi8> to memref<?x4xf32>", None),
    ("%v = view %buf[][] : memref<64xi8> to memref<4x4xf32>", None),
    ("%v = view %buf[%n][%n] : memref<64xi8> to memref<?x4xf32, (d0, d1)[s0] -> (d0 * 4 + d1 + s0)>", None),
    ("%v = view %buf[][%n] : memref<64xi8> to memref<?x4xf32, (d0, d1)[s0] -> (d0 * 4 + d1 + s0)>",
     "incorrect number of operands for type"),
    ("%v = view %buf[][%n] : memref<64xi8> to memref<4x?xf32, (d0, d1) -> (d0 * 8 + d1)>",
     "incorrect dynamic strides in view memref type"),
    ("%v = view %buf[][%n] : memref<64xi8> to memref<?x4xf32, (d0, d1) -> (d0 floordiv 4, d1)>", "is not strided"),
    ("%v = view %buf[][] : memref<64xi8> to memref<4x4xf32, 3>", "different memory spaces specified"),
])
def test_2019_view_rules(body, message):
    expect_2019(f"func @f(%buf: memref<64xi8>, %n: index) {{\n  {body}\n  return\n}}\n", message)


def test_2019_view_wants_a_flat_byte_buffer():
    rc, _, err = run_opt("func @f(%buf: memref<16xf32>) {\n"
                         "  %v = view %buf[][] : memref<16xf32> to memref<4xf32>\n  return\n}\n")
    assert rc != 0 and "operand #0 must be 1D memref of 8-bit integer values" in err


@pytest.mark.parametrize("body, message", [
    ("%s = subview %m[%i, %i][%i, %i][%i, %i] : memref<8x8xf32> to memref<?x?xf32, offset: ?, strides: [?, ?]>", None),
    ("%s = subview %m[][][] : memref<8x8xf32> to memref<8x8xf32>", None),
    ("%s = subview %m[%i][][] : memref<8x8xf32> to memref<8x8xf32, offset: ?, strides: [8, 1]>",
     "expected number of dynamic offsets specified to match the rank of the result type"),
    ("%s = subview %m[][%i, %i][] : memref<8x8xf32> to memref<2x2xf32, offset: ?, strides: [8, 1]>",
     "invalid to specify dynamic sizes when subview result type is statically shaped and viceversa"),
    ("%s = subview %m[][%i, %i][] : memref<8x8xf32> to memref<?x2xf32, offset: 0, strides: [8, 1]>",
     "expected shape of result type to be fully dynamic when sizes are specified"),
    ("%s = subview %m[%i, %i][][] : memref<8x8xf32> to memref<8x8xf32>",
     "expected result memref layout map to have dynamic offset"),
    ("%s = subview %m[][][%i, %i] : memref<8x8xf32> to memref<8x8xf32, offset: 0, strides: [?, 1]>",
     "expected result type to have dynamic strides"),
    ("%s = subview %m[%i, %i][][] : memref<8x8xf32> to memref<8xf32>",
     "expected rank of result type to match rank of base type"),
    ("%s = subview %m[][][] : memref<8x8xf32> to memref<8x8xf32, (d0, d1) -> (d0 mod 2, d1)>", "is not strided"),
])
def test_2019_subview_rules(body, message):
    expect_2019(f"func @f(%m: memref<8x8xf32>, %i: index) {{\n  {body}\n  return\n}}\n", message)


@st.composite
def _strided_layouts(draw):
    """A rank, strides and an offset (None = a symbol), and the bare 2019 map
    that spells them, its terms in a random order."""
    rank = draw(st.integers(1, 4))
    value = st.one_of(st.none(), st.integers(0, 50))
    strides = [draw(value) for _ in range(rank)]
    offset = draw(value)
    terms, n_symbols = [], 0
    for i, s in enumerate(strides):
        if s is None:
            terms.append(f"d{i} * s{n_symbols}")
            n_symbols += 1
        else:
            terms.append(draw(st.sampled_from([f"d{i} * {s}", f"{s} * d{i}"])))
    if offset is None:
        terms.append(f"s{n_symbols}")
        n_symbols += 1
    elif offset or draw(st.booleans()):
        terms.append(str(offset))
    terms = draw(st.permutations(terms))
    dims = ", ".join(f"d{i}" for i in range(rank))
    syms = f"[{', '.join(f's{j}' for j in range(n_symbols))}]" if n_symbols else ""
    return rank, strides, offset, f"({dims}){syms} -> ({' + '.join(terms)})"


@given(_strided_layouts())
@settings(max_examples=80, deadline=None)
def test_strides_and_offset_read_back_the_layout_they_came_from(case):
    rank, strides, offset, layout = case
    shape = "x".join("4" for _ in range(rank))
    module = parse(f"func @f(%m: memref<{shape}xf32, {layout}>) {{\n  return\n}}\n")
    verify(module)
    func = next(op for op in module.walk() if op.name == "func.func")
    assert strides_and_offset(func.regions[0].blocks[0].args[0].type) == (strides, offset)


@given(st.lists(st.one_of(st.just(T.DYNAMIC), st.integers(1, 6)), min_size=1, max_size=4))
@settings(max_examples=40, deadline=None)
def test_identity_layout_strides_are_suffix_products(shape):
    strides, offset = strides_and_offset(T.MemRefType(tuple(shape), T.f32, None, None))
    assert offset == 0 and strides[-1] == 1
    for i in range(len(shape) - 1):
        later = shape[i + 1:]
        if T.DYNAMIC in later:
            assert strides[i] is None
        else:
            product = 1
            for d in later:
                product *= d
            assert strides[i] == product


def test_2019_views_keep_their_2019_meaning_and_round_trip():
    """2019's view and subview read as `std.view`/`std.subview` (their lists
    mean what they meant then), print in that form and read back."""
    text = ("func @f(%buf: memref<64xi8>, %m: memref<8x8xf32>, %n: index) {\n"
            "  %v = view %buf[][%n] : memref<64xi8> to memref<?x4xf32>\n"
            "  %s = subview %m[%n, %n][][] : memref<8x8xf32> to memref<8x8xf32, offset: ?, strides: [8, 1]>\n"
            "  return\n}\n")
    rc, out, err = run_opt(text)
    assert rc == 0, err
    assert "std.view %arg0[][%arg2] : memref<64xi8> to memref<?x4xf32>" in out
    assert "std.subview %arg1[%arg2, %arg2][][] : memref<8x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>" in out
    rc2, out2, err2 = run_opt(out)
    assert rc2 == 0 and out2 == out, err2
    rc3, _, err3 = run_opt(out.replace("[][%arg2]", "[][]"))  # today's-syntax text: the 2019 rules still hold
    assert rc3 != 0 and "incorrect number of operands for type" in err3


# ------------------------------------------------------------------ 2019 ops egraft has no dialect for


def test_2019_extract_element_splat_and_dma_round_trip():
    text = ("func @f(%t: tensor<2x3xf32>, %v: vector<4xi8>, %i: index, %s: f32,\n"
            "        %a: memref<16xf32>, %b: memref<16xf32, 1>, %tag: memref<1xi32>) {\n"
            "  %e = extract_element %t[%i, %i] : tensor<2x3xf32>\n"
            "  %w = extract_element %v[%i] : vector<4xi8>\n"
            "  %p = splat %s : vector<8xf32>\n"
            "  %q = splat %s : tensor<2x2xf32>\n"
            "  dma_start %a[%i], %b[%i], %i, %tag[%i] : memref<16xf32>, memref<16xf32, 1>, memref<1xi32>\n"
            "  dma_start %a[%i], %b[%i], %i, %tag[%i], %i, %i : memref<16xf32>, memref<16xf32, 1>, memref<1xi32>\n"
            "  dma_wait %tag[%i], %i : memref<1xi32>\n"
            "  return\n}\n")
    rc, out, err = run_opt(text)
    assert rc == 0, err
    for piece in ("std.extract_element %arg0[%arg2, %arg2] : tensor<2x3xf32>", "std.splat %arg3 : tensor<2x2xf32>",
                  "std.dma_start %arg4[%arg2], %arg5[%arg2], %arg2, %arg6[%arg2], %arg2, %arg2 : memref<16xf32>, "
                  "memref<16xf32, 1>, memref<1xi32>", "std.dma_wait %arg6[%arg2], %arg2 : memref<1xi32>"):
        assert piece in out, out
    rc2, out2, err2 = run_opt(out)
    assert rc2 == 0 and out2 == out, err2


@pytest.mark.parametrize("body, args, message", [
    ('%e = "std.extract_element"(%t, %i) : (tensor<2x3xf32>, index) -> f32', "%t: tensor<2x3xf32>, %i: index",
     "incorrect number of indices for extract_element"),
    ('%e = "std.extract_element"(%t, %i, %i) : (tensor<2x3xf32>, index, index) -> f16',
     "%t: tensor<2x3xf32>, %i: index", "result type must match element type of aggregate"),
    ('%e = "std.extract_element"(%t, %x) : (tensor<3xf32>, i64) -> f32', "%t: tensor<3xf32>, %x: i64",
     "operand #1 must be index"),
    ('%e = "std.extract_element"() : () -> f32', "", "expected 1 or more operands"),
    ("%p = splat %s : memref<4xf32>", "%s: f32",
     "result #0 must be vector of any type values or statically shaped tensor of any type values"),
    ("%p = splat %s : tensor<?xf32>", "%s: f32", "statically shaped tensor"),
    ("%p = splat %s : tensor<2xvector<2xf32>>", "%s: vector<2xf32>", "operand #0 must be integer or float type"),
    ("dma_start %a[%i], %a[%i], %i, %tag[%i] : memref<16xf32>, memref<16xf32>, memref<1xi32>",
     "%a: memref<16xf32>, %i: index, %tag: memref<1xi32>", "DMA should be between different memory spaces"),
    ("dma_start %a[%i], %b[%i], %i, %tag[%i] : memref<16xf32>, f32, memref<1xi32>",
     "%a: memref<16xf32>, %b: f32, %i: index, %tag: memref<1xi32>", "expected destination to be of memref type"),
    ("dma_start %a[], %b[%i], %i, %tag[%i] : memref<16xf32>, memref<16xf32, 1>, memref<1xi32>",
     "%a: memref<16xf32>, %b: memref<16xf32, 1>, %i: index, %tag: memref<1xi32>",
     "memref rank not equal to indices count"),
    ("dma_start %a[%i], %b[%i], %i, %tag[%i], %i : memref<16xf32>, memref<16xf32, 1>, memref<1xi32>",
     "%a: memref<16xf32>, %b: memref<16xf32, 1>, %i: index, %tag: memref<1xi32>",
     "expected two stride related operands"),
    ("dma_wait %tag[%i], %undefined : i32", "%tag: i32, %i: index", "expected tag to be of memref type"),
])
def test_2019_extract_element_splat_and_dma_rules(body, args, message):
    assert message in era_error(body, args)


# ------------------------------------------------------------------ memref.cast (today's rule, both syntaxes)

_CAST_TYPES = ["memref<4x8xf32>", "memref<?x8xf32>", "memref<4x?xf32>", "memref<?x?xf32>", "memref<4x8xf32, 1>",
               "memref<4x8xi32>", "memref<8x4xf32>", "memref<4xf32>", "memref<*xf32>", "memref<*xf32, 1>",
               "memref<4x8xf32, strided<[8, 1], offset: ?>>", "memref<4x8xf32, strided<[?, 1]>>",
               "memref<4x8xf32, strided<[16, 1]>>", "memref<4x8xf32, (d0, d1) -> (d0 floordiv 2, d1)>"]


def _cast_ok(a: str, b: str) -> bool:
    rc, _, err = run_opt(f"func.func @f(%x: {a}) {{\n  %y = memref.cast %x : {a} to {b}\n  return\n}}\n")
    assert rc == 0 or "are cast incompatible" in err, err
    return rc == 0


@given(st.sampled_from(_CAST_TYPES), st.sampled_from(_CAST_TYPES))
@settings(max_examples=60, deadline=None)
def test_memref_cast_compatibility_is_symmetric(a, b):
    assert _cast_ok(a, b) == _cast_ok(b, a)
    if a == b:
        assert _cast_ok(a, b) == ("*" not in a)  # unranked to unranked is refused


@pytest.mark.parametrize("a, b, ok", [
    ("memref<4x8xf32>", "memref<?x8xf32>", True),
    ("memref<4x8xf32>", "memref<*xf32>", True),
    ("memref<4x8xf32>", "memref<4x8xf32, strided<[8, 1], offset: ?>>", True),
    ("memref<4x8xf32>", "memref<4x8xf32, strided<[16, 1]>>", False),
    ("memref<4x8xf32>", "memref<8x4xf32>", False),
    ("memref<4x8xf32>", "memref<4x8xi32>", False),
    ("memref<4x8xf32>", "memref<4x8xf32, 1>", False),
    ("memref<4x8xf32>", "memref<*xf32, 1>", False),
])
def test_memref_cast_cases(a, b, ok):
    assert _cast_ok(a, b) == ok


def test_memory_space_zero_is_the_default_one():
    assert _cast_ok("memref<4x8xf32, 0>", "memref<4x8xf32>") and not _cast_ok("memref<4x8xf32, 0>", "memref<*xf32, 1>")
    rc, out, _ = run_opt("func.func @f(%x: memref<4xf32, 0>, %y: memref<*xf32, 0>) {\n  return\n}\n")
    assert rc == 0 and "memref<4xf32>, %arg1: memref<*xf32>)" in out


@pytest.mark.parametrize("body, message", [
    ('%x = "t.op"() : () -> ()', "cannot name an operation with no results"),
    ('"" () : () -> ()', "empty operation name is invalid"),
])
def test_generic_form_errors_in_both_syntaxes(body, message):
    for head in ("func @f() {", "func.func @f() {"):
        rc, _, err = run_opt(f"{head}\n  {body}\n  return\n}}\n", "--allow-unregistered-dialect")
        assert rc != 0 and "<stdin>:2:" in err and message in err, err


@pytest.mark.parametrize("literal, message", [
    ('opaque<"tf", "0x0A1b">', None),
    ('opaque<"", "0x00">', None),
    ('opaque<7, "0x00">', "expected dialect namespace"),
    ('opaque<"nosuchdialect", "0x00">', "no registered dialect with namespace 'nosuchdialect'"),
    ('opaque<"tf", "12ab">', "opaque string should start with '0x'"),
    ('opaque<"tf", "0x12g4">', "opaque string only contains hex digits"),
])
def test_opaque_elements_literals(literal, message):
    rc, out, err = run_opt(f'func @f() {{\n  "t.op"() {{v = {literal} : tensor<2xi8>}} : () -> ()\n  return\n}}\n')
    if message is None:
        assert rc == 0 and literal in out, err
    else:
        assert rc != 0 and "<stdin>:2:" in err and message in err, err


def test_2019_alloc_operand_count_and_apply_map_wording():
    err = era_error("%m = alloc(%n) : memref<2x?xf32, (d0, d1)[s0] -> (d0 + s0, d1)>", "%n: index")
    assert "operand count does not equal dimension plus symbol operand count" in err
    err = era_error('%x = "affine.apply"(%n) : (index) -> index', "%n: index")
    assert "'affine.apply' op requires an affine map" in err
    rc, _, err = run_opt("func.func @f(%n: index) {\n"
                         "  %m = memref.alloc(%n) : memref<2x?xf32, affine_map<(d0, d1)[s0] -> (d0 + s0, d1)>>\n"
                         "  return\n}\n")
    assert rc != 0 and "symbol operand count does not equal memref symbol count: expected 1, got 0" in err


@pytest.mark.parametrize("op, predicate, operand", [("arith.cmpi", 42, "i32"), ("arith.cmpf", 16, "f32"),
                                                      ("arith.cmpi", -1, "i32")])
def test_out_of_range_predicates_are_diagnosed_not_printed(op, predicate, operand):
    """A predicate past the enum was accepted and then crashed the printer."""
    rc, _, err = run_opt(f'func.func @f(%a: {operand}) -> i1 {{\n  %r = "{op}"(%a, %a) {{predicate = {predicate} : i64}} '
                         f': ({operand}, {operand}) -> i1\n  return %r : i1\n}}\n')
    assert rc != 0 and "attribute 'predicate' failed to satisfy constraint: allowed 64-bit signless integer cases" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("space, ok", [("3", True), ('"fast"', True), ("#foo.space<1>", True), ("i8", False),
                                       ("[1, 2]", False)])
def test_memref_memory_space_kinds(space, ok):
    rc, _, err = run_opt(f"func.func @f(%a: memref<4xf32, {space}>) {{\n  return\n}}\n", "--allow-unregistered-dialect")
    assert (rc == 0) == ok, err
    if not ok:
        assert "unsupported memory space Attribute" in err
    rc, _, err = run_opt(f"func @f(%a: memref<4xf32, {space}>) {{\n  return\n}}\n", "--allow-unregistered-dialect")
    assert (rc == 0) == ok and (ok or "expected affine map in memref type" in err), err


@pytest.mark.parametrize("bound, ok", [("9223372036854775807", True), ("9223372036854775808", False),
                                       ("18446744073709551615", False), ("-9223372036854775808", True)])
def test_constant_loop_bounds_are_index_values(bound, ok):
    """A constant bound past i64 was read as its two's complement (a huge upper bound became negative)."""
    for head in ("func @f() {", "func.func @f() {"):
        rc, out, err = run_opt(f"{head}\n  affine.for %i = 0 to {bound} {{\n  }}\n  return\n}}\n")
        assert (rc == 0) == ok, err
        if ok:
            assert f"to {bound} {{" in out
        else:
            assert "integer constant out of range for attribute" in err


def test_2019_dim_index_is_an_index_attribute():
    """`dim %m, N` took N as an index attribute: past i64 it is out of range
    (it was made into an index constant that did not read back)."""
    rc, _, err = run_opt("func @f(%m: memref<4xf32>) {\n  %c = dim %m, 18446744073709551615 : memref<4xf32>\n"
                         "  return\n}\n")
    assert rc != 0 and "<stdin>:2:16:" in err and "integer constant out of range for attribute" in err


def test_2019_rules_apply_per_split_chunk():
    """Under --split-input-file each chunk is judged by its own syntax."""
    text = ("func @f(%x: index) {\n  %r = sexti %x : index to i64\n  return\n}\n"
            "// -----\n"
            "func.func @g(%x: i8) {\n  %r = arith.extsi %x : i8 to i64\n  return\n}\n")
    rc, out, err = run_opt(text, "--split-input-file")
    assert rc != 0 and "'index' is not a valid operand type" in err
    assert "func.func @g" in out and err.count("error:") == 1


def test_2019_diagnostics_spell_tensorflow_types_in_the_tf_dialect():
    """TensorFlow's types were `!tf.*` until 2021: a 2019 file's expected errors quote them so."""
    text = """func @f(%a: tensor<*x!tf.variant>, %b: tensor<4x!tf.variant>) -> tensor<8x!tf.variant> {
  %r = tf_executor.graph {
    %v, %i, %c = "tf_executor.Merge"(%a, %b) : (tensor<*x!tf.variant>, tensor<4x!tf.variant>) -> (tensor<8x!tf.variant>, tensor<i32>, !tf_executor.control)
    tf_executor.fetch %v : tensor<8x!tf.variant>
  }
  return %r : tensor<8x!tf.variant>
}
"""
    rc, _, err = run_opt(text)
    assert rc != 0 and "<stdin>:3:" in err
    assert "but got 'tensor<4x!tf.variant>' vs 'tensor<8x!tf.variant>'" in err, err
    rc, _, err = run_opt(text.replace("func @f", "func.func @f"))  # today's syntax: today's dialect
    assert rc != 0 and "but got 'tensor<4x!tf_type.variant>' vs 'tensor<8x!tf_type.variant>'" in err, err


def test_2019_tensorflow_element_types_read_as_todays_builtin_types():
    """`!tf.uint8`..`!tf.complex128` became `ui8`..`complex<f64>` in 2020; refs and today's
    `tf_type` namespace keep their meaning (`!tf_type.uint16` never existed)."""
    rc, out, err = run_opt("func @f(%a: tensor<2x!tf.uint16>, %b: !tf.complex64, %c: tensor<*x!tf.uint8ref>,"
                           " %d: !tf.uint64, %e: tensor<!tf.complex128>) {\n  return\n}\n")
    assert rc == 0, err
    assert ("(%arg0: tensor<2xui16>, %arg1: complex<f32>, %arg2: tensor<*x!tf_type.uint8ref>, %arg3: ui64, "
            "%arg4: tensor<complex<f64>>)") in out
    rc, _, err = run_opt("func.func @f(%a: !tf_type.uint16) {\n  return\n}\n")
    assert rc != 0 and "<stdin>:1:18: error: unknown TensorFlow type: uint16" in err, err


@pytest.mark.parametrize("attrs, operand, message", [
    ('{data_format = "HWCN"}', "tensor<7xf32>",
     "attribute 'data_format' failed to satisfy constraint: 'NHWC' or 'NCHW' convnet data format"),
])
def test_2019_tensorflow_constraint_wording(attrs, operand, message):
    text = (f'func @f(%a: tensor<2x3x5x7xf32>, %b: {operand}) {{\n'
            f'  %0 = "tf.BiasAdd"(%a, %b) {attrs} : (tensor<2x3x5x7xf32>, {operand}) -> tensor<2x3x5x7xf32>\n'
            f'  return\n}}\n')
    expect_2019(text, message)
    rc, _, err = run_opt(text.replace("func @f", "func.func @f"))  # today's wording for today's syntax
    assert rc != 0 and "string attribute whose value is NHWC, or NCHW" in err, err


def test_2019_tensorflow_integer_tensors_have_no_signedness_in_messages():
    text = ("func @f(%a: tensor<*xf32>, %s: tensor<2xf32>) {\n"
            '  %r = "tf.Reshape"(%a, %s) : (tensor<*xf32>, tensor<2xf32>) -> tensor<100x100xf32>\n'
            "  return\n}\n")
    expect_2019(text, "must be tensor of 32/64-bit integer values")
    rc, _, err = run_opt(text.replace("func @f", "func.func @f"))
    assert rc != 0 and "must be tensor of 32/64-bit signed integer values" in err, err


def test_2019_generic_successor_lists_carry_their_operands():
    """2019's generic form kept a successor's operands in the successor list; they read as
    today's operands (with `cf.cond_br`'s segment sizes) and print in today's form."""
    rc, out, err = run_opt("""\
        func @f(%c: i1, %a: i32, %b: i64) -> i32 {
          "std.cond_br"(%c)[^bb1(%a : i32), ^bb2(%b, %a : i64, i32)] : (i1) -> ()
        ^bb1(%x: i32):
          "std.br"()[^bb2(%b, %x : i64, i32)] : () -> ()
        ^bb2(%y: i64, %z: i32):
          return %z : i32
        }
        """)
    assert rc == 0, err
    assert "cf.cond_br %arg0, ^bb1(%arg1 : i32), ^bb2(%arg2, %arg1 : i64, i32)" in out
    assert "cf.br ^bb2(%arg2, %0 : i64, i32)" in out
    rc, again, err = run_opt(out)
    assert rc == 0 and again == out, err
    rc, _, err = run_opt('func @f(%c: i1) {\n  "std.cond_br"(%c)[^bb1(%c : i1)] : (i1) -> ()\n^bb1(%x: i1):\n  return\n}\n')
    assert rc != 0 and "<stdin>:2:" in err and "Traceback" not in err, err
