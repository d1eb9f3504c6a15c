"""End-to-end benchmark of the rewrite engine on random arithmetic DAGs.

    python bench/engine/bench_engine.py [--sizes 1000 10000 100000] [--rounds 3]
        [--passes 2] [--ilp-size 300] [--profile]

For each size: generate, load (TSV ``input``), saturate (shrink-then-expand
schedule with the 15 arithmetic rules), export (``freeze``), extract (DAG-aware),
and report times, e-graph sizes and DAG costs (tree-extraction vs ours). On the
small ``--ilp-size`` graph it also runs the exact ILP extractor to measure the gap.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # the repo: tests/

from dags import random_arith_dag  # noqa: E402

from egraft.rewrite.engine.egraph import EGraph  # noqa: E402
from egraft.rewrite.engine.export import export  # noqa: E402
from egraft.rewrite.engine.extract import OpCost, extract, root_classes  # noqa: E402
from egraft.rewrite.engine.load import load_table  # noqa: E402
from egraft.rewrite.engine.saturate import phased, saturate  # noqa: E402

from tests.rewrite.arith_workload import EXPAND, SIMPLIFY, add_arith_rules  # noqa: E402

COSTS = OpCost({"Mul": 4.0, "Add": 2.0, "Sub": 2.0, "Neg": 1.0, "Const": 1.0, "Var": 1.0})


def run(n: int, rounds: int, passes: int, ilp: bool, ilp_limit: float = 120.0) -> dict:
    table = random_arith_dag(n, seed=n)
    t0, cpu0 = time.perf_counter(), time.process_time()
    eg = EGraph(table.schema)
    add_arith_rules(eg)
    loaded = load_table(eg, table)
    t1 = time.perf_counter()
    report = saturate(eg, phased(SIMPLIFY, EXPAND, rounds=rounds))
    t2 = time.perf_counter()
    g = export(eg)
    roots = root_classes(g, [loaded.base + r for r in table.roots])
    t3 = time.perf_counter()
    result = extract(g, table.schema, roots, COSTS, passes=passes)
    t4 = time.perf_counter()
    row = {
        "n": n, "roots": len(table.roots), "load_s": t1 - t0, "saturate_s": t2 - t1,
        "export_s": t3 - t2, "extract_s": t4 - t3, "total_s": t4 - t0,
        "total_cpu_s": time.process_time() - cpu0,
        "iterations": report.iterations, "stop": report.stop, "enodes": g.n_nodes,
        "eclasses": g.n_classes, "input_dag_cost": float(sum(COSTS.table[table.op(i)] for i in range(n))),
        "tree_dag_cost": result.passes[0], "dag_cost": result.cost, "out_nodes": len(result.table),
    }
    if ilp:
        from egraft.rewrite.engine.ilp import extract_ilp

        try:
            exact = extract_ilp(g, table.schema, roots, COSTS, time_limit=ilp_limit)
        except RuntimeError as err:
            return row | {"ilp": str(err)}
        row |= {"ilp_cost": exact.cost, "ilp_s": exact.seconds, "ilp_optimal": exact.optimal,
                "gap_pct": 100 * (result.cost - exact.cost) / exact.cost,
                "tree_gap_pct": 100 * (result.passes[0] - exact.cost) / exact.cost}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--rounds", type=int, default=3, help="shrink-then-expand rounds")
    ap.add_argument("--passes", type=int, default=2, help="extraction passes (1 = tree cost)")
    ap.add_argument("--ilp-size", type=int, nargs="*", default=[100, 200, 300, 500])
    ap.add_argument("--profile", action="store_true", help="pyinstrument the largest size")
    args = ap.parse_args()

    def emit(row: dict) -> None:
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}),
              flush=True)

    for n in args.ilp_size:
        emit(run(n, args.rounds, args.passes, ilp=True))
    for n in args.sizes:
        if args.profile and n == max(args.sizes):
            from pyinstrument import Profiler

            with Profiler(interval=0.001) as prof:
                emit(run(n, args.rounds, args.passes, ilp=False))
            print(prof.output_text(color=False, unicode=False), file=sys.stderr)
        else:
            emit(run(n, args.rounds, args.passes, ilp=False))

if __name__ == "__main__":
    main()
