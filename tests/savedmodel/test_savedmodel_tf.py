"""SavedModel directories through `egraft-opt DIR -tf-grappler -o OUT`, checked by TensorFlow: the
output loads with `tf.saved_model.load` and its signatures compute what the original's do (3 seeds,
rtol 1e-4); variables stay variables (assigning new values changes both models' outputs alike);
`variables/` is copied byte for byte and `fingerprint.pb` is not carried over."""

from __future__ import annotations

import filecmp
import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from egraft.ir.graphdef import savedmodel as sm
from egraft.passes.cli.main import main

pytestmark = pytest.mark.tf

SEEDS = (0, 1, 2)


def optimize(model: Path, out: Path, *flags: str) -> str:
    err = io.StringIO()
    code = main([str(model), "-tf-grappler", *flags, "-o", str(out)], stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    return err.getvalue()


def _inputs(signature: Any, seed: int) -> dict[str, Any]:
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    _, specs = signature.structured_input_signature
    return {name: tf.constant(rng.normal(size=[2 if d is None else d for d in spec.shape]).astype(np.float32))
            for name, spec in specs.items()}


def assert_same_outputs(original: Any, optimized: Any, keys: list[str]) -> None:
    for key in keys:
        for seed in SEEDS:
            feeds = _inputs(original.signatures[key], seed)
            want = original.signatures[key](**feeds)
            got = optimized.signatures[key](**feeds)
            assert sorted(want) == sorted(got)
            for name in want:
                np.testing.assert_allclose(got[name].numpy(), want[name].numpy(), rtol=1e-4, atol=1e-6,
                                           err_msg=f"signature {key}, output {name}, seed {seed}")


def node_counts(directory: Path) -> tuple[int, int]:
    """(graph nodes, nodes of the library's function bodies) of a SavedModel's serve MetaGraphDef."""
    saved, _ = sm.load_saved_model(directory)
    graph = saved.meta_graphs[sm.select_meta_graph(saved, ["serve"], str(directory))].graph_def
    return len(graph.node), sum(len(f.node_def) for f in graph.library.function)


def test_keras_model_export_loads_and_computes_the_same(tmp_path: Path) -> None:
    import tensorflow as tf

    from tests.savedmodel.models import saved_model

    model = saved_model("keras_cnn")
    out = tmp_path / "opt"
    optimize(model, out)
    assert not (out / sm.FINGERPRINT).exists() and (model / sm.FINGERPRINT).exists()
    assert filecmp.dircmp(model / "variables", out / "variables").diff_files == []
    assert sorted(os.listdir(model / "variables")) == sorted(os.listdir(out / "variables"))
    original, optimized = tf.saved_model.load(str(model)), tf.saved_model.load(str(out))
    assert_same_outputs(original, optimized, ["serving_default"])
    # Variables stay variables: new values reach both models' outputs alike (frozen weights would not).
    assert len(optimized.variables) == len(original.variables) > 0
    for mine, theirs in zip(sorted(original.variables, key=lambda v: v.name),
                            sorted(optimized.variables, key=lambda v: v.name)):
        scaled = mine.numpy() * 1.5 + 0.25
        mine.assign(scaled)
        theirs.assign(scaled)
    assert_same_outputs(original, optimized, ["serving_default"])


def test_two_signatures_chosen_one_kept_and_all_with_star(tmp_path: Path) -> None:
    import tensorflow as tf

    from tests.savedmodel.models import saved_model

    model = saved_model("two_signatures")
    original = tf.saved_model.load(str(model))
    default = tmp_path / "default"
    warnings = optimize(model, default)
    assert "signature 'total' is not in the output" in warnings
    saved, _ = sm.load_saved_model(default)
    assert sm.user_signatures(saved.meta_graphs[0]) == ["serving_default"]
    assert_same_outputs(original, tf.saved_model.load(str(default)), ["serving_default"])
    every = tmp_path / "every"
    assert optimize(model, every, "--tf-savedmodel-signature=*") == ""
    saved, _ = sm.load_saved_model(every)
    assert sm.user_signatures(saved.meta_graphs[0]) == ["serving_default", "total"]
    assert_same_outputs(original, tf.saved_model.load(str(every)), ["serving_default", "total"])
    only_total = tmp_path / "total"
    optimize(model, only_total, "--tf-savedmodel-signature=total")
    assert_same_outputs(original, tf.saved_model.load(str(only_total)), ["total"])


@pytest.mark.parametrize("name", ["tf1_builder", "tf1_control_flow", "tf2_control_flow", "keras_sequence",
                                  "keras_swish"])
def test_savedmodel_through_tf2_load(tmp_path: Path, name: str) -> None:
    """TF1 SavedModels (no object graph: `tf.saved_model.load` wraps the graph itself, running its
    restore op) and TF2 ones with If/While functions (an LSTM's While), optimized, compute the same;
    keras_swish's object graph captures tensors of its functions by name (KeyError at load when
    the optimizer had folded them away)."""
    import tensorflow as tf

    from tests.savedmodel.models import saved_model

    model = saved_model(name)
    out = tmp_path / "opt"
    optimize(model, out)
    assert_same_outputs(tf.saved_model.load(str(model)), tf.saved_model.load(str(out)), ["serving_default"])


def _tf1_session_outputs(directory: Path, x: np.ndarray) -> np.ndarray:
    """serving_default's output as a TF1 loader computes it (TensorFlow Serving's way): the graph
    imported into a session, variables restored by the saver's restore op, the signature's tensors run."""
    import tensorflow as tf

    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], str(directory))
        return _run_signature(sess, meta, x)


@pytest.mark.parametrize("name", ["two_signatures", "tf1_builder"])
def test_round_trip_loads_in_a_tf1_session(tmp_path: Path, name: str) -> None:
    """Without passes the graph, saver and init op come back as they were: a TF1 loader restores the
    variables and runs the signature."""
    from tests.savedmodel.models import saved_model

    model = saved_model(name)
    out = tmp_path / "copy"
    err = io.StringIO()
    assert main([str(model), "-o", str(out)], stdout=io.StringIO(), stderr=err) == 0, err.getvalue()
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(_tf1_session_outputs(out, x), _tf1_session_outputs(model, x), rtol=1e-4)


@pytest.mark.parametrize("name", ["two_signatures", "tf1_builder", "keras_cnn", "tf1_control_flow", "tf2_control_flow",
                                  "keras_sequence"])
def test_optimized_loads_in_a_tf1_session(tmp_path: Path, name: str) -> None:
    """The saver's and init op's nodes are written as they were (`splice`): a TF1 loader restores the
    variables of the optimized SavedModel, and its saver writes a checkpoint the original restores."""
    import tensorflow as tf

    from tests.savedmodel.models import saved_model

    model = saved_model(name)
    out = tmp_path / "opt"
    optimize(model, out)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, *_tf1_input_shape(model))).astype(np.float32)
    np.testing.assert_allclose(_tf1_session_outputs(out, x), _tf1_session_outputs(model, x), rtol=1e-4)
    # Save through the optimized graph's saver after changing the variables; the original restores it.
    (tmp_path / "ckpt").mkdir()
    checkpoint = str(tmp_path / "ckpt" / "variables")
    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], str(out))
        saver = tf.compat.v1.train.Saver(saver_def=meta.saver_def)
        for node in meta.graph_def.node:
            if node.op == "VarHandleOp":
                handle = sess.graph.get_tensor_by_name(node.name + ":0")
                value = sess.run(tf.raw_ops.ReadVariableOp(resource=handle, dtype=node.attr["dtype"].type))
                sess.run(tf.raw_ops.AssignVariableOp(resource=handle, value=(value * 2).astype(value.dtype)))
        want = _run_signature(sess, meta, x)
        saver.save(sess, checkpoint, write_meta_graph=False, write_state=False)
    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], str(model))
        sess.run(meta.saver_def.restore_op_name, {meta.saver_def.filename_tensor_name: checkpoint})
        np.testing.assert_allclose(_run_signature(sess, meta, x), want, rtol=1e-4)


def _tf1_input_shape(model: Path) -> list[int]:
    saved, _ = sm.load_saved_model(model)
    (spec,) = saved.meta_graphs[0].signature_def["serving_default"].inputs.values()
    return [d.size for d in spec.tensor_shape.dim[1:]]


def _run_signature(sess: Any, meta: Any, x: np.ndarray) -> np.ndarray:
    signature = meta.signature_def["serving_default"]
    (feed,) = signature.inputs.values()
    (output,) = signature.outputs.values()
    return sess.run(output.name, {feed.name: x})


def test_descriptor_built_message_matches_tensorflows(tmp_path: Path) -> None:
    """The SavedModel message egraft builds parses TensorFlow's bytes and writes what TensorFlow reads."""
    from tensorflow.core.protobuf import saved_model_pb2

    from tests.savedmodel.models import saved_model

    data = (saved_model("two_signatures") / sm.SAVED_MODEL_PB).read_bytes()
    ours = sm.parse_saved_model(data, "x")
    theirs = saved_model_pb2.SavedModel.FromString(data)
    assert ours.saved_model_schema_version == theirs.saved_model_schema_version == 1
    again = saved_model_pb2.SavedModel.FromString(sm.serialize(ours, "x"))
    assert again == theirs
