"""The layering of docs/ARCHITECTURE.md, enforced: pyproject.toml's import-linter contracts hold,
and each one breaks when a back-edge is planted.

import-linter checks the import graph grimp builds from the source (imports inside functions
and under TYPE_CHECKING included), so an import hidden in a function does not dodge it.
`egraft` is a namespace package assembled from the top-level folders; the contracts name its
four packages as roots, and `test_graph_covers_every_module` checks that grimp really found
every module file. The planted back-edges never touch the repository: one test adds edges to
the in-memory graph (one per contract), the other writes an in-function import into a copy of
the sources in a temporary directory and runs `lint-imports` on the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from grimp import ImportGraph
from importlinter.api import read_configuration
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import Contract

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGES = ("ir", "patterns", "rewrite", "passes")  # folder `x` is `egraft.x`
CONTRACT_TYPES: dict[str, type[Contract]] = {
    "layers": LayersContract, "forbidden": ForbiddenContract, "independence": IndependenceContract}


@pytest.fixture(scope="module")
def config() -> dict:
    return read_configuration(str(PYPROJECT))


@pytest.fixture(scope="module")
def graph(config: dict) -> ImportGraph:
    """The import graph import-linter checks (same roots; TYPE_CHECKING imports count)."""
    return grimp.build_graph(*config["session_options"]["root_packages"], cache_dir=None)


def _broken(config: dict, graph: ImportGraph, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    """The ids of the contracts `graph` breaks, and import-linter's explanation of them."""
    broken = []
    capsys.readouterr()
    for options in config["contracts_options"]:
        contract = CONTRACT_TYPES[options["type"]](name=options["name"],
                                                   session_options=config["session_options"],
                                                   contract_options=options)
        check = contract.check(graph, verbose=False)
        if not check.kept:
            broken.append(options["id"])
            contract.render_broken_contract(check)
    return broken, capsys.readouterr().out


def test_contracts_hold(config: dict, graph: ImportGraph, capsys: pytest.CaptureFixture[str]) -> None:
    assert {"top", "passes", "rewrite", "ir"} <= {options["id"] for options in config["contracts_options"]}
    broken, why = _broken(config, graph, capsys)
    assert broken == [], why


def test_graph_covers_every_module(graph: ImportGraph) -> None:
    """grimp finds the namespace package's modules through the editable install: all of them."""
    on_disk = set()
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            on_disk.add(".".join(("egraft", *(parts[:-1] if parts[-1] == "__init__" else parts))))
    assert on_disk - graph.modules == set()


@pytest.mark.parametrize("importer, imported, contract", [
    # The edge issue #11 removed; through passes it also reaches ir's upper layers from below,
    # and passes' lower layers (tf-grappler's structural steps evaluate with ir.semantics).
    ("egraft.ir.semantics", "egraft.passes.soundness", "top passes ir"),
    ("egraft.patterns", "egraft.rewrite.engine", "top"),
    ("egraft.rewrite.engine", "egraft.passes.manager", "top"),
    ("egraft.passes.manager", "egraft.passes.transforms", "passes"),
    ("egraft.passes.transforms", "egraft.passes.tf", "passes"),  # siblings are independent
    ("egraft.passes.tf", "egraft.passes.soundness", "passes"),
    ("egraft.rewrite.engine", "egraft.rewrite.encoding", "rewrite"),
    ("egraft.rewrite.greedy", "egraft.rewrite.rules", "rewrite"),  # siblings are independent
    ("egraft.rewrite.rules", "egraft.rewrite.islands", "rewrite"),
    ("egraft.rewrite.encoding", "egraft.rewrite.lower_pipeline", "rewrite"),
    ("egraft.rewrite.islands", "egraft.rewrite.structural", "rewrite"),
    ("egraft.rewrite.lower_pipeline", "egraft.rewrite.phases", "rewrite"),
    ("egraft.ir.core", "egraft.ir.records", "ir"),
    ("egraft.ir.semantics", "egraft.ir.graphdef", "ir"),  # siblings are independent
    ("egraft.ir.core.operation", "egraft.ir.records.registry", "ir"),  # the lookup the registry installs
    ("egraft.ir.records.opdef", "egraft.ir.syntax.parser", "ir"),
    ("egraft.ir.syntax.parser", "egraft.ir.dialects.builtin", "ir"),
    ("egraft.ir.verifier", "egraft.ir.dialects", "ir"),
])
def test_planted_back_edge_breaks_its_contract(config: dict, graph: ImportGraph, importer: str, imported: str,
                                               contract: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert importer in graph.modules and imported in graph.modules, "plant between modules that exist"
    assert not graph.direct_import_exists(importer=importer, imported=imported)
    graph.add_import(importer=importer, imported=imported, line_number=1, line_contents="planted")
    try:
        broken, why = _broken(config, graph, capsys)
    finally:
        graph.remove_import(importer=importer, imported=imported)
    assert broken == contract.split()
    assert f"{importer} -> {imported}" in why


def _lint_copy(src: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the sources under `src/egraft`, with the repository's contracts."""
    script = ("import sys; from importlinter.cli import lint_imports; "
              f"sys.exit(lint_imports(config_filename={str(src / 'pyproject.toml')!r}, no_cache=True))")
    # The copy comes first on sys.path, ahead of the editable install's finder.
    return subprocess.run([sys.executable, "-c", script], cwd=src, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(src), "NO_COLOR": "1"}, timeout=300)


def test_in_function_back_edge_in_a_copy_fails_lint_imports(tmp_path: Path) -> None:
    for top in PACKAGES:
        shutil.copytree(ROOT / top, tmp_path / "egraft" / top,
                        ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")
    clean = _lint_copy(tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr  # the copy is linted like the repo

    victim = tmp_path / "egraft" / "ir" / "semantics" / "compare.py"
    victim.write_text(victim.read_text() + "\n\ndef _planted() -> None:\n"
                      "    from egraft.rewrite.greedy import driver  # noqa: F401\n")
    planted = _lint_copy(tmp_path)
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert "egraft.ir.semantics.compare -> egraft.rewrite.greedy.driver" in planted.stdout
