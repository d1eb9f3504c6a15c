"""The IR structure: values, operations, blocks and regions.

The layout follows MLIR: an operation has operands (values), results, two
attribute dictionaries (inherent `properties` and discardable `attributes`),
regions holding blocks, successor blocks and a location.  Blocks keep their
operations in a doubly linked list so that inserting or erasing one op is
O(1) even in a 100k-op block, and every value keeps a use list (one entry per
operand slot that reads it) so that replace-all-uses is proportional to the
number of uses.

Everything is `__slots__`-based: a parsed op costs a few hundred bytes.
"""

from __future__ import annotations

from typing import AbstractSet, Callable, Iterable, Iterator, Protocol, Sequence

from egraft.ir.core.attributes import Attribute
from egraft.ir.core.location import UNKNOWN, Location
from egraft.ir.core.traits import Trait
from egraft.ir.core.types import Type
from egraft.ir.core.uses import UseList


class IRError(Exception):
    """Misuse of the mutation API (an invariant the caller broke)."""


# ---------------------------------------------------------------- op records


class OpRecord(Protocol):
    """What the core asks of an op's record.

    The records layer (`egraft.ir.records.opdef.OpDef`) declares ops; the core
    only needs these few facts, so it names them here instead of importing the
    layer above it."""

    @property
    def cls(self) -> type["Operation"]: ...
    @property
    def attr_names(self) -> AbstractSet[str]: ...
    @property
    def trait_kinds(self) -> AbstractSet[str]: ...

    def split_attributes(self, attributes: dict[str, Attribute],
                         properties: dict[str, Attribute] | None) -> tuple[dict, dict]: ...


def _no_records(name: str) -> OpRecord | None:
    return None


_lookup_record: Callable[[str], OpRecord | None] = _no_records


def set_record_lookup(lookup: Callable[[str], OpRecord | None]) -> None:
    """Install how `Operation.create` finds an op's record by name.  The registry
    (`egraft.ir.records.registry`) installs its lookup when it is created; until
    then every op is a plain `Operation`."""
    global _lookup_record
    _lookup_record = lookup


# ---------------------------------------------------------------- values

def _nested_ops(op: "Operation") -> list["Operation"]:
    """The ops directly inside `op`'s regions, in order (followed through the
    blocks' links: `list.extend(block)` would count the block first)."""
    nested: list[Operation] = []
    for region in op.regions:
        for block in region.blocks:
            o = block.first
            while o is not None:
                nested.append(o)
                o = o.next
    return nested


class Value:
    """An SSA value.  `uses` holds the operations reading it, once per operand slot (a
    `UseList`: adding or removing one use is O(1) however many the value has)."""

    __slots__ = ("type", "uses")

    def __init__(self, type: Type) -> None:
        self.type = type
        self.uses = UseList()

    @property
    def owner_op(self) -> "Operation | None":
        """The defining operation (None for block arguments)."""
        return None

    @property
    def parent_block(self) -> "Block | None":
        raise NotImplementedError

    @property
    def users(self) -> list["Operation"]:
        """Distinct users in first-use order."""
        return self.uses.users()

    def has_one_use(self) -> bool:
        return len(self.uses) == 1

    def replace_all_uses_with(self, new: "Value") -> None:
        if new is self:
            return
        for user in self.users:
            ops = user.operands
            for i, v in enumerate(ops):
                if v is self:
                    ops[i] = new
                    new.uses.append(user)
        self.uses.clear()

    def replace_uses_where(self, new: "Value", keep: Callable[["Operation"], bool]) -> None:
        """Replace the uses whose user does not satisfy `keep`."""
        for user in self.users:
            if keep(user):
                continue
            ops = user.operands
            for i, v in enumerate(ops):
                if v is self:
                    ops[i] = new
                    new.uses.append(user)
                    self.uses.remove(user)


class OpResult(Value):
    __slots__ = ("owner", "index")

    def __init__(self, type: Type, owner: "Operation", index: int) -> None:
        self.type = type
        self.uses = UseList()
        self.owner = owner
        self.index = index

    @property
    def owner_op(self) -> "Operation":
        return self.owner

    @property
    def parent_block(self) -> "Block | None":
        return self.owner.parent

    def __repr__(self) -> str:
        return f"<OpResult #{self.index} of {self.owner.name}: {self.type}>"


class BlockArgument(Value):
    __slots__ = ("owner", "index", "loc")

    def __init__(self, type: Type, owner: "Block", index: int, loc: Location = UNKNOWN) -> None:
        self.type = type
        self.uses = UseList()
        self.owner = owner
        self.index = index
        self.loc = loc

    @property
    def parent_block(self) -> "Block":
        return self.owner

    def __repr__(self) -> str:
        return f"<BlockArgument #{self.index}: {self.type}>"


# ---------------------------------------------------------------- operations


class Operation:
    """A generic operation.  Registered ops are instances of a subclass made
    from their record (`OpDef.cls`), which adds named accessors."""

    __slots__ = ("name", "operands", "results", "attributes", "properties",
                 "regions", "successors", "loc", "parent", "prev", "next", "__weakref__")

    opdef: OpRecord | None = None  # set on the subclasses made from records

    def __init__(self, name: str, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
                 attributes: dict[str, Attribute] | None = None,
                 properties: dict[str, Attribute] | None = None,
                 regions: int | Sequence["Region"] = 0, successors: Sequence["Block"] = (),
                 loc: Location = UNKNOWN) -> None:
        self.name = name
        self.operands = list(operands)
        for v in self.operands:
            v.uses.append(self)
        self.results = tuple(OpResult(t, self, i) for i, t in enumerate(result_types))
        self.attributes = attributes if attributes is not None else {}
        self.properties = properties if properties is not None else {}
        if isinstance(regions, int):
            self.regions = tuple(Region(self) for _ in range(regions))
        else:
            self.regions = tuple(regions)
            for r in self.regions:
                r.parent = self
        self.successors = list(successors)
        self.loc = loc
        self.parent: Block | None = None
        self.prev: Operation | None = None
        self.next: Operation | None = None

    @staticmethod
    def create(name: str, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
               attributes: dict[str, Attribute] | None = None,
               properties: dict[str, Attribute] | None = None,
               regions: int | Sequence["Region"] = 0, successors: Sequence["Block"] = (),
               loc: Location = UNKNOWN) -> "Operation":
        """Create an op of the class its registered record gives (if any).
        Inherent attributes given in `attributes` move to `properties`."""
        opdef = _lookup_record(name)
        cls = opdef.cls if opdef is not None else Operation
        if opdef is not None and attributes:
            attributes, properties = opdef.split_attributes(attributes, properties)
        return cls(name, operands, result_types, attributes, properties, regions, successors, loc)

    # ------------------------------------------------------------ queries

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def result(self) -> OpResult:
        """The single result (an error if there is not exactly one)."""
        if len(self.results) != 1:
            raise IRError(f"'{self.name}' has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def result_types(self) -> list[Type]:
        return [r.type for r in self.results]

    @property
    def operand_types(self) -> list[Type]:
        return [v.type for v in self.operands]

    @property
    def parent_op(self) -> "Operation | None":
        block = self.parent
        if block is None or block.parent is None:
            return None
        return block.parent.parent

    @property
    def parent_region(self) -> "Region | None":
        return self.parent.parent if self.parent is not None else None

    def attr(self, name: str, default: Attribute | None = None) -> Attribute | None:
        """An inherent or discardable attribute by name."""
        value = self.properties.get(name)
        if value is None:
            value = self.attributes.get(name, default)
        return value

    def set_attr(self, name: str, value: Attribute) -> None:
        """Set an attribute; inherent ones (declared by the record) go to properties."""
        if self.opdef is not None and name in self.opdef.attr_names:
            self.properties[name] = value
        else:
            self.attributes[name] = value

    def remove_attr(self, name: str) -> Attribute | None:
        value = self.properties.pop(name, None)
        return value if value is not None else self.attributes.pop(name, None)

    def all_attributes(self) -> dict[str, Attribute]:
        """Properties and attributes merged, as the custom form prints them."""
        if not self.properties:
            return self.attributes
        merged = dict(self.properties)
        merged.update(self.attributes)
        return merged

    def has_trait(self, trait: Trait) -> bool:
        """Whether the op's record lists the trait (with any parameter), as `OpDef.has_trait`
        answers (inlined: walks ask this of every op)."""
        opdef = self.opdef
        return opdef is not None and trait.kind in opdef.trait_kinds

    def is_ancestor(self, other: "Operation") -> bool:
        """True if `other` is this op or nested (at any depth) inside it."""
        op: Operation | None = other
        while op is not None:
            if op is self:
                return True
            op = op.parent_op
        return False

    def is_before_in_block(self, other: "Operation") -> bool:
        block = self.parent
        if block is None or other.parent is not block:
            raise IRError("ops are not in the same block")
        order = block.order()
        return order[self] < order[other]

    # ------------------------------------------------------------ walking

    def walk(self, skip: Callable[["Operation"], bool] | None = None) -> Iterator["Operation"]:
        """Pre-order walk of this op and every op nested in it.

        Ops for which `skip` returns True are yielded but not descended into
        (the graybox RFC's walkAffine stops at nested grayboxes this way)."""
        stack: list[Operation] = [self]
        while stack:
            op = stack.pop()
            yield op
            if op.regions and (skip is None or op is self or not skip(op)):
                stack.extend(reversed(_nested_ops(op)))

    def walk_post_order(self) -> Iterator["Operation"]:
        """Every op nested in this one, each after the ops nested in it, then
        this op (with an explicit stack: nested generators would recurse once
        per level of nesting)."""
        stack: list[tuple[Operation, bool]] = [(self, False)]
        while stack:
            op, expanded = stack.pop()
            if expanded or not op.regions:
                yield op
                continue
            stack.append((op, True))
            stack.extend((nested, False) for nested in reversed(_nested_ops(op)))

    # ------------------------------------------------------------ mutation

    def set_operand(self, index: int, value: Value) -> None:
        old = self.operands[index]
        if old is value:
            return
        old.uses.remove(self)
        self.operands[index] = value
        value.uses.append(self)

    def set_operands(self, values: Sequence[Value]) -> None:
        values = list(values)
        for v in self.operands:
            v.uses.remove(self)
        self.operands = values
        for v in self.operands:
            v.uses.append(self)

    def drop_all_uses_of_operands(self) -> None:
        """Unlink this op (and everything nested) from the use lists of its operands."""
        for op in self.walk():
            for v in op.operands:
                v.uses.remove(op)
            op.operands = []

    def replace_all_uses_with(self, values: Sequence[Value] | "Operation") -> None:
        new = values.results if isinstance(values, Operation) else values
        if len(new) != len(self.results):
            raise IRError(f"replacing {len(self.results)} results of '{self.name}' with {len(new)} values")
        for old, value in zip(self.results, new):
            old.replace_all_uses_with(value)

    def detach(self) -> "Operation":
        """Unlink from the parent block (the op stays valid, uses intact)."""
        block = self.parent
        if block is not None:
            block._unlink(self)
        return self

    def erase(self) -> None:
        """Detach and drop operand uses.  The results must be unused."""
        for r in self.results:
            if r.uses:
                raise IRError(f"erasing '{self.name}' whose result #{r.index} still has uses")
        self.detach()
        self.drop_all_uses_of_operands()

    def move_before(self, anchor: "Operation") -> None:
        self.detach()
        anchor.parent.insert_before(anchor, self)  # type: ignore[union-attr]

    def move_after(self, anchor: "Operation") -> None:
        self.detach()
        anchor.parent.insert_after(anchor, self)  # type: ignore[union-attr]

    def clone(self, mapping: dict[Value, Value] | None = None) -> "Operation":
        """Deep copy; operands found in `mapping` are remapped, and the
        mapping is extended with the clone's results and block arguments."""
        mapping = {} if mapping is None else mapping
        operands = [mapping.get(v, v) for v in self.operands]
        new = type(self)(self.name, operands, [r.type for r in self.results], dict(self.attributes),
                         dict(self.properties), len(self.regions), [], self.loc)
        for old_r, new_r in zip(self.results, new.results):
            mapping[old_r] = new_r
        block_map: dict[Block, Block] = {}
        for old_region, new_region in zip(self.regions, new.regions):
            old_region.clone_into(new_region, mapping, block_map)
        new.successors = [block_map.get(b, b) for b in self.successors]
        return new

    def __repr__(self) -> str:
        return f"<Operation {self.name}>"


# ---------------------------------------------------------------- blocks


class Block:
    """A list of operations with typed arguments."""

    __slots__ = ("args", "first", "last", "parent", "_order", "__weakref__")

    def __init__(self, arg_types: Iterable[Type] = (), parent: "Region | None" = None) -> None:
        self.args: list[BlockArgument] = [BlockArgument(t, self, i) for i, t in enumerate(arg_types)]
        self.first: Operation | None = None
        self.last: Operation | None = None
        self.parent = parent
        self._order: dict[Operation, int] | None = None

    def __iter__(self) -> Iterator[Operation]:
        op = self.first
        while op is not None:
            nxt = op.next
            yield op
            op = nxt

    def __reversed__(self) -> Iterator[Operation]:
        op = self.last
        while op is not None:
            prv = op.prev
            yield op
            op = prv

    @property
    def ops(self) -> list[Operation]:
        """A snapshot list of the ops (safe to mutate the block while iterating)."""
        return list(self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @property
    def is_empty(self) -> bool:
        return self.first is None

    @property
    def terminator(self) -> Operation | None:
        return self.last

    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent if self.parent is not None else None

    def order(self) -> dict[Operation, int]:
        """Position of each op (cached until the block changes)."""
        if self._order is None:
            self._order = {op: i for i, op in enumerate(self)}
        return self._order

    def add_argument(self, type: Type, loc: Location = UNKNOWN) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.args), loc)
        self.args.append(arg)
        return arg

    def erase_argument(self, index: int) -> None:
        arg = self.args.pop(index)
        if arg.uses:
            raise IRError(f"erasing block argument #{index} that still has uses")
        for i, a in enumerate(self.args):
            a.index = i

    # ------------------------------------------------------------ list edits

    def append(self, op: Operation) -> Operation:
        self._link(op, self.last, None)
        return op

    def extend(self, ops: Iterable[Operation]) -> None:
        """Append many ops (the parser's bulk path: one link per op, no checks)."""
        last = self.last
        for op in ops:
            op.parent = self
            op.prev = last
            op.next = None
            if last is None:
                self.first = op
            else:
                last.next = op
            last = op
        self.last = last
        self._order = None

    def prepend(self, op: Operation) -> Operation:
        self._link(op, None, self.first)
        return op

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        self._link(op, anchor.prev, anchor)
        return op

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        self._link(op, anchor, anchor.next)
        return op

    def _link(self, op: Operation, prev: Operation | None, nxt: Operation | None) -> None:
        if op.parent is not None:
            raise IRError(f"'{op.name}' is already in a block; detach it first")
        op.parent = self
        op.prev = prev
        op.next = nxt
        if prev is None:
            self.first = op
        else:
            prev.next = op
        if nxt is None:
            self.last = op
        else:
            nxt.prev = op
        self._order = None

    def _unlink(self, op: Operation) -> None:
        if op.prev is None:
            self.first = op.next
        else:
            op.prev.next = op.next
        if op.next is None:
            self.last = op.prev
        else:
            op.next.prev = op.prev
        op.parent = op.prev = op.next = None
        self._order = None

    def __repr__(self) -> str:
        return f"<Block with {len(self.args)} args>"


# ---------------------------------------------------------------- regions


class Region:
    __slots__ = ("blocks", "parent", "__weakref__")

    def __init__(self, parent: Operation | None = None, blocks: Iterable[Block] = ()) -> None:
        self.parent = parent
        self.blocks: list[Block] = []
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block | None = None) -> Block:
        block = block if block is not None else Block()
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def entry(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    @property
    def is_empty(self) -> bool:
        return not self.blocks

    def ops(self) -> Iterator[Operation]:
        for block in self.blocks:
            yield from block

    def is_ancestor_of(self, op: Operation) -> bool:
        """True if `op` is (transitively) inside this region."""
        region = op.parent_region
        while region is not None:
            if region is self:
                return True
            parent = region.parent
            region = parent.parent_region if parent is not None else None
        return False

    def clone_into(self, dest: "Region", mapping: dict[Value, Value],
                   block_map: dict[Block, Block] | None = None) -> None:
        block_map = {} if block_map is None else block_map
        for block in self.blocks:
            new_block = Block([a.type for a in block.args])
            for old_a, new_a in zip(block.args, new_block.args):
                new_a.loc = old_a.loc
                mapping[old_a] = new_a
            block_map[block] = new_block
            dest.add_block(new_block)
        for block in self.blocks:
            new_block = block_map[block]
            for op in block:
                new_block.append(op.clone(mapping))
        # Successors may point forward: fix them once every block exists.
        for new_block in (block_map[b] for b in self.blocks):
            for op in new_block:
                op.successors = [block_map.get(b, b) for b in op.successors]
