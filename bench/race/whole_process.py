"""The shape race, whole process: each tool is a command run on a file, as a user runs it.

Tools (each reads the generated file and writes its result in generic form):

* egraft e-graph: ``egraft-opt F --pass-pipeline='builtin.module(func.func(canonicalize))'``
* egraft greedy:  the same with ``canonicalize{driver=greedy}``
* xDSL greedy:    ``xdsl-opt F -p canonicalize``
* xDSL eqsat:     ``xdsl-opt F -p 'eqsat-create-eclasses,apply-eqsat-pdl-interp{...},eqsat-add-costs,eqsat-extract,dce'``
  with the x-x→0 family as PDL (`xdsl_side.PDL_PATTERNS`, converted once, not timed)

xDSL runs with ``--allow-unregistered-dialect`` (tf ops, and arith ops 0.74 lacks, are opaque
to it). Measured per run: wall seconds, CPU seconds of the process (user + system, from
``wait4``; the figure to trust on a loaded machine), peak RSS, and ops left (``"dialect.op"(``
in the generic output: module, function and return included). Each run is capped at
``timeout`` seconds and reported as "timeout". Every output is also checked against the
input with egraft's reference interpreter on a few seeded random inputs ("wrong" if they differ).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OP_RE = re.compile(r'"[A-Za-z_][\w$]*\.[\w$.]+"\(')

TOOLS = ("egraft egraph", "egraft greedy", "xDSL greedy", "xDSL eqsat")


@dataclass
class Run:
    """One tool on one file: what it cost and what it left (or why it did not finish)."""

    wall: float
    cpu: float
    rss_mb: float
    ops_left: int | None
    status: str  # "ok", "timeout", "error: ..." or "wrong: ..." (invalid IR, or other results)

    def cell(self) -> str:
        if self.status == "timeout":
            return f"timeout (>{self.wall:.0f} s)"
        if self.status.startswith("skipped"):
            return self.status
        if self.status.startswith("error"):
            return self.status.split("\n")[0][:60]
        wrong = " **wrong**" if self.status.startswith("wrong") else ""
        return f"{self.wall:.2f} / {self.cpu:.2f} / {self.ops_left}{wrong}"


def commands(tool: str, src: Path, out: Path, matcher: Path) -> list[str]:
    bindir = Path(sys.executable).parent
    egraft = [str(bindir / "egraft-opt"), str(src), "--mlir-print-op-generic", "-o", str(out)]
    xdsl = [str(bindir / "xdsl-opt"), str(src), "--allow-unregistered-dialect", "--print-op-generic",
            "-o", str(out)]
    if tool == "egraft egraph":
        return egraft + ["--pass-pipeline=builtin.module(func.func(canonicalize))"]
    if tool == "egraft greedy":
        return egraft + ["--pass-pipeline=builtin.module(func.func(canonicalize{driver=greedy}))"]
    if tool == "xDSL greedy":
        return xdsl + ["-p", "canonicalize"]
    if tool == "xDSL eqsat":
        return xdsl + ["-p", f'eqsat-create-eclasses,apply-eqsat-pdl-interp{{pdl_interp_file="{matcher}"}},'
                             "eqsat-add-costs{default=1},eqsat-extract,dce"]
    raise ValueError(tool)


def run_process(cmd: list[str], timeout: float) -> tuple[float, float, float, int | None, str]:
    """(wall s, CPU s, peak RSS MB, exit code or None on timeout, stderr) of one command."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code: int | None = os.waitstatus_to_exitcode(status)
                break
            if time.perf_counter() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                code = None
                break
            time.sleep(0.02)
        proc.returncode = code if code is not None else -9  # reaped above: keep Popen from waiting again
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, stderr


def check_output(src_text: str, out_text: str, samples: int = 3) -> str | None:
    """Why the output computes something else than the input (None if it agrees on every sample)."""
    from egraft.ir import parse
    from egraft.ir.semantics import Undefined, Unsupported
    from egraft.ir.semantics.compare import differences
    from egraft.ir.semantics.inputs import argument_types
    from egraft.ir.semantics.interpreter import execute
    from tests.engine_shapes.drivers import random_inputs

    from egraft.ir import DiagnosticError, verify

    before, after = parse(src_text), parse(out_text)
    try:
        verify(after)
    except DiagnosticError as e:
        return "invalid IR: " + e.diagnostics[0].message[:160]
    for seed in range(samples):
        inputs = random_inputs(argument_types(before), seed)
        try:
            expected = execute(before, inputs).results
        except (Undefined, Unsupported):
            continue
        try:
            actual = execute(after, inputs).results
        except Undefined as e:
            return f"undefined where the input is not: {e}"
        diffs = differences(expected, actual)
        if diffs:
            return diffs[0][:200]
    return None


def _reason(stderr: str, code: int | None) -> str:
    """The line of a failed run's stderr that says why: a diagnostic or the exception raised."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    said = [ln for ln in lines if re.search(r"error:|Error\b|Exception\b", ln)]
    line = (said or lines or [f"exit {code}"])[-1]
    return line.rsplit("error: ", 1)[-1]  # without the file:line:col prefix


def race_file(src: Path, tools: tuple[str, ...], timeout: float, matcher: Path, check: bool,
              skip: dict[str, str] | None = None) -> dict[str, Run]:
    """Every tool on `src` (outputs beside it); tools in `skip` are not run, their reason reported
    (a tool that timed out on a smaller input of the same shape would only burn the timeout again)."""
    text = src.read_text() if check else ""
    runs = {}
    for tool in tools:
        if skip and tool in skip:
            runs[tool] = Run(0.0, 0.0, 0.0, None, f"skipped: {skip[tool]}")
            continue
        out = src.with_suffix(f".{tool.replace(' ', '_')}.mlir")
        out.unlink(missing_ok=True)
        wall, cpu, rss, code, stderr = run_process(commands(tool, src, out, matcher), timeout)
        if code is None:
            runs[tool] = Run(wall, cpu, rss, None, "timeout")
            continue
        if code != 0 or not out.exists():
            runs[tool] = Run(wall, cpu, rss, None, f"error: {_reason(stderr, code)}")
            continue
        out_text = out.read_text()
        why = check_output(text, out_text) if check else None
        runs[tool] = Run(wall, cpu, rss, len(OP_RE.findall(out_text)), f"wrong: {why}" if why else "ok")
    return runs
