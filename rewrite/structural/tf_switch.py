"""v1 control flow on tf_executor graphs: Switch folding and dead-branch removal (`tf-switch`).

Grappler's loop optimizer removes the branch a `Switch` on a constant predicate never takes
(its `RemoveDeadBranches`), and its common-subgraph elimination merges identical Switches.
Here both are one structural step, run by the `tf-control-flow` rule set
(patterns/grappler/control_flow.py). None of it is a rule, and why:

* a Switch, a Merge and their users are executor ops of the graph block, whose operands are
  results of islands: a rule's pattern sees ops, not through an island's region to the
  `tf.Const` it yields, and it replaces every result of its root by values, where a dead
  output has no value to stand for it;
* the dead branch is every node dead whenever the predicate selects the other port: a
  closure over data and control edges, read off a whole-graph analysis, not a pattern;
* merging identical Switches is a two-root rule, but the greedy driver only accepts
  replacement values that are defined before its first root (a kept root's results are
  not), and the e-graph does not hold executor ops.

**Constant predicates.** A predicate is constant when its value is computed from `tf.Const`
ops alone, by ops inside islands that the interpreter evaluates and that are effect-free (the
ops `tf-constant-folding` folds, by the same evaluation). Fed tensors are `@main`'s
arguments, never constants, so a predicate that depends on a feed is never folded.
TensorFlow's Switch takes a scalar predicate (anything else fails at run time), so only a
scalar is folded. Such a predicate has its value whenever it is computed, which is enough to
remove the dead branch: the port it never selects is dead whether the predicate is computed
or not. Whether it is always computed (live) is the analysis' word (below): its producer's
inputs carry no deadness atom. A `tf.cond` inside a branch or a loop body gives its
constants a control input from the pivot, and island coarsening may put a constant in an
island that captures a Switch output: such a predicate is live only when they are.

**The dead branch** is read off the island-merging deadness analysis (`rewrite/islands/facts`,
the `din` sets TF island coarsening groups by): a node whose inputs carry the atom "port r
of a Switch on P" is dead whenever P does not select r, so with P constant every such node
but a Merge is always dead. The fold is refused (the graph is left as it is) when the dead
branch holds a node whose removal would be visible or which the analysis does not follow:

* a fetched value (TensorFlow would fail to fetch a dead tensor: the error stays);
* a frame op (Enter, Exit, NextIteration, LoopCond), a ControlTrigger (it turns dead inputs
  live), a Send/Recv: anything but islands and Switches;
* a Merge losing every data input (it is dead too; the analysis stops at Merges), with
  control operands (a Merge waits for those whatever their deadness, an Identity would
  inherit it), or keeping two inputs or more while its `value_index` is used.

**Rewrites.** Where its predicate is never dead, a Switch's live output is its data operand
(it is live exactly when the data is); otherwise the Switch stays. A folded Switch goes once
nothing uses it. Dead nodes are erased. A Merge with one live input left becomes an island
forwarding it (`tf.Identity`: dead exactly when that input is, as the Merge was, its other
inputs being always dead); a used `value_index` becomes the constant position of that input
in the Merge, in an island waiting on the forwarding island's control so that it is dead
when the Merge would have been. A Merge with several live inputs left keeps them.

Switches on a predicate and on Identity islands of it (a v1 cond's `Switch(p, p)` and its
branches' `Switch(x, Identity(p))`) share their atom in the analysis and are one fold.

**Identical Switches** (same data, predicate, control operands, attributes but the name)
compute the same outputs with the same deadness; the later one's users take the first one's.

Cost: the dedup is one scan of each graph's block. The analysis (one saturation of the
island-merging facts) runs only when a Switch has a constant predicate, once per round for
every constant predicate (folds whose rewrites overlap wait for the next round: nested
conditionals take one round per level). A predicate's cone is walked over at most
`MAX_CONE` values, with an explicit stack, and the interpreter is loaded only for a cone of
constants. The saturation is the cost on large inputs: 500 chained constant conds (14k ops)
take 6.8 s CPU, the din sets growing along the chain (island coarsening pays the same).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import attrs
import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation, Value
from egraft.ir.dialects.tf_types import is_control
from egraft.ir.erasure import erase_all

if TYPE_CHECKING:
    from egraft.rewrite.islands.facts import GraphNodes, PortDeadness

#: Ops a predicate's constant cone may hold at most (the walk back from a Switch stops there).
MAX_CONE = 64

#: Nodes a dead branch may hold: anything else makes the fold be refused (see above).
_REMOVABLE = ("tf_executor.island", "tf_executor.Switch", "tf_executor._SwitchN")
_FORWARDING = ("tf.Identity", "tf.Snapshot", "tf.StopGradient")
#: Attributes naming a node rather than saying what it computes (left out when comparing Switches).
_NAMES = frozenset({"_mlir_name"})


@cache
def _foldable() -> frozenset[str]:
    from egraft.patterns.grappler.constant_folding import foldable_ops  # the step is imported with
    return frozenset(foldable_ops())  # every structural step; these imports cost ~1 s, paid where a Switch is


def _body(op: Operation) -> list[Operation]:
    return op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []


def _controls(op: Operation) -> list[Value]:
    return [v for v in op.operands if is_control(v.type)]


def _data(op: Operation) -> list[Value]:
    return [v for v in op.operands if not is_control(v.type)]


# ------------------------------------------------------------------ constant predicates


def _cone(value: Value) -> bool:
    """Whether ``value`` is computed by ops in islands from `tf.Const` ops alone (whenever it is
    computed). Checked before evaluating anything: most predicates read a feed, found here
    without loading the interpreter."""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        owner = v.owner_op
        if owner is None or len(seen) > MAX_CONE:
            return False  # a block argument is a feed
        if owner.name == "tf_executor.island":
            stack.append(_body(owner)[-1].operands[v.index])
        elif owner.parent_op is None or owner.parent_op.name != "tf_executor.island" or owner.regions:
            return False
        elif owner.name != "tf.Const":
            stack.extend(owner.operands)
    return True


def _step(value: Value) -> tuple[str, object] | None:
    """How ``value`` (in a cone `_cone` accepted) is computed: ('const', attr), ('alias',
    value) or ('op', op); None for an op that is not evaluated."""
    owner = value.owner_op
    assert owner is not None
    if owner.name == "tf_executor.island":
        return "alias", _body(owner)[-1].operands[value.index]
    if owner.name == "tf.Const":
        return "const", owner.attr("value")
    if owner.name in _FORWARDING:
        return "alias", owner.operands[0]
    if owner.name in _foldable() and len(owner.results) == 1:
        return "op", owner
    return None


def _evaluate(value: Value) -> A.DenseElementsAttr | None:
    """The value of ``value``'s cone, evaluated op by op (an explicit stack, no recursion)."""
    from egraft.patterns.grappler.constant_folding import dense_attr, evaluate

    known: dict[Value, A.Attribute] = {}
    stack = [value]
    while stack:
        top = stack[-1]
        if top in known:
            stack.pop()
            continue
        how = _step(top)
        if how is None:
            return None
        kind, what = how
        if kind == "const":
            if not isinstance(what, A.DenseElementsAttr):
                return None
            known[top] = what
        elif kind == "alias":
            if what not in known:
                stack.append(what)  # type: ignore[arg-type]
                continue
            known[top] = known[what]  # type: ignore[index]
        else:
            op: Operation = what  # type: ignore[assignment]
            missing = [v for v in op.operands if v not in known]
            if missing:
                stack.extend(missing)
                continue
            attrs = op.all_attributes()
            out = evaluate(op.name, tuple(attrs), [known[v] for v in op.operands], top.type, list(attrs.values()))
            made = dense_attr(out, T.element_type(top.type)) if out is not None else None
            if made is None:
                return None
            known[top] = made
        stack.pop()
    found = known[value]
    return found if isinstance(found, A.DenseElementsAttr) else None


def constant_predicate(switch: Operation) -> bool | None:
    """``switch``'s predicate when it is computed from constants alone and is a scalar."""
    attr = _evaluate(switch.operands[1]) if _cone(switch.operands[1]) else None
    if attr is None or not isinstance(attr.type, T.RankedTensorType) or attr.type.shape != ():
        return None
    from egraft.ir.semantics import Unsupported, attribute_value

    try:
        return bool(np.asarray(attribute_value(attr, attr.type)).reshape(-1)[0])
    except (Unsupported, TypeError, ValueError):
        return None


# ------------------------------------------------------------------ identical Switches


def _dedupe(graph: Operation) -> int:
    """Later Switches identical to an earlier one (operands, attributes but the node name, types)
    are replaced by it."""
    first: dict[tuple, Operation] = {}
    done = 0
    for op in list(_body(graph)):
        if op.name != "tf_executor.Switch":
            continue
        attrs = tuple(sorted((k, str(v)) for k, v in op.all_attributes().items() if k not in _NAMES))
        key = (tuple(map(id, op.operands)), attrs, tuple(map(str, op.result_types)))
        kept = first.setdefault(key, op)
        if kept is not op:
            op.replace_all_uses_with(kept.results)
            op.erase()
            done += 1
    return done


# ------------------------------------------------------------------ dead branches


def _merge_plan(merge: Operation, dead_values: set[Value]) -> list[int] | None:
    """The positions of the data inputs ``merge`` keeps, or None when the fold must be refused."""
    live = [k for k, v in enumerate(_data(merge)) if v not in dead_values]
    if not live or _controls(merge) or (len(live) > 1 and merge.results[1].uses):
        return None
    return live


def _forward_merge(merge: Operation, position: int, value: Value) -> None:
    """``merge`` with ``value`` (its input ``position``) as its only live input: an island
    forwarding the value, and the position as a constant dead when the Merge would be."""
    from egraft.rewrite.islands.breakup import make_island

    device = {"device": merge.attr("device")} if merge.attr("device") is not None else {}
    ident = Operation.create("tf.Identity", [value], [merge.results[0].type], device, loc=merge.loc)
    island = make_island([], [ident], [ident.results[0]], merge.loc)
    block = merge.parent
    assert block is not None
    block.insert_before(merge, island)
    replacements = [island.results[0], merge.results[1], island.results[-1]]
    if merge.results[1].uses:
        index_type = merge.results[1].type
        const = Operation.create("tf.Const", (), [index_type],
                                 {"value": A.DenseElementsAttr(T.RankedTensorType((), T.i32), position), **device},
                                 loc=merge.loc)
        holder = make_island([island.results[-1]], [const], [const.results[0]], merge.loc)
        block.insert_before(merge, holder)
        replacements[1] = holder.results[0]
    merge.replace_all_uses_with(replacements)
    merge.erase()


def _shrink_merge(merge: Operation, live: list[Value]) -> None:
    """``merge`` keeping only its ``live`` inputs (its value_index is unused)."""
    attrs = dict(merge.all_attributes())
    if "N" in attrs:
        attrs["N"] = A.IntegerAttr(len(live), T.i64)
    smaller = Operation.create(merge.name, live, merge.result_types, attrs, loc=merge.loc)
    block = merge.parent
    assert block is not None
    block.insert_before(merge, smaller)
    merge.replace_all_uses_with(smaller.results)
    merge.erase()


@attrs.define
class _Fold:
    """One predicate's fold, planned on the analysis: its Switches, the port never taken, the
    dead nodes, the Merges that lose inputs (the positions each keeps), and the Switches whose
    live output is their data (their predicate is never dead)."""

    switches: list[Operation]
    port: int
    dead: list[Operation]
    merges: dict[Operation, list[int]]
    forwarded: list[Operation]  # the Switches whose predicate is never dead

    def footprint(self) -> set[Operation]:
        """The nodes the fold rewrites: two folds apply in one round only when theirs are apart."""
        return set(self.switches) | set(self.dead) | set(self.merges)

    def apply(self) -> None:
        port = self.port
        for s in self.forwarded:
            s.results[1 - port].replace_all_uses_with(s.operands[0])
        for merge, keep in self.merges.items():
            data = _data(merge)  # read now: a live Switch output among them was just forwarded
            if len(keep) == 1:
                _forward_merge(merge, keep[0], data[keep[0]])
            elif len(keep) < len(data):
                _shrink_merge(merge, [data[k] for k in keep])
        erase_all(self.dead)
        erase_all([s for s in self.switches if not any(r.uses for r in s.results)])


def _plan(switches: list[Operation], port: int, found: PortDeadness, nodes: GraphNodes) -> _Fold | None:
    """The fold removing what dies when ``switches`` never take ``port``; None if refused."""
    dead = [nodes.ops[n] for n in sorted(found.dead) if nodes.ops[n].name != "tf_executor.Merge"]
    if any(op.name not in _REMOVABLE for op in dead):
        return None
    dead_values = {s.results[port] for s in switches} | {r for op in dead for r in op.results}
    if any(v in dead_values for v in nodes.fetch.operands):
        return None
    merges = {u: None for v in dead_values for u in v.users if u.name == "tf_executor.Merge"}
    plans = {m: _merge_plan(m, dead_values) for m in merges}
    if any(p is None for p in plans.values()):
        return None
    forwarded = [s for s in switches if nodes.index[s.operands[1].owner_op] in found.live]  # type: ignore[index]
    return _Fold(switches, port, dead, plans, forwarded)  # type: ignore[arg-type]


def _alias_root(value: Value) -> Value:
    """The value ``value`` is through islands holding one `tf.Identity` (the analysis takes
    them for the same value, so Switches on either share their deadness atoms: one fold)."""
    from egraft.rewrite.islands.facts import identity_input

    seen = {value}
    while value.owner_op is not None and value.owner_op.name == "tf_executor.island" and value.index == 0:
        source = identity_input(value.owner_op)
        if source is None or source in seen:
            break
        seen.add(source)
        value = source
    return value


def _fold_constant_switches(graph: Operation) -> int:
    """Fold the Switches on constant predicates. Each round runs the analysis once for every
    constant predicate and applies the folds whose footprints are apart (a fold changes the
    graph the analysis read, so an overlapping one waits for the next round); a refused
    predicate is not tried again."""
    from egraft.rewrite.islands.facts import collect, port_deadness

    tried: set[Operation] = set()
    done = 0
    while True:
        groups: dict[Value, tuple[bool, list[Operation]]] = {}
        for op in _body(graph):
            if op.name == "tf_executor.Switch" and len(op.operands) == 2 and op not in tried:
                known = constant_predicate(op)
                if known is not None:
                    groups.setdefault(_alias_root(op.operands[1]), (known, []))[1].append(op)
        if not groups:
            return done
        nodes = collect(graph)
        ports = [(switches, 0 if known else 1) for known, switches in groups.values()]  # the port never taken
        touched: set[Operation] = set()
        for (switches, port), found in zip(ports, port_deadness(nodes, ports)):
            if any(s in touched or s.parent is None for s in switches):
                continue  # an earlier fold of this round removed or rewired it: next round
            fold = _plan(switches, port, found, nodes)
            if fold is not None and fold.footprint() & touched:
                continue  # next round, on the graph this round leaves
            tried.update(switches)
            if fold is not None:
                touched |= fold.footprint()
                fold.apply()
                done += len(switches)


def fold_switches(root: Operation) -> int:
    """Merge identical Switches and fold those on constant predicates in every tf_executor
    graph under ``root``; how many Switches were rewritten."""
    done = 0
    for graph in [op for op in root.walk() if op.name == "tf_executor.graph"]:
        done += _dedupe(graph)
        done += _fold_constant_switches(graph)
    return done
