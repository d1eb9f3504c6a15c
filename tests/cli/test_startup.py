"""egraft-opt starts fast: a run that builds no e-graph imports neither egglog (0.6 s,
it pulls in `black`) nor numpy nor protobuf.  Timings are in bench/startup; this checks
the imports that decide them, in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

from .tool import GOOD

HEAVY = ("egglog", "egglog.bindings", "numpy", "google.protobuf")
PROBE = """
import json, sys
from egraft.passes.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules]}), file=sys.stderr)
""" % (HEAVY,)


def loaded_by(*argv: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, timeout=300)
    report = json.loads(proc.stderr.decode().splitlines()[-1])
    assert report["code"] == 0, proc.stderr.decode()
    return report["loaded"]


def test_importing_the_cli_loads_no_heavy_module() -> None:
    proc = subprocess.run([sys.executable, "-c", "import sys, egraft.passes.cli.main; "
                                                 f"print([m for m in {HEAVY!r} if m in sys.modules])"],
                          capture_output=True, timeout=300)
    assert proc.stdout.decode().strip() == "[]", proc.stderr.decode()


def test_pipelines_without_an_egraph_load_no_heavy_module() -> None:
    assert loaded_by(str(GOOD), "-cse") == []
    assert loaded_by(str(GOOD), "--pass-pipeline=builtin.module(func.func(cse,dce),symbol-dce)") == []


def test_the_egraph_loads_egglog_when_it_is_built() -> None:
    """The check above is not vacuous: a pipeline that builds an e-graph does load it (its
    compiled bindings only: rewrite/engine/egraph.py)."""
    assert "egglog.bindings" in loaded_by(str(GOOD), "-eqsat")
