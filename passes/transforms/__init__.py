"""Dialect-independent passes: ``canonicalize``, ``eqsat`` and ``apply-rules`` (rule sets on the
e-graph or the greedy driver), and the cleanups ``cse``, ``dce``, ``symbol-dce``. Each is a
small attrs class registered by name; they may import ``egraft.ir``, ``egraft.patterns``,
``egraft.rewrite`` and ``passes.manager``.
"""
