"""Term tables: the flat, IR-agnostic input and output format of the rewrite engine.

A term table is a DAG of nodes stored column-wise (operator code, children in CSR
form, optional literal payload) so that 100k-node graphs cost a few arrays rather
than 100k Python objects. Nodes may only point at earlier nodes, which makes every
table topologically ordered by construction and lets loaders and extractors walk it
in one pass without recursion.

Every operator has a declared signature (sorts of its children and of its result,
and the kind of payload it carries) so that both the egglog declarations and rule
type-checks can be derived from the same record.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

PayloadKind = Literal["i64", "String", "f64"]
Payload = int | str | float
PAYLOAD_TYPES: dict[str, tuple[type, ...]] = {"i64": (int,), "String": (str,), "f64": (float, int)}
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class OpSig:
    """Signature of one operator.

    ``children`` lists the sort of each child; a ``variadic`` operator has exactly one
    entry there, the sort shared by any number of children. ``payload`` is the kind of
    literal the node carries (for constants, names, attribute values), or None.
    """

    name: str
    children: tuple[str, ...] = ()
    result: str = "Term"
    payload: PayloadKind | None = None
    variadic: bool = False

    def __post_init__(self) -> None:
        if self.variadic and len(self.children) != 1:
            raise ValueError(f"variadic op {self.name!r} needs exactly one child sort")
        if self.payload is not None and self.payload not in PAYLOAD_TYPES:
            raise ValueError(f"op {self.name!r}: unknown payload kind {self.payload!r}")

    def child_sorts(self, arity: int) -> tuple[str, ...]:
        """Sorts of the children of a node with ``arity`` children; raises on a bad arity."""
        if self.variadic:
            return self.children * arity
        if arity != len(self.children):
            raise ValueError(f"op {self.name!r} takes {len(self.children)} children, got {arity}")
        return self.children


class Schema:
    """The sorts and operator signatures shared by a term table, its rules and its e-graph."""

    def __init__(self, sorts: Iterable[str] = ("Term",), ops: Iterable[OpSig] = ()) -> None:
        self.sorts: tuple[str, ...] = tuple(sorts)
        self.ops: dict[str, OpSig] = {}
        for sig in ops:
            self.add(sig)

    def add(self, sig: OpSig) -> OpSig:
        """Declare an operator; re-declaring the same signature is a no-op."""
        old = self.ops.get(sig.name)
        if old is not None and old != sig:
            raise ValueError(f"op {sig.name!r} redeclared with a different signature")
        for sort in (*sig.children, sig.result):
            if sort not in self.sorts:
                raise ValueError(f"op {sig.name!r} uses undeclared sort {sort!r}")
        self.ops[sig.name] = sig
        return sig

    def sig(self, op: str) -> OpSig:
        try:
            return self.ops[op]
        except KeyError:
            raise KeyError(f"operator {op!r} is not declared in the schema") from None

    def check_payload(self, op: str, payload: Payload | None) -> None:
        """Raise unless ``payload`` fits the op's declared payload kind (and i64 range)."""
        kind = self.sig(op).payload
        if kind is None:
            if payload is not None:
                raise ValueError(f"op {op!r} takes no payload, got {payload!r}")
            return
        if isinstance(payload, bool) or not isinstance(payload, PAYLOAD_TYPES[kind]):
            raise TypeError(f"op {op!r} needs a {kind} payload, got {payload!r}")
        if kind == "i64" and not I64_MIN <= payload <= I64_MAX:  # type: ignore[operator]
            raise OverflowError(f"op {op!r}: payload {payload} does not fit in i64")


class TermTable:
    """A topologically ordered term DAG with column storage.

    Node ``i`` has operator ``self.op_names[self.ops[i]]``, children
    ``self.children[self.child_ptr[i]:self.child_ptr[i + 1]]`` (all ``< i``) and payload
    ``self.payloads[i]`` (None when the op has none). ``roots`` are the nodes whose values
    the client needs back; extraction keeps exactly what they reach.
    """

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.op_names: list[str] = []
        self._op_codes: dict[str, int] = {}
        self.ops = array("i")
        self.child_ptr = array("q", [0])
        self.children = array("q")
        self.payloads: list[Payload | None] = []
        self.roots: list[int] = []

    def __len__(self) -> int:
        return len(self.ops)

    @classmethod
    def from_columns(cls, schema: Schema, op_names: list[str], ops: Iterable[int],
                     arity: Iterable[int], children: Iterable[int],
                     payloads: list[Payload | None], roots: Iterable[int] = ()) -> "TermTable":
        """A table from columns a client built in bulk (no per-node checks: for lowerings
        that build 100k-node tables; ``check()`` verifies the same invariants vectorised)."""
        table = cls(schema)
        for name in op_names:
            table.op_code(name)
        table.ops = array("i", ops)
        table.children = array("q", children)
        counts = np.fromiter(arity, np.int64)
        table.child_ptr = array("q", [0]) + array("q", np.cumsum(counts).tolist())
        table.payloads = payloads
        table.roots = list(roots)
        return table

    def check(self) -> None:
        """Raise unless children point at earlier nodes of the declared sorts (vectorised)."""
        ops, ptr, kids = self.arrays()
        owner = np.repeat(np.arange(len(ops)), np.diff(ptr))
        if len(kids) and ((kids < 0) | (kids >= owner)).any():
            raise ValueError("a child does not point at an earlier node")
        result = np.array([self.schema.sorts.index(self.schema.ops[n].result) for n in self.op_names]
                          or [0])[ops] if len(ops) else np.zeros(0, np.int64)
        for code, name in enumerate(self.op_names):
            sig = self.schema.ops[name]
            members = np.flatnonzero(ops == code)
            for k in np.unique(np.diff(ptr)[members]):
                sorts = [self.schema.sorts.index(s) for s in sig.child_sorts(int(k))]
                rows = members[np.diff(ptr)[members] == k]
                got = result[kids[ptr[rows][:, None] + np.arange(int(k))]] if k else None
                if k and (got != np.array(sorts)).any():
                    raise TypeError(f"{name}: a child has the wrong sort")


    def op_code(self, op: str) -> int:
        """Dense code of ``op`` in this table, allocating one on first use."""
        code = self._op_codes.get(op)
        if code is None:
            self.schema.sig(op)
            code = self._op_codes[op] = len(self.op_names)
            self.op_names.append(op)
        return code

    def add(self, op: str, children: Sequence[int] = (), payload: Payload | None = None) -> int:
        """Append a node and return its id; children must already exist and have the right sorts."""
        sig = self.schema.sig(op)
        sorts = sig.child_sorts(len(children))
        n = len(self.ops)
        for child, sort in zip(children, sorts):
            if not 0 <= child < n:
                raise IndexError(f"child {child} of new node {n} ({op}) does not exist yet")
            if self.sort_of(child) != sort:
                raise TypeError(f"child {child} of {op} has sort {self.sort_of(child)}, expected {sort}")
        self.schema.check_payload(op, payload)
        if sig.payload == "f64" and payload is not None:
            payload = float(payload)
        self.ops.append(self.op_code(op))
        self.children.extend(children)
        self.child_ptr.append(len(self.children))
        self.payloads.append(payload)
        return n

    def add_root(self, node: int) -> None:
        if not 0 <= node < len(self):
            raise IndexError(f"root {node} does not exist")
        self.roots.append(node)

    def op(self, node: int) -> str:
        return self.op_names[self.ops[node]]

    def kids(self, node: int) -> tuple[int, ...]:
        return tuple(self.children[self.child_ptr[node] : self.child_ptr[node + 1]])

    def sort_of(self, node: int) -> str:
        return self.schema.ops[self.op_names[self.ops[node]]].result

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(op codes, child_ptr, children) as numpy views for vectorised consumers."""
        return (
            np.frombuffer(self.ops, dtype=np.int32) if len(self.ops) else np.zeros(0, np.int32),
            np.frombuffer(self.child_ptr, dtype=np.int64),
            np.frombuffer(self.children, dtype=np.int64) if len(self.children) else np.zeros(0, np.int64),
        )


def structural_ids(table: TermTable, memo: dict[tuple, int]) -> list[int]:
    """Hash-cons every node of ``table`` into ``memo`` and return each node's structural id.

    Sharing one ``memo`` between tables makes ids comparable across them: two nodes get
    the same id iff they denote the same term. That is the notion of "equivalent DAG"
    the engine promises (it hash-conses, so duplicate subterms may merge).
    """
    ids: list[int] = []
    ptr, kids = table.child_ptr, table.children
    for i, code in enumerate(table.ops):
        payload = table.payloads[i]
        key = (table.op_names[code], type(payload).__name__, payload,
               tuple(ids[c] for c in kids[ptr[i] : ptr[i + 1]]))
        ids.append(memo.setdefault(key, len(memo)))
    return ids
