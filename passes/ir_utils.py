"""What the cleanup passes share: side-effect and region-kind queries, bulk erasure.

MLIR answers the queries through interfaces (MemoryEffectOpInterface,
RegionKindInterface); egraft reads them off the op records' traits.  An
unregistered op is assumed to have every effect, as MLIR assumes.

Erasing ops one by one costs a scan of each operand's use list, which is
quadratic when thousands of dead ops read one constant; `erase_all` filters
each touched use list once instead.
"""

from __future__ import annotations

from typing import Iterable

from egraft.ir import Operation, Region
from egraft.ir.records.opdef import Traits


def is_memory_effect_free(op: Operation) -> bool:
    """No memory effects: `Pure`, an empty `MemoryEffects`, or `RecursiveMemoryEffects`
    with every nested op effect-free."""
    d = op.opdef
    if d is None:
        return False
    kinds = d.trait_kinds
    effects = d.trait(Traits.MemoryEffects)
    declared_free = "Pure" in kinds or (effects is not None and not effects.param)
    if "RecursiveMemoryEffects" in kinds:
        return all(is_memory_effect_free(nested) for region in op.regions
                   for top in region.ops() for nested in top.walk())
    return declared_free


def would_be_trivially_dead(op: Operation) -> bool:
    """Erasable once its results are unused: effect-free, not a terminator, not a symbol."""
    d = op.opdef
    if d is None or "Terminator" in d.trait_kinds or "Symbol" in d.trait_kinds:
        return False
    return is_memory_effect_free(op)


def is_trivially_dead(op: Operation) -> bool:
    return all(not r.uses for r in op.results) and would_be_trivially_dead(op)


def has_ssa_dominance(region: Region) -> bool:
    """False for graph regions (tfg.graph, regions of unregistered ops): there a
    value may be used before its definition, so order proves nothing."""
    owner = region.parent
    return owner is not None and owner.opdef is not None and not owner.opdef.graph_regions


def erase_all(ops: Iterable[Operation]) -> None:
    """Erase `ops` (and everything nested in them) in time linear in their uses.
    Their results must have no uses outside the erased set."""
    roots = list(ops)
    dead: set[Operation] = set()
    for op in roots:
        dead.update(op.walk())
    touched = {id(v): v for op in dead for v in op.operands}
    for v in touched.values():
        v.uses = [u for u in v.uses if u not in dead]
    for op in roots:
        op.detach()
    for op in dead:
        op.operands = []
