"""Bulk loading of a term table into an e-graph.

Adding terms one at a time is quadratic in egglog 13.2 (a global ``let`` per node
is its own table; ``parse_program`` copies the source per span), so instead every
(operator, arity) group of the table is written to one TSV file, read with egglog's
``input`` command into a relation ``R(id, [payload,] child ids...)``, and a single
iteration of one rule per relation builds the terms::

    (rule ((R i p a b)) ((union (Id i) (C p (Id a) (Id b)))))

``Id`` is an unextractable constructor, so after saturation the e-class of
term-table node ``k`` is the class of ``(Id base+k)``: that is the mapping back
from table ids to e-classes (read in bulk by :mod:`egraft.rewrite.engine.export`).

``input`` reads fields raw and trims surrounding whitespace, so strings containing
tabs, newlines or carriage returns, or with leading/trailing whitespace, cannot go
through TSV; those (rare) nodes are added as escaped ``union`` commands instead.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from itertools import chain

import numpy as np

from egraft.rewrite.engine import names
from egraft.rewrite.engine.egraph import EGraph, egglog_string
from egraft.rewrite.engine.termtable import Payload, TermTable


@dataclass(frozen=True)
class Loaded:
    """Where a table landed: node ``k`` is ``(Id_<sort> base+k)`` in the e-graph."""

    base: int
    size: int
    seconds: float
    tsv_rows: int
    text_rows: int


def _tsv_safe(value: Payload) -> bool:
    if not isinstance(value, str):
        return True
    return value == value.strip() and not any(ch in value for ch in "\t\n\r")


def _groups(table: TermTable, eg: EGraph) -> dict[tuple[str, int | None], np.ndarray]:
    """Node indices of ``table`` grouped by the egglog constructor they become."""
    ops, ptr, _ = table.arrays()
    arity = np.diff(ptr)
    groups: dict[tuple[str, int | None], np.ndarray] = {}
    for code, op in enumerate(table.op_names):
        members = np.flatnonzero(ops == code)
        for k in np.unique(arity[members]):
            key = eg.ctor_key(op, int(k))
            groups[key] = members[arity[members] == k]
    return groups


def _tsv_text(ids: np.ndarray, payloads: list[Payload] | None, child_ids: np.ndarray | None) -> str:
    """The rows ``id [payload] child ids…`` as TSV text, formatted by one ``%`` call.

    One format string repeated per row and applied to the flat tuple of all fields keeps
    the per-field work in C: three times faster than joining ``astype(str)`` columns.
    Floats are written with ``repr``, which egglog reads back exactly.
    """
    columns: list[list[object]] = [ids.tolist()]
    fmt = ["%d"]
    if payloads is not None:
        columns.append([repr(p) if isinstance(p, float) else p for p in payloads])
        fmt.append("%s")
    if child_ids is not None:
        columns += child_ids.T.tolist()
        fmt += ["%d"] * child_ids.shape[1]
    row = "\t".join(fmt) + "\n"
    fields = columns[0] if len(columns) == 1 else list(chain.from_iterable(zip(*columns)))
    return (row * len(ids)) % tuple(fields)


class _Loader:
    """Writes one table's TSV files and builds the egglog program that reads them."""

    def __init__(self, eg: EGraph, table: TermTable, base: int, workdir: str) -> None:
        self.eg, self.table, self.base, self.workdir = eg, table, base, workdir
        self.suffix = f"_L{eg.fresh_load()}"
        self.ruleset = "load" + self.suffix
        self.commands: list[str] = []
        self.fallback: list[str] = []
        self.tsv_rows = 0

    def add_group(self, op: str, arity: int | None, members: np.ndarray) -> None:
        eg, table = self.eg, self.table
        sig = eg.schema.sig(op)
        k = len(sig.child_sorts(arity if arity is not None else len(sig.children)))
        ctor = eg.ensure_ctor(op, k)
        rel = names.relation(op, arity) + self.suffix
        _, ptr, kids = table.arrays()
        child_ids = kids[ptr[members][:, None] + np.arange(k)] + self.base if k else None
        payloads = [table.payloads[i] for i in members] if sig.payload else None
        safe = (np.fromiter(map(_tsv_safe, payloads), bool, len(members))
                if sig.payload == "String" else np.ones(len(members), bool))
        self._declare(rel, ctor, sig.result, sig.payload, sig.child_sorts(k))
        self._write_tsv(rel, members[safe] + self.base,
                        [p for p, ok in zip(payloads, safe) if ok] if payloads else None,
                        child_ids[safe] if k else None)
        for j in np.flatnonzero(~safe):
            self.fallback.append(self._union_text(int(members[j]), ctor, sig.result, payloads[j],
                                                  child_ids[j] if k else (), sig.child_sorts(k)))

    def _declare(self, rel: str, ctor: str, result: str, payload: str | None,
                 child_sorts: tuple[str, ...]) -> None:
        cols = ["i64"] + ([payload] if payload else []) + ["i64"] * len(child_sorts)
        pvar = ["p"] if payload else []
        cvars = [f"c{j}" for j in range(len(child_sorts))]
        args = pvar + [f"({names.id_ctor(s)} {v})" for s, v in zip(child_sorts, cvars)]
        self.commands.append(f"(relation {rel} ({' '.join(cols)}))")
        self.commands.append(
            f"(rule (({rel} i {' '.join(pvar + cvars)})) "
            f"((union ({names.id_ctor(result)} i) ({ctor} {' '.join(args)}))) "
            f":ruleset {self.ruleset} :name \"{rel}\")")

    def _write_tsv(self, rel: str, ids: np.ndarray, payloads: list[Payload] | None,
                   child_ids: np.ndarray | None) -> None:
        if not len(ids):
            return
        path = os.path.join(self.workdir, f"{rel}.tsv")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(_tsv_text(ids, payloads, child_ids))
        self.commands.append(f"(input {rel} {egglog_string(path)})")
        self.tsv_rows += len(ids)

    def _union_text(self, node: int, ctor: str, result: str, payload: Payload,
                    child_ids: np.ndarray | tuple, child_sorts: tuple[str, ...]) -> str:
        args = [egglog_string(str(payload))]
        args += [f"({names.id_ctor(s)} {int(c)})" for s, c in zip(child_sorts, child_ids)]
        return f"(union ({names.id_ctor(result)} {node + self.base}) ({ctor} {' '.join(args)}))"


def load_table(eg: EGraph, table: TermTable) -> Loaded:
    """Add every node of ``table`` to ``eg`` (one ``input`` per operator group).

    Returns the id base: node ``k`` of the table is named ``(Id base+k)`` from now on.
    Relations are declared per call, so each load gets fresh ones and a rerun of the
    load rules never revisits an earlier table's rows.
    """
    start = time.perf_counter()
    base = eg.fresh_ids(len(table))
    with tempfile.TemporaryDirectory(prefix="egraft-load-") as workdir:
        loader = _Loader(eg, table, base, workdir)
        loader.commands.append(f"(ruleset {loader.ruleset})")
        for (op, arity), members in _groups(table, eg).items():
            loader.add_group(op, arity, members)
        loader.commands.append(f"(run {loader.ruleset} 1)")
        eg.run_commands(loader.commands)
    eg.run_commands(loader.fallback)
    return Loaded(base, len(table), time.perf_counter() - start, loader.tsv_rows, len(loader.fallback))
