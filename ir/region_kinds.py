"""Region kinds (MLIR's RegionKindInterface), read off the op records.

An SSA region orders its ops: a value is defined before it is used, so the order of two ops
says which may feed the other. A graph region (tfg.graph, the regions of an op egraft has no
record for) does not: a value may be used before its definition.
"""

from __future__ import annotations

from egraft.ir.core.operation import Region


def has_ssa_dominance(region: Region) -> bool:
    """False for graph regions: there a value may be used before its definition, so the
    order of ops proves nothing."""
    owner = region.parent
    return owner is not None and owner.opdef is not None and not owner.opdef.graph_regions
