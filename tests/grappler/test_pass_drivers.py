"""Every family of `tf-grappler` also runs on the e-graph (`driver=egraph`): on the shipped
example it reaches as few nodes as the greedy driver, and (marked `tf`) TensorFlow computes the same
logits. Constants enter the e-graph as handles, not as their payload's text, which is what
keeps this affordable (mobilenetv2 was killed at 24 GB before)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egraft.ir.graphdef import load_graphdef
from egraft.passes.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.pb"


def _optimized(tmp_path: Path, driver: str) -> Path:
    out = tmp_path / f"{driver}.pb"
    code = main([str(EXAMPLE), "--tf-input-arrays=image", "--tf-output-arrays=Identity",
                 f"-tf-grappler=driver={driver}", "-o", str(out)])
    assert code == 0
    return out


def test_egraph_driver_reaches_the_greedy_node_count(tmp_path: Path) -> None:
    egraph = sorted(n.op for n in load_graphdef(_optimized(tmp_path, "egraph")).node)
    greedy = sorted(n.op for n in load_graphdef(_optimized(tmp_path, "greedy")).node)
    # the same node count; a folded BatchNorm shift may stay an AddV2 where greedy made it a BiasAdd
    assert len(egraph) == len(greedy) < 20, (egraph, greedy)
    assert "Rsqrt" not in egraph and "_FusedConv2D" in egraph


@pytest.mark.tf
def test_egraph_driver_output_agrees_in_tensorflow(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    from .keras_models import run_graph

    import tensorflow as tf

    original = tf.compat.v1.GraphDef.FromString(EXAMPLE.read_bytes())
    optimized = tf.compat.v1.GraphDef.FromString(_optimized(tmp_path, "egraph").read_bytes())
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((1, 16, 16, 3)).astype(np.float32)
        np.testing.assert_allclose(run_graph(optimized, "image", "Identity", x),
                                   run_graph(original, "image", "Identity", x), rtol=1e-4, atol=1e-6)
