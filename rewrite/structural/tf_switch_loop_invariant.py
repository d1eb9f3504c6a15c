"""Loop-invariant node motion on v1 while loops (`tf-loop-invariant`).

A v1 loop body receives values computed outside through `Enter` ops; one marked
`is_constant` gives every iteration the same value. A body node computed from such values
and constants only computes the same value in every iteration: it can run once, before the
loop, and reach the body through a new constant `Enter` (Grappler's loop optimizer does this
as `LoopInvariantNodeMotion`, switched off in its default configuration). Not a rule: which
nodes are invariant is a closure over the loop body, and moving one rewires its operands,
its control operands and its users across the frame boundary, which no pattern states.

**Frames.** Each node's frame is read off the block in order: an `Enter` starts (or joins) the
frame it names inside its input's frame, an `Exit` returns to the parent of its input's
frame, a `NextIteration.Source` is in its `Sink`'s frame, and any other node is in the frame
of its inputs (the root frame when it has none). Only loops of the root frame are optimized:
a node moved out of a nested loop would need a control input from the outer loop's pivot.

**Invariant nodes** (of frame F), grown from F's constant `Enter`s without control operands:
an island of F whose ops are all effect-free and hold no regions, and whose every captured
value comes from a constant `Enter` of F, another invariant island, or a `tf.Const` some
island yields (a body constant, tied to the loop's pivot by a control operand, perhaps in
an island island coarsening made of it and variant nodes). Then, until nothing changes, a
node is dropped when a node that stays waits on its control result, or when it reads a
dropped node.

**Moving** an invariant island: its captures of a constant `Enter` read the `Enter`'s input,
those of a body constant read a copy of it before the loop (in an island without control
operands; the original stays for the nodes that stay), its control operands (nodes of F:
pivots) are dropped, and each of its values read by a node that stays reaches that node
through a new constant `Enter` of F (same frame name and parallel iterations as the
loop's). A constant `Enter` nothing reads any more goes.

**Soundness.** A moved island computes, from the same values, what it computed in each
iteration; it is effect-free, so running it once (also before a loop of no iteration) is
not observable, but for an error it would raise (Grappler moves such nodes as well). A
node that stays keeps its iteration: the move is refused unless each one reading a moved
value also has an input from a node of F that stays, so that it still runs (and is dead)
exactly in the iterations it did, and is not a `Merge` (it runs on any one live input). A
constant `Enter`'s value is live in every iteration, where the invariant island was dead
when the body did not run: a `NextIteration` or `Exit` reading it directly (one input)
refuses the move.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core.operation import Operation, Value
from egraft.ir.dialects.tf_types import CONTROL, is_control
from egraft.ir.effects import has_side_effects
from egraft.ir.erasure import erase_all

ROOT: tuple = ()


def _body(op: Operation) -> list[Operation]:
    return op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []


def _inputs(node: Operation, block_ops: set[Operation]) -> list[Value]:
    """Every value ``node`` (or an op nested in it) reads that a node of the block produces."""
    inner = set(node.walk())
    return [v for op in inner for v in op.operands if v.owner_op in block_ops and v.owner_op not in inner]


def frames(graph: Operation) -> dict[Operation, tuple]:
    """The frame of each node of ``graph``'s block: ``()`` for the root, else
    ``(frame_name, parent frame)``."""
    ops = _body(graph)[:-1]
    block_ops = set(ops)
    frame: dict[Operation, tuple] = {}
    for op in ops:
        ins = _inputs(op, block_ops)
        outer = next((frame[v.owner_op] for v in ins if v.owner_op in frame), ROOT)  # type: ignore[index]
        if op.name == "tf_executor.Enter":
            name = op.attr("frame_name")
            frame[op] = (name.value if isinstance(name, A.StringAttr) else "", frame.get(op.operands[0].owner_op, ROOT))
        elif op.name == "tf_executor.Exit":
            frame[op] = outer[1] if outer else ROOT
        elif op.name != "tf_executor.NextIteration.Source":
            frame[op] = outer
    for op in ops:
        if op.name == "tf_executor.NextIteration.Source":
            sink = op.results[1].users[0] if op.results[1].users else None
            frame[op] = frame.get(sink, ROOT) if sink is not None else ROOT
    return frame


def _movable(island: Operation) -> bool:
    return island.name == "tf_executor.island" and all(
        not has_side_effects(op) and not op.regions for op in _body(island)[:-1])


def _constant(value: Value) -> Operation | None:
    """The `tf.Const` an island yields as ``value``, if it does."""
    owner = value.owner_op
    if owner is None or owner.name != "tf_executor.island" or value.index >= len(owner.results) - 1:
        return None  # not an island's data result
    inner = _body(owner)[-1].operands[value.index].owner_op
    return inner if inner is not None and inner.name == "tf.Const" and inner.parent_op is owner else None


def _invariant(graph: Operation, frame: dict[Operation, tuple], loop: tuple,
               seeds: list[Operation]) -> set[Operation]:
    """The islands of ``loop`` computed from its constant Enters ``seeds`` and constants only."""
    block_ops = set(frame)
    sources = set(seeds)
    found: set[Operation] = set()
    work = list(seeds)
    while work:
        node = work.pop()
        for user in {u for r in node.results[:-1] for u in r.users}:
            top = _top(user, graph)
            if top in found or frame.get(top) != loop or not _movable(top):
                continue
            if all(_invariant_input(v, found, sources) for v in _inputs(top, block_ops) if not is_control(v.type)):
                found.add(top)
                work.append(top)
    return _settle(found, sources, block_ops, graph)


def _invariant_input(value: Value, found: set[Operation], sources: set[Operation]) -> bool:
    return value.owner_op in found or value.owner_op in sources or _constant(value) is not None


def _settle(found: set[Operation], sources: set[Operation], block_ops: set[Operation],
            graph: Operation) -> set[Operation]:
    """Drop the invariant nodes a staying node waits on or that read a dropped node, with a
    worklist: a dropped node re-checks the invariant nodes it waits on and those reading it."""
    work = list(found)
    while work:
        node = work.pop()
        if node not in found:
            continue
        waits = any(u not in found for u in node.results[-1].users)
        reads = any(not _invariant_input(v, found, sources)
                    for v in _inputs(node, block_ops) if not is_control(v.type))
        if waits or reads:
            found.discard(node)
            work.extend(v.owner_op for v in node.operands if is_control(v.type) and v.owner_op in found)
            work.extend(_top(u, graph) for r in node.results[:-1] for u in r.users if _top(u, graph) in found)
    return found


def _top(op: Operation, graph: Operation) -> Operation:
    """The node of ``graph``'s block holding ``op``."""
    while op.parent_op is not graph:
        op = op.parent_op  # type: ignore[assignment]
    return op


def _stays_gated(user: Operation, moved: set[Operation], frame: dict[Operation, tuple], loop: tuple,
                 block_ops: set[Operation], graph: Operation) -> bool:
    """A node reading a moved value still runs in its iterations: it has another input from a
    node of the loop that stays, and is not a Merge (which runs on any one live input)."""
    top = _top(user, graph)
    if top.name == "tf_executor.Merge":
        return False
    return any(v.owner_op not in moved and frame.get(v.owner_op) == loop  # type: ignore[arg-type]
               for v in _inputs(top, block_ops))


def _loop(graph: Operation, frame: dict[Operation, tuple], loop: tuple, seeds: list[Operation]) -> int:
    moved = _invariant(graph, frame, loop, seeds)
    block_ops = set(frame)
    users = [(r, u) for node in moved for r in node.results[:-1] for u in r.users if _top(u, graph) not in moved]
    if not moved or not all(_stays_gated(u, moved, frame, loop, block_ops, graph) for _, u in users):
        return 0
    template = seeds[0]
    entered = {s.results[0]: s.operands[0] for s in seeds}
    copies: dict[Value, Value] = {}
    for node in moved:
        for op in node.walk():
            for i, v in enumerate(op.operands):
                if v in entered:
                    op.set_operand(i, entered[v])
                elif v.owner_op not in moved and _constant(v) is not None:
                    op.set_operand(i, copies.get(v) or _copy(_constant(v), node, copies, v))  # type: ignore[arg-type]
        node.set_operands([v for v in node.operands if not is_control(v.type)])
    for result in dict.fromkeys(r for r, _ in users):
        owner = result.owner_op
        assert owner is not None
        attrs = {k: template.attr(k) for k in ("frame_name", "parallel_iterations") if template.attr(k) is not None}
        enter = Operation.create("tf_executor.Enter", [result], [result.type, CONTROL],
                                 {**attrs, "is_constant": A.BoolAttr(True)}, loc=owner.loc)
        owner.parent.insert_after(owner, enter)  # type: ignore[union-attr]
        result.replace_uses_where(enter.results[0], lambda u: u is enter or _top(u, graph) in moved)
    erase_all([s for s in seeds if not any(r.uses for r in s.results)])
    return len(moved)


def _copy(const: Operation, before: Operation, copies: dict[Value, Value], value: Value) -> Value:
    """A copy of the body constant ``const`` in an island of its own before the loop (the
    original stays for the nodes that stay)."""
    from egraft.rewrite.islands.breakup import make_island  # imported here: only a loop needs it

    clone = const.clone()
    island = make_island([], [clone], [clone.results[0]], const.loc)
    before.parent.insert_before(before, island)  # type: ignore[union-attr]
    copies[value] = island.results[0]
    return island.results[0]


def hoist_loop_invariants(root: Operation) -> int:
    """Move the invariant nodes of every root-frame loop of every tf_executor graph under
    ``root`` before the loop; how many nodes moved."""
    done = 0
    for graph in [op for op in root.walk() if op.name == "tf_executor.graph"]:
        if not any(op.name == "tf_executor.Enter" for op in _body(graph)):
            continue
        frame = frames(graph)
        loops: dict[tuple, list[Operation]] = {}
        for op in _body(graph)[:-1]:
            constant = op.attr("is_constant")
            if op.name == "tf_executor.Enter" and constant == A.TRUE and len(op.operands) == 1 \
                    and frame[op][1] == ROOT:
                loops.setdefault(frame[op], []).append(op)
        for loop, seeds in loops.items():
            done += _loop(graph, frame, loop, seeds)
    return done
