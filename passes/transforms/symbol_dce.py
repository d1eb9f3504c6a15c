"""`symbol-dce`: erase private symbols nothing live refers to, as MLIR's SymbolDCE does.

A symbol is live when it is public in a visible symbol table (the top op is
visible unless it is itself a private symbol), when its op cannot be dropped
(only symbol ops are candidates), or when a live op refers to it.  References
are SymbolRefAttrs anywhere in an op's attributes and properties (nested in
arrays and dictionaries too), resolved through the enclosing symbol tables;
`@name` spelled inside a dialect attribute kept as text (`#tf_type.func<@f,
{}>`) counts as a reference to the nearest `@name`, so tfg's function
attributes keep their callees alive.  Liveness spreads through the ops nested
in a live op, so a live function keeps alive what its body references.
"""

from __future__ import annotations

import re
from typing import Iterator

import attrs

from egraft.ir import Operation, SymbolTable
from egraft.ir.core import attributes as A
from egraft.ir.erasure import erase_all
from egraft.ir.core.traits import Traits

from egraft.passes.manager.registry import Pass, PassContext, register_pass

_TEXT_SYMBOL = re.compile(r'@([A-Za-z_][\w$.\-]*|"(?:[^"\\]|\\.)*")')


def is_symbol(op: Operation) -> bool:
    return op.opdef is not None and op.opdef.has_trait(Traits.Symbol) and op.attr("sym_name") is not None


def is_symbol_table(op: Operation) -> bool:
    return op.opdef is not None and op.opdef.has_trait(Traits.SymbolTable)


def is_private(op: Operation) -> bool:
    vis = op.attr("sym_visibility")
    return vis is not None and getattr(vis, "value", None) in ("private", "nested")


def symbol_refs(op: Operation) -> Iterator[A.SymbolRefAttr]:
    """Every symbol reference in the op's own attributes and properties."""
    stack: list[object] = [*op.attributes.values(), *op.properties.values()]
    while stack:
        a = stack.pop()
        if isinstance(a, A.SymbolRefAttr):
            yield a
        elif isinstance(a, A.ArrayAttr):
            stack.extend(a.value)
        elif isinstance(a, A.DictionaryAttr):
            stack.extend(v for _, v in a.entries)
        elif isinstance(a, A.DialectAttr) and "@" in a.body:
            for m in _TEXT_SYMBOL.finditer(a.body):
                name = m.group(1)
                yield A.SymbolRefAttr(name.strip('"'))


def live_symbols(top: Operation) -> set[Operation]:
    """Symbol ops under `top` that must be kept."""
    live: set[Operation] = set()
    worklist: list[Operation] = []

    def seed(table_op: Operation, hidden: bool) -> None:
        for region in table_op.regions:
            for op in region.ops():
                if is_symbol(op) and (hidden or is_private(op)):
                    continue
                live.add(op)
                worklist.append(op)
                if is_symbol_table(op):
                    seed(op, hidden or (is_symbol(op) and is_private(op)))

    seed(top, is_symbol(top) and is_private(top))
    tables: dict[Operation, SymbolTable] = {}
    # An op seeded or found live is walked from its own worklist entry: walking
    # into it again from an enclosing op made n nested modules O(n^2).
    queued = set(worklist)
    while worklist:
        op = worklist.pop()
        # A nested symbol's body counts only once the symbol itself is live.
        for nested in op.walk(skip=lambda o: o in queued or (is_symbol(o) and o not in live)):
            if nested is not op and is_symbol(nested) and nested not in live:
                continue
            for ref in symbol_refs(nested):
                target = _resolve(nested, ref, tables)
                if target is not None and target not in live:
                    live.add(target)
                    worklist.append(target)
                    queued.add(target)
    return live


def _resolve(user: Operation, ref: A.SymbolRefAttr, tables: dict[Operation, SymbolTable]) -> Operation | None:
    table_op = user if is_symbol_table(user) else SymbolTable.nearest_symbol_table(user)
    while table_op is not None:
        table = tables.get(table_op)
        if table is None:
            table = tables[table_op] = SymbolTable(table_op)
        found = table.lookup(ref.root)
        if found is not None:
            for name in ref.nested:
                found = SymbolTable(found).lookup(name) if found is not None else None
            return found
        table_op = SymbolTable.nearest_symbol_table(table_op)
    return None


@register_pass
@attrs.define
class SymbolDCE(Pass):
    """MLIR's SymbolDCE: erases private symbols no live op refers to (and public ones in
    hidden symbol tables)."""

    NAME = "symbol-dce"
    SUMMARY = "Eliminate dead symbols"

    def run(self, op: Operation, ctx: PassContext) -> None:
        live = live_symbols(op)
        dead = []
        stack = [op]
        while stack:
            table_op = stack.pop()
            for region in table_op.regions:
                for child in region.ops():
                    if is_symbol(child) and child not in live:
                        dead.append(child)
                    elif is_symbol_table(child):
                        stack.append(child)
        erase_all(dead)
