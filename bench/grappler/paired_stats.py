"""The benchmark's statistics, without TensorFlow (the tests import it alone)."""

from __future__ import annotations

import math
from typing import Sequence


def median_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """A distribution-free confidence interval (at least ``level``) of the median of ``values``:
    the j-th smallest and the j-th largest, j the largest with 2 P(Bin(n, 1/2) < j) <= 1 - level
    (the count of values below the median is binomial). n = 50: the 18th and 33rd of 50 sorted
    (96.7%). Fewer than 6 values: the whole range."""
    ordered = sorted(values)
    n = len(ordered)
    below, j = 0.0, 0
    while j < n // 2:
        below += math.comb(n, j) / 2 ** n  # P(X <= j)
        if 2 * below > 1 - level:
            break
        j += 1
    return (ordered[j - 1], ordered[n - j]) if j else (ordered[0], ordered[-1])
