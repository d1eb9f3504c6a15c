"""Grappler's optimizer families as rule sets (issue #12).

TensorFlow's Grappler meta-optimizer runs a fixed list of graph optimizers over a
GraphDef; here each optimizer family is a module of rules declared as a rule set
(`patterns/rule_sets.py`), run by `rewrite/phases.py` like any other set, and chosen by the
`tf-grappler` pass (`passes/tf/grappler.py`), which has one on/off option per family.

One module per family, each registering its rule set(s) on import:

* `dependency`: Identity/Snapshot/StopGradient/IdentityN/NoOp removal and pruning to the
  fetches (Grappler's dependency optimizer and model pruner);
* `constant_folding`: tf constant folding with a size policy;
* `batchnorm`: FusedBatchNorm(V3) inference folding.

The rules are on tf ops inside tf_executor islands (the form the tf rules of
`patterns/tf_rules.py` match); what a rule cannot state (rewiring control edges between
islands) is a structural step in `rewrite/structural/`, named by the rule set.
"""
