"""The generated files (the pass index the registry reads and the pass reference in
docs/passes.md) are what discovery of the pass modules gives now."""

from __future__ import annotations

import subprocess
import sys

from egraft.passes.manager.docs import pass_reference
from egraft.passes.manager.regenerate import INDEX, discover, generated_files


def test_committed_generated_files_are_current() -> None:
    for path, (current, fresh) in generated_files().items():
        assert current == fresh, f"{path} is stale: run `python -m egraft.passes.manager.regenerate`"


def test_discovery_finds_the_passes_of_every_subpackage() -> None:
    passes = discover()
    assert {"cse", "canonicalize", "eqsat", "tf-executor-island-coarsening"} <= set(passes)
    assert {cls.__module__.split(".")[2] for cls in passes.values()} >= {"transforms", "tf"}


def test_reference_names_every_pass_and_option() -> None:
    passes = discover()
    reference = pass_reference(passes)
    for name, cls in passes.items():
        assert f"### `-{name}`" in reference
        for field in cls.__attrs_attrs__:  # type: ignore[attr-defined]
            assert f"| `{field.name.replace('_', '-')}` |" in reference


def test_the_registry_imports_only_the_passes_a_run_names() -> None:
    """A lookup imports the indexed module of that pass and no other pass module;
    listing the registry imports them all (a fresh interpreter: this one has them)."""
    probe = ("import sys; from egraft.passes import PASSES; PASSES['cse']; "
             "a = sorted(m for m in sys.modules if m.startswith('egraft.passes.t')); "
             "list(PASSES); b = sorted(m for m in sys.modules if m.startswith('egraft.passes.t')); "
             "print(a); print(len(PASSES), sorted(PASSES) == sorted(PASSES.registered()))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    first, second = out.stdout.splitlines()
    assert first == str(["egraft.passes.transforms", "egraft.passes.transforms.cse"])
    count = INDEX.read_text(encoding="utf-8").count('": "egraft.passes.')
    assert second == f"{count} True"
