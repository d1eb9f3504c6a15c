"""The budgets and limits of the rewriting passes: their defaults, and how a pass reports
which one stopped it.

**Folds** (canonicalize, apply-rules, eqsat): a splat folds to a splat at any size; a fold
or check that would read more than 1,000,000 elements of one constant into Python (about
a second) is refused, the reason in the pass's report (patterns/fold_limits.py).

**E-graph budgets** (`canonicalize` on its e-graph driver, `eqsat`):

egglog has no e-node limit and cannot be interrupted, so without budgets a rule set that
keeps finding new terms runs until memory is gone (issue #9: 600 s and more on a 10k-op
function). The defaults stop what no realistic input needs and leave every input measured
so far untouched (docs/engine.md, "Budgets"):

* 60 s of wall time for the whole round trip (lowering to write-back). Saturation stops
  early enough to leave time for extraction and write-back, and what it found is written
  back; a time budget makes the output depend on the machine, so the default is far above
  what canonicalizing a 100k-op function takes.
* 1,000,000 e-nodes: a 100k-op TensorFlow model lowers to about 350k; egglog needs roughly
  1 KB per e-node with its indexes, so this is about 1 GB.
* 1,000 egglog iterations: the 10k-op chain of bench/race/gen_arith_chain.py saturates
  in about 100.

This module imports nothing heavy: the passes read it when their options are declared.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from egraft.rewrite.engine.saturate import Budget

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_ENODES = 1_000_000
DEFAULT_MAX_ITERATIONS = 1000
DEFAULT_FOLD_ELEMENTS = 1_000_000


def fold_element_limit_option(default: int = DEFAULT_FOLD_ELEMENTS) -> Any:
    """The `fold-element-limit` option of the passes that run folding rules."""
    from egraft.passes.manager.registry import option

    return option(default, "Refuse folds and checks that would read more elements of one "
                  "non-splat constant (0: no limit; splats fold at any size)", min=0)


def budget(max_iterations: int, max_enodes: int, timeout: float, started: float) -> "Budget":
    """The engine's budget from pass options, where 0 means no limit. ``started`` is when the
    pass began (``time.perf_counter()``): the time budget is the pass's, so what the pass
    spent before the round trip (loading the rule library, choosing rules) counts."""
    from egraft.rewrite.engine.saturate import Budget

    left = None if not timeout else max(timeout - (time.perf_counter() - started), 1e-9)
    return Budget(max_iterations or None, max_enodes or None, left)


def stop_text(result: Any, max_iterations: int, max_enodes: int, timeout: float,
              iterations_option: str = "max-iterations") -> str:
    """`stop=...` for a pass report, naming the budget (the option) that stopped saturation,
    and saying so when the time ran out before anything could be written back."""
    rep = result.report
    if rep is None:
        return "stop=no rules"
    limits = {"seconds": f"timeout={timeout:g} s", "enodes": f"max-enodes={max_enodes}",
              "iterations": f"{iterations_option}={max_iterations}"}
    text = f"stop={rep.stop}"
    if rep.stop in limits:
        text += f" (budget {limits[rep.stop]})"
    if not result.written:
        text += ", nothing written back (the time ran out before a step of saturation fit)"
    return text
