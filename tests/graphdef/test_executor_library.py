"""GraphDef function libraries in the tf_executor form: ``func.func private`` per function.

Keras writes them (ConvNeXt's grouped convolutions are ``StatefulPartitionedCall``s of
XLA-compiled functions), so the tf_executor path must carry them there and back and let
the passes work inside them.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from egraft.ir import parse, print_ir, verify
from egraft.ir.graphdef import compare_graphdefs, load_graphdef, parse_pbtxt, save_graphdef
from egraft.ir.graphdef.export_graphdef import export_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.passes.cli.main import main
from egraft.passes.tf.executor_to_tfg import executor_to_tfg
from egraft.passes.tf.tfg_to_executor import ConversionError, tfg_to_executor

T = 'attr { key: "T" value { type: DT_FLOAT } }'
GRAPH = f"""
node {{ name: "x" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
node {{ name: "call" op: "StatefulPartitionedCall" input: "x" input: "^x"
  attr {{ key: "f" value {{ func {{ name: "neg_twice" }} }} }}
  attr {{ key: "Tin" value {{ list {{ type: DT_FLOAT }} }} }}
  attr {{ key: "Tout" value {{ list {{ type: DT_FLOAT }} }} }} }}
node {{ name: "y" op: "Identity" input: "call" {T} }}
library {{ function {{
  signature {{ name: "neg_twice" input_arg {{ name: "a" type: DT_FLOAT }} output_arg {{ name: "out" type: DT_FLOAT }}
               is_stateful: true control_output: "n1" }}
  node_def {{ name: "n1" op: "Neg" input: "a" {T} }}
  node_def {{ name: "n2" op: "Neg" input: "n1:y:0" {T} }}
  node_def {{ name: "i" op: "Identity" input: "n2:y:0" {T} }}
  ret {{ key: "out" value: "i:output:0" }}
  control_ret {{ key: "n1" value: "n1" }}
  attr {{ key: "_noinline" value {{ b: true }} }}
}} }}
versions {{ producer: 27 }}
"""


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=lambda: b"", stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_library_round_trips_through_tf_executor_text() -> None:
    graph = parse_pbtxt(GRAPH)
    text = print_ir(tfg_to_executor(import_graphdef(graph)))
    assert "func.func private @neg_twice(%arg0: tensor<*xf32> {tfg.name = \"a\"})" in text
    assert "f = @neg_twice" in text  # a call's function is a symbol reference, as in TF's import
    module = parse(text)
    verify(module)
    assert compare_graphdefs(graph, export_graphdef(executor_to_tfg(module))) == []


def test_passes_run_inside_library_functions(tmp_path: Path) -> None:
    src = tmp_path / "g.pbtxt"
    save_graphdef(parse_pbtxt(GRAPH), src)
    assert cli(str(src), "--emit=tf_executor", "-o", str(tmp_path / "e.mlir"))[0] == 0
    code, _, err = cli(str(tmp_path / "e.mlir"), "--pass-pipeline=builtin.module(func.func(canonicalize))",
                       "-o", str(tmp_path / "out.pbtxt"))
    assert code == 0, err
    out = load_graphdef(tmp_path / "out.pbtxt")
    (func,) = out.library.function
    assert func.signature.name == "neg_twice" and [a.name for a in func.signature.input_arg] == ["a"]
    assert "Identity" not in {n.op for n in func.node_def}  # canonicalize ran in the body
    assert {n.name for n in out.node} >= {"x", "call", "y"}
    verify(import_graphdef(out))


def test_generic_functions_are_refused_with_a_reason() -> None:
    text = GRAPH.replace('input_arg { name: "a" type: DT_FLOAT }', 'input_arg { name: "a" type_attr: "T" }') \
        .replace('{ key: "_noinline" value { b: true } }',
                 '{ key: "_noinline" value { b: true } } attr { key: "T" value { placeholder: "T" } }')
    graph = parse_pbtxt(text.replace(f"node_def {{ name: \"n1\" op: \"Neg\" input: \"a\" {T} }}",
                                     'node_def { name: "n1" op: "Neg" input: "a" '
                                     'attr { key: "T" value { placeholder: "T" } } }'))
    with pytest.raises(ConversionError, match="generic function @neg_twice"):
        tfg_to_executor(import_graphdef(graph))


@pytest.mark.tf
def test_tensorflow_parses_and_runs_the_library(tmp_path: Path) -> None:
    tf = pytest.importorskip("tensorflow")
    from tensorflow.core.framework import graph_pb2

    graph = parse_pbtxt(GRAPH)
    module = tfg_to_executor(import_graphdef(graph))
    assert "func.func private @neg_twice" in tf.mlir.experimental.run_pass_pipeline(print_ir(module), "")
    src = tmp_path / "g.pbtxt"
    save_graphdef(graph, src)
    assert cli(str(src), "--emit=tf_executor", "-o", str(tmp_path / "e.mlir"))[0] == 0
    assert cli(str(tmp_path / "e.mlir"), "-canonicalize", "-o", str(tmp_path / "out.pb"))[0] == 0

    def run(g) -> np.ndarray:
        tf_graph = tf.Graph()
        with tf_graph.as_default():
            tf.graph_util.import_graph_def(graph_pb2.GraphDef.FromString(g.SerializeToString()), name="")
        with tf.compat.v1.Session(graph=tf_graph) as session:
            return session.run("y:0", {"x:0": np.array([1.5, -2.0], np.float32)})

    np.testing.assert_array_equal(run(load_graphdef(tmp_path / "out.pb")), run(graph))
