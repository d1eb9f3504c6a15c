"""The greedy driver: MLIR's ``applyPatternsGreedily`` over the IR with the same rules the
e-graph runs (``driver``), their matcher (``match``), result building (``build``) and folding
hooks (``fold``). No e-graph: may import ``egraft.ir`` and ``egraft.patterns`` only.
"""
