"""egraft-opt on GraphDefs: formats from extensions or flags, --emit, diagnostics."""

from __future__ import annotations

import io
from pathlib import Path

from egraft.ir.graphdef import compare_graphdefs, load_graphdef, parse_pbtxt, save_graphdef
from egraft.passes.cli.main import main

GRAPH = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "a" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "b" op: "Neg" input: "x" input: "^a" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "s" op: "Switch" input: "b" input: "p" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "p" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
  attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }
versions { producer: 27 }
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=lambda: b"", stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, name: str = "g.pbtxt") -> Path:
    path = tmp_path / name
    save_graphdef(parse_pbtxt(GRAPH), path)
    return path


def test_pbtxt_to_tfg_text(tmp_path: Path) -> None:
    code, out, err = run(str(write(tmp_path)))
    assert code == 0, err
    assert "tfg.graph #tf_type.version<producer = 27, min_consumer = 0>" in out
    assert 'Neg(%Placeholder) [%ctl_0] name("b")' in out


def test_pb_round_trip_with_pipeline(tmp_path: Path) -> None:
    src = write(tmp_path, "g.pb")
    code, _, err = run(str(src), "--pass-pipeline=builtin.module(cse,dce)", "-o", str(tmp_path / "out.pb"))
    assert code == 0, err
    assert compare_graphdefs(load_graphdef(src), load_graphdef(tmp_path / "out.pb")) == []


def test_emit_tf_executor_and_back(tmp_path: Path) -> None:
    code, out, err = run(str(write(tmp_path)), "--emit=tf_executor")
    assert code == 0, err
    assert 'tf_executor.island wraps "tf.Neg"' in out and "tf_executor.Switch" in out
    (tmp_path / "e.mlir").write_text(out)
    code, _, err = run(str(tmp_path / "e.mlir"), "-o", str(tmp_path / "back.pbtxt"))
    assert code == 0, err
    assert compare_graphdefs(parse_pbtxt(GRAPH), load_graphdef(tmp_path / "back.pbtxt")) == []


def test_emit_graphdef_prints_text(tmp_path: Path) -> None:
    code, out, err = run(str(write(tmp_path)), "--emit=graphdef")
    assert code == 0, err
    assert compare_graphdefs(parse_pbtxt(GRAPH), parse_pbtxt(out)) == []


def test_format_flags_override_extensions(tmp_path: Path) -> None:
    src = tmp_path / "graph.bin"
    save_graphdef(parse_pbtxt(GRAPH), src, format="binary")
    code, out, err = run(str(src), "--input-format=pb", "--output-format=pbtxt")
    assert code == 0, err
    assert 'name: "s"' in out
    code, _, err = run(str(src), "--input-format=onnx")
    assert code == 1 and "unknown format 'onnx'" in err


def test_bad_inputs_are_diagnostics(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('node { name: "y" op: "Neg" input: "missing" attr { key: "T" value { type: DT_FLOAT } } }')
    code, _, err = run(str(bad))
    assert code == 1
    assert err.startswith(f"{bad}: error: INVALID_ARGUMENT: Non-existent input missing in node y")
    syntax = tmp_path / "syntax.pbtxt"
    syntax.write_text("node { nme: 1 }")
    code, _, err = run(str(syntax))
    assert code == 1 and err.startswith(f"{syntax}:1:8: error:") and "Traceback" not in err
    code, _, err = run(str(write(tmp_path)), "--emit=onnx")
    assert code == 1 and "--emit must be one of graphdef, tfg, tf_executor" in err


def test_export_errors_name_the_op(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    src.write_text('"test.op"() : () -> ()')
    code, _, err = run(str(src), "--allow-unregistered-dialect", "--emit=graphdef")
    assert code == 1 and "'test.op' cannot be exported to a GraphDef" in err
