"""Verification of ops against their records, traits and SSA dominance.

The generic part (operand/result counts and constraints, required and
constrained attributes, region counts, terminators, parents, same-type
traits, isolation) comes from each op's `OpDef`; the record's `verify` hook
adds op-specific rules.  Dominance is checked in SSACFG regions only: graph
regions (`tfg.graph`, and regions of unregistered ops, as in MLIR) may use a
value before its definition.  Messages follow MLIR's wording so that
upstream `expected-error` lines match.
"""

from __future__ import annotations

from typing import Callable, Iterator, Mapping

from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.core.operation import Block, BlockArgument, Operation, Region, Value
from egraft.ir.core.traits import Traits
from egraft.ir.records.opdef import OPTIONAL, SINGLE, VARIADIC, OpDef


def op_error(op: Operation, message: str) -> DiagnosticError:
    """`'name' op message` at the op's location."""
    return DiagnosticError(Diagnostic("error", f"'{op.name}' op {message}", op.loc))


def op_diag(op: Operation, message: str) -> Diagnostic:
    return Diagnostic("error", f"'{op.name}' op {message}", op.loc)


def verify(top: Operation, era_checks: Mapping[str, Callable[[Operation], None]] | None = None) -> None:
    """Verify `top` and everything nested; raise the first error found.
    `era_checks` (op name -> check) run before an op's own rules: the 2019
    `std` verifier's rules for text in 2019 syntax (ir/dialects/std_era.py)."""
    Verifier(era_checks).run(top)


class _Plan:
    """What verifying one record needs, computed once per record: count
    bounds, per-position type constraints when no group is variadic, the
    attributes to check, and the trait switches."""

    def __init__(self, d: OpDef) -> None:
        self.operand_counts = _count_bounds(d.operands)
        self.result_counts = _count_bounds(d.results)
        self.simple_operands = all(o.kind == SINGLE for o in d.operands)
        self.simple_results = all(r.kind == SINGLE for r in d.results)
        self.attributes = tuple((a.name, a.constraint, a.optional or a.default is not None)
                                for a in d.attributes)
        self.n_regions = len(d.regions)
        self.variadic_regions = any(r.kind == VARIADIC for r in d.regions)
        self.single_block_regions = tuple(i for i, r in enumerate(d.regions) if r.single_block)
        self.n_successors = None if any(s.kind == VARIADIC for s in d.successors) else len(d.successors)
        self.terminator = d.has_trait(Traits.Terminator)
        self.same_type = d.has_trait(Traits.SameOperandsAndResultType)
        self.same_operand_types = d.has_trait(Traits.SameTypeOperands)
        self.single_block = d.has_trait(Traits.SingleBlock)
        parents: tuple[str, ...] = ()
        for trait in (Traits.HasParent, Traits.ParentOneOf):
            t = d.trait(trait)
            if t is not None:
                parents = (t.param,) if isinstance(t.param, str) else tuple(t.param)
        self.parents = parents


def _count_bounds(defs) -> tuple[int, bool, int]:
    """(single count, has a variadic group, optional count)."""
    return (sum(1 for d in defs if d.kind == SINGLE), any(d.kind == VARIADIC for d in defs),
            sum(1 for d in defs if d.kind == OPTIONAL))


class _Ancestry:
    """The ops enclosing the op being verified (the walk's open ops), indexed
    so that a dominance or isolation check finds the ancestor it needs
    instead of climbing to it: a climb per operand made n nested loops whose
    bounds use a function argument O(n^2)."""

    __slots__ = ("path", "in_block", "isolated")

    def __init__(self) -> None:
        self.path: list[Operation] = []
        self.in_block: dict[Block, int] = {}  # block -> path index of the open op in it
        self.isolated: list[int] = []  # path indices of the open IsolatedFromAbove ops

    def push(self, op: Operation) -> None:
        index = len(self.path)
        self.path.append(op)
        if op.parent is not None:
            self.in_block[op.parent] = index
        d = op.opdef
        if d is not None and d.has_trait(Traits.IsolatedFromAbove):
            self.isolated.append(index)

    def pop(self) -> None:
        op = self.path.pop()
        if op.parent is not None:
            self.in_block.pop(op.parent, None)
        if self.isolated and self.isolated[-1] == len(self.path):
            self.isolated.pop()


class Verifier:
    def __init__(self, era_checks: Mapping[str, Callable[[Operation], None]] | None = None) -> None:
        self._era_checks = era_checks or {}
        self._dominators: dict[Region, dict[Block, set[Block]]] = {}
        self._plans: dict[OpDef, _Plan] = {}
        # Types are uniqued, so (constraint, type) verdicts can be remembered.
        self._type_verdicts: dict[tuple[int, object], bool] = {}
        self._ancestry = _Ancestry()

    def run(self, top: Operation) -> None:
        for op, entering in self.walk(top):
            if entering:
                self.verify_op(op)
            else:
                self.verify_op_exit(op)

    def walk(self, top: Operation) -> Iterator[tuple[Operation, bool]]:
        """`walk_enter_exit`, keeping the ancestry of the op yielded current."""
        ancestry = self._ancestry
        for op, entering in walk_enter_exit(top):
            if entering:
                yield op, True
                if op.regions:
                    ancestry.push(op)
            else:
                ancestry.pop()
                yield op, False

    # ------------------------------------------------------------ one op

    def verify_op(self, op: Operation) -> None:
        opdef = op.opdef
        if op.successors:
            self._verify_successors_not_entry(op)
        if op.regions and opdef is not None and opdef.has_trait(Traits.SymbolTable):
            self._verify_unique_symbols(op)
        if self._era_checks:
            check = self._era_checks.get(op.name)
            if check is not None:
                check(op)
        if opdef is not None:
            self._verify_record(op, opdef)
        if op.operands:
            self._verify_operands_dominate(op)
        if opdef is not None and opdef.verify is not None:
            opdef.verify(op)

    @staticmethod
    def _verify_unique_symbols(op: Operation) -> None:
        """MLIR's SymbolTable rule: a name is defined once among the ops directly
        in the table's region (error at the second, note at the first)."""
        seen: dict[str, Operation] = {}
        for region in op.regions:
            for child in region.ops():
                name = child.attr("sym_name")
                if name is None:
                    continue
                first = seen.setdefault(name.value, child)  # type: ignore[attr-defined]
                if first is not child:
                    d = Diagnostic("error", f"redefinition of symbol named '{name.value}'", child.loc)  # type: ignore[attr-defined]
                    d.attach_note("see existing symbol definition here", first.loc)
                    raise DiagnosticError(d)

    @staticmethod
    def _verify_successors_not_entry(op: Operation) -> None:
        """MLIR's rule: no branch targets the entry block of a region (reported
        at the op that holds the region)."""
        for succ in op.successors:
            region = succ.parent
            if region is not None and region.blocks and region.blocks[0] is succ:
                owner = region.parent
                raise DiagnosticError(Diagnostic("error", "entry block of region may not have predecessors",
                                                 owner.loc if owner is not None else op.loc))

    def verify_op_exit(self, op: Operation) -> None:
        """Checks MLIR makes once everything nested verified: errors inside a
        region come before its blocks' missing terminators."""
        self._verify_regions_terminated(op)

    def _type_ok(self, constraint, t) -> bool:
        key = (id(constraint), t)
        verdict = self._type_verdicts.get(key)
        if verdict is None:
            verdict = self._type_verdicts[key] = bool(constraint(t))
        return verdict

    def _check_types(self, op: Operation, what: str, defs, values, simple: bool, groups_of) -> None:
        """Each operand (or result) satisfies its group's type constraint."""
        type_ok = self._type_ok
        if simple:
            pairs = zip(defs, values)
        else:
            groups = groups_of(op)
            pairs = ((d, v) for d in defs for v in _as_list(groups.get(d.name), d.kind))
        for index, (d, v) in enumerate(pairs):
            if not type_ok(d.constraint, v.type):
                raise op_error(op, f"{what} #{index} must be {_kind_prefix(d.kind)}"
                                   f"{d.constraint.summary}, but got '{v.type}'")

    def _verify_record(self, op: Operation, d: OpDef) -> None:
        plan = self._plans.get(d)
        if plan is None:
            plan = self._plans[d] = _Plan(d)
        _check_counts(op, plan.operand_counts, len(op.operands), "operand")
        _check_counts(op, plan.result_counts, len(op.results), "result")
        if d.operands:
            self._check_types(op, "operand", d.operands, op.operands, plan.simple_operands, d.operand_groups)
        if d.results:
            self._check_types(op, "result", d.results, op.results, plan.simple_results, d.result_groups)
        props, attrs = op.properties, op.attributes
        for name, constraint, may_be_absent in plan.attributes:
            value = props.get(name)
            if value is None:
                value = attrs.get(name)
            if value is None:
                if not may_be_absent:
                    raise op_error(op, f"requires attribute '{name}'")
                continue
            if not constraint(value):
                raise op_error(op, f"attribute '{name}' failed to satisfy constraint: {constraint.summary}")
        n_regions = plan.n_regions
        if (not plan.variadic_regions and len(op.regions) != n_regions) or \
                (plan.variadic_regions and len(op.regions) < n_regions - 1):
            raise op_error(op, f"requires {n_regions} region{'s' if n_regions != 1 else ''}")
        for i in plan.single_block_regions:
            if i < len(op.regions) and len(op.regions[i].blocks) > 1:
                raise op_error(op, f"expects region #{i} to have 0 or 1 blocks")
        if plan.n_successors is not None and len(op.successors) != plan.n_successors:
            raise op_error(op, f"requires {plan.n_successors} successors but found {len(op.successors)}")
        if plan.terminator:
            block = op.parent
            if block is not None and block.last is not op:
                raise op_error(op, "must be the last operation in the parent block")
        if plan.parents:
            parent = op.parent_op
            if parent is None or parent.name not in plan.parents:
                expected = ", ".join(f"'{n}'" for n in plan.parents)
                raise op_error(op, f"expects parent op {'to be one of ' if len(plan.parents) > 1 else ''}{expected}")
        if plan.same_type:
            types = [v.type for v in op.operands] + [r.type for r in op.results]
            if any(t is not types[0] for t in types[1:]):
                raise op_error(op, "requires the same type for all operands and results")
        if plan.same_operand_types:
            types = [v.type for v in op.operands]
            if any(t is not types[0] for t in types[1:]):
                raise op_error(op, "requires all operands to have the same type")
        if plan.single_block:
            for i, region in enumerate(op.regions):
                if len(region.blocks) > 1:
                    raise op_error(op, f"expects region #{i} to have 0 or 1 blocks")

    def _verify_regions_terminated(self, op: Operation) -> None:
        d = op.opdef
        if d is None or d.has_trait(Traits.NoTerminator) or d.graph_regions:
            return
        for region in op.regions:
            for block in region.blocks:
                last = block.last
                if last is None:
                    if len(region.blocks) > 1 or block is not region.blocks[0]:
                        raise op_error(op, "empty block: expect at least a terminator")
                    continue
                if last.opdef is not None and not last.opdef.has_trait(Traits.Terminator):
                    raise DiagnosticError(Diagnostic(
                        "error", f"block with no terminator, has {_op_summary(last)}", last.loc))

    # ------------------------------------------------------------ dominance

    def _verify_operands_dominate(self, op: Operation) -> None:
        for i, v in enumerate(op.operands):
            def_block = v.parent_block
            if def_block is None or def_block.parent is None:
                # Only a rewrite can leave this (text cannot name such a value): say so rather
                # than blame region isolation, which is what the checks below would conclude.
                what = "a block argument of a block" if isinstance(v, BlockArgument) else f"a result of '{v.owner.name}'"  # type: ignore[attr-defined]
                raise op_error(op, f"operand #{i} is {what} that is no longer in the IR (erased or never inserted)")
            isolating = self._isolating_ancestor(v, op)
            if isolating is not None:
                err = Diagnostic("error", f"'{op.name}' op using value defined outside the region", op.loc)
                err.attach_note("required by region isolation constraints", isolating.loc)
                raise DiagnosticError(err)
            if not self._dominates(v, op):
                err = Diagnostic("error", f"'{op.name}' op operand #{i} does not dominate this use", op.loc)
                def_loc = v.owner.loc if v.owner_op is not None else v.loc  # type: ignore[attr-defined]
                err.attach_note("operand defined here", def_loc)
                raise DiagnosticError(err)

    def _ancestor_in(self, block: Block, user: Operation) -> Operation | None:
        """The user, or its enclosing op, that lies in `block`, if the walk's
        ancestry knows it (None: not an ancestor block, or above the walk)."""
        if user.parent is block:
            return user
        index = self._ancestry.in_block.get(block)
        if index is None:
            return None
        return self._ancestry.path[index]

    def _isolating_ancestor(self, v: Value, user: Operation) -> Operation | None:
        """The IsolatedFromAbove op (if any) that encloses `user` but not the
        definition of `v`: the region isolation `v`'s use breaks."""
        def_block = v.parent_block
        if def_block is not None and user.parent is not def_block:
            index = self._ancestry.in_block.get(def_block)
            if index is not None:  # the innermost isolated ancestor at or below the one in def_block
                isolated = self._ancestry.isolated
                return self._ancestry.path[isolated[-1]] if isolated and isolated[-1] >= index else None
        return _isolating_ancestor(v, user)

    def _dominates(self, v: Value, user: Operation) -> bool:
        def_block = v.parent_block
        if def_block is None:
            return False
        ancestor = self._ancestor_in(def_block, user)
        if ancestor is None:
            # Climb from the user to the op whose parent block is the def block.
            ancestor = user
            while ancestor is not None and ancestor.parent is not def_block:
                region = ancestor.parent_region
                if region is not None and _is_graph_region(region) and _region_contains_block(region, def_block):
                    return True
                ancestor = ancestor.parent_op
        if ancestor is None:
            # The use is outside the def's block; it may be in a sibling block
            # of the same region (checked via the dominator tree).
            return self._dominates_across_blocks(v, user)
        if isinstance(v, BlockArgument):
            return True
        definer = v.owner  # type: ignore[attr-defined]
        if definer is ancestor:
            return _is_graph_region(def_block.parent) if def_block.parent else False
        region = def_block.parent
        if region is not None and _is_graph_region(region):
            return True
        order = def_block.order()
        return order[definer] < order[ancestor]

    def _dominates_across_blocks(self, v: Value, user: Operation) -> bool:
        def_block = v.parent_block
        region = def_block.parent if def_block is not None else None
        if region is None:
            return False
        # The user's ancestor in the def's region.
        ancestor: Operation | None = user
        while ancestor is not None and ancestor.parent_region is not region:
            ancestor = ancestor.parent_op
        if ancestor is None:
            return False
        if _is_graph_region(region):
            return True
        doms = self._dominators.get(region)
        if doms is None:
            doms = self._dominators[region] = _dominators(region)
        return def_block in doms.get(ancestor.parent, set())  # type: ignore[arg-type]


def _as_list(group: object, kind: str) -> list:
    if kind == SINGLE:
        return [group] if group is not None else []
    if kind == OPTIONAL:
        return [group] if group is not None else []
    return list(group) if group is not None else []  # type: ignore[call-overload]


def _kind_prefix(kind: str) -> str:
    """MLIR names a variadic group's constraint as such in messages."""
    return "variadic of " if kind == VARIADIC else ""


def _check_counts(op: Operation, bounds: tuple[int, bool, int], actual: int, what: str) -> None:
    fixed, has_var, n_opt = bounds
    if has_var:
        if actual < fixed:
            raise op_error(op, f"expected {fixed} or more {what}s, but found {actual}")
    elif fixed == 0 and not n_opt and actual:
        raise op_error(op, f"requires zero {what}s")  # MLIR's ZeroOperands/ZeroResults traits
    elif not (fixed <= actual <= fixed + n_opt):
        raise op_error(op, f"expected {fixed} {what}s, but found {actual}" if not n_opt else
                       f"expected between {fixed} and {fixed + n_opt} {what}s, but found {actual}")


def _op_summary(op: Operation) -> str:
    return f"'{op.name}'"


def _is_graph_region(region: Region | None) -> bool:
    if region is None:
        return False
    owner = region.parent
    if owner is None:
        return False
    d = owner.opdef
    return d is None or d.graph_regions


def _region_contains_block(region: Region, block: Block) -> bool:
    return block.parent is region


def _isolating_ancestor(v: Value, user: Operation) -> Operation | None:
    """The IsolatedFromAbove op (if any) that encloses `user` but not the
    definition of `v`: the region isolation `v`'s use breaks."""
    def_block = v.parent_block
    ancestor = user.parent_op
    block = user.parent
    while ancestor is not None and block is not def_block:
        if def_block is not None and def_block.parent is not None and def_block.parent.parent is ancestor:
            return None  # v is defined directly in one of this ancestor's regions
        d = ancestor.opdef
        if d is not None and d.has_trait(Traits.IsolatedFromAbove):
            return ancestor
        block = ancestor.parent
        ancestor = ancestor.parent_op
    return None


def _dominators(region: Region) -> dict[Block, set[Block]]:
    """Block dominator sets of a multi-block region (iterative dataflow)."""
    blocks = region.blocks
    preds: dict[Block, list[Block]] = {b: [] for b in blocks}
    for b in blocks:
        term = b.last
        if term is not None:
            for s in term.successors:
                if s in preds:
                    preds[s].append(b)
    all_blocks = set(blocks)
    dom = {b: set(all_blocks) for b in blocks}
    entry = blocks[0]
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for b in blocks[1:]:
            ps = [dom[p] for p in preds[b]]
            new = set.intersection(*ps) | {b} if ps else {b}
            if new != dom[b]:
                dom[b] = new
                changed = True
    return dom


def walk_enter_exit(top: Operation) -> Iterator[tuple[Operation, bool]]:
    """Pre-order walk that also reports leaving each op with regions (after
    all its nested ops): (op, True) on entry, (op, False) on exit."""
    open_ops: list[Operation] = []
    for op in top.walk():
        parent = op.parent_op
        while open_ops and open_ops[-1] is not parent:
            yield open_ops.pop(), False
        yield op, True
        if op.regions:
            open_ops.append(op)
    while open_ops:
        yield open_ops.pop(), False


def iter_diagnostics(top: Operation) -> Iterator[Diagnostic]:
    """Verify op by op, yielding the first error of each failing check."""
    v = Verifier()
    for op, entering in v.walk(top):
        try:
            if entering:
                v.verify_op(op)
            else:
                v.verify_op_exit(op)
        except DiagnosticError as e:
            yield from e.diagnostics

