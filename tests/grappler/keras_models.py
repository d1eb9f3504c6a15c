"""Freezing small Keras models at test time, for the tests that run -tf-grappler's families
on what TensorFlow exports (no model files are kept in the repository)."""

from __future__ import annotations

from typing import Any

import numpy as np


def randomize_batchnorms(model: Any, rng: np.random.Generator) -> None:
    """Moving statistics and affine parameters of every BatchNormalization drawn at random, so
    that a wrong fold changes the outputs (Keras initializes them to the identity)."""
    import keras

    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            gamma, beta, mean, var = (w.shape for w in layer.get_weights())
            layer.set_weights([rng.uniform(0.5, 2.0, gamma).astype(np.float32),
                               rng.normal(0, 1, beta).astype(np.float32), rng.normal(0, 1, mean).astype(np.float32),
                               rng.uniform(0.2, 3.0, var).astype(np.float32)])


def frozen(model: Any, shape: tuple[int, ...], name: str | None = None) -> tuple[Any, str, str]:
    """(GraphDef, feed node, fetch node) of ``model`` in inference mode on a float32 input."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(tf.TensorSpec(shape, tf.float32, name=name))
    function = convert_variables_to_constants_v2(fn)
    return (function.graph.as_graph_def(), function.inputs[0].name.split(":")[0],
            function.outputs[0].name.split(":")[0])


def run_graph(graph_def: Any, feed: str, fetch: str, x: np.ndarray) -> np.ndarray:
    """``fetch`` of ``graph_def`` run by TensorFlow with ``x`` fed to ``feed`` (node names)."""
    import tensorflow as tf

    with tf.Graph().as_default() as g:
        tf.compat.v1.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            return sess.run(f"{fetch}:0", {f"{feed}:0": x})
