"""`dce`: erase ops whose results are unused and that have no side effects.

Effectful ops, terminators and symbols stay whatever their uses (symbols are
`symbol-dce`'s business).  Deadness propagates: erasing an op may leave the
ops feeding it unused, so the pass counts the remaining live uses of each
value and follows them back with a worklist.  Every op is visited a bounded
number of times, and the erasure filters each use list once, so a block of
100k ops is linear work even in graph regions, where uses may come before
definitions.
"""

from __future__ import annotations

import attrs

from egraft.ir import Operation
from egraft.ir.effects import is_trivially_dead, would_be_trivially_dead
from egraft.ir.erasure import erase_all

from egraft.passes.manager.registry import Pass, PassContext, register_pass


def dead_ops(top: Operation) -> list[Operation]:
    """The outermost ops under `top` that are dead once all dead ops are gone."""
    live_uses: dict[Operation, int] = {}
    worklist = [op for op in top.walk() if op is not top and is_trivially_dead(op)]
    dead: set[Operation] = set()
    roots: list[Operation] = []
    while worklist:
        op = worklist.pop()
        if op in dead:
            continue
        roots.append(op)
        inner = set(op.walk())
        newly_dead = inner - dead  # a nested op found dead first has had its operands counted
        dead |= inner
        for nested in newly_dead:
            for v in nested.operands:
                definer = v.owner_op
                if definer is None or definer in dead or definer in inner:
                    continue
                count = live_uses.get(definer)
                if count is None:
                    count = sum(len(r.uses) for r in definer.results)
                count -= 1
                live_uses[definer] = count
                if count == 0 and would_be_trivially_dead(definer) and definer is not top:
                    worklist.append(definer)
    # An op nested in a dead op goes with its ancestor.
    return [op for op in roots if not any(a in dead for a in _ancestors(op, top))]


def _ancestors(op: Operation, top: Operation):
    parent = op.parent_op
    while parent is not None and parent is not top:
        yield parent
        parent = parent.parent_op


@register_pass
@attrs.define
class DCE(Pass):
    """Erases unused effect-free ops transitively (terminators, symbols and effectful ops stay)."""

    NAME = "dce"
    SUMMARY = "Erase unused operations without side effects"

    def run(self, op: Operation, ctx: PassContext) -> None:
        erase_all(dead_ops(op))
