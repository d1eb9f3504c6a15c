"""Feeds through `tf-grappler` as Grappler treats them: a fed `PlaceholderWithDefault`
stays one (its default still works for a caller that does not feed it), and nothing
folds through it (a fed value replaces the default)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egraft.ir.graphdef import load_graphdef, parse_pbtxt, save_graphdef
from egraft.passes.cli.main import main


def _f32(name: str) -> str:
    return f'attr {{ key: "{name}" value {{ type: DT_FLOAT }} }}'


GRAPH = f"""
node {{ name: "default" op: "Const" {_f32("dtype")}
  attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{}} float_val: 3.0 }} }} }} }}
node {{ name: "scale" op: "PlaceholderWithDefault" input: "default" {_f32("dtype")}
  attr {{ key: "shape" value {{ shape {{}} }} }} }}
node {{ name: "x" op: "Placeholder" {_f32("dtype")} attr {{ key: "shape" value {{ shape {{ dim {{ size: 2 }} }} }} }} }}
node {{ name: "two" op: "Const" {_f32("dtype")}
  attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{}} float_val: 2.0 }} }} }} }}
node {{ name: "k" op: "Mul" input: "scale" input: "two" {_f32("T")} }}
node {{ name: "y" op: "Mul" input: "x" input: "k" {_f32("T")} }}
versions {{ producer: 27 }}
"""


def _optimized(tmp_path: Path) -> Path:
    src, out = tmp_path / "g.pb", tmp_path / "out.pb"
    save_graphdef(parse_pbtxt(GRAPH), src)
    assert main([str(src), "--tf-input-arrays=x,scale", "--tf-output-arrays=y", "-tf-grappler", "-o", str(out)]) == 0
    return out


def test_a_fed_placeholder_with_default_keeps_its_default(tmp_path: Path) -> None:
    nodes = {n.name: n for n in load_graphdef(_optimized(tmp_path)).node}
    assert nodes["scale"].op == "PlaceholderWithDefault"
    assert nodes["k"].op == "Mul"  # scale * 2 is not folded to 6: scale is fed


@pytest.mark.tf
def test_tensorflow_runs_it_fed_and_unfed(tmp_path: Path) -> None:
    tf = pytest.importorskip("tensorflow")
    graph_def = tf.compat.v1.GraphDef.FromString(_optimized(tmp_path).read_bytes())
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    x = np.array([1.0, -2.0], np.float32)
    with tf.compat.v1.Session(graph=graph) as session:
        np.testing.assert_array_equal(session.run("y:0", {"x:0": x}), x * 6)
        np.testing.assert_array_equal(session.run("y:0", {"x:0": x, "scale:0": 0.5}), x)
