"""bench/grappler's verdicts on inference time: the median's interval and what it decides.

The benchmark says "egraft's graph is no slower than Grappler's" only when the whole 95%
interval of the median per-round ratio is at or below 1; these tests pin the interval to the
textbook order statistics and the verdict to the interval (no TensorFlow, no timings).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "grappler"))
import report  # noqa: E402
from paired_stats import median_interval  # noqa: E402


def test_the_interval_is_the_textbook_order_statistics() -> None:
    # 95% distribution-free intervals of a median (e.g. Conover, Practical Nonparametric Statistics):
    # n = 20: 6th and 15th; n = 50: 18th and 33rd; n = 100: 40th and 61st.
    for n, (low, high) in {20: (6, 15), 50: (18, 33), 100: (40, 61)}.items():
        assert median_interval(list(range(1, n + 1))) == (low, high)
    assert median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)  # too few values for 95%: the range


@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=300))
def test_the_interval_holds_the_median_and_covers_at_least_95_percent(values: list[float]) -> None:
    low, high = median_interval(values)
    ordered = sorted(values)
    n = len(ordered)
    assert low in values and high in values
    assert low <= ordered[(n - 1) // 2] <= ordered[n // 2] <= high
    j = ordered.index(low) + 1  # (ties: the first equal value; coverage only grows)
    if n >= 6 and low != ordered[0]:
        outside = sum(math.comb(n, i) for i in range(j)) / 2 ** n  # P(fewer than j values below the median)
        assert 2 * outside <= 0.05


def _entry(median: float, low: float, high: float) -> dict:
    return {"paired_ratio": median, "ratio_low": low, "ratio_high": high}


def test_the_verdict_follows_the_interval_not_the_median() -> None:
    assert report._versus(_entry(0.95, 0.90, 0.99), 1.0) is True
    assert report._versus(_entry(0.95, 0.90, 1.02), 1.0) == "noise"  # median below 1, but the runs cannot tell
    assert report._versus(_entry(1.05, 1.01, 1.09), 1.0) is False
    assert report._versus(_entry(0.85, 0.80, 0.91), 0.9) == "noise"
    assert report._versus({"paired_ratio": 0.97}, 1.0) is True  # older results without an interval: the median
