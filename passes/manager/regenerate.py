"""The files generated from the passes egraft's modules register: the pass index and
the pass reference in docs/passes.md.

A pass is found by discovery, not by a list: every module under `egraft/passes/` (in
any subpackage, present or future) is imported, and the passes they register with
`@register_pass` are the built-in passes.  Importing them all costs what egraft-opt
must not pay at start-up (the GraphDef conversions pull in protobuf), so discovery runs
here, when a developer regenerates, and the run-time registry reads its result from the
index (`pass_index.py`: pass name -> module), importing one module per pass it is asked
for.  tests/cli/test_docs.py runs the same discovery and fails while either file is stale.

Run: python -m egraft.passes.manager.regenerate [--check]   (--check: exit 1 if a file is stale)
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from egraft.passes.manager import docs, pass_index
from egraft.passes.manager.registry import PASSES, Pass

INDEX = Path(pass_index.__file__)
PASSES_DIR = Path(__file__).resolve().parents[1]  # egraft/passes


def _fail(package: str) -> None:
    """A subpackage that does not import is an error, not a subpackage without passes
    (pkgutil would skip it silently and the index would lose its passes)."""
    raise ImportError(f"cannot import {package} to discover its passes")


def discover() -> dict[str, type[Pass]]:
    """The passes the modules under egraft/passes register (by name, sorted); passes
    registered from elsewhere (tests) are not built-in and are left out."""
    for module in pkgutil.walk_packages([str(PASSES_DIR)], "egraft.passes.", onerror=_fail):
        importlib.import_module(module.name)
    return {name: cls for name, cls in sorted(PASSES.registered().items())
            if cls.__module__.startswith("egraft.passes.")}


INDEX_HEADER = '''"""Which module registers each built-in pass (generated; do not edit).

Written by `python -m egraft.passes.manager.regenerate` from the passes that the modules
under egraft/passes register; the registry imports a pass's module from here on first use.
tests/cli/test_docs.py fails while this file is stale.
"""
'''


def index_text(passes: dict[str, type[Pass]]) -> str:
    """The source of pass_index.py for `passes`."""
    rows = "".join(f'    "{name}": "{cls.__module__}",\n' for name, cls in passes.items())
    return f"{INDEX_HEADER}\nPASS_MODULES: dict[str, str] = {{\n{rows}}}\n"


def generated_files() -> dict[Path, tuple[str, str]]:
    """For each generated file: (its committed text, the text discovery gives now)."""
    passes = discover()
    doc = docs.DOC.read_text(encoding="utf-8")
    return {INDEX: (INDEX.read_text(encoding="utf-8"), index_text(passes)),
            docs.DOC: (doc, docs.updated(doc, passes))}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    stale = 0
    for path, (current, fresh) in generated_files().items():
        if fresh == current:
            continue
        if "--check" in argv:
            print(f"{path} is stale: run `python -m egraft.passes.manager.regenerate`", file=sys.stderr)
            stale = 1
        else:
            path.write_text(fresh, encoding="utf-8")
    return stale


if __name__ == "__main__":
    sys.exit(main())
