"""`affine-scalrep`: store-to-load forwarding and redundant-load elimination on the effect chain.

A load whose incoming effect token is the effect of a store to the same place reads the value
that store wrote: the load is that value (MLIR's `affine-scalrep` forwarding, without its
dependence analysis: here the effect chain says what lies between). Likewise a load right after
a load of the same place reads the same element of unchanged memory, so it is the first load.

"The same place", the alias conditions every rule states:

* **same memref value**: the very SSA value (a value seen through a `memref.cast` is another
  value; `memref-cast-folding`, in `canonicalize`, makes both the cast's source first);
* **equal indices**: the same operands and the same map (affine maps are uniqued, so "the same
  map" is attribute equality; maps equal only after simplification are made equal by the affine
  canonicalization before); between `affine.*` and `memref.*` accesses, the affine map must be
  the identity, so the indices are the operands themselves;
* **nothing between them**: the load's incoming token is the earlier op's effect
  (`.after(...)`: it is the nearest effectful op before the load in its block; an `affine.for`,
  `affine.if`, graybox or call with effects inside is effectful and stands between). Straight-line
  code inside a loop body, an `affine.if` branch or a graybox is forwarded the same way: each block
  threads its own token, and nothing is forwarded across a region boundary.

One intervening op is looked through: a load (a read changes no memory) and a store to another
allocation (two distinct `memref.alloc`/`alloca` results never alias; function arguments may).
Longer distances are not searched: a rule matches a fixed depth of the chain, and moving the load
up past the op would need building a load on an earlier token. Dead stores (a store overwritten
before any read) are not removed: that rewrites the earlier store, which is not the matched root.
"""

from __future__ import annotations

from egraft.ir.core import affine as AF
from egraft.ir.core.operation import OpResult, Value

from .checks import pred
from .dsl import op, ref, rule, var
from .rule_sets import register_rule_set

mem, idx, v, mp = var("mem"), var("idx"), var("v"), var("mp")
other, w, widx, wmp = var("other"), var("w"), var("widx"), var("wmp")
ALLOCATIONS = ("memref.alloc", "memref.alloca")


def identity_map(attr: object) -> bool:
    """An affine access map that is the identity: its indices are its operands."""
    amap = getattr(attr, "value", None)
    return isinstance(amap, AF.AffineMap) and amap.is_identity()


def distinct_allocations(a: Value, b: Value) -> bool:
    """`a` and `b` are results of two different `memref.alloc`/`alloca` ops: two live
    allocations never share memory, so a store to one leaves the other unchanged."""
    return (isinstance(a, OpResult) and isinstance(b, OpResult) and a.owner is not b.owner
            and a.owner.name in ALLOCATIONS and b.owner.name in ALLOCATIONS)


IDENTITY = pred("the affine access map is the identity", identity_map, mp)
DISTINCT = pred("the two memrefs are distinct allocations", distinct_allocations, mem, other)

A_LOAD = op("affine.load", mem, idx, map=mp)
A_STORE = op("affine.store", v, mem, idx, map=mp)
M_LOAD = op("memref.load", mem, idx)
M_STORE = op("memref.store", v, mem, idx)

FORWARD = "the load's incoming token is the store's effect, same memref and indices: it reads the stored value"
REPEAT = "the load's incoming token is a load of the same memref and indices: memory is unchanged, same value"

RULES = [
    rule("affine-scalrep-store-load", A_LOAD.after(A_STORE), v, doc=FORWARD),
    rule("memref-scalrep-store-load", M_LOAD.after(M_STORE), v, doc=FORWARD),
    rule("affine-store-memref-load", M_LOAD.after(A_STORE), v, where=[IDENTITY], doc=FORWARD + " (identity map)"),
    rule("memref-store-affine-load", A_LOAD.after(M_STORE), v, where=[IDENTITY], doc=FORWARD + " (identity map)"),
    rule("affine-scalrep-load-load", A_LOAD.after(A_LOAD.bind("first")), ref("first"), doc=REPEAT),
    rule("memref-scalrep-load-load", M_LOAD.after(M_LOAD.bind("first")), ref("first"), doc=REPEAT),
    rule("affine-scalrep-through-load", A_LOAD.after(op("affine.load", other, widx, map=wmp).after(A_STORE)), v,
         doc=FORWARD + ", with a load (which writes nothing) between them"),
    rule("memref-scalrep-through-load", M_LOAD.after(op("memref.load", other, widx).after(M_STORE)), v,
         doc=FORWARD + ", with a load (which writes nothing) between them"),
]

#: Looking through a store to another allocation asks where a value comes from (the IR):
#: greedy-only.
GREEDY = [
    rule("affine-scalrep-through-other-alloc",
         A_LOAD.after(op("affine.store", w, other, widx, map=wmp).after(A_STORE)), v, where=[DISTINCT],
         doc=FORWARD + ", with a store to another allocation between them"),
    rule("memref-scalrep-through-other-alloc",
         M_LOAD.after(op("memref.store", w, other, widx).after(M_STORE)), v, where=[DISTINCT],
         doc=FORWARD + ", with a store to another allocation between them"),
]

register_rule_set("affine-scalrep", RULES,
                  "store-to-load forwarding and repeated-load elimination along the effect chain "
                  "(affine.load/store, memref.load/store)", greedy_rules=GREEDY)
