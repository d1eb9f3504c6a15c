#!/usr/bin/env python
"""Every keras.applications model (and a BERT-style encoder) through egraft, checked by TensorFlow.

    python bench/keras_apps/run.py [models...] [--max-params 150] [--timeout 3600]

For each model of :mod:`zoo` (built on first use into the model cache): the identity
round trip through the e-graph, ``canonicalize`` and island coarsening, each
GraphDef -> tf_executor -> passes -> GraphDef, then TensorFlow runs every result next
to the original on 3 seeded feeds (:mod:`check`).  Each model runs in a child process
(memory is returned between models; a crash or a kill is a row, not the end of the run),
and builds and checks stop themselves above ``$EGRAFT_BENCH_MAX_RSS_MB`` (12000) rather
than let the kernel's OOM killer pick a victim (:mod:`memory_guard`).
Prints one row per model and path, and writes ``bench/out/keras_apps.{json,md}``.
Exit status 1 if any path failed or disagreed.

Models with more than ``--max-params`` million parameters are listed as not run:
freezing holds the weights about ten times over (8 GB for ConvNeXtLarge's 198 M) and
egraft about five times the .pb while converting, which a shared 24 GB machine cannot
give the largest ConvNeXts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
OUT = HERE.parents[1] / "bench" / "out"

import check  # noqa: E402
import memory_guard  # noqa: E402
import zoo  # noqa: E402


def one(name: str, paths: list[str], max_params: int) -> dict:
    """Build (or find) ``name`` and check it: a row of the table (runs in the child)."""
    files = zoo.ensure([name], max_params=max_params)[name]
    row = {"model": name, **{k: files.meta.get(k) for k in ("nodes", "params", "bytes", "build_s")}}
    if files.pb is None:
        row["skipped"] = f"{files.meta['params'] / 1e6:.0f} M parameters, over --max-params {max_params / 1e6:g} M"
        return row
    results = check.check_model(files.pb, files.meta, {p: check.PATHS[p] for p in paths})
    row["paths"] = [attrs.asdict(r) | {"status": r.status} for r in results]
    row["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return row


def run_child(name: str, paths: list[str], max_params: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "row.json"
        start = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, __file__, "--one", name, str(out), ",".join(paths), str(max_params)],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"model": name, "failed": f"timed out after {timeout:.0f} s"}
        if out.exists():
            row = json.loads(out.read_text())
            row["child_s"] = round(time.perf_counter() - start, 1)
            return row
        reason = f"signal {-proc.returncode} (killed: out of memory?)" if proc.returncode < 0 else \
            f"exit {proc.returncode}"
        tail = [line for line in (proc.stdout + proc.stderr).strip().splitlines() if line.strip()][-3:]
        return {"model": name, "failed": f"{reason}: {' | '.join(tail)}"}


_STOP = re.compile(r"stop=([^,]+(?:\([^)]*\))?)")  # "stop=saturated", "stop=seconds (budget timeout=60 s)"


def _num(x: float, digits: str = ".1e") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, digits)


def table(rows: list[dict]) -> str:
    lines = ["| model | nodes | params M | build s | peak MB | path | result | nodes after | egraft CPU s (passes) | "
             "e-graph stop | TF max abs | TF max rel | why not ok |",
             "|---|---:|---:|---:|---:|---|---|---:|---:|---|---:|---:|---|"]
    for row in rows:
        params = row.get("params")
        head = (f"| {row['model']} | {row.get('nodes') or '-'} | {_num(params and params / 1e6, '.1f')} | "
                f"{_num(row.get('build_s'), '.1f')} | {row.get('peak_mb', '-')} |")
        if "paths" not in row:
            lines.append(f"{head} all | {'not run' if 'skipped' in row else 'FAILED'} | | | | | | "
                         f"{row.get('skipped') or row.get('failed')} |")
            continue
        for r in row["paths"]:
            why = (r["error"] or r["tf_error"] or "").replace("|", "/")
            stops = [m.group(1) for m in map(_STOP.search, r.get("remarks", [])) if m]
            lines.append(f"{head} {r['path']} | {r['status']} | {r['nodes_after'] or '-'} | "
                         f"{r['cpu_s']:.1f} ({r['pipeline_cpu_s']:.1f}) | {', '.join(stops)} | {_num(r['max_abs'])} | "
                         f"{_num(r['max_rel'])} | {why} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--one"]:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        memory_guard.start(f"checking {argv[1]}")
        row = one(argv[1], argv[3].split(","), int(argv[4]))
        Path(argv[2]).write_text(json.dumps(row, default=str))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=list(zoo.MODELS))
    ap.add_argument("--paths", default=",".join(check.PATHS), help=f"comma-separated, of {', '.join(check.PATHS)}")
    ap.add_argument("--max-params", type=float, default=150.0,
                    help="millions of parameters above which a model is not built or run")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per model (build + check)")
    args = ap.parse_args(argv)
    paths = args.paths.split(",")
    unknown = [m for m in args.models if m not in zoo.MODELS] + [p for p in paths if p not in check.PATHS]
    if unknown:
        ap.error(f"unknown models or paths: {unknown}")
    rows = []
    for name in args.models:
        rows.append(run_child(name, paths, int(args.max_params * 1e6), args.timeout))
        print(table(rows[-1:]).splitlines()[-1] if "paths" not in rows[-1] else
              "\n".join(table(rows[-1:]).splitlines()[2:]), flush=True)
    text = (f"egraft paths {', '.join(paths)} (GraphDef -> tf_executor -> passes -> GraphDef, no fetch flags) on "
            f"keras.applications (weights=None, BatchNorm calibrated) and a BERT-style encoder; TensorFlow "
            f"{len(check.SEEDS)} seeded feeds, rtol 1e-4 atol 1e-5; max abs/rel differences of the logits "
            f"(softmax input) where there is a softmax, else of the outputs; rel = max|a-b| / max|a|.\n\n"
            + table(rows))
    print("\n" + text)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "keras_apps.json").write_text(json.dumps(rows, indent=1, default=str))
    (OUT / "keras_apps.md").write_text(text + "\n")
    return 0 if all("paths" in r and all(p["status"] == "ok" for p in r["paths"]) or "skipped" in r
                    for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
