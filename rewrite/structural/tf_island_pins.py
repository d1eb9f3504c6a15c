"""Pin what a coarsened island waits on, so that rewrites inside it keep its deadness.

An island runs once every value it captures is there and is dead when one is. After
`tf-executor-island-coarsening`, a constant that hung on a loop pivot or a branch's Switch
output by a control edge sits in the island of the op that reads that value, and the
island's capture is all that keeps the constant dead with the branch (or in the loop's
frame). A rewrite inside the island that removes the reading op (dead code, a fold) would
drop the capture and revive the constant: on a generated graph, `island(%c3) { Const }`
merged with `Less(%x, %switch_false)` turned live once the unused `Less` was erased.

So before the rule families run, :func:`pin_captures` makes each island that captures
values produced in its graph (executor ops or other islands: what can be dead or in a
frame; a function's arguments are neither) also yield those values. The yield is a use
inside the island, so the capture survives whatever happens to the ops; the extra results
have no users, and the GraphDef export writes no node for them (an op without operands
still waits on every captured value, the yielded ones included). Graphs of one island
fed by arguments (the Keras models) are left alone.
"""

from __future__ import annotations

from egraft.ir import Operation, Value
from egraft.ir.dialects.tf_types import CONTROL
from egraft.rewrite.islands.breakup import island_inputs
from egraft.rewrite.structural.tf_switch_pins import erase_unused_switches, implied_by


def _rebuild(island: Operation, keep: list[int], extra: list[Value]) -> Operation:
    """Replace ``island`` by one yielding its data results ``keep`` and then ``extra``."""
    block = island.regions[0].blocks[0]
    yield_op = block.last
    assert yield_op is not None
    kept = [island.results[i] for i in keep]
    new = Operation.create("tf_executor.island", list(island.operands),
                           [r.type for r in kept] + [v.type for v in extra] + [CONTROL], regions=1,
                           attributes=dict(island.attributes), loc=island.loc)
    island.regions[0].blocks.remove(block)
    new.regions[0].add_block(block)
    yield_op.set_operands([yield_op.operands[i] for i in keep] + extra)
    island.parent.insert_before(island, new)  # type: ignore[union-attr]
    for old, fresh in zip(kept, new.results):
        old.replace_all_uses_with(fresh)
    island.results[-1].replace_all_uses_with(new.results[-1])
    island.drop_all_uses_of_operands()
    island.erase()
    return new


def _islands(top: Operation) -> list[Operation]:
    return [op for op in top.walk() if op.name == "tf_executor.island"]


def pin_captures(top: Operation) -> int:
    """Pin the graph-produced captures of every island under ``top``; how many islands changed."""
    count = 0
    for island in _islands(top):
        yield_op = island.regions[0].blocks[0].last
        assert yield_op is not None
        yielded = set(yield_op.operands)
        values = [v for v in island_inputs(island, island.parent) if v not in yielded]
        if values:
            _rebuild(island, list(range(len(island.results) - 1)), values)
            count += 1
    return count


def drop_redundant_pins(top: Operation) -> int:
    """Drop each island result without users that yields a value from outside the island which
    another op of the island still reads (the capture stays without it); how many went."""
    dropped = 0
    for island in _islands(top):
        body = island.regions[0].blocks[0]
        yield_op = body.last
        assert yield_op is not None
        read = {v for op in body.ops[:-1] for inner in op.walk() for v in inner.operands}
        redundant = [i for i, (r, v) in enumerate(zip(island.results, yield_op.operands))
                     if not r.uses and (v in read or implied_by(v, read))
                     and (v.owner_op is None or v.owner_op.parent is not body)]
        if redundant:
            gone = set(redundant)
            _rebuild(island, [i for i in range(len(island.results) - 1) if i not in gone], [])
            dropped += len(redundant)
    erase_unused_switches(top)  # a cond's predicate Switch whose only use was such a pin
    return dropped
