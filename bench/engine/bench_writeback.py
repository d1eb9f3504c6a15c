"""Growth of the e-graph path's lowering, extraction and write-back with chain length, 1k -> 100k ops.

    python bench/engine/bench_writeback.py [--sizes 1000 12500 25000 50000 100000]
        [--shapes sub-chain tf-chain] [--pipeline 'func.func(canonicalize)']

Inputs come from gen_shapes.py: ``sub-chain`` folds to a constant, so canonicalize drops
nearly every op (what dropping n ops costs the write-back: issue #9 measured 1.2 / 4.5 /
18.4 / 72.5 s at 12.5k / 25k / 50k / 100k before fused locations were deduplicated by a
dict); ``tf-chain`` keeps nearly every op and is as deep as it is long (the write-back
recursed per op and overflowed the stack at 2,000). Each size runs in a fresh process
(the cyclic GC walks every live object, so one size's module would slow the next). CPU
time (``time.process_time``) of each phase is the figure to read on a shared machine;
wall time is printed beside it. The last column is the write-back's CPU per op dropped or
kept, which stays flat when the write-back is linear.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PHASES = ("lower", "extract", "write_back")


def measure(shape: str, n: int, pipeline: str) -> dict:
    """Run ``pipeline`` on one generated input in this process; CPU and wall per phase."""
    sys.path.insert(0, HERE)
    from gen_shapes import SHAPES

    import egraft.rewrite.lower_pipeline as lp
    from egraft.ir import parse, verify
    from egraft.passes.manager.pass_manager import PassManager
    from egraft.passes.manager.pipeline import parse_pipeline

    cpu: dict[str, float] = dict.fromkeys(PHASES, 0.0)
    wall: dict[str, float] = dict.fromkeys(PHASES, 0.0)
    stats: list = []

    def timed(name: str, fn):
        def run(*args, **kwargs):
            c0, w0 = time.process_time(), time.perf_counter()
            result = fn(*args, **kwargs)
            cpu[name] += time.process_time() - c0
            wall[name] += time.perf_counter() - w0
            if name == "write_back":
                stats.append(result)
            return result
        return run

    for name in PHASES:
        setattr(lp, name, timed(name, getattr(lp, name)))
    module = parse(SHAPES[shape](n), f"{shape}-{n}.mlir")
    ops_in = sum(1 for _ in module.walk()) - 1
    c0, w0 = time.process_time(), time.perf_counter()
    PassManager(parse_pipeline(pipeline)).run(module)
    pass_cpu, pass_wall = time.process_time() - c0, time.perf_counter() - w0
    verify(module)
    wb = stats[-1]
    return {"shape": shape, "n": n, "ops_in": ops_in, "ops_out": sum(1 for _ in module.walk()) - 1,
            "reused": wb.reused, "created": wb.created, "dropped": wb.dropped,
            "cpu": {k: round(v, 3) for k, v in cpu.items()}, "wall": {k: round(v, 3) for k, v in wall.items()},
            "pass_cpu": round(pass_cpu, 3), "pass_wall": round(pass_wall, 3)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 12500, 25000, 50000, 100000])
    ap.add_argument("--shapes", nargs="+", default=["sub-chain", "tf-chain"])
    ap.add_argument("--pipeline", default="func.func(canonicalize)")
    ap.add_argument("--one", nargs=2, metavar=("SHAPE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.pipeline)))
        return
    print(f"pipeline {args.pipeline}; CPU s (wall s)")
    print("| shape | n | dropped | kept | lower | extract | write-back | pass | write-back µs/op |")
    print("|---|---|---|---|---|---|---|---|---|")
    for shape in args.shapes:
        for n in args.sizes:
            out = subprocess.run([sys.executable, __file__, "--one", shape, str(n), "--pipeline", args.pipeline],
                                 capture_output=True, text=True)
            if out.returncode:
                print(f"| {shape} | {n} | failed: {out.stderr.strip().splitlines()[-1:]} |", flush=True)
                continue
            row = json.loads(out.stdout.splitlines()[-1])
            c, w = row["cpu"], row["wall"]
            cell = " | ".join(f"{c[k]:.3f} ({w[k]:.2f})" for k in PHASES)
            per_op = 1e6 * c["write_back"] / max(1, row["dropped"] + row["reused"] + row["created"])
            print(f"| {shape} | {n} | {row['dropped']} | {row['reused'] + row['created']} | {cell} | "
                  f"{row['pass_cpu']:.2f} ({row['pass_wall']:.1f}) | {per_op:.1f} |", flush=True)


if __name__ == "__main__":
    main()
