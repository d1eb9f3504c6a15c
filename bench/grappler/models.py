"""The models the Grappler benchmark runs on: where each GraphDef is and its feeds and fetches.

Two sources, one shape (``Model``):

* the 8 graphs of ``../shared/tfmodels/make_graphs.py`` (``<name>.pb`` + ``<name>.json``),
  read from a folder: ``/work/tfpeer/graphs`` holds all 8, ``../shared/tfmodels/graphs``
  the 3 shipped ones (mobilenetv2, bert4, cflow_v1);
* models of this repository's making, built on first use into the model cache by
  ``bench/keras_apps/zoo.py`` (:data:`ZOO`): three more ``keras.applications`` models
  that build in seconds on 2 cores, a transformer of another size, a Keras LSTM, and
  issue #13's models whose computation is in a FunctionDefLibrary (TF2 ``If``/``While``
  not lowered; one function called twice) and a Keras model saved as a SavedModel
  directory (``Model.format == "savedmodel"``: ``pb`` is the directory, the feeds and
  fetches are its serving signature's tensors).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "keras_apps"))

SHARED_GRAPHS = HERE.parents[2] / "shared" / "tfmodels" / "graphs"
TFPEER_GRAPHS = Path("/work/tfpeer/graphs")

#: make_graphs.py's models, smallest first.
PEER = ("cflow_v1", "bert4", "mobilenetv2", "efficientnetb0", "resnet50", "inceptionv3", "densenet121",
        "nasnetmobile")
#: Built here: MobileNet v1 (depthwise + Relu6), MobileNetV3Small (hard-swish, squeeze-excite),
#: Xception (separable convolutions), a 2-layer BERT encoder (hidden 128, sequence 64) and an LSTM.
#: Issue #13: a tf.function with nested tf.cond / tf.while_loop kept as If/While with library
#: functions, a shared encoder function called twice (PartitionedCall), a Keras CNN SavedModel.
ZOO = ("lstm_u64_s32", "bert_l2_h128_s64", "MobileNet", "MobileNetV3Small", "Xception", "cond_while_v2",
       "siamese_shared_fn", "cnn_savedmodel")
ALL = (*PEER, *ZOO)
#: A couple of minutes on a loaded 2-core machine: control flow, a transformer, a while loop.
QUICK = ("cflow_v1", "bert_l2_h128_s64", "lstm_u64_s32", "cond_while_v2", "siamese_shared_fn", "cnn_savedmodel")


@attrs.frozen
class Model:
    name: str
    pb: Path
    feeds: list[dict]   # name, dtype, shape (None: any), optional integer range low/high
    fetches: list[str]
    source: str         # where it came from, for the results' header
    format: str = "graphdef"  # or "savedmodel": pb is a SavedModel directory
    signature: str = "serving_default"  # a SavedModel's signature (its feeds and fetches)


def default_graphs() -> Path:
    """The folder with all 8 of make_graphs.py's models if present, else the shipped 3."""
    return TFPEER_GRAPHS if (TFPEER_GRAPHS / "resnet50.json").exists() else SHARED_GRAPHS


def resolve(names: list[str], graphs: Path) -> list[Model]:
    """``names`` as :class:`Model` s, building the missing zoo models (cached).
    A peer model absent from ``graphs`` raises FileNotFoundError naming the folder."""
    import zoo

    built = zoo.ensure([n for n in names if n in ZOO]) if any(n in ZOO for n in names) else {}
    models = []
    for name in names:
        if name in built:
            files = built[name]
            models.append(Model(name, files.pb, files.meta["inputs"], files.meta["outputs"],
                                f"bench/keras_apps/zoo.py ({zoo.cache_dir()})", files.meta.get("format", "graphdef"),
                                files.meta.get("signature", "serving_default")))
            continue
        sidecar = graphs / f"{name}.json"
        if not sidecar.exists():
            raise FileNotFoundError(f"{name}: no {sidecar} (make_graphs.py's models; --graphs picks the folder)")
        meta = json.loads(sidecar.read_text())
        models.append(Model(name, graphs / meta["pb"], meta["inputs"], meta["outputs"], str(graphs)))
    return models
