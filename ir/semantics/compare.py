"""When do two runs agree?  The comparison the soundness harness applies.

`check_agreement(before, after, inputs, ...)` runs two programs on the same
inputs and raises `UnsoundRewrite` unless they agree as follows:

* Integers and bools: equal element for element (wrap-around included).
* Floats, exact mode (rules that claim to preserve every bit): each element
  has the same bit pattern, or both are NaN (NaN payloads are not specified
  by IEEE arithmetic, so any NaN equals any NaN).  -0.0 and +0.0 differ.
* Floats, tolerant mode (rules that reassociate or approximate, tagged
  "approx"): NaN where the other is NaN, equal infinities, and finite values
  within `atol + rtol * |expected|` (signed zeros are equal).  The default
  tolerances per dtype are `DEFAULT_TOLERANCE`.
* Memrefs: the same elements are initialised and those agree as above.
* Shapes and dtypes must be equal in every mode.
"""

from __future__ import annotations

from typing import Any, Sequence

import attrs
import numpy as np

from egraft.ir.core.operation import Operation
from egraft.ir.semantics.interpreter import execute
from egraft.ir.semantics.values import MemRef, Undefined


@attrs.frozen
class Tolerance:
    rtol: float
    atol: float


DEFAULT_TOLERANCE: dict[str, Tolerance] = {
    "float16": Tolerance(1e-2, 1e-3), "bfloat16": Tolerance(2e-2, 1e-2),
    "float32": Tolerance(1e-5, 1e-6), "float64": Tolerance(1e-12, 1e-14),
}


def tolerance_for(dtype: np.dtype) -> Tolerance:
    return DEFAULT_TOLERANCE.get(np.dtype(dtype).name, Tolerance(1e-2, 1e-2))


def _floats_differ(a: np.ndarray, b: np.ndarray, exact: bool, tol: Tolerance | None) -> np.ndarray:
    """A mask of the elements where float arrays disagree."""
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if exact:
        same_bits = a.view(f"u{a.dtype.itemsize}") == b.view(f"u{b.dtype.itemsize}")
        return ~((nan_a & nan_b) | same_bits)
    t = tol or tolerance_for(a.dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    finite = np.isfinite(a64) & np.isfinite(b64)
    with np.errstate(all="ignore"):
        close = np.abs(a64 - b64) <= t.atol + t.rtol * np.abs(a64)
    agree = (nan_a & nan_b) | (finite & close) | (~finite & ~nan_a & ~nan_b & (a64 == b64))
    return ~agree


def difference(expected: Any, actual: Any, exact: bool = True, tol: Tolerance | None = None) -> str | None:
    """Why `actual` does not agree with `expected` (None if it does)."""
    if isinstance(expected, MemRef) or isinstance(actual, MemRef):
        if not (isinstance(expected, MemRef) and isinstance(actual, MemRef)):
            return f"a memref against {type(actual).__name__}"
        if expected.data.shape != actual.data.shape or (expected.init != actual.init).any():
            return "memrefs differ in shape or in which elements are written"
        return difference(np.where(expected.init, expected.data, 0), np.where(actual.init, actual.data, 0), exact, tol)
    expected, actual = (np.asarray(v) if isinstance(v, np.generic) else v for v in (expected, actual))
    if not isinstance(expected, np.ndarray) or not isinstance(actual, np.ndarray):
        return None if expected is actual else f"{expected!r} != {actual!r}"
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return f"shape/dtype {expected.shape} {expected.dtype} != {actual.shape} {actual.dtype}"
    if expected.dtype.kind == "f" or expected.dtype.name == "bfloat16":
        bad = _floats_differ(np.array(expected), np.array(actual), exact, tol)  # C-contiguous, 0-d kept
    else:
        bad = np.asarray(expected != actual)
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    return f"at {list(where)}: expected {expected[where]!r}, got {actual[where]!r}"


def differences(expected: Sequence[Any], actual: Sequence[Any], exact: bool = True,
                tol: Tolerance | None = None) -> list[str]:
    """One message per disagreeing position (empty when the runs agree)."""
    if len(expected) != len(actual):
        return [f"{len(expected)} values before, {len(actual)} after"]
    out = []
    for i, (e, a) in enumerate(zip(expected, actual)):
        why = difference(e, a, exact, tol)
        if why is not None:
            out.append(f"value #{i}: {why}")
    return out


class UnsoundRewrite(AssertionError):
    """A rewrite changed what a program computes on some input."""


def check_agreement(before: Operation, after: Operation, inputs: list[Any], exact: bool,
                    tol: Tolerance | None, name: str | None = None) -> bool:
    """Compare one run; False when the original is undefined on `inputs` (nothing to check)."""
    try:
        expected = execute(before, inputs, name).observable()
    except Undefined:
        return False
    try:
        actual = execute(after, inputs, name).observable()
    except Undefined as e:
        raise UnsoundRewrite(f"the rewritten program is undefined where the original is not: {e}") from e
    diffs = differences(expected, actual, exact, tol)
    if diffs:
        raise UnsoundRewrite("results differ: " + "; ".join(diffs))
    return True
