"""The tfg dialect's syntax, naming and verifiers on small inline inputs."""

import pytest

from egraft.ir import DiagnosticError, parse, print_ir, verify
from egraft.ir.dialects.tfg_types import CONTROL, OPAQUE_TENSOR, are_cast_compatible

GRAPH = "tfg.graph #tf_type.version<producer = 1, min_consumer = 0> {{\n{}\n}}"


def roundtrip(text: str) -> str:
    m = parse(text, "t.mlir")
    verify(m)
    out = print_ir(m)
    assert print_ir(parse(out)) == out
    return out


def body(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines()[2:-2]]


def test_node_form_prints_as_tensorflow():
    out = roundtrip(GRAPH.format(
        '%a, %c = "tfg.placeholder"() {_mlir_name = "x"} : () -> (tensor<*xi32>, !tf_type.control)\n'
        '%s:2, %c2 = Switch(%a, %a) [%c] device("CPU") assigned_device("TPU") name("s") {T = i32} '
        ': (tensor<*xi32>, tensor<*xi32>) -> (tensor<*xi32>, tensor<*xi32>)\n'
        '%c3 = NoOp [%c2]\n%c4 = Print(%s#1) : tensor<*xi32>'))
    assert body(out) == [
        '%placeholder, %ctl = placeholder name("x") : () -> (tensor<*xi32>)',
        '%Switch:2, %ctl_0 = Switch(%placeholder, %placeholder) [%ctl] device("CPU") assigned_device("TPU") '
        'name("s") {T = i32} : (tensor<*xi32>, tensor<*xi32>) -> (tensor<*xi32>, tensor<*xi32>)',
        '%ctl_1 = NoOp [%ctl_0]',
        '%ctl_2 = Print(%Switch#1) : tensor<*xi32>',
    ]


def test_node_attributes_and_results_in_memory():
    m = parse(GRAPH.format('%x, %ctl = Const name("c") {dtype = i32} : () -> (tensor<i32>)'))
    node = m.regions[0].blocks[0].first.regions[0].blocks[0].first
    assert node.name == "tfg.Const"
    assert node.attributes["_mlir_name"].value == "c"
    assert [r.type for r in node.results][-1] is CONTROL


def test_graph_is_unordered_and_accepts_the_readme_spelling():
    out = roundtrip("tfg.graph #tfg.version<producer = 42, min_consumer = 33> {\n"
                    "  %add, %c0 = tfg.AddV2(%a, %a) : (tensor<*xi32>, tensor<*xi32>) -> (tensor<*xi32>)\n"
                    "  %a, %c1 = tfg.placeholder() : () -> (tensor<*xi32>)\n}")
    assert out.splitlines()[1] == "  tfg.graph #tf_type.version<producer = 42, min_consumer = 33> {"
    assert "%AddV2, %ctl = AddV2(%placeholder, %placeholder)" in out


def test_func_hidden_control_arguments():
    text = ('tfg.func @f(%x: tensor<i32> {tfg.name = "in"}, %y: tensor<i32>) -> (tensor<i32>) {\n'
            '  %A, %c = A(%x) [%x.ctl, %y.ctl] : (tensor<i32>) -> (tensor<i32>)\n'
            '  return(%A) [%c {tfg.name = "c"}] : tensor<i32>\n}')
    m = parse(text)
    verify(m)
    func = m.regions[0].blocks[0].first
    assert [a.type for a in func.regions[0].blocks[0].args][1::2] == [CONTROL, CONTROL]
    out = print_ir(m)
    assert "%A, %ctl = A(%in) [%in.ctl, %arg2.ctl]" in out
    assert 'return(%A) [%ctl {tfg.name = "c"}] : tensor<i32>' in out
    assert print_ir(parse(out)) == out


def test_generic_func_and_get_result():
    out = roundtrip('tfg.func generic @g(%a: !tf_type.tensor {tfg.name = "a"}) -> (!tf_type.tensor) {\n'
                    '  %S, %c = Switch(%a, %a) : (!tf_type.tensor, !tf_type.tensor) -> (!tf_type.tensor)\n'
                    '  %t = tfg.get_result %S "output_true" : 0\n'
                    '  return(%t) : !tf_type.tensor\n}')
    assert 'tfg.func generic @g(%a: !tf_type.tensor {tfg.name = "a"})' in out
    assert '%0 = get_result(%Switch) "output_true" : 0' in out


def test_region_ops_round_trip():
    out = roundtrip(GRAPH.format(
        '%c, %x, %ctl = Op : () -> (tensor<i1>, tensor<i32>)\n'
        '%I, %ci = IfRegion %c [%ctl] then {\n yield(%x) : tensor<i32>\n} else {\n yield(%x) [%ctl] : tensor<i32>\n'
        '} : (tensor<i1>) -> (tensor<i32>)\n'
        '%W, %cw = WhileRegion(%x) {\n^bb0(%a: tensor<i32>, %b: !tf_type.control):\n'
        ' condition %c : tensor<i1> (%a) : tensor<i32>\n} do {\n^bb0(%a: tensor<i32>, %b: !tf_type.control):\n'
        ' yield(%a) [%b] : tensor<i32>\n} {parallel_iterations = 10 : i64} : (tensor<i32>) -> (tensor<i32>)'))
    assert "IfRegion %Op#0 [%ctl] then {" in out
    assert "} do {" in out and "condition %Op#0 : tensor<i1> (%arg0) : tensor<i32>" in out


@pytest.mark.parametrize("text,message", [
    ("tfg.graph {\n}", "1:11: error: invalid kind of attribute specified"),
    ("tfg.graph #tf_type.version<producer = 1> {\n}", "expected ',' in tf_type version"),
    (GRAPH.format("%a, %c = A(%b) : (tensor<i32>, tensor<i32>) -> (tensor<i32>)"),
     "got 1 non-control operands, but the type defines 2 input types"),
    ("tfg.func @f() {\n}", "error: 'tfg.func' op expects a non-empty block"),
    ("tfg.func @f() {\n  %c = NoOp\n}", "expects body to be terminated with a tfg.return, but got: tfg.NoOp"),
    (GRAPH.format('%c = "tfg.A"() {_mlir_name = ""} : () -> (!tf_type.control)'),
     "_mlir_name has empty value. Only insert this attribute when it has a value"),
])
def test_errors_are_positioned_diagnostics(text, message):
    with pytest.raises(DiagnosticError) as info:
        verify(parse(text, "t.mlir"))
    assert message in str(info.value)
    assert str(info.value).startswith("t.mlir:")


def test_functional_op_signature_checks_name_the_callee():
    text = ('tfg.func @body(%i: tensor<f32>) -> (tensor<f32>) {\n  return(%i) : tensor<f32>\n}\n'
            'tfg.func @t(%i: tensor<i32>) -> (tensor<i32>) {\n'
            '  %W, %c = While(%i) {body = #tf_type.func<@body, {}>, cond = #tf_type.func<@body, {}>, '
            'parallel_iterations = 10 : i64} : (tensor<i32>) -> (tensor<i32>)\n  return(%W) : tensor<i32>\n}')
    with pytest.raises(DiagnosticError) as info:
        verify(parse(text, "t.mlir"))
    assert str(info.value).startswith("t.mlir:5:12: error: 'tfg.While' op cond function argument #0 type "
                                      "'tensor<f32>' is not compatible with corresponding operand type")
    note = info.value.diagnostics[0].notes[0]
    assert note.message == "see referenced function" and note.position().line == 1


@pytest.mark.parametrize("a,b,ok", [
    ("tensor<*xf32>", "tensor<2x?xf32>", True),
    ("tensor<2xf32>", "tensor<3xf32>", False),
    ("tensor<i32>", "tensor<f32>", False),
    ("tensor<*x!tf_type.resource>", "tensor<*x!tf_type.resource<tensor<32xf32>>>", True),
    ("tensor<!tf_type.variant<tensor<2xi32>>>", "tensor<!tf_type.variant>", True),
    ("!tf_type.tensor", "tensor<i32>", False),
])
def test_cast_compatibility(a, b, ok):
    from egraft.ir.syntax.parser import Parser

    assert are_cast_compatible(Parser(a).parse_type(), Parser(b).parse_type()) is ok
    assert OPAQUE_TENSOR is Parser("!tfg.tensor").parse_type()


def test_large_graph_parses_and_prints_in_linear_time():
    n = 20000
    lines = ['%c0, %k0 = Const : () -> (tensor<f32>)']
    lines += [f'%c{i}, %k{i} = Neg(%c{i - 1}) [%k{i - 1}] name("n{i}") {{T = f32}} : (tensor<f32>) -> (tensor<f32>)'
              for i in range(1, n)]
    m = parse(GRAPH.format("\n".join(lines)))
    verify(m)
    out = print_ir(m)
    assert out.count("\n") == n + 4
