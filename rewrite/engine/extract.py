"""DAG-aware extraction of a term DAG from an exported e-graph.

The cost of an extracted program is its *DAG* cost: every chosen e-node reachable
from the roots is paid once however many parents use it. egglog 13.2's extractor
minimises *tree* cost instead (a shared child is paid once per use, in a u64 that
saturates) and panics on large rewritten graphs, so extraction happens here.

Algorithm (details and measured gap to ILP in docs/engine.md):

1. **Tree-cost fixpoint.** ``best[c] = min over e-nodes n of c of cost(n) + Σ w[d]·best[d]``
   over n's child classes d, computed by a frontier Bellman-Ford in numpy: each
   round re-evaluates only the parents of classes that improved, so the work is
   proportional to the e-graph times the number of improvements, not to its depth.
   A deep graph has one round per level, mostly of one or two e-nodes, and those
   rounds run in plain Python with numpy's arithmetic (a 100k-op chain: 20 s -> 3 s).
   Tree costs double wherever two paths meet (an op reading a value and the effect
   token that already depends on it), so on deep graphs they grow exponentially with
   depth; they saturate at :data:`TREE_COST_CAP` instead of overflowing to ``inf``,
   which would read as "no extractable e-node" (see :meth:`_Graph.node_totals`).
2. **Acyclic selection.** A depth-first walk from the roots takes, in each class,
   the cheapest e-node none of whose children is on the walk's stack; that
   guarantees an acyclic result even where costs tie (zero-cost ops, saturated
   floats) or the weights below break the usual "children are cheaper" argument.
   The result is the set of classes reachable through the final choice, so the
   reported cost is always the DAG cost of the returned table.
3. **Sharing passes.** The first pass (``w = 1``) is plain tree extraction. Each
   further pass sets ``w[d] = 1 / uses(d)``, the number of chosen parents of ``d``
   in the previous selection, so a class that is shared is priced as shared. The
   selection with the lowest true DAG cost wins, hence the result is never worse
   than tree extraction.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from egraft.rewrite.engine.export import EGraphArrays
from egraft.rewrite.engine.termtable import Payload, Schema, TermTable

#: Tree costs saturate here. Far above any DAG cost (a sum of per-node costs) yet far
#: enough below float64's maximum (1.8e308) that summing the capped costs of any
#: realistic number of children (up to 1.8e8) stays finite.
TREE_COST_CAP = 1e300


class ExtractionError(ValueError):
    """The e-graph or the cost model admits no extraction (an unextractable root, bad costs)."""


class CostModel(Protocol):
    """Prices every e-node of an exported e-graph (cost > 0 keeps extraction meaningful)."""

    def node_costs(self, g: EGraphArrays) -> np.ndarray: ...


@dataclass(frozen=True)
class OpCost:
    """A fixed cost per operator name (vectorised: one lookup per operator, not per node)."""

    table: Mapping[str, float]
    default: float = 1.0

    def node_costs(self, g: EGraphArrays) -> np.ndarray:
        per_op = np.array([self.table.get(op, self.default) for op in g.op_names] or [0.0])
        return per_op[g.node_op].astype(np.float64)


@dataclass(frozen=True)
class FnCost:
    """A cost computed per e-node by ``fn(op, payload, child_classes)``; flexible, ~1 µs/node."""

    fn: Callable[[str, Payload | None, tuple[int, ...]], float]

    def node_costs(self, g: EGraphArrays) -> np.ndarray:
        ptr, kids = g.child_ptr, g.children
        return np.array([self.fn(g.op_names[g.node_op[j]], g.payloads[j],
                                 tuple(kids[ptr[j]:ptr[j + 1]].tolist())) for j in range(g.n_nodes)],
                        dtype=np.float64)


@dataclass
class Extraction:
    """The chosen e-node per class (``-1`` where unreached) and the DAG it spells."""

    table: TermTable
    choice: np.ndarray
    cost: float
    seconds: float
    passes: list[float]  # DAG cost of each pass's selection
    optimal: bool | None = None  # set by exact extraction: proven optimal, or stopped early


def _segments(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Flat indices of the ranges ``[starts[i], starts[i]+lens[i])``, concatenated."""
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = (starts - lens.cumsum() + lens).repeat(lens)  # methods: no Python-level wrappers
    return offsets + np.arange(total)


def _numpy_sum(values: list[float], width: int | None) -> float:
    """``values`` summed exactly as numpy sums them (bit for bit), as a row padded with zeros
    to ``width`` by ``np.add.reduce(axis=1)``, or sequentially (``np.bincount``) if ``width``
    is None. numpy adds a row of n to 0.0 pairwise: sequentially below 8 terms (so, with
    zero padding, exactly the sequential sum), else in 8 interleaved accumulators per block
    of up to 128, halving larger rows (numpy's ``pairwise_sum``).
    """
    if width is None or width < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    return 0.0 + _pairwise(values + [0.0] * (width - len(values)), 0, width)


def _pairwise(row: list[float], start: int, n: int) -> float:
    if n < 8:
        total = 0.0
        for v in row[start:start + n]:
            total += v
        return total
    if n <= 128:
        acc = row[start:start + 8]
        end = start + n - n % 8
        for i in range(start + 8, end, 8):
            for j in range(8):
                acc[j] += row[i + j]
        total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
        for v in row[end:start + n]:
            total += v
        return total
    half = n // 2
    half -= half % 8
    return _pairwise(row, start, half) + _pairwise(row, start + half, n - half)


def _distinct(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values of a small fresh array, sorted in place (``np.unique`` is slower here)."""
    a.sort()
    keep = np.ones(len(a), bool)
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


class _Graph:
    """Derived indexes of an exported e-graph shared by all passes."""

    #: Children are gathered through a padded matrix (one fancy index per round) unless
    #: padding would take more than this many times the real child slots.
    MAX_PADDING = 4
    #: Relaxation rounds whose frontier has fewer e-nodes than this run in plain Python
    #: (:meth:`_small_rounds`): a numpy round costs ~60 µs however small, and a deep graph
    #: has one round per level of depth (a 100k-op chain: 200k rounds of one or two e-nodes).
    SMALL_FRONTIER = 16

    def __init__(self, g: EGraphArrays, costs: np.ndarray) -> None:
        self.g, self.costs = g, costs
        self.arity = np.diff(g.child_ptr)
        edge_node = np.repeat(np.arange(g.n_nodes), self.arity)
        self.par_node = edge_node[np.argsort(g.children, kind="stable")]
        self.par_ptr = np.zeros(g.n_classes + 1, np.int64)
        np.cumsum(np.bincount(g.children, minlength=g.n_classes), out=self.par_ptr[1:])
        self.par_len = np.diff(self.par_ptr)
        self.leaves = np.flatnonzero(self.arity == 0)
        width = int(self.arity.max()) if g.n_nodes else 0
        self.pad: np.ndarray | None = None
        if g.n_nodes * width <= self.MAX_PADDING * (len(g.children) + g.n_nodes):
            # Row n holds n's child classes, then the sentinel class n_classes (value 0).
            self.pad = np.full((g.n_nodes, width), g.n_classes, np.int64)
            self.pad[edge_node, np.arange(len(g.children)) - g.child_ptr[edge_node]] = g.children
        # Per e-node, 1 + max level of its children; a class's level is its nodes' minimum.
        # Levels are the rounds of a bottom-up construction, so every class with a finite
        # level has an e-node whose children all sit strictly lower: following such nodes
        # can never cycle. They are the last resort of select_acyclic.
        self.node_level: np.ndarray | None = None
        self._lists: tuple[list, ...] | None = None  # see lists()

    def parents_of(self, classes: np.ndarray) -> np.ndarray:
        """Sorted distinct e-nodes having a child in ``classes``.

        Sorting the gathered parents costs O(k log k) in their number k, so a round of
        :meth:`relax` costs what its frontier costs, not what the whole e-graph does.
        """
        return _distinct(self.par_node.take(_segments(self.par_ptr.take(classes), self.par_len.take(classes))))

    def reduce_children(self, nodes: np.ndarray, val: np.ndarray, how: str,
                        scale: np.ndarray | None = None) -> np.ndarray:
        """Per node of ``nodes``, the ``"sum"`` or ``"max"`` of ``val·scale`` over its child classes.

        ``val`` (and ``scale``) have one extra trailing entry for the padding sentinel; its
        value must be 0. Only the children of ``nodes`` are read.
        """
        if self.pad is not None:
            kids = self.pad.take(nodes, axis=0)  # take: cheaper than fancy indexing on small arrays
            v = val.take(kids) if scale is None else val.take(kids) * scale.take(kids)
            return np.add.reduce(v, axis=1) if how == "sum" else v.max(axis=1, initial=0.0)
        lens = self.arity[nodes]
        kids = self.g.children[_segments(self.g.child_ptr[nodes], lens)]
        seg = np.repeat(np.arange(len(nodes)), lens)
        v = val[kids] if scale is None else val[kids] * scale[kids]
        if how == "sum":
            return np.bincount(seg, weights=v, minlength=len(nodes))
        top = np.zeros(len(nodes))
        np.maximum.at(top, seg, v)
        return top

    def relax(self, weight: np.ndarray | None, rtol: float,
              levels: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Least ``val[c] = min over e-nodes n of c of`` :meth:`node_totals` (frontier Bellman-Ford).

        ``val`` carries the sentinel entry of :meth:`reduce_children` (returned too, 0).
        Each round re-evaluates only the parents of the classes that improved in the last
        one, starting from the leaves, and touches no array of e-graph size: the number of
        rounds is the depth of the e-graph (thousands at 100k ops), so a round must cost
        what its frontier costs. Improvements smaller than ``rtol`` (relative) are ignored:
        with weights below 1 a cycle keeps shaving off ever smaller amounts.

        With ``levels``, also returns each class's *level*, the round in which it first
        became finite (the sentinel and unreachable classes: 0 and inf). A node becomes
        finite in the round after its last child did, so that is ``min over nodes of
        1 + max child level``. A round is a few dozen numpy calls on a small frontier, so
        every call it can skip counts, and rounds of fewer than :attr:`SMALL_FRONTIER`
        e-nodes run in Python instead, with the same arithmetic (same results, bit for bit).
        """
        g = self.g
        val = np.full(g.n_classes + 1, np.inf)
        val[-1] = 0.0
        level = np.full(g.n_classes + 1, np.inf) if levels else None
        if level is not None:
            level[-1] = 0.0
        cand = np.full(g.n_classes, np.inf)  # scratch per round, back to inf after each
        frontier = self.leaves
        weights = None if weight is None else weight.tolist()
        rounds = 0
        factor = 1 - rtol
        while len(frontier):
            if len(frontier) < self.SMALL_FRONTIER:
                frontier, rounds = self._small_rounds(frontier, val, level, weights, factor, rounds)
                continue
            rounds += 1
            cls = g.node_class.take(frontier)
            np.minimum.at(cand, cls, self.node_totals(frontier, val, weight))
            improved = _distinct(cls[cand.take(cls) < val.take(cls) * factor])
            if level is not None:
                level[improved[np.isinf(val[improved])]] = rounds
            val[improved] = cand[improved]
            cand[cls] = np.inf
            frontier = self.parents_of(improved)
        return val, level

    def lists(self) -> tuple[list, ...]:
        """``child_ptr``, ``children``, ``node_class``, costs, ``par_ptr``, ``par_node`` as lists.

        For the code that reads them one element at a time (Python rounds, the acyclic
        walk): list indexing costs far less than numpy's scalar boxing. Made once.
        """
        if self._lists is None:
            g = self.g
            self._lists = (g.child_ptr.tolist(), g.children.tolist(), g.node_class.tolist(),
                           self.costs.tolist(), self.par_ptr.tolist(), self.par_node.tolist())
        return self._lists

    def _small_rounds(self, frontier: np.ndarray, val: np.ndarray, level: np.ndarray | None,
                      weights: list[float] | None, factor: float, rounds: int) -> tuple[np.ndarray, int]:
        """Rounds of :meth:`relax` in plain Python while the frontier stays small.

        Returns the next frontier and the round count. Same arithmetic as the numpy round
        (:func:`_numpy_sum`, the cap of :meth:`node_totals`), so the values do not depend
        on which kind of round ran.
        """
        ptr, kids, node_class, costs, par_ptr, par_node = self.lists()
        width = None if self.pad is None else self.pad.shape[1]
        sequential = width is None or width < 8
        get = val.item  # one element as a Python float, without a numpy scalar
        inf, cap, small = math.inf, TREE_COST_CAP, self.SMALL_FRONTIER
        nodes: list[int] = frontier.tolist()
        while 0 < len(nodes) < small:
            rounds += 1
            cand: dict[int, float] = {}
            for n in nodes:
                children = kids[ptr[n]:ptr[n + 1]]
                if sequential:  # _numpy_sum's first case, inlined: this loop is the hot one
                    total = 0.0
                    if weights is None:
                        for d in children:
                            total += get(d)
                    else:
                        for d in children:
                            total += get(d) * weights[d]
                else:
                    total = _numpy_sum([get(d) if weights is None else get(d) * weights[d] for d in children],
                                       width)
                total = costs[n] + total
                if cap < total < inf:
                    total = cap
                c = node_class[n]
                if total < cand.get(c, inf):
                    cand[c] = total
            parents: set[int] = set()
            for c, total in cand.items():
                old = get(c)
                if total < old * factor:
                    if level is not None and old == inf:
                        level[c] = rounds
                    val[c] = total
                    parents.update(par_node[par_ptr[c]:par_ptr[c + 1]])
            nodes = list(parents)
        return np.array(nodes, np.int64), rounds

    def node_totals(self, nodes: np.ndarray, best: np.ndarray, weight: np.ndarray | None) -> np.ndarray:
        """``cost(n) + Σ w[d]·best[d]`` over the child classes d of each node, capped.

        ``best`` and ``weight`` carry the sentinel entry of :meth:`reduce_children`;
        ``weight=None`` means all ones (the first pass), which saves a gather and a product.

        The cap is what keeps deep graphs extractable. Tree cost counts a shared class
        once per path to it, and in a lowered tf_executor graph each island reads the
        effect token of the one before and data from earlier ones, so tree costs double
        every few islands: ResNet50 reaches 1.6e308 and then ``inf``. An infinite class
        is one the fixpoint never reached, so its e-nodes got no preference, the walk
        got choice ``-1`` and indexed past the children array (issue #9's IndexError in
        ResNet50, DenseNet121, EfficientNetB0, InceptionV3 and NASNetMobile). Saturating
        keeps every extractable class finite; classes at the cap tie, and the sharing
        passes, whose weighted costs stay near the DAG cost, decide between them.
        Graphs below the cap are extracted exactly as before.
        """
        totals = self.costs.take(nodes) + self.reduce_children(nodes, best, "sum", weight)
        over = totals > TREE_COST_CAP
        if over.any():  # infinite (a child not reached yet) stays infinite
            totals[over & (totals < np.inf)] = TREE_COST_CAP
        return totals

    def fixpoint(self, weight: np.ndarray | None, rtol: float) -> np.ndarray:
        """Least ``best`` per class under the weighted tree cost (with the sentinel entry).

        The first call also sets :attr:`node_level` from the rounds of the relaxation.
        """
        best, level = self.relax(weight, rtol, levels=self.node_level is None)
        if level is not None:
            self.node_level = self.reduce_children(np.arange(self.g.n_nodes), level, "max") + 1
        return best

    def safe_nodes(self, pref_ptr: np.ndarray, pref_nodes: np.ndarray) -> np.ndarray:
        """Per class, its most preferred e-node of minimal level (``-1`` if none)."""
        g = self.g
        node_level = self.node_level
        assert node_level is not None, "levels come with the first fixpoint"
        rank = np.full(g.n_nodes, np.iinfo(np.int64).max)
        ok = pref_nodes >= 0
        rank[pref_nodes[ok]] = np.flatnonzero(ok)
        class_level = np.full(g.n_classes, np.inf)
        allowed = np.isfinite(self.costs)  # excluded e-nodes (extract's ``exclude``) cost inf
        np.minimum.at(class_level, g.node_class[allowed], node_level[allowed])
        candidates = np.flatnonzero(allowed & np.isfinite(node_level) & (node_level == class_level[g.node_class]))
        best_rank = np.full(g.n_classes, np.iinfo(np.int64).max)
        np.minimum.at(best_rank, g.node_class[candidates], rank[candidates])
        safe = np.full(g.n_classes, -1, np.int64)
        have = best_rank < np.iinfo(np.int64).max
        safe[have] = pref_nodes[best_rank[have]]
        return safe

    def preferences(self, best: np.ndarray, weight: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """E-nodes of each class, cheapest first: CSR (ptr, nodes)."""
        g = self.g
        totals = self.node_totals(np.arange(g.n_nodes), best, weight)
        order = np.lexsort((self.arity, totals, g.node_class))
        ptr = np.zeros(g.n_classes + 1, np.int64)
        np.cumsum(np.bincount(g.node_class, minlength=g.n_classes), out=ptr[1:])
        keep = np.isfinite(totals[order])
        return ptr, np.where(keep, order, -1)


def _unextractable(c: int) -> ExtractionError:
    return ExtractionError(f"e-class {c} has no e-node of finite cost whose children are extractable")


#: ``on_cycle(d, stack, cursor, ends, state)`` of :func:`_walk`: the child class ``d`` is on the
#: stack, at position ``state[d] - 1``.
OnCycle = Callable[[int, list[int], list[int], list[int], list[int]], None]
#: ``state`` of a class the walk has finished (a new class is 0, one on the stack its position + 1).
_DONE = -1


def _walk(ptr: Sequence[int], kids: Sequence[int], choice: Sequence[int], roots: Sequence[int],
          on_cycle: OnCycle) -> list[int]:
    """Depth-first walk from ``roots`` through ``choice`` (class -> e-node); finished classes in post-order.

    Iterative: per stack entry, the class, the next child slot to look at (absolute, into
    ``kids``) and the end of its slots. ``state`` is 0 for a new class, its stack position
    + 1 while on the stack (so a cycle finds where it starts in O(1): the stack is as deep
    as the graph), :data:`_DONE` once finished. When a child is on the stack, ``on_cycle``
    must raise or change the choice of a class on the stack, truncating the walk above it.
    """
    state = [0] * len(choice)
    post: list[int] = []
    stack: list[int] = []
    cursor: list[int] = []
    ends: list[int] = []
    for d in roots:
        while d >= 0:
            if state[d] == 0:
                n = choice[d]
                if n < 0:
                    raise _unextractable(d)
                stack.append(d)
                state[d] = len(stack)
                cursor.append(ptr[n])
                ends.append(ptr[n + 1])
            elif state[d] > 0:
                on_cycle(d, stack, cursor, ends, state)
            d = -1
            while stack:
                lo, hi = cursor[-1], ends[-1]
                while lo < hi and state[kids[lo]] == _DONE:
                    lo += 1
                if lo < hi:
                    cursor[-1] = lo
                    d = kids[lo]
                    break
                c = stack.pop()
                state[c] = _DONE
                post.append(c)
                cursor.pop()
                ends.pop()
    return post


def _cyclic(d: int, *_: list[int]) -> None:
    raise ExtractionError(f"the choice is cyclic through e-class {d}")


def post_order(ptr: Sequence[int], kids: Sequence[int], choice: Sequence[int],
               roots: Sequence[int]) -> list[int]:
    """The classes reachable from ``roots`` through ``choice``, each once, children first.

    ``ptr``/``kids`` are the e-graph's CSR children and ``choice`` the e-node per class,
    as Python lists (read one element at a time). Raises if the choice is cyclic.
    """
    return _walk(ptr, kids, choice, roots, _cyclic)


def _still_reached(ptr: Sequence[int], kids: Sequence[int], choice: Sequence[int],
                   roots: Sequence[int], post: list[int]) -> list[int]:
    """The classes of ``post`` that ``choice`` reaches from ``roots``, in the same order.

    ``post`` lists finished classes children first, and a finished class's choice never
    changes, so one sweep from parents to children marks everything reachable (cheaper
    than a second walk: no stack).
    """
    marked = [False] * len(choice)
    for r in roots:
        marked[r] = True
    for c in reversed(post):
        if marked[c]:
            n = choice[c]
            for d in kids[ptr[n]:ptr[n + 1]]:
                marked[d] = True
    return [c for c in post if marked[c]]


def select_acyclic(g: EGraphArrays, roots: Sequence[int], pref_ptr: np.ndarray,
                   pref_nodes: np.ndarray, safe: Callable[[], np.ndarray],
                   children: tuple[list[int], list[int]] | None = None) -> tuple[np.ndarray, list[int]]:
    """Choose one e-node per class reachable from ``roots``, cheapest first, acyclically.

    Returns the choice (``-1`` for unreached classes) and the reached classes in
    post-order (children before parents), the order the output table is built in.
    ``children`` may give ``g``'s ``child_ptr`` and ``children`` as lists, if made already.

    Each class starts with its preferred e-node. When the depth-first walk meets a
    class already on its stack, the topmost class of that cycle still using its
    preferred node is *repaired*: it switches to its cheapest e-node whose
    children are all finished, or else to ``safe()[c]``, an e-node whose children
    all have a strictly lower level (see :attr:`_Graph.node_level`; asked for only when
    needed). Neither kind of node can close a cycle, every class is repaired at most
    once, so the walk terminates in near-linear time.

    A repair abandons the subtree of the victim's old node, and classes the walk had
    already finished under it may be reachable no more. So when a repair abandoned any
    finished class, the finished classes are filtered down to those the final choice reaches
    (:func:`_still_reached`): the choice, the table and the reported cost then describe
    one and the same DAG. (Counting the abandoned classes made the reported cost 14 for
    a DAG of cost 13 on ``(x+x + (x*x-(x+x))) + (0 + (x*x-(x+x)))``.)
    """
    ptr, kids = children or (g.child_ptr.tolist(), g.children.tolist())
    pref, pnodes = pref_ptr.tolist(), pref_nodes.tolist()
    has = pref_ptr[:-1] < pref_ptr[1:]
    choice = np.where(has, pref_nodes[np.where(has, pref_ptr[:-1], 0)], -1).tolist() if len(pref_nodes) else []
    repaired = [False] * g.n_classes
    fallback: list[int] = []
    abandoned = False  # did a repair drop a node under which the walk had finished classes?

    def repair(d: int, stack: list[int], cursor: list[int], ends: list[int], state: list[int]) -> None:
        nonlocal abandoned
        low = state[d] - 1
        k = next(k for k in range(len(stack) - 1, low - 1, -1) if not repaired[stack[k]])
        # Entries from k up have walked past a child only if some class finished under them.
        abandoned = abandoned or any(cursor[j] > ptr[choice[stack[j]]] for j in range(k, len(stack)))
        for x in stack[k + 1:]:
            state[x] = 0
        del stack[k + 1:], cursor[k + 1:], ends[k + 1:]
        victim = stack[k]
        repaired[victim] = True
        n = choice[victim] = replacement(victim, state)
        cursor[k], ends[k] = ptr[n], ptr[n + 1]

    def replacement(c: int, state: list[int]) -> int:
        for cur in range(pref[c], pref[c + 1]):
            node = pnodes[cur]
            if node >= 0 and all(state[k] == _DONE for k in kids[ptr[node]:ptr[node + 1]]):
                return node
        if not fallback:
            fallback.extend(safe().tolist())
        if fallback[c] < 0:
            raise _unextractable(c)
        return fallback[c]

    post = _walk(ptr, kids, choice, roots, repair)
    if abandoned:
        post = _still_reached(ptr, kids, choice, roots, post)
    reached = np.full(g.n_classes, -1, np.int64)
    reached[post] = np.asarray(choice, np.int64)[post]
    return reached, post


def dag_cost(g: EGraphArrays, choice: np.ndarray, roots: Sequence[int], costs: np.ndarray) -> float:
    """Total cost of the distinct e-nodes reachable from ``roots`` through ``choice``."""
    seen = np.zeros(g.n_classes, bool)
    todo = list(roots)
    paid = []
    ptr, kids = g.child_ptr, g.children
    while todo:
        c = todo.pop()
        if seen[c]:
            continue
        seen[c] = True
        node = choice[c]
        paid.append(node)
        todo.extend(kids[ptr[node]:ptr[node + 1]].tolist())
    return _total(costs, paid)


def _total(costs: np.ndarray, nodes: Sequence[int] | np.ndarray) -> float:
    """Exactly rounded sum (``fsum``), so it does not depend on the order nodes are found in."""
    return math.fsum(costs[np.asarray(nodes, np.int64)].tolist())


def build_table(g: EGraphArrays, schema: Schema, choice: np.ndarray, post: Sequence[int],
                roots: Sequence[int]) -> TermTable:
    """The chosen DAG as a term table; its ``roots`` follow ``roots`` one to one.

    Built column-wise in one go: ``post`` lists children before parents, so the table is
    topologically ordered by construction and needs no per-node checks.
    """
    post_a = np.asarray(post, np.int64)
    nodes = choice[post_a]
    new_id = np.full(g.n_classes, -1, np.int64)
    new_id[post_a] = np.arange(len(post_a))
    arity = np.diff(g.child_ptr)[nodes]
    kids = new_id[g.children[_segments(g.child_ptr[nodes], arity)]]
    return TermTable.from_columns(schema, g.op_names, g.node_op[nodes].tolist(), arity.tolist(),
                                  kids.tolist(), [g.payloads[n] for n in nodes.tolist()],
                                  new_id[np.asarray(roots, np.int64)].tolist())


def _usage_weights(g: EGraphArrays, choice: np.ndarray, post: Sequence[int],
                   roots: Sequence[int]) -> np.ndarray:
    """``1 / (number of chosen parents)`` for reached classes, 1 elsewhere (and the sentinel)."""
    nodes = choice[np.asarray(post, np.int64)]
    kids = g.children[_segments(g.child_ptr[nodes], np.diff(g.child_ptr)[nodes])]
    uses = np.bincount(kids, minlength=g.n_classes) + np.bincount(
        np.asarray(roots, np.int64), minlength=g.n_classes)
    return np.append(1.0 / np.maximum(uses, 1), 1.0)


def extract(g: EGraphArrays, schema: Schema, roots: Sequence[int], cost: CostModel,
            passes: int = 2, exclude: np.ndarray | None = None) -> Extraction:
    """Extract a low-DAG-cost, acyclic term DAG for the root classes ``roots``.

    ``passes=1`` is plain tree-cost extraction (the baseline the result never loses to).
    ``exclude`` (a boolean per e-node) names e-nodes never to choose: they are priced
    infinite, so no class prefers them and no fallback takes them (a class left with
    only excluded e-nodes is unextractable).
    """
    start = time.perf_counter()
    costs = np.asarray(cost.node_costs(g), np.float64)
    if len(costs) != g.n_nodes or not np.isfinite(costs).all() or (costs < 0).any():
        raise ExtractionError("a cost model must give every e-node a finite, non-negative cost")
    if exclude is not None and exclude.any():
        costs = np.where(exclude, np.inf, costs)
    graph = _Graph(g, costs)
    weight: np.ndarray | None = None  # all ones
    best_sel: tuple[float, np.ndarray, list[int]] | None = None
    trace: list[float] = []
    for k in range(passes):
        best = graph.fixpoint(weight, rtol=1e-12 if k == 0 else 1e-4)
        pref = graph.preferences(best, weight)
        choice, post = select_acyclic(g, roots, *pref, lambda: graph.safe_nodes(*pref), graph.lists()[:2])
        total = _total(graph.costs, choice[np.asarray(post, np.int64)])  # post: each reached class once
        trace.append(total)
        if best_sel is None or total < best_sel[0]:
            best_sel = (total, choice, post)
        weight = _usage_weights(g, choice, post, roots)
    assert best_sel is not None
    total, choice, post = best_sel
    table = build_table(g, schema, choice, post, roots)
    return Extraction(table, choice, total, time.perf_counter() - start, trace)


def root_classes(g: EGraphArrays, term_ids: Sequence[int]) -> list[int]:
    """E-classes of term-table ids (``Loaded.base + k``); raises for ids never loaded."""
    classes = g.term_class[np.asarray(term_ids, np.int64)]
    if (classes < 0).any():
        raise KeyError(f"term ids not in the e-graph: {np.asarray(term_ids)[classes < 0][:5]}")
    return classes.tolist()
