"""Which island pins a Switch output on another's predicate makes redundant (v1 deadness).

`tf_island_pins` keeps each coarsened island's captures as extra yields so that the
island stays dead when they are. At the end such a pin can go when another captured value,
still read inside the island, is dead whenever the pinned one is: the island then waits on
it anyway. The case this module proves is TF's `tf.cond` predicate switch: ``Switch(p, p)``
(``cond/Switch``, whose outputs only feed the branch's ``switch_t``/``switch_f`` anchors).
Its output ``k`` is dead exactly when ``p`` is dead or ``p != k``. Any other ``Switch(d, p)``'s
output ``k`` is dead at least then (also when ``d`` is dead), so an island reading it
waits for no less. Two predicates count as the same when they are the same value after
looking through island results to the value the island yields (``pred_id`` and the
predicate are often two results of one coarsened island). Same predicate value means same
frame, so the frame does not change either.

A ``Switch`` none of whose results (control included) has a use afterwards is erased: it
has no effect and nothing waits on it (the model pruner would remove it, but it runs
before the pins are dropped).
"""

from __future__ import annotations

from collections.abc import Iterable

from egraft.ir import Operation, Value

SWITCH = "tf_executor.Switch"


def source(value: Value) -> Value:
    """``value`` with island results followed to what the island yields (until an op's own result)."""
    seen = 0
    while True:
        owner = value.owner_op
        if owner is None or owner.name != "tf_executor.island" or value.index == len(owner.results) - 1:
            return value
        yield_op = owner.regions[0].blocks[0].last
        assert yield_op is not None
        value = yield_op.operands[value.index]
        seen += 1
        if seen > 10_000:  # a malformed cycle: stop where we are
            return value


def _switch_port(value: Value) -> tuple[Operation, int] | None:
    owner = value.owner_op
    if owner is None or owner.name != SWITCH or value.index > 1:
        return None
    return owner, value.index


def predicate_switch_key(value: Value) -> tuple[Value, int] | None:
    """(predicate, port) when ``value`` is output ``port`` of a ``Switch(p, p)``, else None."""
    found = _switch_port(source(value))
    if found is None:
        return None
    switch, port = found
    data, pred = switch.operands[0], switch.operands[1]
    if source(data) is not source(pred):
        return None
    return source(pred), port


def implied_by(value: Value, read: Iterable[Value]) -> bool:
    """``value`` (a pin) is dead whenever one of ``read`` is: an output of ``Switch(p, p)``
    and a value of ``read`` is the same output of a Switch on the same predicate."""
    key = predicate_switch_key(value)
    if key is None:
        return False
    for other in read:
        found = _switch_port(source(other))
        if found is not None and found[1] == key[1] and source(found[0].operands[1]) is key[0]:
            return True
    return False


def erase_unused_switches(top: Operation) -> int:
    """Erase every Switch under ``top`` none of whose results is used; how many."""
    gone = 0
    for op in [o for o in top.walk() if o.name == SWITCH]:
        if all(not r.uses for r in op.results):
            op.drop_all_uses_of_operands()
            op.erase()
            gone += 1
    return gone
