"""Matching rule source DAGs against IR ops (the greedy driver's matcher).

A match is an environment: variable name -> IR value (or tuple of values for
a variadic group), attribute, or op (op bindings), plus the matched ops in
pre-order (their locations are fused into the built ops'). Matching is a
generator so that `either` and commutative operands backtrack without any
bookkeeping: each alternative extends its own copy of the environment.

Multi-root rules are matched from the first root; every further root is
looked for among the users of a value an earlier root already bound (Tensat's
rules share their operands), falling back to the ops of the same block.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterator

from egraft.ir import Operation, OpResult, Value
from egraft.ir.effects import has_side_effects
from egraft.ir.records.opdef import SINGLE
from egraft.ir.core.traits import Traits
from egraft.patterns.rule import (WILDCARD_NAME, AllOf, AnyOf, Check, ConstOf, Either, Native, Not, OpPat, ResultOf,
                                  Rule, TypeOf, Var)

Env = dict[str, Any]


class NoValue(Exception):
    """An argument could not be evaluated (no constant behind `ConstOf`, a native returned None)."""


def constant_attr(value: Value) -> Any:
    """The `value` attribute of the ConstantLike op producing `value`, or None."""
    if not isinstance(value, OpResult):
        return None
    owner = value.owner
    d = owner.opdef
    if d is None or not d.has_trait(Traits.ConstantLike):
        return None
    return owner.attr("value")


def _as_value(bound: Any) -> Any:
    """An op binding used where a value is meant is its single result."""
    if isinstance(bound, Operation):
        if len(bound.results) != 1:
            raise NoValue(f"'{bound.name}' has {len(bound.results)} results; index it")
        return bound.results[0]
    return bound


def evaluate(e: Any, env: Env) -> Any:
    """A check or native argument in a match environment."""
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, TypeOf):
        return _as_value(env[e.var]).type
    if isinstance(e, ConstOf):
        c = constant_attr(_as_value(env[e.var]))
        if c is None:
            raise NoValue(f"'{e.var}' is not produced by a constant")
        return c
    if isinstance(e, ResultOf) and isinstance(e.op, str):
        return env[e.op].results[e.index]
    if isinstance(e, Native):
        out = e.fn(*(evaluate(a, env) for a in e.args))
        if out is None:
            raise NoValue(f"native '{e.name}' gave nothing")
        return out
    return e


def holds(check: Any, env: Env) -> bool:
    """Whether a check (or a composition of checks) holds in `env`."""
    if isinstance(check, Check):
        try:
            return bool(check.fn(*(evaluate(a, env) for a in check.args)))
        except NoValue:
            return False
    if isinstance(check, AllOf):
        return all(holds(c, env) for c in check.checks)
    if isinstance(check, AnyOf):
        return any(holds(c, env) for c in check.checks)
    if isinstance(check, Not):
        return not holds(check.check, env)
    raise TypeError(f"not a check: {check!r}")


_OPS = "__ops__"  # reserved key: the matched ops so far, in pre-order


class Match:
    """One match: the environment, the matched ops (pre-order) and the root ops."""

    __slots__ = ("env", "ops", "roots")

    def __init__(self, env: Env, ops: tuple[Operation, ...], roots: list[Operation]) -> None:
        self.env = env
        self.ops = ops
        self.roots = roots


class Matcher:
    """Matches one rule; `rule.commutative` adds both operand orders of Commutative ops."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.commutative = rule.commutative
        # Operand orders per operand tuple of the rule (keyed by id: the rule keeps them alive).
        self._orders: dict[tuple[int, bool], list[tuple]] = {}
        # Per operand of the first root, the op name its producer must have (None: any);
        # None overall when the root has Either or grouped operands (no quick test).
        root = rule.roots[0]
        simple = all(not isinstance(o, (Either, tuple)) for o in root.operands)
        self._wanted: list[str | None] | None = [_producer_name(o) for o in root.operands] if simple else None
        if self._wanted is not None and not any(self._wanted):
            self._wanted = None
        self._wanted_swaps = self.commutative

    # ------------------------------------------------------------ entry point

    def matches(self, root: Operation) -> Iterator[Match]:
        """Every way the rule matches with its first root at `root` (checks included)."""
        if self._quick_reject(root):
            return
        for env in self._op(self.rule.roots[0], root, {_OPS: ()}):
            yield from self._more_roots(1, env, [root])

    def _more_roots(self, k: int, env: Env, root_ops: list[Operation]) -> Iterator[Match]:
        if k == len(self.rule.roots):
            if all(holds(c, env) for c in self.rule.where):
                ops = env.pop(_OPS)
                yield Match(env, ops, root_ops)
            return
        pat = self.rule.roots[k]
        for cand in self._candidates(pat, env, root_ops[0]):
            if cand in root_ops or cand.parent is not root_ops[0].parent:
                continue
            for env2 in self._op(pat, cand, env):
                yield from self._more_roots(k + 1, env2, root_ops + [cand])

    def _candidates(self, pat: OpPat, env: Env, first: Operation) -> list[Operation]:
        """Ops that could be root `pat`: users of an already bound operand, else the block's ops."""
        for o in _flat_operands(pat):
            if isinstance(o, Var) and o.name in env:
                bound = env[o.name]
                values = bound if isinstance(bound, tuple) else (_as_value(bound),)
                return list(dict.fromkeys(u for v in values if isinstance(v, Value)
                                          for u in v.users if u.name == pat.name))
        block = first.parent
        return [o for o in block if o.name == pat.name] if block is not None else []

    def _quick_reject(self, root: Operation) -> bool:
        """A cheap test before the backtracking matcher: the producers of the root's
        operands must carry the op names the pattern nests there (in some allowed order).
        Most ops a rule is tried on fail here, without building any environment."""
        wanted = self._wanted
        if wanted is None:
            return False
        operands = root.operands
        if len(operands) != len(wanted):
            return False  # variadic groups: leave it to the matcher
        have = [v.owner.name if isinstance(v, OpResult) else None for v in operands]
        if all(w is None or w == h for w, h in zip(wanted, have)):
            return False
        return not (self._wanted_swaps and len(have) == 2
                    and all(w is None or w == h for w, h in zip(wanted, reversed(have))))

    # ------------------------------------------------------------ ops and operands

    def _op(self, pat: OpPat, op: Operation, env: Env) -> Iterator[Env]:
        if op.name != pat.name:
            return
        env = dict(env)
        if pat.binding is not None:
            bound = env.get(pat.binding)
            if bound is not None and bound is not op:
                return
            env[pat.binding] = op
        for name, want in pat.attrs:
            if not self._attr(op, name, want, env):
                return
        env[_OPS] = env[_OPS] + (op,)
        d = op.opdef
        if d is not None and any(g.kind != SINGLE for g in d.operands):
            groups = d.operand_groups(op)
            values: list[Any] = [groups[g.name] for g in d.operands]
            values = [tuple(v) if isinstance(v, list) else v for v in values]
        else:
            values = list(op.operands)
        if pat.after_op is None:
            yield from self._operand_list(pat.operands, values, env, self._commutes(op))
            return
        previous = effect_predecessor(op)
        if previous is not None:
            for env2 in self._operand_list(pat.operands, values, env, self._commutes(op)):
                yield from self._op(pat.after_op, previous, env2)

    def _commutes(self, op: Operation) -> bool:
        d = op.opdef
        return self.commutative and d is not None and d.has_trait(Traits.Commutative) and len(op.operands) == 2

    def _operand_list(self, pats: tuple, values: list[Any], env: Env, commutes: bool) -> Iterator[Env]:
        """Match operand patterns against values; each Either (and a Commutative
        op's pair, when asked) is tried in both orders."""
        key = (id(pats), commutes)
        orders = self._orders.get(key)
        if orders is None:
            orders = self._orders[key] = _operand_orders(pats, commutes)
        if len(orders[0]) != len(values):
            return
        for order in orders:
            yield from self._seq(order, values, 0, env)

    def _seq(self, pats: tuple, values: list[Any], i: int, env: Env) -> Iterator[Env]:
        """Match pats[i:] against values[i:].  Variables have at most one outcome and are
        handled in a loop; only nested patterns (which may backtrack) recurse."""
        n = len(pats)
        while i < n:
            pat, value = pats[i], values[i]
            if type(pat) is not Var:
                for env2 in self._value(pat, value, env):
                    yield from self._seq(pats, values, i + 1, env2)
                return
            name = pat.name
            if name == WILDCARD_NAME:
                pass
            elif name in env:
                if not _same(env[name], value):
                    return
            else:
                c = pat.constraint
                if c is not None and not all(c(v.type) for v in (value if isinstance(value, tuple) else (value,))):
                    return
                env = {**env, name: value}
            i += 1
        yield env

    def _value(self, pat: Any, value: Any, env: Env) -> Iterator[Env]:
        if isinstance(pat, Var):
            if pat.is_wildcard:
                yield env
            elif pat.name in env:
                if _same(env[pat.name], value):
                    yield env
            elif pat.constraint is None or all(
                    pat.constraint(v.type) for v in (value if isinstance(value, tuple) else (value,))):
                yield {**env, pat.name: value}
        elif isinstance(pat, tuple):
            if isinstance(value, tuple) and len(value) == len(pat):
                yield from self._seq(pat, list(value), 0, env)
        elif isinstance(pat, OpPat):
            if isinstance(value, OpResult) and value.index == 0:
                yield from self._op(pat, value.owner, env)
        elif isinstance(pat, ResultOf):
            if not isinstance(value, OpResult) or value.index != pat.index:
                return
            if isinstance(pat.op, OpPat):
                yield from self._op(pat.op, value.owner, env)
            elif env.get(pat.op) is value.owner:
                yield env

    def _attr(self, op: Operation, name: str, want: Any, env: Env) -> bool:
        """Match one attribute.  An absent one reads as the record's default; an
        absent optional one binds None (as DRR binds a null attribute), which the
        builder leaves out again."""
        have = op.attr(name)
        if have is None and op.opdef is not None:
            have = next((a.default for a in op.opdef.attributes if a.name == name), None)
        if not isinstance(want, Var):
            return have == want
        if want.is_wildcard:
            return True
        if want.name in env:
            return env[want.name] == have
        if want.constraint is not None and (have is None or not want.constraint(have)):
            return False
        env[want.name] = have
        return True


def effect_predecessor(op: Operation) -> Operation | None:
    """The op whose effect ``op`` comes after (``OpPat.after``): the nearest effectful op before
    it in its block, as the e-graph encoding threads a block's effect token; None at the
    block's start. A walk passes only the effect-free ops right before ``op``, so asking it of
    every op of a block passes each op once (per rule asking)."""
    previous = op.prev
    while previous is not None and not has_side_effects(previous):
        previous = previous.prev
    return previous


def _producer_name(pattern: Any) -> str | None:
    """The op name an operand pattern requires of the value's producer."""
    if isinstance(pattern, OpPat):
        return pattern.name
    if isinstance(pattern, ResultOf) and isinstance(pattern.op, OpPat):
        return pattern.op.name
    return None


def _operand_orders(pats: tuple, commutes: bool) -> list[tuple]:
    """Every slot order to try: both orders of each Either, and of a commutative pair."""
    choices = [((p.a, p.b), (p.b, p.a)) if isinstance(p, Either) else ((p,),) for p in pats]
    orders: list[tuple] = []
    for choice in itertools.product(*choices):
        order = tuple(x for part in choice for x in part)
        orders.append(order)
        if commutes and len(order) == 2:
            orders.append((order[1], order[0]))
    return list(dict.fromkeys(orders))


def _same(bound: Any, value: Any) -> bool:
    """A repeated variable: the same value (an op binding stands for its single result)."""
    if bound is value:
        return True
    if isinstance(bound, Operation):
        return len(bound.results) == 1 and bound.results[0] is value
    return isinstance(bound, tuple) and isinstance(value, tuple) and len(bound) == len(value) \
        and all(a is b for a, b in zip(bound, value))


def _flat_operands(pat: OpPat) -> list[Any]:
    out: list[Any] = []
    for o in pat.operands:
        if isinstance(o, Either):
            out += [o.a, o.b]
        elif isinstance(o, tuple):
            out += list(o)
        else:
            out.append(o)
    return out
