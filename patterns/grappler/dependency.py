"""Grappler's dependency optimizer as a rule set: `grappler-dependency`.

Grappler's dependency optimizer removes nodes that only forward a value (`Identity`,
`Snapshot`, `StopGradient`, `IdentityN`) or only order others (`NoOp`), moving their
control inputs to their consumers, and drops control edges that another path already
implies. Here:

* **forwarding**, a value replaced by another, is what a rule states: `Identity(x) -> x`
  and its siblings below. Inside a tf_executor island the island then yields its captured
  input; `tf-executor-canonical` (the executor canonicalization) removes such an island
  when nothing waits on it;
* **control edges** are not values: moving a removed node's control inputs to its
  consumers, removing `NoOp` islands and dropping redundant control operands rewrite
  operand lists of islands, which no rule can see. That is the structural step
  `tf-dependency` (rewrite/structural/tf_dependency.py, whose docstring argues soundness
  and lists what it respects: fetches, `_has_manual_control_dependencies`, Switch outputs,
  Merge consumers).

`IdentityN` has one result per operand; a rule's source has a fixed shape, so its
forwarding is also in the structural step (it is one loop there).

Pruning to the fetches (Grappler's model pruner) is not a rule either: it is reachability
from the fetch, done by `rewrite/islands/prune.py`, which the `tf-grappler` pass runs.
"""

from __future__ import annotations

from egraft.patterns.dsl import op, rule, vars_
from egraft.patterns.rule_sets import register_rule_set
from egraft.patterns.tf_rules import CANONICAL

x, = vars_("x")

#: tf-canonical's `identity` rule, shared so that running both sets applies it once.
IDENTITY = next(r for r in CANONICAL if r.name == "identity")

RULES = [
    IDENTITY,
    rule("snapshot", op("tf.Snapshot", x), x,
         doc="Snapshot copies its input; in a frozen graph nothing writes the input afterwards, so the "
             "copy equals it"),
    rule("stop-gradient", op("tf.StopGradient", x), x,
         doc="StopGradient forwards its input (it only matters to gradient construction)"),
]

register_rule_set("grappler-dependency", RULES,
                  "Grappler's dependency optimizer: forwarding ops removed (rules), NoOps and redundant "
                  "control edges removed with control edges rewired (structural step tf-dependency)",
                  structural=("tf-executor-canonical", "tf-dependency"))
#: The forwarding rules alone, for the constant-folding family: Grappler's model pruner drops
#: these trivial ops before its constant folding runs, so a frozen variable (Const -> Identity)
#: is a constant to the folds of the first round.
register_rule_set("grappler-forwarding", RULES, "Grappler's trivial-op forwarding: Identity, Snapshot, StopGradient")
