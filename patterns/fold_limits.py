"""How many elements one constant may have when a fold or check reads it element by element,
and which folds were refused for it.

A splat folds to a splat by reading its one value (`canon_fold.elements`), whatever its
shape: `dense<1> : tensor<1000000000xi32>` plus itself is `dense<2>` in microseconds. Any
other constant is read element by element into Python, about 1 µs per element. A pass
(canonicalize, apply-rules, eqsat) sets the limit for the rules it runs; a fold or check
whose constant has more elements is refused (the op stays, the check does not hold) and
the reason is kept for the pass's report. Without a limit set, nothing is refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class FoldLimits:
    """The limit in force, and the refusals it caused (reason -> how many times)."""

    max_elements: int | None = None
    refused: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        """The refusals, for a pass report ("" when there were none)."""
        if not self.refused:
            return ""
        return "folds and checks refused for size: " + "; ".join(f"{reason} (x{n})" for reason, n in self.refused.most_common())


_CURRENT: ContextVar[FoldLimits] = ContextVar("fold_limits", default=FoldLimits())


@contextmanager
def fold_limits(max_elements: int | None) -> Iterator[FoldLimits]:
    """Folds and checks run inside read at most ``max_elements`` elements per constant (None: no limit)."""
    limits = FoldLimits(max_elements)
    token = _CURRENT.set(limits)
    try:
        yield limits
    finally:
        _CURRENT.reset(token)


def allows(count: int, who: str) -> bool:
    """Whether ``who`` (a fold or check) may read a constant of ``count`` elements; a refusal is recorded."""
    limits = _CURRENT.get()
    if limits.max_elements is None or count <= limits.max_elements:
        return True
    limits.refused[f"{who}: a constant of {count} elements is over fold-element-limit={limits.max_elements}"] += 1
    return False
