"""Scaling of egraft's affine/memref passes on generated loop nests, against xDSL and MLIR.

    python bench/affine/bench_affine.py                        # 100 .. 100k ops, 3 runs each
    python bench/affine/bench_affine.py --sizes 100,1000 --repeat 1
    python bench/affine/bench_affine.py --mlir-opt /path/to/iree-opt   # MLIR's own canonicalize

Input: `tests/strategies/loop_nests.generate` — one function of loop nests of depth 3-5 one
after another (affine subscripts with symbols, min/max bounds, iter_args, affine.if, casts,
scratch buffers, store-then-load pairs), with grayboxes at random depths ("graybox" input)
and the same generator without grayboxes ("plain" input, which peers without `affine.graybox`
can read).

Measured (process CPU seconds, median of `--repeat` runs, a fresh parse before each run, the
parse untimed; the verifier off while timing and run once after):

* egraft: every pass of `PASSES` that is registered, on both inputs;
* xDSL 0.74: its `canonicalize` and `cse` on the same module, read in generic form (its affine
  dialect lacks `affine.min`/`max` and custom forms; unregistered ops allowed, so grayboxes
  are opaque ops to it);
* MLIR: `canonicalize` and `cse` of an `mlir-opt`-compatible binary (`--mlir-opt`, else
  `mlir-opt` or `iree-opt` on PATH, else the `iree-opt` of an installed `iree-base-compiler`),
  single-threaded, the pass's own line of `--mlir-timing` (parse and print excluded), on the
  plain input: upstream MLIR has no `affine.graybox`. TensorFlow's `run_pass_pipeline`
  cannot be the MLIR peer: its context registers neither `affine` nor `memref` ("Dialect
  `affine' not found", probed in `probe_tensorflow`).

Reported per pass: µs per op at each size, and the growth exponent between consecutive sizes
(slope of log time over log ops) beside n log n's over the same interval (≈1.0-1.1): a
pass within n log n has an exponent at most that. A pass whose run at some size exceeds
`--cap` seconds is not run at larger sizes (said in the table).
Raw numbers go to bench/out/affine/results.json, inputs to bench/out/affine/*.mlir.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
sys.setrecursionlimit(100_000)

from tests.strategies.loop_nests import generate  # noqa: E402

OUT = os.path.join(ROOT, "bench", "out", "affine")

#: egraft pipelines timed (those whose passes are not registered yet are listed as such).
PASSES = {
    "canonicalize": "func.func(canonicalize)",
    "canonicalize{driver=greedy}": "func.func(canonicalize{driver=greedy})",
    "cse": "func.func(cse)",
    "dce": "func.func(dce)",
    "affine-scalrep": "func.func(affine-scalrep)",
    "affine-graybox-eliminate": "func.func(affine-graybox-eliminate)",
    "affine-graybox-hoist": "func.func(affine-graybox-hoist)",
}
PEER_PASSES = ("canonicalize", "cse")


# --------------------------------------------------------------------------- timing


def cpu_median(fn: Callable[[], Any], setup: Callable[[], Any], repeat: int) -> float:
    """Median process CPU seconds of `fn(setup())` (setup untimed)."""
    runs = []
    for _ in range(repeat):
        arg = setup()
        gc.collect()
        start = time.process_time()
        fn(arg)
        runs.append(time.process_time() - start)
        del arg
    return statistics.median(runs)


def growth(sizes: list[int], seconds: list[float | None]) -> list[str]:
    """Exponent between consecutive measured sizes, with n log n's beside it."""
    out = []
    for (n1, t1), (n2, t2) in zip(zip(sizes, seconds), zip(sizes[1:], seconds[1:])):
        if t1 is None or t2 is None or t1 <= 0 or t2 <= 0:
            out.append("—")
            continue
        k = math.log(t2 / t1) / math.log(n2 / n1)
        nlogn = math.log((n2 * math.log(n2)) / (n1 * math.log(n1))) / math.log(n2 / n1)
        out.append(f"{k:.2f} ({'≤' if k <= nlogn + 0.05 else '>'} {nlogn:.2f})")
    return out


# --------------------------------------------------------------------------- egraft


def egraft_times(text: str, pipeline: str, repeat: int) -> tuple[float, int]:
    """(median CPU seconds of the pipeline, ops after it); the output is verified once."""
    from egraft.ir.syntax.parser import parse
    from egraft.ir.verifier import verify
    from egraft.passes.manager.pass_manager import PassManager
    from egraft.passes.manager.pipeline import parse_pipeline

    pm = PassManager(parse_pipeline(pipeline), verify_each=False)
    last: list[Any] = []

    def run(module: Any) -> None:
        pm.run(module)
        last[:] = [module]
    seconds = cpu_median(run, lambda: parse(text), repeat)
    verify(last[0])
    return seconds, sum(1 for _ in last[0].walk())


def registered_passes() -> set[str]:
    from egraft.passes.manager.pass_index import PASS_MODULES

    return set(PASS_MODULES)


def egraft_parse_seconds(text: str, repeat: int) -> float:
    from egraft.ir.syntax.parser import parse

    return cpu_median(lambda t: parse(t), lambda: text, repeat)


def generic_text(text: str) -> str:
    from egraft.ir.syntax.parser import parse
    from egraft.ir.syntax.printer import print_ir

    return print_ir(parse(text), generic=True)


# --------------------------------------------------------------------------- xDSL


def xdsl_times(generic: str, pass_name: str, repeat: int) -> tuple[float, int]:
    from xdsl.context import Context
    from xdsl.dialects import get_all_dialects
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    ctx = Context(allow_unregistered=True)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    pipeline = PassPipeline.parse_spec(get_all_passes(), pass_name)
    last: list[Any] = []

    def run(module: Any) -> None:
        pipeline.apply(ctx, module)
        last[:] = [module]
    seconds = cpu_median(run, lambda: Parser(ctx, generic).parse_module(), repeat)
    return seconds, sum(1 for _ in last[0].walk())


# --------------------------------------------------------------------------- MLIR


def find_mlir_opt(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    for name in ("mlir-opt", "iree-opt"):
        path = shutil.which(name)
        if path:
            return path
    try:
        import iree.compiler  # type: ignore[import-not-found]
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(iree.compiler.__file__), "_mlir_libs", "iree-opt")
    return path if os.path.exists(path) else None


_TIMING_LINE = re.compile(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*)$")


def mlir_times(binary: str, path: str, pass_name: str, repeat: int) -> tuple[float, int, str | None]:
    """The pass's own wall seconds from `--mlir-timing` (median), the ops it left, and why its
    output is invalid (None if MLIR's verifier accepts it). The verifier is off while timing,
    as egraft's is, and runs on the output afterwards."""
    flag = {"canonicalize": "--canonicalize", "cse": "--cse"}[pass_name]
    wanted = {"canonicalize": "Canonicalizer", "cse": "CSE"}[pass_name]
    out_path = os.path.join(OUT, f"mlir_{pass_name}_out.mlir")
    runs = []
    for _ in range(repeat):
        proc = subprocess.run([binary, flag, "--verify-each=false", "--mlir-timing", "--mlir-disable-threading",
                               path, "-o", out_path], capture_output=True, text=True, check=True)
        runs.append(sum(float(m.group(1)) for line in proc.stderr.splitlines()
                        if (m := _TIMING_LINE.match(line)) and m.group(2).startswith(wanted)))
    check = subprocess.run([binary, out_path, "--mlir-print-op-generic"], capture_output=True, text=True)
    invalid = None if check.returncode == 0 else check.stderr.splitlines()[0].split("error: ", 1)[-1][:160]
    ops = check.stdout.count('"(') if check.returncode == 0 else _count_generic_ops(binary, out_path)
    return statistics.median(runs), ops, invalid


def _count_generic_ops(binary: str, path: str) -> int:
    """Ops in MLIR's output when it does not verify: printed generically without verifying."""
    proc = subprocess.run([binary, path, "--mlir-print-op-generic", "--verify-each=false",
                           "--mlir-very-unsafe-disable-verifier-on-parsing"], capture_output=True, text=True)
    return proc.stdout.count('"(') if proc.returncode == 0 else -1


def probe_tensorflow(text: str) -> str:
    """Whether TensorFlow's MLIR can read the input (it cannot: no affine/memref dialects)."""
    try:
        import tensorflow as tf
    except ImportError:
        return "TensorFlow not installed"
    try:
        tf.mlir.experimental.run_pass_pipeline(text, "canonicalize")
        return "reads it"
    except Exception as e:  # its parse error comes back as a generic exception
        return str(e).splitlines()[0][:120]


# --------------------------------------------------------------------------- driver


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cap", type=float, default=60.0, help="seconds above which larger sizes are skipped")
    ap.add_argument("--passes", default=",".join(PASSES), help="egraft passes (keys of PASSES)")
    ap.add_argument("--mlir-opt", default=None, help="an mlir-opt-compatible binary (iree-opt works)")
    ap.add_argument("--no-xdsl", action="store_true")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    os.makedirs(OUT, exist_ok=True)
    registered = registered_passes()
    wanted = [p for p in args.passes.split(",") if p]
    missing = [p for p in wanted if p.split("{")[0] not in registered]
    egraft_passes = [p for p in wanted if p not in missing]
    mlir_opt = find_mlir_opt(args.mlir_opt)
    results: dict[str, Any] = {"sizes": sizes, "seed": args.seed, "rows": {}, "ops": {},
                               "not_registered": missing, "mlir_opt": mlir_opt}
    capped: set[str] = set()

    def record(row: str, size: int, fn: Callable[[], tuple[float, int]]) -> None:
        if row in capped:
            results["rows"].setdefault(row, {})[str(size)] = None
            return
        try:
            seconds, ops_after, *invalid = fn()
        except subprocess.CalledProcessError as e:  # a peer rejecting the input or its own output
            reason = (e.stderr or "").splitlines()[0][:200] if e.stderr else f"exit {e.returncode}"
            results["rows"].setdefault(row, {})[str(size)] = {"failed": reason}
            print(f"  {row:48s} failed: {reason}", flush=True)
            capped.add(row)
            return
        cell = {"seconds": seconds, "ops_after": ops_after}
        if invalid and invalid[0]:
            cell["invalid_output"] = invalid[0]
        results["rows"].setdefault(row, {})[str(size)] = cell
        print(f"  {row:48s} {seconds:9.4f} s  {ops_after:7d} ops after"
              + (f"  INVALID OUTPUT: {invalid[0]}" if invalid and invalid[0] else ""), flush=True)
        if seconds > args.cap:
            capped.add(row)

    for n in sizes:
        inputs = {kind: generate(n, args.seed, graybox_percent=pct) for kind, pct in (("graybox", 12), ("plain", 0))}
        texts = {kind: p.text for kind, p in inputs.items()}
        results["ops"][str(n)] = {kind: p.ops for kind, p in inputs.items()}
        paths = {}
        for kind, text in texts.items():
            paths[kind] = os.path.join(OUT, f"nests_{kind}_{n}_seed{args.seed}.mlir")
            with open(paths[kind], "w") as f:
                f.write(text)
        print(f"n = {n} (graybox input {inputs['graybox'].ops} ops, plain {inputs['plain'].ops})", flush=True)
        for kind in ("graybox", "plain"):
            record(f"egraft parse [{kind}]", n, lambda: (egraft_parse_seconds(texts[kind], args.repeat), 0))
            for p in egraft_passes:
                record(f"egraft {p} [{kind}]", n, lambda: egraft_times(texts[kind], PASSES[p], args.repeat))
        if not args.no_xdsl:
            for kind in ("graybox", "plain"):
                generic = generic_text(texts[kind])
                for p in PEER_PASSES:
                    record(f"xDSL {p} [{kind}]", n, lambda: xdsl_times(generic, p, args.repeat))
        if mlir_opt:
            for p in PEER_PASSES:
                record(f"MLIR {p} [plain]", n, lambda: mlir_times(mlir_opt, paths["plain"], p, args.repeat))
    results["tensorflow"] = probe_tensorflow(generate(100, args.seed, graybox_percent=0).text)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print()
    print(table(results))
    return 0


def table(results: dict[str, Any]) -> str:
    sizes = results["sizes"]
    head = "| pass [input] | " + " | ".join(f"µs/op @{n}" for n in sizes) + " | " + \
        " | ".join(f"exp {a}→{b} (n log n)" for a, b in zip(sizes, sizes[1:])) + " |"
    lines = [head, "|" + "---|" * (1 + 2 * len(sizes) - 1)]
    for row, by_size in results["rows"].items():
        kind = "graybox" if "[graybox]" in row else "plain"
        cells = [by_size.get(str(n)) or {} for n in sizes]
        secs = [cell.get("seconds") for cell in cells]
        per_op = [f"{1e6 * s / results['ops'][str(n)][kind]:.1f}" if s is not None else
                  ("failed" if "failed" in cell else "capped") for s, n, cell in zip(secs, sizes, cells)]
        lines.append(f"| {row} | " + " | ".join(per_op) + " | " + " | ".join(growth(sizes, secs)) + " |")
    failures = sorted({f"{row}: {cell['failed']}" for row, by_size in results["rows"].items()
                       for cell in by_size.values() if cell and "failed" in cell})
    invalid = sorted({f"{row} @{n}: {cell['invalid_output']}" for row, by_size in results["rows"].items()
                      for n, cell in by_size.items() if cell and "invalid_output" in cell})
    notes = [f"ops per input: {results['ops']}", *[f"failed: {f}" for f in failures],
             *[f"output rejected by its own verifier: {f}" for f in invalid],
             f"not registered (not timed): {', '.join(results['not_registered']) or 'none'}",
             f"MLIR binary: {results['mlir_opt'] or 'none found (pass --mlir-opt)'}",
             f"TensorFlow run_pass_pipeline on the plain input: {results['tensorflow']}"]
    return "\n".join(lines + [""] + notes)


if __name__ == "__main__":
    sys.exit(main())
