"""Break islands up into one island per op: the inverse of island coarsening.

Splitting must not change when anything runs or is dead.  An island is dead when any
value it captures (or any control operand) is, so each piece must inherit *all* of the
island's inputs, not only its own operands: a *join* island ``island(%ctl...) { yield
%captured... }`` captures every input of the original island, and every piece without a
predecessor among the pieces takes the join's control token.  Each piece therefore has the
original island's deadness (and barrier depth), which is what makes
coarsen ∘ break-up ∘ coarsen = coarsen.  Ops that may have side effects (stateful in
TensorFlow's op registry, or unknown) stay in program order through a control chain.
The original control token is the single last piece's, or a ``tf.NoOp`` joining the leaves.
"""

from __future__ import annotations

from egraft.ir import Block, Operation, Value
from egraft.ir.dialects.tf_types import CONTROL

from egraft.ir.effects import has_side_effects
from egraft.rewrite.islands.writeback import top_level


def make_island(controls: list[Value], ops: list[Operation], yielded: list[Value], loc) -> Operation:
    """An island after ``controls`` holding ``ops`` (moved in) and yielding ``yielded``."""
    island = Operation.create("tf_executor.island", controls, [v.type for v in yielded] + [CONTROL],
                              regions=1, loc=loc)
    body = island.regions[0].add_block()
    for op in ops:
        body.append(op.detach())
    body.append(Operation.create("tf_executor.yield", yielded, loc=loc))
    return island


def island_inputs(island: Operation, block: Block) -> list[Value]:
    """Values the island captures that are produced in ``block`` (its dataflow inputs)."""
    seen: dict[Value, None] = {}
    for inner in island.walk():
        if inner is island:
            continue
        for v in inner.operands:
            owner = v.owner_op
            if owner is not None and owner.parent is block:
                seen.setdefault(v, None)
    return list(seen)


def break_up(island: Operation) -> list[Operation] | None:
    """Split ``island`` into one island per op (plus join islands); None if it has < 2 ops."""
    block = island.parent
    assert block is not None
    body = island.regions[0].blocks[0]
    ops, yield_op = body.ops[:-1], body.last
    if len(ops) < 2:
        return None
    loc = island.loc
    captured = island_inputs(island, block)
    outer = [v for v in yield_op.operands if v.owner_op is None or v.owner_op.parent is not body]
    join = None
    if captured or island.operands:
        join_values = list(dict.fromkeys(captured + [v for v in outer if v not in captured]))
        join = make_island(list(island.operands), [], join_values, loc)
        block.insert_before(island, join)
    piece_of: dict[Operation, Operation] = {}
    has_pred: set[Operation] = set()
    users_in: set[Operation] = set()
    for op in ops:
        for v in (v for inner in op.walk() for v in inner.operands):
            src = _body_op(v, body)
            if src is not None and src is not op:
                has_pred.add(op)
                users_in.add(src)
    from_body = [_body_op(v, body) is not None for v in yield_op.operands]
    last_effect: Operation | None = None
    pieces: list[Operation] = []
    for op in ops:
        controls = [join.results[-1]] if join is not None and op not in has_pred else []
        effectful = any(has_side_effects(inner) for inner in op.walk())
        if effectful and last_effect is not None:
            controls.append(last_effect.results[-1])
        piece = make_island(controls, [op], list(op.results), op.loc)
        block.insert_before(island, piece)
        piece_of[op] = piece
        pieces.append(piece)
        if effectful:
            last_effect = piece
        for k, r in enumerate(op.results):
            r.replace_uses_where(piece.results[k], lambda u, p=piece: top_level(u, block) is p)
    leaves = [piece_of[op] for op in ops if op not in users_in]
    if len(leaves) == 1:
        control = leaves[0].results[-1]
    else:
        noop = Operation.create("tf.NoOp", [], [], loc=loc)
        sink = make_island([p.results[-1] for p in leaves], [noop], [], loc)
        block.insert_before(island, sink)
        pieces.append(sink)
        control = sink.results[-1]
    replacements = []
    for v, rewired in zip(yield_op.operands, from_body):
        if rewired:
            replacements.append(v)                   # now a piece's result
        elif join is not None:
            replacements.append(join.results[join_values.index(v)])
        else:
            replacements.append(v)
    yield_op.drop_all_uses_of_operands()
    island.replace_all_uses_with([*replacements, control])
    island.erase()
    return ([join] if join is not None else []) + pieces


def _body_op(v: Value, body: Block) -> Operation | None:
    """The op of ``body`` that defines ``v`` (or contains its definition), if any."""
    op = v.owner_op
    while op is not None and op.parent is not body:
        op = op.parent_op
    return op
