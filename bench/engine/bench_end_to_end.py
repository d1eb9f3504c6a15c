"""End-to-end benchmark of the IR rewrite path: lower, load, saturate, export, extract,
write back, on generated arith and tf modules of 1k, 10k and 100k ops, with a 15-rule
set written in the rule language (egraft.patterns) and compiled by rewrite/compile_rules.

    python bench/engine/bench_end_to_end.py [--sizes 1000 10000 100000] [--ilp-limit 120]

Each module is one func.func block: 8 arguments, then ops whose operands come 70% from
the last 64 values, with ~15% planted redexes (x+0, x*1, x-x, --x, Identity). Every value
nobody uses is returned, so nothing is dead before rewriting. On the 1k modules the
extraction is compared with the ILP optimum (scipy/HiGHS, time-limited).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from egraft.ir.core import attributes as A
from egraft.ir import parse, verify
from egraft.ir.core import types as T
from egraft.patterns import op, rule, vars_
from egraft.rewrite.rules.compile import compile_rules
from egraft.rewrite.encoding.cost_models import IRCost
from egraft.rewrite.lower_pipeline import optimize
from egraft.rewrite.engine.saturate import Budget, Phase, Schedule

I64 = T.i64


def rules() -> list:
    """15 rules: 11 shrinking, 4 expanding (commutativity, associativity)."""
    x, y, z = vars_("x y z")
    zero, one = A.IntegerAttr(0, I64), A.IntegerAttr(1, I64)
    c0 = op("arith.constant", value=zero)
    c1 = op("arith.constant", value=one)
    return [
        rule("add-zero", op("arith.addi", x, c0), x),
        rule("zero-add", op("arith.addi", c0, x), x),
        rule("mul-one", op("arith.muli", x, c1), x),
        rule("one-mul", op("arith.muli", c1, x), x),
        rule("mul-zero", op("arith.muli", x, c0.bind("z")), "z"),
        rule("sub-zero", op("arith.subi", x, c0), x),
        rule("sub-self", op("arith.subi", x, x), op("arith.constant", types=[I64], value=zero)),
        rule("and-self", op("arith.andi", x, x), x),
        rule("tf-neg-neg", op("tf.Neg", op("tf.Neg", x)), x),
        rule("tf-identity", op("tf.Identity", x), x),
        rule("tf-sub-self-neg", op("tf.Sub", x, op("tf.Neg", y)), op("tf.AddV2", x, y)),
        rule("add-comm", op("arith.addi", x, y), op("arith.addi", y, x), tags={"expand"}),
        rule("mul-comm", op("arith.muli", x, y), op("arith.muli", y, x), tags={"expand"}),
        rule("add-assoc", op("arith.addi", op("arith.addi", x, y), z),
             op("arith.addi", x, op("arith.addi", y, z)), tags={"expand"}),
        rule("tf-add-comm", op("tf.AddV2", x, y), op("tf.AddV2", y, x), tags={"expand"}),
    ]


def arith_module(n: int, seed: int) -> str:
    rnd = random.Random(seed)
    vals = [f"%a{i}" for i in range(8)]
    used: set[str] = set()
    lines = []

    def pick() -> str:
        v = rnd.choice(vals[-64:]) if rnd.random() < 0.7 else rnd.choice(vals)
        used.add(v)
        return v

    consts = {}
    for c in (0, 1, 2, 3):
        consts[c] = f"%c{c}"
        lines.append(f"  %c{c} = arith.constant {c} : i64")
    for i in range(n - 4):
        r = rnd.random()
        x = pick()
        if r < 0.05:
            rhs, o = consts[0], "addi"
        elif r < 0.10:
            rhs, o = consts[1], "muli"
        elif r < 0.13:
            rhs, o = x, "subi"
        elif r < 0.15:
            rhs, o = consts[0], "muli"
        else:
            rhs, o = pick(), rnd.choice(("addi", "addi", "subi", "muli", "andi"))
        used.add(rhs)
        lines.append(f"  %v{i} = arith.{o} {x}, {rhs} : i64")
        vals.append(f"%v{i}")
    return _func(lines, [v for v in vals if v not in used and v.startswith("%v")], "i64")


def tf_module(n: int, seed: int) -> str:
    rnd = random.Random(seed)
    vals = [f"%a{i}" for i in range(8)]
    used: set[str] = set()
    lines = []
    ty = "tensor<4xf32>"

    def pick() -> str:
        v = rnd.choice(vals[-64:]) if rnd.random() < 0.7 else rnd.choice(vals)
        used.add(v)
        return v

    for i in range(n):
        r = rnd.random()
        x = pick()
        if r < 0.05:
            lines.append(f'  %n{i} = "tf.Neg"({x}) : ({ty}) -> {ty}')
            lines.append(f'  %v{i} = "tf.Neg"(%n{i}) : ({ty}) -> {ty}')
        elif r < 0.10:
            lines.append(f'  %v{i} = "tf.Identity"({x}) : ({ty}) -> {ty}')
        elif r < 0.30:
            lines.append(f'  %v{i} = "tf.Relu"({x}) : ({ty}) -> {ty}')
        else:
            o = rnd.choice(("AddV2", "AddV2", "Mul", "Sub"))
            lines.append(f'  %v{i} = "tf.{o}"({x}, {pick()}) : ({ty}, {ty}) -> {ty}')
        vals.append(f"%v{i}")
    return _func(lines, [v for v in vals if v not in used and v.startswith("%v")], ty)


def _func(lines: list[str], outs: list[str], ty: str) -> str:
    args = ", ".join(f"%a{i}: {ty}" for i in range(8))
    rets = ", ".join(outs)
    types = ", ".join([ty] * len(outs))
    return (f"func.func @f({args}) -> ({types}) {{\n" + "\n".join(lines) +
            f"\n  return {rets} : {types}\n}}\n")


def run(kind: str, n: int, ilp_limit: float) -> dict:
    text = arith_module(n, n) if kind == "arith" else tf_module(n, n)
    module = parse(text)
    ops_in = sum(1 for _ in module.walk()) - 1
    schedule = Schedule((Phase(("simplify",), saturate=True), Phase(("expand",), match_limit=20_000)), rounds=3)
    t0, cpu0 = time.perf_counter(), time.process_time()
    result = optimize(module, schedule=schedule, budget=Budget(max_seconds=30),
                      prepare=lambda eg: compile_rules(eg, rules()))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    verify(module)
    row = {"kind": kind, "ops": ops_in, "ops_out": sum(1 for _ in module.walk()) - 1,
           "enodes": result.enodes, "eclasses": result.eclasses, "cost": result.cost,
           "stop": result.report.stop if result.report else None,
           "seconds": {k: round(v, 3) for k, v in result.seconds.items()},
           "total_wall": round(wall, 3), "total_cpu": round(cpu, 3)}
    if n <= 1000 and ilp_limit > 0:
        from egraft.rewrite.engine.ilp import extract_ilp

        t0 = time.perf_counter()
        try:
            exact = extract_ilp(result.egraph, result.schema, result.roots, IRCost(), time_limit=ilp_limit)
            row["ilp"] = {"cost": exact.cost, "optimal": exact.optimal, "seconds": round(time.perf_counter() - t0, 2),
                          "gap_percent": round(100 * (result.cost - exact.cost) / exact.cost, 3)}
        except Exception as err:  # noqa: BLE001 - no feasible solution within the limit
            row["ilp"] = {"error": str(err)[:120]}
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--kinds", nargs="+", default=["arith", "tf"])
    ap.add_argument("--ilp-limit", type=float, default=120.0)
    args = ap.parse_args()
    sys.setrecursionlimit(1_000_000)
    for n in args.sizes:
        for kind in args.kinds:
            print(json.dumps(run(kind, n, args.ilp_limit)), flush=True)


if __name__ == "__main__":
    main()
