"""Types, attributes, locations and errors as MLIR spells them."""

import pytest

from egraft.ir import DiagnosticError, parse, print_ir
from egraft.ir.core.floats import format_float


def roundtrip(text: str, **kw) -> str:
    return print_ir(parse(text, allow_unregistered=True), **kw)


def attr_of(text: str) -> str:
    """The printed form of an attribute (through a generic op)."""
    out = roundtrip(f'"t.op"() {{a = {text}}} : () -> ()')
    return out.split("{a = ", 1)[1].rsplit("} :", 1)[0]


def type_of(text: str) -> str:
    out = roundtrip(f'"t.op"() : () -> {text}')
    return out.split("-> ", 1)[1].splitlines()[0]


@pytest.mark.parametrize("value,type_name,expected", [
    (1.0, "f32", "1.000000e+00"),
    (-0.0, "f64", "-0.000000e+00"),
    (0.1, "f64", "1.000000e-01"),
    (3.141592653589793, "f64", "3.1415926535897931"),
    (1.7976931348623157e308, "f64", "1.7976931348623157E+308"),
    (float("nan"), "f32", "0x7FC00000"),
    (float("inf"), "f64", "0x7FF0000000000000"),
    # APFloat truncates before it rounds: these need the default (9/17 digit) form.
    (0.9002659916877747, "f32", "0.900265991"),
    (9.999999960041972e-13, "f32", "9.99999996E-13"),
    (3.1415920257568359, "f32", "3.14159203"),
    (3.141592, "f64", "3.1415920000000002"),
    (1.0996093750, "f16", "1.099610e+00"),
    (299792.5, "f32", "299792.5"),
    (2997925.0, "f32", "0x4A36FA94"),
    (-3.314748076e-07, "f32", "-3.31474808E-7"),
])
def test_floats_print_as_mlir(value, type_name, expected):
    assert format_float(value, type_name) == expected


@pytest.mark.parametrize("text", [
    "i1", "si8", "ui64", "index", "f16", "bf16", "f64", "none", "complex<f32>", "tuple<i32, f32>",
    "tensor<1x?x3xf32>", "tensor<*xi8>", "tensor<f32>", "memref<4x?xf32>", "memref<*xf32>",
    "memref<4xf32, 1>", "vector<4x[8]xf32>", "!tf_type.resource<tensor<f32>>", "!tf_type.string",
    "tensor<!tf_type.variant>", "!tf_executor.control", "!tf_type.control", "!foo.bar<\"baz\" 1>",
])
def test_types_round_trip(text):
    assert type_of(text) == text


@pytest.mark.parametrize("text,expected", [
    ("!tf.resource", "!tf_type.resource"),
    ('!tf_executor<"control">', "!tf_executor.control"),
    ("!tfg.control", "!tf_type.control"),
])
def test_2019_type_spellings_normalize(text, expected):
    assert type_of(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("42", "42 : i64"),
    ("-3 : i8", "-3 : i8"),
    ("true", "true"),
    ("1.5", "1.500000e+00 : f64"),
    ("0x7FC00000 : f32", "0x7FC00000 : f32"),
    ('"a\\"b\\0A\\n"', '"a\\22b\\0A\\0A"'),
    ("[1 : i32, \"x\", unit]", "[1 : i32, \"x\", unit]"),
    ("{b = 1 : i64, a}", "{a, b = 1 : i64}"),
    ("@f::@g", "@f::@g"),
    ("dense<[1, 2]> : tensor<2xi32>", "dense<[1, 2]> : tensor<2xi32>"),
    ("dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>",
     "dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>"),
    ("dense<[7, 7, 7]> : tensor<3xi32>", "dense<7> : tensor<3xi32>"),
    ("dense<true> : tensor<2xi1>", "dense<true> : tensor<2xi1>"),
    ('dense<"0x0000803F"> : tensor<1xf32>', 'dense<"0x0000803F"> : tensor<1xf32>'),
    ('dense<["a", "b"]> : tensor<2x!tf_type.string>', 'dense<["a", "b"]> : tensor<2x!tf_type.string>'),
    ("dense_resource<__elided__> : tensor<3xf32>", "dense_resource<__elided__> : tensor<3xf32>"),
    ("array<i64: 1, 2>", "array<i64: 1, 2>"),
    ("#tf_type.shape<1x?x3>", "#tf_type.shape<1x?x3>"),
    ("#foo<\"opaque body\">", "#foo<\"opaque body\">"),
    ("f32", "f32"),
    ("(i32, f32) -> i32", "(i32, f32) -> i32"),
])
def test_attributes_round_trip(text, expected):
    assert attr_of(text) == expected


def test_affine_maps_print_through_aliases():
    out = roundtrip('"t.op"() {a = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 * 2)>, '
                    'b = affine_map<(d0) -> (d0)>} : () -> ()')
    assert out.startswith("#map = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 * 2)>\n"
                          "#map1 = affine_map<(d0) -> (d0)>\n")
    assert "{a = #map, b = #map1}" in out


def test_locations_round_trip_with_debuginfo():
    text = ('"t.a"() : () -> () loc("f.mlir":3:4)\n'
            '"t.b"() : () -> () loc(fused["a":1:2, "b"("c":3:4)])\n'
            '"t.c"() : () -> () loc(callsite("x" at "y":1:1))\n'
            '"t.d"() : () -> () loc(#loc9)\n'
            '#loc9 = loc("later":7:8)\n')
    out = roundtrip(text, debuginfo=True)
    assert 'loc("f.mlir":3:4)' in out
    assert 'loc(fused["a":1:2, "b"("c":3:4)])' in out
    assert 'loc(callsite("x" at "y":1:1))' in out
    assert 'loc("later":7:8)' in out


def test_ops_without_locations_get_their_source_position():
    out = roundtrip('\n\n  "t.a"() : () -> ()\n', debuginfo=True)
    assert 'loc("<stdin>":3:3)' in out


@pytest.mark.parametrize("text,line,col,message", [
    ('"t.a"(%x) : (i32) -> ()', 1, 7, "use of undeclared SSA value name"),
    ('"t.a"() : () -> ()\n%0 = "t.b"() : () -> i32\n%0 = "t.b"() : () -> i32', 3, 1, "redefinition of SSA value"),
    ('"t.a"() : (', 1, 12, "expected non-function type"),
    ('"t.a"() {a = } : () -> ()', 1, 14, "expected attribute value"),
    ('%0:2 = "t.a"() : () -> i32', 1, 1, "operation defines 1 results but was provided 2 to bind"),
    ('"t.a"() {a = 1, a = 2} : () -> ()', 1, 17, "duplicate key 'a'"),
    ('"t.a"() {a = 0x7FC000001 : f32} : () -> ()', 1, 14, "hexadecimal float constant out of range"),
])
def test_errors_carry_file_line_col(text, line, col, message):
    with pytest.raises(DiagnosticError) as info:
        parse(text, "in.mlir", allow_unregistered=True)
    diag = info.value.diagnostics[0]
    pos = diag.position()
    assert (pos.line, pos.col) == (line, col)
    assert message in diag.message
    rendered = info.value.render()
    assert rendered.startswith(f"in.mlir:{line}:{col}: error: ")
    assert rendered.splitlines()[-1].endswith("^")


def test_unregistered_dialect_needs_the_flag():
    with pytest.raises(DiagnosticError) as info:
        parse('"t.a"() : () -> ()')
    assert "allow-unregistered-dialect" in str(info.value)


def test_forward_references_resolve_in_graph_like_order():
    text = '"t.graph"() ({\n  "t.use"(%1) : (i32) -> ()\n  %1 = "t.def"() : () -> i32\n}) : () -> ()'
    out = roundtrip(text)
    assert '"t.use"(%0)' in out and '%0 = "t.def"()' in out


def test_forward_reference_with_mismatched_type_is_an_error():
    text = '"t.g"() ({\n  "t.use"(%1) : (f32) -> ()\n  %1 = "t.def"() : () -> i32\n}) : () -> ()'
    with pytest.raises(DiagnosticError) as info:
        parse(text, allow_unregistered=True)
    assert "previously used with type 'f32'" in str(info.value)


def test_2019_function_syntax():
    out = roundtrip("func @f(%a: i32) -> i32 {\n  return %a : i32\n}\nfunc @g(i32) -> i32\n")
    assert "func.func @f(%arg0: i32) -> i32 {" in out
    assert "func.func @g(i32) -> i32" in out


def test_ssa_names_follow_mlir_numbering():
    text = """
    func.func @f() {
      %a = "t.x"() : () -> i32
      "t.r"() ({
        %b = "t.y"() : () -> i32
        "t.end"() : () -> ()
      }) : () -> ()
      %c = "t.z"() : () -> i32
      return
    }
    """
    out = roundtrip(text)
    # Nested regions continue after all of the parent region's values.
    assert '%0 = "t.x"' in out and '%1 = "t.z"' in out and '%2 = "t.y"' in out


@pytest.mark.parametrize("element", ["index", "i8", "si8"])
def test_negative_dense_elements_of_signed_and_index_types(element):
    """Negative dense elements read for index and signed types (index has no signedness)."""
    module = parse(f'"t.a"() {{v = dense<[-1, 3]> : tensor<2x{element}>}} : () -> ()', allow_unregistered=True)
    assert "dense<[-1, 3]>" in print_ir(module)
