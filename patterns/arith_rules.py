"""`arith-canonical`: the canonicalization rules of `arith` (and the 2019 `std` spellings,
which the parser maps onto arith ops), as rules both engines run.

Every rule's doc states why it is sound. The general conditions:

* integer ops are signless and wrap at their width, so ring identities (`x - x = 0`,
  `x * 0 = 0`, `(x + c0) + c1 = x + (c0 + c1)`) hold for every value, on scalars,
  vectors and tensors alike (a splat constant of a dynamically shaped tensor cannot
  be built, so rules producing constants do not fire there);
* float rules hold bit for bit up to NaN payloads, *including* NaN, ±Inf and signed
  zeros, unless the op carries fast-math flags that waive them (`subf x, x` is `0`
  only under `nnan` and `ninf`: Inf - Inf and NaN - NaN are NaN);
* constant folds compute as the op does (`canon_fold.py`): wrap-around at the type's
  width, floats in the type's precision; undefined results (division by zero, signed
  division overflow, over-wide shifts) are not folded.
"""

from __future__ import annotations

from typing import Any

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

from .canon_fold import (width, CMPI, CMPI_REFLEXIVE, FLOAT_BINARY, INT_BINARY, float_splat_bits, folder, int_splat,
                         typed_constant, unsigned)
from .checks import is_constant, pred, same_type
from .dsl import op, rule, type_of, var
from .natives import zero_of
from .rule import Native, Rule
from .rule_sets import register_rule_set

x, y, c, d, p, f, r = var("x"), var("y"), var("c"), var("d"), var("p"), var("f"), var("r")


def _zero(v: var) -> object:
    return op("arith.constant", value=zero_of(v))


def _fold_rules() -> list[Rule]:
    """Constant folds of every binary integer and float op, and of cmpi."""
    out = []
    for mnemonic, fn in {**INT_BINARY, **FLOAT_BINARY}.items():
        out.append(rule(f"{mnemonic}-fold", op(f"arith.{mnemonic}", c, d).bind("r"),
                        op("arith.constant", value=folder(f"fold-{mnemonic}", fn, c, d, result="r")),
                        where=[is_constant(c), is_constant(d)],
                        doc=f"arith.{mnemonic} of two constants is the constant it computes "
                            f"(wrapping at the width / in the float type's precision; undefined results stay)"))
    return out


#: Casts that fold exactly, as their element functions on the operand's value (a two's
#: complement integer at the source width, or a float): the result is then wrapped to the
#: target width or held in the target float type by `build`. `truncf` is left out (its
#: `roundingmode` may ask for other than to-nearest-even), and so are the int/float
#: conversions (`sitofp` of a wide integer would round twice through f64).
CASTS: dict[str, Any] = {
    "extsi": lambda a, bits: a,
    "trunci": lambda a, bits: a,
    "index_cast": lambda a, bits: a,
    "extui": lambda a, bits: unsigned(a, bits),
    "index_castui": lambda a, bits: unsigned(a, bits),
    "extf": lambda a, bits: a,
}


def _cast_folds() -> list[Rule]:
    """Folds of the exact casts of a constant (splats stay splats, as for every fold)."""
    return [rule(f"{name}-fold", op(f"arith.{name}", c).bind("r"),
                 op("arith.constant", value=folder(f"fold-{name}", fn, c, result="r")),
                 where=[is_constant(c)],
                 doc=f"arith.{name} of a constant is the constant it computes "
                     f"({'sign' if name in ('extsi', 'index_cast') else 'zero' if 'ui' in name else 'exact'}"
                     f"-extended or truncated at the widths, exactly for floats)")
            for name, fn in CASTS.items()]


def _cmpi_fold() -> Rule:
    """cmpi of two constants: the predicate is an attribute, so it is one native argument more."""
    per_predicate = {k: folder("fold-cmpi", fn, c, d, result="r") for k, fn in CMPI.items()}

    def run(pred_attr: A.Attribute, *args: object) -> A.Attribute | None:
        chosen = per_predicate.get(int(getattr(pred_attr, "value", -1)))
        return None if chosen is None else chosen.fn(*args)

    native = Native("fold-cmpi", run, (p,) + per_predicate[0].args)
    return rule("cmpi-fold", op("arith.cmpi", c, d, predicate=p).bind("r"), op("arith.constant", value=native),
                where=[is_constant(c), is_constant(d)],
                doc="cmpi of two constants is the i1 constant of its predicate (signed or unsigned "
                    "comparison at the operands' width)")


def _fastmath_allows(*flags: str):
    def fn(attr: A.Attribute) -> bool:
        text = str(attr)
        return "fast>" in text or all(flag in text for flag in flags)
    return fn


_scalar_condition = pred("the condition is a scalar i1", lambda t: t is T.i1, type_of(c))

RULES = [
    # x - x, x ^ x, x & x, x | x
    rule("subi-self", op("arith.subi", x, x), _zero(x),
         doc="x - x = 0 for every integer (wrapping subtraction is a group operation)"),
    rule("xori-self", op("arith.xori", x, x), _zero(x), doc="x ^ x = 0, bit by bit"),
    rule("andi-self", op("arith.andi", x, x), x, doc="x & x = x, bit by bit"),
    rule("ori-self", op("arith.ori", x, x), x, doc="x | x = x, bit by bit"),
    rule("subf-self-fast", op("arith.subf", x, x, fastmath=f), op("arith.constant", value=zero_of(x)),
         where=[pred("fastmath has nnan and ninf", _fastmath_allows("nnan", "ninf"), f)],
         doc="x - x = +0.0 only when fast-math waives NaN and Inf (`nnan`+`ninf`, or `fast`): "
             "Inf - Inf and NaN - NaN are NaN; for finite x, x - x is +0.0 in round-to-nearest"),
    # units and zeros
    rule("addi-zero", op("arith.addi", x, c), x, where=[int_splat(c, 0)], commutative=True, doc="x + 0 = x"),
    rule("subi-zero", op("arith.subi", x, c), x, where=[int_splat(c, 0)], doc="x - 0 = x"),
    rule("muli-one", op("arith.muli", x, c), x, where=[int_splat(c, 1)], commutative=True, doc="x * 1 = x"),
    rule("muli-zero", op("arith.muli", x, c), c, where=[int_splat(c, 0)], commutative=True,
         doc="x * 0 = 0 (the zero constant itself, same type)"),
    rule("divsi-one", op("arith.divsi", x, c), x, where=[int_splat(c, 1)], doc="x / 1 = x (signed)"),
    rule("divui-one", op("arith.divui", x, c), x, where=[int_splat(c, 1)], doc="x / 1 = x (unsigned)"),
    *(rule(f"{name}-one", op(f"arith.{name}", x, c), x, where=[int_splat(c, 1)],
           doc=f"{name}(x, 1) = x: dividing by one is exact in every rounding")
      for name in ("floordivsi", "ceildivsi", "ceildivui")),
    *(rule(f"trunci-{ext}", op("arith.trunci", op(f"arith.{ext}", x).bind("e")).bind("r"), x,
           where=[same_type(x, r), pred("the extension widens", lambda s, t: (width(s) or 0) < (width(t) or 0),
                                        type_of(x), type_of("e"))],
           doc=f"trunci({ext}(x)) back to x's own type is x: a widening extension keeps the low bits")
      for ext in ("extui", "extsi")),
    rule("andi-zero", op("arith.andi", x, c), c, where=[int_splat(c, 0)], commutative=True, doc="x & 0 = 0"),
    rule("andi-ones", op("arith.andi", x, c), x, where=[int_splat(c, -1)], commutative=True,
         doc="x & ~0 = x (all ones at the operand's width)"),
    rule("ori-zero", op("arith.ori", x, c), x, where=[int_splat(c, 0)], commutative=True, doc="x | 0 = x"),
    rule("ori-ones", op("arith.ori", x, c), c, where=[int_splat(c, -1)], commutative=True, doc="x | ~0 = ~0"),
    rule("xori-zero", op("arith.xori", x, c), x, where=[int_splat(c, 0)], commutative=True, doc="x ^ 0 = x"),
    rule("shli-zero", op("arith.shli", x, c), x, where=[int_splat(c, 0)], doc="x << 0 = x"),
    rule("shrsi-zero", op("arith.shrsi", x, c), x, where=[int_splat(c, 0)], doc="x >> 0 = x (arithmetic)"),
    rule("shrui-zero", op("arith.shrui", x, c), x, where=[int_splat(c, 0)], doc="x >> 0 = x (logical)"),
    rule("remui-one", op("arith.remui", x, c), _zero(x), where=[int_splat(c, 1)], doc="x mod 1 = 0 (unsigned)"),
    rule("remsi-one", op("arith.remsi", x, c), _zero(x), where=[int_splat(c, 1)], doc="x rem 1 = 0 (signed)"),
    rule("maxsi-self", op("arith.maxsi", x, x), x, doc="max(x, x) = x"),
    rule("minsi-self", op("arith.minsi", x, x), x, doc="min(x, x) = x"),
    rule("maxui-self", op("arith.maxui", x, x), x, doc="max(x, x) = x"),
    rule("minui-self", op("arith.minui", x, x), x, doc="min(x, x) = x"),
    # inverses
    rule("addi-subi-cancel", op("arith.addi", op("arith.subi", x, y), y), x, commutative=True,
         doc="(x - y) + y = x (wrapping arithmetic is a group)"),
    rule("subi-addi-cancel-rhs", op("arith.subi", op("arith.addi", x, y), y), x,
         doc="(x + y) - y = x"),
    rule("subi-addi-cancel-lhs", op("arith.subi", op("arith.addi", y, x), y), x,
         doc="(y + x) - y = x"),
    rule("xori-xori-cancel", op("arith.xori", op("arith.xori", x, y), y), x, doc="(x ^ y) ^ y = x"),
    # reassociation of constants (MLIR's AddIAddConstant family)
    rule("addi-addi-constant", op("arith.addi", op("arith.addi", x, c), d).bind("r"),
         op("arith.addi", x, op("arith.constant", value=folder("fold-addi", INT_BINARY["addi"], c, d, result="r"))),
         where=[is_constant(c), is_constant(d)], commutative=True,
         doc="(x + c0) + c1 = x + (c0 + c1): wrapping addition is associative"),
    rule("muli-muli-constant", op("arith.muli", op("arith.muli", x, c), d).bind("r"),
         op("arith.muli", x, op("arith.constant", value=folder("fold-muli", INT_BINARY["muli"], c, d, result="r"))),
         where=[is_constant(c), is_constant(d)], commutative=True,
         doc="(x * c0) * c1 = x * (c0 * c1): wrapping multiplication is associative"),
    # select
    rule("select-same", op("arith.select", var("k"), x, x), x, doc="select(k, x, x) = x whatever k is"),
    rule("select-true", op("arith.select", c, x, y), x, where=[int_splat(c, 1), _scalar_condition],
         doc="select(true, x, y) = x (a scalar i1 condition picks the whole operand)"),
    rule("select-false", op("arith.select", c, x, y), y, where=[int_splat(c, 0), _scalar_condition],
         doc="select(false, x, y) = y (a scalar i1 condition picks the whole operand)"),
    # cmpi of a value with itself
    rule("cmpi-self", op("arith.cmpi", x, x, predicate=p).bind("r"),
         op("arith.constant", value=typed_constant(
             "cmpi-self-value", lambda a: int(a.value in CMPI_REFLEXIVE) if isinstance(a, A.IntegerAttr) else None,
             "r", p)),
         doc="x == x, x <= x, x >= x (signed and unsigned) are true; !=, <, > are false"),
    _cmpi_fold(),
    # floats: only identities that hold for NaN, Inf and signed zeros
    rule("negf-negf", op("arith.negf", op("arith.negf", x)), x, doc="-(-x) = x: negation only flips the sign bit"),
    rule("addf-negzero", op("arith.addf", x, c), x, where=[float_splat_bits(c, -0.0)], commutative=True,
         doc="x + (-0.0) = x for every x (+0.0 is not a unit: -0.0 + 0.0 = +0.0)"),
    rule("subf-zero", op("arith.subf", x, c), x, where=[float_splat_bits(c, 0.0)],
         doc="x - (+0.0) = x for every x, -0.0 included"),
    rule("mulf-one", op("arith.mulf", x, c), x, where=[float_splat_bits(c, 1.0)], commutative=True,
         doc="x * 1.0 = x (NaN stays NaN)"),
    rule("divf-one", op("arith.divf", x, c), x, where=[float_splat_bits(c, 1.0)], doc="x / 1.0 = x"),
    rule("negf-fold", op("arith.negf", c).bind("r"),
         op("arith.constant", value=folder("fold-negf", lambda a, bits: -a, c, result="r")),
         where=[is_constant(c)], doc="negation of a float constant"),
]
RULES += _fold_rules() + _cast_folds()

register_rule_set("arith-canonical", RULES, "arith canonicalization: identities, x-x family, constant folding")
