"""egraft IR on the e-graph: which sorts and constructors stand for ops, values, types and
effects (``schema``), lowering regions to a term table (``lower``), writing an extraction back in
place (``writeback``), what extraction minimises (``cost_models``), and the equivalence the
encoding preserves (``equivalence``). May import ``egraft.ir`` and ``rewrite.engine``.
"""
