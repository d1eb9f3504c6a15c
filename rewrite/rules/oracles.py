"""Checks and natives of the rule language on the e-graph: egglog asks, Python answers.

A check (``is_splat(c, 0)``, ``integer_element(x)``) or a native (``zero_of(x)``, a
constant fold) is a Python function, and egglog calls back into Python only at ~57 µs
a match (/work/shared/notes/egglog-13.2.md). But the rule language only ever hands
them types, attributes and constants (``TypeOf``, ``ConstOf``, attribute variables),
and those are hash-consed ground terms: a few distinct ones however large the program.
So each check or native of a compiled rule becomes an *oracle*:

* a request relation ``OQ<k>(args)``, filled by a rule that matches the source pattern
  (and, for a native, whose checks hold);
* an answer table: the relation ``OY<k>(args)`` for a check that holds, the
  unextractable constructor ``OA<k>(args)`` unioned with the computed term for a
  native (no answer when the function declines with None);
* the compiled rule queries the answer instead of calling Python.

After every saturation step that made requests, :func:`saturate_with_oracles` reads
them (one ``freeze()``), evaluates each function once per distinct argument tuple and
writes the answers (one egglog run); saturation goes on until no rule fires and no
request is new. Compiled rules that ask oracles are staged (rewrite/rules/compile.py):
their pattern is matched once into a relation that the requests and the rewrite read.
A class holding a constant is matched as that constant only
(:meth:`OracleTable.constant_classes`). Two analyses provide the
arguments: ``HasTy(v, t)``, the type of every value of the lowered IR (loaded from the
IR by :func:`load_value_types`; rewritten values inherit it by union), and
``ConstVal(v, a)``, the ``value`` of the constant-like op producing ``v`` (derived by a
helper rule per constant-like op record, in every ruleset holding compiled rules).
"""

from __future__ import annotations

import os
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable

from egraft.ir import REGISTRY
from egraft.ir.core import attributes as A
from egraft.ir.syntax.parser import Parser
from egraft.ir.core.traits import Traits
from egraft.ir.core.types import Type
from egraft.patterns.rule import AllOf, AnyOf, Check, ConstOf, Native, Not, TypeOf, Var

from egraft.rewrite.engine import names
from egraft.rewrite.engine.egraph import EGraph, egglog_string, rule_command
from egraft.rewrite.encoding.schema import CAT, attr_from_text, attr_shape, shape_of
from egraft.rewrite.encoding.lower import Lowered
from egraft.rewrite.engine.load import Loaded
from egraft.rewrite.engine.saturate import Budget, SaturationReport, Schedule, saturate

#: print-function's row limit when a whole table is wanted.
PRINT_ALL = 1 << 62

#: Answers written by one empty-query rule (egglog parses a long program in quadratic time).
ANSWERS_PER_RULE = 100

#: Sort of each oracle argument kind.
ARG_SORT = {TypeOf: "Type", ConstOf: "Attr", Var: "Attr"}


class OracleUnsupported(ValueError):
    """A check or native the e-graph cannot ask about (the reason is the message)."""


# ------------------------------------------------------------------ terms


def type_term(eg: EGraph, t: Type) -> str:
    """The ground egglog term of a type (types are terms by their printed text)."""
    return f"({eg.ensure_ctor('Ty', 0)} {egglog_string(str(t))})"


def _payload(value: Any) -> str:
    if isinstance(value, str):
        return egglog_string(value)
    if isinstance(value, float):
        return repr(value) if any(ch in repr(value) for ch in ".en") else f"{value}.0"
    return str(value)


def attr_term(eg: EGraph, a: A.Attribute) -> str:
    """The ground egglog term of an attribute, as the lowering encodes it."""
    ctor, payload, subs = attr_shape(a)
    if ctor == "AArr":
        items = [attr_term(eg, x) for x in subs]  # type: ignore[arg-type]
        return f"({eg.ensure_ctor('AArr', 1)} ({eg.ensure_ctor('Attrs', len(items))} {' '.join(items)}))"
    parts = [eg.ensure_ctor(ctor, len(subs))] + ([_payload(payload)] if payload is not None else [])
    parts += [type_term(eg, x) for x in subs]  # type: ignore[arg-type]
    return f"({' '.join(parts)})"


# ------------------------------------------------------------------ oracles


def leaf_args(check: Any) -> list[Any]:
    """The TypeOf/ConstOf/attribute-variable arguments of a check, in order, once each.

    A check naming ``ConstOf(x)`` is only asked when x *is* produced by a constant, so
    ``not is_constant(x)`` never holds on the e-graph: the rule fires less, never wrongly."""
    if isinstance(check, Check):
        if any(isinstance(a, Native) for a in check.args):
            raise OracleUnsupported("a native inside a check")
        return [a for a in check.args if isinstance(a, (TypeOf, ConstOf, Var))]
    if isinstance(check, (AllOf, AnyOf)):
        return _unique([a for c in check.checks for a in leaf_args(c)])
    if isinstance(check, Not):
        return leaf_args(check.check)
    raise OracleUnsupported(f"not a check: {check!r}")


def _unique(items: list[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


def _value(e: Any, env: dict[Any, Any]) -> Any:
    return env[e] if isinstance(e, (TypeOf, ConstOf, Var)) else e


def holds(check: Any, env: dict[Any, Any]) -> bool:
    """A (composed) check on evaluated arguments; a raising predicate does not hold."""
    if isinstance(check, Check):
        try:
            return bool(check.fn(*(_value(a, env) for a in check.args)))
        except Exception:  # a predicate given a type it does not expect
            return False
    if isinstance(check, AllOf):
        return all(holds(c, env) for c in check.checks)
    if isinstance(check, AnyOf):
        return any(holds(c, env) for c in check.checks)
    return not holds(check.check, env)


@dataclass
class Oracle:
    """One check or native: its argument expressions and sorts, and what it answered."""

    key: int
    kind: str                         # "check", "attr" or "type"
    subject: Any                      # the check or the Native
    args: tuple[Any, ...]
    seen: set[tuple[str, ...]] = field(default_factory=set)
    evaluations: int = 0

    @property
    def sorts(self) -> tuple[str, ...]:
        return tuple(ARG_SORT[type(a)] for a in self.args)

    @property
    def request(self) -> str:
        # The trailing "_" keeps egglog's generated names of OQ1 and OQ11 apart (they clashed in `delete`).
        return f"OQ{self.key}_"

    @property
    def answer(self) -> str:
        return f"OY{self.key}" if self.kind == "check" else f"OA{self.key}"

    def evaluate(self, values: list[Any]) -> Any:
        self.evaluations += 1
        env = dict(zip(self.args, values))
        if self.kind == "check":
            return holds(self.subject, env)
        try:
            return self.subject.fn(*(_value(a, env) for a in self.subject.args))
        except Exception:  # a native that cannot handle these arguments declines
            return None


class OracleTable:
    """The oracles of one e-graph and the analyses they read."""

    def __init__(self, eg: EGraph) -> None:
        self._eg = weakref.ref(eg)
        self.oracles: list[Oracle] = []
        self.by_subject: dict[tuple[int, tuple], Oracle] = {}
        self.with_helpers: set[str] = set()
        self.pruned: set[tuple[str, str]] = set()  # (ruleset, op) with a constant-class rule
        self.seconds = 0.0
        self.rounds = 0
        self.answered: dict[str, int] = {}  # request table -> its size at the last answers
        val, ty, attr = (names.sort_name(s) for s in ("Val", "Type", "Attr"))
        eg.run_commands([f"(relation HasTy ({val} {ty}))", f"(relation ConstVal ({val} {attr}))"])

    @property
    def eg(self) -> EGraph:
        """The e-graph, held weakly: a reference cycle with it would leave freeing it to the
        cyclic collector, which may run on another thread than the one that made it, and
        egglog's e-graph must be dropped where it was made (the CLI runs passes in a thread)."""
        eg = self._eg()
        assert eg is not None, "the oracle table outlived its e-graph"
        return eg

    def oracle(self, kind: str, subject: Any) -> Oracle:
        """The oracle of a check or native (one per subject object and arguments)."""
        args = tuple(leaf_args(subject)) if kind == "check" else tuple(subject.args)
        for a in args:
            if not isinstance(a, (TypeOf, ConstOf, Var)):
                if isinstance(a, Native):
                    raise OracleUnsupported(f"native '{subject.name}' takes a native")
        args = tuple(a for a in args if isinstance(a, (TypeOf, ConstOf, Var)))
        key = (id(subject), args)
        found = self.by_subject.get(key)
        if found is not None:
            return found
        made = Oracle(len(self.oracles), kind, subject, args)
        self.oracles.append(made)
        self.by_subject[key] = made
        sorts = " ".join(names.sort_name(s) for s in made.sorts)
        decls = [f"(relation {made.request} ({sorts}))"]
        if kind == "check":
            decls.append(f"(relation {made.answer} ({sorts}))")
        else:
            result = names.sort_name("Attr" if kind == "attr" else "Type")
            decls.append(f"(constructor {made.answer} ({sorts}) {result} :unextractable)")
        self.eg.run_commands(decls)
        return made

    def helpers(self, ruleset: str) -> list[str]:
        """``ConstVal`` rules for every constant-like op record, once per ruleset."""
        if ruleset in self.with_helpers:
            return []
        self.with_helpers.add(ruleset)
        out = []
        for opdef in list(REGISTRY.ops.values()):
            if not opdef.has_trait(Traits.ConstantLike) or "value" not in opdef.attr_names or opdef.operands:
                continue
            shape = shape_of(opdef)
            if shape.effectful or shape.num_regions:
                continue
            self.eg.schema.add(shape.sig)
            ctor = self.eg.ensure_ctor(opdef.name, len(shape.sig.children))
            out.append(rule_command([f"(= ?o ({ctor} ?t ?p ?a))", '(DictHas ?p "value" ?v)'],
                                    [f"(ConstVal ({self.eg.ensure_ctor('Res', 1)} 0 ?o) ?v)"], ruleset,
                                    f"const-val-{opdef.name}@{ruleset}"))
        return out

    def constant_classes(self, ruleset: str, ops: Iterable[str]) -> list[str]:
        """Rules hiding, from matching, every other result of ``ops`` in a class that holds a constant.

        A constant class is what egg's constant-folding analysis makes of it: the constant
        and nothing else. Without this, ``x * 0 = 0`` puts every product by zero into the
        class of ``0``, every rule matching through that class enumerates all of them each
        iteration, and constant reassociation recombines them into ever new constants
        (the 1k-op chain of issue #9: 19 million matches of ``muli-muli-constant``, 780 MB).
        egglog's ``subsume`` hides the result node from queries and from the export; the
        constant itself is never hidden, so the class stays extractable as the constant.
        Only pure, region-free, non-constant ops get the rule.
        """
        res = self.eg.ensure_ctor("Res", 1)
        out = []
        for op in ops:
            opdef = REGISTRY.lookup(op)
            if (ruleset, op) in self.pruned or opdef is None or opdef.has_trait(Traits.ConstantLike):
                continue
            shape = shape_of(opdef)
            if shape.effectful or shape.num_regions:
                continue
            self.pruned.add((ruleset, op))
            kids = " ".join(f"?k{i}" for i in range(len(shape.sig.children)))
            out.append(rule_command([f"(= ?o ({self.eg.ensure_ctor(op, len(shape.sig.children))} {kids}))",
                                     f"(= ?v ({res} ?i ?o))", "(ConstVal ?v ?c)"], [f"(subsume ({res} ?i ?o))"],
                                    ruleset, f"constant-class-{op}@{ruleset}"))
        return out

    # ------------------------------------------------------------ answering

    def answer_new(self, sizes: dict[str, int]) -> int:
        """Answer the requests if a request table changed size since the last answers
        (``sizes``: egglog's table sizes, read after every saturation step anyway)."""
        grown = [o for o in self.oracles if sizes.get(o.request, 0) != self.answered.get(o.request)]
        self.answered.update((o.request, sizes.get(o.request, 0)) for o in grown)
        return self.answer(grown) if grown else 0

    def answer(self, oracles: list[Oracle] | None = None) -> int:
        """Answer every new request (of ``oracles``, default all); returns how many answers
        were added.

        Each request table is read with ``print-function``, which gives its rows as ground
        terms, and the rows read are deleted, so each read costs what is new: a ``freeze()``
        of the whole e-graph cost O(e-graph) per answer, and so did reading whole tables."""
        start = time.perf_counter()
        commands: list[str] = []
        for o in self.oracles if oracles is None else oracles:
            (out,) = self.eg.run_commands([f"(print-function {o.request} {PRINT_ALL})"])
            decode = _TermDecoder(self.eg.constructors(), out.termdag)  # type: ignore[attr-defined]
            for row, _ in out.terms:  # type: ignore[attr-defined]
                values = tuple(decode(arg) for arg in out.termdag.get(row).args)  # type: ignore[attr-defined]
                if any(v is None for v in values):
                    continue
                terms = " ".join(self.term(sort, v) for sort, v in zip(o.sorts, values))
                commands.append(f"(delete ({o.request} {terms}))")
                if values in o.seen:
                    continue
                o.seen.add(values)
                answer = o.evaluate(list(values))
                if o.kind == "check":
                    if answer:
                        commands.append(f"({o.answer} {terms})")
                elif isinstance(answer, A.Attribute if o.kind == "attr" else Type):
                    sort = "Attr" if o.kind == "attr" else "Type"
                    commands.append(f"(union ({o.answer} {terms}) {self.term(sort, answer)})")
        answers = sum(1 for c in commands if not c.startswith("(delete"))
        self.write(commands)
        self.seconds += time.perf_counter() - start
        return answers

    def write(self, actions: list[str]) -> None:
        """Add the answers in one egglog run: as top-level commands, each one would pay a
        rebuild of the whole e-graph (4 ms apiece at 10k ops, 5.6 s for one round of 1,335)."""
        if not actions:
            return
        self.rounds += 1
        rs = f"answers{self.rounds}"
        commands = [f"(ruleset {rs})"]
        commands += [f"(rule () ({' '.join(actions[i:i + ANSWERS_PER_RULE])}) :ruleset {rs})"
                     for i in range(0, len(actions), ANSWERS_PER_RULE)]
        self.eg.run_commands(commands + [f"(run {rs} 1)"])

    def term(self, sort: str, value: Any) -> str:
        return type_term(self.eg, value) if sort == "Type" else attr_term(self.eg, value)


class _TermDecoder:
    """Types and attributes from the ground terms of one ``print-function`` output."""

    def __init__(self, ctors: dict[str, tuple[str, int | None]], termdag: Any) -> None:
        self.ctors, self.termdag = ctors, termdag
        self.memo: dict[int, Any] = {}

    def literal(self, term: int) -> Any:
        return self.termdag.get(term).value.value

    def __call__(self, term: int) -> Any:
        """The type or attribute of term ``term`` (None for anything the lowering does not make).
        Recursion only follows the nesting of one attribute (arrays of arrays), never the IR."""
        if term not in self.memo:
            node = self.termdag.get(term)
            self.memo[term] = self.decode(self.ctors.get(node.name, (None,))[0], node.args)
        return self.memo[term]

    def decode(self, op: str | None, args: list[int]) -> Any:
        if op == "Ty":
            return Parser(self.literal(args[0])).parse_type()
        if op == "AInt":
            return A.IntegerAttr(self.literal(args[0]), self(args[1]))
        if op == "AFloat":
            return A.FloatAttr(float(self.literal(args[0])), self(args[1]))
        if op == "AStr":
            return A.StringAttr(self.literal(args[0]))
        if op == "AUnit":
            return A.UnitAttr()
        if op == "AType":
            return A.TypeAttr(self(args[0]))
        if op == "AArr":
            items = self(args[0])
            return None if items is None else A.ArrayAttr(tuple(items))
        if op in ("Attrs", CAT["Attrs"]):
            items = [self(v) for v in args]
            if any(x is None for x in items):
                return None
            return items if op == "Attrs" else [x for chunk in items for x in chunk]
        if op == "AText":
            return attr_from_text(self.literal(args[0]))
        return None


def oracle_table(eg: EGraph) -> OracleTable:
    """The oracle table of ``eg`` (declared on first use). It lives on the e-graph, so the two
    die together: a module-level WeakKeyDictionary kept every e-graph alive, its value
    holding its key (issue #9, S2: ~100 MB per eqsat run). The table holds the e-graph weakly."""
    if eg.oracle_table is None:
        eg.oracle_table = OracleTable(eg)
    return eg.oracle_table  # type: ignore[return-value]


# ------------------------------------------------------------------ the round trip's hooks


def load_value_types(eg: EGraph, low: Lowered, loaded: Loaded) -> None:
    """``HasTy`` for every value of the lowered IR, bulk-loaded like the table itself."""
    if eg.oracle_table is None:
        return
    table = low.table
    type_node = {t: n for n, t in low.types.items()}
    code = {name: i for i, name in enumerate(table.op_names)}
    ops, ptr, kids = table.arrays()
    rows: list[str] = []
    res = code.get("Res")
    for node in range(len(table)):
        c = ops[node]
        if c == res:
            owner = low.ops.get(int(kids[ptr[node]]))
            if owner is None:
                continue
            t = type_node.get(owner.results[table.payloads[node]].type)  # type: ignore[index]
            if t is not None:
                rows.append(f"{node + loaded.base}\t{t + loaded.base}")
        elif table.op_names[c] in ("BArg", "Ext", "Fwd"):
            rows.append(f"{node + loaded.base}\t{int(kids[ptr[node]]) + loaded.base}")
    if not rows:
        return
    suffix = f"_T{eg.fresh_load()}"
    with tempfile.TemporaryDirectory(prefix="egraft-types-") as workdir:
        path = os.path.join(workdir, "types.tsv")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(rows) + "\n")
        eg.run_commands([
            f"(relation HasTyIn{suffix} (i64 i64))", f"(ruleset types{suffix})",
            f"(rule ((HasTyIn{suffix} v t)) ((HasTy ({names.id_ctor('Val')} v) ({names.id_ctor('Type')} t))) "
            f":ruleset types{suffix} :name \"types{suffix}\")",
            f"(input HasTyIn{suffix} {egglog_string(path)})", f"(run types{suffix} 1)"])


def saturate_with_oracles(eg: EGraph, schedule: Schedule, budget: Budget = Budget()) -> SaturationReport:
    """Saturate, answering new oracle requests after every step in which some were made.

    Answering between steps rather than between whole saturation runs lets a chain of
    folds advance one link per iteration (a constant folded from two folded constants,
    ...) instead of one link per run, each run ending with an idle step to prove itself
    saturated."""
    table: OracleTable | None = eg.oracle_table  # type: ignore[assignment]
    return saturate(eg, schedule, budget, None if table is None else table.answer_new)
