"""Named rule sets: how users add rules and how passes pick them (`rules=a,b`).

A rule set declares everything running it needs, so that a pass only names sets
and a driver (`rewrite/phases.py` runs the declaration):

* `rules`: rules either driver runs (the e-graph compiles them);
* `greedy_rules`: rules only the greedy driver can run (they check IR values such as
  `has_one_use`, build ops with regions or unregistered ops, or use "build" natives);
  on the e-graph driver they run greedily after extraction, so both drivers apply
  every rule of a set;
* `structural`: names of structural steps (`rewrite/structural/`), IR surgery a
  rule cannot state (regions inlined or restructured); they run
  after the rules, some before as well, and only where their ops occur.

    register_rule_set("memref-affine-canonical", RULES, "affine.apply folding ...",
                      structural=("affine-loops", "affine-maps"))

Sets are registered by name in one process-wide table, like passes; registering a
name twice is an error unless `replace=True`, so two modules cannot silently
shadow each other's rules.  Built-in sets live in modules imported lazily by
`rule_set()`, so importing `egraft.patterns` stays cheap.  That the built-in
sets declare their greedy-only rules truly (the e-graph compiler refuses exactly
those) is tested in tests/patterns/test_rule_sets.py.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

import attrs

from .rule import Rule, RuleError


@attrs.frozen
class RuleSet:
    """One named set: its rules (every one, in order), which of them are greedy-only, and its
    structural steps (above)."""

    name: str
    rules: tuple[Rule, ...]
    doc: str = ""
    greedy_rules: tuple[Rule, ...] = ()
    structural: tuple[str, ...] = ()


@attrs.frozen
class Declaration:
    """What running several sets in order needs: their rules and steps, each once."""

    rules: tuple[Rule, ...]         # every rule, in set order (the greedy driver's tie order)
    greedy_rules: tuple[Rule, ...]  # those only the greedy driver runs
    structural: tuple[str, ...]

    @property
    def egraph_rules(self) -> tuple[Rule, ...]:
        """The rules the e-graph compiles."""
        return _without(self.rules, self.greedy_rules)


def _without(rules: tuple[Rule, ...], dropped: Iterable[Rule]) -> tuple[Rule, ...]:
    gone = set(map(id, dropped))
    return tuple(r for r in rules if id(r) not in gone)


_SETS: dict[str, RuleSet] = {}

# Built-in sets: name -> module that registers it when imported.
_BUILTIN = {
    "arith-canonical": "egraft.patterns.arith_rules",
    "tf-canonical": "egraft.patterns.tf_rules",
    "tf-multi": "egraft.patterns.tf_rules",
    "tf-fast-math": "egraft.patterns.tf_rules",
    "memref-affine-canonical": "egraft.patterns.memref_affine_rules",
    "memref-cast-folding": "egraft.patterns.memref_cast_rules",
    "affine-scalrep": "egraft.patterns.affine_scalrep",
    "tf-batchnorm-folding": "egraft.patterns.grappler.batchnorm",
    "tf-constant-folding": "egraft.patterns.grappler.constant_folding",
    "tf-arithmetic": "egraft.patterns.grappler.arithmetic",
    "tf-remapper": "egraft.patterns.grappler.remapper",
    "tf-remapper-onednn": "egraft.patterns.grappler.remapper",
}


def register_rule_set(name: str, rules: Iterable[Rule], doc: str = "", replace: bool = False,
                      greedy_rules: Iterable[Rule] = (), structural: Iterable[str] = ()) -> RuleSet:
    """Register `rules` (and `greedy_rules`, `structural` steps) under `name`; rule names
    must be unique within a set."""
    rules, greedy_rules = tuple(rules), tuple(greedy_rules)
    seen: dict[str, Rule] = {}
    for r in rules + greedy_rules:
        if not isinstance(r, Rule):
            raise TypeError(f"rule set '{name}': {r!r} is not a Rule")
        if r.name in seen:
            raise RuleError(f"duplicate rule name in set '{name}' (first at {seen[r.name].origin})", r.name, r.origin)
        seen[r.name] = r
    if name in _SETS and not replace:
        raise ValueError(f"rule set '{name}' is already registered")
    made = _SETS[name] = RuleSet(name, rules + greedy_rules, doc, greedy_rules, tuple(structural))
    return made


def rule_set(name: str) -> RuleSet:
    """The set registered as `name` (loading a built-in set on first use)."""
    if name not in _SETS and name in _BUILTIN:
        importlib.import_module(_BUILTIN[name])
    try:
        return _SETS[name]
    except KeyError:
        raise KeyError(f"unknown rule set '{name}' (known: {', '.join(rule_sets())})") from None


def rule_sets() -> list[str]:
    """Names of every registered or built-in rule set, sorted."""
    return sorted(set(_SETS) | set(_BUILTIN))


def rules_of(names: Iterable[str]) -> tuple[Rule, ...]:
    """Every rule of several sets in order (`rules=a,b`), each rule once."""
    return declaration(names).rules


def declaration(names: Iterable[str], keep: Callable[[str], bool] = lambda name: True) -> Declaration:
    """The rules and structural steps of several sets in order (`rules=a,b`), each once,
    without the rules and steps whose name `keep` refuses (`disable-patterns=`)."""
    rules: dict[tuple[str, str], Rule] = {}
    greedy: list[Rule] = []
    steps: dict[str, None] = {}
    for n in names:
        found = rule_set(n)
        greedy_only = set(map(id, found.greedy_rules))
        for r in found.rules:
            key = (r.name, str(r.origin))
            if keep(r.name) and key not in rules:
                rules[key] = r
                if id(r) in greedy_only:
                    greedy.append(r)
        steps.update((s, None) for s in found.structural if keep(s))
    return Declaration(tuple(rules.values()), tuple(greedy), tuple(steps))
