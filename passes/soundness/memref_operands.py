"""What the instantiator draws for rules over memrefs (`memref.*`, `affine.load`/`store`).

A memref rule's variables are not all of one type, as arith and tf rules' are: the accessed
buffer is a memref (the instance's base type), an access's indices are `index` values (one per
dimension), a stored value has the element type, `memref.dim`'s index is a dimension number and
a cast's result is a type the cast may reach. Indices are `arith.constant`s drawn in a small
range, so that they fall inside the drawn buffers often enough to compare memory (an index out
of bounds is undefined, and the harness skips such inputs); access maps are identities.
"""

from __future__ import annotations

import math
from typing import Callable

from hypothesis import strategies as st

from egraft.ir.core import affine as AF
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.records.registry import REGISTRY
from egraft.patterns.rule import Rule

#: Element types of drawn buffers (a float and an integer: exact comparison covers both).
ELEMENTS = (T.f32, T.i32)
#: The operand groups of view-like ops (`memref.subview`, `reinterpret_cast`).
VIEW_LISTS = ("offsets", "sizes", "strides")
#: Ops whose operands and results `operand_kind`/`memref_results` describe.
MEMREF_PREFIXES = ("memref.", "affine.load", "affine.store")


def is_memref_rule(op_names: set[str]) -> bool:
    """Whether the instance's base type should be a memref."""
    return any(n.startswith(MEMREF_PREFIXES) for n in op_names)


def fixed_rank(rule: Rule) -> int | None:
    """The rank a rule's accesses spell out: the length of an `indices` group given as a list
    (`op("memref.load", m, [i, j])`), None when every such group is a variable (any rank)."""
    for pat in rule.source_ops():
        opdef = REGISTRY.lookup(pat.name)
        names = [o.name for o in opdef.operands] if opdef is not None else []
        for name, operand in zip(names, pat.operands):
            if name == "indices" and isinstance(operand, tuple):
                return len(operand)
    return None


@st.composite
def memref_types(draw: Callable, rank: int | None = None) -> T.MemRefType:
    """A ranked memref of rank `rank` (default: 1-2), each dimension static (1-3) or dynamic."""
    rank = draw(st.integers(1, 2)) if rank is None else rank
    shape = tuple(draw(st.sampled_from((T.DYNAMIC, 1, 2, 3))) for _ in range(rank))
    return T.MemRefType(shape, draw(st.sampled_from(ELEMENTS)))


def operand_kind(op_name: str, operand_name: str | None) -> str:
    """What an operand of a memref op holds: "indices" (one index per dimension of the
    accessed memref; "index" for one of a group given as a list), "dim" (a dimension number),
    "element" (a stored value) or "memref"."""
    if operand_name == "indices":
        return "indices"
    if op_name == "memref.reinterpret_cast" and operand_name in VIEW_LISTS:
        return "none"  # every offset, size and stride static (`reinterpret_statics`)
    if op_name == "memref.dim" and operand_name == "index":
        return "dim"
    if operand_name == "value":
        return "element"
    return "memref"


def view_shape(source: T.Type) -> tuple[int, ...]:
    """The static sizes a drawn `reinterpret_cast` gives its view: the source's, 1 where dynamic."""
    return tuple(1 if d == T.DYNAMIC else d for d in getattr(source, "shape", ()) or ())


def reinterpret_statics(source: T.Type) -> dict[str, A.Attribute]:
    """A `reinterpret_cast` of `source` as a row-major view at offset 0 (undefined where the drawn
    buffer is smaller): its static offsets, sizes and strides."""
    shape = view_shape(source)
    strides = tuple(int(math.prod(shape[k + 1:])) for k in range(len(shape)))
    return {"static_offsets": A.DenseArrayAttr(T.i64, (0,)), "static_sizes": A.DenseArrayAttr(T.i64, shape),
            "static_strides": A.DenseArrayAttr(T.i64, strides)}


def cast_target(draw: Callable, source: T.Type) -> T.Type:
    """A type `memref.cast` may reach from `source`: each static size kept or made dynamic,
    each dynamic size kept or made static (a size the buffer may not have: then undefined)."""
    if not isinstance(source, T.MemRefType):
        return source
    shape = tuple(draw(st.sampled_from((d, T.DYNAMIC))) if d != T.DYNAMIC
                  else draw(st.sampled_from((T.DYNAMIC, 1, 2))) for d in source.shape)
    return T.MemRefType(shape, source.element_type, source.layout, source.memory_space)


def memref_results(draw: Callable, op_name: str, first_memref: T.Type) -> list[T.Type]:
    """Result types of a memref op whose accessed memref has type `first_memref`."""
    if op_name in ("memref.load", "affine.load"):
        return [T.element_type(first_memref)]
    if op_name == "memref.dim":
        return [T.index]
    if op_name == "memref.cast":
        return [cast_target(draw, first_memref)]
    if op_name == "memref.reinterpret_cast":
        return [T.MemRefType(view_shape(first_memref), T.element_type(first_memref))]
    return []


def identity_map(rank: int) -> A.AffineMapAttr:
    """The access map of `affine.load/store` with one index per dimension."""
    return A.AffineMapAttr(AF.AffineMap(rank, 0, [AF.Dim(i) for i in range(rank)]))
