"""The inputs of the shape race: name -> a seeded generator of generic-form MLIR with about n ops.

* ``xx-family``: `gen.py`, the x-x→0 family among plain i32 ops (the first race's input);
* ``arith-chain``: `gen_arith_chain.py`, issue #9's chain-shaped i32 function (the budget stress);
* ``graph-arith``, ``graph-tf``, ``graph-mixed``, ``graph-cfg``: the graph-shape generator of
  the engine's property test (`tests/strategies/graph_shapes.py`): chains, fan-out, diamond
  ladders, associative soups, redexes, shared constants, casts, tf broadcasting, several blocks.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (str(HERE), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

import gen  # noqa: E402
from tests.strategies import graph_shapes  # noqa: E402


def _arith_chain(n: int, seed: int) -> str:
    import gen_arith_chain  # another engineer's generator (issue #9's chain shape), loaded when raced

    return gen_arith_chain.generate(n, seed)


def _graph(family: str) -> Callable[[int, int], str]:
    return lambda n, seed: graph_shapes.generate(family, n, seed).text


SHAPES: dict[str, Callable[[int, int], str]] = {
    "xx-family": lambda n, seed: gen.generate(n, seed),
    "arith-chain": _arith_chain,
    **{f"graph-{f}": _graph(f) for f in graph_shapes.FAMILIES},
}


def select(spec: str) -> list[str]:
    """`all` or a comma-separated list of shape names."""
    names = list(SHAPES) if spec == "all" else spec.split(",")
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        raise SystemExit(f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(SHAPES)}")
    return names
