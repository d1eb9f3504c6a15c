"""docs/passes.md lists every registered pass as the registry declares it."""

from __future__ import annotations

from egraft.passes.manager.docs import DOC, egraft_passes, pass_reference, updated


def test_committed_pass_reference_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert updated(text) == text, "docs/passes.md is stale: run `python -m egraft.passes.manager.docs`"


def test_reference_names_every_pass_and_option() -> None:
    reference = pass_reference()
    passes = egraft_passes()
    assert {"cse", "canonicalize", "tf-executor-island-coarsening"} <= set(passes)
    for name, cls in passes.items():
        assert f"### `-{name}`" in reference
        for field in cls.__attrs_attrs__:  # type: ignore[attr-defined]
            assert f"| `{field.name.replace('_', '-')}` |" in reference
