"""`memref-cast-folding`: `memref.cast` (2019: `memref_cast`) folded into its users, cast chains,
and `memref.dim` of a static dimension.

A `memref.cast` changes only the static type through which a buffer is seen: the buffer, its
elements and its runtime sizes are the cast's source's. So a user that reads or writes elements
(`load`, `store`, `affine.load`, `affine.store`), asks a size (`dim`) or frees the buffer
(`dealloc`) does the same through the source. This is MLIR's `foldMemRefCast`, the fold of
those ops in both eras (std-era `MemRefCastFolder` and today's `memref::foldMemRefCast`).

Legality, as MLIR states it in code: the cast's *source is ranked*. MLIR folds any cast with a
ranked source, also one to a *more static* type (`memref<?xf32>` to `memref<16xf32>`); such a
cast asserts a size that MLIR leaves undefined when wrong, so dropping it only removes undefined
behaviour (the interpreter checks the asserted sizes, and the harness compares where the
original is defined). Departure from the plan, which asked for `canFoldIntoConsumerOp` (target
only more dynamic): that condition belongs to folds that *retype* the consumer (a graybox
operand and its region argument, `scf.for` iter-args; here `rewrite/structural/graybox*`),
not to these users, whose types do not change. An unranked source is never folded:
`affine.load`/`store` need a ranked memref and `load`/`store` of an unranked one do not verify.

Not folded, and why:

* `call` operands: the callee's signature fixes the operand type (`func.call` verifies operand
  types against it), and the type is observable to the callee (its own `dim`, its own casts);
  folding would need retyping the callee, which is interprocedural and not a canonicalization
  (MLIR does not do it either; D152791 names `func.call` as the user that blocks retyping).
* `return` operands: the function's result types are fixed the same way.
* ops whose result type follows the operand's type (`subview`, `view`, `reinterpret_cast`,
  `copy`'s shape checks): they have their own folders in MLIR, outside this set.

Rules that build an effectful op (`load`, `store`, `dealloc`, `affine.load`/`store`) cannot be
held by the e-graph until the engine threads effect tokens through built ops (issue #14 §1);
until then they are greedy-only (on the e-graph driver they run greedily after extraction).
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

from .checks import is_constant, pred
from .dsl import const_of, op, rule, type_of, var
from .rule import Native
from .rule_sets import register_rule_set

x, idx, v, m, k = var("x"), var("idx"), var("v"), var("m"), var("k")


def ranked_memref(t: T.Type) -> bool:
    """A ranked memref type: the only casts' sources MLIR folds into users."""
    return isinstance(t, T.MemRefType)


def cast_compatible(a: T.Type, b: T.Type) -> bool:
    """Whether `memref.cast` may go from `a` to `b` (MLIR's `CastOp::areCastCompatible` for ranked
    memrefs): same element type, rank, memory space and layout, and every dimension equal or
    dynamic on one side. A cast chain folds into one cast only then (a chain through a dynamic
    type can join two different static sizes, which one cast cannot)."""
    if not (isinstance(a, T.MemRefType) and isinstance(b, T.MemRefType)):
        return False
    return (a.element_type is b.element_type and len(a.shape) == len(b.shape) and a.layout == b.layout
            and a.memory_space == b.memory_space
            and all(p == q or T.DYNAMIC in (p, q) for p, q in zip(a.shape, b.shape)))


def static_size(t: T.Type, index: A.Attribute) -> A.Attribute | None:
    """The size of dimension `index` of memref type `t` as an index constant, None when the
    dimension is dynamic or the index is out of range (`memref.dim` is undefined there)."""
    k = getattr(index, "value", None)
    if not isinstance(t, T.MemRefType) or not isinstance(k, int) or not 0 <= k < len(t.shape):
        return None
    size = t.shape[k]
    return None if size == T.DYNAMIC else A.IntegerAttr(size, T.index)


RANKED_SOURCE = pred("the cast's source is a ranked memref", ranked_memref, type_of(x))
CAST = op("memref.cast", x)

#: Folds that build only pure ops: both drivers run them.
RULES = [
    rule("memref-dim-cast", op("memref.dim", CAST, k), op("memref.dim", x, k), where=[RANKED_SOURCE],
         doc="memref.dim of a cast is memref.dim of its source: a cast does not change runtime sizes"),
    rule("memref-cast-cast", op("memref.cast", CAST).bind("c"), op("memref.cast", x),
         where=[RANKED_SOURCE, pred("the outer cast's type is cast-compatible with the inner cast's source",
                                    cast_compatible, type_of(x), type_of("c"))],
         doc="a cast of a cast is one cast from the first source, when that cast is valid"),
    rule("memref-cast-identity", op("memref.cast", x).bind("c"), x,
         where=[pred("the cast's source has the cast's type", lambda s, t: s is t, type_of(x), type_of("c"))],
         doc="a cast to the type its source already has is its source"),
    rule("memref-dim-static", op("memref.dim", x, k),
         op("arith.constant", value=Native("memref-static-size", static_size, (type_of(x), const_of(k)))),
         where=[is_constant(k)], benefit=3,
         doc="memref.dim of a static dimension is that size (out-of-range indices are left alone); "
             "before looking through a cast, as MLIR's DimOp::fold: the cast's static size is known"),
]

LOAD_DOC = "{} through a cast reads the same element of the cast's source (the same buffer)"
STORE_DOC = "{} through a cast writes the same element of the cast's source (the same buffer)"

#: Folds that build an effectful op: greedy-only until the e-graph can build them (module doc).
GREEDY = [
    rule("memref-load-cast", op("memref.load", CAST, idx).bind("ld"), op("memref.load", x, idx, copy_attrs="ld"),
         where=[RANKED_SOURCE], doc=LOAD_DOC.format("memref.load")),
    rule("affine-load-cast", op("affine.load", CAST, idx, map=m), op("affine.load", x, idx, map=m),
         where=[RANKED_SOURCE], doc=LOAD_DOC.format("affine.load")),
]

register_rule_set("memref-cast-folding", RULES,
                  "memref.cast folded into load/store/dim/dealloc/affine.load/affine.store, cast chains, "
                  "dim of static sizes", greedy_rules=GREEDY)
