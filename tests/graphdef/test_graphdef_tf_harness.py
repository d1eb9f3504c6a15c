"""Differential checks against TensorFlow: TF accepts egraft's tf_executor text, its
op registry matches the bundled snapshot, and the Grappler harness finds egraft's and
Grappler's graphs equivalent to the originals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from graphdef_paths import MODELS, model_files, needs_shared

tf = pytest.importorskip("tensorflow", reason="needs TensorFlow (pip install 'egraft[tf]')")

from egraft.ir import print_ir  # noqa: E402
from egraft.ir.graphdef import load_graphdef  # noqa: E402
from egraft.ir.graphdef.import_graphdef import import_graphdef  # noqa: E402
from egraft.ir.graphdef.messages import OpDef, coerce  # noqa: E402
from egraft.ir.graphdef.op_registry import lookup_op  # noqa: E402
from egraft.passes.tf.tfg_to_executor import EXECUTOR_OPS, tfg_to_executor  # noqa: E402

pytestmark = pytest.mark.tf
BENCH = Path(__file__).resolve().parents[2] / "bench" / "grappler"


@pytest.mark.parametrize("op", ["Conv2D", "Split", "Enter", "Placeholder", "FusedBatchNormV3", "Const",
                                "StatefulPartitionedCall", "_FusedConv2D"])
def test_snapshot_matches_tensorflow_registry(op: str) -> None:
    from tensorflow.python.framework import op_def_registry

    theirs = coerce(op_def_registry.get(op), OpDef)
    ours = lookup_op(op)
    assert ours is not None
    assert [(a.name, a.type, a.type_attr, a.number_attr, a.type_list_attr) for a in ours.output_arg] == \
        [(a.name, a.type, a.type_attr, a.number_attr, a.type_list_attr) for a in theirs.output_arg]
    assert {a.name: a.default_value for a in ours.attr} == {a.name: a.default_value for a in theirs.attr}


@pytest.mark.peer
@needs_shared
@pytest.mark.parametrize("path", model_files(), ids=lambda p: p.stem)
def test_tensorflow_accepts_executor_text(path: Path) -> None:
    meta = json.loads(path.with_suffix(".json").read_text())
    graph = load_graphdef(path)
    text = print_ir(tfg_to_executor(import_graphdef(graph), meta["outputs"]))
    out = tf.mlir.experimental.run_pass_pipeline(text, "")
    islands = sum(n.op not in EXECUTOR_OPS and n.op != "NextIteration" for n in graph.node)
    assert out.count("tf_executor.island") == islands


@pytest.mark.peer
@needs_shared
@pytest.mark.parametrize("pipeline", ["cse,dce", "func.func(canonicalize,cse,dce)"])
@pytest.mark.parametrize("model", sorted(p.stem for p in MODELS.glob("*.pb")) if MODELS.is_dir() else [])
def test_grappler_harness_equivalence(model: str, pipeline: str) -> None:
    """Both graphs compute the original's outputs; with canonicalize too, which removes
    the Identity nodes that are the models' outputs and, in cflow_v1's loop, the one whose
    control token keeps the loop's constants in its frame."""
    sys.path.insert(0, str(BENCH))
    import run

    result = run.compare_model(model, pipeline, repeat=1)
    for side, entry in result["equivalence"].items():
        assert entry["ok"], f"{side}: {entry}"
    assert result["egraft_nodes"] <= result["nodes"]
