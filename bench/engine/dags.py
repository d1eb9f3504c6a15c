"""Random arithmetic term DAGs shaped like compiler graphs, for the engine benchmark.

Children come mostly (70%) from the last 64 nodes, so the DAG is deep and locally
shared like a lowered program, and about 15% of nodes are planted redexes
(``x-x``, ``x+0``, ``x*1``, ``x*0``, ``--x``, ``c+c``) so the simplify rules have work.
Nodes are hash-consed, so ``n`` counts distinct terms.
"""

from __future__ import annotations

import random

from egraft.rewrite.engine.termtable import Payload, TermTable

from tests.rewrite.arith_workload import arith_schema


def random_arith_dag(n: int, seed: int = 0) -> TermTable:
    """A hash-consed DAG of ``n`` distinct arithmetic terms; roots are the unused non-leaves."""
    rng = random.Random(seed)
    table = TermTable(arith_schema())
    seen: dict[tuple, int] = {}

    def node(op: str, kids: tuple[int, ...] = (), payload: Payload | None = None) -> int:
        key = (op, kids, payload)
        if key not in seen:
            seen[key] = table.add(op, kids, payload)
        return seen[key]

    def pick() -> int:
        size = len(table)
        if rng.random() < 0.7:
            return rng.randrange(max(0, size - 64), size)
        return rng.randrange(size)

    for i in range(8):
        node("Var", payload=f"v{i}")
    while len(table) < n:
        r = rng.random()
        if r < 0.08:
            node("Const", payload=rng.randrange(-8, 9))
        elif r < 0.10:
            node("Var", payload=f"v{rng.randrange(10 * n)}")
        elif r < 0.25:
            x = pick()
            kind = rng.randrange(6)
            if kind == 0:
                node("Sub", (x, x))
            elif kind == 1:
                node("Add", (x, node("Const", payload=0)))
            elif kind == 2:
                node("Mul", (x, node("Const", payload=1)))
            elif kind == 3:
                node("Mul", (x, node("Const", payload=0)))
            elif kind == 4:
                node("Neg", (node("Neg", (x,)),))
            else:
                node("Add", (node("Const", payload=rng.randrange(9)), node("Const", payload=rng.randrange(9))))
        elif r < 0.32:
            node("Neg", (pick(),))
        else:
            node(rng.choice(("Add", "Sub", "Mul")), (pick(), pick()))
    used = set(table.children)
    for i in range(len(table)):
        if i not in used and table.kids(i):
            table.add_root(i)
    return table
