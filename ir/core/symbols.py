"""Symbol tables: the ops a `sym_name` names, and resolving references to them.

A symbol table op (the SymbolTable trait: `builtin.module`, ...) defines the
symbols of the ops directly in its regions; a reference `@a::@b` resolves from
the nearest enclosing table outwards, as in MLIR.
"""

from __future__ import annotations

from egraft.ir.core.attributes import Attribute
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Traits


class SymbolTable:
    """Symbols (ops with a `sym_name`) defined directly in an op's regions."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.symbols: dict[str, Operation] = {}
        for region in op.regions:
            for child in region.ops():
                name = child.attr("sym_name")
                if name is not None:
                    self.symbols[name.value] = child  # type: ignore[attr-defined]

    def lookup(self, name: str) -> Operation | None:
        return self.symbols.get(name)

    @staticmethod
    def nearest_symbol_table(op: Operation) -> Operation | None:
        cur = op.parent_op
        while cur is not None and not cur.has_trait(Traits.SymbolTable):
            cur = cur.parent_op
        return cur

    @classmethod
    def lookup_from(cls, op: Operation, ref: Attribute) -> Operation | None:
        """Resolve a symbol reference (flat or nested) seen from `op`."""
        table_op = op if op.has_trait(Traits.SymbolTable) else cls.nearest_symbol_table(op)
        while table_op is not None:
            found = cls(table_op).lookup(ref.root)  # type: ignore[attr-defined]
            if found is not None:
                for name in ref.nested:  # type: ignore[attr-defined]
                    found = cls(found).lookup(name)
                    if found is None:
                        return None
                return found
            table_op = cls.nearest_symbol_table(table_op)
        return None
