"""`graybox-hoist`: an `affine.graybox` moved out of the affine loops and ifs around it.

Hoisting G out of its parent op L (`affine.for`, `affine.if`, `affine.parallel`; the note's H1,
/work/shared/notes/graybox-semantics-and-encoding.md §1.2) wraps L in a new graybox G' whose
operands are the memrefs L uses from outside (deduplicated, in first-use order; L's own uses
of them now read G''s region arguments) and then eliminates G into L's body. The graybox moves
outward, the loop moves into it; the region of G' runs once where L ran, so memory and values
are the same (the elimination argument of `graybox.py`, plus: a graybox around one op runs that
op once, with the memrefs it names bound to the same buffers).

Legal iff G's elimination is legal with G' as the enclosing scope (E2 checked on the spliced IR,
all of L's ops included). Going outward, fewer values are symbols, so legality only shrinks: the
levels are tried innermost first (each tried tentatively, then undone), and G ends at the
outermost legal one. A graybox that reaches the top level of its scope is eliminated (always
legal there: "hoist to the top = eliminate").

Profitable iff the trip-weighted number of graybox instances drops: G ran once per iteration of
each loop it leaves, G' once. So a hoist is made only if some loop left behind has an unknown
trip count or a constant one of two or more; leaving only ifs and one-trip loops gains nothing
(they are left for canonicalization to remove), and a loop that never runs is never left (its
graybox runs zero times, G' would run once).
"""

from __future__ import annotations

from egraft.ir import Operation
from egraft.ir.core import types as T
from egraft.ir.core.operation import Block, BlockArgument, Region, Value
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.affine_dims import GRAYBOX, walk_affine
from egraft.patterns.memref_affine_rules import evaluate

from egraft.rewrite.structural.graybox import (RETURN, Deferred, Journal, apply_demotions, check_affine_operands,
                                               eliminate_graybox, single_block_body, splice)

#: The affine ops a graybox is hoisted out of.
HOISTABLE_PARENTS = ("affine.for", "affine.if", "affine.parallel")


def trip_count(op: Operation) -> int | None:
    """How many times `op`'s body runs per execution of `op`: an `affine.if` at most once (1),
    an `affine.for` with constant bounds its trip count, else None (unknown)."""
    if op.name == "affine.if":
        return 1
    if op.name != "affine.for":
        return None
    lb, ub = op.attr("lowerBoundMap").value, op.attr("upperBoundMap").value
    if lb.num_dims + lb.num_symbols or ub.num_dims + ub.num_symbols:
        return None
    lows = [evaluate(e, [], []) for e in lb.results]
    highs = [evaluate(e, [], []) for e in ub.results]
    if None in lows or None in highs or not lows or not highs:
        return None
    step = op.attr("step").value
    return max(0, -(-(min(highs) - max(lows)) // step))  # type: ignore[type-var, operator]


def hoist_chain(graybox: Operation) -> list[Operation]:
    """The affine loops and ifs G could leave, innermost first: its parent op, that op's parent,
    ..., up to the scope op, stopping before any other op and before a loop that never runs."""
    chain = []
    parent = graybox.parent_op
    while parent is not None and parent.name in HOISTABLE_PARENTS and trip_count(parent) != 0:
        chain.append(parent)
        parent = parent.parent_op
    return chain


def wrap(loop: Operation, journal: Journal, deferred: Deferred | None) -> Operation:
    """Put `loop` alone in a new graybox capturing the memrefs it uses from outside (edits
    journaled); the new graybox's results replace the loop's. Without `deferred` the captured
    memrefs' use lists are not updated (`Journal.redirect_within`: a tentative wrap)."""
    ordered = list(walk_affine(loop))
    inside = set(ordered)
    captured = list(dict.fromkeys(v for op in ordered for v in op.operands
                                  if isinstance(v.type, T.MemRefType) and not _defined_in(v, inside)))
    block = Block([v.type for v in captured])
    graybox = Operation.create(GRAYBOX, captured, [r.type for r in loop.results],
                               regions=[Region(blocks=[block])], loc=loop.loc)
    loop.parent.insert_before(loop, graybox)  # type: ignore[union-attr]
    journal.created(graybox)
    for old, new in zip(loop.results, graybox.results):
        journal.redirect(old, new)
    journal.append(loop, block)
    journal.append(Operation.create(RETURN, list(loop.results), loc=loop.loc), block)
    journal.redirect_within(ordered, dict(zip(captured, block.args)), deferred)
    return graybox


def _defined_in(value: Value, ops: set[Operation]) -> bool:
    if isinstance(value, BlockArgument):
        return value.owner.parent_op in ops
    return value.owner_op in ops


def hoist_graybox(graybox: Operation, deferred: Deferred | None = None) -> Operation | None:
    """Hoist `graybox` out of as many enclosing affine loops and ifs as is legal, if profitable
    (module doc). Returns the graybox now holding its body, or None if it stayed. `deferred` as
    for `eliminate_graybox`."""
    chain = hoist_chain(graybox)
    if not chain or single_block_body(graybox) is None:
        return None
    legal = 0
    for level in range(1, len(chain) + 1):
        if _hoist_to(graybox, chain[level - 1], None) is None:
            break
        legal = level
    if not any(trip_count(op) != 1 for op in chain[:legal]):
        return None
    own = deferred is None
    deferred = Deferred() if deferred is None else deferred
    wrapper = _hoist_to(graybox, chain[legal - 1], deferred)
    if own:
        deferred.flush()
    return wrapper


def _hoist_to(graybox: Operation, outer: Operation, deferred: Deferred | None) -> Operation | None:
    """Wrap `outer` and eliminate `graybox` inside it. Tentatively (undone) without `deferred`,
    kept with it if legal. Returns the wrapper if the hoist is legal."""
    journal = Journal()
    wrapper = wrap(outer, journal, deferred)
    moved = splice(graybox, journal)
    # The graybox's own ops first: where a hoist fails, they fail, without walking all of `outer`.
    demotions = check_affine_operands([*moved, outer])
    if demotions is None or deferred is None:
        journal.rollback()
        return None if demotions is None else wrapper
    apply_demotions(demotions)
    deferred.erase(graybox)
    return wrapper


def _at_scope_top(op: Operation) -> bool:
    parent = op.parent_op
    return parent is not None and parent.has_trait(Traits.AffineScope)


def hoist_grayboxes(root: Operation) -> int:
    """`graybox-hoist`: each graybox under `root`, outermost first, is eliminated if legal, else
    hoisted (and eliminated when that brings it to the top of its scope). A hoist puts the loop
    into a new scope where the grayboxes beside the hoisted one may become eliminable: those
    already tried are tried again. Returns the eliminations and hoists made."""
    worklist = [op for op in root.walk() if op.name == GRAYBOX and op is not root][::-1]
    tried: set[Operation] = set()
    deferred = Deferred()
    done = 0
    while worklist:
        graybox = worklist.pop()
        if graybox.parent is None:
            continue
        tried.add(graybox)
        if eliminate_graybox(graybox, deferred):
            done += 1
            continue
        wrapper = hoist_graybox(graybox, deferred)
        if wrapper is None:
            continue
        done += 1
        if _at_scope_top(wrapper) and eliminate_graybox(wrapper, deferred):
            done += 1
            continue
        worklist.extend(op for op in walk_affine(wrapper) if op in tried and op is not wrapper)
    deferred.flush()
    return done
