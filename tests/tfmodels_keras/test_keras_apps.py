"""Real models nobody tuned egraft for: keras.applications and a BERT-style encoder.

A few small ones (the whole zoo is ``python bench/keras_apps/run.py``): each is built
by ``bench/keras_apps/zoo.py`` into the model cache (``$EGRAFT_TFMODELS_CACHE`` or
``~/.cache/egraft-tfmodels``; the first run builds, later runs reuse), then goes through
the identity round trip, ``canonicalize`` and island coarsening, GraphDef ->
tf_executor -> passes -> GraphDef with no fetch flags; TensorFlow must accept each
result and compute the same outputs and logits as the original (rtol 1e-4).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("tensorflow", reason="needs TensorFlow (pip install 'egraft[tf]')")
pytestmark = pytest.mark.tf

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "keras_apps"))
import check  # noqa: E402
import zoo  # noqa: E402

from egraft.ir.graphdef import load_graphdef  # noqa: E402
from egraft.ir.graphdef.import_graphdef import import_graphdef  # noqa: E402
from egraft.passes.tf.tfg_to_executor import default_outputs  # noqa: E402

#: MobileNetV2-sized or smaller: about a minute of CPU together, most of it building them once.
CI_MODELS = ("MobileNetV3Small", "MobileNet", "bert_l2_h128_s64")


@pytest.fixture(scope="module")
def models() -> dict[str, zoo.ModelFiles]:
    return zoo.ensure(CI_MODELS)


@pytest.mark.parametrize("name", CI_MODELS)
def test_every_path_computes_what_the_model_computes(models: dict[str, zoo.ModelFiles], name: str) -> None:
    files = models[name]
    graph = import_graphdef(load_graphdef(files.pb), str(files.pb))
    nodes = list(next(op for op in graph.walk() if op.name == "tfg.graph").regions[0].blocks[0])
    assert default_outputs(nodes) == (files.meta["outputs"], [])  # without flags: the model's own outputs
    results = check.check_model(files.pb, files.meta)
    assert [r.path for r in results] == list(check.PATHS)
    for r in results:
        assert r.error is None and r.tf_error is None, f"{r.path}: {r.error or r.tf_error}"
        assert r.ok, f"{r.path}: outputs differ (max abs {r.max_abs}, max rel {r.max_rel})"
        assert r.input_sensitive, "the outputs do not depend on the feeds: the comparison would prove nothing"
        assert len(r.compared) >= len(files.meta["outputs"])
    canonicalized = next(r for r in results if r.path == "canonicalize")
    assert canonicalized.nodes_after < files.meta["nodes"]  # it did something, and kept the outputs


def test_the_comparison_sees_a_one_percent_change(models: dict[str, zoo.ModelFiles], tmp_path: Path) -> None:
    """A negative control: the same check finds a 1% change of the classifier's bias
    (near the logits, where a softmax would hide it under atol)."""
    import numpy as np

    from egraft.ir.graphdef import save_graphdef

    files = models["MobileNet"]
    original = load_graphdef(files.pb)
    changed = load_graphdef(files.pb)
    consts = [n for n in changed.node if n.op == "Const" and n.attr["value"].tensor.dtype == 1]
    bias = min((n for n in consts if len(n.attr["value"].tensor.tensor_shape.dim) == 1
                and n.attr["value"].tensor.tensor_shape.dim[0].size == 1000), key=lambda n: n.name)
    tensor = bias.attr["value"].tensor
    values = np.frombuffer(tensor.tensor_content, np.float32) * np.float32(1.01) + np.float32(0.01)
    tensor.tensor_content = values.astype(np.float32).tobytes()
    save_graphdef(changed, tmp_path / "changed.pb")
    result = check.PathResult("changed")
    check.compare_in_tensorflow(original, {"changed": tmp_path / "changed.pb"}, files.meta, {"changed": result})
    assert result.tf_error is None and not result.ok and result.max_abs > 1e-3
