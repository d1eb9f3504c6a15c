"""Coarsening never changes what a shipped model computes, checked by running it in TensorFlow.

Each model goes GraphDef -> tfg -> tf_executor (its fetches as the graph's results) ->
coarsen -> GraphDef, exported with island deadness intact (:mod:`.tf_run`), and runs next to
the original on the same seeded random feeds through ../shared/tfmodels/equiv.py (Grappler
off, rtol 1e-4, atol 1e-5).  Softmax outputs saturate on random inputs and hide
differences, so the logits (every Softmax's input) are fetched too.
"""

from __future__ import annotations

import json
import sys

import pytest

from egraft.ir.graphdef import load_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.passes.tf.island_coarsening import coarsen
from egraft.passes.tf.tfg_to_executor import tfg_to_executor

from .tf_run import SHARED, island_exact_graphdef, islands

pytestmark = [pytest.mark.tf, pytest.mark.peer]
MODELS = {"bert4": 1, "cflow_v1": 11, "mobilenetv2": 1}  # islands after coarsening


@pytest.mark.parametrize("model", sorted(MODELS))
def test_coarsened_model_computes_the_same(model: str) -> None:
    meta_path = SHARED / "graphs" / f"{model}.json"
    if not meta_path.exists():
        pytest.skip(f"{meta_path} not found (shared TensorFlow models)")
    pytest.importorskip("tensorflow")
    sys.path.insert(0, str(SHARED))
    try:
        import equiv
    finally:
        sys.path.remove(str(SHARED))
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    original = equiv.load_graph_def(SHARED / "graphs" / meta["pb"])
    outputs = meta["outputs"] + [n.input[0] for n in original.node if n.op == "Softmax"]
    module = tfg_to_executor(import_graphdef(load_graphdef(SHARED / "graphs" / meta["pb"]), meta["pb"]),
                             meta["outputs"])
    coarsen(module)
    assert len(islands(module)) == MODELS[model]
    report = equiv.compare(original, island_exact_graphdef(module), meta["inputs"], outputs, seeds=(0, 1, 2))
    assert report["ok"], report
    assert report["input_sensitive"], report  # the feeds reach the outputs: the check is not vacuous
