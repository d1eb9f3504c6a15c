"""Read a saturated e-graph out of egglog into flat numpy arrays.

Of the exports egglog 13.2 offers, ``freeze()`` is the fastest by far (70 ms for
~360k rows, against 2.0 s + 0.25 s for ``serialize().to_json()`` before even
parsing the JSON; figures in docs/engine.md). Its rows hold opaque ``Value``
objects, and touching them from Python is the whole cost of the export, so each
is touched once, by the cheapest conversion the bindings have: ``value_to_i64``.
egglog stores an i64 below 2**31 unboxed, as the ``Value``'s own 32 bits, so that
call reads back the raw e-class id of any e-class value (ids are allocated densely
and cannot reach 2**31 in memory). It is 6x faster than parsing ``str(value)``
(0.12 s against 0.79 s for the 1.6M values of the arith 100k benchmark).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np

from egraft.rewrite.engine import names
from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.engine.termtable import Payload

_get_inputs = attrgetter("inputs")
_get_output = attrgetter("output")
_get_subsumed = attrgetter("subsumed")


def _raw_ids(eg: EGraph, values: Iterable[object], count: int) -> np.ndarray:
    """Raw egglog ids of ``count`` e-class ``Value`` objects (see the module docstring)."""
    return np.fromiter(map(eg.raw.value_to_i64, values), np.int64, count)


@dataclass
class EGraphArrays:
    """An e-graph as flat arrays, the input of every extractor.

    E-node ``j`` has operator ``op_names[node_op[j]]``, belongs to class
    ``node_class[j]`` (dense, ``0..n_classes-1``), has child classes
    ``children[child_ptr[j]:child_ptr[j+1]]`` and payload ``payloads[j]``.
    ``term_class[i]`` is the class of term-table node ``i`` (the ``(Id i)`` handle),
    ``-1`` for ids never loaded.
    """

    op_names: list[str]
    node_op: np.ndarray
    node_class: np.ndarray
    child_ptr: np.ndarray
    children: np.ndarray
    payloads: list[Payload | None]
    n_classes: int
    term_class: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.node_op)

    def class_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR of e-nodes per class: nodes of class c are ``order[ptr[c]:ptr[c+1]]``."""
        order = np.argsort(self.node_class, kind="stable")
        ptr = np.zeros(self.n_classes + 1, np.int64)
        np.cumsum(np.bincount(self.node_class, minlength=self.n_classes), out=ptr[1:])
        return ptr, order


def _sort_tag(eg: EGraph, sort: str) -> int:
    """Offset that keeps class ids of different sorts apart (egglog numbers them per sort)."""
    return eg.schema.sorts.index(sort) << 40


def _decoder(eg: EGraph, kind: str) -> Callable[[object], Payload]:
    return {"i64": eg.raw.value_to_i64, "String": eg.raw.value_to_string,
            "f64": eg.raw.value_to_f64}[kind]


def export(eg: EGraph) -> EGraphArrays:
    """Snapshot ``eg`` (call again after every run: egglog values go stale on union)."""
    frozen = eg.raw.freeze().functions
    op_names: list[str] = []
    op_codes: dict[str, int] = {}
    ops, outs, kids, arity, payloads = [], [], [], [], []
    for name, (op, _) in eg.constructors().items():
        rows = frozen[name].rows
        if any(map(_get_subsumed, rows)):
            rows = [row for row in rows if not row.subsumed]
        if not rows:
            continue
        sig = eg.schema.sig(op)
        head = sig.payload is not None
        k = len(frozen[name].input_sorts) - head
        code = op_codes.setdefault(op, len(op_names))
        if code == len(op_names):
            op_names.append(op)
        ops.append(np.full(len(rows), code, np.int32))
        outs.append(_raw_ids(eg, map(_get_output, rows), len(rows)) + _sort_tag(eg, sig.result))
        inputs = list(chain.from_iterable(map(_get_inputs, rows)))
        if head:
            payloads += map(_decoder(eg, sig.payload), inputs[0::k + 1])
            del inputs[0::k + 1]
        else:
            payloads += [None] * len(rows)
        tags = np.array([_sort_tag(eg, s) for s in sig.child_sorts(k)], np.int64)
        kids.append((_raw_ids(eg, inputs, len(inputs)).reshape(len(rows), k) + tags).ravel())
        arity.append(np.full(len(rows), k, np.int64))
    id_terms, id_classes = [], []
    for sort in eg.schema.sorts:
        rows = frozen[names.id_ctor(sort)].rows
        id_terms.append(_raw_ids(eg, chain.from_iterable(map(_get_inputs, rows)), len(rows)))
        id_classes.append(_raw_ids(eg, map(_get_output, rows), len(rows)) + _sort_tag(eg, sort))
    return _densify(op_names, ops, outs, kids, arity, payloads, id_terms, id_classes, eg.next_id)


def _lookup(sorted_ids: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Position of each ``raw`` id in ``sorted_ids``, or -1 where it is absent."""
    pos = np.searchsorted(sorted_ids, raw)
    pos[pos >= len(sorted_ids)] = 0
    return np.where(sorted_ids[pos] == raw, pos, -1) if len(sorted_ids) else np.full(len(raw), -1)


def _densify(op_names: list[str], ops: list[np.ndarray], outs: list[np.ndarray],
             kids: list[np.ndarray], arity: list[np.ndarray], payloads: list[Payload | None],
             id_terms: list[np.ndarray], id_classes: list[np.ndarray], n_terms: int) -> EGraphArrays:
    """Renumber raw egglog class ids densely and assemble the arrays."""
    cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt)  # noqa: E731
    raw_out, raw_kids = cat(outs, np.int64), cat(kids, np.int64)
    classes, node_class = np.unique(raw_out, return_inverse=True)
    child_class = _lookup(classes, raw_kids)
    if (child_class < 0).any():
        raise RuntimeError("e-graph export found a child class with no e-node")
    child_ptr = np.zeros(len(raw_out) + 1, np.int64)
    np.cumsum(cat(arity, np.int64), out=child_ptr[1:])
    term_class = np.full(n_terms, -1, np.int32)
    term_class[cat(id_terms, np.int64)] = _lookup(classes, cat(id_classes, np.int64))
    return EGraphArrays(op_names, cat(ops, np.int32), node_class.astype(np.int32), child_ptr,
                        child_class.astype(np.int32), payloads, len(classes), term_class)
