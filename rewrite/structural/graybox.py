"""`graybox-eliminate`: an `affine.graybox` spliced into its parent block where the affine rules allow it.

A graybox runs its single region exactly once, in place, with its region arguments bound to its
memref operands (docs/graybox.md). Splicing its one block before it (arguments replaced by the
operands, results by the returned values) therefore computes the same memory and values: the
rewrite is sound whenever the result is valid IR. What can make it invalid is only the affine
dimension and symbol rules: a value that is a symbol inside the graybox (defined at its top level,
or dominating it) may be neither symbol nor dimension in the enclosing affine scope. Elimination
is legal iff (the note's E1/E2, /work/shared/notes/graybox-semantics-and-encoding.md §1.1):

* E1: the region is one block ended by `return` (a multi-block body is a CFG, which only
  lowering may splice; an empty region without results is erased);
* E2: after the splice, every dimension operand of every affine op that moved (through nested
  loops and ifs, and into nested grayboxes, whose `dim`-derived symbols can change too) is a valid
  dimension in its scope, and every symbol operand is a valid symbol or, failing that, a valid
  dimension; such an operand is *demoted* (moved from the map's symbols to its dimensions), which
  evaluates the same. Users of the graybox's results are checked too (a returned value replaces
  the result, and may be a symbol where the result was not, or the reverse).

Legality is judged with `affine_dims.is_valid_symbol`/`is_valid_dim` on the spliced IR itself: the
splice is made, checked, and undone from a journal when it fails. Nothing beyond the graybox's
own body is walked, so a pass over n ops makes O(n) work per level of graybox nesting.

Departure from the note's encoding (§2): the note eliminates by unioning a graybox's region
leaves with its operands on the e-graph, which needs a context-keyed extractor (§2.4). Legal
elimination is always profitable (a graybox only hides code from affine analyses), so there is no
choice for extraction to make; it is IR surgery here, as a structural step rule sets can name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Sequence

from egraft.ir import Operation
from egraft.ir.core import affine as AF
from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Block, Region, Value
from egraft.ir.core.traits import Traits
from egraft.ir.erasure import erase_all
from egraft.ir.dialects.affine_dims import GRAYBOX, get_affine_scope, is_valid_dim, is_valid_symbol
from egraft.patterns.memref_affine_rules import substitute

RETURN = "func.return"

#: Ops through which a value's dim/symbol standing reaches an affine op's operand (`affine_dims`
#: derives an apply's from its operands, a `dim`'s from its memref, a sized allocation's sizes).
_DERIVING = frozenset({"affine.apply", "memref.dim", "memref.cast", "memref.alloc", "memref.alloca",
                       "memref.view", "memref.subview"})


# ------------------------------------------------------------------ an undo journal of IR edits


class Journal:
    """The edits of a tentative splice, undone in reverse by `rollback` (each entry restores the
    IR to the state before its edit, so the reverse order restores the original exactly).

    Use lists stay exact at a cost proportional to the slots changed, not to the uses a value
    has elsewhere (a function's memref argument may have 100k): a redirect reads the use list
    of the value it moves slots *from* only when that value is local (a region argument, a
    result), and its undo removes the entries it appended, which are then the newest."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def redirect(self, old: Value, new: Value) -> None:
        """Every use of `old` now reads `new` (`old` is local: its use list is short)."""
        slots = []
        for user in old.users:
            for i, v in enumerate(user.operands):
                if v is old:
                    user.operands[i] = new
                    new.uses.append(user)
                    slots.append((user, i))
        old.uses.clear()
        if slots:
            self._undo.append(lambda: _restore(slots, new, old))

    def redirect_within(self, ops: list[Operation], mapping: dict[Value, Value], deferred: "Deferred | None") -> None:
        """Operands of `ops` found in `mapping` now read their image. Without `deferred` the use
        lists are left as they were: a tentative edit, rolled back, which only `affine_dims`
        reads (it never looks at uses). With it the new values get their use entries and the
        mapped values' old entries are dropped by `deferred` in one filter per value."""
        slots = [(op, i, v) for op in ops for i, v in enumerate(op.operands) if v in mapping]
        for op, i, v in slots:
            op.operands[i] = mapping[v]
            if deferred is not None:
                mapping[v].uses.append(op)
                deferred.drop_use(v, op)
        if deferred is None:
            self._undo.append(lambda: _restore_within(slots))

    def move_before(self, op: Operation, anchor: Operation) -> None:
        self._record_position(op)
        op.move_before(anchor)

    def append(self, op: Operation, block: Block) -> None:
        """Move `op` (in a block or not) to the end of `block`."""
        if op.parent is not None:
            self._record_position(op)
            op.detach()
        else:
            self._undo.append(lambda: op.erase())
        block.append(op)

    def created(self, op: Operation) -> None:
        """`op` was created by the splice: rollback erases it (after its contents went back)."""
        self._undo.append(lambda: op.erase())

    def _record_position(self, op: Operation) -> None:
        block, nxt = op.parent, op.next

        def put_back() -> None:
            op.detach()
            if nxt is not None:
                block.insert_before(nxt, op)  # type: ignore[union-attr]
            else:
                block.append(op)  # type: ignore[union-attr]
        self._undo.append(put_back)

    def rollback(self) -> None:
        while self._undo:
            self._undo.pop()()


def _restore(slots: list[tuple[Operation, int]], current: Value, back: Value) -> None:
    """Undo a `redirect`: the slots read `back` again."""
    for user, i in slots:
        user.operands[i] = back
        back.uses.append(user)
    for user, _ in slots:
        current.uses.remove(user)


def _restore_within(slots: list[tuple[Operation, int, Value]]) -> None:
    for op, i, old in slots:
        op.operands[i] = old


class Deferred:
    """Erasures and use-entry removals a pass batches to its end (`flush`). Erasing ops one by
    one, or filtering a memref's use list per rewrite, scans that list each time: quadratic when
    a function's memref argument is read 100k times. Until `flush`, use lists may hold entries
    of ops that no longer read the value (nothing here reads such a list meanwhile)."""

    def __init__(self) -> None:
        self.erased: list[Operation] = []
        self._stale: dict[Value, Counter[Operation]] = {}

    def erase(self, op: Operation) -> None:
        """Detach `op` now; it is erased at `flush`."""
        op.detach()
        self.erased.append(op)

    def drop_use(self, value: Value, op: Operation) -> None:
        """One use entry of `value` by `op` (its oldest: later ones are real) goes at `flush`."""
        self._stale.setdefault(value, Counter())[op] += 1

    def flush(self) -> None:
        for value, counts in self._stale.items():
            for user, n in counts.items():
                for _ in range(n):
                    value.uses.remove(user)
        self._stale.clear()
        erase_all(self.erased)
        self.erased.clear()


# ------------------------------------------------------------------ affine operands: check and demote


def map_groups(op: Operation) -> list[tuple[str, int, int]]:
    """Each affine map or integer set of `op` binding SSA operands: (attribute name, index of its
    first operand, operand count). Empty for ops that bind none."""
    name = op.name
    if name in ("affine.load", "affine.vector_load"):
        return [("map", 1, len(op.operands) - 1)]
    if name in ("affine.store", "affine.vector_store"):
        return [("map", 2, len(op.operands) - 2)]
    if name in ("affine.apply", "affine.min", "affine.max"):
        return [("map", 0, len(op.operands))]
    if name == "affine.if":
        return [("condition", 0, len(op.operands))]
    if name == "affine.for":
        lb, ub, _ = op.attr("operandSegmentSizes").values
        return [("lowerBoundMap", 0, lb), ("upperBoundMap", lb, ub)]
    if name == "affine.parallel":
        amap = op.attr("lowerBoundsMap").value
        n = amap.num_dims + amap.num_symbols
        return [("lowerBoundsMap", 0, n), ("upperBoundsMap", n, len(op.operands) - n)]
    return []


#: A symbol operand to demote: (op, attribute name, first operand of the group, symbol positions).
Demotion = tuple[Operation, str, int, tuple[int, ...]]


def check_affine_operands(trees: Iterable[Operation], alone: Iterable[Operation] = (),
                          scope: Region | None = None) -> list[Demotion] | None:
    """E2 on every op of `trees` (whose scope is `scope`, when the caller knows it) and everything
    nested in them, and on the ops of `alone` themselves (users of a replaced value: what they
    hold did not move): None if some dimension operand is
    not a valid dimension (or a symbol operand neither symbol nor dimension) in its scope; else
    the symbol operands to demote. `affine.apply` binds no checked operands (MLIR verifies none:
    its users' checks see through it), but its symbols are demoted like the others'."""
    demotions: list[Demotion] = []
    seen: set[Operation] = set()  # a tree may hold another (checked first for an early failure)
    for op, op_scope in chain(_walk_with_scopes(trees, scope), ((op, get_affine_scope(op)) for op in alone)):
        if op in seen:
            continue
        seen.add(op)
        for attr, start, count in map_groups(op):
            if not count:
                continue
            num_dims = op.attr(attr).value.num_dims
            operands = op.operands[start:start + count]
            strict = op.name != "affine.apply"
            if strict and not all(is_valid_dim(v, op_scope) for v in operands[:num_dims]):
                return None
            demote = []
            for j, v in enumerate(operands[num_dims:]):
                if is_valid_symbol(v, op_scope):
                    continue
                if is_valid_dim(v, op_scope):
                    demote.append(j)
                elif strict:
                    return None
            if demote:
                demotions.append((op, attr, start, tuple(demote)))
    return demotions


def _walk_with_scopes(ops: Iterable[Operation], scope: Region | None = None) -> Iterator[tuple[Operation, Region | None]]:
    """Every op in `ops` and nested in them, with its affine scope: `scope` for the roots when
    the caller knows it, else found once per parent region of the roots (not climbed per op:
    that is quadratic in nesting depth)."""
    found: dict[Region | None, Region | None] = {}

    def scope_of(op: Operation) -> Region | None:
        if scope is not None:
            return scope
        region = op.parent_region
        if region not in found:
            found[region] = get_affine_scope(op)
        return found[region]

    stack: list[tuple[Operation, Region | None]] = [(op, scope_of(op)) for op in ops]
    stack.reverse()
    while stack:
        op, op_scope = stack.pop()
        yield op, op_scope
        if not op.regions:
            continue
        children = []
        for region in op.regions:
            inner = region if op.name == GRAYBOX else op_scope
            children.extend((child, inner) for block in region.blocks for child in block)
        stack.extend(reversed(children))


def apply_demotions(demotions: Sequence[Demotion]) -> None:
    """Move each listed symbol operand to a new dimension of its map or set (the same value
    bound to a dimension: the map computes the same)."""
    for op, attr, start, positions in demotions:
        value = op.attr(attr).value
        nd, ns = value.num_dims, value.num_symbols
        moved = set(positions)
        kept = [j for j in range(ns) if j not in moved]
        dims: list[AF.AffineExpr] = [AF.Dim(i) for i in range(nd)]
        syms: list[AF.AffineExpr] = [AF.Symbol(0)] * ns
        for t, j in enumerate(positions):
            syms[j] = AF.Dim(nd + t)
        for t, j in enumerate(kept):
            syms[j] = AF.Symbol(t)
        if isinstance(value, AF.IntegerSet):
            new_attr: A.Attribute = A.IntegerSetAttr(AF.IntegerSet(
                nd + len(positions), len(kept), [(substitute(e, dims, syms), eq) for e, eq in value.constraints]))
        else:
            new_attr = A.AffineMapAttr(AF.AffineMap(nd + len(positions), len(kept),
                                                    [substitute(e, dims, syms) for e in value.results]))
        group = op.operands[start:start + nd + ns]
        reordered = [*group[:nd], *(group[nd + j] for j in positions), *(group[nd + j] for j in kept)]
        op.set_operands([*op.operands[:start], *reordered, *op.operands[start + nd + ns:]])
        op.set_attr(attr, new_attr)


# ------------------------------------------------------------------ elimination


def single_block_body(graybox: Operation) -> Block | None:
    """The graybox's block if it has exactly one, ended by `return` (E1), else None."""
    blocks = graybox.regions[0].blocks
    if len(blocks) != 1 or blocks[0].last is None or blocks[0].last.name != RETURN:
        return None
    return blocks[0]


def splice(graybox: Operation, journal: Journal) -> list[Operation]:
    """Move the body of a single-block graybox before it, region arguments replaced by the
    operands and results by the returned values (edits journaled). Returns the moved ops."""
    body = graybox.regions[0].blocks[0]
    for arg, operand in zip(body.args, graybox.operands):
        journal.redirect(arg, operand)
    moved = body.ops[:-1]
    for op in moved:
        journal.move_before(op, graybox)
    for result, value in zip(graybox.results, body.last.operands):  # type: ignore[union-attr]
        journal.redirect(result, value)
    return moved


def result_users(values: Iterable[Value]) -> list[Operation]:
    """The users of `values`, followed through the ops that pass a dim/symbol standing on
    (`_DERIVING`): every op whose affine operands may change standing when `values` do."""
    seen: set[Operation] = set()
    found: list[Operation] = []
    stack = [user for v in values for user in v.users]
    while stack:
        user = stack.pop()
        if user in seen:
            continue
        seen.add(user)
        found.append(user)
        if user.name in _DERIVING:
            stack.extend(u for r in user.results for u in r.users)
    return found


class Scopes:
    """The affine scope of each graybox a pass visits, found in one walk of its root and kept
    current as grayboxes go (their contents then belong to the enclosing scope) and come
    (a hoist's wrapper), so no graybox climbs its ancestors: a 2000-deep nest stays linear."""

    def __init__(self, root: Operation) -> None:
        self._outer: dict[Operation, Operation | None] = {}  # graybox -> closest graybox around it
        self._top: dict[Operation, Region | None] = {}       # outermost grayboxes -> their scope
        outside = None if root.has_trait(Traits.AffineScope) else get_affine_scope(root)
        stack: list[tuple[Operation, Operation | None, Region | None]] = [
            (child, None, region if outside is None else outside)
            for region in reversed(root.regions) for block in reversed(region.blocks) for child in reversed(block)]
        while stack:  # pre-order: outer grayboxes before inner ones, siblings in program order
            op, around, scope = stack.pop()
            if op.name == GRAYBOX:
                self._outer[op] = around
                if around is None:
                    self._top[op] = scope
                around = op
            for region in reversed(op.regions):
                inner = region if op.has_trait(Traits.AffineScope) else scope
                stack.extend((child, around, inner) for block in reversed(region.blocks) for child in reversed(block))

    def grayboxes(self) -> list[Operation]:
        return list(self._outer)

    def scope(self, graybox: Operation) -> Region | None:
        """The region of the closest AffineScope op around `graybox` now."""
        around, top = self._resolve(graybox)
        return around.regions[0] if around is not None else top

    def _resolve(self, graybox: Operation) -> tuple[Operation | None, Region | None]:
        """The closest graybox still around `graybox` (erased ones skipped: their contents moved
        out; the answer is remembered), or None and the scope of the outermost one."""
        inner, around = graybox, self._outer[graybox]
        while around is not None and around.parent is None:
            inner, around = around, self._outer[around]
        self._outer[graybox] = around
        if around is None:
            self._top[graybox] = self._top[inner]
        return around, self._top.get(graybox)

    def wrapped(self, wrapper: Operation, inner: Operation, inside: Iterable[Operation]) -> None:
        """`wrapper` was put around the loop holding `inner` (in `inner`'s scope); the
        grayboxes of `inside` (the wrapper's scope) now sit in it."""
        around, top = self._resolve(inner)
        self._outer[wrapper] = around
        if around is None:
            self._top[wrapper] = top
        for graybox in inside:
            self._outer[graybox] = wrapper


def eliminate_graybox(graybox: Operation, deferred: Deferred | None = None, scope: Region | None = None) -> bool:
    """Eliminate `graybox` if E1 and E2 hold (module doc): splice its block into the parent
    block, demote symbols that became dimensions, erase it. Returns whether it did.

    This is what the inliner calls on the grayboxes it wraps callees in. A pass eliminating many
    passes a `Deferred` and flushes it at its end, and the graybox's scope if it knows it
    (`Scopes`; else it is found by climbing the graybox's ancestors)."""
    own = deferred is None
    deferred = Deferred() if deferred is None else deferred
    done = _eliminate(graybox, deferred, scope if scope is not None else get_affine_scope(graybox))
    if own:
        deferred.flush()
    return done


def _eliminate(graybox: Operation, deferred: Deferred, scope: Region | None) -> bool:
    region = graybox.regions[0]
    if not region.blocks:
        if graybox.results:
            return False
        deferred.erase(graybox)
        return True
    if single_block_body(graybox) is None:
        return False
    journal = Journal()
    outside = result_users(graybox.results)
    moved = splice(graybox, journal)
    demotions = check_affine_operands(moved, outside, scope)
    if demotions is None:
        journal.rollback()
        return False
    apply_demotions(demotions)
    deferred.erase(graybox)
    return True


def eliminate_grayboxes(root: Operation) -> int:
    """`graybox-eliminate`: every graybox under `root` eliminated where legal, outermost first
    (an outer graybox gone, the inner ones are judged in the scope they then sit in). One walk;
    each elimination checks only its own body. Returns how many went."""
    deferred = Deferred()
    scopes = Scopes(root)
    done = sum(_eliminate(graybox, deferred, scopes.scope(graybox)) for graybox in scopes.grayboxes())
    deferred.flush()
    return done
