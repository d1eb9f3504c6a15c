"""The e-graph encoding of IR: which sorts and constructors stand for ops, values, types,
attributes, effects and regions (the contract between lowering, write-back and the rule
compiler; docs/encoding.md explains the choices).

Everything here is derived from op records, so adding an op record is all it takes for
rules to see it as a typed constructor:

* a registered op ``d.x`` whose instance fits its record becomes ``d.x(children)``: one
  ``Val`` child per single operand, one ``Vals`` child per variadic/optional group, then
  its result ``Types``, its properties and its discardable attributes (two ``Dict``s), one
  ``Reg`` per region, and an ``Eff`` child (the effect token it consumes) unless it is Pure;
* any other op becomes ``Generic["d.x"](Vals, Types, Dict, Dict, Regs, Eff)`` (effectful;
  unregistered ops are assumed to have every effect) or ``GenericPure[...]`` (an op declared
  effect-free, ``ir/effects.py``: a registered op whose instance does not fit its record, or
  a tf op without a record that TensorFlow registers as stateless);
* ops egraft cannot see into (multi-block regions, successors) become
  ``Opaque[k](Vals, Types, Eff)``, kept verbatim by the write-back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from egraft.ir.core import attributes as A
from egraft.ir.effects import declared_effect_free
from egraft.ir.records.opdef import SINGLE, OpDef
from egraft.ir.syntax.parser import Parser
from egraft.ir.core.types import Type

from egraft.rewrite.engine.termtable import I64_MAX, I64_MIN, OpSig, Payload, Schema

# Sorts. "Val" is an SSA value, "Op" an operation, "Eff" an effect token (the state of the
# world between two effectful ops of a block), "Reg" a region, the rest are metadata.
SORTS = ("Val", "Vals", "Op", "Eff", "Type", "Types", "Attr", "Attrs", "Dict", "Reg", "Regs")

#: Constructors that are not ops (their names have no dot, op names always do).
FIXED = (
    OpSig("Res", ("Op",), "Val", payload="i64"),          # result #i of an op
    OpSig("BArg", ("Type",), "Val", payload="i64"),       # block argument with a unique id
    OpSig("Fwd", ("Type",), "Val", payload="i64"),        # forward reference in a graph region
    OpSig("Ext", ("Type",), "Val", payload="i64"),        # value defined outside the lowered op
    OpSig("Vals", ("Val",), "Vals", variadic=True),
    OpSig("VCat", ("Vals",), "Vals", variadic=True),      # a long list, in chunks
    OpSig("EffIn", (), "Eff", payload="i64"),             # the state on entry of region #rid
    OpSig("EffOf", ("Op",), "Eff"),                       # the state after an effectful op
    OpSig("Ty", (), "Type", payload="String"),            # a type, by its printed text
    OpSig("Types", ("Type",), "Types", variadic=True),
    OpSig("TCat", ("Types",), "Types", variadic=True),
    OpSig("AInt", ("Type",), "Attr", payload="i64"),
    OpSig("AFloat", ("Type",), "Attr", payload="f64"),
    OpSig("AStr", (), "Attr", payload="String"),
    OpSig("AUnit", (), "Attr"),
    OpSig("AType", ("Type",), "Attr"),
    OpSig("AArr", ("Attrs",), "Attr"),
    OpSig("Attrs", ("Attr",), "Attrs", variadic=True),
    OpSig("ACat", ("Attrs",), "Attrs", variadic=True),
    OpSig("AText", (), "Attr", payload="String"),         # any other attribute, by its text
    OpSig("DNil", (), "Dict"),                            # attribute dictionaries: sorted cons lists
    OpSig("DCons", ("Attr", "Dict"), "Dict", payload="String"),
    # Region #rid: block arguments, terminator, final effect, forward-reference targets.
    OpSig("Reg", ("Vals", "Op", "Eff", "Vals"), "Reg", payload="i64"),
    OpSig("NoReg", (), "Reg"),                            # an empty region (declarations)
    OpSig("Regs", ("Reg",), "Regs", variadic=True),
    OpSig("NoTerm", (), "Op"),                            # the terminator of a NoTerminator block
    OpSig("Generic", ("Vals", "Types", "Dict", "Dict", "Regs", "Eff"), "Op", payload="String"),
    OpSig("GenericPure", ("Vals", "Types", "Dict", "Dict", "Regs"), "Op", payload="String"),
    OpSig("Opaque", ("Vals", "Types", "Eff"), "Op", payload="i64"),
)

#: Lists longer than this are split into chunks under a ``*Cat`` node: egglog's cost grows
#: with a constructor's width (a 2,000-operand return as one row took seconds to load).
CHUNK = 16

#: The list constructors and the chunking constructor of each.
CAT = {"Vals": "VCat", "Types": "TCat", "Attrs": "ACat"}

#: Constructors whose e-nodes are real operations (the ones a cost model prices).
OP_CTORS_FIXED = ("Generic", "GenericPure", "Opaque")


@dataclass(frozen=True)
class OpShape:
    """How one registered op is encoded: per operand group, whether it is a list."""

    name: str
    groups: tuple[bool, ...]   # True: variadic/optional group (a Vals child)
    num_regions: int
    effectful: bool

    @property
    def sig(self) -> OpSig:
        kids = tuple("Vals" if g else "Val" for g in self.groups)
        kids += ("Types", "Dict", "Dict") + ("Reg",) * self.num_regions
        return OpSig(self.name, kids + (("Eff",) if self.effectful else ()), "Op")


def shape_of(opdef: OpDef) -> OpShape:
    """The encoding of ops of record ``opdef``: it consumes an effect token unless the record
    declares it effect-free (``ir/effects.py``; RecursiveMemoryEffects ops are ordered too:
    the same answer for every instance)."""
    return OpShape(opdef.name, tuple(d.kind != SINGLE for d in opdef.operands), len(opdef.regions),
                   not declared_effect_free(opdef.name, opdef))


def new_schema() -> Schema:
    """The fixed part of the schema; typed op constructors are added as ops are met."""
    return Schema(SORTS, FIXED)


def is_op_ctor(name: str) -> bool:
    """True for constructors that stand for an operation (typed or generic)."""
    return "." in name or name in OP_CTORS_FIXED


def op_name_of(ctor: str, payload: object) -> str | None:
    """The IR op name an Op-sort e-node stands for (None for NoTerm and Opaque)."""
    if "." in ctor:
        return ctor
    if ctor in ("Generic", "GenericPure"):
        return str(payload)
    return None


def attr_shape(a: A.Attribute) -> tuple[str, Payload | None, list[Type | A.Attribute]]:
    """Constructor, payload and sub-terms of an attribute (shared by lowering and rules).

    Integers, non-zero finite floats, plain strings, unit, types and arrays are
    structured so that rules can match and build them; everything else is its text.
    """
    if isinstance(a, A.IntegerAttr) and I64_MIN <= a.value <= I64_MAX:
        return "AInt", a.value, [a.type]
    if isinstance(a, A.FloatAttr) and math.isfinite(a.value) and a.value != 0.0:
        return "AFloat", float(a.value), [a.type]
    if isinstance(a, A.StringAttr) and isinstance(a.value, str) and a.type is None:
        return "AStr", a.value, []
    if isinstance(a, A.UnitAttr):
        return "AUnit", None, []
    if isinstance(a, A.TypeAttr):
        return "AType", None, [a.value]
    if isinstance(a, A.ArrayAttr):
        return "AArr", None, list(a.value)
    return "AText", attr_text(a), []


#: A stored tensor payload (a weight) as text is megabytes of hex: in egglog every constant a
#: rule builds (a BatchNorm-scaled weight, a folded shape) would be a new string of that size
#: kept for the e-graph's life (mobilenetv2 through tf-grappler on the e-graph passed 24 GB),
#: and every read would parse it back. Such an attribute is carried as a handle instead:
#: attributes are uniqued (equal payloads are one object, so one handle, so one e-node) and
#: live for the process, as the handles' table does.
HANDLE = "#egraft.payload<"
_HANDLE_LEN = 64  # payload bytes from which a handle is cheaper than the text
_BY_HANDLE: list[A.Attribute] = []
_HANDLE_OF: dict[int, int] = {}  # id(attribute) -> handle


def attr_text(a: A.Attribute) -> str:
    """The `AText` payload of an attribute: its MLIR text, or a handle for a stored payload."""
    if not (isinstance(a, A.DenseElementsAttr) and isinstance(a.data, bytes) and len(a.data) >= _HANDLE_LEN):
        return str(a)
    n = _HANDLE_OF.get(id(a))
    if n is None:
        n = _HANDLE_OF[id(a)] = len(_BY_HANDLE)
        _BY_HANDLE.append(a)
    return f"{HANDLE}{n}>"


def attr_from_text(text: str) -> A.Attribute:
    """The attribute of an `AText` payload (`attr_text`'s inverse)."""
    if text.startswith(HANDLE):
        return _BY_HANDLE[int(text[len(HANDLE):-1])]
    return Parser(text).parse_attribute()
