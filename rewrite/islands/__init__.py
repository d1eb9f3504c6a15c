"""tf_executor island merging (coarsening) on the e-graph: a graph lowered to placement facts
(``facts``), the grouping written back (``writeback``), and the structural steps around it
(``breakup``: one island per op, ``prune``: what can reach the fetch).
"""
