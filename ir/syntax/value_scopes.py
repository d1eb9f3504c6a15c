"""SSA names while parsing: which values a name stands for where, and forward references.

A region opens a scope; an op isolated from above (`func.func`, ...) opens
one that hides everything outside it.  A use before the definition (legal
in graph regions and across blocks) gets a placeholder value, replaced by
the real one when the name is defined; one still undefined when its
isolated scope closes is an error.
"""

from __future__ import annotations

from typing import Any, Sequence

from egraft.ir.core import types as T
from egraft.ir.core.operation import Block, BlockArgument, Operation, Value
from egraft.ir.syntax.location_parser import LocationParser


def _definition_loc(value: Value) -> Any:
    """Where `value` was defined in the source (a block argument's or its op's
    location), or None when that is not a source position."""
    loc = value.loc if isinstance(value, BlockArgument) else getattr(getattr(value, "owner", None), "loc", None)
    return loc if loc is not None and loc.file_line_col() is not None else None


class _Scope:
    """The SSA names a region defines (their values live in the parser's
    `_visible` table) and its block labels; `isolated` hides the scopes below it."""

    __slots__ = ("names", "isolated", "blocks", "forward_blocks")

    def __init__(self, isolated: bool) -> None:
        self.names: list[str] = []
        self.isolated = isolated
        self.blocks: dict[str, Block] = {}
        self.forward_blocks: dict[str, tuple[Block, int]] = {}


class _Placeholder(Operation):
    """The definer of a forward-referenced value, replaced once it is defined."""

    __slots__ = ()


class ValueScopes(LocationParser):
    """Binds SSA names to values scope by scope and resolves operand references."""

    def __init__(self, text: str, filename: str = "<stdin>", line_offset: int = 0) -> None:
        super().__init__(text, filename, line_offset)
        self.scopes: list[_Scope] = []
        # Every visible SSA name -> (index of its scope, its values, the entry it
        # shadows).  One table instead of a dictionary per scope makes a lookup
        # O(1) however deep the regions nest (a scope walk made 10k nested
        # loops quadratic); `_floor` is the index of the innermost isolated scope.
        self._visible: dict[str, tuple[int, tuple[Value, ...], Any]] = {}
        self._floors: list[int] = []
        self._floor = 0
        self.forward_refs: list[dict[str, tuple[list[Value], int]]] = []

    def lookup_value(self, name: str) -> tuple[Value, ...] | None:
        entry = self._visible.get(name)
        if entry is not None and entry[0] >= self._floor:
            return entry[1]
        return None

    def resolve_operand(self, ref: tuple[str, int, int], type: T.Type) -> Value:
        name, idx, pos = ref
        vals = self.lookup_value(name)
        if vals is None:
            return self._forward_ref(name, idx, pos, type)
        if idx < 0:
            if len(vals) != 1:
                if len(vals) == 0:
                    raise self.error(f"use of undeclared SSA value name", pos)
                return self._check_type(vals[0], type, name, pos)
            return self._check_type(vals[0], type, name, pos)
        if idx >= len(vals):
            raise self.error(f"reference to invalid result number", pos)
        return self._check_type(vals[idx], type, name, pos)

    def _check_type(self, value: Value, type: T.Type, name: str, pos: int) -> Value:
        if value.type is not type:
            err = self.error(f"use of value '%{name}' expects different type than prior uses: "
                             f"'{type}' vs '{value.type}'", pos)
            # MLIR notes where the value was defined (or first used), as "prior use here".
            prior = _definition_loc(value)
            if prior is not None:
                err.diagnostics[0].attach_note("prior use here", prior)
            raise err
        return value

    def _forward_ref(self, name: str, idx: int, pos: int, type: T.Type) -> Value:
        refs = self.forward_refs[-1]
        entry = refs.get(name)
        if entry is None:
            entry = refs[name] = ([], pos)
        slots = entry[0]
        i = max(idx, 0)
        while len(slots) <= i:
            slots.append(None)  # type: ignore[arg-type]
        if slots[i] is None:
            slots[i] = _Placeholder("builtin.unrealized_forward_ref", (), [type]).results[0]
        return self._check_type(slots[i], type, name, pos)

    def resolve_operands(self, refs: Sequence[tuple[str, int, int]], types: Sequence[T.Type],
                         pos: int | None = None) -> list[Value]:
        if len(refs) != len(types):
            raise self.error(f"{len(refs)} operands present, but expected {len(types)}",
                             pos if pos is not None else (refs[0][2] if refs else None))
        resolve = self.resolve_operand
        return [resolve(r, t) for r, t in zip(refs, types)]

    def define_values(self, name: str, values: Sequence[Value], pos: int) -> None:
        index = len(self.scopes) - 1
        shadowed = self._visible.get(name)
        if shadowed is not None and shadowed[0] == index:
            err = self.error(f"redefinition of SSA value '%{name}'", pos)
            prior = _definition_loc(shadowed[1][0]) if shadowed[1] else None
            if prior is not None:  # MLIR's note, at the first definition
                err.diagnostics[0].attach_note("previously defined here", prior)
            raise err
        self._visible[name] = (index, tuple(values), shadowed)
        self.scopes[index].names.append(name)
        refs = self.forward_refs[-1]
        if refs and name in refs:
            slots, _ = refs.pop(name)
            for i, placeholder in enumerate(slots):
                if placeholder is None:
                    continue
                if i >= len(values):
                    raise self.error(f"reference to invalid result number", pos)
                if values[i].type is not placeholder.type:
                    raise self.error(
                        f"definition of SSA value '%{name}#{i}' has type '{values[i].type}' but was "
                        f"previously used with type '{placeholder.type}'", pos)
                placeholder.replace_all_uses_with(values[i])

    def push_scope(self, isolated: bool) -> None:
        self.scopes.append(_Scope(isolated))
        if isolated:
            self._floors.append(self._floor)
            self._floor = len(self.scopes) - 1
        if isolated or not self.forward_refs:
            self.forward_refs.append({})

    def pop_scope(self) -> None:
        scope = self.scopes.pop()
        visible = self._visible
        for name in scope.names:
            shadowed = visible[name][2]
            if shadowed is None:
                del visible[name]
            else:
                visible[name] = shadowed
        if scope.isolated:
            self._floor = self._floors.pop()
        for name, (block, pos) in scope.forward_blocks.items():
            raise self.error(f"reference to an undefined block", pos)
        if scope.isolated or not self.scopes:
            refs = self.forward_refs.pop()
            for name, (_, pos) in refs.items():
                raise self.error(f"use of undeclared SSA value name", pos)
