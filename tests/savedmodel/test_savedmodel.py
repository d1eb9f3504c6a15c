"""SavedModel directories through egraft-opt without TensorFlow: a SavedModel written by hand with the
message egraft builds (a small graph, a library function the object graph names, a saver-like init op,
two signatures, variables/assets/fingerprint files), optimized and written back; what is kept, what is
dropped, where errors point, and that the output directory appears whole or not at all."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from google.protobuf import text_format
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir.graphdef import savedmodel as sm
from egraft.ir.graphdef.messages import GraphDef
from egraft.passes.cli.main import main

GRAPH = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1.0 } } } }
node { name: "two" op: "AddV2" input: "one" input: "one" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "times_two" op: "Mul" input: "x" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "Identity" input: "times_two" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "z" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "init_value" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2.0 } } } }
node { name: "init_copy" op: "Identity" input: "init_value" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "init_op" op: "NoOp" input: "^init_copy" }
node { name: "dead" op: "Sqrt" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
library { function { signature { name: "__inference_f_1" input_arg { name: "a" type: DT_FLOAT }
                                 output_arg { name: "b" type: DT_FLOAT } }
                     node_def { name: "n" op: "Neg" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
                     ret { key: "b" value: "n:y:0" } } }
versions { producer: 1700 }
"""


def _signature(meta: sm.MetaGraphDef, key: str, feed: str, fetch: str) -> None:
    sig = meta.signature_def[key]
    sig.inputs["x"].name = feed
    sig.outputs["out"].name = fetch
    sig.method_name = "tensorflow/serving/predict"


def write_model(root: Path, text: bool = False) -> Path:
    saved = sm.saved_model_class()(saved_model_schema_version=1)
    meta = saved.meta_graphs.add()
    meta.meta_info_def.tags.append("serve")
    text_format.Parse(GRAPH, meta.graph_def)
    _signature(meta, "serving_default", "x:0", "y:0")
    _signature(meta, "negate", "x:0", "z:0")
    meta.signature_def[sm.INIT_OP_SIGNATURE].outputs[sm.INIT_OP_SIGNATURE].name = "init_op"
    meta.object_graph_def.concrete_functions["__inference_f_1"].SetInParent()
    meta.collection_def["cond_context"].bytes_list.value.append(b"\n\x0bcond/pred_id")  # names a node to go
    meta.collection_def["my_ops"].node_list.value.append("init_copy")
    root.mkdir()
    name = sm.SAVED_MODEL_PBTXT if text else sm.SAVED_MODEL_PB
    (root / name).write_bytes(sm.serialize(saved, name, text=text))
    (root / "variables").mkdir()
    (root / "variables" / "variables.index").write_bytes(b"\x00index\xff")
    (root / "variables" / "variables.data-00000-of-00001").write_bytes(os.urandom(64))
    (root / "assets").mkdir()
    (root / "assets" / "vocab.txt").write_text("a\nb\n")
    (root / sm.FINGERPRINT).write_bytes(b"stale")
    return root


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def graph_of(directory: Path) -> tuple[sm.MetaGraphDef, dict[str, object]]:
    saved, _ = sm.load_saved_model(directory)
    meta = saved.meta_graphs[0]
    return meta, {n.name: n for n in meta.graph_def.node}


def test_optimized_directory_keeps_files_and_what_loaders_need(tmp_path: Path) -> None:
    model = write_model(tmp_path / "model")
    code, _, err = run(str(model), "-tf-grappler", "-o", str(tmp_path / "out"))
    assert code == 0, err
    out = tmp_path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "assets", "assets/vocab.txt", "saved_model.pb", "variables", "variables/variables.data-00000-of-00001",
        "variables/variables.index"]
    for rel in ("variables/variables.index", "variables/variables.data-00000-of-00001", "assets/vocab.txt"):
        assert (out / rel).read_bytes() == (model / rel).read_bytes()
    meta, nodes = graph_of(out)
    # The signature's computation was optimized (1 + 1 folded; the Sqrt nothing fetches and the other
    # signature's output gone), its names kept;
    # the init op as it was.
    assert {"x", "y", "init_op", "init_copy", "init_value"} <= set(nodes)
    assert "AddV2" not in {n.op for n in nodes.values()} and "dead" not in nodes and "z" not in nodes
    assert list(nodes["init_op"].input) == ["^init_copy"]
    assert sm.user_signatures(meta) == ["serving_default"] and sm.INIT_OP_SIGNATURE in meta.signature_def
    assert list(meta.collection_def) == ["my_ops"]  # the v1 control-flow contexts go
    assert "signature 'negate' is not in the output" in err
    # The object graph's function is public: kept though nothing calls it.
    assert [f.signature.name for f in meta.graph_def.library.function] == ["__inference_f_1"]
    assert meta.object_graph_def.concrete_functions.keys() == {"__inference_f_1"}


def test_every_signature_with_star(tmp_path: Path) -> None:
    model = write_model(tmp_path / "model")
    code, _, err = run(str(model), "-tf-grappler", "--tf-savedmodel-signature=*", "-o", str(tmp_path / "out"))
    assert (code, err) == (0, "")
    meta, nodes = graph_of(tmp_path / "out")
    assert sm.user_signatures(meta) == ["negate", "serving_default"]
    assert {"y", "z"} <= set(nodes)


def test_text_savedmodel_in_and_out(tmp_path: Path) -> None:
    model = write_model(tmp_path / "model", text=True)
    code, _, err = run(str(model), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "out" / sm.SAVED_MODEL_PBTXT).is_file() and not (tmp_path / "out" / sm.SAVED_MODEL_PB).exists()
    _, nodes = graph_of(tmp_path / "out")
    assert nodes["two"].op == "AddV2" and "dead" in nodes  # no passes: the graph as it was


def test_mlir_output_marks_public_functions(tmp_path: Path) -> None:
    model = write_model(tmp_path / "model")
    code, out, err = run(str(model))
    assert code == 0, err
    assert 'tfg.func @__inference_f_1' in out and f'{sm.PUBLIC_ATTR} = ["__inference_f_1"]' in out
    code, out, err = run(str(model), "--emit=tf_executor", "-o", str(tmp_path / "m.mlir"))
    assert code == 0, err
    text = (tmp_path / "m.mlir").read_text()
    assert "func.func @main(%arg0: tensor<?x2xf32>" in text and sm.PUBLIC_ATTR in text


@pytest.mark.parametrize("args, message", [
    (["--tf-savedmodel-signature=nope"], "model/saved_model.pb: error: signature 'nope' not found in the MetaGraphDef "
                                         "with tags 'serve' (signatures: 'negate', 'serving_default')"),
    (["--tf-savedmodel-tags=serve,gpu"], "model/saved_model.pb: error: no MetaGraphDef with tags 'gpu,serve' (the "
                                         "SavedModel has: serve)"),
    (["--tf-savedmodel-signature="], "model/saved_model.pb: error: no signature to take the feeds and fetches from "
                                     "(the MetaGraphDef with tags 'serve' has 2 signatures)"),
    (["--tf-input-arrays=x"], "error: the --tf-* input/output flags name a GraphDef's feeds and fetches"),
    (["--emit=tf_executor"], "error: --emit=tf_executor writes MLIR, not a SavedModel directory"),
])
def test_errors_leave_no_output(tmp_path: Path, args: list[str], message: str) -> None:
    model = write_model(tmp_path / "model")
    code, out, err = run(str(model), "-tf-grappler", *args, "-o", str(tmp_path / "out"))
    assert code == 1 and out == ""
    assert message in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["model"]


def test_feed_of_a_later_output_is_refused(tmp_path: Path) -> None:
    model = write_model(tmp_path / "model")
    saved, path = sm.load_saved_model(model)
    saved.meta_graphs[0].signature_def["serving_default"].inputs["x"].name = "times_two:1"
    path.write_bytes(sm.serialize(saved, str(path)))
    code, _, err = run(str(model), "-o", str(tmp_path / "out"))
    assert code == 1 and err.endswith("model/saved_model.pb: error: signature 'serving_default': input 'times_two:1' "
                                      "is output 1 of node 'times_two'; only a node's first output can be fed\n")


def test_not_a_savedmodel(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _, err = run(str(tmp_path / "empty"), "-o", str(tmp_path / "out"))
    assert code == 1 and err.endswith("empty: error: not a SavedModel directory: it has no saved_model.pb "
                                      "(or saved_model.pbtxt)\n")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "saved_model.pb").write_bytes(b"\xff\xff\xff")
    code, _, err = run(str(tmp_path / "bad"), "-o", str(tmp_path / "out"))
    assert code == 1 and "bad/saved_model.pb: error: not a binary SavedModel: Error parsing message with type " \
                         "'tensorflow.SavedModel'" in err
    code, _, err = run(str(tmp_path / "bad" / "saved_model.pb"), "--tf-savedmodel-signature=a")
    assert code == 1 and "--output-format=savedmodel apply to a SavedModel directory input, and " in err
    code, _, err = run(str(tmp_path / "bad" / "saved_model.pb"), "--output-format=savedmodel", "-o", "x")
    assert code == 1 and "--output-format=savedmodel apply to a SavedModel directory input, and " in err
    (tmp_path / "chunked").mkdir()
    (tmp_path / "chunked" / "saved_model.cpb").write_bytes(b"")
    code, _, err = run(str(tmp_path / "chunked"), "-o", str(tmp_path / "out"))
    assert code == 1 and "chunked/saved_model.cpb: error: a chunked SavedModel (TensorFlow's experimental image " \
                         "format) is not supported" in err
    assert sorted(os.listdir(tmp_path)) == ["bad", "chunked", "empty"]


def test_output_directory_replaced_whole_or_refused(tmp_path: Path) -> None:
    model = write_model(tmp_path / "model")
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, _, err = run(str(model), "-o", str(out))
    assert code == 1 and "cannot open output directory" in err and "neither empty nor a SavedModel" in err
    assert os.listdir(out) == ["notes.txt"]
    (out / "notes.txt").unlink()
    assert run(str(model), "-o", str(out))[0] == 0
    (out / "variables" / "stale").write_text("from before")
    out.chmod(0o750)
    # An existing SavedModel is replaced as a whole; a failing run leaves it as it was.
    assert run(str(model), "--tf-savedmodel-signature=nope", "-o", str(out))[0] == 1
    assert (out / "variables" / "stale").exists()
    assert run(str(model), "-tf-grappler", "-o", str(out) + "/")[0] == 0
    assert not (out / "variables" / "stale").exists() and (out / sm.SAVED_MODEL_PB).is_file()
    assert out.stat().st_mode & 0o777 == 0o750  # a replaced directory keeps its mode
    assert sorted(os.listdir(tmp_path)) == ["model", "out"]
    (tmp_path / "file").write_text("x")
    code, _, err = run(str(model), "--output-format=savedmodel", "-o", str(tmp_path / "file"))
    assert code == 1 and "it exists and is not a directory" in err
    code, out, err = run(str(model), "--output-format=savedmodel")
    assert (code, out) == (1, "") and "error: --output-format=savedmodel writes a directory: give it with -o DIR" in err


@st.composite
def graphs(draw: st.DrawFn) -> tuple[GraphDef, list[str], set[str]]:
    """A random DAG GraphDef (data and control inputs to earlier nodes), kept roots, and the nodes
    an "optimizer" dropped."""
    count = draw(st.integers(2, 12))
    graph = GraphDef()
    for i in range(count):
        node = graph.node.add(name=f"n{i}", op="NoOp")
        for j in draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else ():
            node.input.append(draw(st.sampled_from([f"n{j}", f"n{j}:1", f"^n{j}"])))
    kept = draw(st.lists(st.sampled_from([f"n{i}" for i in range(count)]), max_size=3))
    dropped = draw(st.sets(st.sampled_from([f"n{i}" for i in range(count)])))
    return graph, kept, dropped


@settings(max_examples=150, deadline=None)
@given(graphs(), st.integers(0, 11))
def test_splice_restores_the_kept_closure(case: tuple[GraphDef, list[str], set[str]], fetch: int) -> None:
    """Whatever the optimizer dropped or changed, the kept nodes and all they reach come back as they
    were, every input names a node of the result, and nothing unreached from the fetches, feeds and
    kept nodes stays."""
    original, kept, dropped = case
    optimized = GraphDef()
    for node in original.node:
        if node.name not in dropped:
            changed = optimized.node.add()
            changed.CopyFrom(node)
            changed.op = "Changed"
            del changed.input[:]  # the optimizer rewired it ...
            changed.input.append(f"new_{node.name}")  # ... to a node of its own making
            optimized.node.add(name=f"new_{node.name}", op="New")
    optimized.node.add(name="leftover", op="New")
    fetches = tuple(n.name for n in optimized.node if n.name == f"n{fetch}")
    out = sm.splice(original, optimized, sm.GraphIO((), fetches, tuple(kept)))
    before = {n.name: n for n in original.node}
    names = {n.name for n in out.node}
    closure = set(sm._closure(before, kept))
    survivors = {n.name for n in original.node if n.name not in dropped}
    assert names == closure | survivors | {f"new_{n}" for n in survivors - closure}
    for node in out.node:
        if node.name in closure:
            assert node == before[node.name]
        else:
            assert node.op in ("Changed", "New")
        assert all(sm._node(i) in names for i in node.input)


def test_in_place_and_without_tensorflow(tmp_path: Path) -> None:
    """`-o` may name the input directory (it is read whole before the swap); the SavedModel path
    imports no TensorFlow (a fresh interpreter, which a test process that loaded TF cannot show)."""
    import subprocess
    import sys

    model = write_model(tmp_path / "model")
    variables = (model / "variables" / "variables.data-00000-of-00001").read_bytes()
    script = ("import sys; from egraft.passes.cli.main import main; "
              f"code = main([{str(model)!r}, '-tf-grappler', '-o', {str(model)!r}]); "
              "print(code, 'tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "False"], done.stderr
    assert (model / "variables" / "variables.data-00000-of-00001").read_bytes() == variables
    _, nodes = graph_of(model)
    assert "dead" not in nodes and not (model / sm.FINGERPRINT).exists()
    assert sorted(os.listdir(tmp_path)) == ["model"]
