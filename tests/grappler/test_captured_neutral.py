"""`tf-captured-neutral` (rewrite/structural/tf_captured_neutral.py): ``x * 1`` and ``MatMul + 0``
whose constant comes from another island (or an Enter), folded with the island made to wait on
the constant's producer.

Deadness: generated graphs whose constants hang on Switch outputs by control edges (so they are
dead with a branch), run by the deadness reference of tests/islands (floats and MatMul of
scalars added for the test) on every feed; hand-written cases for what must not fold. The
Enter case runs in TensorFlow on cflow_v1 (tests/grappler/test_switch_pins.py).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import Operation, parse
from egraft.ir.verifier import verify
from egraft.rewrite.structural.tf_captured_neutral import fold_captured_neutral

from tests.islands import semantics
from tests.islands.semantics import run_graph

F32 = "tensor<f32>"
FEEDS = list(itertools.product([0.5, -2.0], [3.0, -0.0], [False, True]))


@pytest.fixture(autouse=True)
def _float_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference reads float splats and multiplies scalars for MatMul (1x1 matrices)."""
    def const(op, a):
        text = str(op.attr("value")).split("<")[1].split(">")[0]
        return {"true": True, "false": False}.get(text, None) if text in ("true", "false") else float(text)
    monkeypatch.setitem(semantics._OPS, "tf.Const", const)
    monkeypatch.setitem(semantics._OPS, "tf.Mul", lambda op, a: a[0] * a[1])
    monkeypatch.setitem(semantics._OPS, "tf.AddV2", lambda op, a: a[0] + a[1])
    monkeypatch.setitem(semantics._OPS, "tf.MatMul", lambda op, a: a[0] * a[1])


def _outputs(module: Operation) -> list[list]:
    func = next(op for op in module.walk() if op.name == "func.func")
    graph = next(op for op in module.walk() if op.name == "tf_executor.graph")
    args = func.regions[0].blocks[0].args
    return [run_graph(graph, dict(zip(args, feed))) for feed in FEEDS]


def _module(lines: list[str], fetched: list[str]) -> Operation:
    body = "\n    ".join(lines + [f"tf_executor.fetch {', '.join(fetched)} : {', '.join([F32] * len(fetched))}"])
    results = ", ".join([F32] * len(fetched))
    return parse(f"func.func @main(%arg0: {F32}, %arg1: {F32}, %arg2: tensor<i1>) -> ({results}) {{\n"
                 f"  %r:{len(fetched)} = tf_executor.graph {{\n    {body}\n  }}\n"
                 f"  func.return {', '.join(f'%r#{i}' for i in range(len(fetched)))} : {results}\n}}\n")


def _ops(module: Operation) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("tf.")]


SWITCH = "%f, %t, %sc = tf_executor.Switch %arg0, %arg2 : tensor<f32>"
PIVOT = '%p:2 = tf_executor.island wraps "tf.Identity"(%t) : (tensor<f32>) -> tensor<f32>'


def test_mul_by_a_dead_branch_constant_folds_and_waits_on_it() -> None:
    """x * c where c hangs on the true branch: folded, and x * 1 stays dead when the branch is."""
    module = _module([SWITCH, PIVOT,
                      '%c:2 = tf_executor.island(%p#1) wraps "tf.Const"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>',
                      '%m:2 = tf_executor.island wraps "tf.Mul"(%arg1, %c#0) : (tensor<f32>, tensor<f32>) -> tensor<f32>'],
                     ["%m#0"])
    before = _outputs(module)
    assert fold_captured_neutral(module) == 1
    verify(module)
    assert _outputs(module) == before
    assert "tf.Mul" not in _ops(module)


@pytest.mark.parametrize("value, shape", [("2.0", ""), ("1.0", "2x"), ("-0.0", "")])
def test_mul_by_other_constants_stays(value: str, shape: str) -> None:
    module = _module([f'%c:2 = tf_executor.island wraps "tf.Const"() {{value = dense<{value}> : tensor<{shape}f32>}} '
                      f': () -> tensor<{shape}f32>',
                      f'%m:2 = tf_executor.island wraps "tf.Mul"(%arg1, %c#0) : (tensor<f32>, tensor<{shape}f32>) '
                      f'-> tensor<f32>'], ["%m#0"])
    assert fold_captured_neutral(module) == 0


def test_mul_by_a_switch_output_stays() -> None:
    """A Switch output is never followed to its data: its other port is dead, not a 1."""
    module = _module(['%c:2 = tf_executor.island wraps "tf.Const"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>',
                      "%cf, %ct, %cc = tf_executor.Switch %c#0, %arg2 : tensor<f32>",
                      '%m:2 = tf_executor.island wraps "tf.Mul"(%arg1, %ct) : (tensor<f32>, tensor<f32>) -> tensor<f32>'],
                     ["%m#0"])
    assert fold_captured_neutral(module) == 0


def _matmul_add(zeros: str, w_shape: str = "1x1") -> Operation:
    return _module([SWITCH, PIVOT,
                    f'%w:2 = tf_executor.island wraps "tf.Const"() {{value = dense<1.0> : tensor<{w_shape}xf32>}} '
                    f': () -> tensor<{w_shape}xf32>',
                    f'%z:2 = tf_executor.island(%p#1) wraps "tf.Const"() {{value = dense<0.0> : {zeros}}} : () -> {zeros}',
                    '%a:2 = tf_executor.island {\n'
                    f'      %mm = "tf.MatMul"(%arg1, %w#0) : (tensor<f32>, tensor<{w_shape}xf32>) -> tensor<f32>\n'
                    f'      %s = "tf.AddV2"(%mm, %z#0) : (tensor<f32>, {zeros}) -> tensor<f32>\n'
                    '      tf_executor.yield %s : tensor<f32> }'], ["%a#0"])


@pytest.mark.parametrize("zeros", ["tensor<f32>", "tensor<1xf32>", "tensor<1x1xf32>"])
def test_matmul_plus_zeros_folds(zeros: str) -> None:
    module = _matmul_add(zeros)
    before = _outputs(module)
    assert fold_captured_neutral(module) == 1
    verify(module)
    assert _outputs(module) == before
    assert "tf.AddV2" not in _ops(module)


@pytest.mark.parametrize("zeros, w_shape", [("tensor<2xf32>", "1x1"),   # broadcasts [r,1] to [r,2]
                                            ("tensor<2x1xf32>", "1x1"),  # may broadcast the rows
                                            ("tensor<1x1x1xf32>", "1x1")])  # raises the rank
def test_zeros_that_may_broadcast_stay(zeros: str, w_shape: str) -> None:
    assert fold_captured_neutral(_matmul_add(zeros, w_shape)) == 0


@st.composite
def _graphs(draw) -> tuple[list[str], list[str]]:
    """Switches on the fed predicate, pivots (Identity of a Switch output), constants (1.0,
    2.0, 0.0 of a few shapes) hanging on pivots or not, and Mul/MatMul+AddV2 islands reading them."""
    lines = [SWITCH, PIVOT, '%q:2 = tf_executor.island wraps "tf.Identity"(%f) : (tensor<f32>) -> tensor<f32>',
             '%w:2 = tf_executor.island wraps "tf.Const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>']
    floats, ctls, fetched = ["%arg0", "%arg1", "%t", "%f", "%p#0", "%q#0"], ["%p#1", "%q#1"], []
    pick = lambda pool: pool[draw(st.integers(0, len(pool) - 1))]  # noqa: E731
    for n in range(draw(st.integers(1, 6))):
        ctl = draw(st.sampled_from([""] + [f"({c})" for c in ctls]))
        value = draw(st.sampled_from(["1.0", "1.0", "2.0"]))
        lines.append(f'%k{n}:2 = tf_executor.island{ctl} wraps "tf.Const"() {{value = dense<{value}> : tensor<f32>}} '
                     f': () -> tensor<f32>')
        if draw(st.booleans()):
            lines.append(f'%m{n}:2 = tf_executor.island wraps "tf.Mul"({pick(floats)}, %k{n}#0) '
                         f': (tensor<f32>, tensor<f32>) -> tensor<f32>')
        else:
            zctl = draw(st.sampled_from([""] + [f"({c})" for c in ctls]))
            lines.append(f'%z{n}:2 = tf_executor.island{zctl} wraps "tf.Const"() {{value = dense<0.0> : tensor<1xf32>}} '
                         f': () -> tensor<1xf32>')
            lines.append(f'%m{n}:2 = tf_executor.island {{\n'
                         f'      %mm{n} = "tf.MatMul"({pick(floats)}, %w#0) : (tensor<f32>, tensor<1x1xf32>) -> tensor<f32>\n'
                         f'      %s{n} = "tf.AddV2"(%z{n}#0, %mm{n}) : (tensor<1xf32>, tensor<f32>) -> tensor<f32>\n'
                         f'      tf_executor.yield %s{n} : tensor<f32> }}')
        floats.append(f"%m{n}#0")
        ctls.append(f"%m{n}#1")
        fetched.append(f"%m{n}#0")
    return lines, draw(st.lists(st.sampled_from(fetched), min_size=1, max_size=3, unique=True))


@settings(max_examples=100, deadline=None)
@given(_graphs())
def test_deadness_preserved(graph: tuple[list[str], list[str]]) -> None:
    module = _module(*graph)
    before = _outputs(module)
    fold_captured_neutral(module)
    verify(module)
    assert _outputs(module) == before, graph


def _branch_add(through: str) -> Operation:
    """zeros made in the island added to Neg/Squeeze of a Switch output of a MatMul in another island."""
    return _module([
        '%w:2 = tf_executor.island wraps "tf.Const"() {value = dense<1.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>',
        '%mm:2 = tf_executor.island wraps "tf.MatMul"(%arg1, %w#0) : (tensor<f32>, tensor<1x1xf32>) -> tensor<f32>',
        "%f, %t, %sc = tf_executor.Switch %mm#0, %arg2 : tensor<f32>",
        '%a:2 = tf_executor.island {\n'
        f'      %u = "{through}"(%f) : (tensor<f32>) -> tensor<f32>\n'
        '      %z = "tf.Const"() {value = dense<0.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>\n'
        '      %s = "tf.AddV2"(%u, %z) : (tensor<f32>, tensor<1x1xf32>) -> tensor<f32>\n'
        '      tf_executor.yield %s : tensor<f32> }'], ["%a#0"])


def test_zeros_made_in_the_island_fold_through_switch_and_unary_ops() -> None:
    """The branch's zeros_like + x where x is a unary op of a Switch output of a MatMul [rows, n]:
    the shape is followed across islands (only the shape: the zeros are the island's own)."""
    module = _branch_add("tf.Neg")
    before = _outputs(module)
    assert fold_captured_neutral(module) == 1
    verify(module)
    assert _outputs(module) == before
    assert _ops(module).count("tf.AddV2") == 0 and _ops(module).count("tf.Const") == 1


def test_zeros_after_a_shape_changing_op_stay() -> None:
    assert fold_captured_neutral(_branch_add("tf.Squeeze")) == 0  # [1, n] may lose its 1
