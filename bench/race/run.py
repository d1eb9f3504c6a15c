"""The canonicalization race: egraft's `canonicalize` (e-graph and greedy drivers) against
xDSL 0.74 (greedy `canonicalize`, and its equality-saturation pipeline with the same
rules as PDL) on generated arith modules, and against MLIR's own canonicalizer (through
TensorFlow) on the shipped TF models. Every figure of one table comes from one run.

Timed: the pass alone (parsing and printing excluded), wall clock, best of `--repeat`.
Reported: seconds, ops left, and ratios. Targets (docs/canonicalize.md): e-graph
canonicalize no slower than xDSL's greedy one, ≥50× faster than its eqsat pipeline, and
near-linear from 10k to 100k ops.

Run: python bench/race/run.py [--sizes 10000,100000] [--repeat 3] [--eqsat-max 10000] [--no-tf]

The shape race (`--shapes`) times whole processes instead (`whole_process.py`): egraft-opt's
e-graph and greedy canonicalize, xdsl-opt's canonicalize and its eqsat pipeline, on every
generator of `shapes.py` at each size, each run capped by `--timeout`, every output checked
with the interpreter. Figures are wall / CPU seconds and ops left; ratios use CPU seconds.

    python bench/race/run.py --shapes all                      # 1k, 10k, 100k ops
    python bench/race/run.py --shapes arith-chain,graph-tf --sizes 1000,10000 --timeout 120
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402
import shapes  # noqa: E402
import whole_process  # noqa: E402
import xdsl_side  # noqa: E402

OUT = HERE.parents[0] / "out"
MODELS = HERE.parents[2] / "shared" / "tfmodels" / "mlir"


def egraft_run(text: str, driver: str, pipeline: str | None = None) -> tuple[float, int]:
    """(seconds for the pass, ops left) for egraft's canonicalize with `driver`."""
    import egraft.passes  # noqa: F401  (registers the passes)
    from egraft.ir import parse
    from egraft.passes.manager.pass_manager import PassManager
    from egraft.passes.manager.pipeline import parse_pipeline

    module = parse(text)
    pm = PassManager(parse_pipeline(pipeline or f"builtin.module(func.func(canonicalize{{driver={driver}}}))"))
    start = time.perf_counter()
    pm.run(module)
    return time.perf_counter() - start, sum(1 for _ in module.walk())


def best(fn, repeat: int) -> tuple[float, int]:
    runs = [fn() for _ in range(repeat)]
    return min(r[0] for r in runs), runs[-1][1]


def arith_race(sizes: list[int], repeat: int, eqsat_max: int) -> list[dict]:
    rows = []
    for n in sizes:
        text = gen.generate(n)
        reps = repeat if n <= 10_000 else 1
        row: dict = {"ops": n}
        row["egraft egraph"] = best(lambda: egraft_run(text, "egraph"), reps)
        row["egraft greedy"] = best(lambda: egraft_run(text, "greedy"), reps)
        row["xDSL greedy"] = best(lambda: xdsl_side.run(text, "greedy"), reps)
        row["xDSL eqsat"] = xdsl_side.run(text, "eqsat") if n <= eqsat_max else None
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def tf_race() -> list[dict]:
    """Ops left and seconds: MLIR's func.func(canonicalize) vs egraft's, per shipped model."""
    import tensorflow as tf

    rows = []
    for path in sorted(MODELS.glob("*.elided.mlir")):
        text = path.read_text()
        start = time.perf_counter()
        out = tf.mlir.experimental.run_pass_pipeline(text, "func.func(canonicalize)", show_debug_info=False)
        mlir_s = time.perf_counter() - start
        from egraft.ir import parse

        mlir_ops = sum(1 for _ in parse(out).walk())
        egraph = egraft_run(text, "egraph")
        greedy = egraft_run(text, "greedy")
        row = {"model": path.name, "ops in": sum(1 for _ in parse(text).walk()), "MLIR": (mlir_s, mlir_ops),
               "egraft egraph": egraph, "egraft greedy": greedy}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def table(rows: list[dict], key: str) -> str:
    cols = [c for c in rows[0] if c not in (key, "ops in")]
    head = f"| {key} | " + " | ".join(f"{c} s / ops left" for c in cols) + " |"
    lines = [head, "|" + "---|" * (len(cols) + 1)]
    for r in rows:
        cells = ["not run" if r[c] is None else f"{r[c][0]:.3f} / {r[c][1]}" for c in cols]
        lines.append(f"| {r[key]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratios(rows: list[dict]) -> str:
    out = []
    for r in rows:
        eg = r["egraft egraph"][0]
        parts = [f"xDSL greedy / egraft egraph = {r['xDSL greedy'][0] / eg:.2f}"]
        if r["xDSL eqsat"] is not None:
            parts.append(f"xDSL eqsat / egraft egraph = {r['xDSL eqsat'][0] / eg:.1f}")
        parts.append(f"egraft greedy / egraft egraph = {r['egraft greedy'][0] / eg:.2f}")
        out.append(f"- {r['ops']} ops: " + "; ".join(parts))
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        growth = b["egraft egraph"][0] / a["egraft egraph"][0]
        out.append(f"- egraft egraph growth {a['ops']} → {b['ops']} ops: {growth:.1f}× for {b['ops'] / a['ops']:.0f}× ops")
    return "\n".join(out)


def shape_race(names: list[str], sizes: list[int], tools: tuple[str, ...], timeout: float, check: bool) -> str:
    """Every tool on every shape and size, whole process; the report as markdown."""
    workdir = OUT / "race_shapes"
    workdir.mkdir(parents=True, exist_ok=True)
    matcher = Path(xdsl_side.eqsat_matcher_file(str(workdir)))
    report = []
    for name in names:
        rows = []
        skip: dict[str, str] = {}
        for n in sizes:
            src = workdir / f"{name}_{n}.mlir"
            src.write_text(shapes.SHAPES[name](n, 0))
            runs = whole_process.race_file(src, tools, timeout, matcher, check, skip)
            skip.update({t: f"timed out at {n} ops" for t, r in runs.items() if r.status == "timeout"})
            rows.append((n, runs))
            print(json.dumps({"shape": name, "ops": n, **{t: r.cell() for t, r in runs.items()}}), flush=True)
        report += [f"### {name}", "", shape_table(rows, tools), "", shape_ratios(rows, tools), ""]
    return "\n".join(report)


def shape_table(rows: list[tuple[int, dict]], tools: tuple[str, ...]) -> str:
    head = "| ops in | " + " | ".join(f"{t}: wall s / CPU s / ops left" for t in tools) + " |"
    lines = [head, "|" + "---|" * (len(tools) + 1)]
    lines += [f"| {n} | " + " | ".join(runs[t].cell() for t in tools) + " |" for n, runs in rows]
    return "\n".join(lines)


def shape_ratios(rows: list[tuple[int, dict]], tools: tuple[str, ...]) -> str:
    """CPU-time ratios against egraft's e-graph canonicalize (above 1: egraft e-graph is faster)."""
    out = []
    base = "egraft egraph"
    for n, runs in rows:
        eg = runs.get(base)
        if eg is None or eg.status != "ok":
            out.append(f"- {n} ops: egraft egraph {eg.cell() if eg else 'not run'}")
            continue
        parts = []
        for t in tools:
            r = runs[t]
            if t == base:
                continue
            if r.status == "ok" or r.status.startswith("wrong"):
                parts.append(f"{t} / egraph CPU = {r.cpu / eg.cpu:.2f}, ops left {r.ops_left} vs {eg.ops_left}"
                             + (" (its output is wrong)" if r.status.startswith("wrong") else ""))
            elif r.status == "timeout":
                parts.append(f"{t} / egraph CPU > {r.cpu / eg.cpu:.0f} (timeout)")
            else:
                parts.append(f"{t}: {r.cell()}")
        out.append(f"- {n} ops: " + "; ".join(parts))
    ok = [(n, runs[base]) for n, runs in rows if base in runs and runs[base].status == "ok"]
    if len(ok) > 1:
        (n0, a), (n1, b) = ok[0], ok[-1]
        out.append(f"- egraft egraph growth {n0} → {n1} ops: {b.cpu / a.cpu:.1f}× CPU for {n1 / n0:.0f}× ops")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=None, help="default 10000,100000 (1000,10000,100000 with --shapes)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--eqsat-max", type=int, default=10_000, help="largest size to run xDSL's eqsat on")
    ap.add_argument("--no-tf", action="store_true")
    ap.add_argument("--only-tf", action="store_true")
    ap.add_argument("--shapes", default="", help="the whole-process shape race: 'all' or names from shapes.py")
    ap.add_argument("--tools", default=",".join(whole_process.TOOLS), help="shape race: tools to run")
    ap.add_argument("--timeout", type=float, default=600, help="shape race: seconds per run before 'timeout'")
    ap.add_argument("--no-check", action="store_true", help="shape race: skip the interpreter check of outputs")
    args = ap.parse_args()
    if args.shapes:
        sizes = [int(s) for s in (args.sizes or "1000,10000,100000").split(",")]
        tools = tuple(t for t in whole_process.TOOLS if t in args.tools.split(","))
        text = shape_race(shapes.select(args.shapes), sizes, tools, args.timeout, not args.no_check)
        OUT.mkdir(exist_ok=True)
        (OUT / "race_shapes.md").write_text(text + "\n")
        print(text)
        return
    args.sizes = args.sizes or "10000,100000"
    report = []
    if not args.only_tf:
        rows = arith_race([int(s) for s in args.sizes.split(",")], args.repeat, args.eqsat_max)
        report += ["## arith modules (x-x→0 family)", "", table(rows, "ops"), "", ratios(rows)]
    if not args.no_tf:
        report += ["", "## TF models: MLIR's canonicalizer vs egraft", "", table(tf_race(), "model")]
    OUT.mkdir(exist_ok=True)
    (OUT / ("race_tf.md" if args.only_tf else "race.md")).write_text("\n".join(report) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main()
