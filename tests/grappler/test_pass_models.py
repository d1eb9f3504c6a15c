"""`-tf-grappler` with its defaults (islands coarsened; common-subgraph elimination, constant
and batchnorm folding, the dependency optimizer) on graphs TensorFlow builds at test time:
a small Keras model with BatchNorms, and a v1 graph with a cond and a while loop (Switch,
Merge, Enter/Exit frames). Each comes out smaller and computes the same in TensorFlow."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from egraft.passes.cli.main import main

from .keras_models import frozen, randomize_batchnorms

pytestmark = pytest.mark.tf


def _optimize(graph, feeds: list[str], fetches: list[str], tmp_path: Path):
    """``graph`` (a tf GraphDef) through egraft-opt -tf-grappler; the optimized GraphDef."""
    tf = pytest.importorskip("tensorflow")
    src, out = tmp_path / "in.pb", tmp_path / "out.pb"
    src.write_bytes(graph.SerializeToString())
    err = io.StringIO()
    code = main([str(src), f"--tf-input-arrays={','.join(feeds)}", f"--tf-output-arrays={','.join(fetches)}",
                 "-tf-grappler", "-o", str(out)], stdin=lambda: b"", stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    return tf.compat.v1.GraphDef.FromString(out.read_bytes())


def _run(graph, feeds: dict, fetches: list[str]) -> list[np.ndarray]:
    tf = pytest.importorskip("tensorflow")
    with tf.Graph().as_default() as g:
        tf.compat.v1.import_graph_def(graph, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            return sess.run([f + ":0" for f in fetches], {k + ":0": v for k, v in feeds.items()})


def _keras_graph():
    """A Conv2D / DepthwiseConv2D / Dense model with BatchNorms of random statistics, frozen."""
    tf = pytest.importorskip("tensorflow")

    keras = tf.keras
    tf.random.set_seed(1)
    rng = np.random.default_rng(1)
    inputs = keras.Input((8, 8, 3), batch_size=1)
    h = keras.layers.Conv2D(4, 3, padding="same", use_bias=False)(inputs)
    h = keras.layers.ReLU(6.0)(keras.layers.BatchNormalization()(h))
    h = keras.layers.DepthwiseConv2D(3, padding="same")(h)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    outputs = keras.layers.Softmax()(keras.layers.Dense(5)(h))
    model = keras.Model(inputs, outputs)
    randomize_batchnorms(model, rng)
    return frozen(model, (1, 8, 8, 3), name="x")


def test_keras_model_shrinks_and_agrees(tmp_path: Path) -> None:
    graph, feed, fetch = _keras_graph()
    out = _optimize(graph, [feed], [fetch], tmp_path)
    before, after = [n.op for n in graph.node], [n.op for n in out.node]
    assert len(after) < len(before) // 2, (len(before), len(after))
    assert "Rsqrt" in before and "Rsqrt" not in after and "Identity" not in after[:-1], after
    for seed in range(3):
        x = np.random.default_rng(seed).normal(0, 1, (1, 8, 8, 3)).astype(np.float32)
        np.testing.assert_allclose(_run(out, {feed: x}, [fetch])[0], _run(graph, {feed: x}, [fetch])[0],
                                   rtol=1e-4, atol=1e-5)


def _v1_control_flow_graph():
    """x, n -> a cond on sum(x) > 0 and a while loop of n steps whose body holds constants
    and an inner cond (v1 control flow: Switch/Merge, Enter/Exit/NextIteration frames)."""
    tf = pytest.importorskip("tensorflow")
    with tf.Graph().as_default() as g:
        with tf.compat.v1.variable_scope("m"):
            x = tf.compat.v1.placeholder(tf.float32, [1, 4], name="x")
            n = tf.compat.v1.placeholder(tf.int32, [], name="n")
            w = tf.constant(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4))
            scale = tf.constant(2.0) * tf.constant(0.5)  # folds
            y = tf.compat.v1.cond(tf.reduce_sum(x) > 0.0, lambda: tf.matmul(x, w) * scale, lambda: x - scale)

            def body(i, acc):
                step = tf.compat.v1.cond(tf.equal(i % 2, 0), lambda: tf.tanh(acc) * 3.0, lambda: acc + 1.0)
                return i + 1, step * (tf.constant(0.25) + tf.constant(0.25))

            _, acc = tf.compat.v1.while_loop(lambda i, a: i < n, body, [tf.constant(0), y])
        tf.identity(acc, name="acc")
        tf.identity(y, name="y")
    return g.as_graph_def()


def test_v1_control_flow_stays_correct(tmp_path: Path) -> None:
    graph = _v1_control_flow_graph()
    out = _optimize(graph, ["m/x", "m/n"], ["y", "acc"], tmp_path)
    assert len(out.node) < len(graph.node), (len(graph.node), len(out.node))
    for seed, n in [(0, 0), (1, 1), (2, 4), (3, 5)]:
        for sign in (1.0, -1.0):
            x = sign * np.abs(np.random.default_rng(seed).normal(0, 1, (1, 4))).astype(np.float32)
            feeds = {"m/x": x, "m/n": np.int32(n)}
            for a, b in zip(_run(out, feeds, ["y", "acc"]), _run(graph, feeds, ["y", "acc"])):
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
