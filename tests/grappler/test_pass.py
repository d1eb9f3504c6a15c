"""The `tf-grappler` pass from egraft-opt: GraphDef in and out with the --tf-* flags, one
option per family, Grappler's report lines, errors as diagnostics; and (marked `tf`) a graph
TensorFlow builds at test time, optimized and run again in TensorFlow."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

from egraft.ir.graphdef import load_graphdef, parse_pbtxt, save_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.ir.semantics.interpreter import run_function
from egraft.passes.cli.main import main
from egraft.passes.tf.tf_io_options import Feed
from egraft.passes.tf.tfg_to_executor import tfg_to_executor


def _f32(name: str) -> str:
    return f'attr {{ key: "{name}" value {{ type: DT_FLOAT }} }}'


GRAPH = f"""
node {{ name: "x" op: "Placeholder" {_f32("dtype")}
  attr {{ key: "shape" value {{ shape {{ dim {{ size: 2 }} dim {{ size: 3 }} }} }} }} }}
node {{ name: "c" op: "Const" {_f32("dtype")}
  attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{}} float_val: 2.0 }} }} }} }}
node {{ name: "i" op: "Identity" input: "x" {_f32("T")} }}
node {{ name: "m" op: "Mul" input: "i" input: "c" {_f32("T")} }}
node {{ name: "s" op: "StopGradient" input: "m" {_f32("T")} }}
node {{ name: "dep" op: "NoOp" input: "^m" }}
node {{ name: "n" op: "Neg" input: "s" input: "^dep" {_f32("T")} }}
node {{ name: "y" op: "Identity" input: "n" {_f32("T")} }}
node {{ name: "unused" op: "Exp" input: "c" {_f32("T")} }}
versions {{ producer: 27 }}
"""
X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
REPORT = re.compile(r"(model pruner|remapper|[a-z ]+ (optimizer|folding|elimination)): Graph size after: \d+ nodes "
                    r"\([+-]\d+\), time = \d+ms")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=lambda: b"", stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "g.pbtxt"
    save_graphdef(parse_pbtxt(GRAPH), path)
    return path


def _nodes(path: Path) -> dict[str, str]:
    return {n.name: n.op for n in load_graphdef(path).node}


def _value(path: Path) -> np.ndarray:
    module = tfg_to_executor(import_graphdef(load_graphdef(path)), ["y"], feeds=[Feed("x")])
    return run_function(module, [X])[0]


@pytest.mark.parametrize("suffix", [".pbtxt", ".pb"])
def test_graphdef_with_fetch_flags(graph_file: Path, tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"out{suffix}"
    code, _, err = cli(str(graph_file), "--tf-input-arrays=x", "--tf-output-arrays=y",
                       "-tf-grappler=report=true", "-o", str(out))
    assert code == 0, err
    nodes = _nodes(out)
    # the Identity after x, the StopGradient, the NoOp and the unfetched Exp are gone; y keeps its name
    assert set(nodes) == {"x", "c", "m", "n", "y"}, nodes
    assert nodes["y"] == "Identity" and nodes["x"] == "Placeholder"
    lines = [line for line in err.splitlines() if "Graph size after" in line]
    assert lines and all(REPORT.search(line) for line in lines), err
    # counted on the tf_executor graph: x is @main's argument, and y's Identity comes back at export
    assert "model pruner: Graph size after: 7 nodes (-1)" in err, err
    # coarsening merges the NoOp into the island (the control edge becomes program order): the first
    # family with rules drops it
    assert "common subgraph elimination: Graph size after: 6 nodes (-1)" in err, err
    # constant folding forwards the Identity and StopGradient first (Grappler's pruner drops them)
    assert "constant folding: Graph size after: 3 nodes (-3)" in err, err
    np.testing.assert_array_equal(_value(out), _value(graph_file))


def test_without_output_flags_unconsumed_nodes_are_outputs(graph_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.pbtxt"
    code, _, err = cli(str(graph_file), "-tf-grappler", "-o", str(out))
    assert code == 0, err
    nodes = _nodes(out)
    assert {"y", "unused"} <= set(nodes) and "s" not in nodes and "i" not in nodes, nodes
    assert err == ""  # no report unless asked


def test_family_switched_off(graph_file: Path, tmp_path: Path) -> None:
    """The pruner alone (every rule driver also erases a NoOp, whose control edges the export keeps)."""
    out = tmp_path / "out.pbtxt"
    code, _, err = cli(str(graph_file), "--tf-output-arrays=y", "-tf-grappler=dependency=false common-subgraph-elimination=false constant-folding=false batchnorm=false "
                       "arithmetic=false remapper=false tensat=false control-flow=false "
                       "report=true",
                       "-o", str(out))
    assert code == 0, err
    assert "dependency optimizer" not in err and "model pruner" in err
    assert {"i", "s", "dep"} <= set(_nodes(out)) and "unused" not in _nodes(out)


def test_bad_fetch_is_a_diagnostic(graph_file: Path, tmp_path: Path) -> None:
    code, _, err = cli(str(graph_file), "--tf-output-arrays=nope", "-tf-grappler", "-o", str(tmp_path / "o.pb"))
    assert code == 1 and f"{graph_file}:0:0: error: tf-grappler: output 'nope' names no node of the graph" in err, err
    assert "Traceback" not in err


def test_tf_flags_without_a_reader_still_refused(graph_file: Path) -> None:
    code, _, err = cli(str(graph_file), "--tf-output-arrays=y", "-canonicalize")
    assert code == 1 and "add --emit=tf_executor" in err


@pytest.mark.tf
def test_tensorflow_computes_the_same(tmp_path: Path) -> None:
    """A tf.function with Identity, StopGradient, IdentityN and control dependencies, frozen by
    TensorFlow at test time: the optimized GraphDef computes the same in TensorFlow."""
    tf = pytest.importorskip("tensorflow")

    @tf.function(input_signature=[tf.TensorSpec([2, 3], tf.float32, name="x")])
    def f(x):
        a = tf.identity(x * 2.0)
        b = tf.stop_gradient(tf.nn.relu(a))
        with tf.control_dependencies([a]):
            c = tf.identity(b + 1.0)
        d, e = tf.identity_n([c, a])
        return tf.math.tanh(d) - e

    graph = f.get_concrete_function().graph.as_graph_def()
    fetch = next(n.name for n in graph.node if n.op == "Identity" and n.name.startswith("Identity"))
    path = tmp_path / "f.pb"
    path.write_bytes(graph.SerializeToString())
    out = tmp_path / "out.pb"
    code, _, err = cli(str(path), "--tf-input-arrays=x", f"--tf-output-arrays={fetch}", "-tf-grappler", "-o",
                       str(out))
    assert code == 0, err

    def run(p: Path) -> np.ndarray:
        g = tf.compat.v1.GraphDef.FromString(p.read_bytes())
        with tf.Graph().as_default() as tfg:
            tf.graph_util.import_graph_def(g, name="")
            with tf.compat.v1.Session(graph=tfg) as sess:
                return sess.run(f"{fetch}:0", {"x:0": X})

    optimized = tf.compat.v1.GraphDef.FromString(out.read_bytes())
    assert len(optimized.node) < len(graph.node)
    assert not {"StopGradient", "IdentityN", "NoOp"} & {n.op for n in optimized.node}
    np.testing.assert_allclose(run(out), run(path), rtol=1e-4)


def test_folding_families_run_by_default_and_switch_off(graph_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.pbtxt"
    code, _, err = cli(str(graph_file), "--tf-input-arrays=x", "--tf-output-arrays=y", "-tf-grappler=report=true",
                       "-o", str(out))
    assert code == 0 and "constant folding: Graph size after" in err and "batchnorm folding: Graph size" in err, err
    np.testing.assert_array_equal(_value(out), _value(graph_file))
    code, _, err = cli(str(graph_file), "--tf-output-arrays=y",
                       "-tf-grappler=constant-folding=false batchnorm=false report=true", "-o", str(out))
    assert code == 0 and "constant folding" not in err and "batchnorm folding" not in err, err
