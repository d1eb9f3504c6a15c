#!/usr/bin/env python
"""Builds `examples/small_cnn.pb`, the GraphDef of the README's quick start.

    python examples/make_small_cnn.py          # needs TensorFlow: pip install -e '.[tf]'

A small image classifier shaped like the MobileNet family, frozen for inference as
TensorFlow exports one: Conv2D -> BatchNorm -> ReLU, DepthwiseConv2D -> BatchNorm -> ReLU6,
global average pooling and a Dense softmax, on a 16x16x3 input at batch 1. It is small
enough to read (`egraft-opt examples/small_cnn.pb --emit=tf_executor`) and has what
Grappler is run for: Identity nodes from the variables, BatchNorm arithmetic on constants,
Conv2D/BiasAdd/activation chains.

The BatchNorm statistics are set from one seeded batch (momentum 0, training mode), so
the folded scales and shifts are not the identity and a wrong fold changes the logits.
The shipped file is what this script wrote; `small_cnn.json` beside it names the feed
and the fetch (`--tf-input-arrays`, `--tf-output-arrays`).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
INPUT_SHAPE = (16, 16, 3)


def build():
    """The Keras model, seeded, with calibrated BatchNorm statistics."""
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    inputs = keras.Input(INPUT_SHAPE, name="image")
    x = keras.layers.Conv2D(8, 3, padding="same", name="conv")(inputs)
    x = keras.layers.BatchNormalization(name="conv_bn")(x)
    x = keras.layers.ReLU(name="conv_relu")(x)
    x = keras.layers.DepthwiseConv2D(3, padding="same", name="dw")(x)
    x = keras.layers.BatchNormalization(name="dw_bn")(x)
    x = keras.layers.ReLU(6.0, name="dw_relu6")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    outputs = keras.layers.Dense(10, activation="softmax", name="logits")(x)
    model = keras.Model(inputs, outputs, name="small_cnn")
    norms = [layer for layer in model.layers if isinstance(layer, keras.layers.BatchNormalization)]
    for layer in norms:
        layer.momentum = 0.0
    model(np.random.default_rng(0).standard_normal((8, *INPUT_SHAPE)).astype("float32"), training=True)
    return model


def frozen(model):
    """(GraphDef, feed names, fetch names) of the model's inference function at batch 1."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    spec = tf.TensorSpec((1, *INPUT_SHAPE), tf.float32, name="image")
    function = convert_variables_to_constants_v2(
        tf.function(lambda image: model(image, training=False)).get_concrete_function(spec))
    return (function.graph.as_graph_def(), [t.op.name for t in function.inputs],
            [t.op.name for t in function.outputs])


def main() -> int:
    graph, feeds, fetches = frozen(build())
    (HERE / "small_cnn.pb").write_bytes(graph.SerializeToString())
    meta = {"feeds": feeds, "fetches": fetches, "nodes": len(graph.node), "input_shape": [1, *INPUT_SHAPE]}
    (HERE / "small_cnn.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {HERE / 'small_cnn.pb'}: {len(graph.node)} nodes, feeds {feeds}, fetches {fetches}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
