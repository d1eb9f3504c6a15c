"""The graph-shape property of tests/engine_shapes at larger sizes and more examples.

Runs `tests/engine_shapes/test_drivers.check_driver` (every driver on generated shapes:
no exception, within budget, verifies, outputs kept, interpreter agrees) with as many
examples and ops as asked. Each driver runs in its own process, so that one driver's
crash, hang or memory does not take the others down; a summary table ends the run.

    python bench/race/fuzz_shapes.py                           # 40 examples per driver, up to 1,000 ops
    python bench/race/fuzz_shapes.py --examples 200 --max-ops 3000 --drivers canonicalize,cse
    python bench/race/fuzz_shapes.py --seed 7 --no-shrink      # a reproducible run, failures as found
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fuzz_one(driver_text: str, examples: int, max_ops: int, seed: int | None, shrink: bool) -> dict:
    """Run the property for one driver in this process; what happened, as a dict."""
    sys.path.insert(0, str(ROOT))
    from hypothesis import HealthCheck, Phase, given, seed as hseed, settings
    from hypothesis import strategies as st

    from tests.engine_shapes.drivers import drivers
    from tests.engine_shapes.test_drivers import OPEN_BUGS, check_driver
    from tests.strategies.graph_shapes import FAMILIES, programs

    driver = next(d for d in drivers() if d.pass_text == driver_text)
    families = tuple(f for f in FAMILIES if (f, driver.engine) not in OPEN_BUGS)
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])

    @settings(max_examples=examples, deadline=None, database=None, phases=phases, print_blob=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        check_driver(driver, data, programs(families, max_ops=max_ops))

    if seed is not None:
        prop = hseed(seed)(prop)
    start = time.process_time()
    try:
        prop()
        outcome = "ok"
    except Exception as e:  # the failure, as hypothesis reports it (falsifying example included)
        outcome = f"FAIL {type(e).__name__}: {e}\n{traceback.format_exc()}"
    return {"driver": driver_text, "outcome": outcome, "cpu_s": round(time.process_time() - start, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=40)
    ap.add_argument("--max-ops", type=int, default=1000)
    ap.add_argument("--drivers", default="", help="comma-separated pass texts (default: all)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per driver process")
    ap.add_argument("--one", default="", help=argparse.SUPPRESS)  # the child process's driver
    args = ap.parse_args()

    if args.one:
        print(json.dumps(fuzz_one(args.one, args.examples, args.max_ops, args.seed, not args.no_shrink)))
        return

    sys.path.insert(0, str(ROOT))
    from tests.engine_shapes.drivers import drivers

    names = [d.pass_text for d in drivers()]
    chosen = [n for n in names if not args.drivers or n in args.drivers.split(",")]
    rows = []
    for name in chosen:
        cmd = [sys.executable, __file__, "--one", name, "--examples", str(args.examples),
               "--max-ops", str(args.max_ops)] + (["--seed", str(args.seed)] if args.seed is not None else []) \
            + (["--no-shrink"] if args.no_shrink else [])
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
            row = json.loads(last) if last.startswith("{") else {
                "driver": name, "outcome": f"CRASH rc={done.returncode}: {done.stderr.strip()[-2000:]}", "cpu_s": None}
        except subprocess.TimeoutExpired:
            row = {"driver": name, "outcome": f"TIMEOUT after {args.timeout:.0f} s", "cpu_s": None}
        row["wall_s"] = round(time.perf_counter() - start, 1)
        rows.append(row)
        print(f"{name}: {row['outcome'].splitlines()[0][:200]} ({row['wall_s']} s)", flush=True)
        if row["outcome"] != "ok":
            print(row["outcome"], flush=True)
    print(f"\n| driver | outcome | wall s | CPU s |  ({args.examples} examples, up to {args.max_ops} ops)")
    print("|---|---|---:|---:|")
    for r in rows:
        print(f"| {r['driver']} | {r['outcome'].splitlines()[0][:80]} | {r['wall_s']} | {r['cpu_s']} |")


if __name__ == "__main__":
    main()
