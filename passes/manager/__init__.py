"""The pass machinery: passes as small attrs classes in a registry (``registry``), MLIR's
textual pipelines (``pipeline``), the op-anchored pass manager (``pass_manager``), the budgets
of the rewriting passes (``limits``) and the pass reference generated from the registry (``docs``).
May import ``egraft.ir`` only.
"""
