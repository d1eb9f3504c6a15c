"""Lowering: the regions of an op → one term table (docs/encoding.md).

One pass over the ops appends columns (operator code, arity, children, payload) to
Python lists; the table is built from them at the end in one call, and egglog sees it
only through the engine's bulk loader. Types, attributes and attribute dictionaries
are hash-consed here (each distinct one is one node), so a 100k-op module costs a few
nodes per op and no per-node egglog call.

What the write-back needs to map e-classes back to IR is kept beside the table in
:class:`Lowered`: the original op of every op node, the region of every region id, the
block argument of every ``BArg`` id, the attribute and type objects of their nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from egraft.ir import Block, BlockArgument, Operation, OpResult, Region, Value
from egraft.ir.effects import has_side_effects
from egraft.ir.core import attributes as A
from egraft.ir.records.opdef import SINGLE, OpDef
from egraft.ir.core.types import Type
from egraft.ir.core.traits import Traits

from egraft.rewrite.encoding.schema import CAT, CHUNK, OpShape, attr_shape, new_schema, shape_of
from egraft.rewrite.engine.termtable import Payload, Schema, TermTable


@dataclass
class Lowered:
    """A term table plus the IR objects its nodes came from."""

    root: Operation
    schema: Schema
    table: TermTable
    ops: dict[int, Operation]                 # op node -> original op
    op_node: dict[Operation, int]             # original op -> its op node
    regions: list[Region]                     # rid -> region
    bargs: list[BlockArgument]                # BArg id -> block argument
    ext: list[Value]                          # Ext id -> value defined outside the root
    fwd: list[tuple[int, int]]                # Fwd id -> (rid, index in that region's targets)
    opaque: list[tuple[Operation, int]]       # Opaque id -> (op, number of real operands)
    attrs: dict[int, A.Attribute]             # Attr node -> attribute
    types: dict[int, Type]                    # Type node -> type
    position: dict[Operation, int]            # original op -> index in its block
    shapes: dict[str, OpShape] = field(default_factory=dict)
    block_index: dict[int, int] = field(default_factory=dict)  # rid -> its block, in multi-block root regions
    root_region: list[int] = field(default_factory=list)       # root node -> index of its root region

    @property
    def root_nodes(self) -> list[int]:
        """The ``Reg`` (or ``NoReg``) node of each region of the root op."""
        return self.table.roots


class _Lowerer:
    def __init__(self, root: Operation, schema: Schema | None) -> None:
        self.schema = schema or new_schema()
        self.out = Lowered(root, self.schema, TermTable(self.schema), {}, {}, [], [], [], [], [], {}, {}, {})
        self.codes: dict[str, int] = {}
        self.names: list[str] = []
        self.col_op: list[int] = []
        self.col_arity: list[int] = []
        self.col_kids: list[int] = []
        self.col_payload: list[Payload | None] = []
        self.memo: dict[tuple, int] = {}
        self.values: dict[Value, int] = {}
        self.fwd_node: dict[Value, int] = {}
        self.pending: dict[Value, int] = {}    # forward-referenced value -> its Fwd id
        # Values of one block of a multi-block root region used in another: their Fwd node
        # and defining block (docs/encoding.md, "Regions with several blocks").
        self.cross: dict[Value, tuple[int, Block]] = {}
        self.block: Block | None = None        # the block being lowered
        self.singles: dict[OpDef, bool] = {}  # opdef -> all its operands are single
        self.heads_memo: dict[tuple, tuple[int, int, int]] = {}

    # ------------------------------------------------------------ columns

    def node(self, op: str, kids: tuple[int, ...] | list[int] = (), payload: Payload | None = None) -> int:
        code = self.codes.get(op)
        if code is None:
            code = self.codes[op] = len(self.names)
            self.names.append(op)
        self.col_op.append(code)
        self.col_arity.append(len(kids))
        self.col_kids.extend(kids)
        self.col_payload.append(payload)
        return len(self.col_op) - 1

    def shared(self, op: str, kids: tuple[int, ...] = (), payload: Payload | None = None) -> int:
        """A hash-consed node (metadata: types, attributes, lists)."""
        key = (op, kids, type(payload), payload)
        n = self.memo.get(key)
        if n is None:
            n = self.memo[key] = self.node(op, kids, payload)
        return n

    # ------------------------------------------------------------ metadata

    def list(self, ctor: str, items: Sequence[int], shared: bool = False) -> int:
        """A list node; long lists become a tree of ``CHUNK``-sized pieces."""
        make = self.shared if shared else self.node
        while len(items) > CHUNK:
            items = [make(ctor, tuple(items[i:i + CHUNK])) for i in range(0, len(items), CHUNK)]
            ctor = CAT.get(ctor, ctor)
        return make(ctor, tuple(items))

    def type(self, t: Type) -> int:
        key = ("type", t)
        n = self.memo.get(key)
        if n is None:
            n = self.memo[key] = self.shared("Ty", (), str(t))
            self.out.types[n] = t
        return n

    def types(self, ts: list[Type]) -> int:
        return self.list("Types", [self.type(t) for t in ts], shared=True)

    def attr(self, a: A.Attribute) -> int:
        key = ("attr", a)
        n = self.memo.get(key)
        if n is None:
            n = self.memo[key] = self._attr(a)
            self.out.attrs[n] = a
        return n

    def _attr(self, a: A.Attribute) -> int:
        ctor, payload, subs = attr_shape(a)
        if ctor == "AArr":
            return self.shared("AArr", (self.list("Attrs", [self.attr(x) for x in subs], shared=True),))  # type: ignore[arg-type]
        return self.shared(ctor, tuple(self.type(x) for x in subs), payload)  # type: ignore[arg-type]

    def dict(self, d: dict[str, A.Attribute]) -> int:
        n = self.shared("DNil")
        for name in sorted(d, reverse=True):
            n = self.shared("DCons", (self.attr(d[name]), n), name)
        return n

    # ------------------------------------------------------------ values

    def value(self, v: Value) -> int:
        if self.cross:
            crossing = self.cross.get(v)
            if crossing is not None and crossing[1] is not self.block:
                return crossing[0]
        n = self.values.get(v)
        if n is not None:
            return n
        if isinstance(v, OpResult) and v.owner in self.out.op_node:
            n = self.values[v] = self.node("Res", (self.out.op_node[v.owner],), v.index)
            return n
        n = self.fwd_node.get(v)
        if n is not None:
            return n
        definer = _definer(v)
        if definer is not None and self.out.root.is_ancestor(definer):
            # A use before the definition: only graph regions allow it.
            uid = len(self.out.fwd)
            self.out.fwd.append((-1, -1))
            self.pending[v] = uid
            n = self.fwd_node[v] = self.node("Fwd", (self.type(v.type),), uid)
            return n
        uid = len(self.out.ext)
        self.out.ext.append(v)
        n = self.values[v] = self.node("Ext", (self.type(v.type),), uid)
        return n

    # ------------------------------------------------------------ ops and regions

    def region(self, region: Region) -> int:
        if not region.blocks:
            return self.shared("NoReg")
        return self.block_reg(region, region.blocks[0])

    def blocks(self, region: Region) -> list[int]:
        """A root region of several blocks: one ``Reg`` node per block.

        A value a block defines and another block uses is one of the defining block's
        targets; the uses see a ``Fwd`` node that stands for it, so the e-graph does not
        merge it with the other block's terms, and the write-back materialises it in the
        block that defines it (which dominates its uses).
        """
        home = {b: b for b in region.blocks}
        exported: dict[Block, list[Value]] = {b: [] for b in region.blocks}
        for b in region.blocks:
            for op in b:
                for inner in (op.walk() if op.regions else (op,)):
                    for v in inner.operands:
                        if v in self.cross:
                            continue
                        d = _top_block(v, home)
                        if d is not None and d is not b:
                            uid = len(self.out.fwd)
                            self.out.fwd.append((-1, -1))
                            self.cross[v] = (self.node("Fwd", (self.type(v.type),), uid), d)
                            exported[d].append(v)
        regs = []
        for k, b in enumerate(region.blocks):
            regs.append(self.block_reg(region, b, exported[b]))
            self.out.block_index[int(self.col_payload[regs[-1]])] = k  # type: ignore[arg-type]
        return regs

    def block_reg(self, region: Region, block: Block, exported: Sequence[Value] = ()) -> int:
        """The ``Reg`` node of ``block`` (the only block of ``region`` unless ``exported`` is given)."""
        outer, self.block = self.block, block
        rid = len(self.out.regions)
        self.out.regions.append(region)
        args = []
        for arg in block.args:
            uid = len(self.out.bargs)
            self.out.bargs.append(arg)
            args.append(self.values.setdefault(arg, self.node("BArg", (self.type(arg.type),), uid)))
        eff = self.node("EffIn", (), rid)
        term = self.shared("NoTerm")
        last = block.last
        for i, op in enumerate(block):
            self.out.position[op] = i
            node, eff = self.op(op, eff)
            if op is last and op.has_trait(Traits.Terminator):
                term = node
        targets = self.resolve_forward(block, rid)
        for v in exported:
            self.out.fwd[int(self.col_payload[self.cross[v][0]])] = (rid, len(targets))  # type: ignore[arg-type]
            targets.append(self.value(v))
        self.block = outer
        return self.node("Reg", (self.list("Vals", args, shared=True), term, eff,
                                 self.list("Vals", targets)), rid)

    def resolve_forward(self, block: Block, rid: int) -> list[int]:
        """Forward references to values of ``block``: the region lists their targets."""
        targets = []
        for v in [v for v in self.pending if v.parent_block is block]:
            self.out.fwd[self.pending.pop(v)] = (rid, len(targets))
            del self.fwd_node[v]
            targets.append(self.value(v))
        return targets

    def only_singles(self, opdef: OpDef) -> bool:
        """Does ``opdef`` take single operands only (asked twice per op, so cached)?"""
        singles = self.singles.get(opdef)
        if singles is None:
            singles = self.singles[opdef] = all(d.kind == SINGLE for d in opdef.operands)
        return singles

    def fits_record(self, opdef: OpDef, op: Operation) -> bool:
        if len(op.regions) != len(opdef.regions):
            return False
        if self.only_singles(opdef):
            return len(op.operands) == len(opdef.operands)
        groups = opdef.operand_groups(op)
        count = sum(1 if d.kind == SINGLE else (len(g) if isinstance(g, list) else g is not None)
                    for d in opdef.operands for g in (groups.get(d.name),))
        return count == len(op.operands) and all(
            groups.get(d.name) is not None for d in opdef.operands if d.kind == SINGLE)

    def op(self, op: Operation, eff: int) -> tuple[int, int]:
        """Lower one op; returns its node and the effect token after it."""
        opdef = op.opdef
        if op.successors or any(len(r.blocks) > 1 for r in op.regions):
            node = self.opaque(op, eff)
            effectful = True
        else:
            regs = [self.region(r) for r in op.regions]
            heads = self.heads(op)
            if opdef is not None and self.fits_record(opdef, op):
                shape = self.out.shapes.get(opdef.name)
                if shape is None:
                    shape = self.out.shapes[opdef.name] = shape_of(opdef)
                    self.schema.add(shape.sig)
                effectful = shape.effectful
                kids = self.operand_groups(opdef, op) + list(heads) + regs + ([eff] if effectful else [])
                node = self.node(opdef.name, kids)
            else:
                effectful = has_side_effects(op)
                vals = self.list("Vals", [self.value(v) for v in op.operands])
                kids = [vals, *heads, self.node("Regs", regs)] + ([eff] if effectful else [])
                node = self.node("Generic" if effectful else "GenericPure", kids, op.name)
        self.out.ops[node] = op
        self.out.op_node[op] = node
        return node, (self.node("EffOf", (node,)) if effectful else eff)

    def heads(self, op: Operation) -> tuple[int, int, int]:
        """The result types, properties and attributes nodes of ``op``.

        Most ops of a module repeat a few combinations, so they are memoised on the
        combination itself: one key instead of a hash-consing lookup per type and entry.
        """
        key = (tuple(op.result_types), tuple(op.properties.items()), tuple(op.attributes.items()))
        heads = self.heads_memo.get(key)
        if heads is None:
            heads = self.heads_memo[key] = (self.types(op.result_types), self.dict(op.properties),
                                            self.dict(op.attributes))
        return heads

    def operand_groups(self, opdef: OpDef, op: Operation) -> list[int]:
        if self.only_singles(opdef):
            return [self.value(v) for v in op.operands]
        groups = opdef.operand_groups(op)
        out = []
        for d in opdef.operands:
            g = groups[d.name]
            if d.kind == SINGLE:
                out.append(self.value(g))
            else:
                vals = g if isinstance(g, list) else ([] if g is None else [g])
                out.append(self.list("Vals", [self.value(v) for v in vals]))
        return out

    def opaque(self, op: Operation, eff: int) -> int:
        """An op kept verbatim: its operands plus every value its regions capture."""
        inside = {id(o) for o in op.walk()}
        captured = list(dict.fromkeys(v for o in op.walk() if o is not op for v in o.operands
                                      if id(_definer(v)) not in inside))
        uid = len(self.out.opaque)
        self.out.opaque.append((op, len(op.operands)))
        vals = self.list("Vals", [self.value(v) for v in (*op.operands, *captured)])
        return self.node("Opaque", (vals, self.types(op.result_types), eff), uid)

    def finish(self) -> Lowered:
        out = self.out
        out.table = TermTable.from_columns(self.schema, self.names, self.col_op, self.col_arity,
                                           self.col_kids, self.col_payload, out.table.roots)
        return out


def lower(root: Operation, schema: Schema | None = None) -> Lowered:
    """Lower every region of ``root`` (the op itself stays: the write-back refills its regions).

    ``schema`` may be shared between lowerings that go into one e-graph; typed
    constructors are added to it as ops are met.
    """
    low = _Lowerer(root, schema)
    for k, r in enumerate(root.regions):
        regs = low.blocks(r) if len(r.blocks) > 1 else [low.region(r)]
        low.out.table.roots.extend(regs)
        low.out.root_region.extend([k] * len(regs))
    if low.pending:
        raise ValueError(f"{len(low.pending)} value(s) used but never defined under {root.name}")
    return low.finish()


def _top_block(v: Value, home: dict[Block, Block]) -> Block | None:
    """The block of ``home`` whose ops define ``v`` (directly or nested), if any.

    ``home`` maps blocks already seen to their top block and learns the ones it climbs through."""
    block = v.parent_block
    path = []
    while block is not None and block not in home:
        path.append(block)
        op = block.parent_op
        block = op.parent if op is not None else None
    top = home.get(block) if block is not None else None
    for b in path:
        if top is not None:
            home[b] = top
    return top


def _definer(v: Value) -> Operation | None:
    """The op that defines ``v``: its producer, or the op owning its block."""
    return v.owner if isinstance(v, OpResult) else v.parent_block.parent_op
