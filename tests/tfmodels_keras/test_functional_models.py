"""Issue #13's benchmark models: computation in a FunctionDefLibrary, and a Keras SavedModel.

Built by ``bench/keras_apps/zoo.py`` into the model cache (first run builds, ~5 s). Each test
checks that a model is what the benchmark says it is (TF2 control flow not lowered, one
function called twice, a SavedModel whose variables stay variables) and that ``-tf-grappler``'s
output computes what the original computes in TensorFlow on inputs that take every branch of
the feed-dependent conditionals (rtol 1e-4).
"""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorflow", reason="needs TensorFlow (pip install 'egraft[tf]')")
pytestmark = pytest.mark.tf

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "keras_apps"))
sys.path.insert(0, str(REPO / "bench" / "grappler"))
import egraft_side  # noqa: E402
import zoo  # noqa: E402

from egraft.ir.graphdef import load_graphdef  # noqa: E402

GRAPHDEF_MODELS = ("cond_while_v2", "siamese_shared_fn")


@pytest.fixture(scope="module")
def models() -> dict[str, zoo.ModelFiles]:
    return zoo.ensure([*GRAPHDEF_MODELS, "cnn_savedmodel"])


def _ops(graph) -> tuple[collections.Counter, collections.Counter]:
    return (collections.Counter(n.op for n in graph.node),
            collections.Counter(n.op for f in graph.library.function for n in f.node_def))


def _inputs(meta: dict) -> list[dict[str, np.ndarray]]:
    """Seeded feeds, and feeds of all +1 and all -1 (mean > 0 and < 0: both branches of
    cond_while_v2's outer cond; +1 also takes the inner cond's ``max > 2`` branch)."""
    out = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        out.append({f["name"] + ":0": rng.standard_normal(f["shape"]).astype(np.float32) for f in meta["inputs"]})
    for sign in (1.0, -1.0):
        out.append({f["name"] + ":0": np.full(f["shape"], sign, np.float32) for f in meta["inputs"]})
    return out


def _run(graph, fetches: list[str], feeds: list[dict[str, np.ndarray]]) -> list[list[np.ndarray]]:
    import tensorflow as tf
    from tensorflow.core.framework import graph_pb2

    with tf.Graph().as_default() as g:
        tf.compat.v1.import_graph_def(graph_pb2.GraphDef.FromString(graph.SerializeToString()), name="")
        with tf.compat.v1.Session(graph=g) as sess:
            return [sess.run([f + ":0" for f in fetches], feed) for feed in feeds]


def test_cond_while_v2_keeps_tf2_control_flow_as_functions(models: dict[str, zoo.ModelFiles]) -> None:
    graph = load_graphdef(models["cond_while_v2"].pb)
    main, bodies = _ops(graph)
    assert main["If"] == 2 and main["While"] == 1  # the constant-predicate cond, the outer cond, the loop
    assert bodies["If"] == 1 and bodies["StatelessIf"] == 1  # the nested cond, the cond in the loop body
    assert not {"Switch", "Merge", "Enter"} & (set(main) | set(bodies))  # not lowered to v1 control flow
    constant_predicate = [n for n in graph.node if n.op == "If" and
                          next(m for m in graph.node if m.name == n.input[0].lstrip("^").split(":")[0]).op == "Const"]
    assert len(constant_predicate) == 1


def test_siamese_calls_one_function_twice(models: dict[str, zoo.ModelFiles]) -> None:
    graph = load_graphdef(models["siamese_shared_fn"].pb)
    calls = [n.attr["f"].func.name for n in graph.node if n.op in ("PartitionedCall", "StatefulPartitionedCall")]
    assert len(calls) == 2 and len(set(calls)) == 1
    assert [f.signature.name for f in graph.library.function] == calls[:1]


@pytest.mark.parametrize("name", GRAPHDEF_MODELS)
def test_tf_grappler_output_computes_the_same(models: dict[str, zoo.ModelFiles], name: str) -> None:
    files = models[name]
    graph = load_graphdef(files.pb)
    inputs = [f["name"] for f in files.meta["inputs"]]
    fetches = files.meta["outputs"]
    ours = egraft_side.optimize(graph, fetches, "", "grappler", inputs).graph
    feeds = _inputs(files.meta)
    expected, actual = _run(graph, fetches, feeds), _run(ours, fetches, feeds)
    assert len({float(e[0].max()) for e in expected}) > 1, "the outputs do not depend on the feeds"
    for e, a in zip(expected, actual):
        for x, y in zip(e, a):
            np.testing.assert_allclose(y, x, rtol=1e-4, atol=1e-6)


def test_savedmodel_keeps_variables_and_loads_after_tf_grappler(models: dict[str, zoo.ModelFiles],
                                                                tmp_path: Path) -> None:
    import tensorflow as tf

    files = models["cnn_savedmodel"]
    saved = tf.saved_model.load(str(files.pb))
    meta_graph = tf.compat.v1.saved_model.loader.maybe_saved_model_directory(str(files.pb))
    assert meta_graph and (files.pb / "variables").is_dir()
    out = tmp_path / "optimized"
    opt = shutil.which("egraft-opt", path=str(Path(sys.executable).parent)) or "egraft-opt"
    proc = subprocess.run([opt, str(files.pb), "-tf-grappler", "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ours = tf.saved_model.load(str(out))
    key = files.meta["inputs"][0]["key"]
    for seed in range(3):
        x = tf.constant(np.random.default_rng(seed).standard_normal(files.meta["inputs"][0]["shape"]).astype(np.float32))
        expected = saved.signatures["serving_default"](**{key: x})
        actual = ours.signatures["serving_default"](**{key: x})
        assert expected.keys() == actual.keys()
        for k in expected:
            np.testing.assert_allclose(actual[k].numpy(), expected[k].numpy(), rtol=1e-4, atol=1e-6)
