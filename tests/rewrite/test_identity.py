"""The identity check of the encoding: every real input survives lower → saturate (no
rules) → extract → write back as the same program (rewrite/encoding/equivalence.py), verifies,
and prints to text that reads back as the same program again."""

from __future__ import annotations

import pytest

from egraft.ir import parse, print_ir, verify
from egraft.rewrite.encoding.equivalence import equivalent
from egraft.rewrite.lower_pipeline import optimize

from .identity_inputs import SHARED, model_inputs, parses, peer_inputs, seed_inputs

pytestmark = [
    pytest.mark.peer,
    pytest.mark.skipif(not SHARED.is_dir(), reason=f"needs ../shared (models, peer tests, seeds), not at {SHARED}"),
]


def _cases(source: str, inputs: list[tuple[str, str]]) -> list:
    return [pytest.param(text, id=f"{source}:{name}") for name, text in inputs]


CASES = (_cases("model", model_inputs()) + _cases("peer", peer_inputs()) + _cases("seed", seed_inputs())
         if SHARED.is_dir() else [])


@pytest.mark.parametrize("text", CASES)
def test_identity_round_trip(text: str) -> None:
    if not parses(text):
        pytest.skip("not a valid module (a negative test of the reader or verifier)")
    module = parse(text, allow_unregistered=True)
    original = parse(text, allow_unregistered=True)
    optimize(module)
    verify(module)
    verdict = equivalent(original, module)
    assert verdict, verdict.reason
    try:
        reread = parse(print_ir(original), allow_unregistered=True)
    except Exception:  # noqa: BLE001 - the printer's own round trip is tested elsewhere
        return
    assert equivalent(reread, parse(print_ir(module), allow_unregistered=True))
