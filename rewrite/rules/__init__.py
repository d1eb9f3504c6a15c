"""Rules of :mod:`egraft.patterns` on the e-graph: rewrite rules compiled to egglog rules over
the IR encoding (``compile``), with the checks and natives egglog cannot compute answered by
Python oracles between saturation steps (``oracles``); relational rules (analyses over facts,
``patterns.relational``) compiled to egglog declarations and rules (``relational``). The engine
takes only what these compile (``engine.egraph.rule_command``). May import ``egraft.ir``,
``egraft.patterns``, ``rewrite.engine`` and ``rewrite.encoding``.
"""
