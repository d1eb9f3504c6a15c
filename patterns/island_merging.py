"""Island merging (tf_executor island coarsening) as rules: the placement encoding.

The rules are data: declarations, rules and a stratified schedule, written in egglog's
relational form because the single-root rewrite :class:`egraft.rewrite.Rule` cannot state
lattice analyses or a grouping union.  They are the lowering the general rule language
will produce for relational rules; :mod:`egraft.rewrite.islands.facts` loads the facts, runs the
schedule with the engine's :func:`~egraft.rewrite.engine.saturate` and reads the groups back.

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass(frozen=True)
class RelRule:
    """One relational rule: egglog query atoms and actions, in a ruleset (a stratum)."""

    name: str
    ruleset: str
    query: tuple[str, ...]
    actions: tuple[str, ...]
    doc: str = ""


#: Fact relations, in the column order of their TSV files.
RELATIONS: dict[str, int] = {
    "IslandR": 1, "IEdgeR": 2, "BEdgeR": 3, "SEdgeR": 3, "SwPredR": 3,
    "OpaqueR": 1, "PassR": 1, "LiveR": 1, "IdentR": 3, "NodeR": 1, "BarR": 1, "PinR": 1,
}

DECLARATIONS: tuple[str, ...] = (
    "(datatype IVal (IV i64 i64))",                      # a produced value; e-class = same value
    "(datatype IAtom (SwA IVal i64) (OpA i64))",         # deadness atoms
    "(sort IASet (Set IAtom))",
    "(datatype INode (Nd i64) (Cmp i64) (Sig IASet i64) (SigC IASet i64 INode))",
    "(function din (i64) IASet :merge (set-union old new))",
    "(function dd (i64) IASet :merge (set-union old new))",
    "(function bdd (i64) IASet :merge (set-union old new))",
    "(function bd (i64) i64 :merge (max old new))",
    "(function lab (INode) i64 :merge (min old new))",   # a group's label: its least member id
    "(function cmin (i64) i64 :merge (min old new))",    # per group label: least consumer label,
    "(function cmax (i64) i64 :merge (max old new))",    # greatest; -1 stands for outside any group
)

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

RULES: tuple[RelRule, ...] = (
    RelRule("nodes", MAKE, ("(NodeR n)",), ("(Nd n)", "(Cmp n)")),
    RelRule("predicate-values", MAKE, ("(SwPredR s p r)",), ("(IV p r)",)),
    RelRule("identity-is-its-input", MAKE, ("(IdentR n p r)",), ("(union (IV n 0) (IV p r))",),
            doc="Identity(x) is x, so Switches on x and on Identity(x) share their atoms."),

    RelRule("din-empty", DEADNESS, ("(NodeR n)",), ("(set (din n) (set-empty))",)),
    RelRule("din-island", DEADNESS, ("(IEdgeR s d)", "(= x (dd s))"), ("(set (din d) x)",)),
    RelRule("din-barrier", DEADNESS, ("(BEdgeR s d k)", "(= x (bdd s))"), ("(set (din d) x)",)),
    RelRule("din-switch-port", DEADNESS, ("(SEdgeR s r d)", "(SwPredR s p q)", "(= x (din s))"),
            ("(set (din d) (set-insert x (SwA (IV p q) r)))",),
            doc="Port r of a Switch on P is live iff its inputs are and P selects r."),
    RelRule("dd-island", DEADNESS, ("(IslandR n)", "(= x (din n))"), ("(set (dd n) x)",)),
    RelRule("bdd-opaque", DEADNESS, ("(OpaqueR b)",), ("(set (bdd b) (set-of (OpA b)))",)),
    RelRule("bdd-pass", DEADNESS, ("(PassR b)", "(= x (din b))"), ("(set (bdd b) x)",)),
    RelRule("bdd-live", DEADNESS, ("(LiveR b)",), ("(set (bdd b) (set-empty))",)),

    RelRule("bd-zero", DEPTH, ("(NodeR n)",), ("(set (bd n) 0)",)),
    RelRule("bd-island", DEPTH, ("(IEdgeR s d)", "(= x (bd s))"), ("(set (bd d) x)",)),
    RelRule("bd-barrier", DEPTH, ("(BEdgeR s d k)", "(= x (bd s))"), ("(set (bd d) (+ x k))",)),
    RelRule("bd-switch-port", DEPTH, ("(SEdgeR s r d)", "(= x (bd s))"), ("(set (bd d) (+ x 1))",)),

    RelRule("connect-same-signature", COMPONENTS,
            ("(IEdgeR s d)", "(IslandR d)", "(= a (dd s))", "(= a (dd d))", "(= u (bd s))", "(= u (bd d))"),
            ("(union (Cmp s) (Cmp d))",),
            doc="Only for keep-independent: islands joined by an edge inside one signature class."),

    RelRule("group-by-signature", GROUP, ("(IslandR n)", "(= a (dd n))", "(= u (bd n))"),
            ("(union (Nd n) (Sig a u))",),
            doc="THE merge rule: same deadness atoms and barrier depth, same island."),

    RelRule("label-groups", LABEL, ("(IslandR n)", "(= g (Nd n))"), ("(set (lab g) n)",)),
    RelRule("consumer-group", CONSUMERS,
            ("(IEdgeR s d)", "(IslandR d)", "(= l (lab (Nd s)))", "(= m (lab (Nd d)))", "(!= l m)"),
            ("(set (cmin l) m)", "(set (cmax l) m)")),
    RelRule("consumer-outside", CONSUMERS, ("(IEdgeR s d)", "(BarR d)", "(= l (lab (Nd s)))"),
            ("(set (cmin l) -1)",)),
    RelRule("pinned", CONSUMERS, ("(PinR s)", "(= l (lab (Nd s)))"), ("(set (cmin l) -1)",)),
    RelRule("sink-into-only-consumer", SINK,
            ("(IslandR p)", "(= l (lab (Nd p)))", "(= l p)", "(= c (cmin l))", "(= c (cmax l))", "(>= c 0)"),
            ("(union (Nd p) (Nd c))",),
            doc="A group whose every use (data, control, capture) lies in one other group G joins G. "
                "G's members consume its values, so dd(G) ⊇ its dd: the merged island is dead exactly "
                "when G was, values leaving it are G's (unchanged), and its own values are only read "
                "inside, by ops dead whenever they are. Each group has one successor, so the "
                "contraction lifts every quotient path to an old one: still acyclic. One iteration "
                "(the labels are stale after it)."),
)

#: With ``keep-independent``, the grouping rule also keys on the connected component.
GROUP_BY_COMPONENT = RelRule(
    "group-by-signature-and-component", GROUP, ("(IslandR n)", "(= a (dd n))", "(= u (bd n))"),
    ("(union (Nd n) (SigC a u (Cmp n)))",),
    doc="Independent subgraphs stay apart, for inter-op parallelism.")

#: The strata, in order; each saturates before the next starts (unions are irreversible,
#: so grouping on a half-computed signature would merge two final signatures).
STRATA: tuple[str, ...] = (MAKE, DEADNESS, DEPTH, COMPONENTS, GROUP, LABEL, CONSUMERS, SINK)
#: Strata run for a single iteration rather than to a fixpoint.
ONE_SHOT: tuple[str, ...] = (SINK,)


def rules(keep_independent: bool = False) -> tuple[RelRule, ...]:
    """The rule set; ``keep_independent`` swaps in the component-keyed grouping rule."""
    if not keep_independent:
        return tuple(r for r in RULES if r.ruleset != COMPONENTS)
    return tuple(r for r in RULES if r.ruleset != GROUP) + (GROUP_BY_COMPONENT,)
