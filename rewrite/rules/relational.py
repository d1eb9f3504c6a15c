"""Compile relational rules (``egraft.patterns.relational``) and their declarations to egglog.

The sibling of ``compile.py`` for the second kind of rule declaration: where a rewrite
rule needs the IR encoding (op records, operand groups, oracles), a relational rule names
only what its :class:`~egraft.patterns.relational.Declarations` declare, so each
declaration and each rule becomes one egglog command, word for word. Declared names are
used as they are (letters and digits, so they cannot meet the engine's own names, which
all hold a ``_``): the facts are loaded into relations and results read from functions by
those names. Rules go into their ruleset (a stratum) through the engine's
:func:`~egraft.rewrite.engine.egraph.rule_command`, as compiled rewrites do.
"""

from __future__ import annotations

from collections.abc import Iterable

from egraft.patterns.relational import (App, Constructor, Declarations, Equal, Function, Relation, RelationalRule,
                                        SetTo, Sort, Term, UnionOf)
from egraft.patterns.rule import Var

from egraft.rewrite.engine import names
from egraft.rewrite.engine.egraph import EGraph, rule_command

#: egglog's merge expression per lattice (patterns.relational.MERGES).
_MERGE = {"union": "(set-union old new)", "max": "(max old new)", "min": "(min old new)"}


def _declaration(item: Sort | Constructor | Function | Relation) -> str:
    if isinstance(item, Sort):
        return f"(sort {item.name} (Set {item.element.name}))" if item.kind == "set" else f"(sort {item.name})"
    args = " ".join(s.name for s in item.args)
    if isinstance(item, Relation):
        return f"(relation {item.name} ({args}))"
    if isinstance(item, Constructor):
        return f"(constructor {item.name} ({args}) {item.sort.name})"
    return f"(function {item.name} ({args}) {item.result.name} :merge {_MERGE[item.merge]})"


def _term(t: Term) -> str:
    if isinstance(t, Var):
        return names.var(t.name)
    if isinstance(t, App):
        return f"({' '.join([t.head.name, *map(_term, t.args)])})"
    return str(t)


def _atom(atom: App | Equal) -> str:
    return f"(= {_term(atom.a)} {_term(atom.b)})" if isinstance(atom, Equal) else _term(atom)


def _action(action: App | UnionOf | SetTo) -> str:
    if isinstance(action, UnionOf):
        return f"(union {_term(action.a)} {_term(action.b)})"
    if isinstance(action, SetTo):
        return f"(set {_term(action.target)} {_term(action.value)})"
    return _term(action)


def add_relational_rules(eg: EGraph, declarations: Declarations, rules: Iterable[RelationalRule]) -> None:
    """Declare ``declarations`` in ``eg`` and add ``rules``, each to its ruleset."""
    commands = [_declaration(item) for item in declarations.items]
    for rule in rules:
        commands += eg.ruleset_commands(rule.ruleset)
        commands.append(rule_command(map(_atom, rule.when), map(_action, rule.then), rule.ruleset, rule.name))
        eg.rulesets[rule.ruleset].append(rule.name)
    eg.run_commands(commands)
