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

from egraft.rewrite.structural.graybox import (RETURN, Deferred, Journal, Scopes, apply_demotions,
                                               check_affine_operands, eliminate_graybox, single_block_body, splice)

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


def _leavable(op: Operation | None) -> bool:
    """An affine loop or if a graybox may be hoisted out of (never a loop that does not run)."""
    return op is not None and op.name in HOISTABLE_PARENTS and trip_count(op) != 0


def wrap(loop: Operation, journal: Journal, deferred: Deferred | None, probe: Operation | None = None) -> Operation:
    """Put `loop` alone in a new graybox capturing the memrefs it uses from outside (edits
    journaled); the new graybox's results replace the loop's. Without `deferred` the captured
    memrefs' use lists are not updated (`Journal.redirect_within`: a tentative wrap).

    With `probe` (a graybox in `loop`) only the memrefs that graybox takes are captured and
    redirected: enough to judge the graybox's own ops in the new scope (they read no other memref
    from outside, by the capture rule), without walking all of `loop`."""
    ordered = [probe] if probe is not None else list(walk_affine(loop))
    inside = set(ordered)
    captured = list(dict.fromkeys(v for op in ordered for v in op.operands
                                  if isinstance(v.type, T.MemRefType) and not _defined_in(v, loop, inside)))
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


def _defined_in(value: Value, loop: Operation, walked: set[Operation]) -> bool:
    """`value` is defined inside `loop`: by one of the ops `walk_affine(loop)` gives when
    `walked` holds them all, else found by climbing from its definition."""
    definer = value.owner.parent_op if isinstance(value, BlockArgument) else value.owner_op
    if loop in walked:
        return definer in walked
    return definer is not None and loop.is_ancestor(definer)


def hoist_graybox(graybox: Operation, deferred: Deferred | None = None) -> Operation | None:
    """Hoist `graybox` out of as many enclosing affine loops and ifs as is legal, if profitable
    (module doc). Returns the graybox now holding its body, or None if it stayed. `deferred` as
    for `eliminate_graybox`.

    The levels are tried outward one at a time and the first illegal one stops the search (the
    parents are not listed first: in a deep nest that would climb to the top for every graybox)."""
    if single_block_body(graybox) is None:
        return None
    outermost, gains = None, False
    parent = graybox.parent_op
    while _leavable(parent) and _probe(graybox, parent):  # type: ignore[arg-type]
        outermost, gains = parent, gains or trip_count(parent) != 1  # type: ignore[arg-type]
        parent = parent.parent_op  # type: ignore[union-attr]
    if outermost is None or not gains:
        return None
    own = deferred is None
    deferred = Deferred() if deferred is None else deferred
    wrapper = _hoist_to(graybox, outermost, deferred)
    if own:
        deferred.flush()
    return wrapper


def _probe(graybox: Operation, outer: Operation) -> bool:
    """Whether `graybox` may be hoisted out of `outer`: E2 of its own ops in a wrapper around
    `outer`, tried and undone. Wrapping changes nothing else's legality (a value dominating the
    wrapper is a symbol in it, a captured memref's `dim` is a symbol there), so `_hoist_to`
    re-checking all of `outer` when it commits is a safeguard, not part of the decision."""
    journal = Journal()
    wrapper = wrap(outer, journal, None, probe=graybox)
    legal = check_affine_operands(splice(graybox, journal), scope=wrapper.regions[0]) is not None
    journal.rollback()
    return legal


def _hoist_to(graybox: Operation, outer: Operation, deferred: Deferred) -> Operation | None:
    """Wrap `outer` and eliminate `graybox` inside it, if legal. Returns the wrapper, or None
    with the IR unchanged."""
    journal = Journal()
    wrapper = wrap(outer, journal, None)
    moved = splice(graybox, journal)
    demotions = check_affine_operands([*moved, outer], scope=wrapper.regions[0])
    journal.rollback()
    if demotions is None:
        return None
    # The same edits again, now with the use lists kept (a deferred wrap cannot be undone); the
    # demotions name ops and operand positions, which the redo reproduces.
    journal = Journal()
    wrapper = wrap(outer, journal, deferred)
    splice(graybox, journal)
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
    scopes = Scopes(root)
    worklist = scopes.grayboxes()[::-1]
    tried: set[Operation] = set()
    deferred = Deferred()
    done = 0
    while worklist:
        graybox = worklist.pop()
        if graybox.parent is None:
            continue
        tried.add(graybox)
        if eliminate_graybox(graybox, deferred, scopes.scope(graybox)):
            done += 1
            continue
        outer_scope = scopes.scope(graybox)
        wrapper = hoist_graybox(graybox, deferred)
        if wrapper is None:
            continue
        done += 1
        inside = [op for op in walk_affine(wrapper) if op.name == GRAYBOX and op is not wrapper]
        scopes.wrapped(wrapper, graybox, inside)
        if _at_scope_top(wrapper) and eliminate_graybox(wrapper, deferred, outer_scope):
            done += 1
            continue
        worklist.extend(op for op in inside if op in tried)
    deferred.flush()
    return done
