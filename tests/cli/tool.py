"""Running egraft-opt from a test: in this process (fast), or as a real process when
the test needs one (signals, another user, the real stdout)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from egraft.passes.cli.main import main

REPO = Path(__file__).resolve().parents[2]
GOOD = REPO / "examples" / "dense_block.mlir"
#: What the `egraft-opt` console script runs, with this interpreter.
COMMAND = [sys.executable, "-c", "import sys; from egraft.passes.cli.main import main; sys.exit(main())"]


def run(*argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of egraft-opt run in this process."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=lambda: stdin, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def run_process(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *argv], capture_output=True, timeout=300, **kwargs)


def assert_one_error_line(err: str, *fragments: str) -> None:
    """egraft-opt's failure report is exactly one `...: error: ...` line."""
    lines = err.splitlines()
    assert len(lines) == 1 and ": error: " in lines[0], err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
