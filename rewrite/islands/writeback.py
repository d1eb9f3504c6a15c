"""Write an island grouping back into a ``tf_executor.graph``.

Each group of two or more islands becomes one island whose body is the members' ops in
block order (block order is topological, so the body is too); a member result used
inside the group is replaced by the value its ``tf_executor.yield`` forwarded, followed
through chains of forwarding islands.  The new island yields only the results used
outside, once per distinct value; its control operands are the members' control operands
from outside the group, and its control result replaces every member control result
used outside.  Islands are moved, never cloned, so nested regions and attributes stay.

Merging may leave an island after one of its users (its members were spread through the
block), so the block is then re-sorted topologically, keeping the current order wherever
the dependencies allow.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from egraft.ir import Block, Operation, Value
from egraft.ir.dialects.tf_types import CONTROL
from egraft.ir.core.location import FusedLoc, Location

from egraft.rewrite.islands.facts import collect, graph_block_ops


def top_level(op: Operation, block: Block) -> Operation:
    """The op of ``block`` that is ``op`` or contains it."""
    while op.parent is not block:
        parent = op.parent_op
        assert parent is not None, "op is not nested in the block"
        op = parent
    return op


def _forwarded(members: Sequence[Operation]) -> dict[Value, Value]:
    """Member data result -> the value it stands for inside the merged body."""
    direct: dict[Value, Value] = {}
    for m in members:
        for result, value in zip(m.results, m.regions[0].blocks[0].last.operands):
            direct[result] = value
    resolved: dict[Value, Value] = {}
    for result, value in direct.items():
        while value in direct:
            value = direct[value]
        resolved[result] = value
    return resolved


def _control_used_within(members: Sequence[Operation], block: Block) -> bool:
    """A member's control token read inside another member's body cannot survive the merge."""
    member_set = set(members)
    for m in members:
        for user in m.results[-1].uses:
            if user.parent is not block and top_level(user, block) in member_set:
                return True
    return False


def merge_islands(members: Sequence[Operation]) -> Operation | None:
    """Replace ``members`` (islands of one block, in block order) by one island; None if unsafe."""
    block = members[0].parent
    assert block is not None
    if _control_used_within(members, block):
        return None
    member_set = set(members)
    forwarded = _forwarded(members)
    outside_uses: dict[Value, list[Operation]] = {}
    for m in members:
        for result in m.results:
            users = [u for u in result.users if top_level(u, block) not in member_set]
            if users:
                outside_uses[result] = users
    yielded: dict[Value, int] = {}
    for result in outside_uses:
        if result in forwarded:
            yielded.setdefault(forwarded[result], len(yielded))
    controls: list[Value] = []
    for m in members:
        for c in m.operands:
            if c.owner_op not in member_set and c not in controls:
                controls.append(c)
    island = Operation.create("tf_executor.island", controls, [v.type for v in yielded] + [CONTROL],
                              regions=1, loc=_fused([m.loc for m in members]))
    body = island.regions[0].add_block()
    for m in members:
        for op in m.regions[0].blocks[0].ops[:-1]:
            op.detach()
            body.append(op)
    body.append(Operation.create("tf_executor.yield", list(yielded), loc=island.loc))
    block.insert_before(members[0], island)
    for m in members:
        for result in m.results:
            replacement = (island.results[yielded[forwarded[result]]] if result in forwarded
                           and result in outside_uses else island.results[-1])
            inside = forwarded.get(result)
            for user in result.users:
                top = top_level(user, block)
                if top is island and inside is not None:
                    _replace_operand(user, result, inside)
                elif top not in member_set and top is not island:
                    _replace_operand(user, result, replacement)
    for m in members:  # members only read each other's results now; unlink them all first
        m.drop_all_uses_of_operands()
    for m in members:
        m.detach()
    return island


def _fused(locs: list[Location]) -> Location:
    """The members' locations, fused as MLIR fuses them (one distinct location stays itself)."""
    unique = list(dict.fromkeys(locs))
    return unique[0] if len(unique) == 1 else FusedLoc(unique)


def _replace_operand(user: Operation, old: Value, new: Value) -> None:
    for i, v in enumerate(user.operands):
        if v is old:
            user.set_operand(i, new)


def sort_block(graph: Operation) -> bool:
    """Re-sort the graph's block topologically, stable w.r.t. the current order; True if moved."""
    nodes = collect(graph)
    n = len(nodes.ops)
    preds = [0] * n
    succs: list[list[int]] = [[] for _ in range(n)]
    for s, _, d in nodes.edges:
        if d < n and s != d:
            succs[s].append(d)
            preds[d] += 1
    ready = [i for i in range(n) if preds[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for d in succs[i]:
            preds[d] -= 1
            if preds[d] == 0:
                heapq.heappush(ready, d)
    if len(order) != n:
        raise ValueError("island grouping produced a cyclic graph")
    if order == list(range(n)):
        return False
    block = nodes.fetch.parent
    assert block is not None
    for op in nodes.ops:
        op.detach()
    for i in order:
        block.insert_before(nodes.fetch, nodes.ops[i])
    return True


def write_groups(graph: Operation, groups: Sequence[Sequence[int]]) -> int:
    """Merge each group (node ids of ``graph``'s block); returns the number of islands removed."""
    ops, _ = graph_block_ops(graph)
    removed = 0
    for group in groups:
        merged = merge_islands([ops[i] for i in sorted(group)])
        if merged is not None:
            removed += len(group) - 1
    if removed:
        sort_block(graph)
    return removed
