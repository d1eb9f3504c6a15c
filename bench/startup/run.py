"""The floor of an `egraft-opt` run: process start-up on tiny inputs, against xdsl-opt.

A lit suite runs the tool once per RUN line, so what a user waits for there is the
fixed cost of a process: interpreter start, imports, registering dialects and
passes.  This measures it on an empty module and on a `cse` pipeline over a small
function (`small.mlir`), for `egraft-opt` and `xdsl-opt` in the same run, plus a
bare `python -c pass` as the interpreter's own floor.

Each command runs `--repeat` times as a fresh process; the table gives the median
wall time and the median CPU time (user+sys of the child, from `wait4`), which
hardly moves when other tenants load the machine.  `--pythonpath DIR` runs egraft
from another checkout (a directory holding an `egraft` package), to compare a
change against its parent in the same run.

Run: python bench/startup/run.py [--repeat K] [--pythonpath DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SMALL = HERE / "small.mlir"


def measure(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds) of `repeat` fresh runs of `argv`."""
    walls, cpus = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10, help="fresh processes per command (default 10)")
    ap.add_argument("--pythonpath", help="run egraft from this directory (holding an 'egraft' package)")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = os.path.abspath(args.pythonpath)
    # What the console scripts run (`egraft-opt`, `xdsl-opt`), with this interpreter.
    egraft = [sys.executable, "-c", "import sys; from egraft.passes.cli.main import main; sys.exit(main())"]
    xdsl = [sys.executable, "-c", "import sys; from xdsl.tools.xdsl_opt import main; sys.exit(main())"]
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.mlir"
        empty.write_text("module {\n}\n")
        rows = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("egraft-opt empty.mlir", [*egraft, str(empty)]),
            ("xdsl-opt empty.mlir", [*xdsl, str(empty)]),
            ("egraft-opt small.mlir -cse", [*egraft, str(SMALL), "-cse"]),
            ("xdsl-opt small.mlir -p cse", [*xdsl, str(SMALL), "-p", "cse"]),
        ]
        results = {name: measure(argv, env, args.repeat) for name, argv in rows}
    print(f"{'command':<30} {'wall (median)':>14} {'CPU (median)':>13}")
    for name, (wall, cpu) in results.items():
        print(f"{name:<30} {wall:>12.3f} s {cpu:>11.3f} s")
    for what in ("empty.mlir", "small"):
        e = next(v for k, v in results.items() if k.startswith("egraft") and what in k)
        x = next(v for k, v in results.items() if k.startswith("xdsl") and what in k)
        print(f"egraft/xdsl {what:<11} wall {e[0] / x[0]:.2f}x  CPU {e[1] / x[1]:.2f}x")


if __name__ == "__main__":
    main()
