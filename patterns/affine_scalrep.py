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

The patterns look through one intervening op: a load (a read changes no memory) or a store to a
buffer that provably does not alias (a fresh `memref.alloc`/`alloca` result against another one or
a function argument; two function arguments may alias). Both drivers run them (the e-graph
matches the tokens themselves). Farther back, the greedy-only `*-scalrep-walk` rules follow the
chain from the load over up to `WALK_LIMIT` effectful ops that cannot write its element: loads,
stores to a buffer that cannot alias, and stores to the same memref at another constant address
(indices all constants, through the map when affine). The first access to the same place (the
same key, or the same constant address) gives the value: a store's, or an earlier load's result.
Anything else (a call, a region op, a dealloc, a store that may alias) stops the walk. The limit
bounds the work per load, so the pass stays linear in the block.

Dead stores (a store overwritten before any read) are not removed: that rewrites the earlier
store, which is not the matched root.
"""

from __future__ import annotations

from egraft.ir.core import affine as AF
from egraft.ir.core.operation import Operation, OpResult, Value
from egraft.ir.effects import has_side_effects

from .checks import pred
from .dsl import native, op, ref, rule, var
from .memref_affine_rules import evaluate
from .rule_sets import register_rule_set

mem, idx, v, mp = var("mem"), var("idx"), var("v"), var("mp")
other, w, widx, wmp = var("other"), var("w"), var("widx"), var("wmp")
ALLOCATIONS = ("memref.alloc", "memref.alloca")


def identity_map(attr: object) -> bool:
    """An affine access map that is the identity: its indices are its operands."""
    amap = getattr(attr, "value", None)
    return isinstance(amap, AF.AffineMap) and amap.is_identity()


def is_allocation(v: Value) -> bool:
    return isinstance(v, OpResult) and v.owner.name in ALLOCATIONS


def is_function_argument(v: Value) -> bool:
    """An argument of a function's entry block: a buffer the caller made before any allocation
    in the body.  The argument of a later block is not: a branch may pass it an allocation."""
    block = getattr(v, "parent_block", None) if not isinstance(v, OpResult) else None
    owner = block.parent_op if block is not None else None
    return owner is not None and owner.name == "func.func" and block is owner.regions[0].blocks[0]


def distinct_allocations(a: Value, b: Value) -> bool:
    """`a` and `b` never share memory: two different values of which one is a fresh
    `memref.alloc`/`alloca` result and the other another allocation or an argument of the
    function (a new allocation overlaps no buffer that already exists). A cast or view of an
    allocation, or a graybox's region argument, may be the same buffer: not covered."""
    if a is b:
        return False
    return (is_allocation(a) and (is_allocation(b) or is_function_argument(b))) or \
        (is_allocation(b) and is_function_argument(a))


#: How many effectful ops a load's walk looks back over (a budget: the walk is linear in it).
WALK_LIMIT = 64
LOADS = ("affine.load", "memref.load")
STORES = ("affine.store", "memref.store")


def access(op: Operation) -> tuple[Value, tuple]:
    """The memref an access reads or writes, and a key of its place: the index operands when the
    map is the identity (or there is none), else the map and its operands."""
    first = 1 if op.name in STORES else 0
    memref, indices = op.operands[first], tuple(op.operands[first + 1:])
    amap = op.attr("map")
    return memref, (indices if amap is None or identity_map(amap) else (amap, indices))


def constant_address(op: Operation) -> tuple[int, ...] | None:
    """The element an access touches when every index is an `arith.constant` (through the map)."""
    first = 1 if op.name in STORES else 0
    values = []
    for v in op.operands[first + 1:]:
        owner = v.owner if isinstance(v, OpResult) else None
        if owner is None or owner.name != "arith.constant":
            return None
        values.append(owner.attr("value").value)
    amap = getattr(op.attr("map"), "value", None)
    if amap is None:
        return tuple(values)
    out = tuple(evaluate(e, values[:amap.num_dims], values[amap.num_dims:]) for e in amap.results)
    return None if any(x is None for x in out) else out  # type: ignore[return-value]


def cannot_write(store: Operation, load: Operation) -> bool:
    """`store` leaves the element `load` reads unchanged: a buffer that cannot alias, or the same
    memref at another constant address."""
    target, source = access(store)[0], access(load)[0]
    if distinct_allocations(target, source):
        return True
    if target is not source:
        return False
    here, there = constant_address(store), constant_address(load)
    return here is not None and there is not None and here != there


def same_constant_address(op: Operation, load: Operation) -> bool:
    """`op` accesses the memref `load` reads, at the same constant address."""
    if access(op)[0] is not access(load)[0]:
        return False
    here = constant_address(op)
    return here is not None and here == constant_address(load)


def forwarded_value(builder: object, load: Operation) -> Value | None:
    """The value `load` reads, found by walking its effect chain back (module doc), or None."""
    memref, place = access(load)
    op, seen = load.prev, 0
    while op is not None and seen < WALK_LIMIT:
        if not has_side_effects(op):
            op = op.prev
            continue
        seen += 1
        same_place = op.name in LOADS + STORES and (access(op) == (memref, place) or same_constant_address(op, load))
        if same_place and op.name in STORES:
            return op.operands[0]
        if same_place:
            return op.results[0]
        if not (op.name in LOADS or (op.name in STORES and cannot_write(op, load))):
            return None
        op = op.prev
    return None


IDENTITY = pred("the affine access map is the identity", identity_map, mp)
DISTINCT = pred("the two memrefs never alias (an allocation against another or an argument)", distinct_allocations,
                mem, other)

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

#: Looking through a store to a buffer that cannot alias asks where values come from (the IR):
#: greedy-only.
GREEDY = [
    rule("affine-scalrep-through-no-alias",
         A_LOAD.after(op("affine.store", w, other, widx, map=wmp).after(A_STORE)), v, where=[DISTINCT],
         doc=FORWARD + ", with a store to a buffer that cannot alias between them"),
    rule("memref-scalrep-through-no-alias",
         M_LOAD.after(op("memref.store", w, other, widx).after(M_STORE)), v, where=[DISTINCT],
         doc=FORWARD + ", with a store to a buffer that cannot alias between them"),
]

WALK = "the value the load reads, found by walking its effect chain back over ops that cannot write its element"
GREEDY += [
    rule("affine-scalrep-walk", A_LOAD.bind("ld"), native("forwarded-value", forwarded_value, "ld", kind="build"),
         benefit=0, doc=WALK),
    rule("memref-scalrep-walk", M_LOAD.bind("ld"), native("forwarded-value", forwarded_value, "ld", kind="build"),
         benefit=0, doc=WALK),
]

register_rule_set("affine-scalrep", RULES,
                  "store-to-load forwarding and repeated-load elimination along the effect chain "
                  "(affine.load/store, memref.load/store)", greedy_rules=GREEDY)
