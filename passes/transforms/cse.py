"""`cse`: eliminate common sub-expressions, with MLIR's semantics.

Two ops are equivalent when they have the same name, operands, result types,
attributes and properties (locations are ignored) and, for ops with regions,
structurally identical single-block regions.  Only effect-free ops are
merged, terminators never; trivially dead ops met on the way are erased.

Equivalence is scoped by dominance: a single-block region opens a scope that
sees the enclosing ones; a multi-block region is walked along its dominator
tree; an IsolatedFromAbove op starts from an empty table (reusing an outer
value would create an implicit capture).  In a graph region (tfg.graph) a
use may precede its definition, so only uses by ops not yet visited are
redirected, and the duplicate stays if some use remains.  Multi-block graph
regions are skipped, as MLIR skips them.  Ops that only read memory are not
merged (MLIR merges them when no write intervenes; no egraft op needs it yet).

Lookups are dict hits on a structural key, so a block of 100k ops costs
linear time.
"""

from __future__ import annotations

from typing import Hashable

import attrs

from egraft.ir import Block, Operation, Region, Value
from egraft.ir.core.location import UnknownLoc
from egraft.ir.effects import is_memory_effect_free, is_trivially_dead
from egraft.ir.erasure import erase_all
from egraft.ir.core.traits import Traits
from egraft.ir.region_kinds import has_ssa_dominance

from egraft.passes.manager.registry import Pass, PassContext, register_pass


class _ScopedTable:
    """Op keys -> representative op, with nested scopes.  A key is inserted only
    when absent, so leaving a scope just deletes the keys it added."""

    def __init__(self) -> None:
        self.table: dict[Hashable, Operation] = {}
        self.scopes: list[list[Hashable]] = [[]]

    def push(self) -> None:
        self.scopes.append([])

    def pop(self) -> None:
        for key in self.scopes.pop():
            del self.table[key]

    def insert(self, key: Hashable, op: Operation) -> None:
        self.table[key] = op
        self.scopes[-1].append(key)


def op_key(op: Operation) -> Hashable:
    """The structural identity CSE compares (values and uniqued types/attributes by identity)."""
    regions = tuple(_region_key(r, {}) for r in op.regions) if op.regions else ()
    return (op.name, tuple(op.operands), tuple(r.type for r in op.results),
            frozenset(op.attributes.items()), frozenset(op.properties.items()), regions)


def _region_key(region: Region, local: dict[Value, int]) -> Hashable:
    """A region's structure with its own values numbered, so that two regions
    written alike (with different value identities) get the same key."""
    blocks = {b: i for i, b in enumerate(region.blocks)}
    out = []
    for block in region.blocks:
        for a in block.args:
            local[a] = len(local)
        ops = []
        for op in block:
            operands = tuple(("%", local[v]) if v in local else v for v in op.operands)
            nested = tuple(_region_key(r, local) for r in op.regions)
            for r in op.results:
                local[r] = len(local)
            ops.append((op.name, operands, tuple(r.type for r in op.results), frozenset(op.attributes.items()),
                        frozenset(op.properties.items()), nested, tuple(blocks.get(s, s) for s in op.successors)))
        out.append((tuple(a.type for a in block.args), tuple(ops)))
    return tuple(out)


class _Simplifier:
    def __init__(self) -> None:
        self.to_erase: list[Operation] = []
        # Representatives entered in some table: in graph regions their uses stay
        # untouched, since redirecting them would change keys already stored.
        self.representatives: set[Operation] = set()

    def region(self, table: _ScopedTable, region: Region) -> None:
        blocks = region.blocks
        if not blocks:
            return
        ssa = has_ssa_dominance(region)
        if len(blocks) == 1:
            table.push()
            self.block(table, blocks[0], ssa)
            table.pop()
        elif ssa:
            children = dominator_tree(region)
            # Depth-first over the dominator tree; a block's scope is open while its subtree runs.
            stack: list[tuple[Block, bool]] = [(blocks[0], False)]
            while stack:
                block, done = stack.pop()
                if done:
                    table.pop()
                    continue
                table.push()
                self.block(table, block, ssa)
                stack.append((block, True))
                stack.extend((c, False) for c in reversed(children.get(block, [])))

    def block(self, table: _ScopedTable, block: Block, ssa: bool) -> None:
        for op in block:
            if op.regions:
                isolated = op.opdef is not None and op.opdef.has_trait(Traits.IsolatedFromAbove)
                inner = _ScopedTable() if isolated else table
                for r in op.regions:
                    self.region(inner, r)
            self.operation(table, op, ssa)

    def operation(self, table: _ScopedTable, op: Operation, ssa: bool) -> None:
        d = op.opdef
        if d is None or d.has_trait(Traits.Terminator):
            return
        if is_trivially_dead(op):
            self.to_erase.append(op)
            return
        if any(len(r.blocks) > 1 for r in op.regions) or not is_memory_effect_free(op):
            return
        key = op_key(op)
        existing = table.table.get(key)
        if existing is None:
            table.insert(key, op)
            self.representatives.add(op)
            return
        if ssa:
            op.replace_all_uses_with(existing)
        else:
            for old, new in zip(op.results, existing.results):
                old.replace_uses_where(new, keep=self.representatives.__contains__)
        if all(not r.uses for r in op.results):
            self.to_erase.append(op)
        if isinstance(existing.loc, UnknownLoc) and not isinstance(op.loc, UnknownLoc):
            existing.loc = op.loc


def dominator_tree(region: Region) -> dict[Block, list[Block]]:
    """Children of each block in the region's dominator tree (Cooper, Harvey and
    Kennedy's iterative algorithm over reverse post-order)."""
    entry = region.blocks[0]
    order: list[Block] = []
    seen = {entry}
    stack = [(entry, iter(_successors(entry)))]
    while stack:
        block, it = stack[-1]
        nxt = next((s for s in it if s not in seen), None)
        if nxt is None:
            order.append(block)
            stack.pop()
        else:
            seen.add(nxt)
            stack.append((nxt, iter(_successors(nxt))))
    order.reverse()
    index = {b: i for i, b in enumerate(order)}
    preds: dict[Block, list[Block]] = {b: [] for b in order}
    for b in order:
        for s in _successors(b):
            if s in preds:
                preds[s].append(b)
    idom: dict[Block, Block] = {entry: entry}
    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            done = [p for p in preds[b] if p in idom]
            new = done[0]
            for p in done[1:]:
                a, c = p, new
                while a is not c:
                    while index[a] > index[c]:
                        a = idom[a]
                    while index[c] > index[a]:
                        c = idom[c]
                new = a
            if idom.get(b) is not new:
                idom[b] = new
                changed = True
    children: dict[Block, list[Block]] = {}
    for b in order[1:]:
        children.setdefault(idom[b], []).append(b)
    return children


def _successors(block: Block) -> list[Block]:
    term = block.last
    return list(term.successors) if term is not None else []


@register_pass
@attrs.define
class CSE(Pass):
    """MLIR's CSE: merges effect-free ops with equal name, operands, result types, attributes,
    properties and (single-block) regions, within dominance scopes; erases trivially dead ops;
    never crosses IsolatedFromAbove ops; in graph regions redirects only uses not yet visited."""

    NAME = "cse"
    SUMMARY = "Eliminate common sub-expressions"

    def run(self, op: Operation, ctx: PassContext) -> None:
        s = _Simplifier()
        table = _ScopedTable()
        for region in op.regions:
            s.region(table, region)
        erase_all(s.to_erase)
