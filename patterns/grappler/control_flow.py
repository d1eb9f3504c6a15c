"""Grappler's loop optimizer (v1 control flow) as a rule set: `tf-control-flow`.

Grappler's loop optimizer removes the branch a `Switch` on a constant predicate never
takes, turning the `Merge` that joined it into its live input (`RemoveDeadBranches`), and
can move loop-invariant nodes out of while loops (`LoopInvariantNodeMotion`, off in its
default configuration); its common-subgraph elimination merges identical Switches. On
tf_executor graphs every one of these rewrites is on executor ops of the graph block
(`tf_executor.Switch`, `Merge`, `Enter`), whose operands are island results, and a dead
output has no value a rule could replace it by: so the set has no rules of its own, only
two structural steps, whose docstrings say why each rewrite is not a rule, argue soundness
and list when a rewrite is refused:

* `tf-switch` (rewrite/structural/tf_switch.py): dead branches of constant predicates,
  Merges simplified, identical Switches merged;
* `tf-loop-invariant` (rewrite/structural/tf_switch_loop_invariant.py): nodes computed from
  a root-frame loop's constant `Enter`s and constants only run once before the loop.

A `tf.Switch` inside an island does not occur: the GraphDef importer makes every Switch an
executor op. A predicate computed from constants only is evaluated by the interpreter as
`tf-constant-folding` evaluates (the same function), so the family needs no constant
folding before it; a predicate that depends on a feed (an argument of `@main`) never folds.

Not done (Grappler's other loop-optimizer rewrites): zero-iteration loop removal, stack push
removal; loop-invariant motion out of nested loops.
"""

from __future__ import annotations

from egraft.patterns.rule_sets import register_rule_set

register_rule_set("tf-control-flow", (),
                  "Grappler's loop optimizer on v1 control flow: Switches on constant predicates folded with "
                  "their dead branch removed and Merges simplified, identical Switches merged (structural step "
                  "tf-switch); loop-invariant nodes moved out of v1 while loops (tf-loop-invariant); x * 1 and "
                  "MatMul + zeros with the constant from another island (tf-captured-neutral)",
                  structural=("tf-switch", "tf-loop-invariant", "tf-captured-neutral"))
