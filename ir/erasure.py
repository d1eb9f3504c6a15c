"""Erasing many ops at once, in time linear in their uses.

Erasing ops one by one costs a scan of each operand's use list, which is quadratic when
thousands of dead ops read one constant (dce, cse, symbol-dce and graph pruning erase that
many); `erase_all` filters each touched use list once instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from egraft.ir.core.operation import Operation


def erase_all(ops: Iterable[Operation]) -> None:
    """Erase `ops` (and everything nested in them) in time linear in their uses.
    Their results must have no uses outside the erased set."""
    roots = list(ops)
    dead: set[Operation] = set()
    for op in roots:
        dead.update(op.walk())
    touched = {id(v): v for op in dead for v in op.operands}
    for v in touched.values():
        v.uses = [u for u in v.uses if u not in dead]
    for op in roots:
        op.detach()
    for op in dead:
        op.operands = []
