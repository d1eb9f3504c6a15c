"""Lowering of a ``tf_executor.graph`` to island-merging facts, and the grouping it yields.

The placement encoding (docs/island_merging.md): each op of the graph's block is a node
numbered by its position; islands are mergeable, every other executor op (and every
island holding a blocking op) is a barrier.  The facts of
:mod:`egraft.patterns.island_merging` are written as TSV files and read with egglog's
``input`` (one command per relation, linear at 100k ops), the rules (compiled by
``rewrite/rules/relational.py``) run stratum by stratum through the engine's
:func:`~egraft.rewrite.engine.saturate`, and the groups are read
off the union-find: two islands belong together iff their ``(Nd i)`` share an e-class.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from egraft.ir import Operation, Value
from egraft.ir.dialects.tf_types import CONTROL
from egraft.ir.effects import has_side_effects
from egraft.patterns import island_merging as IM

from egraft.rewrite.engine.egraph import EGraph, egglog_string
from egraft.rewrite.engine.saturate import Phase, SaturationReport, Schedule, saturate
from egraft.rewrite.engine.termtable import Schema
from egraft.rewrite.rules.relational import add_relational_rules


@dataclass
class GraphNodes:
    """The ops of one graph block (fetch excluded) and the edges between them.

    ``edges`` holds ``(src, result index, dst)``; ``dst == len(ops)`` is the fetch.  A value
    used anywhere inside ``dst`` (nested regions included) is an edge into ``dst``: an
    island capturing it waits for it exactly as for an operand.
    """

    graph: Operation
    ops: list[Operation]
    index: dict[Operation, int]
    fetch: Operation
    edges: list[tuple[int, int, int]] = field(default_factory=list)


def graph_block_ops(graph: Operation) -> tuple[list[Operation], Operation]:
    block = graph.regions[0].blocks[0]
    ops = block.ops
    return ops[:-1], ops[-1]


def uses_inside(op: Operation) -> Iterator[Value]:
    """Every operand of ``op`` and of the ops nested in it."""
    for inner in op.walk():
        yield from inner.operands


def collect(graph: Operation) -> GraphNodes:
    """Nodes and edges of ``graph``'s block."""
    ops, fetch = graph_block_ops(graph)
    index = {op: i for i, op in enumerate(ops)}
    nodes = GraphNodes(graph, ops, index, fetch)
    for d, op in enumerate([*ops, fetch]):
        seen: set[tuple[int, int]] = set()
        for v in uses_inside(op):
            owner = v.owner_op
            s = index.get(owner) if owner is not None else None
            if s is None or s == d or (s, v.index) in seen:
                continue
            seen.add((s, v.index))
            nodes.edges.append((s, v.index, d))
    return nodes




#: Executor ops without effects of their own (the rest, Send/Recv and anything unknown, have some).
_PURE_EXECUTOR_OPS = frozenset({*IM.SWITCHES, "tf_executor.Merge", "tf_executor.Enter", "tf_executor.Exit",
                                "tf_executor.LoopCond", "tf_executor.NextIteration.Source",
                                "tf_executor.NextIteration.Sink", "tf_executor.ControlTrigger"})


#: Ops with effects that only read state: running one more or less often is invisible, and its
#: order matters only against a write (a graph without writes treats them as pure).
READS = frozenset({"tf.ReadVariableOp", "tf.VarHandleOp", "tf.VarIsInitializedOp", "tf.Placeholder",
                   "tf.ResourceGather", "tf.ReadVariableXlaSplitND"})


def _effects(op: Operation) -> tuple[bool, bool]:
    """(reads, writes) of a node of the graph: an island holding ops with effects (``READS`` only
    read; any other, unknown ops included, counts as a write), or an executor op other than the
    control-flow primitives (a write: Send, Recv, ...)."""
    if op.name != "tf_executor.island":
        return False, op.name not in _PURE_EXECUTOR_OPS
    reads = writes = False
    for top in op.regions[0].blocks[0].ops[:-1]:
        for inner in top.walk():
            if has_side_effects(inner):
                if inner.name in READS:
                    reads = True
                else:
                    writes = True
    return reads, writes


def is_blocking_island(op: Operation) -> bool:
    return any(IM.BLOCKING_OP.match(inner.name) for inner in op.walk())


def is_mergeable(op: Operation) -> bool:
    """An island that may join others: not holding a rendezvous or blocking op."""
    return op.name == "tf_executor.island" and not is_blocking_island(op)


def identity_input(op: Operation) -> Value | None:
    """The input of the Identity a single-op island forwards as its first result, if any."""
    body = op.regions[0].blocks[0].ops
    if len(body) != 2 or body[0].name not in IM.IDENTITY_OPS or not body[0].operands:
        return None
    inner, yield_op = body
    if not yield_op.operands or yield_op.operands[0] is not inner.results[0]:
        return None
    return inner.operands[0]


class _Facts:
    """The fact rows of one graph, relation by relation."""

    def __init__(self, nodes: GraphNodes) -> None:
        self.nodes = nodes
        self.rows: dict[str, list[tuple[int, ...]]] = {r.name: [] for r in IM.DECLARATIONS.relations}
        self.feeds: dict[Value, int] = {}
        self.step: dict[int, int] = {}

    def value_ref(self, v: Value) -> tuple[int, int]:
        """(node, result) of a value; values from outside the block get feed ids past the nodes."""
        owner = v.owner_op
        n = self.nodes.index.get(owner) if owner is not None else None
        if n is not None:
            return n, v.index
        feed = self.feeds.setdefault(v, len(self.nodes.ops) + len(self.feeds))
        return feed, 0

    def classify(self, n: int, op: Operation) -> None:
        rows = self.rows
        rows["NodeR"].append((n,))
        self.step[n] = 1
        if is_mergeable(op):
            rows["IslandR"].append((n,))
            if any(has_side_effects(inner) and inner.name not in IM.READ_ONLY_OPS
                   for top in op.regions[0].blocks[0].ops[:-1] for inner in top.walk()):
                rows["PinR"].append((n,))
            ident = identity_input(op)
            if ident is not None:
                rows["IdentR"].append((n, *self.value_ref(ident)))
            return
        rows["BarR"].append((n,))
        if op.name in IM.SWITCHES:
            rows["PassR"].append((n,))
            rows["SwPredR"].append((n, *self.value_ref(op.operands[1])))
        elif op.name in IM.PASS_BARRIERS:
            rows["PassR"].append((n,))
        elif op.name == "tf_executor.ControlTrigger" and not op.operands:
            rows["LiveR"].append((n,))
            self.step[n] = 0
        else:
            rows["OpaqueR"].append((n,))

    def fetch_classes(self) -> None:
        """``FetchR``, ``OrderR`` and the pins of ordering sources (see ``patterns.island_merging``).

        E(n): n holds an op with effects or follows one (over data, control and captures, a
        NextIteration's Sink into its Source); reads count only in a graph that also writes.
        S(n): the fetch operands n reaches, as a bit set (a fetch operand reached is one whose
        value n computes or must run before). In a GraphDef's graph (``tf.entry_function``: a
        Session may fetch any subset of its outputs; a function runs all of its fetch at once)
        that writes or fetches a control token (a control output: it stands for all ops of its
        island), every island's class numbers
        its S (pure ones too: the token of a pure group is waited on once the dependency
        optimizer rewires control edges through it, and a pure op may need a feed another fetch
        does not give); any other graph (Keras models) is all class 0 and groups as before.
        OrderR: a control edge out of an island with E."""
        nodes, n_ops = self.nodes, len(self.nodes.ops)
        succ: list[list[int]] = [[] for _ in range(n_ops)]
        for s, _, d in nodes.edges:
            if d < n_ops:
                succ[s].append(d)
        for i, op in enumerate(nodes.ops):
            if op.name == "tf_executor.NextIteration.Sink":
                source = nodes.index.get(op.operands[0].owner_op) if op.operands else None  # type: ignore[arg-type]
                if source is not None:
                    succ[i].append(source)
        kinds = [_effects(op) for op in nodes.ops]
        writes = any(w for _, w in kinds)
        effect = [w or (r and writes) for r, w in kinds]
        work = [i for i in range(n_ops) if effect[i]]
        while work:
            for d in succ[work.pop()]:
                if not effect[d]:
                    effect[d] = True
                    work.append(d)
        preds: list[list[int]] = [[] for _ in range(n_ops)]
        for s, ds in enumerate(succ):
            for d in ds:
                preds[d].append(s)
        reach = [0] * n_ops
        for k, v in enumerate(nodes.fetch.operands):
            owner = nodes.index.get(v.owner_op) if v.owner_op is not None else None  # type: ignore[arg-type]
            if owner is not None:
                reach[owner] |= 1 << k
        work = [i for i in range(n_ops) if reach[i]]
        while work:
            d = work.pop()
            for s in preds[d]:
                if reach[s] | reach[d] != reach[s]:
                    reach[s] |= reach[d]
                    work.append(s)
        func = nodes.graph.parent_op
        entry = func is not None and func.attr("tf.entry_function") is not None
        keyed = entry and (writes or any(v.type is CONTROL for v in nodes.fetch.operands))
        classes: dict[int, int] = {}
        for (n,) in self.rows["IslandR"]:
            self.rows["FetchR"].append((n, classes.setdefault(reach[n], len(classes) + 1) if keyed else 0))
        island = {r[0] for r in self.rows["IslandR"]}
        for s, r, d in nodes.edges:
            if s in island and effect[s] and d in island and r == len(nodes.ops[s].results) - 1:
                self.rows["OrderR"].append((s, d))
                self.rows["PinR"].append((s,))

    def edges(self) -> None:
        island = {r[0] for r in self.rows["IslandR"]}
        ops, n_ops = self.nodes.ops, len(self.nodes.ops)
        for s, r, d in self.nodes.edges:
            if d == n_ops:
                if s in island:
                    self.rows["PinR"].append((s,))
                continue
            src = ops[s]
            if s in island:
                self.rows["IEdgeR"].append((s, d))
            elif src.name in IM.SWITCHES and r < len(src.results) - 1:
                self.rows["SEdgeR"].append((s, r, d))
            else:
                self.rows["BEdgeR"].append((s, d, self.step[s]))
        self.fetch_classes()
        for name in ("IEdgeR", "BEdgeR", "SEdgeR", "PinR", "OrderR"):
            self.rows[name] = sorted(set(self.rows[name]))


def facts(nodes: GraphNodes) -> dict[str, list[tuple[int, ...]]]:
    """The fact rows of :mod:`egraft.patterns.island_merging` for one graph."""
    f = _Facts(nodes)
    for n, op in enumerate(nodes.ops):
        f.classify(n, op)
    f.edges()
    return f.rows


@dataclass
class Grouping:
    """Which islands merge: ``group[n]`` is a group label per node (barriers: their own)."""

    group: list[int]
    report: SaturationReport
    seconds: dict[str, float]

    def groups(self) -> list[list[int]]:
        """Node ids per group with at least two members, each sorted, in order of first member."""
        out: dict[int, list[int]] = {}
        for n, g in enumerate(self.group):
            out.setdefault(g, []).append(n)
        return [m for m in out.values() if len(m) > 1]


def _load(eg: EGraph, rows: dict[str, list[tuple[int, ...]]]) -> None:
    with tempfile.TemporaryDirectory(prefix="egraft-islands-") as workdir:
        commands = []
        for rel, data in rows.items():
            if not data:
                continue
            path = os.path.join(workdir, f"{rel}.tsv")
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write("\n".join("\t".join(map(str, row)) for row in data))
                f.write("\n")
            commands.append(f"(input {rel} {egglog_string(path)})")
        eg.run_commands(commands)


def _saturated(nodes: GraphNodes, keep_independent: bool) -> tuple[EGraph, dict[str, list[tuple[int, ...]]],
                                                                   SaturationReport, float]:
    """The e-graph after every stratum has saturated, the facts, the report, and the load time."""
    t0 = time.perf_counter()
    rows = facts(nodes)
    eg = EGraph(Schema(sorts=()))
    add_relational_rules(eg, IM.DECLARATIONS, IM.rules(keep_independent))
    _load(eg, rows)
    t1 = time.perf_counter()
    strata = tuple(s for s in IM.STRATA if s in eg.rulesets)
    report = saturate(eg, Schedule(tuple(Phase((s,), saturate=s not in IM.ONE_SHOT) for s in strata)))
    return eg, rows, report, t1 - t0


def signatures(nodes: GraphNodes) -> dict[int, tuple[str, int]]:
    """Per mergeable island, its deadness atoms (egglog's printed ``dd`` set) and barrier depth.

    What the grouping rule keys on, read back for explanations and for checking other
    groupings (TensorFlow's) against egraft's analysis: node ids in the atoms are block
    positions, as in the facts.
    """
    eg, rows, _, _ = _saturated(nodes, False)
    islands = [row[0] for row in rows["IslandR"]]
    out = eg.run_commands([f"(extract (dd {n}))" for n in islands] + [f"(extract (bd {n}))" for n in islands])
    text = [o.termdag.to_string(o.term) for o in out]  # type: ignore[attr-defined]
    return {n: (text[k], int(text[len(islands) + k])) for k, n in enumerate(islands)}


@dataclass
class PortDeadness:
    """What the deadness analysis says about a port of the Switches on one predicate."""

    dead: set[int]           # nodes whose inputs carry the port's atom (see `port_deadness`)
    live: set[int]           # the Switches' predicate producers with no atom: never dead


def _reach(nodes: GraphNodes, succ: list[list[int]], starts: set[int]) -> set[int]:
    """The nodes reachable from ``starts`` over ``succ``, not through an opaque barrier (whose
    outputs carry an atom of their own, not their inputs')."""
    seen, work = set(starts), list(starts)
    while work:
        n = work.pop()
        if n != len(nodes.ops) and nodes.ops[n].name in IM.OPAQUE_BARRIERS:
            continue
        for d in succ[n]:
            if d not in seen:
                seen.add(d)
                work.append(d)
    return seen


def port_deadness(nodes: GraphNodes, ports: list[tuple[list[Operation], int]]) -> list[PortDeadness]:
    """Per ``(switches, r)`` (Switches on one predicate value, directly or through the
    Identity islands the analysis takes for it): the nodes whose inputs carry the deadness
    atom of their port ``r``, read off the same ``din`` analysis the grouping keys on, and
    which of their predicates' producers are never dead (``din`` empty: nothing upstream is
    a Switch port or a barrier of its own).  Where the predicate never selects ``r``, each of
    those nodes but a Merge (which only needs one live input) is always dead: a node is dead
    when any input is.  The atoms are asked for by one rule over the ``din`` of the nodes
    reachable from the Switches' ports (no other node can hold the atom), the answers read
    off its relation."""
    if not ports:
        return []
    eg, _, _, _ = _saturated(nodes, False)
    succ: list[list[int]] = [[] for _ in range(len(nodes.ops) + 1)]
    from_port: dict[tuple[int, int], list[int]] = {}
    for s, r, d in nodes.edges:
        succ[s].append(d)
        from_port.setdefault((s, r), []).append(d)
    asks, cands = [], []
    for k, (switches, r) in enumerate(ports):
        predicate = switches[0].operands[1]
        p, q = nodes.index[predicate.owner_op], predicate.index  # type: ignore[index]
        reached = _reach(nodes, succ, {d for sw in switches for d in from_port.get((nodes.index[sw], r), ())})
        asks.append(f"(AskDead (SwA (IV {p} {q}) {r}) {k})")
        cands += [f"(CandDead {n} {k})" for n in reached if n != len(nodes.ops)]
    eg.run_commands(["(relation AskDead (IAtom i64))", "(relation CandDead (i64 i64))", "(relation DeadAt (i64 i64))",
                     "(ruleset ask-dead)",
                     "(rule ((AskDead a k) (CandDead n k) (= x (din n)) (set-contains x a)) ((DeadAt n k))"
                     " :ruleset ask-dead)", *asks, *cands, "(run ask-dead 1)"])
    dead: list[set[int]] = [set() for _ in ports]
    for row in eg.raw.freeze().functions["DeadAt"].rows:
        dead[eg.raw.value_to_i64(row.inputs[1])].add(eg.raw.value_to_i64(row.inputs[0]))
    producers = sorted({nodes.index[sw.operands[1].owner_op]  # type: ignore[index]
                        for switches, _ in ports for sw in switches})
    out = eg.run_commands([f"(extract (din {p}))" for p in producers])
    text = [o.termdag.to_string(o.term) for o in out]  # type: ignore[attr-defined]
    live = {p for p, t in zip(producers, text) if t == "(set-of)"}
    return [PortDeadness(d, live) for d in dead]


def group_islands(nodes: GraphNodes, keep_independent: bool = False) -> Grouping:
    """Run the island-merging rules on one graph and read the groups back."""
    t0 = time.perf_counter()
    eg, _, report, load = _saturated(nodes, keep_independent)
    t1 = t0 + load
    t2 = time.perf_counter()
    label: dict[str, int] = {}
    group = list(range(len(nodes.ops)))
    for row in eg.raw.freeze().functions["Nd"].rows:
        n = eg.raw.value_to_i64(row.inputs[0])
        group[n] = label.setdefault(str(row.output), n)
    t3 = time.perf_counter()
    return Grouping(group, report, {"load": t1 - t0, "saturate": t2 - t1, "read": t3 - t2})
