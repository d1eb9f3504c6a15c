"""Creating ops at an insertion point, as MLIR's OpBuilder does."""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core.attributes import Attribute
from egraft.ir.core.location import UNKNOWN, Location
from egraft.ir.core.operation import Block, Operation, Region, Value
from egraft.ir.core.types import Type


class Builder:
    """Creates ops at an insertion point (the end of a block, or before an op)."""

    __slots__ = ("block", "before")

    def __init__(self, block: Block, before: Operation | None = None) -> None:
        self.block = block
        self.before = before

    @classmethod
    def at_end(cls, block: Block) -> "Builder":
        return cls(block)

    @classmethod
    def before_op(cls, op: Operation) -> "Builder":
        return cls(op.parent, op)  # type: ignore[arg-type]

    @classmethod
    def after_op(cls, op: Operation) -> "Builder":
        return cls(op.parent, op.next)  # type: ignore[arg-type]

    def insert(self, op: Operation) -> Operation:
        if self.before is None:
            self.block.append(op)
        else:
            self.block.insert_before(self.before, op)
        return op

    def create(self, name: str, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
               attributes: dict[str, Attribute] | None = None,
               properties: dict[str, Attribute] | None = None,
               regions: int | Sequence[Region] = 0, successors: Sequence[Block] = (),
               loc: Location = UNKNOWN) -> Operation:
        return self.insert(Operation.create(name, operands, result_types, attributes, properties,
                                            regions, successors, loc))
