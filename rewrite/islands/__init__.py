"""tf_executor island merging (coarsening) on the e-graph: a graph lowered to placement facts
and run through the island-merging relational rules (``facts``; the rules are declared in
``patterns.island_merging`` and compiled by ``rewrite.rules.relational``), the grouping written
back (``writeback``), and the structural steps around it (``breakup``: one island per op,
``prune``: what can reach the fetch). May import ``rewrite.rules``, ``rewrite.engine`` and below.
"""
