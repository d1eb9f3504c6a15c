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
* ops whose result type follows the operand's type (`subview`, `view`): they have their own
  folders in MLIR, outside this set. `reinterpret_cast` (whose result type is given) takes the
  cast's source, from any source, as MLIR's fold does.
* `memref.copy` takes only casts that change the layout alone (MLIR's FoldCopyOfCast): its two
  operands must agree in shape, which a cast to another static shape would break.

The folds that rebuild an effectful op (`load`, `store`, `dealloc`, `copy`, `affine.load`/`store`)
replace it on its effect chain (the rebuilt op takes the root's incoming token), so both drivers
run them.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

from .checks import is_constant, pred
from .dsl import const_of, op, rule, type_of, var
from .rule import Native
from .rule_sets import register_rule_set

x, y, idx, v, m, k = var("x"), var("y"), var("idx"), var("v"), var("m"), var("k")
offs, sizes, strides = var("offs"), var("sizes"), var("strides")


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

#: A cast that changes only the layout (same shape and element type): MLIR's FoldCopyOfCast
#: folds only those into `memref.copy`, whose operands must agree in shape.
LAYOUT_CAST = op("memref.cast", x).bind("c")
SAME_SHAPE = pred("the cast keeps the shape and element type (only the layout changes)",
                  lambda s, t: isinstance(s, T.MemRefType) and isinstance(t, T.MemRefType) and s.shape == t.shape
                  and s.element_type is t.element_type, type_of(x), type_of("c"))
COPY_DOC = "memref.copy with a layout-only cast as its {} copies the same elements of the cast's source"
LOAD_DOC = "{} through a cast reads the same element of the cast's source (the same buffer)"
STORE_DOC = "{} through a cast writes the same element of the cast's source (the same buffer)"

#: The folds into accesses, for any number of indices (`idx` binds the whole group).
RULES += [
    rule("memref-load-cast", op("memref.load", CAST, idx).bind("ld"), op("memref.load", x, idx, copy_attrs="ld"),
         where=[RANKED_SOURCE], doc=LOAD_DOC.format("memref.load")),
    rule("affine-load-cast", op("affine.load", CAST, idx, map=m), op("affine.load", x, idx, map=m),
         where=[RANKED_SOURCE], doc=LOAD_DOC.format("affine.load")),
    rule("memref-store-cast", op("memref.store", v, CAST, idx).bind("st"),
         op("memref.store", v, x, idx, copy_attrs="st"), where=[RANKED_SOURCE], doc=STORE_DOC.format("memref.store")),
    rule("affine-store-cast", op("affine.store", v, CAST, idx, map=m), op("affine.store", v, x, idx, map=m),
         where=[RANKED_SOURCE], doc=STORE_DOC.format("affine.store")),
]

RULES += [
    rule("memref-dealloc-cast", op("memref.dealloc", CAST), op("memref.dealloc", x), where=[RANKED_SOURCE],
         doc="memref.dealloc of a cast frees the cast's source (the same buffer)"),
    rule("memref-reinterpret-cast-cast", op("memref.reinterpret_cast", CAST, offs, sizes, strides).bind("rc"),
         op("memref.reinterpret_cast", x, offs, sizes, strides, copy_attrs="rc"),
         doc="memref.reinterpret_cast of a cast views the cast's source (a reinterpret_cast places its view from "
             "the allocation's start, which a cast does not move; MLIR's ReinterpretCastOp::fold)"),
    rule("memref-copy-cast-source", op("memref.copy", LAYOUT_CAST, y), op("memref.copy", x, y),
         where=[RANKED_SOURCE, SAME_SHAPE], doc=COPY_DOC.format("source")),
    rule("memref-copy-cast-target", op("memref.copy", y, LAYOUT_CAST), op("memref.copy", y, x),
         where=[RANKED_SOURCE, SAME_SHAPE], doc=COPY_DOC.format("target")),
]

register_rule_set("memref-cast-folding", RULES,
                  "memref.cast folded into load/store/dim/dealloc/copy/affine.load/affine.store, cast chains, "
                  "dim of static sizes")
