#!/usr/bin/env python
"""Frozen inference GraphDefs of every keras.applications model, made on demand and cached.

    python bench/keras_apps/zoo.py [names...]        # build the missing ones, print where they are
    python bench/keras_apps/zoo.py --list            # the catalogue

Each model is ``keras.applications.<Class>(weights=None)`` at its default input size,
seeded, with its BatchNormalization statistics calibrated (below), wrapped in a
``tf.function`` at batch 1 and frozen (variables become Const nodes).  Besides the
Keras applications there is one BERT-style encoder (2 layers, hidden 128, sequence
64), a size no shipped model has, and one LSTM classifier (a Keras ``LSTM`` layer,
whose ``tf.while_loop`` freezing lowers to v1 control flow: Enter/Merge/Switch/
NextIteration/Exit/LoopCond around TensorList ops, the loop's functions inlined).  ``<name>.pb`` comes with ``<name>.json``: feeds
(name, dtype, shape, integer range), fetches, node and parameter counts, build time.

Why calibrate: with ``weights=None`` every BatchNorm has moving mean 0 and variance 1,
so activations shrink layer after layer and a deep net's softmax is exactly uniform
for every input; an equivalence check on such a model proves nothing.  One
training-mode pass with momentum 0 on a seeded random batch sets the statistics to
those of real activations.

The cache lives in ``$EGRAFT_TFMODELS_CACHE`` or ``~/.cache/egraft-tfmodels``, in a
folder per TensorFlow/Keras version and generator revision, never in the repository.
Builds run in a child process, so TensorFlow's memory is returned when they are done.
Needs TensorFlow (``pip install 'egraft[tf]'``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

import attrs

REVISION = 2  # bump when the models change, so caches made before are not reused
#: One model's own revision (its sidecar's ``revision``; 1 when absent): bump it when only that
#: model changes, so the others' cached files (the LSTM's is not reproducible) stay.
MODEL_REVISIONS = {"cnn_savedmodel": 2}

#: Keras application classes and their default input sizes (square, 3 channels).
KERAS_APPLICATIONS: dict[str, int] = {
    "ConvNeXtTiny": 224, "ConvNeXtSmall": 224, "ConvNeXtBase": 224, "ConvNeXtLarge": 224, "ConvNeXtXLarge": 224,
    "DenseNet121": 224, "DenseNet169": 224, "DenseNet201": 224,
    "EfficientNetB0": 224, "EfficientNetB1": 240, "EfficientNetB2": 260, "EfficientNetB3": 300,
    "EfficientNetB4": 380, "EfficientNetB5": 456, "EfficientNetB6": 528, "EfficientNetB7": 600,
    "EfficientNetV2B0": 224, "EfficientNetV2B1": 240, "EfficientNetV2B2": 260, "EfficientNetV2B3": 300,
    "EfficientNetV2S": 384, "EfficientNetV2M": 480, "EfficientNetV2L": 480,
    "InceptionResNetV2": 299, "InceptionV3": 299,
    "MobileNet": 224, "MobileNetV2": 224, "MobileNetV3Small": 224, "MobileNetV3Large": 224,
    "NASNetMobile": 224, "NASNetLarge": 331,
    "ResNet50": 224, "ResNet101": 224, "ResNet152": 224, "ResNet50V2": 224, "ResNet101V2": 224,
    "ResNet152V2": 224,
    "VGG16": 224, "VGG19": 224,
    "Xception": 299,
}


@attrs.frozen
class Encoder:
    """A BERT-style encoder: token + position embeddings, ``layers`` blocks of
    multi-head self-attention and a GELU feed-forward, each with a residual and a
    LayerNorm, and a tanh pooler on the first token."""

    layers: int = 2
    hidden: int = 128
    heads: int = 2
    ffn: int = 512
    seq: int = 64
    vocab: int = 1000

    @property
    def name(self) -> str:
        return f"bert_l{self.layers}_h{self.hidden}_s{self.seq}"


ENCODERS = {e.name: e for e in (Encoder(),)}


@attrs.frozen
class Recurrent:
    """A sequence classifier: one Keras ``LSTM`` layer over ``steps`` time steps of
    ``features`` values, its last state through a softmax ``Dense`` of ``classes``.

    Keras runs the LSTM as a ``tf.while_loop`` (a functional ``While`` with cond/body
    functions); freezing (``convert_variables_to_constants_v2``, which lowers control
    flow by default) inlines both functions and rewrites the loop into v1 control flow
    in one frame, with the weights entering it as constant ``Enter`` nodes, and leaves
    dangling ``unused_control_flow_input`` Placeholders, a different number in each build
    (23, 12 and 15 in three builds of the same seeded model): the cached file is the model."""

    units: int = 64
    steps: int = 32
    features: int = 16
    classes: int = 10

    @property
    def name(self) -> str:
        return f"lstm_u{self.units}_s{self.steps}"


RECURRENT = {r.name: r for r in (Recurrent(),)}

#: Models whose computation is in a FunctionDefLibrary (TF2 control flow and function calls, kept
#: as functions: the frozen graph is not lowered), and a Keras model saved as a SavedModel
#: directory (``<name>.savedmodel/``; the sidecar's feeds/fetches are its serving signature's
#: tensors in ``saved_model.pb``'s graph). Each builder's docstring says what is in it.
FUNCTIONAL: tuple[str, ...] = ("cond_while_v2", "siamese_shared_fn")
SAVEDMODELS: tuple[str, ...] = ("cnn_savedmodel",)
MODELS: tuple[str, ...] = (*KERAS_APPLICATIONS, *ENCODERS, *RECURRENT, *FUNCTIONAL, *SAVEDMODELS)


def cache_dir() -> Path:
    """Where models are kept: ``$EGRAFT_TFMODELS_CACHE`` or ``~/.cache/egraft-tfmodels``,
    a sub-folder per TensorFlow/Keras version and :data:`REVISION`."""
    import importlib.metadata as md

    root = Path(os.environ.get("EGRAFT_TFMODELS_CACHE") or Path.home() / ".cache" / "egraft-tfmodels")
    versions = []
    for dist in ("tensorflow-cpu", "tensorflow", "keras"):
        try:
            versions.append(f"{dist}-{md.version(dist)}")
        except md.PackageNotFoundError:
            continue
    return root.expanduser() / f"{'_'.join(versions)}_r{REVISION}"


@attrs.frozen
class ModelFiles:
    """A built model (``pb`` and its sidecar), or one not built because it has more
    parameters than the limit it was asked under (``pb`` None, ``meta["too_large"]``)."""

    pb: Path | None
    meta: dict

    @property
    def name(self) -> str:
        return self.meta["name"]


def _load(folder: Path, name: str, max_params: int | None) -> ModelFiles | None:
    pb, meta_path = folder / f"{name}.pb", folder / f"{name}.json"
    if not meta_path.exists():
        return None
    meta = json.loads(meta_path.read_text())
    if meta.get("revision", 1) != MODEL_REVISIONS.get(name, 1):  # built from an older definition
        return None
    if meta.get("too_large"):  # still too large under this limit, or to be built now
        return ModelFiles(None, meta) if max_params is not None and meta["params"] > max_params else None
    pb = folder / meta.get("pb", pb.name)  # a SavedModel's sidecar names its directory
    return ModelFiles(pb, meta) if pb.exists() else None


def ensure(names: Sequence[str], folder: Path | None = None, max_params: int | None = None,
           timeout: float = 1800) -> dict[str, ModelFiles]:
    """The cached files of ``names``, building the missing ones (in one child process).
    A model with more than ``max_params`` parameters is not frozen (freezing holds the
    weights about ten times over: 8 GB for ConvNeXtLarge's 198 M); its files say so.
    A failed build raises RuntimeError with the builder's last output lines."""
    folder = folder or cache_dir()
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise ValueError(f"unknown models {unknown}; see python bench/keras_apps/zoo.py --list")
    missing = [name for name in names if _load(folder, name, max_params) is None]
    if missing:  # one process builds them all: TensorFlow's import (~5-15 s) is paid once
        limit = [] if max_params is None else ["--max-params", str(max_params)]
        proc = subprocess.run([sys.executable, __file__, "--build", str(folder), *limit, *missing],
                              capture_output=True, text=True, timeout=timeout * len(missing))
        failed = [name for name in missing if _load(folder, name, max_params) is None]
        if proc.returncode or failed:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise RuntimeError(f"building {', '.join(failed or missing)} failed (exit {proc.returncode}):\n{tail}")
    return {name: _load(folder, name, max_params) for name in names}  # type: ignore[misc]


# ------------------------------------------------------------------ building (in the child process)


#: Calibration batches other than 8: a batch of 8 took EfficientNetB7 (600 px) to 24 GB
#: and EfficientNetV2L (480 px) past 12 GB; 2 images still give every channel hundreds of
#: samples in the last layers.
CALIBRATION_BATCH = {"EfficientNetB7": 2, "EfficientNetV2L": 2}


def _calibrate_batchnorm(model, shape: tuple[int, ...], batch: int) -> int:
    """Moving statistics of every BatchNormalization := those of one seeded batch."""
    import keras
    import numpy as np

    norms, todo = [], list(model.layers)
    while todo:  # nested models (none today, but a functional model may hold one) count too
        layer = todo.pop()
        todo += getattr(layer, "layers", [])
        if isinstance(layer, keras.layers.BatchNormalization):
            norms.append(layer)
    saved = [layer.momentum for layer in norms]
    for layer in norms:
        layer.momentum = 0.0
    model(np.random.default_rng(0).standard_normal((batch, *shape)).astype("float32"), training=True)
    for layer, momentum in zip(norms, saved):
        layer.momentum = momentum
    return len(norms)


def _frozen(model, specs: list) -> tuple:
    """(GraphDef, feeds, fetches) of ``model`` called in inference mode on ``specs``."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    def call(*inputs):
        return model(inputs[0] if len(inputs) == 1 else list(inputs), training=False)

    frozen = convert_variables_to_constants_v2(tf.function(call).get_concrete_function(*specs))
    feeds = [{"name": t.op.name, "dtype": t.dtype.name, "shape": t.shape.as_list()} for t in frozen.inputs]
    fetches = [t.op.name if t.value_index == 0 else t.name for t in frozen.outputs]
    return frozen.graph.as_graph_def(), feeds, fetches


class TooLarge(Exception):
    def __init__(self, params: int) -> None:
        super().__init__(f"{params} parameters")
        self.params = params


def _keras_application(name: str, max_params: int | None) -> tuple:
    import keras
    import tensorflow as tf

    size = KERAS_APPLICATIONS[name]
    shape = (size, size, 3)
    model = getattr(keras.applications, name)(weights=None, input_shape=shape)
    if max_params is not None and model.count_params() > max_params:
        raise TooLarge(model.count_params())
    norms = _calibrate_batchnorm(model, shape, CALIBRATION_BATCH.get(name, 8))
    graph, feeds, fetches = _frozen(model, [tf.TensorSpec((1, *shape), tf.float32, name="input")])
    return graph, feeds, fetches, model.count_params(), {"input_size": size, "batchnorms": norms,
                                                         "calibration_batch": CALIBRATION_BATCH.get(name, 8)}


def _encoder(spec: Encoder) -> tuple:
    import keras
    import tensorflow as tf
    from keras import layers

    ids = keras.Input((spec.seq,), dtype="int32", name="input_ids")
    mask = keras.Input((spec.seq,), dtype="int32", name="attention_mask")
    positions = keras.ops.expand_dims(keras.ops.arange(spec.seq, dtype="int32"), 0)
    x = layers.Embedding(spec.vocab, spec.hidden, name="tokens")(ids) + \
        layers.Embedding(spec.seq, spec.hidden, name="positions")(positions)
    x = layers.LayerNormalization(epsilon=1e-12, name="embeddings_norm")(x)
    attend = keras.ops.cast(keras.ops.expand_dims(mask, 1), "bool")
    for i in range(spec.layers):
        attention = layers.MultiHeadAttention(spec.heads, spec.hidden // spec.heads, name=f"block{i}_attention")
        x = layers.LayerNormalization(epsilon=1e-12, name=f"block{i}_norm1")(x + attention(x, x, attention_mask=attend))
        h = layers.Dense(spec.ffn, activation="gelu", name=f"block{i}_up")(x)
        x = layers.LayerNormalization(epsilon=1e-12, name=f"block{i}_norm2")(
            x + layers.Dense(spec.hidden, name=f"block{i}_down")(h))
    pooled = layers.Dense(spec.hidden, activation="tanh", name="pooler")(x[:, 0, :])
    model = keras.Model([ids, mask], [x, pooled], name=spec.name)
    specs = [tf.TensorSpec((1, spec.seq), tf.int32, name="input_ids"),
             tf.TensorSpec((1, spec.seq), tf.int32, name="attention_mask")]
    graph, feeds, fetches = _frozen(model, specs)
    feeds[0].update(low=0, high=spec.vocab)
    feeds[1].update(low=0, high=2)
    return graph, feeds, fetches, model.count_params(), {"layers": spec.layers, "hidden": spec.hidden,
                                                          "seq": spec.seq, "heads": spec.heads}


def _recurrent(spec: Recurrent) -> tuple:
    import keras
    import tensorflow as tf
    from keras import layers

    x = keras.Input((spec.steps, spec.features), name="input")
    state = layers.LSTM(spec.units, name="lstm")(x)
    model = keras.Model(x, layers.Dense(spec.classes, activation="softmax", name="head")(state), name=spec.name)
    graph, feeds, fetches = _frozen(model, [tf.TensorSpec((1, spec.steps, spec.features), tf.float32, name="input")])
    return graph, feeds, fetches, model.count_params(), {"units": spec.units, "steps": spec.steps,
                                                          "features": spec.features, "classes": spec.classes}


def _weights(rng, *shape: int):
    """Seeded weights scaled by 1/sqrt(fan-in), so activations stay of order 1 layer after layer."""
    return (rng.standard_normal(shape) / (shape[0] ** 0.5)).astype("float32")


def _cond_while_v2() -> tuple:
    """A ``tf.function`` with TF2 control flow kept as functions: an ``If`` on a feed-dependent
    predicate whose true branch holds another ``If`` (nested ``tf.cond``), an ``If`` on a constant
    predicate (a frozen ``training`` flag: TF #47256's case), and a ``tf.while_loop`` of 6 steps
    (``While`` with cond/body functions) whose body has a ``tf.cond`` of its own; dense layers with
    bias and activation around them (what Grappler's remapper fuses), weights as variables, frozen
    by ``convert_variables_to_constants_v2(lower_control_flow=False)``, which keeps ``If``/``While``
    and their branch/body functions in the library (it inlines plain function calls)."""
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    rng, width, steps = np.random.default_rng(0), 128, 6
    w_in, b_in = tf.Variable(_weights(rng, 64, width)), tf.Variable(_weights(rng, width))
    w_a, w_b = tf.Variable(_weights(rng, width, width)), tf.Variable(_weights(rng, width, width))
    w_loop, b_loop = tf.Variable(_weights(rng, width, width)), tf.Variable(_weights(rng, width))
    w_out, b_out = tf.Variable(_weights(rng, width, 10)), tf.Variable(_weights(rng, 10))
    training = tf.constant(False)

    @tf.function
    def model(x):
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w_in), b_in))
        h = tf.cond(training, lambda: tf.nn.dropout(h, 0.5, seed=1), lambda: tf.identity(h))
        y = tf.cond(tf.reduce_mean(x) > 0.0,
                    lambda: tf.cond(tf.reduce_max(h) > 2.0,
                                    lambda: h * 0.5,
                                    lambda: tf.tanh(tf.matmul(tf.matmul(h, w_a), w_b))),
                    lambda: h - 1.0)

        def body(i, y):
            y = tf.tanh(tf.nn.bias_add(tf.matmul(y, w_loop), b_loop))
            y = tf.cond(tf.reduce_mean(y) > 0.0, lambda: y * 1.0, lambda: y + 0.0)
            return i + 1, y

        _, y = tf.while_loop(lambda i, y: i < steps, body, [tf.constant(0), y])
        return tf.nn.softmax(tf.nn.bias_add(tf.matmul(y, w_out), b_out))

    concrete = model.get_concrete_function(tf.TensorSpec((1, 64), tf.float32, name="input"))
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=False)
    feeds = [{"name": t.op.name, "dtype": t.dtype.name, "shape": t.shape.as_list()} for t in frozen.inputs]
    fetches = [t.op.name if t.value_index == 0 else t.name for t in frozen.outputs]
    return frozen.graph.as_graph_def(), feeds, fetches, 64 * width + 3 * width * width + 3 * width + 10 * width + 10, \
        {"width": width, "steps": steps}


def _siamese_shared_fn() -> tuple:
    """A Siamese network: one encoder ``tf.function`` (two dense layers, bias, ReLU, a
    LayerNorm-style normalization) called on each of two inputs, so the graph holds two
    ``PartitionedCall`` nodes to one library function; the two codes, their difference and
    product go through a dense softmax head. The weights are seeded NumPy constants (``Const``
    nodes in the function body); nothing is frozen, as freezing inlines function calls."""
    import numpy as np
    import tensorflow as tf

    rng, width = np.random.default_rng(1), 128
    w1, b1, w2, b2 = _weights(rng, 64, width), _weights(rng, width), _weights(rng, width, width), _weights(rng, width)
    w_head, b_head = _weights(rng, 4 * width, 10), _weights(rng, 10)

    @tf.function
    def encoder(x):
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1))
        h = tf.nn.bias_add(tf.matmul(h, w2), b2)
        mean, variance = tf.nn.moments(h, axes=[-1], keepdims=True)
        return (h - mean) * tf.math.rsqrt(variance + 1e-6)

    @tf.function
    def model(a, b):
        u, v = encoder(a), encoder(b)
        joined = tf.concat([u, v, tf.abs(u - v), u * v], axis=-1)
        return tf.nn.softmax(tf.nn.bias_add(tf.matmul(joined, w_head), b_head))

    concrete = model.get_concrete_function(tf.TensorSpec((1, 64), tf.float32, name="left"),
                                           tf.TensorSpec((1, 64), tf.float32, name="right"))
    graph = concrete.graph.as_graph_def()
    feeds = [{"name": t.op.name, "dtype": t.dtype.name, "shape": t.shape.as_list()} for t in concrete.inputs]
    fetches = [t.op.name for t in concrete.outputs]
    params = sum(w.size for w in (w1, b1, w2, b2, w_head, b_head))
    return graph, feeds, fetches, int(params), {"width": width}


def _cnn_savedmodel(folder: Path, name: str) -> dict:
    """A small Keras CNN (three Conv2D + BatchNormalization + ReLU blocks, a depthwise block,
    global pooling, a dense softmax head) on 64x64x3, BatchNorm statistics calibrated, written
    by ``model.export`` as a SavedModel directory: variables stay variables, the computation is
    in library functions that the ``serving_default`` signature reaches through a
    ``StatefulPartitionedCall``. The signature returns the logits and their softmax (revision 2;
    1 returned the softmax only). The sidecar's feeds/fetches are the signature's tensors."""
    import shutil

    import keras
    import tensorflow as tf
    from keras import layers
    from tensorflow.core.protobuf import saved_model_pb2

    shape = (64, 64, 3)
    x = inputs = keras.Input(shape, name="image")
    for i, filters in enumerate((16, 32, 64)):
        x = layers.Conv2D(filters, 3, strides=2 if i else 1, padding="same", use_bias=False, name=f"conv{i}")(x)
        x = layers.ReLU(name=f"relu{i}")(layers.BatchNormalization(name=f"bn{i}")(x))
    x = layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="depthwise")(x)
    x = layers.ReLU(6.0, name="relu6")(layers.BatchNormalization(name="bn_dw")(x))
    x = layers.GlobalAveragePooling2D(name="pool")(x)
    logits = layers.Dense(10, name="head")(x)
    # Two outputs, the logits and their softmax, so the signature's logits are compared too.
    model = keras.Model(inputs, [logits, layers.Softmax(name="probabilities")(logits)], name=name)
    _calibrate_batchnorm(model, shape, 8)
    target = folder / f"{name}.savedmodel"
    tmp = folder / f".{name}.savedmodel.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    model.export(str(tmp), format="tf_saved_model", verbose=False)
    if target.exists():
        shutil.rmtree(target)
    tmp.replace(target)
    # The graph tensors a v1 Session feeds and fetches: saved_model.pb's signature_def entry.
    saved = saved_model_pb2.SavedModel.FromString((target / "saved_model.pb").read_bytes())
    meta_graph = saved.meta_graphs[0]
    sig = meta_graph.signature_def["serving_default"]
    feeds = [{"name": info.name.partition(":")[0], "dtype": tf.as_dtype(info.dtype).name,
              "shape": [None if d.size < 0 else d.size for d in info.tensor_shape.dim], "key": key}
             for key, info in sorted(sig.inputs.items())]
    for feed in feeds:  # batch 1, as every other model here
        feed["shape"] = [1 if d is None else d for d in feed["shape"]]
    fetches = [sig.outputs[key].name for key in sorted(sig.outputs)]
    nodes = len(meta_graph.graph_def.node)
    body = sum(len(f.node_def) for f in meta_graph.graph_def.library.function)
    return {"pb": target.name, "format": "savedmodel", "revision": MODEL_REVISIONS[name], "signature": "serving_default", "tags": ["serve"],
            "inputs": feeds, "outputs": fetches, "nodes": nodes, "function_nodes": body,
            "params": model.count_params(), "input_size": 64}


def _write(path: Path, payload: bytes) -> None:
    """Atomically: a killed build leaves nothing half-written."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(payload)
    tmp.replace(path)


def build_one(name: str, folder: Path, max_params: int | None = None) -> None:
    """Build ``name`` into ``folder``; over ``max_params`` only the sidecar, saying so."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    start, cpu = time.perf_counter(), time.process_time()
    keras.utils.set_random_seed(0)
    folder.mkdir(parents=True, exist_ok=True)
    versions = {"tensorflow": tf.__version__, "keras": keras.__version__}
    if name in SAVEDMODELS:
        meta = {"name": name, **_cnn_savedmodel(folder, name), "build_s": round(time.perf_counter() - start, 2),
                "build_cpu_s": round(time.process_time() - cpu, 2), **versions}
        _write(folder / f"{name}.json", json.dumps(meta, indent=1).encode())
        keras.backend.clear_session()
        return
    try:
        if name == "cond_while_v2":
            graph, feeds, fetches, params, extra = _cond_while_v2()
        elif name == "siamese_shared_fn":
            graph, feeds, fetches, params, extra = _siamese_shared_fn()
        elif name in ENCODERS:
            graph, feeds, fetches, params, extra = _encoder(ENCODERS[name])
        elif name in RECURRENT:
            graph, feeds, fetches, params, extra = _recurrent(RECURRENT[name])
        else:
            graph, feeds, fetches, params, extra = _keras_application(name, max_params)
    except TooLarge as big:
        _write(folder / f"{name}.json", json.dumps({"name": name, "params": big.params, "too_large": True,
                                                    **versions}, indent=1).encode())
        keras.backend.clear_session()
        return
    data = graph.SerializeToString(deterministic=True)
    meta = {"name": name, "pb": f"{name}.pb", "bytes": len(data), "nodes": len(graph.node),
            "function_nodes": sum(len(f.node_def) for f in graph.library.function), "params": params,
            "inputs": feeds, "outputs": fetches, "build_s": round(time.perf_counter() - start, 2),
            "build_cpu_s": round(time.process_time() - cpu, 2), **versions, **extra}
    _write(folder / f"{name}.pb", data)
    _write(folder / f"{name}.json", json.dumps(meta, indent=1).encode())
    keras.backend.clear_session()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--build"]:
        import memory_guard

        folder, names, limit = Path(argv[1]), argv[2:], None
        if names[:1] == ["--max-params"]:
            limit, names = int(names[1]), names[2:]
        memory_guard.start("building " + ", ".join(names))
        for name in names:
            build_one(name, folder, limit)
        return 0
    if argv[:1] == ["--list"]:
        print("\n".join(MODELS))
        return 0
    for name, files in ensure(argv or list(MODELS)).items():
        m = files.meta
        print(f"{name:20} {m['nodes']:6} nodes {m['params'] / 1e6:7.1f} M params  built in {m['build_s']:6.1f} s "
              f"({m['build_cpu_s']:.1f} s CPU)  {files.pb}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
