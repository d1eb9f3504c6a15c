"""-tf-grappler on GraphDefs with function libraries, built by TensorFlow at test time: a
tf.function with nested tf.cond and tf.while_loop kept functional (If/While calling library
functions), one calling a shared sub-function twice (PartitionedCall), conds on a constant
and on a constant-foldable predicate. Each computes what the original does in TensorFlow (3
seeds, rtol 1e-4); calls are inlined, constant conds folded to their branch, what is left of
the library is optimized inside (function bodies count in the node totals)."""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from egraft.passes.cli.main import main

pytestmark = pytest.mark.tf

W = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)


def nodes(graph) -> int:
    """Nodes of a GraphDef, function bodies included."""
    return len(graph.node) + sum(len(f.node_def) for f in graph.library.function)


def ops(graph) -> list[str]:
    return [n.op for n in graph.node] + [n.op for f in graph.library.function for n in f.node_def]


def _tf():
    tf = pytest.importorskip("tensorflow")
    return tf


def _graph_def(fn, shape=(2, 4), freeze: bool = False):
    """(GraphDef with its library, feed, fetch) of tf.function ``fn`` on a float32 input;
    ``freeze`` turns variables into constants (v2 control flow kept functional)."""
    tf = _tf()
    concrete = fn.get_concrete_function(tf.TensorSpec(shape, tf.float32, name="x"))
    if freeze:
        from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

        concrete = convert_variables_to_constants_v2(concrete, lower_control_flow=False)
    return (concrete.graph.as_graph_def(), concrete.inputs[0].name.split(":")[0],
            concrete.outputs[0].name.split(":")[0])


@cache
def nested_control_flow():
    """x -> a cond on a constant, a data-dependent cond holding another cond, a while loop of
    three steps; each branch and the body hold constant subexpressions to fold. Variables
    frozen, control flow not lowered: If/StatelessIf/StatelessWhile call library functions."""
    tf = _tf()
    w = tf.Variable(W)

    @tf.function
    def f(x):
        y = tf.matmul(x, w)
        y = tf.cond(tf.constant(True), lambda: y * (tf.constant(2.0) * tf.constant(0.5)) + 1.0, lambda: y - 1.0)
        y = tf.cond(tf.reduce_sum(y) > 0,
                    lambda: tf.identity(y) * (tf.constant(3.0) - tf.constant(1.0)),
                    lambda: tf.cond(tf.reduce_sum(x) > 0, lambda: y + tf.constant(1.5) * 2.0, lambda: y - 3.0))

        def body(i, y):
            return i + 1, y * (tf.constant(4.0) / tf.constant(8.0)) + tf.reduce_mean(y)

        return tf.while_loop(lambda i, y: i < 3, body, [tf.constant(0), y])[1]

    return _graph_def(f, freeze=True)


@cache
def shared_function():
    """x -> relu(x W + b) computed by one tf.function called twice (PartitionedCall)."""
    tf = _tf()

    @tf.function
    def dense(x):
        return tf.nn.relu(tf.matmul(x, tf.constant(W)) + tf.constant(0.25) * tf.constant(2.0))

    @tf.function
    def f(x):
        return dense(x) + dense(x * 2.0)

    return _graph_def(f)


@cache
def foldable_predicate():
    """A cond whose predicate is computed from constants only (TF #47256): Grappler folds the
    predicate, then the If to its branch."""
    tf = _tf()

    @tf.function
    def f(x):
        pred = tf.reduce_sum(tf.constant([1.0, -3.0])) > 0.0
        return tf.cond(pred, lambda: tf.sin(x), lambda: tf.cos(x) * 2.0)

    return _graph_def(f)


def optimize(graph, feed: str, fetch: str, tmp_path: Path, options: str = ""):
    """``graph`` through egraft-opt -tf-grappler; the optimized GraphDef."""
    tf = _tf()
    src, out = tmp_path / "in.pb", tmp_path / "out.pb"
    src.write_bytes(graph.SerializeToString())
    err = io.StringIO()
    code = main([str(src), f"--tf-input-arrays={feed}", f"--tf-output-arrays={fetch}",
                 "-tf-grappler" + (f"={options}" if options else ""), "-o", str(out)],
                stdin=lambda: b"", stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    return tf.compat.v1.GraphDef.FromString(out.read_bytes())


def run(graph, feed: str, fetch: str, x: np.ndarray) -> np.ndarray:
    tf = _tf()
    with tf.Graph().as_default() as g:
        tf.compat.v1.import_graph_def(graph, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            return sess.run(f"{fetch}:0", {f"{feed}:0": x})


def assert_same_outputs(before, after, feed: str, fetch: str, shape=(2, 4)) -> None:
    for seed in range(3):
        x = np.random.default_rng(seed).normal(0, 1, shape).astype(np.float32)
        np.testing.assert_allclose(run(after, feed, fetch, x), run(before, feed, fetch, x), rtol=1e-4, atol=1e-5)


def _function(graph, prefix: str):
    found = [f for f in graph.library.function if f.signature.name.startswith(prefix)]
    assert len(found) == 1, [f.signature.name for f in graph.library.function]
    return found[0]


def test_nested_cond_and_while(tmp_path: Path) -> None:
    graph, feed, fetch = nested_control_flow()
    out = optimize(graph, feed, fetch, tmp_path)
    assert_same_outputs(graph, out, feed, fetch)
    assert nodes(out) < nodes(graph), (nodes(graph), nodes(out))
    # the cond on a constant is gone with its two branches; the data-dependent ones stay
    assert sum(op in ("If", "StatelessIf") for op in ops(graph)) == 3
    assert sum(op in ("If", "StatelessIf") for op in ops(out)) == 2
    assert len(out.library.function) == len(graph.library.function) - 2
    # the functional While's body was optimized in place: 4.0 / 8.0 folded, its name and signature kept
    body_before, body_after = _function(graph, "while_body"), _function(out, "while_body")
    assert body_after.signature == body_before.signature
    assert "RealDiv" in [n.op for n in body_before.node_def]
    assert "RealDiv" not in [n.op for n in body_after.node_def]
    assert len(body_after.node_def) < len(body_before.node_def)
    # and so were the branches of the data-dependent conds: 3.0 - 1.0 folded in the true branch
    true_before = [f for f in graph.library.function if "Sub" in [n.op for n in f.node_def]
                   and "Identity" in [n.op for n in f.node_def] and f.signature.name.startswith("cond_1_true")]
    assert true_before, [f.signature.name for f in graph.library.function]
    true_after = _function(out, true_before[0].signature.name)
    assert "Sub" not in [n.op for n in true_after.node_def]


def test_shared_function_is_inlined_twice(tmp_path: Path) -> None:
    graph, feed, fetch = shared_function()
    assert [n.op for n in graph.node].count("PartitionedCall") == 2
    out = optimize(graph, feed, fetch, tmp_path)
    assert_same_outputs(graph, out, feed, fetch)
    assert "PartitionedCall" not in ops(out) and not out.library.function
    # the two copies' constants were folded and shared: one weight, one bias, two MatMuls
    assert ops(out).count("MatMul") == 2 and ops(out).count("Mul") <= 1
    assert nodes(out) < nodes(graph)
    names = [n.name for n in out.node]
    assert len(set(names)) == len(names)


def test_shared_function_kept_when_functions_off(tmp_path: Path) -> None:
    graph, feed, fetch = shared_function()
    out = optimize(graph, feed, fetch, tmp_path, "function=false")
    assert [n.op for n in out.node].count("PartitionedCall") == 2
    assert_same_outputs(graph, out, feed, fetch)
    # the families still ran inside the shared body: 0.25 * 2.0 folded
    body = out.library.function[0]
    assert "Mul" not in [n.op for n in body.node_def], [n.op for n in body.node_def]


def test_constant_foldable_predicate(tmp_path: Path) -> None:
    graph, feed, fetch = foldable_predicate()
    assert "StatelessIf" in [n.op for n in graph.node]
    out = optimize(graph, feed, fetch, tmp_path)
    assert_same_outputs(graph, out, feed, fetch)
    assert not {"If", "StatelessIf"} & set(ops(out)) and not out.library.function
    assert "Cos" in ops(out) and "Sin" not in ops(out)


@cache
def direct_calls():
    """A v1 graph calling a Defun function directly (the node's op is the function's name) twice."""
    tf = _tf()
    from tensorflow.python.framework import function

    with tf.Graph().as_default() as g:
        @function.Defun(tf.float32, tf.float32)
        def scale(a, b):
            return a * b + tf.constant(1.0) * tf.constant(2.0)

        x = tf.compat.v1.placeholder(tf.float32, [2, 4], name="x")
        tf.identity(scale(x, tf.constant(3.0)) + scale(x, x), name="y")
    return g.as_graph_def(), "x", "y"


def test_direct_calls_are_inlined(tmp_path: Path) -> None:
    graph, feed, fetch = direct_calls()
    name = graph.library.function[0].signature.name
    assert [n.op for n in graph.node].count(name) == 2
    out = optimize(graph, feed, fetch, tmp_path)
    assert_same_outputs(graph, out, feed, fetch)
    assert name not in ops(out) and not out.library.function


@cache
def noinline_call():
    """A tf.function calling one that says `_noinline` (a FunctionDef attribute)."""
    tf = _tf()

    @tf.function(experimental_attributes={"_noinline": True})
    def g(x):
        return x * (tf.constant(2.0) + tf.constant(1.0))

    @tf.function
    def f(x):
        return g(x) + 1.0

    return _graph_def(f)


def test_noinline_function_is_kept_and_optimized_inside(tmp_path: Path) -> None:
    graph, feed, fetch = noinline_call()
    out = optimize(graph, feed, fetch, tmp_path)
    assert_same_outputs(graph, out, feed, fetch)
    assert "PartitionedCall" in [n.op for n in out.node]
    (body,) = out.library.function
    assert body.signature == graph.library.function[0].signature and body.attr["_noinline"].b
    assert "AddV2" not in [n.op for n in body.node_def]  # 2.0 + 1.0 folded inside the kept function


# ------------------------------------------------------------------ generated tf.functions

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: Elementwise bodies a branch, a callee or a loop body applies (index -> function of y).
_BODIES = (lambda tf, y: y * 0.5 + 1.0, lambda tf, y: tf.tanh(y) - y, lambda tf, y: tf.abs(y) * (2.0 * 1.5),
           lambda tf, y: tf.identity(y) + tf.reduce_mean(y))

_STEP = st.one_of(
    st.tuples(st.just("cond_const"), st.booleans(), st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.just("cond_data"), st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.just("cond_folded"), st.floats(-2, 2, allow_nan=False), st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.just("case_const"), st.integers(-1, 3), st.lists(st.integers(0, 3), min_size=1, max_size=3)),
    st.tuples(st.just("case_data"), st.lists(st.integers(0, 3), min_size=2, max_size=3)),
    st.tuples(st.just("call"), st.integers(0, 3)),
    st.tuples(st.just("while"), st.integers(0, 3), st.integers(0, 3)),
)


def _program(steps: list[tuple]):
    """A tf.function applying ``steps`` to its input: conds on constants, on data and on
    predicates computed from constants only, switch_case on constant and data indexes (out of
    range included), calls of shared tf.functions, while loops; returned as a GraphDef."""
    tf = _tf()
    shared = [tf.function(lambda y, k=k: _BODIES[k](tf, y)) for k in range(len(_BODIES))]

    def branch(k):
        return lambda y: _BODIES[k](tf, y)

    @tf.function
    def f(x):
        y = x
        for step in steps:
            kind = step[0]
            if kind == "cond_const":
                y = tf.cond(tf.constant(step[1]), lambda y=y: branch(step[2])(y), lambda y=y: branch(step[3])(y))
            elif kind == "cond_data":
                y = tf.cond(tf.reduce_sum(y) > 0, lambda y=y: branch(step[1])(y), lambda y=y: branch(step[2])(y))
            elif kind == "cond_folded":
                pred = tf.reduce_sum(tf.constant([step[1], 0.25])) > 0.0
                y = tf.cond(pred, lambda y=y: branch(step[2])(y), lambda y=y: branch(step[3])(y))
            elif kind in ("case_const", "case_data"):
                index = tf.constant(step[1]) if kind == "case_const" else \
                    tf.cast(tf.reduce_sum(y) > 0, tf.int32) + tf.cast(tf.reduce_max(y) > 1, tf.int32)
                y = tf.switch_case(index, [lambda y=y, k=k: branch(k)(y) for k in step[-1]])
            elif kind == "call":
                y = shared[step[1]](y)
            else:
                y = tf.while_loop(lambda i, y: i < step[1], lambda i, y: (i + 1, branch(step[2])(y)),
                                  [tf.constant(0), y])[1]
        return tf.identity(y)

    return _graph_def(f)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(_STEP, min_size=1, max_size=4))
def test_generated_functions_agree(steps: list[tuple]) -> None:
    """TensorFlow computes the same on the optimized GraphDef, for tf.functions drawn from
    the steps above (derandomized: the same 8 programs each run)."""
    import tempfile

    graph, feed, fetch = _program(steps)
    with tempfile.TemporaryDirectory() as tmp:
        out = optimize(graph, feed, fetch, Path(tmp))
    assert_same_outputs(graph, out, feed, fetch)
    constant = sum(s[0] in ("cond_const", "cond_folded", "case_const") for s in steps)
    ifs = lambda g: sum(op in ("If", "StatelessIf", "Case", "StatelessCase") for op in ops(g))  # noqa: E731
    assert ifs(out) <= ifs(graph) - constant, (steps, ifs(graph), ifs(out))
    assert "PartitionedCall" not in ops(out) and "StatefulPartitionedCall" not in ops(out)


@pytest.mark.parametrize("pred", [0, 3, -0.0, 0.5, [0.0], []], ids=["0", "3", "-0.0", "0.5", "[0.0]", "[]"])
def test_if_on_non_boolean_constant(pred, tmp_path: Path) -> None:
    """TensorFlow's If on a predicate that is not a boolean scalar: a number is true when
    nonzero, a tensor of another rank when it has elements; the fold takes the same branch."""
    tf = _tf()
    spec = tf.TensorSpec([2, 4], tf.float32)
    then = tf.function(lambda x: x * 2.0).get_concrete_function(spec)
    other = tf.function(lambda x: x - 5.0).get_concrete_function(spec)
    value = np.array(pred, dtype=np.int32 if isinstance(pred, int) else np.float32)

    @tf.function
    def f(x):
        return tf.raw_ops.StatelessIf(cond=tf.constant(value), input=[x], Tout=[tf.float32], then_branch=then,
                                      else_branch=other)[0]

    graph, feed, fetch = _graph_def(f)
    assert "StatelessIf" in ops(graph)
    out = optimize(graph, feed, fetch, tmp_path)
    assert "StatelessIf" not in ops(out)
    assert_same_outputs(graph, out, feed, fetch)


@cache
def keras_recurrent():
    """A Keras LSTM then GRU, frozen with their loops kept functional (While bodies holding
    TensorList reads and writes, the cell's MatMuls and gates)."""
    tf = _tf()
    keras = tf.keras
    tf.random.set_seed(0)
    inputs = keras.Input((12, 8), batch_size=2)
    h = keras.layers.LSTM(16, return_sequences=True)(inputs)
    outputs = keras.layers.Dense(3)(keras.layers.GRU(8)(h))
    model = keras.Model(inputs, outputs)
    return _graph_def(tf.function(lambda x: model(x, training=False)), shape=(2, 12, 8), freeze=True)


def test_keras_recurrent_loop_bodies(tmp_path: Path) -> None:
    graph, feed, fetch = keras_recurrent()
    bodies = {f.signature.name: len(f.node_def) for f in graph.library.function if "body" in f.signature.name}
    assert len(bodies) == 2
    out = optimize(graph, feed, fetch, tmp_path)
    assert_same_outputs(graph, out, feed, fetch, shape=(2, 12, 8))
    after = {f.signature.name: len(f.node_def) for f in out.library.function}
    assert all(after[name] < n for name, n in bodies.items()), (bodies, after)  # optimized in place, names kept
    assert nodes(out) < nodes(graph)


def test_cond_on_static_shape(tmp_path: Path) -> None:
    """TF #47256's case: a cond on the static shape of the fed tensor (tf.shape(x)[0] > 1 with x
    [2, 4]) folds (Shape, StridedSlice, Greater in the first round), then the If to its branch."""
    tf = _tf()

    @tf.function
    def f(x):
        return tf.cond(tf.shape(x)[0] > 1, lambda: tf.sin(x), lambda: tf.cos(x))

    graph, feed, fetch = _graph_def(f)
    out = optimize(graph, feed, fetch, tmp_path)
    assert_same_outputs(graph, out, feed, fetch)
    assert "Sin" in ops(out) and not {"Cos", "If", "StatelessIf", "Shape"} & set(ops(out))
    assert not out.library.function


def test_constant_operands_pushed_into_branches_and_bodies(tmp_path: Path) -> None:
    """A constant the cond's branches and the loop's body compute with (captured: an operand of
    the If/While) is written into them, so w * 2 + 1 and w * w fold inside (Grappler's function
    specialization); TF equal."""
    tf = _tf()

    @tf.function
    def f(x):
        w = tf.constant(np.linspace(-1, 1, 4, dtype=np.float32))
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * (w * 2.0 + 1.0), lambda: x - w)
        return tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * (w * w)), [tf.constant(0), y])[1]

    graph, feed, fetch = _graph_def(f)
    out = optimize(graph, feed, fetch, tmp_path)
    assert_same_outputs(graph, out, feed, fetch)
    body = _function(out, "while_body")
    assert [n.op for n in body.node_def].count("Mul") == 1, [n.op for n in body.node_def]
    true_branch = _function(out, "cond_true")
    assert [n.op for n in true_branch.node_def].count("Mul") == 1 and "AddV2" not in [n.op for n in true_branch.node_def]
