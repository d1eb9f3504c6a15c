"""A handle on one egglog e-graph declared from a :class:`Schema`.

The rest of the engine talks to egglog only through this class: it owns the
bindings-level ``EGraph`` (the high-level API costs ~170 µs per term, see
docs/engine.md), declares sorts and constructors once, declares the per-arity
constructors of variadic ops on demand, declares rulesets, and hands out fresh
term-table ids so several tables can be loaded into one e-graph without clashing.

Rules reach the engine compiled: egglog ``rule`` commands (:func:`rule_command`) in
rulesets declared here (:meth:`EGraph.ruleset_commands`). The engine has no rule model
of its own: the one rule model is the rule language's ``Rule`` (``egraft.patterns``),
whose meaning depends on the IR encoding (op records, operand groups, oracles) that sits
above this IR-agnostic layer, so it is compiled above it (``rewrite/rules/compile.py``;
the relational rules of analyses by ``rewrite/rules/relational.py``).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Iterable
from types import ModuleType

from egraft.rewrite.engine import names
from egraft.rewrite.engine.termtable import OpSig, Schema

# egglog's parser copies the whole source per span, so cost grows with the square of
# the program length; short programs keep it linear. Both limits matter: 100 commands of
# 1.5 KB each (oracle answers) took 5.8 s to parse as one program, 0.15 s in pieces.
MAX_COMMANDS_PER_PARSE = 100
MAX_CHARS_PER_PARSE = 4096


def egglog_string(text: str) -> str:
    """``text`` as an egglog string literal (its lexer knows only these four escapes)."""
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"')
               .replace("\n", "\\n").replace("\t", "\\t"))
    return f'"{escaped}"'


def rule_command(query: Iterable[str], actions: Iterable[str], ruleset: str, name: str) -> str:
    """One egglog ``rule`` command in ``ruleset`` (declared with :meth:`EGraph.ruleset_commands`).

    ``name`` is what the saturation report counts matches by (egglog's ``:name``)."""
    return (f"(rule ({' '.join(query)}) ({' '.join(actions)}) "
            f":ruleset {names.ruleset(ruleset)} :name {egglog_string(name)})")


@functools.cache
def bindings() -> ModuleType:
    """egglog's compiled bindings, loaded on first use without the ``egglog`` package.

    The engine needs only the bindings. Importing the package costs 0.3-0.6 s of CPU on
    every run that builds an e-graph (it pulls in its Python API and black), and its class
    declarations keep the frame of the import, hence the whole call stack of whoever
    triggered it: the first e-graph of a process was never freed. The module is registered
    as ``egglog.bindings``, so a later ``import egglog`` shares it (a process that then
    also uses egglog's Python API may see egglog complain at exit about where an e-graph
    of that API is dropped; egraft does not use it)."""
    loaded = sys.modules.get("egglog.bindings")
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("egglog")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("egglog is not installed")
    folder = spec.submodule_search_locations[0]
    name = next(f for f in os.listdir(folder) if f.startswith("bindings.") and f.endswith((".so", ".pyd")))
    ext = importlib.util.spec_from_file_location("egglog.bindings", os.path.join(folder, name))
    module = importlib.util.module_from_spec(ext)  # type: ignore[arg-type]
    ext.loader.exec_module(module)  # type: ignore[union-attr]
    sys.modules["egglog.bindings"] = module
    return module


class EGraph:
    """An egglog e-graph plus the schema it was declared from."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.raw = bindings().EGraph()
        self.next_id = 0
        self.loads = 0
        self.rulesets: dict[str, list[str]] = {}  # ruleset -> names of the rules compiled into it
        self.oracle_table: object | None = None  # rewrite/rules/oracles.py's OracleTable, made on first use
        self._ctors: dict[str, tuple[str, int | None]] = {}  # egglog name -> (op, arity or None)
        self._names: dict[tuple[str, int | None], str] = {}  # and back
        decls = [f"(sort {names.sort_name(s)})" for s in schema.sorts]
        decls += [f"(constructor {names.id_ctor(s)} (i64) {names.sort_name(s)} :unextractable)"
                  for s in schema.sorts]
        self.run_commands(decls)
        for sig in schema.ops.values():
            if not sig.variadic:
                self.ensure_ctor(sig.name, len(sig.children))

    def ruleset_commands(self, ruleset: str) -> list[str]:
        """The command declaring ``ruleset`` the first time it is named, none after: the
        schedule (saturate.py) refers to rulesets by the names declared here."""
        if ruleset in self.rulesets:
            return []
        self.rulesets[ruleset] = []
        return [f"(ruleset {names.ruleset(ruleset)})"]

    def ctor_key(self, op: str, arity: int) -> tuple[str, int | None]:
        """Which egglog constructor stands for ``op`` with ``arity`` children."""
        return (op, arity if self.schema.sig(op).variadic else None)

    def ensure_ctor(self, op: str, arity: int) -> str:
        """Declare (once) and return the egglog constructor for ``op`` at ``arity``."""
        key = self.ctor_key(op, arity)
        name = self._names.get(key)
        if name is None:
            name = names.ctor(*key)
            sig = self.schema.sig(op)
            self.run_commands([f"(constructor {name} ({' '.join(self.arg_sorts(sig, arity))}) "
                               f"{names.sort_name(sig.result)})"])
            self._ctors[name] = key
            self._names[key] = name
        return name

    @staticmethod
    def arg_sorts(sig: OpSig, arity: int) -> list[str]:
        """egglog argument sorts of a constructor: the payload first, then the children."""
        head = [sig.payload] if sig.payload else []
        return head + [names.sort_name(s) for s in sig.child_sorts(arity)]

    def constructors(self) -> dict[str, tuple[str, int | None]]:
        """egglog constructor name -> (op, arity or None) for every declared constructor
        (the e-graph's own table, kept as constructors are declared: do not modify)."""
        return self._ctors

    def fresh_ids(self, count: int) -> int:
        """Reserve ``count`` consecutive egglog node ids and return the first."""
        base = self.next_id
        self.next_id += count
        return base

    def fresh_load(self) -> int:
        """Number of the next load, which keeps its relation and ruleset names unique."""
        self.loads += 1
        return self.loads

    def run_commands(self, commands: Iterable[str]) -> list[object]:
        """Run egglog commands (each one complete s-expression), parsing in small batches."""
        outputs: list[object] = []
        batch: list[str] = []
        chars = 0
        for cmd in commands:
            if batch and (len(batch) == MAX_COMMANDS_PER_PARSE or chars + len(cmd) > MAX_CHARS_PER_PARSE):
                outputs += self.raw.run_program(*self.raw.parse_program("\n".join(batch)))
                batch.clear()
                chars = 0
            batch.append(cmd)
            chars += len(cmd)
        if batch:
            outputs += self.raw.run_program(*self.raw.parse_program("\n".join(batch)))
        return outputs

    def table_sizes(self) -> dict[str, int]:
        """Rows of every egglog table (constructors and relations), by egglog name."""
        (out,) = self.run_commands(["(print-size)"])
        return dict(out.sizes)  # type: ignore[attr-defined]

    def enode_count(self, sizes: dict[str, int] | None = None) -> int:
        """Number of e-nodes in the schema's constructors (excluding Id handles and relations),
        from ``sizes`` when the caller has just read them."""
        ctors = self.constructors()
        return sum(size for name, size in (sizes or self.table_sizes()).items() if name in ctors)
