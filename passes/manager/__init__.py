"""The pass machinery: passes as small attrs classes in a registry that imports each pass's
module on first use (``registry``, reading the generated ``pass_index``), MLIR's textual
pipelines (``pipeline``), the op-anchored pass manager (``pass_manager``), the budgets of the
rewriting passes (``limits``), and the generated files: the pass reference rendered for
docs/passes.md (``docs``) and the discovery that writes both (``regenerate``).
May import ``egraft.ir`` and, for the budgets ``limits`` hands to saturation, ``egraft.rewrite.engine``
(``regenerate`` imports every pass module, by name, to discover them).
"""
