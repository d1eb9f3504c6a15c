"""Passes over egraft IR, the pass manager that runs them, and the `egraft-opt` driver.

Subpackages: ``manager`` (the pass registry, textual pipelines, the pass manager, budgets),
``transforms`` (dialect-independent passes: canonicalize, eqsat, cse, dce, ...), ``tf``
(tf_executor and tfg passes and the conversions between GraphDef forms), ``cli`` (the
`egraft-opt` command line: files, formats, diagnostics). This package may import everything
below it (``egraft.ir``, ``egraft.patterns``, ``egraft.rewrite``).

The built-in passes need no import here: ``PASSES`` imports a pass's module when the pass
is first named (``passes/manager/registry.py``, from the generated ``pass_index.py``).
"""

from egraft.passes.manager.pass_manager import OpPipeline, PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.manager.registry import PASSES, Pass, PassContext, PassFailure, option, register_pass

__all__ = ["OpPipeline", "PASSES", "Pass", "PassContext", "PassFailure", "PassManager", "option",
           "parse_pipeline", "register_pass"]
