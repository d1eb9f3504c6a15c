"""`egraft-opt`: mlir-opt's command line over egraft (``main``), what it does with one input
(``driver``), input and output formats (``formats``, ``graphdef_io``), output files with LLVM's
guarantees (``output_file``) and ``--verify-diagnostics`` (``diag_verifier``). The top of the
stack: may import anything in egraft.
"""
