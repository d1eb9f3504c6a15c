"""Declaration-time checks of a rule against the op records.

A rule that names an op that cannot exist, gives the wrong number of
operands, or uses a variable its source never binds is wrong wherever it
runs; saying so when the rule is declared (with its `file:line`) is much
cheaper than a KeyError deep in a rewrite of a 100k-op graph.

Variables get a kind from where the source binds them: "value" (an operand),
"values" (a whole variadic group), "attr" (an attribute) or "op" (an op
binding).  A name bound with two kinds is an error.
"""

from __future__ import annotations

from typing import Any

from egraft.ir.core import attributes as A
from egraft.ir.effects import declared_effect_free, only_reads
from egraft.ir.records.opdef import SINGLE, OpDef
from egraft.ir.records.registry import REGISTRY
from egraft.ir.core.types import Type

from .rule import (AllOf, AnyOf, Check, ConstOf, Either, Native, Not, OpPat, ResultOf, Rule, TypeOf, Var, walk_ops)


def lookup_op(rule: Rule, name: str) -> OpDef | None:
    """The record of `name`; an error for unknown dialects and for unknown ops of closed ones."""
    if "." not in name:
        raise rule.error(f"op name '{name}' needs a dialect prefix")
    opdef = REGISTRY.lookup(name)
    if opdef is not None:
        return opdef
    dialect = REGISTRY.dialect_of(name)
    if dialect is None:
        raise rule.error(f"unknown dialect in op name '{name}'")
    if not dialect.open:
        raise rule.error(f"unknown op '{name}' (dialect '{dialect.name}' is closed)")
    return None


def operand_slots(pat: OpPat) -> int:
    """How many operand positions a pattern fills (`either` fills two)."""
    return sum(2 if isinstance(o, Either) else 1 for o in pat.operands)


def has_variadic_groups(opdef: OpDef) -> bool:
    return any(d.kind != SINGLE for d in opdef.operands)


def _check_arity(rule: Rule, pat: OpPat, opdef: OpDef | None) -> None:
    if opdef is None:
        return
    slots = operand_slots(pat)
    if slots != len(opdef.operands):
        unit = "operand groups" if has_variadic_groups(opdef) else "operands"
        raise rule.error(f"'{pat.name}' takes {len(opdef.operands)} {unit}, the pattern gives {slots}")


def result_count(opdef: OpDef | None) -> int | None:
    """The fixed number of results of an op, or None when it varies or is unknown."""
    if opdef is None or any(d.kind != SINGLE for d in opdef.results):
        return None
    return len(opdef.results)


class _Scope:
    """Names bound so far, with their kinds."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.kinds: dict[str, str] = {}
        self.ops: dict[str, OpDef | None] = {}

    def bind(self, name: str, kind: str) -> None:
        old = self.kinds.setdefault(name, kind)
        if old != kind:
            raise self.rule.error(f"'{name}' is bound both as {old} and as {kind}")

    def need(self, name: str, what: str) -> str:
        if name == "_":
            raise self.rule.error(f"the wildcard cannot be used in {what}")
        kind = self.kinds.get(name)
        if kind is None:
            raise self.rule.error(f"'{name}' is used in {what} but not bound in the source")
        return kind


def _bind_source(scope: _Scope, pat: OpPat) -> None:
    rule = scope.rule
    opdef = lookup_op(rule, pat.name)
    _check_arity(rule, pat, opdef)
    if pat.binding is not None:
        scope.bind(pat.binding, "op")
        scope.ops[pat.binding] = opdef
    if pat.result_types is not None or pat.copy_attrs is not None:
        raise rule.error(f"'{pat.name}' in the source cannot give result types or copy attributes")
    variadic = opdef is not None and has_variadic_groups(opdef)
    for i, o in enumerate(pat.operands):
        group_kind = opdef.operands[i].kind if variadic and i < len(opdef.operands) else SINGLE  # type: ignore[union-attr]
        _bind_operand(scope, o, "values" if group_kind != SINGLE else "value")
    for name, value in pat.attrs:
        if isinstance(value, Var):
            if not value.is_wildcard:
                scope.bind(value.name, "attr")
        elif not isinstance(value, A.Attribute):
            raise rule.error(f"attribute '{name}' of source op '{pat.name}' must be an attribute or a variable")
    if pat.after_op is not None:
        for named in (pat.name, pat.after_op.name):
            if not is_effectful(named):
                raise rule.error(f"'{named}' has no effects, so it is on no effect chain: .after() needs "
                                 "effectful ops on both sides")
        _bind_source(scope, pat.after_op)


def is_effectful(name: str) -> bool:
    """Whether ops named `name` take part in their block's effect chain (docs/encoding.md)."""
    return not declared_effect_free(name, REGISTRY.lookup(name))


def _check_effects(rule: Rule, root: OpPat, values: tuple) -> None:
    """What replacing an effectful root may do (rule.py, "Effects"): built effectful ops need an
    effectful root to take the place of, and building none erases the root, which only an op
    that at most reads allows."""
    built = [p.name for v in values for p in walk_ops(v)]
    builds = any(map(is_effectful, built))
    if not is_effectful(root.name):  # an unregistered op built here is the user's call, as in MLIR
        if any(is_effectful(n) and REGISTRY.lookup(n) is not None for n in built):
            raise rule.error(f"builds an effectful op for '{root.name}', which has no effects: there is "
                             "no place on an effect chain to put it")
        return
    if builds and rule.is_multi_root:
        raise rule.error("a rule with several roots cannot build effectful ops (the greedy driver "
                         "inserts built ops before the first root, which could reorder effects)")
    if not builds and not only_reads(root.name, REGISTRY.lookup(root.name)):
        raise rule.error(f"'{root.name}' may write memory, and the result builds no effectful op to "
                         "replace it: its effect would be dropped (only ops that only read can be erased)")


def _bind_operand(scope: _Scope, o: Any, var_kind: str) -> None:
    rule = scope.rule
    if isinstance(o, Var):
        if not o.is_wildcard:
            scope.bind(o.name, var_kind)
    elif isinstance(o, OpPat):
        _bind_source(scope, o)
    elif isinstance(o, ResultOf):
        if not isinstance(o.op, OpPat):
            scope.need(o.op, "the source")
            return
        _bind_source(scope, o.op)
        count = result_count(REGISTRY.lookup(o.op.name))
        if count is not None and not 0 <= o.index < count:
            raise rule.error(f"'{o.op.name}' has {count} results, the pattern uses result #{o.index}")
    elif isinstance(o, Either):
        _bind_operand(scope, o.a, "value")
        _bind_operand(scope, o.b, "value")
    elif isinstance(o, tuple):
        for item in o:
            _bind_operand(scope, item, "value")
    else:
        raise rule.error(f"not a source operand: {o!r}")


def _check_expr(scope: _Scope, e: Any, what: str, built: set[str]) -> None:
    """A result, check or native argument: every name it uses must be bound."""
    rule = scope.rule
    if isinstance(e, Var):
        if e.name not in built:
            scope.need(e.name, what)
    elif isinstance(e, (TypeOf, ConstOf)):
        kind = scope.need(e.var, what)
        if kind not in ("value", "op"):
            raise rule.error(f"{type(e).__name__}('{e.var}') needs a value, '{e.var}' is bound as {kind}")
    elif isinstance(e, ResultOf):
        if isinstance(e.op, OpPat):
            _check_result_op(scope, e.op, what, built)
        elif e.op not in built and scope.need(e.op, what) != "op":
            raise rule.error(f"'{e.op}' is not an op binding, it has no result #{e.index}")
    elif isinstance(e, OpPat):
        _check_result_op(scope, e, what, built)
    elif isinstance(e, Native):
        for a in e.args:
            _check_expr(scope, a, f"native '{e.name}'", built)
    elif isinstance(e, Either):
        raise rule.error(f"either() is only for source patterns, not {what}")
    elif isinstance(e, tuple):
        for item in e:
            _check_expr(scope, item, what, built)
    elif not isinstance(e, (A.Attribute, Type, int, float, str, bool, type(None))):
        raise rule.error(f"cannot use {e!r} in {what}")


def _check_result_op(scope: _Scope, pat: OpPat, what: str, built: set[str]) -> None:
    rule = scope.rule
    opdef = lookup_op(rule, pat.name)
    _check_arity(rule, pat, opdef)
    for o in pat.operands:
        if isinstance(o, Native) and o.kind != "build":
            raise rule.error(f"native '{o.name}' of kind {o.kind} cannot be an operand of '{pat.name}'")
        _check_expr(scope, o, f"the operands of '{pat.name}'", built)
    for name, value in pat.attrs:
        if isinstance(value, Native) and value.kind != "attr":
            raise rule.error(f"native '{value.name}' of kind {value.kind} cannot give attribute '{name}'")
        if isinstance(value, Var) and scope.need(value.name, f"attribute '{name}'") != "attr":
            raise rule.error(f"attribute '{name}' of '{pat.name}' is given '{value.name}', which is not an attribute")
        _check_expr(scope, value, f"attribute '{name}' of '{pat.name}'", built)
    if pat.copy_attrs is not None and scope.need(pat.copy_attrs, "copy_attrs") != "op":
        raise rule.error(f"copy_attrs of '{pat.name}' names '{pat.copy_attrs}', which is not an op binding")
    for t in pat.result_types or ():
        if isinstance(t, Native) and t.kind != "type":
            raise rule.error(f"native '{t.name}' of kind {t.kind} cannot give a result type")
        if not isinstance(t, (Type, TypeOf, Native)):
            raise rule.error(f"result types of '{pat.name}' must be types, TypeOf or natives, not {t!r}")
        _check_expr(scope, t, f"the result types of '{pat.name}'", built)
    if pat.binding is not None:
        if pat.binding in scope.kinds:
            raise rule.error(f"result op binding '{pat.binding}' is already bound in the source")
        built.add(pat.binding)


def _check_check(scope: _Scope, c: Any) -> None:
    if isinstance(c, Check):
        for a in c.args:
            _check_expr(scope, a, f"check '{c.name}'", set())
    elif isinstance(c, (AllOf, AnyOf)):
        for sub in c.checks:
            _check_check(scope, sub)
    elif isinstance(c, Not):
        _check_check(scope, c.check)
    else:
        raise scope.rule.error(f"not a check: {c!r}")


def source_kinds(rule: Rule) -> dict[str, str]:
    """The kind of every name the source binds ("value", "values", "attr", "op")."""
    scope = _Scope(rule)
    for root in rule.roots:
        _bind_source(scope, root)
    return scope.kinds


def validate_rule(rule: Rule) -> None:
    """Raise `RuleError` (with the rule's origin) for anything that cannot be right."""
    if not rule.name:
        raise rule.error("a rule needs a name")
    scope = _Scope(rule)
    for i, root in enumerate(rule.roots):
        before = set(scope.kinds)
        _bind_source(scope, root)
        if i and not (_names_in(root) & before):
            raise rule.error(f"root #{i} ('{root.name}') shares no variable with the roots before it")
    for c in rule.where:
        _check_check(scope, c)
    built: set[str] = set()
    for i, (root, values) in enumerate(zip(rule.roots, rule.results)):
        if values is None:
            continue
        count = result_count(REGISTRY.lookup(root.name))
        if count == 0 and values and not all(isinstance(v, OpPat) for v in values):
            raise rule.error(f"root '{root.name}' has no results: its result must be the op(s) replacing it")
        if count is not None and count != 0 and len(values) != count:
            raise rule.error(f"root '{root.name}' has {count} results, the rule gives {len(values)} replacements")
        _check_effects(rule, root, values)
        for v in values:
            if isinstance(v, Native) and v.kind != "build":
                raise rule.error(f"native '{v.name}' of kind {v.kind} cannot replace a value; wrap it in an op")
            _check_expr(scope, v, "the result", built)
    if all(v is None for v in rule.results):
        raise rule.error("a rule must replace at least one root")


def _names_in(term: Any) -> set[str]:
    """Names a source term mentions (variables, op bindings, ResultOf references)."""
    if isinstance(term, Var):
        return set() if term.is_wildcard else {term.name}
    if isinstance(term, OpPat):
        out = {term.binding} if term.binding else set()
        for o in term.operands:
            out |= _names_in(o)
        for _, v in term.attrs:
            out |= _names_in(v)
        return out | _names_in(term.after_op)
    if isinstance(term, ResultOf):
        return _names_in(term.op) if isinstance(term.op, OpPat) else {term.op}
    if isinstance(term, Either):
        return _names_in(term.a) | _names_in(term.b)
    if isinstance(term, tuple):
        return set().union(*(_names_in(t) for t in term)) if term else set()
    return set()
