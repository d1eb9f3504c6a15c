"""Side-effect queries: which ops may be erased when unused, merged or reordered.

One definition of each fact, read off the op records' traits (MLIR answers them through
MemoryEffectOpInterface); the encoding, the greedy driver, cse and dce all ask here.

* An op is **declared effect-free** when its record says `Pure` or an empty
  `MemoryEffects`. An op of the `tf` dialect without a record is judged by TensorFlow's
  own registry (the bundled snapshot, `ir/graphdef/op_registry.py`): effect-free when TF
  registers it as stateless and it has no ref, resource or function arguments (`tf.Abs`,
  `tf.SelectV2`, `tf.Shape`, ...), effectful otherwise (`tf.Print`, a function call, a
  custom op). Any other op without a
  record is assumed to have every effect, as MLIR assumes.
* :func:`only_reads`: declared effect-free or `MemoryEffects(("read",))` (a load), the ops
  a rule may erase from an effect chain.
* :func:`has_side_effects` is that answer negated, the same for every op of one name:
  what the e-graph encoding needs (an op's constructor either consumes an effect token
  or not) and what the round trip's equivalence check compares against.
* :func:`is_memory_effect_free` also looks into regions: an op with
  `RecursiveMemoryEffects` has exactly the effects of the ops nested in it.
* :func:`is_trivially_dead`: results unused, effect-free, neither a terminator nor a
  symbol (a symbol is used by name, which use lists do not show).

This module sits above the records and the TF registry snapshot (ir/graphdef), which it
imports only when it meets a `tf` op without a record.
"""

from __future__ import annotations

from functools import cache

from egraft.ir.core.operation import Operation
from egraft.ir.records.opdef import OpDef
from egraft.ir.core.traits import Traits

#: The prefix of TensorFlow ops, whose unrecorded ones TF's registry describes.
TF_PREFIX = "tf."


#: TensorFlow's DataType number of resource handles (types.proto's DT_RESOURCE).
DT_RESOURCE = 20


@cache
def _tf_effect_free(name: str) -> bool:
    """Whether TensorFlow registers op `name` (without the dialect prefix) as stateless and
    it touches no state another way: no reference or resource arguments (a stateless
    `Assign` writes through its ref), no function attributes (a stateless
    `PartitionedCall` runs whatever its function does)."""
    from egraft.ir.graphdef.op_registry import lookup_op

    registered = lookup_op(name)
    if registered is None or registered.is_stateful:
        return False
    args = [*registered.input_arg, *registered.output_arg]
    return not any(a.is_ref or a.type == DT_RESOURCE for a in args) and \
        not any(a.type in ("func", "list(func)") for a in registered.attr)


def declared_effect_free(name: str, opdef: OpDef | None) -> bool:
    """Whether ops named `name` (with record `opdef`, if any) have no effects of their own."""
    if opdef is None:
        return name.startswith(TF_PREFIX) and _tf_effect_free(name[len(TF_PREFIX):])
    if opdef.has_trait(Traits.Pure):
        return True
    effects = opdef.trait(Traits.MemoryEffects)
    return effects is not None and not effects.param


def only_reads(name: str, opdef: OpDef | None) -> bool:
    """Whether ops named `name` at most read memory (`MemoryEffects(("read",))`, or none):
    erasing one whose results are no longer needed loses no effect (a rule that forwards a
    stored value to a load erases the load)."""
    if declared_effect_free(name, opdef):
        return True
    effects = opdef.trait(Traits.MemoryEffects) if opdef is not None else None
    return effects is not None and set(effects.param) <= {"read"}


def has_side_effects(op: Operation) -> bool:
    """Whether `op` may have effects of its own (nested ops not consulted): the same answer
    for every op of its name, so a `RecursiveMemoryEffects` op counts as effectful."""
    return not declared_effect_free(op.name, op.opdef)


def _recursive(op: Operation) -> bool:
    return op.opdef is not None and op.opdef.has_trait(Traits.RecursiveMemoryEffects)


def _no_own_effects(op: Operation) -> bool:
    return _recursive(op) or declared_effect_free(op.name, op.opdef)


def is_memory_effect_free(op: Operation) -> bool:
    """No memory effects: declared effect-free, or `RecursiveMemoryEffects` with every
    nested op effect-free (one walk, however deep the nesting)."""
    if not _recursive(op):
        return declared_effect_free(op.name, op.opdef)
    return all(_no_own_effects(nested)
               for nested in op.walk(skip=lambda o: not _recursive(o)))


def would_be_trivially_dead(op: Operation) -> bool:
    """Erasable once its results are unused: effect-free, not a terminator, not a symbol."""
    d = op.opdef
    if d is not None and (d.has_trait(Traits.Terminator) or d.has_trait(Traits.Symbol)):
        return False
    return is_memory_effect_free(op)


def is_trivially_dead(op: Operation) -> bool:
    """Results unused and erasable (:func:`would_be_trivially_dead`). Asked of every op the
    greedy driver visits, so the common answer (a result is used) comes first and cheap."""
    for r in op.results:
        if r.uses:
            return False
    return would_be_trivially_dead(op)
