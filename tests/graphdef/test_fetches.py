"""A GraphDef's outputs survive every pass (issue #9, "fetches are outputs").

GraphDef -> tf_executor fetches the ``--tf-*`` signature or, without one, every node
nothing consumes; the export gives each fetched tensor its name back, whatever the
passes did to the op that produced it.  Soundness is checked with the reference
interpreter: the original and the optimized GraphDef, converted again with the same
feeds and fetch *names*, compute the same values.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from egraft.ir import parse, verify
from egraft.ir.graphdef import load_graphdef, parse_pbtxt, save_graphdef
from egraft.ir.graphdef.export_graphdef import export_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.ir.semantics.interpreter import run_function
from egraft.passes.cli.main import main
from egraft.passes.tf.executor_to_tfg import executor_to_tfg
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.tf.tf_io_options import EntrySignature, Feed, entry_signature
from egraft.passes.tf.tfg_to_executor import ConversionError, tfg_to_executor


def _f32(name: str) -> str:
    return f'attr {{ key: "{name}" value {{ type: DT_FLOAT }} }}'


GRAPH = f"""
node {{ name: "x" op: "Placeholder" {_f32("dtype")}
  attr {{ key: "shape" value {{ shape {{ dim {{ size: 2 }} dim {{ size: 3 }} }} }} }} }}
node {{ name: "c" op: "Const" {_f32("dtype")}
  attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{}} float_val: 2.0 }} }} }} }}
node {{ name: "m" op: "Mul" input: "x" input: "c" {_f32("T")} }}
node {{ name: "n" op: "Neg" input: "m" {_f32("T")} }}
node {{ name: "y" op: "Identity" input: "n" {_f32("T")} }}
node {{ name: "y2" op: "Identity" input: "n" {_f32("T")} }}
node {{ name: "unused" op: "Identity" input: "c" {_f32("T")} }}
node {{ name: "done" op: "NoOp" input: "^m" }}
versions {{ producer: 27 }}
"""
SINKS = ["y", "y2", "unused"]
X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=lambda: b"", stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def evaluate(graph, fetches: list[str]) -> list[np.ndarray]:
    """``fetches`` of ``graph`` on input X, by the reference interpreter (after pruning
    what they do not need: the interpreter has no semantics for NoOp)."""
    module = tfg_to_executor(import_graphdef(graph), fetches, feeds=[Feed("x")])
    PassManager(parse_pipeline("builtin.module(func.func(tf-executor-graph-pruning))")).run(module)
    return run_function(module, [X])


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "g.pbtxt"
    save_graphdef(parse_pbtxt(GRAPH), path)
    return path


def test_without_flags_every_unconsumed_node_is_an_output() -> None:
    module = tfg_to_executor(import_graphdef(parse_pbtxt(GRAPH)))
    main_fn = next(op for op in module.walk() if op.name == "func.func")
    entry = main_fn.attr("tf.entry_function").as_dict()
    assert entry["outputs"].value == ",".join(SINKS)
    assert entry["control_outputs"].value == "done" and entry["inputs"].value == ""
    fetch = next(op for op in module.walk() if op.name == "tf_executor.fetch")
    assert len(fetch.operands) == 4  # three tensors and the NoOp's control token


@pytest.mark.parametrize("pipeline", [
    "builtin.module(func.func(canonicalize))",
    "builtin.module(func.func(canonicalize,cse,dce))",
    "builtin.module(func.func(eqsat{rules=none}))",
    "builtin.module(func.func(tf-executor-island-coarsening,canonicalize))",
    "builtin.module(func.func(tf-executor-graph-pruning),cse,dce)",
])
def test_outputs_survive_passes_on_tf_executor(graph_file: Path, tmp_path: Path, pipeline: str) -> None:
    code, _, err = cli(str(graph_file), "--emit=tf_executor", "--tf-input-arrays=x", "-o", str(tmp_path / "e.mlir"))
    assert code == 0, err
    code, _, err = cli(str(tmp_path / "e.mlir"), f"--pass-pipeline={pipeline}", "-o", str(tmp_path / "out.pbtxt"))
    assert code == 0, err
    out = load_graphdef(tmp_path / "out.pbtxt")
    names = {n.name for n in out.node}
    assert {"x", "done", *SINKS} <= names, names
    assert len(names) == len(out.node)
    for got, want in zip(evaluate(out, SINKS), evaluate(parse_pbtxt(GRAPH), SINKS)):
        np.testing.assert_array_equal(got, want)


def test_canonicalize_keeps_the_output_it_removes_the_identity_of(graph_file: Path, tmp_path: Path) -> None:
    """The repro of issue #9: the Identity that is the output goes, a node of its name comes back."""
    assert cli(str(graph_file), "--emit=tf_executor", "-o", str(tmp_path / "e.mlir"))[0] == 0
    code, _, err = cli(str(tmp_path / "e.mlir"), "-canonicalize", "-o", str(tmp_path / "out.pbtxt"))
    assert code == 0, err
    nodes = {n.name: n for n in load_graphdef(tmp_path / "out.pbtxt").node}
    assert nodes["y"].op == "Identity" and nodes["y2"].op == "Identity"
    assert nodes[nodes["y"].input[0]].op == "Neg"


@pytest.mark.parametrize("flags", [["-cse"], ["-dce"], ["-canonicalize"], ["-cse", "-dce", "-canonicalize"]])
def test_outputs_survive_passes_on_tfg(graph_file: Path, tmp_path: Path, flags: list[str]) -> None:
    """The tfg path has no fetches: its passes must keep every node nothing consumes."""
    code, _, err = cli(str(graph_file), *flags, "-o", str(tmp_path / "out.pb"))
    assert code == 0, err
    out = load_graphdef(tmp_path / "out.pb")
    assert {"x", "done", *SINKS} <= {n.name for n in out.node}
    for got, want in zip(evaluate(out, SINKS), evaluate(parse_pbtxt(GRAPH), SINKS)):
        np.testing.assert_array_equal(got, want)


def test_flags_make_feeds_arguments_and_fetch_only_what_they_name(graph_file: Path) -> None:
    code, out, err = cli(str(graph_file), "--emit=tf_executor", "--tf-input-arrays=x", "--tf-input-shapes=-1,3",
                         "--tf-input-data-types=DT_FLOAT", "--tf-output-arrays=y,m",
                         "--tf-control-output-arrays=done")
    assert code == 0, err
    assert ('func.func @main(%arg0: tensor<?x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) attributes '
            '{tf.entry_function = {control_outputs = "done", inputs = "x", outputs = "y,m"}}') in out
    assert '"tf.Placeholder"' not in out and '"tf.Mul"(%arg0' in out
    # the graph's own shape and type are used when the flags leave them out
    code, out, err = cli(str(graph_file), "--emit=tf_executor", "--tf-input-arrays=x", "--tf-output-arrays=y")
    assert code == 0 and "@main(%arg0: tensor<2x3xf32>) -> tensor<*xf32>" in out, err
    code, out, _ = cli(str(graph_file), "--emit=tf_executor", "--tf-output-arrays=y")
    assert '"tf.Identity"' in out and "tf_executor.fetch %" in out and "y2" not in out.split("tf.entry_function")[1][:80]


@pytest.mark.parametrize("argv, message", [
    (["--tf-output-arrays=y"], "--tf-output-arrays configures the GraphDef -> tf_executor conversion: "
                               "add --emit=tf_executor"),
    (["--emit=tf_executor", "--tf-input-shapes=2,3"], "--tf-input-shapes needs --tf-input-arrays"),
    (["--emit=tf_executor", "--tf-input-arrays=x", "--tf-input-shapes=2,3:4"], "has 2 entries for 1 input arrays"),
    (["--emit=tf_executor", "--tf-input-arrays=x", "--tf-input-data-types=float"], "unknown data type 'float'"),
    (["--emit=tf_executor", "--tf-input-arrays=x,x"], "names 'x' twice"),
    (["--emit=tf_executor", "--tf-control-output-arrays=m:0"], "takes node names, not tensors"),
    (["--emit=tf_executor", "--tf-output-arrays=y:z"], "'y:z' is not a tensor name"),
])
def test_bad_flags_are_usage_errors(graph_file: Path, argv: list[str], message: str) -> None:
    code, _, err = cli(str(graph_file), *argv)
    assert code == 1 and message in err and "Traceback" not in err, err


@pytest.mark.parametrize("argv, message", [
    (["--tf-output-arrays=nope"], "error: output 'nope' names no node of the graph"),
    (["--tf-output-arrays=y:1"], "error: output 'y:1': node 'y' has 1 data outputs"),
    (["--tf-input-arrays=x", "--tf-input-data-types=DT_INT32"], "error: input 'x' is f32 in the graph, not i32"),
    (["--tf-input-arrays=x", "--tf-input-shapes=3,2"], "error: input 'x' has shape [2,3] in the graph; "
                                                       "[3,2] does not fit it"),
    (["--tf-control-output-arrays=x", "--tf-input-arrays=x"], "error: control output 'x' is fed"),
])
def test_signatures_the_graph_contradicts_are_diagnostics(graph_file: Path, argv: list[str], message: str) -> None:
    code, _, err = cli(str(graph_file), "--emit=tf_executor", *argv)
    assert code == 1 and err.startswith(f"{graph_file}: {message}"), err


def test_flags_on_an_executor_input_are_refused(tmp_path: Path, graph_file: Path) -> None:
    assert cli(str(graph_file), "--emit=tf_executor", "-o", str(tmp_path / "e.mlir"))[0] == 0
    code, _, err = cli(str(tmp_path / "e.mlir"), "--emit=tf_executor", "--tf-output-arrays=y")
    assert code == 1 and "the input is not a tfg graph" in err


def test_feeding_an_inner_tensor_keeps_its_name_for_the_placeholder() -> None:
    """Feeding ``m`` (a Mul) makes its users read the argument; on export the feed is a
    Placeholder called ``m`` and the Mul, still there for ``done``, is renamed."""
    module = tfg_to_executor(import_graphdef(parse_pbtxt(GRAPH)), ["y"], control_fetches=["done"],
                             feeds=[Feed("m", shape=(2, 3))])
    verify(module)
    nodes = {n.name: n for n in export_graphdef(executor_to_tfg(module)).node}
    assert nodes["m"].op == "Placeholder" and nodes["n"].input == ["m"]
    assert nodes["m_1"].op == "Mul" and nodes["done"].input == ["^m_1"]


EXECUTOR = """
module {
  func.func @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
      attributes {tf.entry_function = {control_outputs = "done", inputs = "x", outputs = "y,u:1,x"}} {
    %0:3 = tf_executor.graph {
      %a, %ca = tf_executor.island wraps "tf.Neg"(%arg0) {_mlir_name = "y"} : (tensor<2xf32>) -> tensor<2xf32>
      %b, %cb = tf_executor.island wraps "tf.Abs"(%a) {_mlir_name = "b"} : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.fetch %b, %a, %arg0, %cb : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, !tf_executor.control
    }
    return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
}
"""


def test_export_names_fetches_the_passes_re_pointed() -> None:
    """``y`` now fetches Abs (the node called y is a Neg: renamed), ``u:1`` has no node
    (an IdentityN), ``x`` is the feed itself, and the control output ``done`` is gone
    (a NoOp after what the fetch waits on)."""
    nodes = {n.name: n for n in export_graphdef(executor_to_tfg(parse(EXECUTOR))).node}
    assert (nodes["y"].op, list(nodes["y"].input)) == ("Identity", ["b"])
    assert (nodes["y_1"].op, nodes["b"].input[0]) == ("Neg", "y_1")
    assert (nodes["u"].op, list(nodes["u"].input)) == ("IdentityN", ["y_1", "y_1"])
    assert nodes["x"].op == "Placeholder"
    assert (nodes["done"].op, list(nodes["done"].input)) == ("NoOp", ["^b"])


def test_export_refuses_an_entry_function_that_does_not_match_the_fetch() -> None:
    text = EXECUTOR.replace('outputs = "y,u:1,x"', 'outputs = "y"')
    with pytest.raises(ConversionError, match="names 1 outputs but the graph fetches 3"):
        executor_to_tfg(parse(text))


def test_signature_parsing() -> None:
    sig = entry_signature({"tf-input-arrays": "a,b:1", "tf-input-data-types": ",DT_INT32",
                           "tf-input-shapes": "1,-1:", "tf-output-arrays": "y,z:2"})
    assert sig == EntrySignature((Feed("a", 0, None, (1, -1)), Feed("b", 1, 3, None)), ("y", "z:2"), None)
    assert entry_signature({"o": "x"}) is None
    assert entry_signature({"tf-control-output-arrays": ""}) == EntrySignature((), None, ())


def _tensorflow():
    return pytest.importorskip("tensorflow", reason="needs TensorFlow (pip install 'egraft[tf]')")


def _run_in_tensorflow(graph, fetches: list[str]) -> list[np.ndarray]:
    tf = _tensorflow()
    from tensorflow.core.framework import graph_pb2

    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(graph_pb2.GraphDef.FromString(graph.SerializeToString()), name="")
    with tf.compat.v1.Session(graph=g) as session:
        return session.run([f + ":0" for f in fetches], {"x:0": X})


@pytest.mark.tf
@pytest.mark.parametrize("debug_info", [False, True])
def test_tensorflow_written_signature_exports_with_its_names(debug_info: bool) -> None:
    """TF's importer with input/output names (its ``tf.entry_function``, ``_Arg``-less
    @main), with or without name locations: egraft's GraphDef answers to the same names
    and TensorFlow computes the same values from it."""
    _tensorflow()
    from tensorflow.python import _pywrap_mlir

    original = parse_pbtxt(GRAPH)
    text = _pywrap_mlir.ImportGraphDef(original.SerializeToString(), b"", debug_info, b"x", b"DT_FLOAT", b"2,3",
                                       b"y,y2")
    assert 'tf.entry_function = {control_outputs = "", inputs = "x", outputs = "y,y2"}' in text
    exported = export_graphdef(executor_to_tfg(parse(text)))
    for got, want in zip(_run_in_tensorflow(exported, ["y", "y2"]), _run_in_tensorflow(original, ["y", "y2"])):
        np.testing.assert_array_equal(got, want)


@pytest.mark.tf
def test_tensorflow_parses_the_signature_egraft_writes(graph_file: Path) -> None:
    tf = _tensorflow()
    code, out, err = cli(str(graph_file), "--emit=tf_executor", "--tf-input-arrays=x", "--tf-output-arrays=y,m",
                         "--tf-control-output-arrays=done")
    assert code == 0, err
    printed = tf.mlir.experimental.run_pass_pipeline(out, "")
    assert 'tf.entry_function = {control_outputs = "done", inputs = "x", outputs = "y,m"}' in printed


EMPTIED = """
module {
  func.func @main(%arg0: tensor<i32>, %arg1: tensor<i1>) -> (tensor<i32>, tensor<i32>)
      attributes {tf.entry_function = {control_outputs = "", inputs = "x,p", outputs = "c,d"}} {
    %0:2 = tf_executor.graph {
      %a, %ca = tf_executor.island wraps "tf.Neg"(%arg0) {_mlir_name = "a"} : (tensor<i32>) -> tensor<i32>
      %e, %ce = tf_executor.island(%ca) {
        tf_executor.yield %a : tensor<i32>
      }
      %c, %cc = tf_executor.island(%ce) wraps "tf.Const"() {_mlir_name = "c", value = dense<2> : tensor<i32>} : () -> tensor<i32>
      %f, %t, %cs = tf_executor.Switch %a, %arg1 : tensor<i32> {_mlir_name = "s"}
      %i, %ci = tf_executor.island {
        tf_executor.yield %t : tensor<i32>
      }
      %d, %cd = tf_executor.island(%ci) wraps "tf.Const"() {_mlir_name = "d", value = dense<3> : tensor<i32>} : () -> tensor<i32>
      tf_executor.fetch %c, %d : tensor<i32>, tensor<i32>
    }
    return %0#0, %0#1 : tensor<i32>, tensor<i32>
  }
}
"""


def test_control_through_an_emptied_island_survives_export() -> None:
    """``island { yield %a }`` (what canonicalize leaves of an Identity) still orders
    what hangs off its control token.  Through an island value, the dependency moves to
    the value's producer (``c`` waits for ``a``); through a Switch output it needs a node
    of its own (a control edge from a Switch is live even when that output is dead, and in
    a v1 loop this Identity keeps the loop's constants in its frame: without it TF rejects
    cflow_v1 after canonicalize)."""
    nodes = {n.name: n for n in export_graphdef(executor_to_tfg(parse(EMPTIED))).node}
    assert list(nodes["c"].input) == ["^a"]
    (join,) = [n for n in nodes.values() if n.op == "Identity"]
    assert list(join.input) == ["s:1"] and list(nodes["d"].input) == [f"^{join.name}"]
    assert len(nodes) == 7  # x, p, a, c, s, d and the join: no node for the first emptied island
