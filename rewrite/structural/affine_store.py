"""`affine-store-compose`: an `affine.apply` feeding an `affine.store` index, composed into the store's map.

The load half is a rule (`patterns/memref_affine_rules.py`); a store has no results, so no rule
can replace it, and this step rewrites it in place. Sound as the load rules are: the composed
map (`compose_operand`) computes the same address on the same integers, and an apply left
without uses is Pure, so erasing it changes nothing observable.
"""

from __future__ import annotations

from egraft.ir import Operation
from egraft.ir.core import attributes as A
from egraft.patterns.memref_affine_rules import compose_operand

def compose_store_maps(root: Operation) -> int:
    """The store half of the composition (a rule cannot replace a root with no results): every
    `affine.store` index produced by a one-result `affine.apply` is composed into the store's map,
    repeatedly; an apply left without uses is erased (it is Pure). Returns the rewrites made."""
    done = 0
    for st_op in [o for o in root.walk() if o.name == "affine.store"]:
        changed = True
        while changed:
            changed = False
            indices = list(st_op.operands[2:])
            for k, v in enumerate(indices):
                producer = v.owner_op
                amap = st_op.attr("map").value
                if producer is None or producer.name != "affine.apply":
                    continue
                composed = compose_operand(amap, k, producer.attr("map").value)
                if composed is None:
                    continue
                st_op.set_operands([*st_op.operands[:2], *indices[:k], *producer.operands, *indices[k + 1:]])
                st_op.set_attr("map", A.AffineMapAttr(composed))
                if not producer.results[0].uses:
                    producer.erase()
                done += 1
                changed = True
                break
    return done
