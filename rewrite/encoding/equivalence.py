"""Are two IR trees the same program up to what the encoding may change?

The identity round trip (lower, saturate with no rules, extract, write back) may merge
equal pure ops (CSE, also across regions: a value computed in two sibling islands may be
computed in each), drop pure ops nobody uses (DCE) and move pure ops; it must keep every
effectful op, their order within each block, every operand (control tokens included), the
types, attributes and properties, and the terminators.

So each op gets a canonical number by hash-consing: a pure op is its name, attributes,
properties, result types, operands' numbers and regions' numbers; an effectful op (``ir/effects.py``'s
``has_side_effects``, which the lowering asks too) adds its block's identity and its rank among the
block's effectful ops. A block is its argument types, the numbers of its effectful ops in
order and its terminator's number; block arguments are numbered by the op owning them.
Two trees are equivalent iff their roots get the same number. Pure ops appear only
through their uses, which is exactly "up to CSE and DCE of pure ops".

In graph regions a use may precede its definition; such a use gets a shallow number (the
defining op's name, attributes, types and result index), which is what remains
comparable across a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from egraft.ir import Block, Operation, Region, Value
from egraft.ir.effects import has_side_effects
from egraft.ir.core.traits import Traits


def _is_terminator(op: Operation) -> bool:
    return op is op.parent.last and op.has_trait(Traits.Terminator)  # type: ignore[union-attr]


class _Canon:
    """Canonical numbers shared by both trees (one intern table)."""

    def __init__(self) -> None:
        self.table: dict[tuple, int] = {}
        self.values: dict[Value, int] = {}
        self.blocks: dict[Block, tuple[int, list[int], int | None]] = {}

    def intern(self, key: tuple) -> int:
        return self.table.setdefault(key, len(self.table))

    def head(self, op: Operation) -> tuple:
        return (op.name, tuple(sorted(op.properties.items())), tuple(sorted(op.attributes.items())),
                tuple(op.result_types))

    def value(self, v: Value) -> int:
        n = self.values.get(v)
        if n is not None:
            return n
        owner = v.owner_op
        if owner is not None:  # defined later in a graph region (or outside both trees)
            return self.intern(("fwd", self.head(owner), v.index))  # type: ignore[attr-defined]
        return self.intern(("outer", id(v)))

    def op(self, op: Operation, scope: int, rank: int | None) -> int:
        head = self.head(op) + (tuple(self.value(v) for v in op.operands),
                                None if rank is None else (scope, rank))
        hk = self.intern(head)
        regions = tuple(self.region(r, self.intern(("scope", hk, i))) for i, r in enumerate(op.regions))
        k = self.intern(("op", hk, regions))
        for r in op.results:
            self.values[r] = self.intern(("res", k, r.index))
        return k

    def region(self, region: Region, scope: int) -> int:
        return self.intern(("region", tuple(self.block(b, self.intern(("block", scope, i)))
                                            for i, b in enumerate(region.blocks))))

    def block(self, block: Block, scope: int) -> int:
        for i, a in enumerate(block.args):
            self.values[a] = self.intern(("arg", scope, i, a.type))
        effects: list[int] = []
        term: int | None = None
        for op in block:
            k = self.op(op, scope, len(effects) if has_side_effects(op) else None)
            if has_side_effects(op):
                effects.append(k)
            if _is_terminator(op):
                term = k
        n = self.intern(("blk", tuple(a.type for a in block.args), tuple(effects), term))
        self.blocks[block] = (n, effects, term)
        return n


@dataclass(frozen=True)
class Verdict:
    equivalent: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.equivalent


def equivalent(a: Operation, b: Operation) -> Verdict:
    """Whether ``a`` and ``b`` are the same program up to CSE/DCE/motion of pure ops."""
    canon = _Canon()
    ka, kb = canon.op(a, -1, None), canon.op(b, -1, None)
    if ka == kb:
        return Verdict(True)
    return Verdict(False, _first_difference(canon, a, b))


def _first_difference(canon: _Canon, a: Operation, b: Operation) -> str:
    """Describe where the trees part: the outermost block whose numbers differ."""
    if canon.head(a) != canon.head(b) or len(a.regions) != len(b.regions):
        return f"{a.name} at {a.loc} differs from {b.name} at {b.loc} (name, attributes or types)"
    for ra, rb in zip(a.regions, b.regions):
        if len(ra.blocks) != len(rb.blocks):
            return f"{a.name}: region block counts differ"
        for ba, bb in zip(ra.blocks, rb.blocks):
            na, ea, ta = canon.blocks[ba]
            nb, eb, tb = canon.blocks[bb]
            if na == nb:
                continue
            opa = [op for op in ba if has_side_effects(op)]
            opb = [op for op in bb if has_side_effects(op)]
            for i, (x, y) in enumerate(zip(ea, eb)):
                if x != y:
                    if canon.head(opa[i]) == canon.head(opb[i]) and opa[i].regions:
                        return _first_difference(canon, opa[i], opb[i])
                    return (f"in {a.name}: effectful op #{i} differs: {opa[i].name} at {opa[i].loc} "
                            f"vs {opb[i].name} at {opb[i].loc}")
            if len(ea) != len(eb):
                return f"in {a.name}: {len(ea)} effectful ops vs {len(eb)}"
            if ta != tb:
                return f"in {a.name}: the terminators differ ({ba.last.name} vs {bb.last.name})"  # type: ignore[union-attr]
            return f"in {a.name}: block arguments differ"
    return f"{a.name}: operands differ"
