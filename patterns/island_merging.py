"""Island merging (tf_executor island coarsening) as rules: the placement encoding.

The rules are data: declarations, relational rules and a stratified schedule, declared
with :mod:`egraft.patterns.relational` (the rewrite ``Rule`` matches ops and cannot state
lattice analyses or a grouping union).  ``rewrite/rules/relational.py`` compiles them to
egglog; :mod:`egraft.rewrite.islands.facts` loads the facts, runs the schedule with the
engine's :func:`~egraft.rewrite.engine.saturate` and reads the groups back.

Why this encoding (docs/island_merging.md, the spike in ../shared/notes): an island's
final group is the e-class of ``(Nd i)``.  Two lattice analyses compute, per island, the
set of *deadness atoms* of its inputs (``dd``) and its *barrier depth* (``bd``); one
rule unions each island with the hash-consed signature term ``(Sig dd bd)``, so islands
with equal signatures land in one e-class in one linear pass (a pairwise rule would
need k² matches per class).  Equal ``dd`` is exactly "dead under the same conditions",
and ``bd`` (strictly increasing across a barrier, monotone along island edges) makes the
quotient acyclic whatever the rules' firing order.

Facts (all i64, loaded from TSV; node ids are block positions, feeds get ids past them):

``IslandR n``          a mergeable island.
``IEdgeR s d``         an edge from island ``s`` to node ``d`` (data, control or a capture).
``BEdgeR s d k``       an edge from barrier ``s`` (any port but a Switch data port) to ``d``;
                       ``k`` is 1, or 0 for a barrier that has no inputs (it cannot be on a cycle).
``SEdgeR s r d``       an edge from data port ``r`` of Switch/_SwitchN ``s`` to ``d``.
``SwPredR s p r``      ``s`` switches on result ``r`` of node (or feed) ``p``.
``OpaqueR b``          barrier whose outputs are dead under a condition of its own
                       (Merge, Enter, Exit, NextIteration.Source, Recv, ...): atom ``(OpA b)``.
``PassR b``            barrier whose non-port outputs are dead exactly when an input is
                       (Switch's control result, LoopCond, Send): ``din``.
``LiveR b``            barrier that is always live (ControlTrigger without inputs): no atom.
``IdentR n p r``       island ``n`` forwards ``tf.Identity`` of result ``r`` of ``p``: same value.
``BarR n``             any node that is not a mergeable island (a consumer outside every group).
``PinR n``             island that must not sink into its consumers: the fetch uses it, or it
                       holds an op with effects (skipping it more often would be visible).
``FetchR n f``         island ``n``'s fetch class: in a GraphDef's graph (``tf.entry_function``)
                       that writes or has control outputs, a number per set of fetch operands
                       it reaches; else 0 (``facts``).
``OrderR s d``         ``d`` waits on the control token of ``s``, which has or follows effects.

**Several fetch sets** (a TF1 graph run for init, restore, save and inference in turn): the
export writes each op of an island with the island's control operands and makes users of its
token wait on all its ops, so an island whose members differ in what they are needed by would
run, for one fetch, what another fetch needs. In a graph that writes (an op with effects other
than a read) or has control outputs, islands therefore merge only with equal fetch sets: every edge the export adds
then goes from an op needed by at least the fetches of its target, so no fetch subset runs
anything new (not even a pure op, which may need a feed the fetch does not give), and no cycle
forms (fetch sets only shrink along edges, as ``dd`` and ``bd`` only grow). A group sinking into
its only consumer group has exactly that group's fetch set (it is not fetched itself). An
``OrderR`` edge is an ordering the export could only keep between islands (a merged island
keeps no control edges inside it): it raises the barrier depth, so its ends never share an
island, and its source is pinned (never sinks); "effects" there are writes, and reads in a
graph that also writes. Graphs without writes or control outputs (Keras models) group as before.
"""

from __future__ import annotations

import re

from egraft.patterns.dsl import vars_
from egraft.patterns.relational import (I64, Declarations, RelationalRule, eq, ge, ne, plus, relational_rule,
                                        set_, union)

#: Island bodies holding one of these ops never merge: serialising a rendezvous or a
#: blocking op with unrelated work in one island can deadlock (a Recv waiting on a
#: Send that now sits behind it) or change when it blocks.
BLOCKING_OP = re.compile(
    r"^tf\.(_?Send|_?Recv|_?HostSend|_?HostRecv|Collective\w*|\w*Queue\w*|Barrier\w*|Stage\w*|Unstage|"
    r"Nccl\w*|_?XlaSend\w*|_?XlaRecv\w*|\w*Rendezvous\w*|MapStage|MapUnstage\w*|OrderedMap\w*)$")

#: tf_executor ops that are barriers, and how their outputs' deadness is modelled.
SWITCHES = ("tf_executor.Switch", "tf_executor._SwitchN")
OPAQUE_BARRIERS = ("tf_executor.Merge", "tf_executor.Enter", "tf_executor.Exit",
                   "tf_executor.NextIteration.Source", "tf_executor.NextIteration.Sink",
                   "tf_executor.ControlTrigger", "tf_executor.Recv")
PASS_BARRIERS = ("tf_executor.LoopCond", "tf_executor.Send")

#: Ops whose result is the same value as their operand (a Switch on either is one predicate).
IDENTITY_OPS = ("tf.Identity",)

#: Stateful in TensorFlow's registry but without effects: running them less often (a sunk
#: island is dead more often) is invisible.
READ_ONLY_OPS = ("tf.ReadVariableOp",)


#: Everything the rules name: facts (all i64, node ids), terms and lattice functions.
DECLARATIONS = Declarations()
IVal = DECLARATIONS.datatype("IVal")                        # a produced value; e-class = same value
IV = DECLARATIONS.constructor("IV", (I64, I64), IVal)
IAtom = DECLARATIONS.datatype("IAtom")                      # deadness atoms
SwA = DECLARATIONS.constructor("SwA", (IVal, I64), IAtom)   # port r of a Switch on the value
OpA = DECLARATIONS.constructor("OpA", (I64,), IAtom)        # an opaque barrier's own condition
IASet = DECLARATIONS.set_sort("IASet", IAtom)
INode = DECLARATIONS.datatype("INode")
Nd = DECLARATIONS.constructor("Nd", (I64,), INode)          # a node's group
Cmp = DECLARATIONS.constructor("Cmp", (I64,), INode)        # a node's component (keep-independent)
Sig = DECLARATIONS.constructor("Sig", (IASet, I64, I64), INode)
SigC = DECLARATIONS.constructor("SigC", (IASet, I64, I64, INode), INode)
din = DECLARATIONS.function("din", (I64,), IASet, "union")  # deadness atoms of a node's inputs
dd = DECLARATIONS.function("dd", (I64,), IASet, "union")    # of an island's outputs
bdd = DECLARATIONS.function("bdd", (I64,), IASet, "union")  # of a barrier's non-port outputs
bd = DECLARATIONS.function("bd", (I64,), I64, "max")        # barrier depth
lab = DECLARATIONS.function("lab", (INode,), I64, "min")    # a group's label: its least member id
cmin = DECLARATIONS.function("cmin", (I64,), I64, "min")    # per group label: least consumer label,
cmax = DECLARATIONS.function("cmax", (I64,), I64, "max")    # greatest; -1 stands for outside any group
IslandR = DECLARATIONS.relation("IslandR", I64)
IEdgeR = DECLARATIONS.relation("IEdgeR", I64, I64)
BEdgeR = DECLARATIONS.relation("BEdgeR", I64, I64, I64)
SEdgeR = DECLARATIONS.relation("SEdgeR", I64, I64, I64)
SwPredR = DECLARATIONS.relation("SwPredR", I64, I64, I64)
OpaqueR = DECLARATIONS.relation("OpaqueR", I64)
PassR = DECLARATIONS.relation("PassR", I64)
LiveR = DECLARATIONS.relation("LiveR", I64)
IdentR = DECLARATIONS.relation("IdentR", I64, I64, I64)
NodeR = DECLARATIONS.relation("NodeR", I64)
BarR = DECLARATIONS.relation("BarR", I64)
PinR = DECLARATIONS.relation("PinR", I64)
FetchR = DECLARATIONS.relation("FetchR", I64, I64)
OrderR = DECLARATIONS.relation("OrderR", I64, I64)

# egglog 13.2 panics in a Set merge when a set holds e-classes created in the same action
# batch, so every term is materialised first, in its own stratum (spike, pitfall 3).
MAKE = "islands.make"
DEADNESS = "islands.deadness"
DEPTH = "islands.depth"
COMPONENTS = "islands.components"
GROUP = "islands.group"
LABEL = "islands.label"
CONSUMERS = "islands.consumers"
SINK = "islands.sink"

a, b, c, d, f, g, k, l, m, n, p, q, r, s, u, x = vars_("a b c d f g k l m n p q r s u x")

RULES: tuple[RelationalRule, ...] = (
    relational_rule("nodes", MAKE, [NodeR(n)], [Nd(n), Cmp(n)]),
    relational_rule("predicate-values", MAKE, [SwPredR(s, p, r)], [IV(p, r)]),
    relational_rule("identity-is-its-input", MAKE, [IdentR(n, p, r)], [union(IV(n, 0), IV(p, r))],
                    doc="Identity(x) is x, so Switches on x and on Identity(x) share their atoms."),

    relational_rule("din-empty", DEADNESS, [NodeR(n)], [set_(din(n), IASet.empty())]),
    relational_rule("din-island", DEADNESS, [IEdgeR(s, d), eq(x, dd(s))], [set_(din(d), x)]),
    relational_rule("din-barrier", DEADNESS, [BEdgeR(s, d, k), eq(x, bdd(s))], [set_(din(d), x)]),
    relational_rule("din-switch-port", DEADNESS, [SEdgeR(s, r, d), SwPredR(s, p, q), eq(x, din(s))],
                    [set_(din(d), IASet.insert(x, SwA(IV(p, q), r)))],
                    doc="Port r of a Switch on P is live iff its inputs are and P selects r."),
    relational_rule("dd-island", DEADNESS, [IslandR(n), eq(x, din(n))], [set_(dd(n), x)]),
    relational_rule("bdd-opaque", DEADNESS, [OpaqueR(b)], [set_(bdd(b), IASet.of(OpA(b)))]),
    relational_rule("bdd-pass", DEADNESS, [PassR(b), eq(x, din(b))], [set_(bdd(b), x)]),
    relational_rule("bdd-live", DEADNESS, [LiveR(b)], [set_(bdd(b), IASet.empty())]),

    relational_rule("bd-zero", DEPTH, [NodeR(n)], [set_(bd(n), 0)]),
    relational_rule("bd-island", DEPTH, [IEdgeR(s, d), eq(x, bd(s))], [set_(bd(d), x)]),
    relational_rule("bd-barrier", DEPTH, [BEdgeR(s, d, k), eq(x, bd(s))], [set_(bd(d), plus(x, k))]),
    relational_rule("bd-switch-port", DEPTH, [SEdgeR(s, r, d), eq(x, bd(s))], [set_(bd(d), plus(x, 1))]),
    relational_rule("bd-ordering", DEPTH, [OrderR(s, d), eq(x, bd(s))], [set_(bd(d), plus(x, 1))],
                    doc="A control edge out of an effect-reached island stays an edge between islands."),

    relational_rule("connect-same-signature", COMPONENTS,
                    [IEdgeR(s, d), IslandR(d), FetchR(s, f), FetchR(d, f), eq(a, dd(s)), eq(a, dd(d)),
                     eq(u, bd(s)), eq(u, bd(d))],
                    [union(Cmp(s), Cmp(d))],
                    doc="Only for keep-independent: islands joined by an edge inside one signature class."),

    relational_rule("group-by-signature", GROUP, [IslandR(n), FetchR(n, f), eq(a, dd(n)), eq(u, bd(n))],
                    [union(Nd(n), Sig(a, u, f))],
                    doc="THE merge rule: same deadness atoms, barrier depth and fetch class, same island."),

    relational_rule("label-groups", LABEL, [IslandR(n), eq(g, Nd(n))], [set_(lab(g), n)]),
    relational_rule("consumer-group", CONSUMERS,
                    [IEdgeR(s, d), IslandR(d), eq(l, lab(Nd(s))), eq(m, lab(Nd(d))), ne(l, m)],
                    [set_(cmin(l), m), set_(cmax(l), m)]),
    relational_rule("consumer-outside", CONSUMERS, [IEdgeR(s, d), BarR(d), eq(l, lab(Nd(s)))],
                    [set_(cmin(l), -1)]),
    relational_rule("pinned", CONSUMERS, [PinR(s), eq(l, lab(Nd(s)))], [set_(cmin(l), -1)]),
    relational_rule("sink-into-only-consumer", SINK,
                    [IslandR(p), eq(l, lab(Nd(p))), eq(l, p), eq(c, cmin(l)), eq(c, cmax(l)), ge(c, 0)],
                    [union(Nd(p), Nd(c))],
                    doc="A group whose every use (data, control, capture) lies in one other group G joins G. "
                        "G's members consume its values, so dd(G) ⊇ its dd: the merged island is dead exactly "
                        "when G was, values leaving it are G's (unchanged), and its own values are only read "
                        "inside, by ops dead whenever they are. Each group has one successor, so the "
                        "contraction lifts every quotient path to an old one: still acyclic. One iteration "
                        "(the labels are stale after it)."),
)

#: With ``keep-independent``, the grouping rule also keys on the connected component.
GROUP_BY_COMPONENT = relational_rule(
    "group-by-signature-and-component", GROUP, [IslandR(n), FetchR(n, f), eq(a, dd(n)), eq(u, bd(n))],
    [union(Nd(n), SigC(a, u, f, Cmp(n)))],
    doc="Independent subgraphs stay apart, for inter-op parallelism.")

#: The strata, in order; each saturates before the next starts (unions are irreversible,
#: so grouping on a half-computed signature would merge two final signatures).
STRATA: tuple[str, ...] = (MAKE, DEADNESS, DEPTH, COMPONENTS, GROUP, LABEL, CONSUMERS, SINK)
#: Strata run for a single iteration rather than to a fixpoint.
ONE_SHOT: tuple[str, ...] = (SINK,)


def rules(keep_independent: bool = False) -> tuple[RelationalRule, ...]:
    """The rule set; ``keep_independent`` swaps in the component-keyed grouping rule."""
    if not keep_independent:
        return tuple(r for r in RULES if r.ruleset != COMPONENTS)
    return tuple(r for r in RULES if r.ruleset != GROUP) + (GROUP_BY_COMPONENT,)
