"""tf_executor canonicalization (TF's executor_canonicalize.mlir), as IR rewrites.

These rewrites change region structure (a graph's ops move into the enclosing
block, an op's control operand list shrinks), which the rule language does not
state, so they are a structural step (`tf-executor-canonical`, declared by the
`tf-canonical` rule set) that `rewrite/phases.py` runs before and after the
rules. Each is sound under the executor's deadness:

* **empty graph** (only a fetch): its results are the fetched values.
* **single-island graph** (an island without control operands, and a fetch without
  control operands: a fetched control is a control output, whose node the export must
  rebuild from the graph, as the island's ops would lose it once inlined):
  the island's ops run in the enclosing block; results are the fetched values
  through the yield. No op inside an island produces deadness (only
  `tf_executor.Switch`-like ops do, and they are graph-level), so nothing dead
  is made live.
* **empty island** (its body is only a yield):
  - without control operands and without data results: removed; control users
    drop it (it fires at once and carries nothing);
  - with control operands and without data results: control users wait for
    its control operands instead (same dependences, same deadness propagation);
  - without control operands and with data results but no user of its
    control: the data results are the yielded values (the yield of captured
    values forwards them, deadness included), when it yields one value or
    only function arguments (each result is dead when any yielded value is);
  - with control operands and data results, or data results and a used
    control: kept (the control may carry the deadness of a yielded value, or
    the data would lose its dependence on the controls).
* **ControlTrigger without operands**: removed, control users drop it. One with
  operands is kept: it turns dead inputs live, which its users observe.
"""

from __future__ import annotations

from collections.abc import Callable

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation, Value
from egraft.ir.dialects.tf_types import is_control


def _controls(op: Operation) -> list[Value]:
    return [v for v in op.operands if is_control(v.type)]


def _replace_control_use(user: Operation, old: Value, new: list[Value]) -> None:
    """`user`'s control operand `old` becomes `new` (deduplicated, order kept)."""
    out: list[Value] = []
    for v in user.operands:
        for w in (new if v is old else [v]):
            if not (is_control(w.type) and w in out):
                out.append(w)
    user.set_operands(out)


def _forward_control(res: Value, new: list[Value]) -> None:
    for user in list(dict.fromkeys(res.uses)):
        _replace_control_use(user, res, new)


def _body(op: Operation) -> list[Operation]:
    return op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []


def _empty_island(island: Operation, dead_in: Callable[[Operation], set[Operation]]) -> bool:
    body = _body(island)
    if len(body) != 1 or body[0].name != "tf_executor.yield":
        return False
    control, data = island.results[-1], island.results[:-1]
    controls_in = _controls(island)
    if _fetched(control):
        return False  # a fetched control token is one control output's name: it stays one token
    yielded = list(body[0].operands)
    graph = island.parent_op
    if data and (controls_in or control.uses or graph is None
                 or not forwards_each_value(yielded, dead_in(graph), graph)):
        return False
    for r, v in zip(data, yielded):
        r.replace_all_uses_with(v)
    _forward_control(control, controls_in)
    island.erase()
    return True


def may_be_dead(graph: Operation) -> set[Operation]:
    """The ops of ``graph``'s block that can be dead: executor control-flow ops (Switch, Merge,
    Enter, ...; not a ControlTrigger without operands), and every op using a value or control
    token of one of them (an island through what it captures too). One forward scan: the
    block's order is topological (NextIteration's Source is itself an executor op)."""
    block_ops = _body(graph)
    dead: set[Operation] = set()
    for op in block_ops:
        if op.name != "tf_executor.island" and op.name not in ("tf_executor.fetch", "tf_executor.ControlTrigger"):
            dead.add(op)
            continue
        used = (v for inner in op.walk() for v in inner.operands)
        if any(_top(v, graph) in dead for v in used):
            dead.add(op)
    return dead


def _top(v: Value, graph: Operation) -> Operation | None:
    """The op of ``graph``'s block that produces ``v`` (or holds its producer), if any."""
    op = v.owner_op
    while op is not None and op.parent_op is not graph:
        op = op.parent_op
    return op


def forwards_each_value(yielded: list[Value], dead: set[Operation], graph: Operation) -> bool:
    """Whether an island yielding only ``yielded`` (captured values) may hand each user the value
    it yields: each result is dead when *any* yielded value is, so only when it yields one
    value, or values that are never dead (``dead`` is :func:`may_be_dead` of ``graph``). A
    coarsened island, or an IdentityN's, may yield values of different deadness."""
    return len(set(yielded)) <= 1 or not any(_top(v, graph) in dead for v in yielded)


def _fetched(control: Value) -> bool:
    """Whether a graph's fetch lists ``control`` as a named control output (``tf.entry_function``'s
    ``control_outputs``, which the GraphDef export matches to the fetch's control operands by
    position). An unnamed fetched token may go, as upstream's canonicalization does."""
    for user in control.users:
        if user.name != "tf_executor.fetch":
            continue
        func = user.parent_op.parent_op if user.parent_op is not None else None  # fetch -> graph -> func
        entry = func.attr("tf.entry_function") if func is not None else None
        names = entry.get("control_outputs") if isinstance(entry, A.DictionaryAttr) else None
        if isinstance(names, A.StringAttr) and names.value:
            return True
    return False


def _control_trigger(op: Operation) -> bool:
    if op.operands or _fetched(op.results[-1]):
        return False
    _forward_control(op.results[-1], [])
    op.erase()
    return True


def _graph(graph: Operation) -> bool:
    body = _body(graph)
    fetch = body[-1] if body else None
    if fetch is None or fetch.name != "tf_executor.fetch":
        return False
    data = [v for v in fetch.operands if not is_control(v.type)]
    if len(body) == 1:
        graph.replace_all_uses_with(data[:len(graph.results)])
        graph.erase()
        return True
    if len(body) != 2 or body[0].name != "tf_executor.island" or _controls(body[0]):
        return False
    island = body[0]
    inner = _body(island)
    yield_op = inner[-1]
    if any(is_control(v.type) for v in fetch.operands):
        return False  # a control output (even the island's own) names what must run: no graph, no name
    mapping = {r: v for r, v in zip(island.results[:-1], yield_op.operands)}
    for op in inner[:-1]:
        op.move_before(graph)
    graph.replace_all_uses_with([mapping.get(v, v) for v in data[:len(graph.results)]])
    graph.erase()
    return True


def canonicalize_executor(root: Operation) -> int:
    """Apply the rewrites above to a fixed point, innermost first; returns how many applied."""
    done = 0
    changed = True
    dead: dict[Operation, set[Operation]] = {}  # per graph, computed once: forwarding keeps it an over-approximation

    def dead_in(graph: Operation) -> set[Operation]:
        if graph not in dead:
            dead[graph] = may_be_dead(graph)
        return dead[graph]

    while changed:
        changed = False
        for op in reversed(list(root.walk())):
            if op.parent is None:
                continue  # erased with an enclosing graph this round
            if op.name == "tf_executor.island" and _empty_island(op, dead_in):
                changed = True
            elif op.name == "tf_executor.ControlTrigger" and _control_trigger(op):
                changed = True
            elif op.name == "tf_executor.graph" and _graph(op):
                changed = True
            else:
                continue
            done += 1  # reverse pre-order: an op's regions were visited before it, so walking on is safe
    return done
