"""Rules of :mod:`egraft.patterns` on the e-graph: compiled to egglog rules over the IR encoding
(``compile``), with the checks and natives egglog cannot compute answered by Python oracles
between saturation steps (``oracles``). May import ``egraft.ir``, ``egraft.patterns``,
``rewrite.engine`` and ``rewrite.encoding``.
"""
