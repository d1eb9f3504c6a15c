"""SavedModels built by TensorFlow at test time, cached (no model files in the repository).

Each builder writes a SavedModel directory; :func:`saved_model` builds it once per TensorFlow and
Keras version into ``$EGRAFT_TFMODELS_CACHE`` (default ``~/.cache/egraft-tfmodels``) under
``savedmodels/``, built in a temporary directory and renamed, so a run cut short leaves no half
model.  Raising :data:`VERSION` rebuilds them all.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

VERSION = 1


def cache_root() -> Path:
    import keras
    import tensorflow as tf

    base = Path(os.environ.get("EGRAFT_TFMODELS_CACHE", Path.home() / ".cache" / "egraft-tfmodels"))
    return base / f"savedmodels-tf{tf.__version__}-keras{keras.__version__}-v{VERSION}"


def saved_model(name: str) -> Path:
    """The cached SavedModel directory ``name`` (a key of :data:`BUILDERS`), built if missing."""
    target = cache_root() / name
    if not (target / "saved_model.pb").is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
        try:
            BUILDERS[name](temp / "model")
            os.replace(temp / "model", target)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
    return target


def keras_cnn(path: Path) -> None:
    """A small CNN + Dense (Conv2D with a BatchNorm of random statistics and a ReLU, a depthwise
    convolution, global pooling, a softmax Dense), exported with Keras 3's `model.export`: a TF2
    SavedModel whose `serving_default` runs through StatefulPartitionedCall into the library."""
    import keras

    from tests.grappler.keras_models import randomize_batchnorms

    keras.utils.set_random_seed(7)
    inputs = keras.Input((16, 16, 3), name="image")
    x = keras.layers.Conv2D(8, 3, padding="same")(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(5, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    randomize_batchnorms(model, np.random.default_rng(7))
    model.export(str(path), verbose=False)


def keras_sequence(path: Path) -> None:
    """Self-attention, a residual LayerNormalization, an LSTM (a While loop in the library) and a
    softmax Dense, exported with `model.export`."""
    import keras

    keras.utils.set_random_seed(3)
    inputs = keras.Input((12, 8), name="seq")
    x = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)(inputs, inputs)
    x = keras.layers.LayerNormalization()(x + inputs)
    x = keras.layers.LSTM(16)(x)
    outputs = keras.layers.Dense(4, activation="softmax")(x)
    keras.Model(inputs, outputs).export(str(path), verbose=False)


def keras_swish(path: Path) -> None:
    """Conv2D, BatchNorm, a swish Activation, pooling, Dropout and a softmax Dense, exported with
    `model.export`: the object graph captures tensors of the serving function by name (swish's
    beta, the BatchNorm's folded shift), which `tf.saved_model.load` looks up in its graph."""
    import keras

    keras.utils.set_random_seed(5)
    inputs = keras.Input((8, 8, 3), name="image")
    x = keras.layers.Conv2D(4, 3, padding="same")(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Activation("swish")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    outputs = keras.layers.Dense(3, activation="softmax")(x)
    keras.Model(inputs, outputs).export(str(path), verbose=False)


def two_signatures(path: Path) -> None:
    """A tf.Module with two signatures sharing a variable (saved with tf.saved_model.save)."""
    import tensorflow as tf

    class Two(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            rng = np.random.default_rng(3)
            self.w = tf.Variable(rng.normal(size=(4, 3)).astype(np.float32), name="w")
            self.b = tf.Variable(rng.normal(size=(3,)).astype(np.float32), name="b")

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def dense(self, x: Any) -> Any:
            return {"y": tf.nn.relu(tf.matmul(x, self.w) + self.b) * tf.constant(1.0) + tf.constant(0.0)}

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def total(self, x: Any) -> Any:
            scale = tf.constant(2.0) * tf.constant(0.5)
            return {"z": tf.reduce_sum(tf.matmul(x, self.w) * scale, axis=1)}

    module = Two()
    tf.saved_model.save(module, str(path), signatures={"serving_default": module.dense, "total": module.total})


def tf1_builder(path: Path) -> None:
    """A TF1-style SavedModel (tf.compat.v1 SavedModelBuilder): a graph of v1 variables (VarHandleOp),
    no object graph and no function library; the signature names graph tensors directly."""
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, 4], name="x")
        rng = np.random.default_rng(5)
        w = v1.get_variable("w", initializer=rng.normal(size=(4, 3)).astype(np.float32), use_resource=True)
        b = v1.get_variable("b", initializer=rng.normal(size=(3,)).astype(np.float32), use_resource=True)
        one = tf.constant(1.0) * tf.constant(1.0)
        y = tf.identity(tf.nn.relu(tf.matmul(x, w) * one + b), name="y")
        _tf1_save(graph, x, y, path)


def _tf1_save(graph: Any, x: Any, y: Any, path: Path) -> None:
    """The variables of ``graph`` initialized and saved by a TF1 SavedModelBuilder, tag ``serve``,
    with ``serving_default`` feeding ``x`` and fetching ``y``."""
    import tensorflow as tf

    v1 = tf.compat.v1
    with v1.Session(graph=graph) as sess:
        sess.run(v1.global_variables_initializer())
        builder = v1.saved_model.Builder(str(path))
        signature = v1.saved_model.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"serving_default": signature})
        builder.save()


def tf1_control_flow(path: Path) -> None:
    """A TF1 SavedModel with v1 control flow (Switch/Merge, Enter/Exit/NextIteration: control flow v2
    off): a tf.cond on a fed predicate, one on a constant, and a tf.while_loop; its collections hold
    the cond and while contexts a TF1 loader rebuilds."""
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.disable_control_flow_v2()
        try:
            x = v1.placeholder(tf.float32, [None, 4], name="x")
            rng = np.random.default_rng(9)
            w = v1.get_variable("w", initializer=rng.normal(size=(4, 3)).astype(np.float32), use_resource=True)
            h = tf.matmul(x, w)
            y = tf.cond(tf.reduce_sum(x) > 0, lambda: h * 2.0, lambda: h - 1.0)
            y = tf.cond(tf.constant(True), lambda: y + 0.5, lambda: y * 0.0)
            _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 0.5 + 1.0), [tf.constant(0), y])
            _tf1_save(graph, x, tf.identity(y, name="y"), path)
        finally:
            v1.enable_control_flow_v2()


def tf2_control_flow(path: Path) -> None:
    """A tf.Module whose signature holds v2 control flow (If/While with branch and body functions in
    the library): a tf.cond on a fed predicate, one on a constant, a tf.while_loop reading a variable."""
    import tensorflow as tf

    class Flow(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = tf.Variable(np.random.default_rng(11).normal(size=(4, 4)).astype(np.float32), name="w")

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def run(self, x: Any) -> Any:
            h = tf.matmul(x, self.w)
            h = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.nn.relu(h), lambda: h * 2.0)
            h = tf.cond(tf.constant(True), lambda: h + 1.0, lambda: h - 1.0)
            _, h = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, self.w) * 0.5),
                                 [tf.constant(0), h])
            return {"y": h}

    module = Flow()
    tf.saved_model.save(module, str(path), signatures={"serving_default": module.run})


BUILDERS: dict[str, Callable[[Path], None]] = {
    "tf2_control_flow": tf2_control_flow,
    "tf1_control_flow": tf1_control_flow,
    "keras_cnn": keras_cnn,
    "keras_sequence": keras_sequence,
    "keras_swish": keras_swish,
    "two_signatures": two_signatures,
    "tf1_builder": tf1_builder,
}
