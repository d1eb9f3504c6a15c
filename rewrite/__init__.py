"""Rewriting egraft IR: the e-graph engine, the IR's encoding on it, the greedy driver.

Subpackages, in the order data flows through them:

- ``engine``: the IR-agnostic egglog engine (term tables, saturation under budgets, extraction).
- ``encoding``: egraft IR on the e-graph (the sorts and constructors, lowering a region to a term
  table, writing an extraction back as IR, cost models).
- ``rules``: rules of :mod:`egraft.patterns` compiled to egglog, and the Python oracles that
  answer their checks and natives during saturation.
- ``greedy``: MLIR's greedy pattern driver over the IR, the same rules without an e-graph.
- ``islands``: tf_executor island merging as relational facts on the e-graph.

``lower_pipeline.optimize`` is the whole e-graph round trip on one op. This package may import
``egraft.ir`` and ``egraft.patterns``, never ``egraft.passes``.
"""
