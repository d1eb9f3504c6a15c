"""Compile rules of the rule language (``egraft.patterns``) into egglog rules over the
IR encoding (docs/encoding.md).

A source DAG becomes query atoms, one per op: ``(= ?o (tf.AddV2 ?x ?y ?ty ?p ?a))`` for a
typed op, ``(= ?o (Generic "tf.X" ?vals ...))`` for an unregistered one (``GenericPure``
when ``ir/effects.py`` declares it effect-free, as the lowering does), and an operand
that is a nested op is its result ``(= ?v (Res 0 ?o2))``. Named attributes are looked up
through the ``DictHas`` relation (attributes not named are not looked at, as the
language says); the relation is filled by two helper rules added to every ruleset that
holds compiled rules. Either-operands expand into one egglog rule per order; several
roots (multi-pattern rules) are several atoms sharing variables. Results union each
replaced root result with the value built: a variable, a result of a matched op, or a
new op whose result types are the replaced value's (or given types).

Effects (docs/encoding.md, "Effects and order"). A source op with ``.after(p)`` joins its
incoming token to ``(EffOf ?p)``. A rule replacing an effectful root threads the effectful
ops it builds on the root's token: the first built takes the root's incoming token, each
next one the ``EffOf`` of the one before (let-bound, so each is one e-node), and
``EffOf(root)`` is unioned with the last one's; a root without results is replaced by the
ops built for it; a result that builds none unions ``EffOf(root)`` with its incoming token
(the root is erased; only for ops that only read). The extraction that keeps one op per
chain position is :func:`egraft.rewrite.encoding.chains.extract_on_chains`.

Checks, natives, ``TypeOf``/``ConstOf`` arguments and constrained variables become
oracles (``rewrite/rules/oracles.py``): the rule asks through a request relation, Python answers
between saturation runs, and the compiled rule queries the answer.

Not compiled (reported by :func:`compile_rules` with the reason, the greedy driver still
runs them): checks on IR values (``has_one_use``), "build" natives, building ops with
regions or unregistered ops, building effectful ops for a root that is not effectful.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import attrs

from egraft.ir import REGISTRY, Operation
from egraft.ir.core import attributes as A
from egraft.ir.core.traits import Traits
from egraft.ir.core.types import Type
from egraft.ir.effects import declared_effect_free, only_reads
from egraft.patterns.rule import Check, ConstOf, Either, Native, OpPat, ResultOf, Rule, TypeOf, Var

from egraft.rewrite.engine import names
from egraft.rewrite.engine.egraph import EGraph, egglog_string, rule_command
from egraft.rewrite.encoding.schema import CHUNK, OpShape, shape_of
from egraft.rewrite.rules.oracles import Oracle, OracleUnsupported, attr_term, oracle_table, type_term

EXPAND_TAG = "expand"

#: The ruleset holding the joins of nested source patterns (see :func:`compile_rules`).
NESTED_RULESET = "simplify-nested"

#: A query variable in compiled egglog text (names.var escapes names to [A-Za-z0-9_]).
_VAR = re.compile(r"\?[A-Za-z0-9_]+")

#: Numbers the match relations of staged rules (unique in the process, so in every e-graph).
_MATCH_IDS = itertools.count()

#: egglog sorts of the columns of the analysis relations rules query.
_RELATION_SORTS = {"HasTy": ("Val", "Type"), "ConstVal": ("Val", "Attr"), "DictHas": ("Dict", "String", "Attr")}

#: E-graphs where the DictHas relation is declared.
_WITH_DICT_HAS: "weakref.WeakSet[EGraph]" = weakref.WeakSet()


class UnsupportedRule(ValueError):
    """A rule the e-graph compiler cannot express (the reason is the message)."""


@dataclass
class Compiled:
    """Egglog rules per ruleset, and the rules left out with why."""

    rules: dict[str, list[str]] = field(default_factory=dict)   # ruleset -> rule names
    skipped: dict[str, str] = field(default_factory=dict)       # rule name -> reason


class _RuleCompiler:
    """One rule (one Either choice) → query atoms and actions."""

    def __init__(self, eg: EGraph, rule: Rule) -> None:
        self.eg, self.rule = eg, rule
        self.atoms: list[str] = []
        self.fresh = itertools.count()
        self.ops: dict[str, str] = {}          # binding -> op variable
        self.op_info: dict[str, tuple[OpShape | None, list[str]]] = {}  # op var -> (shape, kid vars)
        self.bound: set[str] = set()
        self.attr_vars: set[str] = set()
        self.constrained: list[Check] = []     # checks implied by constrained variables
        self.arg_vars: dict[Any, tuple[str, str]] = {}  # oracle argument -> (query var, atom)
        self.answers: list[str] = []            # answer atoms of the oracles, in the order asked
        self.requests: list[tuple[int, str]] = []  # (answers known when asking, request atom)
        self.actions: list[str] = []            # the rewrite's actions, let-bindings first
        self.token: str | None = None           # the effect token the next built effectful op takes
        self.built: dict[Any, str] = {}         # effectful built op (binding or pattern) -> its let variable

    def var(self, stem: str = "t") -> str:
        return f"?_{stem}{next(self.fresh)}"

    def ctor(self, op: str, arity: int | None = None) -> str:
        return self.eg.ensure_ctor(op, arity if arity is not None else len(self.eg.schema.sig(op).children))

    def shape(self, name: str) -> OpShape | None:
        opdef = REGISTRY.lookup(name)
        if opdef is None:
            return None
        shape = shape_of(opdef)
        self.eg.schema.add(shape.sig)
        return shape

    # ------------------------------------------------------------ terms

    def type_term(self, t: Type) -> str:
        return type_term(self.eg, t)

    def attr_term(self, a: A.Attribute) -> str:
        return attr_term(self.eg, a)

    # ------------------------------------------------------------ oracles

    def value_term(self, name: str) -> str:
        """The value a check argument names: a bound value, or the result of a bound op."""
        if name in self.ops:
            return f"({self.ctor('Res')} 0 {self.ops[name]})"
        if name in self.bound and name not in self.attr_vars:
            return names.var(name)
        raise UnsupportedRule(f"${name} is not a matched value")

    def arg_var(self, a: TypeOf | ConstOf | Var) -> str:
        """The query variable of an oracle argument (its HasTy/ConstVal atom added once)."""
        if isinstance(a, Var):
            if a.name not in self.attr_vars:
                raise UnsupportedRule(f"a check on the IR value ${a.name} (greedy driver only)")
            return names.var(a.name)
        if a not in self.arg_vars:
            v = self.var("ty" if isinstance(a, TypeOf) else "cv")
            rel = "HasTy" if isinstance(a, TypeOf) else "ConstVal"
            self.arg_vars[a] = (v, f"({rel} {self.value_term(a.var)} {v})")
            self.atoms.append(self.arg_vars[a][1])
        return self.arg_vars[a][0]

    def oracle_args(self, o: Oracle) -> str:
        return " ".join(self.arg_var(a) for a in o.args)

    def ask(self, kind: str, subject: Any) -> str:
        """Compile a check (an answer atom) or a native (its answer variable): a request
        rule over the query so far, and the answer in the query from now on."""
        try:
            o = oracle_table(self.eg).oracle(kind, subject)
        except OracleUnsupported as why:
            raise UnsupportedRule(str(why)) from None
        args = self.oracle_args(o)
        self.requests.append((len(self.answers), f"({o.request} {args})"))
        if kind == "check":
            self.answers.append(f"({o.answer} {args})")
            return ""
        v = self.var("n")
        self.answers.append(f"(= {v} ({o.answer} {args}))")
        return v

    def constrain(self, name: str, constraint: Any, of_type: bool) -> None:
        """A constrained variable is a check on its type (values) or on itself (attributes)."""
        arg = TypeOf(name) if of_type else Var(name)
        self.constrained.append(Check(f"${name} is {constraint.summary}", constraint.predicate, (arg,),
                                      "type_constraint" if of_type else "attr_constraint", (constraint,)))

    # ------------------------------------------------------------ source

    def source_value(self, o: Any) -> str:
        """A query variable denoting operand ``o`` (a Val class)."""
        if isinstance(o, Var):
            if o.is_wildcard and o.constraint is None:
                return self.var("w")
            name = o.name if not o.is_wildcard else f"_c{next(self.fresh)}"
            if o.constraint is not None and name not in self.bound:
                self.constrain(name, o.constraint, of_type=True)
            self.bound.add(name)
            return names.var(name)
        if isinstance(o, OpPat):
            return self.result_value(self.source_op(o), 0)
        if isinstance(o, ResultOf):
            op_var = self.source_op(o.op) if isinstance(o.op, OpPat) else self.ops[o.op]
            return self.result_value(op_var, o.index)
        raise UnsupportedRule(f"operand {o!r}")

    def result_value(self, op_var: str, index: int) -> str:
        v = self.var("v")
        self.atoms.append(f"(= {v} ({self.ctor('Res')} {index} {op_var}))")
        return v

    def source_list(self, items: Any) -> str:
        if isinstance(items, Var):
            return self.source_value(items)
        if len(items) > CHUNK:
            raise UnsupportedRule(f"a fixed group of more than {CHUNK} operands")
        kids = [self.source_value(x) for x in items]
        v = self.var("l")
        self.atoms.append(f"(= {v} ({self.ctor('Vals', len(kids))} {' '.join(kids)}))")
        return v

    def source_op(self, pat: OpPat) -> str:
        shape = self.shape(pat.name)
        o = names.var(pat.binding) if pat.binding else self.var("o")
        if pat.binding:
            self.ops[pat.binding] = o
        if shape is not None and len(pat.operands) == len(shape.groups):
            kids = [self.source_list(x) if is_list else self.source_value(x)
                    for is_list, x in zip(shape.groups, pat.operands)]
            rest = [self.var() for _ in range(3 + shape.num_regions + shape.effectful)]
            self.atoms.append(f"(= {o} ({self.ctor(pat.name)} {' '.join(kids + rest)}))")
            heads = rest
        elif shape is None:  # lowered as Generic, or GenericPure when declared effect-free (no Eff child)
            vals = self.source_list(pat.operands)
            pure = declared_effect_free(pat.name, None)
            heads = [self.var() for _ in range(4 if pure else 5)]
            generic = self.ctor("GenericPure" if pure else "Generic")
            self.atoms.append(f"(= {o} ({generic} {egglog_string(pat.name)} {vals} {' '.join(heads)}))")
        else:
            raise UnsupportedRule(f"{pat.name}: operand groups do not match its record")
        self.op_info[o] = (shape, heads)
        for name, value in pat.attrs:
            self.source_attr(pat.name, heads, name, value)
        if pat.after_op is not None:
            if not self.effectful(pat.name, shape):
                raise UnsupportedRule(f"{pat.name} is effect-free: it has no effect predecessor to match")
            previous = self.source_op(pat.after_op)
            if not self.effectful(pat.after_op.name, self.op_info[previous][0]):
                raise UnsupportedRule(f"{pat.after_op.name} is effect-free: it is on no effect chain")
            self.atoms.append(f"(= {heads[-1]} ({self.ctor('EffOf')} {previous}))")
        return o

    @staticmethod
    def effectful(name: str, shape: OpShape | None) -> bool:
        """Whether ops named ``name`` consume an effect token (their last child), as lowered."""
        return shape.effectful if shape is not None else not declared_effect_free(name, None)

    def source_attr(self, op: str, heads: list[str], name: str, value: Any) -> None:
        opdef = REGISTRY.lookup(op)
        dict_var = heads[1] if opdef is not None and name in opdef.attr_names else heads[2]
        if isinstance(value, Var):
            if value.constraint is not None:
                if value.is_wildcard:
                    raise UnsupportedRule("a constrained wildcard attribute")
                if value.name not in self.bound:
                    self.constrain(value.name, value.constraint, of_type=False)
            term = self.var("a") if value.is_wildcard else names.var(value.name)
            self.bound.add(value.name)
            self.attr_vars.add(value.name)
        elif isinstance(value, A.Attribute):
            term = self.attr_term(value)
        else:
            raise UnsupportedRule(f"attribute pattern {value!r}")
        self.atoms.append(f"(DictHas {dict_var} {egglog_string(name)} {term})")

    # ------------------------------------------------------------ results

    def result(self, e: Any, types_var: str) -> str:
        if isinstance(e, Var):
            if e.name not in self.bound and e.name not in self.ops:
                raise UnsupportedRule(f"result variable ${e.name} is not a matched value")
            return names.var(e.name) if e.name in self.bound else f"({self.ctor('Res')} 0 {self.ops[e.name]})"
        if isinstance(e, ResultOf):
            if isinstance(e.op, str):
                op_expr = self.ops[e.op] if e.op in self.ops else self.built[e.op]
            else:
                op_expr = self.build(e.op, types_var)
            return f"({self.ctor('Res')} {e.index} {op_expr})"
        if isinstance(e, OpPat):
            return f"({self.ctor('Res')} 0 {self.build(e, types_var)})"
        raise UnsupportedRule(f"result {type(e).__name__}")

    def build(self, pat: OpPat, types_var: str) -> str:
        """The term of a built op. An effectful one takes the current token, is let-bound
        (built once however often it is used) and makes its ``EffOf`` the current token."""
        shape = self.shape(pat.name)
        if shape is None or shape.num_regions:
            raise UnsupportedRule(f"building {pat.name} (unregistered or with regions)")
        key = pat.binding or pat
        if shape.effectful and key in self.built:
            return self.built[key]
        opdef = REGISTRY.lookup(pat.name)
        kids = []
        for is_list, x in zip(shape.groups, pat.operands):
            if is_list and isinstance(x, Var):  # a whole group bound in the source
                kids.append(self.result(x, types_var))
            elif is_list:
                items = [self.result(i, types_var) for i in x]
                if len(items) > CHUNK:
                    raise UnsupportedRule(f"building a group of more than {CHUNK} operands")
                kids.append(f"({self.ctor('Vals', len(items))} {' '.join(items)})")
            else:
                kids.append(self.result(x, types_var))
        if pat.result_types is not None:
            types = f"({self.ctor('Types', len(pat.result_types))} {' '.join(map(self.result_type, pat.result_types))})"
        elif opdef is not None and not opdef.results:
            types = f"({self.ctor('Types', 0)})"
        else:
            types = types_var
        attrs = dict(pat.attrs)
        for k, v in attrs.items():
            if isinstance(v, Native) and v.kind == "attr":
                attrs[k] = self.ask("attr", v)
            elif isinstance(v, Var) and v.name in self.attr_vars:
                attrs[k] = names.var(v.name)
            elif not isinstance(v, A.Attribute):
                raise UnsupportedRule(f"attribute {k} computed by {v!r}")
        props = {k: v for k, v in attrs.items() if opdef is not None and k in opdef.attr_names}
        rest = {k: v for k, v in attrs.items() if k not in props}
        dicts = f"{self.dict_term(props)} {self.dict_term(rest)}"
        if pat.copy_attrs is not None:
            dicts = self.copied_dicts(pat)
        term = f"({self.ctor(pat.name)} {' '.join(kids)} {types} {dicts}"
        if not shape.effectful:
            return term + ")"
        if self.token is None:
            raise UnsupportedRule(f"building the effectful {pat.name} for a root that is not effectful "
                                  "(no effect token to thread it on)")
        v = self.built[key] = self.var("e")
        self.actions.append(f"(let {v} {term} {self.token}))")
        self.token = f"({self.ctor('EffOf')} {v})"
        return v

    def copied_dicts(self, pat: OpPat) -> str:
        """``copy_attrs``: the property and attribute dictionaries of the matched op, as they are.
        Merging them with further attributes would need a dictionary merge in egglog, and another
        op's properties need not be this op's: both are left to the greedy driver."""
        source = self.ops.get(pat.copy_attrs)  # type: ignore[arg-type]
        if source is None or pat.attrs or self.op_info[source][0] is None \
                or self.op_info[source][0].name != pat.name:  # type: ignore[union-attr]
            raise UnsupportedRule(f"copy_attrs of {pat.name} from ${pat.copy_attrs} with further attributes "
                                  "or from an op of another name")
        heads = self.op_info[source][1]
        return f"{heads[1]} {heads[2]}"

    def result_type(self, t: Any) -> str:
        if isinstance(t, Type):
            return self.type_term(t)
        if isinstance(t, TypeOf):
            return self.arg_var(t)
        if isinstance(t, Native) and t.kind == "type":
            return self.ask("type", t)
        raise UnsupportedRule(f"result type {t!r}")

    def dict_term(self, d: dict[str, A.Attribute | str]) -> str:
        """An attribute dictionary; a value given as text is a query variable (computed)."""
        term = f"({self.ctor('DNil')})"
        for name in sorted(d, reverse=True):
            value = d[name]
            attr = value if isinstance(value, str) else self.attr_term(value)
            term = f"({self.ctor('DCons')} {egglog_string(name)} {attr} {term})"
        return term

    def replace(self, pat: OpPat, root: str, values: tuple) -> None:
        """The actions replacing one root: its results, and its effect by the chain built for it."""
        shape, heads = self.op_info[root]
        effectful = self.effectful(pat.name, shape)
        incoming = self.token = heads[-1] if effectful else None
        opdef = REGISTRY.lookup(pat.name)
        if opdef is not None and not opdef.results and all(isinstance(v, OpPat) for v in values):
            for v in values:  # a root without results: the ops replacing it
                self.build(v, heads[0])
        else:
            for i, value in enumerate(values):
                self.actions.append(f"(union ({self.ctor('Res')} {i} {root}) {self.result(value, heads[0])})")
        if effectful:
            if self.token == incoming and not only_reads(pat.name, opdef):
                raise UnsupportedRule(f"erasing {pat.name}, which may write (only ops that only read can be erased)")
            self.actions.append(f"(union ({self.ctor('EffOf')} {root}) {self.token})")
        self.token = None

    def compile(self, ruleset: str, name: str, join_ruleset: str) -> list[str]:
        """The rule's egglog text, preceded by the request rules of its oracles. The rule
        that joins the source pattern goes into ``join_ruleset`` (see :func:`compile_rules`)."""
        rule = self.rule
        roots = [self.source_op(r) for r in rule.roots]
        for check in (*self.constrained, *rule.where):
            self.ask("check", check)
        actions = self.actions
        for pat, root, values in zip(rule.roots, roots, rule.results):
            if values is not None:
                self.replace(pat, root, values)
        if not self.requests:
            return [rule_command(self.atoms, actions, join_ruleset, name)]
        # Staged: the source pattern is joined once, into a relation of its matches; the
        # requests and the rewrite read that relation and the answers. Repeating the whole
        # pattern in every request and in the rewrite made each of them a large join that
        # egglog re-ran on every change (docs/canonicalize.md, "Where the time went").
        # A result hidden after the match (a class found constant: OracleTable.constant_classes)
        # must stop the staged rule as it stops a plain one: its Res atoms are checked again.
        live = [a for a in self.atoms if a.startswith("(= ?") and f"({self.ctor('Res')} " in a]
        later = " ".join((*self.answers, *live, *(head for _, head in self.requests), *actions))
        used = set(_VAR.findall(later))
        cols = [v for v in dict.fromkeys(_VAR.findall(" ".join(self.atoms))) if v in used]
        sorts = _var_sorts(self.eg, self.atoms)
        match = f"M{next(_MATCH_IDS)}"
        found = f"({match} {' '.join(cols)})"
        head = [found, *live]
        out = [f"(relation {match} ({' '.join(sorts[v] for v in cols)}))",
               rule_command(self.atoms, [found], join_ruleset, name + "=match")]
        out += [rule_command([*head, *self.answers[:known]], [request], ruleset, f"{name}?{i}")
                for i, (known, request) in enumerate(self.requests)]
        return out + [rule_command([*head, *self.answers], actions, ruleset, name)]


def _parse(text: str) -> list[Any]:
    """The s-expressions of compiled query atoms as nested lists of tokens (strings kept whole)."""
    stack: list[list[Any]] = [[]]
    for tok in re.findall(r'"(?:[^"\\]|\\.)*"|[()]|[^\s()]+', text):
        if tok == "(":
            stack.append([])
        elif tok == ")":
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    return stack[0]


def _var_sorts(eg: EGraph, atoms: list[str]) -> dict[str, str]:
    """The egglog sort of every variable of ``atoms``, read off the constructors and
    relations it appears under (a match relation must declare its column sorts)."""
    ctors = eg.constructors()
    sorts: dict[str, str] = {}
    work: list[tuple[list[Any], list[str]]] = []  # (arguments, their sorts)

    def term_sort(term: list[Any]) -> str:
        op, arity = ctors[term[0]]
        sig = eg.schema.sig(op)
        work.append((term[1:], eg.arg_sorts(sig, arity if arity is not None else len(sig.children))))
        return names.sort_name(sig.result)

    for atom in _parse(" ".join(atoms)):
        if atom[0] == "=":
            sorts.setdefault(atom[1], term_sort(atom[2]))
        elif atom[0] in _RELATION_SORTS:
            work.append((atom[1:], [s if s == "String" else names.sort_name(s) for s in _RELATION_SORTS[atom[0]]]))
    while work:
        args, arg_sorts = work.pop()
        for arg, sort in zip(args, arg_sorts):
            if isinstance(arg, list):
                term_sort(arg)
            elif arg.startswith("?"):
                sorts.setdefault(arg, sort)
    return sorts


def _commutes(pat: OpPat) -> bool:
    opdef = REGISTRY.lookup(pat.name)
    return opdef is not None and opdef.has_trait(Traits.Commutative) and len(pat.operands) == 2


def _either_choices(rule: Rule) -> list[Rule]:
    """The rule once per order of every Either in its roots (2^k variants); with
    ``commutative`` the two operands of every Commutative op count as an Either."""
    def expand(term: Any) -> list[Any]:
        if rule.commutative and isinstance(term, OpPat) and _commutes(term) \
                and not any(isinstance(o, Either) for o in term.operands):
            term = attrs.evolve(term, operands=(Either(*term.operands),))
        if isinstance(term, Either):
            return [(a, b) for a, b in itertools.product(expand(term.a), expand(term.b))] + \
                   [(b, a) for a, b in itertools.product(expand(term.a), expand(term.b))]
        if isinstance(term, OpPat):
            options = [expand(o) for o in term.operands]
            out = []
            for combo in itertools.product(*options):
                flat: list[Any] = []
                for original, chosen in zip(term.operands, combo):
                    flat.extend(chosen if isinstance(original, Either) else [chosen])
                out.append(attrs.evolve(term, operands=tuple(flat)))
            return out
        return [term]

    return [attrs.evolve(rule, roots=tuple(combo)) for combo in itertools.product(*map(expand, rule.roots))]


def _helpers(ruleset: str) -> list[str]:
    """``DictHas d name attr`` for every entry of every attribute dictionary."""
    cons = names.ctor("DCons", None)
    return [rule_command([f"(= ?d ({cons} ?n ?a ?r))"], ["(DictHas ?d ?n ?a)"], ruleset, f"dict-has-head@{ruleset}"),
            rule_command([f"(= ?d ({cons} ?n ?a ?r))", "(DictHas ?r ?m ?b)"], ["(DictHas ?d ?m ?b)"], ruleset,
                         f"dict-has-tail@{ruleset}")]


def ops_present(op: Operation) -> set[str]:
    """The names of the ops in the regions of ``op``."""
    return {o.name for region in op.regions for block in region.blocks for first in block for o in first.walk()}


def rules_for(present: set[str], rules: Iterable[Rule]) -> tuple[Rule, ...]:
    """The rules whose source ops are all ``present`` (:func:`ops_present`) or built by rules
    chosen so (a FusedBatchNorm becomes a Mul that another rule folds into a Conv2D): the
    others can never match, and each would cost egglog ~3 ms to compile and an idle search
    per iteration (eqsat with arith-canonical on a 3-op function spent 1.4 s loading them all)."""
    rules = tuple(rules)
    reachable, chosen = set(present), set()
    grown = True
    while grown:  # a few rounds: each adds the ops the newly chosen rules build
        grown = False
        for i, r in enumerate(rules):
            if i not in chosen and all(p.name in reachable for p in r.source_ops()):
                chosen.add(i)
                built = {p.name for p in r.result_ops()} - reachable
                reachable |= built
                grown = grown or bool(built)
    return tuple(r for i, r in enumerate(rules) if i in chosen)


def compile_rules(eg: EGraph, rules: Iterable[Rule]) -> Compiled:
    """Add ``rules`` to ``eg`` (ruleset "expand" for rules tagged so, else "simplify").

    The join of a nested source pattern (an op matched through another op's result) goes
    to ruleset "simplify-nested": egglog 13.2 plans such a join to scan a whole op table
    whenever that table changed, however few rows are new (0.05 s per rule and iteration
    at 100k ops), while a one-op pattern costs what is new. The default schedule
    (lower_pipeline.default_schedule) saturates "simplify" between single iterations of
    "simplify-nested", so long cascades of cheap rewrites do not pay for the joins.
    """
    out = Compiled()
    commands: list[str] = []
    if eg not in _WITH_DICT_HAS:
        eg.run_commands([f"(relation DictHas ({names.sort_name('Dict')} String {names.sort_name('Attr')}))"])
        _WITH_DICT_HAS.add(eg)
    for rule in rules:
        ruleset = EXPAND_TAG if EXPAND_TAG in rule.tags else "simplify"
        nested = sum(1 for _ in rule.source_ops()) > len(rule.roots)
        join_ruleset = NESTED_RULESET if nested and ruleset == "simplify" else ruleset
        try:
            variants = _either_choices(rule)
            texts = [_RuleCompiler(eg, v).compile(ruleset, rule.name if len(variants) == 1 else f"{rule.name}#{i}",
                                                  join_ruleset)
                     for i, v in enumerate(variants)]
        except UnsupportedRule as why:
            out.skipped[rule.name] = str(why)
            continue
        declared = eg.ruleset_commands(ruleset)
        if declared:
            commands += [*declared, *_helpers(ruleset), *oracle_table(eg).helpers(ruleset)]
        commands += eg.ruleset_commands(join_ruleset)
        for i, text in enumerate(texts):
            name = rule.name if len(texts) == 1 else f"{rule.name}#{i}"
            commands += text
            eg.rulesets[ruleset].append(name)
            out.rules.setdefault(ruleset, []).append(name)
        commands += oracle_table(eg).constant_classes(ruleset, (p.name for p in rule.source_ops()))
    eg.run_commands(commands)
    return out

