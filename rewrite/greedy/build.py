"""Building a rule's result DAG in the IR and replacing the matched roots.

A root without results (`memref.store`) is replaced by the ops its result builds. Built
ops take the root's place, so effectful ones keep the order of the block's effects.
The result ops are built detached first: if a native declines (returns None)
or a constant is missing halfway, the partial DAG is dropped and the IR is
untouched, so a rule either applies whole or not at all.  Built ops get the
fused location of every matched op, as MLIR's DRR does, and are inserted
before the first root (which all bound values dominate for a single root;
multi-root matches are checked explicitly).
"""

from __future__ import annotations

from typing import Any, Sequence

from egraft.ir import Builder, Operation, OpResult, Value
from egraft.ir.core import attributes as A
from egraft.ir.core.location import fuse
from egraft.ir.records.opdef import SINGLE
from egraft.ir.core.traits import Trait, Traits
from egraft.ir.records.registry import REGISTRY
from egraft.ir.core.types import Type, i32
from egraft.patterns.rule import Native, OpPat, ResultOf, Rule, RuleError, TypeOf, Var

from egraft.rewrite.greedy.match import Match, NoValue, evaluate


class _Build:
    """The state of building one match's results."""

    def __init__(self, rule: Rule, match: Match) -> None:
        self.rule = rule
        self.env = match.env
        self.loc = fuse([op.loc for op in match.ops])
        self.anchor = min(match.roots, key=_position) if len(match.roots) > 1 else match.roots[0]
        self.new_ops: list[Operation] = []
        self.memo: dict[Any, Operation] = {}

    # ------------------------------------------------------------ values

    def value(self, e: Any, expected: Type | None = None) -> Any:
        """A result expression's value (a tuple for a variadic group)."""
        if isinstance(e, Var):
            bound = self.env[e.name]
            if isinstance(bound, Operation):
                if len(bound.results) != 1:
                    raise self.rule.error(f"'{e.name}' is a {len(bound.results)}-result op; use ref('{e.name}', i)")
                return bound.results[0]
            return bound
        if isinstance(e, ResultOf):
            op = self.op(e.op) if isinstance(e.op, OpPat) else self.memo.get(e.op) or self.env[e.op]
            return op.results[e.index]
        if isinstance(e, OpPat):
            op = self.op(e, expected)
            if len(op.results) != 1:
                raise self.rule.error(f"built op '{e.name}' has {len(op.results)} results; index it")
            return op.results[0]
        if isinstance(e, Native) and e.kind == "build":
            out = e.fn(Builder.before_op(self.anchor), *(self.arg(a) for a in e.args))
            if out is None:
                raise NoValue(f"native '{e.name}' built nothing")
            return out
        if isinstance(e, tuple):
            return tuple(self.value(x) for x in e)
        raise self.rule.error(f"cannot build a value from {e!r}")

    def arg(self, e: Any) -> Any:
        """A native or attribute argument: built ops by value, everything else as checks see it."""
        if isinstance(e, OpPat) or (isinstance(e, ResultOf) and (isinstance(e.op, OpPat) or e.op in self.memo)):
            return self.value(e)
        return evaluate(e, self.env)

    # ------------------------------------------------------------ ops

    def op(self, pat: OpPat, expected: Type | None = None) -> Operation:
        key = pat.binding or pat
        done = self.memo.get(key)
        if done is not None:
            return done
        opdef = REGISTRY.lookup(pat.name)
        grouped = opdef is not None and any(g.kind != SINGLE for g in opdef.operands)
        operands: list[Value] = []
        sizes: list[int] = []
        for o in pat.operands:
            v = self.value(o)
            vals = list(v) if isinstance(v, (tuple, list)) else [v]
            operands.extend(vals)
            sizes.append(len(vals))
        attributes: dict[str, Any] = {}
        if pat.copy_attrs is not None:
            attributes.update(self.env[pat.copy_attrs].all_attributes())
        for name, a in pat.attrs:
            value = self.arg(a)
            if value is not None:  # an optional attribute the match found absent
                attributes[name] = value
        if grouped and opdef.has_trait(Traits.AttrSizedOperandSegments):  # type: ignore[union-attr]
            attributes["operandSegmentSizes"] = A.DenseArrayAttr(i32, tuple(sizes))
        types = self.result_types(pat, operands, attributes, expected)
        op = Operation.create(pat.name, operands, types, attributes, None, len(opdef.regions) if opdef else 0,
                              (), self.loc)
        self.new_ops.append(op)
        self.memo[key] = op
        return op

    def result_types(self, pat: OpPat, operands: Sequence[Value], attributes: dict[str, Any],
                     expected: Type | None) -> list[Type]:
        """Given types; else the replaced value's; else a constant's value type; else from
        operands where the record allows."""
        if pat.result_types is not None:
            return [evaluate(t, self.env) if isinstance(t, (TypeOf, Native)) else t for t in pat.result_types]
        opdef = REGISTRY.lookup(pat.name)
        n = len(opdef.results) if opdef is not None and all(r.kind == SINGLE for r in opdef.results) else 1
        if n == 0:
            return []
        if expected is not None and n == 1:
            return [expected]
        def has(trait: Trait) -> bool:
            return opdef is not None and opdef.has_trait(trait)

        value_type = getattr(attributes.get("value"), "type", None)
        if has(Traits.ConstantLike) and n == 1 and value_type is not None:
            return [value_type]  # a constant's type is its value's (MLIR infers it the same way)
        if operands and has(Traits.SameOperandsAndResultType):
            return [operands[0].type] * n
        if operands and n == 1 and all(v.type is operands[0].type for v in operands) \
                and (opdef is None or has(Traits.SameOperandsAndResultElementType)):
            return [operands[0].type]
        raise self.rule.error(f"cannot infer the result types of '{pat.name}'; give types=[...]")

    def discard(self) -> None:
        """Forget the detached ops built so far (unlink them from their operands' uses)."""
        for op in self.new_ops:
            op.drop_all_uses_of_operands()


def _position(op: Operation) -> int:
    return op.parent.order()[op]  # type: ignore[union-attr]


def _dominates_anchor(value: Value, anchor: Operation, block_order: dict[Operation, int]) -> bool:
    """A value usable right before `anchor` (multi-root matches only)."""
    block = anchor.parent
    if isinstance(value, OpResult):
        owner = value.owner
        if owner.parent is block:
            return block_order[owner] < block_order[anchor]
    elif value.parent_block is block:
        return True
    # Defined in an enclosing block: visible if that block contains `anchor`'s block.
    up = block
    while up is not None:
        if value.parent_block is up:
            return True
        parent_op = up.parent_op
        up = parent_op.parent if parent_op is not None else None
    return False


def apply_match(rule: Rule, match: Match) -> list[Operation] | None:
    """Build the results of `match` and replace its roots; the new ops, or None if it
    does not apply after all (a native declined, a value does not dominate, a no-op)."""
    b = _Build(rule, match)
    replacements: list[tuple[Operation, list[Value]]] = []
    try:
        for root_op, values in zip(match.roots, rule.results):
            if values is None:
                continue
            if not root_op.results and all(isinstance(v, OpPat) for v in values):
                for v in values:  # a root without results: the ops replacing it (rule.py, "Effects")
                    b.op(v)
                replacements.append((root_op, []))
                continue
            if len(values) != len(root_op.results):
                raise RuleError(f"gives {len(values)} values for the {len(root_op.results)} results of "
                                f"'{root_op.name}'", rule.name, rule.origin)
            built = [b.value(v, r.type) for v, r in zip(values, root_op.results)]
            if any(not isinstance(v, Value) for v in built):
                raise rule.error("a replacement must be a single value")
            replacements.append((root_op, built))
    except NoValue:
        b.discard()
        return None
    roots = {op for op, _ in replacements}
    if any(isinstance(v, OpResult) and v.owner in roots for _, vals in replacements for v in vals):
        b.discard()  # replacing a root by itself changes nothing
        return None
    if len(match.roots) > 1:
        order = b.anchor.parent.order()  # type: ignore[union-attr]
        outside = [v for op in b.new_ops for v in op.operands if not (isinstance(v, OpResult) and v.owner in b.new_ops)]
        outside += [v for _, vals in replacements for v in vals if not (isinstance(v, OpResult) and v.owner in b.new_ops)]
        if not all(_dominates_anchor(v, b.anchor, order) for v in outside):
            b.discard()
            return None
    builder = Builder.before_op(b.anchor)
    for op in b.new_ops:
        builder.insert(op)
    for root_op, vals in replacements:
        root_op.replace_all_uses_with(vals)
        root_op.erase()
    return b.new_ops
