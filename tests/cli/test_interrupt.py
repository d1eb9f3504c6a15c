"""Ctrl-C: one line, exit status 130, no partial output (and no temporary file)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from .tool import COMMAND


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _long_input(path: Path, ops: int) -> None:
    lines = ["func.func @f(%a: i32) -> i32 {", "  %v0 = arith.addi %a, %a : i32"]
    lines += [f"  %v{i} = arith.addi %v{i - 1}, %a : i32" for i in range(1, ops)]
    lines += [f"  return %v{ops - 1} : i32", "}"]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("delay", [0.0, 0.5], ids=["as-the-output-opens", "in-the-pipeline"])
def test_sigint_during_a_long_pipeline(tmp_path: Path, delay: float) -> None:
    src, out = tmp_path / "big.mlir", tmp_path / "out.mlir"
    _long_input(src, 30_000)
    # A shell without job control starts background jobs with SIGINT ignored, and Python
    # keeps an inherited SIG_IGN (as it should): the tool under test gets the default.
    proc = subprocess.Popen([*COMMAND, str(src), "-canonicalize", "-cse", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_sigint)
    try:
        # The temporary output file appears once the input is read: the pipeline is running.
        deadline = time.monotonic() + 120
        while not any(p.name.startswith(".egraft-opt-") for p in tmp_path.iterdir()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "egraft-opt never opened its output"
            time.sleep(0.01)
        time.sleep(delay)
        assert proc.poll() is None, "the pipeline ended before the signal"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr.decode().splitlines() == ["egraft-opt: interrupted"]
    assert stdout == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.mlir"]
