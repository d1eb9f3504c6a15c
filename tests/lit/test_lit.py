"""egraft's own lit-style tests (`tests/lit/*.mlir`), run by the peer runner.

A file with an `// XFAIL: *` line is expected to fail, as lit reads it: each of its
cases must fail (strict, so a fixed bug shows up as an unexpected pass and the line
goes). Such a file says in a comment which bug it records.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.peer.runner import cases, run_case

_XFAIL = re.compile(r"^\s*//\s*XFAIL:\s*\*\s*$", re.M)


def _params() -> list:
    out = []
    for path in sorted(Path(__file__).parent.glob("*.mlir")):
        xfail = _XFAIL.search(path.read_text(encoding="utf-8")) is not None
        marks = [pytest.mark.xfail(strict=True, reason=f"{path.name} records a known bug")] if xfail else []
        out += [pytest.param(c, id=c.id, marks=marks) for c in cases(path, path.name)]
    return out


@pytest.mark.parametrize("case", _params())
def test_lit_case(case) -> None:
    outcome = run_case(case)
    assert outcome.passed, outcome.log
