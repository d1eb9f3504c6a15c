"""Issue #9's chain-shaped function (gen_arith_chain.py): egraft's e-graph canonicalize with its
default budgets against its greedy driver and xDSL 0.74's greedy canonicalize, whole process,
and how close `canonicalize{timeout=T}` ends to T.

Table 1, per size: wall / CPU seconds of the whole process (parse, pass, print) and ops left
(``"d.op"(`` in the generic output, module, function and return included), each output
checked against the input with egraft's interpreter; the e-graph's stop reason and iterations
from its report. Table 2: the pass's wall time (`--mlir-timing`) with `timeout=T`, and what
the report says stopped it. CPU time is the figure to trust on a loaded machine; the load
average is printed with each table.

Run: python bench/race/chain_race.py [--sizes 1000,3000,10000,100000] [--timeouts 5] [--timeout-sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import gen_arith_chain  # noqa: E402
from whole_process import OP_RE, check_output, run_process  # noqa: E402

TOOLS = {
    "egraft e-graph (defaults)": ["--pass-pipeline=builtin.module(func.func(canonicalize{report=true}))"],
    "egraft greedy": ["--pass-pipeline=builtin.module(func.func(canonicalize{driver=greedy}))"],
    "xDSL greedy": None,
}
REPORT_RE = re.compile(r"(stop=[^,]*(?:, nothing written back[^,]*)?), iterations=(\d+)")
TIMING_RE = re.compile(r"^\s*([\d.]+) \(\s*[\d.]+%\)\s+Canonicalize\s*$", re.M)


def command(tool: str, src: Path, out: Path, extra: list[str] | None = None) -> list[str]:
    bindir = Path(sys.executable).parent
    if tool == "xDSL greedy":
        return [str(bindir / "xdsl-opt"), str(src), "--print-op-generic", "-p", "canonicalize", "-o", str(out)]
    return [str(bindir / "egraft-opt"), str(src), "--mlir-print-op-generic", "-o", str(out), *(extra or TOOLS[tool])]


def cell(src: Path, tool: str, limit: float) -> str:
    out = src.with_suffix(f".{tool.split()[0]}{len(tool)}.mlir")
    wall, cpu, _, code, stderr = run_process(command(tool, src, out), limit)
    if code is None:
        return f"timeout (>{limit:.0f} s)"
    if code != 0:
        return f"error: {stderr.strip().splitlines()[-1][:80] if stderr.strip() else code}"
    text = out.read_text()
    why = check_output(src.read_text(), text)
    stop = REPORT_RE.search(stderr)
    note = f" ({stop.group(1)}, {stop.group(2)} it.)" if stop else ""
    return f"{wall:.2f} / {cpu:.2f} / {len(OP_RE.findall(text))}{' **wrong**' if why else ''}{note}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,3000,10000,100000")
    ap.add_argument("--timeouts", default="5")
    ap.add_argument("--timeout-sizes", default="10000,100000")
    ap.add_argument("--limit", type=float, default=900.0, help="seconds before a run is killed")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="chain-race-") as tmp:
        files = {}
        for n in sorted({int(x) for x in (args.sizes + "," + args.timeout_sizes).split(",") if x}):
            files[n] = Path(tmp) / f"chain{n}.mlir"
            files[n].write_text(gen_arith_chain.generate(n))
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; cells: wall s / CPU s / ops left")
        print("| ops | " + " | ".join(TOOLS) + " |\n|---|" + "---|" * len(TOOLS))
        for n in (int(x) for x in args.sizes.split(",") if x):
            print(f"| {n:,} | " + " | ".join(cell(files[n], tool, args.limit) for tool in TOOLS) + " |", flush=True)
        print(f"\nload average {os.getloadavg()[0]:.1f}; the pass's wall time (--mlir-timing) under a time budget")
        print("| ops | timeout | pass wall s | over budget | report |\n|---|---|---|---|---|")
        for n in (int(x) for x in args.timeout_sizes.split(",") if x):
            for t in (float(x) for x in args.timeouts.split(",")):
                pipeline = f"--pass-pipeline=builtin.module(func.func(canonicalize{{timeout={t:g} report=true}}))"
                out = files[n].with_suffix(".budget.mlir")
                _, _, _, code, stderr = run_process(command("egraft", files[n], out, [pipeline, "--mlir-timing"]),
                                                    args.limit)
                timing, stop = TIMING_RE.search(stderr or ""), REPORT_RE.search(stderr or "")
                if code != 0 or timing is None:
                    print(f"| {n:,} | {t:g} | error (exit {code}) | | |")
                    continue
                spent = float(timing.group(1))
                print(f"| {n:,} | {t:g} | {spent:.2f} | {100 * (spent / t - 1):+.0f}% | "
                      f"{stop.group(1) if stop else ''}, {stop.group(2) if stop else '?'} it. |", flush=True)


if __name__ == "__main__":
    main()
