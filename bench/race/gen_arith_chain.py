"""The chain-shaped i32 function of issue #9: long dependency chains with constants mixed in.

Generic-form text that egraft, xDSL 0.74 and MLIR all parse. Op k is, by draw:

* ~12% ``arith.constant`` 0..7, with 0 drawn a third of the time;
* ~4% ``subi %x, %x`` and ~4% ``addi %x, %zero`` (``%zero`` is the function's first constant);
* otherwise ``addi``/``subi``/``muli``: operand 0 is the previous value 85% of the time (else a
  value of the last 32), operand 1 a value of the last 32, or 10% of the time any earlier value.

The function takes two i32 arguments and returns its last value and 3 others drawn at random.
Seeded, so every run of one (n, seed) times the same bytes. This is the shape on which an
e-graph that keeps every reassociated form alive grows without bound (constants recombine
through chains of ``(x op c0) op c1``), so it is the race's stress input for budgets.

Run: python bench/race/gen_arith_chain.py N [--seed S] [-o PATH]
"""

from __future__ import annotations

import argparse
import random
import sys

_OVERFLOW = "<{{overflowFlags = #arith.overflow<none>}}> "
_BIN = "    %{r} = \"arith.{op}\"(%{a}, %{b}) " + _OVERFLOW + ": (i32, i32) -> i32"
_CONST = "    %{r} = \"arith.constant\"() <{{value = {v} : i32}}> : () -> i32"
WINDOW = 32


def generate(n: int, seed: int = 0) -> str:
    """A module with one function of ``n`` ops (constants included) plus its return."""
    rng = random.Random(seed)
    lines = [_CONST.format(r="zero", v=0)]
    values = ["a", "b", "zero"]
    for k in range(n - 1):
        r = f"v{k}"
        draw = rng.random()
        prev = values[-1]
        if draw < 0.12:
            lines.append(_CONST.format(r=r, v=0 if rng.random() < 1 / 3 else rng.randrange(8)))
        elif draw < 0.16:
            lines.append(_BIN.format(r=r, op="subi", a=prev, b=prev))
        elif draw < 0.20:
            lines.append(_BIN.format(r=r, op="addi", a=prev, b="zero"))
        else:
            a = prev if rng.random() < 0.85 else rng.choice(values[-WINDOW:])
            b = rng.choice(values) if rng.random() < 0.10 else rng.choice(values[-WINDOW:])
            lines.append(_BIN.format(r=r, op=rng.choice(("addi", "subi", "muli")), a=a, b=b))
        values.append(r)
    rets = [values[-1]] + rng.sample(values[:-1], min(3, len(values) - 1))
    types = ", ".join(["i32"] * len(rets))
    return ("\"builtin.module\"() ({\n  \"func.func\"() <{function_type = (i32, i32) -> (" + types
            + "), sym_name = \"chain\"}> ({\n  ^bb0(%a: i32, %b: i32):\n" + "\n".join(lines)
            + "\n    \"func.return\"(" + ", ".join(f"%{v}" for v in rets) + ") : (" + types
            + ") -> ()\n  }) : () -> ()\n}) : () -> ()\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args(argv)
    text = generate(args.n, args.seed)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
