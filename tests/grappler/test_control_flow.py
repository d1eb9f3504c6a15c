"""The loop optimizer family of `tf-grappler` (`tf-control-flow`, steps `tf-switch` and
`tf-loop-invariant`): Switches on constant predicates folded with their dead branch, Merges
simplified, identical Switches merged, loop-invariant nodes moved out of while loops.

Deadness: the step alone on generated graphs with Switch/Merge (some predicates constant),
run by tests/islands' reference with deadness on every feed; and on hand-written graphs for
what a fold must refuse or rebuild (a fetched dead branch, a used `value_index`). Marked `tf`:
v1 control-flow graphs TensorFlow builds at test time (cond with a constant or a computed
predicate, a fed predicate that must not fold, nested conds, a while loop), through
`egraft-opt ... -tf-grappler`, then run by TensorFlow against the original (every value of a
fed predicate; the loop runs three iterations or none).
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from egraft.ir import Operation, parse, print_ir
from egraft.ir.verifier import verify
from egraft.passes.cli.main import main
from egraft.rewrite.structural.tf_switch import constant_predicate, fold_switches

from tests.islands.semantics import DEAD
from tests.islands.test_coarsening import _outputs


def _ops(module: Operation) -> Counter[str]:
    return Counter(op.name for op in module.walk())


# ------------------------------------------------------------------ the step on tf_executor graphs


I32, I1 = "tensor<i32>", "tensor<i1>"


@st.composite
def _graphs(draw) -> str:
    """``func @main(%arg0, %arg1: i32, %arg2: i1)`` with Switches on the fed ``%arg2`` or on
    `Less` of values that are often constants, Merges, control operands, and a few fetches
    (a fetched dead branch is never folded, so fetching everything would test nothing)."""
    ints, consts, bools, ctls, lines = ["%arg0", "%arg1"], [], ["%arg2"], [], []
    pick = lambda pool: pool[draw(st.integers(0, len(pool) - 1))]  # noqa: E731

    def island(op: str, args: list[str], types: str, result: str) -> str:
        n = len(lines)
        ctl = draw(st.sampled_from([[]] + [[c] for c in ctls[-2:]]))
        value = f" {{value = dense<{n % 5}> : {I32}}}" if op == "tf.Const" else ""
        lines.append(f"%v{n}, %c{n} = tf_executor.island{'(' + ctl[0] + ')' if ctl else ''} wraps "
                     f"\"{op}\"({', '.join(args)}){value} : ({types}) -> {result}")
        ctls.append(f"%c{n}")
        return f"%v{n}"

    for _ in range(draw(st.integers(3, 14))):
        kind = draw(st.sampled_from(["const", "const", "neg", "add", "less", "switch", "switch", "merge"]))
        n = len(lines)
        if kind == "const":
            consts.append(island("tf.Const", [], "", I32))
            ints.append(consts[-1])
        elif kind == "neg":
            ints.append(island("tf.Neg", [pick(ints)], I32, I32))
        elif kind == "add":
            ints.append(island("tf.AddV2", [pick(ints), pick(ints)], f"{I32}, {I32}", I32))
        elif kind == "less":
            pool = consts if consts and draw(st.booleans()) else ints
            bools.append(island("tf.Less", [pick(pool), pick(pool)], f"{I32}, {I32}", I1))
        elif kind == "switch":
            lines.append(f"%f{n}, %t{n}, %s{n} = tf_executor.Switch {pick(ints)}, {pick(bools)} : {I32}")
            ints += [f"%f{n}", f"%t{n}"]
        else:
            lines.append(f"%m{n}, %i{n}, %mc{n} = tf_executor.Merge {pick(ints)}, {pick(ints)} : {I32}")
            ints.append(f"%m{n}")
    fetched = draw(st.lists(st.sampled_from(ints), min_size=1, max_size=3, unique=True))
    body = "\n    ".join(lines + [f"tf_executor.fetch {', '.join(fetched)} : {', '.join([I32] * len(fetched))}"])
    results = ", ".join([I32] * len(fetched))
    return (f"func.func @main(%arg0: {I32}, %arg1: {I32}, %arg2: {I1}) -> ({results}) {{\n"
            f"  %r:{len(fetched)} = tf_executor.graph {{\n    {body}\n  }}\n"
            f"  func.return {', '.join(f'%r#{i}' for i in range(len(fetched)))} : {results}\n}}\n")


#: Found by CI: a Switch on a constant predicate inside the dead branch of another one folded in
#: the same round (the first fold erased it before the second was planned).
NESTED_CONSTANT_SWITCHES = """func.func @main(%arg0: tensor<i32>, %arg1: tensor<i32>, %arg2: tensor<i1>) -> (tensor<i32>) {
  %r:1 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.Const"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %v4, %c4 = tf_executor.island wraps "tf.Less"(%v0, %v0) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %v6, %c6 = tf_executor.island wraps "tf.Less"(%v0, %v0) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %f7, %t7, %s7 = tf_executor.Switch %arg0, %v6 : tensor<i32>
    %v12, %c12 = tf_executor.island wraps "tf.Neg"(%t7) : (tensor<i32>) -> tensor<i32>
    %f13, %t13, %s13 = tf_executor.Switch %v12, %v4 : tensor<i32>
    tf_executor.fetch %arg0 : tensor<i32>
  }
  func.return %r#0 : tensor<i32>
}
"""


@example(NESTED_CONSTANT_SWITCHES)
@settings(max_examples=150, deadline=None)
@given(_graphs())
def test_deadness_preserved(text: str) -> None:
    """Generated graphs compute the same values, dead or live, on every feed after the step,
    and still verify."""
    module = parse(text)
    before = _outputs(module)
    fold_switches(module)
    verify(module)
    assert _outputs(module) == before, text


CONSTANT = """
func.func @main(%x: tensor<i32>, %y: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %r:2 = tf_executor.graph {
    %three:2 = tf_executor.island wraps "tf.Const"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %two:2 = tf_executor.island wraps "tf.Const"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
    %p:2 = tf_executor.island wraps "tf.Less"(%three#0, %two#0) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %f, %tr, %c = tf_executor.Switch %x, %p#0 : tensor<i32>
    %a:2 = tf_executor.island wraps "tf.Neg"(%f) : (tensor<i32>) -> tensor<i32>
    %b:2 = tf_executor.island wraps "tf.AddV2"(%tr, %y) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %k:2 = tf_executor.island(%b#1) wraps "tf.Const"() {value = dense<7> : tensor<i32>} : () -> tensor<i32>
    %m, %i, %mc = tf_executor.Merge %b#0, %a#0 : tensor<i32>
    %s:2 = tf_executor.island wraps "tf.AddV2"(%m, %i) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    tf_executor.fetch %s#0, %FETCHED : tensor<i32>, tensor<i32>
  }
  func.return %r#0, %r#1 : tensor<i32>, tensor<i32>
}
"""


def _constant(fetched: str) -> Operation:
    return parse(CONSTANT.replace("%FETCHED", fetched))


def test_constant_predicate_is_evaluated() -> None:
    """Less(3, 2) is computed by the interpreter: the Switch takes its false port."""
    switch = next(op for op in _constant("%a#0").walk() if op.name == "tf_executor.Switch")
    assert constant_predicate(switch) is False


def test_dead_branch_removed_and_value_index_kept() -> None:
    """The true branch (AddV2 with y, the Const waiting on it) goes; the Merge becomes the Neg's
    value, and its used value_index the constant 1 (the Neg was its second input)."""
    module = _constant("%a#0")
    before = _outputs(module)
    assert fold_switches(module) == 1
    text = print_ir(module)
    ops = _ops(module)
    assert ops["tf_executor.Switch"] == ops["tf_executor.Merge"] == 0, text
    assert "tf.AddV2\"(%" in text and "dense<7>" not in text and "dense<1> : tensor<i32>" in text, text
    assert _outputs(module) == before


def test_fetched_dead_branch_is_not_folded() -> None:
    """A fetched value of the dead branch: TensorFlow fails to fetch it, and still must."""
    module = _constant("%b#0")
    before = print_ir(module)
    assert fold_switches(module) == 0
    assert print_ir(module) == before
    assert all(outputs[1] == DEAD for outputs in _outputs(module))


FED = """
func.func @main(%x: tensor<i32>, %y: tensor<i32>, %p: tensor<i1>) -> tensor<i32> {
  %r = tf_executor.graph {
    %f, %t, %c = tf_executor.Switch %x, %p : tensor<i32>
    %f2, %t2, %c2 = tf_executor.Switch %x, %p : tensor<i32>
    %a:2 = tf_executor.island wraps "tf.Neg"(%f) : (tensor<i32>) -> tensor<i32>
    %m, %i, %mc = tf_executor.Merge %t2, %a#0 : tensor<i32>
    tf_executor.fetch %m : tensor<i32>
  }
  func.return %r : tensor<i32>
}
"""


def test_fed_predicate_not_folded_identical_switches_merged() -> None:
    module = parse(FED)
    before = _outputs(module)
    assert fold_switches(module) == 1
    assert _ops(module)["tf_executor.Switch"] == 1 and _ops(module)["tf_executor.Merge"] == 1
    assert _outputs(module) == before


# ------------------------------------------------------------------ v1 graphs TensorFlow builds


@contextlib.contextmanager
def _v1_control_flow(tf) -> Iterator[None]:
    """tf.cond / tf.while_loop build Switch/Merge (not If/While) inside this block only."""
    from tensorflow.python.ops import control_flow_util

    saved = control_flow_util.ENABLE_CONTROL_FLOW_V2
    control_flow_util.ENABLE_CONTROL_FLOW_V2 = False
    try:
        yield
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = saved


def _constant_cond(tf, x, p):
    return tf.compat.v1.cond(tf.constant(True), lambda: tf.nn.relu(x) * 2.0, lambda: tf.tanh(x) - 1.0)


def _computed_cond(tf, x, p):
    return tf.compat.v1.cond(tf.constant(3) > tf.constant(4), lambda: tf.nn.relu(x), lambda: tf.tanh(x) - 1.0)


def _fed_cond(tf, x, p):
    both = tf.compat.v1.cond(p, lambda: tf.nn.relu(x) * 2.0, lambda: tf.tanh(x) - 1.0)
    return both + tf.compat.v1.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))


def _nested_cond(tf, x, p):
    cond = tf.compat.v1.cond
    inner = cond(tf.constant(False), lambda: tf.exp(x), lambda: cond(p, lambda: x * 3.0, lambda: x + 1.0) * 2.0)
    return inner + cond(p, lambda: cond(tf.constant(True), lambda: x - 5.0, lambda: x * 7.0), lambda: -x)


def _loop(tf, x, p):
    """A while loop with a loop-invariant product of the fed x (not a constant to fold) and a
    constant-predicate cond in its body; it runs 3 iterations, or none when p is False."""
    def body(i, h):
        k = tf.matmul(tf.transpose(x), x) * 0.25  # loop-invariant: x enters as a constant
        h = tf.compat.v1.cond(tf.constant(True), lambda: tf.tanh(tf.matmul(h, k)), lambda: h * 0.0)
        return i + 1, h

    bound = tf.compat.v1.where(p, 3, 0)
    return tf.compat.v1.while_loop(lambda i, h: i < bound, body, [tf.constant(0), x])[1]


def _graph(tf, build: Callable, path: Path) -> Path:
    graph = tf.Graph()
    with graph.as_default(), _v1_control_flow(tf):
        x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
        p = tf.compat.v1.placeholder(tf.bool, [], name="p")
        tf.identity(build(tf, x, p), name="y")
    path.write_bytes(graph.as_graph_def().SerializeToString())
    return path


def _optimize(source: Path, out: Path, options: str) -> dict[str, int]:
    err = io.StringIO()
    code = main([str(source), "--tf-input-arrays=x,p", "--tf-output-arrays=y", f"-tf-grappler={options}",
                 "-o", str(out)], stdin=lambda: b"", stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    return _histogram(out)


def _histogram(path: Path) -> dict[str, int]:
    from egraft.ir.graphdef import load_graphdef

    return Counter(n.op for n in load_graphdef(path).node)


def _entered_ops(path: Path) -> set[str]:
    """The ops whose value an Enter takes into a loop."""
    from egraft.ir.graphdef import load_graphdef

    nodes = {n.name: n for n in load_graphdef(path).node}
    return {nodes[n.input[0].split(":")[0]].op for n in nodes.values() if n.op == "Enter"}


def _run(tf, path: Path, p: bool) -> np.ndarray:
    graph_def = tf.compat.v1.GraphDef.FromString(path.read_bytes())
    with tf.Graph().as_default() as graph:
        tf.graph_util.import_graph_def(graph_def, name="")
        names = {n.name for n in graph_def.node}
        feeds = {"x:0": np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)}
        if "p" in names:
            feeds["p:0"] = np.array(p)
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run("y:0", feeds)


@pytest.mark.tf
@pytest.mark.parametrize("build, folded", [
    (_constant_cond, True), (_computed_cond, True), (_fed_cond, False), (_nested_cond, True), (_loop, True),
])
def test_tensorflow_computes_the_same(build: Callable, folded: bool, tmp_path: Path) -> None:
    """Outputs equal in TensorFlow for both values of the fed predicate; where a predicate is
    constant, fewer Switches and Merges than with the family off; a fed one keeps its Switch."""
    tf = pytest.importorskip("tensorflow")
    source = _graph(tf, build, tmp_path / "g.pb")
    out = tmp_path / "out.pb"
    off = _optimize(source, tmp_path / "off.pb", "control-flow=false")
    on = _optimize(source, out, "control-flow=true")
    for p in (True, False):
        np.testing.assert_array_equal(_run(tf, out, p), _run(tf, source, p))
    if folded:
        assert on["Merge"] < off["Merge"] and on["Switch"] < off["Switch"], (on, off)
    else:
        assert on["Switch"] >= 1 and on["Merge"] == off["Merge"] == 2, (on, off)
    if build is _loop:  # the invariant product (its last op, the Mul) is computed once, before the loop
        assert "Mul" in _entered_ops(out) and "Mul" not in _entered_ops(tmp_path / "off.pb")
