"""The `inline` pass at scale, against MLIR's own inliner (TensorFlow's C++ MLIR) in the same run.

Inputs are generated (nothing is read from disk): a `main` function making N calls of a
private callee, which the pass inlines and then erases.

* `scalar`: N chained calls of a one-block f32 function (spliced in place);
* `cfg`: N chained calls of a three-block function (each splits the caller's block);
* `affine-loops`: N `affine.for` loops, each calling an affine callee with the loop's IV
  (wrapped in a graybox, then the wrapper eliminated);
* `deep`: one call per level of an N-deep `affine.for` nest (`keep-wrappers`: the
  inliner alone, without graybox elimination).

The peer is MLIR's `inline` pass through `tf.mlir.experimental.run_pass_pipeline`, which
parses, runs and prints: its pass time is estimated as the run with `inline` minus the run
with an empty pipeline on the same text (median of `--repeat`, CPU time of this process,
which includes any threads TensorFlow uses).  TensorFlow's MLIR has no
`affine` dialect, so the affine rows have no peer (said in the table).  egraft's column
is the pass alone (`PassManager.run`, verification off, as the peer's estimate excludes
its verifier too), CPU time of this process; the growth exponent is the slope of
log(time) against log(N) between the smallest and largest N.

Run: nice python bench/inline/bench_inline.py [--calls 1000,10000,50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import time
from typing import Callable

from egraft.ir import parse
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline

M = "memref<64xf32>"
BUMP = f"""func.func private @bump(%A: {M}, %i: index, %f: f32) {{
  %v = affine.load %A[%i] : {M}
  %w = arith.addf %v, %f : f32
  affine.store %w, %A[%i] : {M}
  return
}}
"""
FMA = """func.func private @fma(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  %z = arith.addf %y, %x : f32
  return %z : f32
}
"""
ABS = """func.func private @abs(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %below = arith.cmpf olt, %x, %zero : f32
  cf.cond_br %below, ^flip, ^keep(%x : f32)
^flip:
  %n = arith.negf %x : f32
  cf.br ^keep(%n : f32)
^keep(%r: f32):
  return %r : f32
}
"""


def chained(callee: str, text: str, n: int) -> str:
    calls = "".join(f"  %r{k} = func.call @{callee}(%r{k - 1}) : (f32) -> f32\n" for k in range(1, n + 1))
    return f"{text}func.func @main(%r0: f32) -> f32 {{\n{calls}  return %r{n} : f32\n}}\n"


def affine_loops(n: int) -> str:
    loops = "".join(f"  affine.for %i{k} = 0 to 64 {{\n    func.call @bump(%A, %i{k}, %f) : ({M}, index, f32) -> ()\n"
                    "  }\n" for k in range(n))
    return f"{BUMP}func.func @main(%A: {M}, %f: f32) {{\n{loops}  return\n}}\n"


def deep(n: int) -> str:
    opens = "".join(f"affine.for %i{k} = 0 to 2 {{\nfunc.call @bump(%A, %i{k}, %f) : ({M}, index, f32) -> ()\n"
                    for k in range(n))
    return f"{BUMP}func.func @main(%A: {M}, %f: f32) {{\n{opens}{'}' * n}\nreturn\n}}\n"


CASES: dict[str, tuple[Callable[[int], str], str, bool]] = {
    "scalar": (lambda n: chained("fma", FMA, n), "inline", True),
    "cfg": (lambda n: chained("abs", ABS, n), "inline", True),
    "affine-loops": (affine_loops, "inline", False),
    "deep": (deep, "inline{keep-wrappers}", False),
}


def egraft_seconds(text: str, pipeline: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        module = parse(text)
        gc.collect()  # the garbage of the previous run is not this one's cost
        start = time.process_time()
        PassManager(parse_pipeline(pipeline), verify_each=False).run(module)
        times.append(time.process_time() - start)
        assert not any(op.name == "func.call" for op in module.walk()), "a call was left"
    return statistics.median(times)


def mlir_seconds(text: str, repeat: int) -> float | None:
    try:
        import tensorflow as tf
    except ImportError:
        return None
    run = tf.mlir.experimental.run_pass_pipeline

    def median(pipeline: str) -> float:
        times = []
        for _ in range(repeat):
            start = time.process_time()
            out = run(text, pipeline)
            times.append(time.process_time() - start)
        if pipeline and "call @" in out:
            raise RuntimeError("MLIR's inliner left a call")
        return statistics.median(times)

    return max(median("inline") - median(""), 0.0)


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--calls", default="1000,10000,50000", help="comma-separated N")
    args.add_argument("--repeat", type=int, default=3)
    args.add_argument("--cases", default=",".join(CASES))
    opts = args.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100_000))
    sizes = [int(n) for n in opts.calls.split(",")]
    print("| case | N | egraft inline (cpu s) | per call (µs) | MLIR inline (s, est.) | egraft / MLIR |")
    print("|---|---|---|---|---|---|")
    for name in opts.cases.split(","):
        make, pipeline, peer = CASES[name]
        series = []
        # Nests stay at 5000 levels or fewer, half the parser's bound (`ir/core/deep.MAX_NESTING`).
        for size in sorted({n if name != "deep" else min(n, 5000) for n in sizes}):
            text = make(size)
            ours = egraft_seconds(text, pipeline, opts.repeat)
            theirs = mlir_seconds(text, opts.repeat) if peer else None
            series.append((size, ours))
            ratio = f"×{ours / theirs:.2f}" if theirs else "—"
            peer_text = f"{theirs:.4f}" if theirs is not None else "— (no affine dialect in TF's MLIR)"
            print(f"| {name} | {size} | {ours:.3f} | {1e6 * ours / size:.1f} | {peer_text} | {ratio} |")
        (n0, t0), (n1, t1) = series[0], series[-1]
        if n1 > n0 and t0 > 0:
            print(f"| {name} | growth | exponent {math.log(t1 / t0) / math.log(n1 / n0):.2f} | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
