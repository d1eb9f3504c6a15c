"""`graybox-cast-fold` and `graybox-drop-args`: the graybox's own canonicalizations (the RFC's
MemRefCastFold and RegionArgumentCanonicalizer).

**Cast fold** (the note's F1-F3, /work/shared/notes/graybox-semantics-and-encoding.md §1.3).
An operand `%c = memref.cast %s : Ts to Td` (2019: `memref_cast`) is replaced by `%s`, and its
region argument retyped to `Ts`, when the cast only makes the type *more dynamic*
(`canFoldIntoConsumerOp`: `Ts` ranked, cast-compatible with `Td`, and every static size of `Td`
is `Ts`'s). A cast to a more static type is not folded: folding it would only erase static
information inside the region. The RFC's "merely register MemRefCastFolder" is not enough: the
region argument must keep the operand's type (the verifier's "region argument ... does not match
corresponding operand"), so the argument is retyped, and every user of the argument that needs
the old type gets `%old = memref.cast %arg : Ts to Td`, inserted at the region's entry.
Departure from the note's F2: users that read the memref through a slot where any compatible
type is accepted (the memref of `load`/`store`/`affine.load`/`affine.store`/their vector forms,
`dim`, `dealloc`: the ones `memref-cast-folding` folds a cast into) are given the retyped argument
directly, rather than a re-cast left for those rules, whose store and dealloc folds wait on the
e-graph building result-less effectful ops; every other user (a `call`, a `return`, a nested
graybox, a cast, a view) keeps the old type through the re-cast. Sound: a cast changes only the
static type through which a buffer is seen, never the buffer, so every op reads and writes the
same memory. `dim` of a dimension now static folds to a constant by `memref-dim-static`.

**Drop args.** An operand whose region argument has no uses is dropped with its argument; an
operand passed twice keeps its first argument, the uses of the other moved to it (both name the
same buffer). A graybox whose block is only a `return` without operands, and has no results, is
erased (it does nothing).
"""

from __future__ import annotations

from egraft.ir import Operation
from egraft.ir.core import types as T
from egraft.ir.core.operation import Block
from egraft.ir.dialects.affine_dims import GRAYBOX
from egraft.patterns.memref_cast_rules import cast_compatible

from egraft.rewrite.structural.graybox import RETURN, Deferred

#: Ops that accept any cast-compatible memref in one operand slot (the slot's index): a cast
#: into that slot folds (`memref-cast-folding`), so a retyped region argument may feed it.
CAST_AGNOSTIC_SLOTS = {
    "memref.load": 0, "memref.store": 1, "affine.load": 0, "affine.store": 1,
    "affine.vector_load": 0, "affine.vector_store": 1, "memref.dim": 0, "memref.dealloc": 0,
}


def more_dynamic(source: T.Type, target: T.Type) -> bool:
    """A cast from `source` to `target` only forgets static sizes (MLIR's
    `memref::CastOp::canFoldIntoConsumerOp`; layouts must be equal here)."""
    return (isinstance(source, T.MemRefType) and cast_compatible(source, target)
            and all(t == s or t == T.DYNAMIC for s, t in zip(source.shape, target.shape)))  # type: ignore[union-attr]


def fold_graybox_casts(root: Operation) -> int:
    """Fold each foldable `memref.cast` operand of the grayboxes under `root` (module doc),
    outermost first, so that a re-cast feeding a nested graybox is folded there in the same walk.
    Returns the operands folded."""
    done = 0
    deferred = Deferred()  # a cast's source may be read 100k times: one filter of its uses at the end
    for graybox in [op for op in root.walk() if op.name == GRAYBOX]:
        entry = graybox.regions[0].entry
        if entry is None:
            continue
        for k, operand in enumerate(graybox.operands):
            cast = operand.owner_op
            if cast is None or cast.name != "memref.cast" or not more_dynamic(cast.operands[0].type, operand.type):
                continue
            if cast.operands[0].type is not operand.type:
                _retype_argument(entry, k, cast.operands[0].type, operand.type)
            graybox.set_operand(k, cast.operands[0])
            if not cast.results[0].uses:
                deferred.erase(cast)
            done += 1
    deferred.flush()
    return done


def _retype_argument(entry: Block, k: int, new: T.Type, old: T.Type) -> None:
    """Give argument `k` of `entry` type `new`; users needing `old` read a re-cast at the entry."""
    arg = entry.args[k]
    arg.type = new
    sensitive = [user for user in arg.users if CAST_AGNOSTIC_SLOTS.get(user.name) is None
                 or any(v is arg for i, v in enumerate(user.operands) if i != CAST_AGNOSTIC_SLOTS[user.name])]
    if not sensitive:
        return
    recast = Operation.create("memref.cast", [arg], [old])
    entry.prepend(recast)
    needs_old = set(sensitive)
    arg.replace_uses_where(recast.results[0], lambda user: user not in needs_old)


def drop_graybox_args(root: Operation) -> int:
    """Drop unused and duplicate operands of the grayboxes under `root` with their region
    arguments, and erase grayboxes that do nothing (module doc). Returns the operands dropped
    plus the grayboxes erased."""
    done = 0
    deferred = Deferred()  # an operand may be read 100k times: one filter of its uses at the end
    for graybox in [op for op in root.walk() if op.name == GRAYBOX]:
        entry = graybox.regions[0].entry
        if entry is None:
            continue
        first: dict = {}
        keep = []
        for operand, arg in zip(graybox.operands, entry.args):
            if operand in first:
                arg.replace_all_uses_with(first[operand])
            if arg.uses:
                first.setdefault(operand, arg)
                keep.append(arg.index)
        if len(keep) < len(entry.args):
            done += len(entry.args) - len(keep)
            kept = set(keep)
            for i in reversed(range(len(entry.args))):
                if i not in kept:
                    deferred.drop_use(graybox.operands.pop(i), graybox)
                    entry.erase_argument(i)
        if _does_nothing(graybox):
            deferred.erase(graybox)
            done += 1
    deferred.flush()
    return done


def _does_nothing(graybox: Operation) -> bool:
    blocks = graybox.regions[0].blocks
    return (not graybox.results and len(blocks) == 1 and blocks[0].first is blocks[0].last
            and blocks[0].last is not None and blocks[0].last.name == RETURN and not blocks[0].last.operands)
