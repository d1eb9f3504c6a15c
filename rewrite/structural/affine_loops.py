"""`affine-loops`: loops and conditionals whose outcome the maps decide, removed or inlined.

Runs before `affine-maps` (bounds and conditions whose operands are index constants are
evaluated here, so it needs no canonical maps), innermost ops first, so that a loop emptied by its inner loops' removal is itself removed in the same run:

* an `affine.for` with constant bounds and no iteration (max of the lower bound's results >=
  min of the upper's) is erased, its results replaced by its `iter_args` inits;
* one with exactly one iteration (lb < ub <= lb + step) is inlined: the induction variable
  becomes the index constant lb, the iter_args their inits, the results the yielded values
  (MLIR does this in `promoteIfSingleIteration`; its canonicalizer only folds zero-trip loops:
  a departure the issue asks for);
* a loop whose body is only its `affine.yield` is erased (affine loops always terminate) when
  each result is known: the init of an iter_arg yielded in its own place (whatever the trip
  count), or a value from outside the loop when the loop runs at least once;
* an `affine.if` whose condition is decided (a constraint false on constant operands or a false
  constant: else branch; every constraint true so: then branch) is replaced by the branch's ops, results by the
  values the branch yields (an absent else yields nothing, so such an if has no results);
* an `affine.if` without results whose branches are empty is erased; an empty else is dropped.

Soundness: each replacement runs exactly the ops the original would run, in the same order
(zero iterations run nothing; one iteration runs the body once with iv = lb). Legality: the
inlined ops move to the enclosing block of the same affine scope, where the values they use as
dims or symbols stay valid (the constant replacing the iv is a valid symbol; moving out of a loop
only makes more values top-level).
"""

from __future__ import annotations

from egraft.ir import Operation
from egraft.ir.core import affine as AF
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Block, Value
from egraft.patterns.memref_affine_rules import evaluate
from egraft.rewrite.structural.affine_maps import constant_index


def simplify_affine_control(root: Operation) -> int:
    """Remove or inline the decided `affine.for`/`affine.if` ops under `root`; returns how many."""
    done = 0
    for op in list(root.walk_post_order()):
        if op is root or op.parent is None:
            continue
        if op.name == "affine.for":
            done += _simplify_for(op)
        elif op.name == "affine.if":
            done += _simplify_if(op)
    return done


def constant_bound(amap: AF.AffineMap, operands: list[Value], lower: bool) -> int | None:
    """The value of a bound whose operands are index constants (max of the results for a lower
    bound, min for an upper), else None (also where a result is undefined)."""
    inputs = [constant_index(v) for v in operands]
    if not amap.results or None in inputs:
        return None
    values = [evaluate(r, inputs[:amap.num_dims], inputs[amap.num_dims:]) for r in amap.results]  # type: ignore
    if None in values:
        return None
    return max(values) if lower else min(values)  # type: ignore[type-var]


def trip_count(op: Operation) -> int | None:
    """The number of iterations of an `affine.for` with constant bounds, else None."""
    n_lb, n_ub, _ = op.attr("operandSegmentSizes").values
    lb = constant_bound(op.attr("lowerBoundMap").value, op.operands[:n_lb], True)
    ub = constant_bound(op.attr("upperBoundMap").value, op.operands[n_lb:n_lb + n_ub], False)
    if lb is None or ub is None:
        return None
    step = op.attr("step").value
    return max(0, -((lb - ub) // step))


def _inits(op: Operation) -> list[Value]:
    sizes = op.attr("operandSegmentSizes").values
    return list(op.operands[sizes[0] + sizes[1]:])


def _simplify_for(op: Operation) -> int:
    body = op.regions[0].blocks[0]
    inits = _inits(op)
    trips = trip_count(op)
    if trips == 0:
        op.replace_all_uses_with(inits)
        op.erase()
        return 1
    if len(body) == 1:  # only the yield: each result is its init or a value from outside
        outcome = _empty_body_results(body, inits, trips)
        if outcome is not None:
            op.replace_all_uses_with(outcome)
            op.erase()
            return 1
    if trips == 1:
        lb = constant_bound(op.attr("lowerBoundMap").value, op.operands[:op.attr("operandSegmentSizes").values[0]],
                            True)
        iv = Operation.create("arith.constant", (), [T.index], {"value": A.IntegerAttr(lb, T.index)}, loc=op.loc)
        op.parent.insert_before(op, iv)  # type: ignore[union-attr]
        op.replace_all_uses_with(inline_block(body, op, [iv.results[0], *inits]))
        op.erase()
        return 1
    return 0


def _empty_body_results(body: Block, inits: list[Value], trips: int | None) -> list[Value] | None:
    """The results of a loop whose body only yields: the init of an iter_arg yielded unchanged in
    its own place, or a value defined outside the loop when the loop runs at least once; None
    when some result depends on the trip count."""
    out = []
    for k, value in enumerate(body.terminator.operands):  # type: ignore[union-attr]
        if value is body.args[k + 1]:
            out.append(inits[k])
        elif trips is not None and trips >= 1 and value.parent_block is not body:  # no op but the yield inside
            out.append(value)
        else:
            return None
    return out


def _decided(op: Operation) -> bool | None:
    """True/False when the condition of an `affine.if` is decided: its constraints are constants,
    or all its operands are index constants (evaluated here, so that a condition whose operands
    became constants only after `affine-maps` last ran is still decided); else None."""
    iset = op.attr("condition").value
    inputs = [constant_index(v) for v in op.operands]
    dims, syms = inputs[:iset.num_dims], inputs[iset.num_dims:]
    truths = []
    for e, is_eq in iset.constraints:
        value = e.value if isinstance(e, AF.Const) else \
            evaluate(e, dims, syms) if None not in inputs else None  # type: ignore[arg-type]
        truths.append(None if value is None else (value == 0 if is_eq else value >= 0))
    if False in truths:
        return False
    if truths and all(truths):
        return True
    return None


def _simplify_if(op: Operation) -> int:
    then, other = op.regions
    decided = _decided(op)
    if decided is not None:
        region = then if decided else other
        if region.blocks:
            op.replace_all_uses_with(inline_block(region.blocks[0], op, []))
        op.erase()  # an absent else: the op has no results (its verifier requires the else then)
        return 1
    empty = [not r.blocks or len(r.blocks[0]) == 1 for r in (then, other)]
    if not op.results and all(empty):
        op.erase()
        return 1
    if not op.results and other.blocks and empty[1]:
        other.blocks[0].terminator.erase()  # type: ignore[union-attr]  # the lone affine.yield
        other.blocks.clear()
        return 1
    return 0


def inline_block(block: Block, anchor: Operation, args: list[Value]) -> list[Value]:
    """Move the ops of `block` but its terminator before `anchor`, its arguments replaced by
    `args`; returns the values its terminator yielded."""
    for arg, value in zip(block.args, args):
        arg.replace_all_uses_with(value)
    term = block.terminator
    yielded = list(term.operands) if term is not None else []
    for x in list(block):
        if x is not term:
            x.move_before(anchor)
    return yielded
