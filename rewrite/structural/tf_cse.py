"""Grappler's common-subgraph elimination on TensorFlow ops (`tf-cse`).

Two tf ops of one block compute the same value when they have the same op, the same
operands, the same result types and the same attributes, the node name aside (a GraphDef
import gives every op its node's `_mlir_name`, which is all that tells two equal nodes
apart, so the generic `cse` pass merges nothing there). The later op's uses take the
earlier op's results and the later op goes. The device stays part of the key, as Grappler
keeps equal nodes on different devices apart.

Where: the blocks holding tf ops (an island's body, or a function's body the executor
canonicalization left without a graph). Within one block every op runs under the same
control operands and deadness (an island runs, or is dead, as a whole), and the block's
order is a topological order, so the earlier op is there before every user of the later
one. Nodes in different islands are not merged: their islands may differ in deadness or
loop frame. After `tf-executor-island-coarsening` a Keras model is one island, so this
sees the whole graph.

Never merged: ops with effects (`ir/effects.py`'s one definition, which asks TF's registry:
stateful, random, resource and function-calling ops), placeholders (each is its own feed),
ops holding regions, and terminators. A fetched value keeps its name: the GraphDef export
gives a fetched name back to whatever produces the value.

One forward scan per block; operands are compared by identity after earlier merges, so a
chain of equal subgraphs collapses in the same scan (Grappler iterates to a fixed point).
"""

from __future__ import annotations

from collections.abc import Hashable

from egraft.ir import Block, Operation
from egraft.ir.effects import has_side_effects
from egraft.ir.erasure import erase_all

#: The node-name attribute of an imported GraphDef node: not part of what the op computes.
NAME_ATTR = "_mlir_name"
_NEVER = ("tf.Placeholder", "tf.PlaceholderWithDefault", "tf.Placeholder.input")


def _key(op: Operation) -> Hashable:
    attrs = frozenset((k, v) for k, v in op.attributes.items() if k != NAME_ATTR)
    return (op.name, tuple(op.operands), tuple(r.type for r in op.results), attrs,
            frozenset(op.properties.items()))


def _mergeable(op: Operation) -> bool:
    return (op.name.startswith("tf.") and op.name not in _NEVER and not op.regions and bool(op.results)
            and not has_side_effects(op))


def _tf_blocks(top: Operation) -> list[Block]:
    """The blocks under ``top`` that directly hold tf ops (island and function bodies)."""
    seen: dict[Block, None] = {}
    for op in top.walk():
        block = op.parent
        if block is not None and op.name.startswith("tf.") and block not in seen:
            seen[block] = None
    return list(seen)


def eliminate_common_subgraphs(top: Operation) -> int:
    """Merge equal tf ops within each block under ``top``; returns how many went."""
    gone: list[Operation] = []
    for block in _tf_blocks(top):
        table: dict[Hashable, Operation] = {}
        for op in block.ops:
            if not _mergeable(op):
                continue
            key = _key(op)
            first = table.setdefault(key, op)
            if first is not op:
                op.replace_all_uses_with(first)
                gone.append(op)
    erase_all(gone)
    return len(gone)
