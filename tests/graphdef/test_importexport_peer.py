"""TF's GraphDef <-> tfg suite and the shipped models through egraft's importer/exporter.

Needs ../shared (skips with a message otherwise). Per-folder counts:
``python tests/graphdef/importexport_cases.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphdef_paths import MODELS, model_files, needs_shared
from importexport_cases import check_roundtrip, roundtrip_files, translate_cases, _runner
from egraft.ir import parse, print_ir, verify
from egraft.ir.graphdef import compare_graphdefs, load_graphdef
from egraft.ir.graphdef.export_graphdef import export_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.passes.tf.executor_to_tfg import executor_to_tfg
from egraft.passes.tf.tfg_to_executor import tfg_to_executor

pytestmark = [pytest.mark.peer, needs_shared]


@pytest.mark.parametrize("path", roundtrip_files(), ids=lambda p: p.name)
def test_roundtrip_suite(path: Path) -> None:
    assert check_roundtrip(path) == []


@pytest.mark.parametrize("case", translate_cases() if MODELS.is_dir() else [], ids=lambda c: c.id)
def test_translate_suite(case) -> None:
    outcome = _runner().run_case(case)
    assert outcome.passed, outcome.log


@pytest.mark.parametrize("path", model_files(), ids=lambda p: p.stem)
def test_models_round_trip_through_tfg(path: Path) -> None:
    graph = load_graphdef(path)
    module = import_graphdef(graph, str(path))
    verify(module)
    assert len(list(module.walk())) == len(graph.node) + 2  # module, graph, one op per node
    assert compare_graphdefs(graph, export_graphdef(module)) == []


@pytest.mark.parametrize("path", model_files(), ids=lambda p: p.stem)
def test_models_round_trip_through_tf_executor(path: Path) -> None:
    graph = load_graphdef(path)
    meta = json.loads(path.with_suffix(".json").read_text())
    executor = tfg_to_executor(import_graphdef(graph), fetches=meta["outputs"])
    text = print_ir(executor)
    assert "tf_executor.fetch %" in text
    back = executor_to_tfg(parse(text))
    verify(back)
    assert compare_graphdefs(graph, export_graphdef(back)) == []


def test_tensorflow_written_executor_mlir_exports() -> None:
    """TF's own import of cflow_v1 (names lost, derived attrs dropped) -> GraphDef with
    the same ops; elided weights are refused with the node named."""
    from collections import Counter

    from egraft.passes.cli.graphdef_io import as_tfg
    from egraft.ir.graphdef import GraphDefError

    mlir = MODELS.parent / "mlir"
    exported = export_graphdef(as_tfg(parse((mlir / "cflow_v1.mlir").read_text())))
    original = load_graphdef(MODELS / "cflow_v1.pb")
    assert Counter(n.op for n in exported.node) == Counter(n.op for n in original.node)
    assert all("T" in n.attr for n in exported.node if n.op in ("Switch", "Merge", "AddV2"))
    with pytest.raises(GraphDefError, match=r"node 'Const_\d+' attribute 'value': cannot export .*__elided__"):
        export_graphdef(as_tfg(parse((mlir / "bert4.elided.mlir").read_text())))
