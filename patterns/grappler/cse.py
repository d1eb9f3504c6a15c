"""Grappler's common-subgraph elimination as a rule set: `grappler-cse`.

Merging two equal nodes is not a rewrite of one op's results into a new term: it is a
scan that finds equal ops (same op, operands, result types and attributes, the node name
aside) and redirects the uses of the later ones. On the e-graph equal terms are one e-class
anyway; on a tf_executor graph imported from a GraphDef every op carries its node's name,
so a rule keyed on the op would never see two as equal. So the set has no rules, only the
structural step `tf-cse` (rewrite/structural/tf_cse.py, whose docstring says where it
merges and why that is sound under deadness and loop frames).
"""

from __future__ import annotations

from egraft.patterns.rule_sets import register_rule_set

register_rule_set("grappler-cse", [],
                  "Grappler's common-subgraph elimination: equal tf ops of one island (or function body) merged, "
                  "node names aside (structural step tf-cse)",
                  structural=("tf-cse",))
