"""Passes over egraft IR, the pass manager that runs them, and the `egraft-opt` driver.

Importing this package registers the built-in passes by name.
"""

from . import cse, dce, symbol_dce  # noqa: F401  (registers the passes)
from . import break_up_islands, graph_pruning, island_coarsening  # noqa: F401  (tf_executor islands)
from . import functional_to_executor  # noqa: F401  (tf functions -> tf_executor graphs)
from . import apply_rules  # noqa: F401  (rule sets through the greedy driver)
from . import eqsat  # noqa: F401  (rule sets through the e-graph)
from . import canonicalize  # noqa: F401  (canonicalization rule sets, e-graph or greedy)
from .pass_manager import OpPipeline, PassManager
from .pipeline import parse_pipeline
from .registry import PASSES, Pass, PassContext, PassFailure, option, register_pass

__all__ = ["OpPipeline", "PASSES", "Pass", "PassContext", "PassFailure", "PassManager", "option",
           "parse_pipeline", "register_pass"]
