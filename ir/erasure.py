"""Erasing many ops at once, in time linear in their uses.

Erasing a set of ops whose results are read only inside the set: each use the set makes
is dropped once (O(1) each, `UseList`), and ops are detached only at the roots.
"""

from __future__ import annotations

from collections.abc import Iterable

from egraft.ir.core.operation import Operation


def erase_all(ops: Iterable[Operation]) -> None:
    """Erase `ops` (and everything nested in them) in time linear in their operands.
    Their results must have no uses outside the erased set."""
    roots = list(ops)
    dead: set[Operation] = set()
    for op in roots:
        dead.update(op.walk())
    for op in dead:
        for v in op.operands:
            v.uses.remove(op)
    for op in roots:
        op.detach()
    for op in dead:
        op.operands = []
