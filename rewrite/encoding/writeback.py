"""Write-back: an extracted e-graph choice → the regions of the lowered op, rebuilt in place.

Each region of the root is rebuilt from its ``Reg`` e-class: the effect chain first (in
program order, so effectful ops keep their order), then the terminator, then the targets
of forward references; values are materialised on demand, producers before users, by an
explicit stack (:meth:`_Writer.materialize`), never by recursion per op: a value may sit
at the end of a chain 100k ops deep. Where a chosen
e-node *is* an original op's e-node (same operator, payload and child classes) the
original ``Operation`` is reused with its name, location and attributes; new ops get the
fused location of the original ops whose values they now compute, as MLIR does.

Placement: an effectful op goes in the block whose chain holds it; a pure op goes in the
block of its original op when that block encloses the use (so nothing sinks into loops),
else in the using block (a value CSE'd between two sibling islands is materialised in
each, since neither dominates the other). Each block is then ordered topologically by
data, capture and effect dependencies, original ops by their original position and new
ops right after their last dependency, so an unchanged block prints unchanged.
"""

from __future__ import annotations

import functools
import gc
import heapq
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from egraft.ir import Block, BlockArgument, Operation, OpResult, Region, Value
from egraft.ir.core import attributes as A
from egraft.ir.core.location import fuse
from egraft.ir.syntax.parser import Parser
from egraft.ir.core.types import Type
from egraft.ir.core.uses import UseList
from egraft.ir.core.traits import Traits

from egraft.rewrite.encoding.schema import CAT, attr_from_text, op_name_of
from egraft.rewrite.engine.export import EGraphArrays
from egraft.rewrite.encoding.lower import Lowered


_CATS = frozenset(CAT.values())


class WriteBackError(RuntimeError):
    """The extracted choice cannot be written as valid IR (a rule broke scoping)."""


@dataclass
class WriteBackStats:
    reused: int = 0
    created: int = 0
    dropped: int = 0
    cloned: int = 0


@dataclass(eq=False)
class _Ctx:
    """One block being rebuilt; ``parent`` is the enclosing block unless isolated."""

    block: Block
    parent: "_Ctx | None"
    vals: dict[int, Value] = field(default_factory=dict)
    ops: dict[int, Operation] = field(default_factory=dict)
    placed: list[Operation] = field(default_factory=list)
    terminator: Operation | None = None
    graph: bool = False

    def chain(self):
        ctx: _Ctx | None = self
        while ctx is not None:
            yield ctx
            ctx = ctx.parent


class _Writer:
    def __init__(self, low: Lowered, g: EGraphArrays, base: int, choice: np.ndarray) -> None:
        self.low, self.g = low, g
        table = low.table
        # The arrays are read one element at a time below, which costs far less on lists
        # than on numpy arrays (no scalar boxing), so they are converted once here.
        self.choice: list[int] = choice.tolist()
        self.node_op: list[int] = g.node_op.tolist()
        self.ptr: list[int] = g.child_ptr.tolist()
        self.kids: list[int] = g.children.tolist()
        self.tc: list[int] = g.term_class[base:base + len(table)].tolist()
        t_ops, t_ptr, t_kids = table.arrays()
        self.t_ops, self.t_ptr, self.t_kids = t_ops.tolist(), t_ptr.tolist(), t_kids.tolist()
        self.orig_by_class: dict[int, list[int]] = defaultdict(list)
        for t in low.ops:
            self.orig_by_class[self.tc[t]].append(t)
        self.attr_by_class = {self.tc[n]: a for n, a in low.attrs.items()}
        self.type_by_class = {self.tc[n]: t for n, t in low.types.items()}
        self.used_ops: set[Operation] = set()
        self.used_regions: set[int] = set()
        self.ctx_of_block: dict[Block, _Ctx] = {}
        self.ctx_of_op: dict[Operation, _Ctx] = {}
        self.eff_pred: dict[Operation, Operation] = {}
        self.fwd_slots: set[tuple[int, int]] = set()
        self.first_copy: dict[int, Operation] = {}
        self.new_ops: dict[Operation, set[int]] = {}  # new op -> classes of the values and effects it computes
        self.ctxs: list[_Ctx] = []
        self.ctx_of_rid: dict[int, _Ctx] = {}
        self.fwd_targets: dict[int, list[int]] = {}
        self.stats = WriteBackStats()
        # Every lowered op leaves its block now; the blocks are refilled from the choice.
        self.orig_block: dict[Operation, Block] = {op: op.parent for op in low.position}  # type: ignore[misc]
        for op in low.position:
            op.detach()

    # ------------------------------------------------------------ e-nodes

    def node(self, c: int) -> tuple[str, object, list[int]]:
        n = self.choice[c]
        if n < 0:
            raise WriteBackError(f"e-class {c} was not extracted")
        return self.g.op_names[self.node_op[n]], self.g.payloads[n], self.kids[self.ptr[n]:self.ptr[n + 1]]

    def is_original(self, t: int, c: int) -> bool:
        """Is the chosen e-node of class ``c`` the e-node of original op node ``t``?"""
        name, payload, kids = self.node(c)
        table = self.low.table
        tc = self.tc
        orig_kids = [tc[k] for k in self.t_kids[self.t_ptr[t]:self.t_ptr[t + 1]]]
        return table.op_names[self.t_ops[t]] == name and table.payloads[t] == payload and orig_kids == kids

    def items(self, c: int) -> list[int]:
        """Element classes of a list class, through the chunks of long lists."""
        name, _, kids = self.node(c)
        if name in _CATS:
            return [k for kid in kids for k in self.items(kid)]
        return kids

    # ------------------------------------------------------------ metadata

    def type(self, c: int) -> Type:
        t = self.type_by_class.get(c)
        if t is None:
            _, text, _ = self.node(c)
            t = self.type_by_class[c] = Parser(str(text)).parse_type()
        return t

    def types(self, c: int) -> list[Type]:
        return [self.type(k) for k in self.items(c)]

    def attr(self, c: int) -> A.Attribute:
        a = self.attr_by_class.get(c)
        if a is None:
            a = self.attr_by_class[c] = self._decode_attr(*self.node(c))
        return a

    def _decode_attr(self, name: str, payload: object, kids: list[int]) -> A.Attribute:
        if name == "AInt":
            return A.IntegerAttr(int(payload), self.type(kids[0]))  # type: ignore[arg-type]
        if name == "AFloat":
            return A.FloatAttr(float(payload), self.type(kids[0]))  # type: ignore[arg-type]
        if name == "AStr":
            return A.StringAttr(str(payload))
        if name == "AUnit":
            return A.UnitAttr()
        if name == "AType":
            return A.TypeAttr(self.type(kids[0]))
        if name == "AArr":
            return A.ArrayAttr(tuple(self.attr(k) for k in self.items(kids[0])))
        return attr_from_text(str(payload))

    def dict(self, c: int) -> dict[str, A.Attribute]:
        out: dict[str, A.Attribute] = {}
        name, payload, kids = self.node(c)
        while name == "DCons":
            out[str(payload)] = self.attr(kids[0])
            name, payload, kids = self.node(kids[1])
        return out

    # ------------------------------------------------------------ values and ops

    def lookup(self, c: int, ctx: _Ctx, ops: bool) -> Value | Operation | None:
        x: _Ctx | None = ctx
        while x is not None:  # a plain loop: this runs once per operand and per op
            found = (x.ops if ops else x.vals).get(c)
            if found is not None:
                return found
            x = x.parent
        return None

    def value(self, c: int, ctx: _Ctx) -> Value:
        found = self.lookup(c, ctx, ops=False)
        if found is not None:
            return found  # type: ignore[return-value]
        name, payload, kids = self.node(c)
        if name == "Res":
            self.materialize(c, ctx)
            return self.lookup(c, ctx, ops=False)  # type: ignore[return-value]
        if name == "Ext":
            return self.low.ext[int(payload)]  # type: ignore[arg-type]
        if name == "Fwd":
            return _ForwardRef(self.type(kids[0]), c)
        raise WriteBackError(f"{name} #{payload} used outside its scope")

    def values(self, c: int, ctx: _Ctx) -> list[Value]:
        return [self.value(k, ctx) for k in self.items(c)]

    def materialize(self, c: int, ctx: _Ctx) -> None:
        """Make the ``Res`` class ``c`` visible from ``ctx``, building every missing producer.

        Depth first with an explicit stack: an op is built once its operands are visible
        where it goes, so :meth:`build` finds them all by lookup and never descends. The
        order is the one a recursive materialisation had (operands left to right, each
        producer right after its own operands), so ops are placed in the same order.
        A stack entry is a value class, where it is wanted, and, once the operands of its
        op have been pushed, where that op goes.
        """
        lookup, node = self.lookup, self.node
        stack: list[tuple[int, _Ctx, _Ctx | None]] = [(c, ctx, None)]
        while stack:
            v, vctx, target = stack.pop()
            if lookup(v, vctx, ops=False) is not None:
                continue
            name, payload, kids = node(v)
            if name != "Res":
                continue  # Ext and Fwd values are made where they are used, without descending
            op = lookup(kids[0], vctx, ops=True)
            if op is None:
                o = kids[0]
                oname, opayload, okids = node(o)
                if target is None:
                    self.check_pure(oname, opayload)
                    target = self.home(o, vctx)
                    missing = [k for k in self.operand_classes(oname, okids)
                               if lookup(k, target, ops=False) is None and node(k)[0] == "Res"]
                    if missing:
                        stack.append((v, vctx, target))
                        stack.extend((k, target, None) for k in reversed(missing))
                        continue
                op = self.place(o, oname, opayload, okids, target)
            if op in self.new_ops:
                self.new_ops[op].add(v)
            self.ctx_of_op[op].vals[v] = op.results[int(payload)]  # type: ignore[arg-type,index]

    def operand_classes(self, name: str, kids: list[int]) -> list[int]:
        """The value classes of an op node's operands, in the order :meth:`build` reads them."""
        shape = self.low.shapes.get(name)
        if shape is not None:
            return [k for is_list, g in zip(shape.groups, kids) for k in (self.items(g) if is_list else (g,))]
        if name == "NoTerm":
            return []  # build() reports it
        return self.items(kids[0])  # Generic, GenericPure, Opaque: a Vals list first

    def home(self, c: int, ctx: _Ctx) -> _Ctx:
        """Where a pure op goes: its original block if that encloses ``ctx``, else ``ctx``."""
        for t in self.orig_by_class.get(c, ()):
            orig = self.ctx_of_block.get(self.orig_block.get(self.low.ops[t]))  # type: ignore[arg-type]
            if orig is ctx:
                return ctx
            if orig is not None and any(x is orig for x in ctx.chain()):
                return orig
        return ctx

    def check_pure(self, name: str, payload: object) -> None:
        """Only the effect chain of a block places effectful ops; a value use cannot."""
        if self.is_effectful(name):
            raise WriteBackError(f"effectful op {op_name_of(name, payload) or name} is used "
                                 "outside the block whose effect chain holds it")

    def chain_op(self, c: int, ctx: _Ctx) -> Operation:
        """The op of class ``c`` on the effect chain (or the terminator) of ``ctx``'s block."""
        name, payload, kids = self.node(c)
        return self.place(c, name, payload, kids, ctx)

    def place(self, c: int, name: str, payload: object, kids: list[int], target: _Ctx) -> Operation:
        """Build the op of class ``c`` (its operands already visible) and add it to ``target``."""
        op = self.build(c, name, payload, kids, target)
        target.ops[c] = op
        target.placed.append(op)
        self.ctx_of_op[op] = target
        return op

    def is_effectful(self, name: str) -> bool:
        if name in ("Generic", "Opaque"):
            return True
        shape = self.low.shapes.get(name)
        return shape is not None and shape.effectful

    def build(self, c: int, name: str, payload: object, kids: list[int], ctx: _Ctx) -> Operation:
        if name == "Opaque":
            return self.build_opaque(int(payload), kids, ctx)  # type: ignore[arg-type]
        if name == "NoTerm":
            raise WriteBackError("NoTerm is not an op")
        op_name = op_name_of(name, payload)
        shape = self.low.shapes.get(name)
        if shape is not None:
            groups, heads = kids[:len(shape.groups)], kids[len(shape.groups):]
            operands: list[Value] = []
            for is_list, k in zip(shape.groups, groups):
                operands += self.values(k, ctx) if is_list else [self.value(k, ctx)]
            result_types, props, attrs = heads[0], heads[1], heads[2]
            reg_classes = heads[3:3 + shape.num_regions]
        else:
            operands = self.values(kids[0], ctx)
            result_types, props, attrs = kids[1], kids[2], kids[3]
            reg_classes = self.node(kids[4])[2]
        original = next((self.low.ops[t] for t in self.orig_by_class.get(c, ())
                         if self.low.ops[t] not in self.used_ops and self.is_original(t, c)), None)
        if original is None and c in self.first_copy:
            return self.clone(self.first_copy[c], operands)
        if original is not None:
            op = original
            self.stats.reused += 1
        else:
            op = Operation.create(op_name, [], self.types(result_types), self.dict(attrs), self.dict(props),
                                  len(reg_classes))  # type: ignore[arg-type]
            self.new_ops[op] = set()
            self.stats.created += 1
        self.used_ops.add(op)
        self.set_operands(op, operands)
        regions = [self.region(k, ctx, op, i) for i, k in enumerate(reg_classes)]
        op.regions = tuple(regions)
        for r in regions:
            r.parent = op
        self.first_copy.setdefault(c, op)
        return op

    def set_operands(self, op: Operation, operands: list[Value]) -> None:
        """Operands are assigned raw: use lists are rebuilt once at the end."""
        op.operands = list(operands)

    def clone(self, first: Operation, operands: list[Value]) -> Operation:
        """A second copy of a pure op needed where the first is not visible."""
        op = first.clone({old: new for old, new in zip(first.operands, operands)})
        self.set_operands(op, operands)
        self.stats.cloned += 1
        return op

    def build_opaque(self, uid: int, kids: list[int], ctx: _Ctx) -> Operation:
        op, n = self.low.opaque[uid]
        vals = self.values(kids[0], ctx)
        old = op.operands[:n] + [v for v in _captures(op)]
        remap = {o: v for o, v in zip(old[n:], vals[n:]) if o is not v}
        if remap:
            for inner in op.walk():
                if inner is not op:
                    inner.operands = [remap.get(v, v) for v in inner.operands]
        self.set_operands(op, vals[:n])
        self.used_ops.update(op.walk())
        self.stats.reused += 1
        return op

    # ------------------------------------------------------------ regions

    def region(self, c: int, parent: _Ctx | None, owner: Operation | None, index: int) -> Region:
        name, payload, kids = self.node(c)
        if name == "NoReg":
            return Region()
        rid = int(payload)  # type: ignore[arg-type]
        region = self.low.regions[rid] if rid not in self.used_regions else Region()
        self.used_regions.add(rid)
        args_c, term_c, eff_c, fwd_c = kids
        arg_classes = self.items(args_c)
        arg_nodes = [self.node(k) for k in arg_classes]
        orig_args = [self.low.bargs[int(p)] for n, p, _ in arg_nodes if n == "BArg"]  # type: ignore[arg-type]
        index = self.low.block_index.get(rid)
        if index is not None:
            # A block of a multi-block root region: successors name it, so it stays, and
            # so do its arguments (a class holding one is that argument, whatever else
            # extraction chose for it).
            block = region.blocks[index]
        else:
            block = region.blocks[0] if region.blocks else None
        if index is None and (block is None or len(orig_args) != len(arg_nodes) or orig_args != block.args):
            block = Block([self.type(k[0]) for _, _, k in arg_nodes])
            region.blocks[:] = []
            region.add_block(block)
        isolated = owner is not None and owner.has_trait(Traits.IsolatedFromAbove)
        ctx = _Ctx(block, None if isolated else parent,
                   graph=owner is not None and (owner.opdef is None or owner.opdef.graph_regions))
        self.ctx_of_block[block] = ctx
        self.ctx_of_rid[rid] = ctx
        self.ctxs.append(ctx)
        for k, arg in zip(arg_classes, block.args):
            ctx.vals[k] = arg
        self.fill(ctx, rid, term_c, eff_c, fwd_c)
        return region

    def fill(self, ctx: _Ctx, rid: int, term_c: int, eff_c: int, fwd_c: int) -> None:
        chain: list[tuple[int, int]] = []  # (op class, class of its EffOf), last op first
        name, payload, kids = self.node(eff_c)
        while name == "EffOf":
            chain.append((kids[0], eff_c))
            name, payload, kids = self.node(kids[0])
            eff_c = kids[-1]  # the op's input token (last child)
            name, payload, kids = self.node(eff_c)
        if name != "EffIn" or payload != rid:
            raise WriteBackError(f"the effect chain of region #{rid} does not start at its entry")
        prev: Operation | None = None
        replacing: list[Operation] = []  # new ops of the chain since the last effect an original op had
        for c, e in reversed(chain):
            op = ctx.ops.get(c) or self.chain_op(c, ctx)
            if prev is not None:
                self.eff_pred[op] = prev
            prev = op
            if op in self.new_ops:
                replacing.append(op)
            if replacing and e in self.eff_origins:  # an original op's effect: the new ops up to here replace it
                for new in replacing:
                    self.new_ops[new].add(e)
                replacing = []
        if self.node(term_c)[0] != "NoTerm":
            # a terminator on the effect chain (a branch) was placed by the loop above
            term = ctx.ops.get(term_c) or self.chain_op(term_c, ctx)
            ctx.placed.remove(term)
            ctx.terminator = term
        self.fwd_targets[rid] = self.items(fwd_c)
        for k in self.fwd_targets[rid]:
            self.value(k, ctx)

    # ------------------------------------------------------------ finishing

    def resolve_forward_refs(self) -> None:
        for op in (op for ctx in self.ctxs for op in (*ctx.placed, ctx.terminator) if op is not None):
            for i, v in enumerate(op.operands):
                if isinstance(v, _ForwardRef):
                    target = self.resolve_fwd(v.cls)
                    op.operands[i] = target
                    self.fwd_slots.add((id(op), i))

    def resolve_fwd(self, fwd_class: int) -> Value:
        """The value a forward reference stands for. A block's target may itself be another
        block's value (a cast chain across `cf.br` folded to the entry's argument), so the
        references are followed until a value is reached."""
        seen: set[int] = set()
        while True:
            _, uid, _ = self.node(fwd_class)
            rid, k = self.low.fwd[int(uid)]  # type: ignore[arg-type]
            if rid not in self.ctx_of_rid:
                raise WriteBackError(f"forward reference #{uid} points into a region that is gone")
            target = self.value(self.fwd_targets[rid][k], self.ctx_of_rid[rid])
            if not isinstance(target, _ForwardRef):
                return target
            if target.cls in seen:
                raise WriteBackError(f"forward reference #{uid} refers to itself")
            seen.add(fwd_class := target.cls)

    def order(self, ctx: _Ctx) -> list[Operation]:
        """Topological order of a block's ops: original positions kept where possible."""
        block, ops = ctx.block, ctx.placed
        index = {op: i for i, op in enumerate(ops)}
        preds: list[set[int]] = [set() for _ in ops]
        fwd_slots = self.fwd_slots
        position = index.get
        for i, op in enumerate(ops):
            ps = preds[i]
            for inner in (op.walk() if op.regions else (op,)):
                key = id(inner)
                for slot, v in enumerate(inner.operands):
                    if fwd_slots and (key, slot) in fwd_slots:
                        continue
                    d = v.owner if isinstance(v, OpResult) and v.owner.parent is block else _definer_in(v, block)
                    if d is not op:
                        j = position(d)  # type: ignore[arg-type]
                        if j is not None:
                            ps.add(j)
            p = self.eff_pred.get(op)
            if p is not None and p in index:
                preds[i].add(index[p])
        succs: list[list[int]] = [[] for _ in ops]
        count = [len(p) for p in preds]
        for i, ps in enumerate(preds):
            for p in ps:
                succs[p].append(i)
        prio = [float(self.low.position.get(op, -1)) if op not in self.new_ops else None for op in ops]
        heap = [(prio[i] if prio[i] is not None else -0.5, i) for i in range(len(ops)) if count[i] == 0]
        heapq.heapify(heap)
        done: list[int] = []
        seen = [False] * len(ops)
        while len(done) < len(ops):
            if not heap:  # a cycle through forward references (graph regions only)
                i = min((j for j in range(len(ops)) if not seen[j]), key=lambda j: prio[j] or 0.0)
                heap.append((prio[i] or 0.0, i))
                count[i] = 0
            p, i = heapq.heappop(heap)
            if seen[i]:
                continue
            seen[i] = True
            done.append(i)
            for s in succs[i]:
                count[s] -= 1
                if count[s] == 0 and not seen[s]:
                    if prio[s] is None:
                        prio[s] = max(prio[q] or 0.0 for q in preds[s]) + 0.5
                    heapq.heappush(heap, (prio[s], s))
        return [ops[i] for i in done]

    @functools.cached_property
    def eff_origins(self) -> dict[int, list[Operation]]:
        """Per class of an original op's ``EffOf``, that op (and any other whose effect it is)."""
        return self.origins("EffOf")

    def origins(self, ctor: str) -> dict[int, list[Operation]]:
        """Per class of a lowered ``Res`` or ``EffOf`` node, the original ops it is a value or effect of."""
        names = self.low.table.op_names
        code = names.index(ctor) if ctor in names else -1
        out: dict[int, list[Operation]] = defaultdict(list)
        t_ops, t_kids, t_ptr = self.t_ops, self.t_kids, self.t_ptr
        for t in (t for t, k in enumerate(t_ops) if k == code):
            out[self.tc[t]].append(self.low.ops[t_kids[t_ptr[t]]])
        return out

    def locations(self) -> None:
        """New ops get the fused location of the original ops whose values they compute, or
        whose effects they replace (a store replaced by a store computes no value)."""
        if not self.new_ops:
            return
        producers = self.origins("Res")
        for c, ops in self.eff_origins.items():
            producers[c] += ops
        for op, classes in self.new_ops.items():
            origins = [o for c in classes for o in producers.get(c, ())]
            op.loc = fuse([o.loc for o in dict.fromkeys(origins)])


class _ForwardRef(Value):
    """A placeholder operand for a use before its definition (resolved at the end)."""

    __slots__ = ("cls",)

    def __init__(self, type: Type, cls: int) -> None:
        super().__init__(type)
        self.cls = cls


def _definer_in(v: Value, block: Block) -> Operation | None:
    """The op of ``block`` that defines ``v`` or encloses its definition, if any."""
    op = v.owner if isinstance(v, OpResult) else (v.parent_block.parent_op if isinstance(v, BlockArgument) else None)
    while op is not None and op.parent is not block:
        op = op.parent_op
    return op


def _captures(op: Operation) -> list[Value]:
    """Values used inside ``op``'s regions and defined outside it (as the lowering lists them)."""
    inside = {id(o) for o in op.walk()}
    return list(dict.fromkeys(
        v for o in op.walk() if o is not op for v in o.operands
        if id(v.owner if isinstance(v, OpResult) else v.parent_block.parent_op) not in inside))


def _rebuild_uses(root: Operation, before: list[Operation]) -> None:
    """Recompute every use list the write-back touched (linear, instead of per-edit updates)."""
    after = [op for op in root.walk() if op is not root]
    members = {id(op) for op in before} | {id(op) for op in after}
    outside: dict[int, Value] = {}
    for op in dict.fromkeys(before + after):  # the reused ops are in both lists
        for v in op.operands:
            definer = v.owner if isinstance(v, OpResult) else v.parent_block.parent_op
            if definer is None or id(definer) not in members:
                outside[id(v)] = v
    for v in outside.values():
        v.uses = UseList(u for u in v.uses if id(u) not in members)
    for op in after:
        for r in op.results:
            r.uses.clear()
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    a.uses.clear()
    for region in root.regions:
        for block in region.blocks:
            for a in block.args:
                a.uses.clear()
    for op in after:
        for v in op.operands:
            v.uses.append(op)


def write_back(low: Lowered, g: EGraphArrays, base: int, choice: np.ndarray) -> WriteBackStats:
    """Rebuild the regions of ``low.root`` from the extracted ``choice`` (class → e-node).

    ``base`` is where the lowered table was loaded (``Loaded.base``). The root op keeps its
    identity; its regions are refilled. Ops no longer reachable are dropped.

    The cyclic garbage collector is paused meanwhile: the write-back allocates a few
    objects per op while the whole module is alive, so each collection rescans it (a
    third of the write-back's time at 30k ops). Cycles it leaves behind (dropped ops) are
    collected once the collector runs again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _write_back(low, g, base, choice)
    finally:
        if was_enabled:
            gc.enable()


def _write_back(low: Lowered, g: EGraphArrays, base: int, choice: np.ndarray) -> WriteBackStats:
    root = low.root
    before = [op for op in root.walk() if op is not root]
    w = _Writer(low, g, base, choice)
    regions: dict[int, Region] = {}
    for r, k in zip(low.root_nodes, low.root_region):
        regions.setdefault(k, w.region(w.tc[r], None, root, k))
    w.resolve_forward_refs()
    for ctx in w.ctxs:
        ctx.block.extend(ctx.placed + ([ctx.terminator] if ctx.terminator is not None else []))
    for ctx in w.ctxs:
        ordered = w.order(ctx)
        for op in ctx.block.ops:
            op.detach()
        ctx.block.extend(ordered + ([ctx.terminator] if ctx.terminator is not None else []))
    root.regions = tuple(regions[k] for k in range(len(regions)))
    for r in root.regions:
        r.parent = root
    w.locations()
    _rebuild_uses(root, before)
    w.stats.dropped = sum(1 for op in before if op not in w.used_ops)
    return w.stats
