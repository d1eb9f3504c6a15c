"""Every rewrite driver, run on one program, and what must hold afterwards.

The property of `test_drivers.py` (and the larger runs of `bench/race/fuzz_shapes.py`):
for each driver (`canonicalize` on the e-graph and on the greedy driver, `eqsat` and
`apply-rules` with every registered rule set, `cse`, `dce`),

* the pass ends without an exception, within its time budget (generous: it only
  catches hangs; the budget stops a hang with `Hang` instead of waiting for it);
* the output verifies, and its printed text parses back and verifies;
* the function keeps its signature and every return keeps its values;
* the reference interpreter gives the same results before and after on random inputs,
  with the soundness harness's comparison (`ir/semantics/compare.py`): integers bit
  for bit; floats bit for bit with any NaN equal to any NaN. Inputs come from the
  harness's strategy (boundaries, NaN, Inf, -0.0, small exact values) and from
  `random_inputs` (values of no special form, whose sums round: hypothesis' floats are so
  often exact that a float reassociation went unnoticed in 30 programs).

Fast-math rule sets assume no NaN or Inf anywhere. For them inputs are finite and an
input counts only if the original program computes no NaN or Inf on it, in any value,
not just its results: `x - x -> 0` is right only where x is finite, and a comparison
can turn the NaN of an infinite `x - x` into a finite `false`.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

import attrs
import numpy as np

import egraft.passes  # noqa: F401  (registers the passes)
from egraft.ir import Operation, parse, print_ir, verify
from egraft.ir.semantics import dialects  # noqa: F401  (fills the evaluator table)
from egraft.ir.semantics.interpreter import Interpreter, find_function, snapshot
from egraft.ir.semantics import Tolerance, check_agreement
from egraft.ir.semantics.values import MemRef, Undefined
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import OpPipeline, parse_pipeline
from egraft.patterns import rule_set, rule_sets

#: Rule sets that assume no NaN or Inf (their own docs say so).
FAST_MATH_SETS = frozenset({"tf-fast-math"})
#: Sets with rules tagged "approx" (Grappler's float policy: regrouped sums and products, scales
#: folded into weights) equal the original up to rounding, and only where values stay moderate
#: (x + 1e30 - 1e30 regrouped is 0, not x): they are compared there, with this tolerance; their
#: own tests run each rule through the harness on bounded inputs.
APPROX_BOUND = 1e3
APPROX_TOLERANCE = Tolerance(1e-3, 1e-2)
#: The time a pass without a timeout option may take on a test-sized program before it counts as hung.
HANG_SECONDS = 60.0
#: Added to a pass's own timeout: a budget stops saturation, then extraction and write-back still run.
SLACK_SECONDS = 20.0


class Hang(Exception):
    """A pass ran past its time budget."""


@attrs.frozen
class Driver:
    """One pass as a function pass, e.g. `eqsat{rules=tf-canonical}`."""

    pass_text: str
    fast_math: bool = False
    approx: bool = False  # its set has rules tagged "approx": compared up to rounding, on moderate values

    def __str__(self) -> str:
        return self.pass_text

    @property
    def engine(self) -> str:
        """"egraph" for the passes that saturate an e-graph, else "ir" (they rewrite the IR)."""
        egraph = self.pass_text.startswith("eqsat") or (
            self.pass_text.startswith("canonicalize") and "driver=greedy" not in self.pass_text)
        return "egraph" if egraph else "ir"

    @property
    def pipeline(self) -> str:
        return f"builtin.module(func.func({self.pass_text}))"


def drivers() -> list[Driver]:
    """Every driver, with every registered rule set (sets registered later join automatically)."""
    out = [Driver("canonicalize"), Driver("canonicalize{driver=greedy}"), Driver("cse"), Driver("dce"),
           Driver("eqsat{rules=none}")]
    for name in rule_sets():
        fast = name in FAST_MATH_SETS
        declared = rule_set(name)
        approx = any("approx" in r.tags for r in (*declared.rules, *declared.greedy_rules))
        out += [Driver(f"eqsat{{rules={name}}}", fast, approx), Driver(f"apply-rules{{rules={name}}}", fast, approx)]
    return out


def budget_seconds(pipeline: OpPipeline) -> float:
    """How long the pipeline may run: its passes' timeout options plus slack, or HANG_SECONDS."""
    total, work = 0.0, [pipeline]
    while work:
        for e in work.pop().elements:
            if isinstance(e, OpPipeline):
                work.append(e)
            else:
                timeout = getattr(e, "timeout", 0.0) or 0.0
                total += timeout + SLACK_SECONDS if timeout > 0 else HANG_SECONDS
    return total


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise `Hang` in the block after `seconds` (main thread only; elsewhere it only measures)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_driver(driver: Driver, text: str) -> tuple[Operation, float]:
    """The module after the driver ran on `text` (verified by the pass manager), and the seconds it took."""
    module = parse(text)
    pipeline = parse_pipeline(driver.pipeline)
    budget = budget_seconds(pipeline)
    start = time.perf_counter()
    with time_limit(budget):
        PassManager(pipeline).run(module)
    seconds = time.perf_counter() - start
    assert seconds <= budget, f"{driver} took {seconds:.1f} s, over its budget of {budget:.0f} s"
    return module, seconds


def reparsed(module: Operation) -> Operation:
    """The module printed and parsed back, verified: what a user of the output would read."""
    again = parse(print_ir(module))
    verify(again)
    return again


def check_outputs_kept(before: Operation, after: Operation) -> None:
    """Same signature, and every return still returns one value per result."""
    fb, fa = find_function(before), find_function(after)
    assert fa.attr("function_type") == fb.attr("function_type"), "the function's signature changed"
    n_results = len(fb.attr("function_type").value.results)  # type: ignore[union-attr]
    returns = [op for op in fa.walk() if op.name == "func.return"]
    assert returns, "the function lost its return"
    for r in returns:
        assert len(r.operands) == n_results, f"a return has {len(r.operands)} values, not {n_results}"


def stays_finite(module: Operation, inputs: list[Any], bound: float = np.inf) -> bool:
    """Does the program compute only finite floats on `inputs` (every value, not just results),
    each at most `bound` in magnitude? False also when it is undefined there: nothing to
    compare then."""
    interp = Interpreter()
    try:
        interp.call(find_function(module), snapshot(inputs))
    except Undefined:
        return False
    for v in interp.env.values():
        data = v.data if isinstance(v, MemRef) else v
        if isinstance(data, np.ndarray) and data.dtype.kind == "f" and not (
                np.isfinite(data).all() and (np.abs(data) <= bound).all()):
            return False
    return True


def random_inputs(types: list[Any], seed: int) -> list[np.ndarray]:
    """One seeded value per argument type: floats of mixed magnitudes with random mantissas,
    integers uniform over their whole range, booleans fair."""
    from egraft.ir.core import types as T
    from egraft.ir.semantics.values import storage_dtype

    rng = np.random.default_rng(seed)
    out = []
    for t in types:
        shape = tuple(t.shape) if isinstance(t, T.ShapedType) else ()
        dtype = np.dtype(storage_dtype(T.element_type(t)))
        if dtype.kind == "f":
            out.append((rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype))
        elif dtype.kind == "b":
            out.append(rng.integers(0, 2, shape).astype(bool))
        else:
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))
    return out


def agrees(driver: Driver, before: Operation, after: Operation, inputs: list[Any]) -> bool:
    """Raise `UnsoundRewrite` if the results differ; False if the input says nothing
    (the original is undefined there, or leaves a fast-math or approx set's domain)."""
    if driver.approx:
        if not stays_finite(before, inputs, APPROX_BOUND):
            return False
        return check_agreement(before, after, inputs, exact=False, tol=APPROX_TOLERANCE)
    if driver.fast_math and not stays_finite(before, inputs):
        return False
    return check_agreement(before, after, inputs, exact=True, tol=None)


__all__ = ["Driver", "Hang", "agrees", "random_inputs", "budget_seconds", "check_outputs_kept", "drivers", "reparsed",
           "run_driver", "stays_finite"]
