"""Checking one rule and explaining the verdict (`egraft-opt --check-rules`).

`assert_rule_sound` (harness.py) is for tests: it raises.  A rule author at the command line
needs a verdict per rule and, for a wrong rule, the smallest program that shows it:
`check_rule(rule)` draws the programs `instantiate.py` builds from the rule's source (random
shapes and element types, NaN, ±Inf and -0.0 among the float inputs), applies the rule once
with the greedy driver (folding off, so only the rule acts), runs both programs with the
interpreter and compares them as the harness does (`check_agreement`: bit for bit, or within
tolerance for rules tagged "approx"; signed zeros equal in programs with `nsz`/`fast` flags;
`nnan`/`ninf` make NaN/Inf operands and results undefined in the interpreter, so a rule that
claims them is not refuted by them).  Hypothesis shrinks a disagreement to a minimal
program and inputs; the verdict carries that function, the rewritten one, the inputs and
both results as MLIR-style text.

Verdicts: "sound" (no disagreement on the programs it rewrote), "unsound", "never applied"
(no drawn program matched the pattern and its checks: the check proves nothing, so it is
reported rather than passed), "not checked" (the interpreter has no semantics for an op of
the rule, or drawing its programs failed: the reason says which).  The search is
derandomized, so one rule gets the same verdict and counterexample on every run of one
version of egraft and hypothesis.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
import numpy as np
from hypothesis import HealthCheck, Verbosity, assume, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.compare import Tolerance, UnsoundRewrite, check_agreement
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.ir.semantics.interpreter import coverage, execute, find_function
from egraft.ir.semantics.values import MemRef, Undefined
from egraft.ir.syntax.parser import parse
from egraft.ir.syntax.printer import print_ir
from egraft.ir.verifier import verify
from egraft.passes.soundness.instantiate import rule_instances
from egraft.patterns.rule import Rule
from egraft.rewrite.greedy.driver import apply_rules_greedily

SOUND, UNSOUND, NEVER_APPLIED, NOT_CHECKED = "sound", "unsound", "never applied", "not checked"
_NUMPY_SCALAR = re.compile(r"np\.\w+\(([^()]*)\)")


@attrs.frozen
class Counterexample:
    """A program the rule changes the meaning of, as text: the function before and after the
    rewrite, one line per input (`%arg0 = inf : f32`) and per result of each run."""

    reason: str
    function: str
    rewritten: str
    inputs: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    values: tuple[Any, ...] = attrs.field(default=(), eq=False, repr=False)  # the inputs themselves


@attrs.frozen
class Verdict:
    rule: Rule
    status: str
    programs: int = 0  # drawn programs the rule rewrote
    reason: str = ""
    counterexample: Counterexample | None = None


def check_rule(rule: Rule, examples: int = 100) -> Verdict:
    """The verdict on `rule` after up to `examples` drawn programs (above)."""
    missing = sorted({op.name for op in (*rule.source_ops(), *rule.result_ops())} - set(coverage()))
    if missing:
        return Verdict(rule, NOT_CHECKED, reason=f"the interpreter has no semantics for {', '.join(missing)}")
    applied = [0]
    found: list[Counterexample] = []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True, verbosity=Verbosity.quiet,
              print_blob=False, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data: st.DataObject) -> None:
        module = data.draw(rule_instances(rule), label="program")
        try:
            verify(module)
        except Exception:
            assume(False)
        after = parse(print_ir(module))
        # One application is what is checked (more are that step again); it also bounds rules
        # that match their own result (x*y -> y*x), on which the greedy driver never stops.
        report = apply_rules_greedily(after, [rule], fold=False, max_num_rewrites=1)
        assume(report.rewrites[rule.name] > 0)
        applied[0] += 1
        exact, tolerance = _comparison(rule, module)
        for _ in range(3):
            inputs = data.draw(values_for_types(argument_types(module), special_floats=True), label="inputs")
            try:
                verify(after)
                check_agreement(module, after, inputs, exact, tolerance)
            except Exception as e:  # noqa: BLE001 - any failure of the rewritten program is the rule's
                found.append(_explain(module, after, inputs, _reason(e)))
                raise UnsoundRewrite(found[-1].reason) from None

    try:
        run()
    except UnsoundRewrite:
        return Verdict(rule, UNSOUND, applied[0], found[-1].reason, found[-1])
    except Unsatisfiable:
        pass
    except Exception as e:  # noqa: BLE001 - drawing or rewriting failed: say so, never crash the run
        return Verdict(rule, NOT_CHECKED, applied[0], f"{type(e).__name__}: {e}".splitlines()[0])
    if applied[0] == 0:
        return Verdict(rule, NEVER_APPLIED, reason=f"no program of {examples} drawn from its pattern matched "
                                                   f"it and its checks")
    return Verdict(rule, SOUND, applied[0])


def _comparison(rule: Rule, module: Operation) -> tuple[bool, Tolerance | None]:
    """How to compare: within the default tolerance for rules tagged "approx"; with signed
    zeros equal where an op of the program has `nsz` (or `fast`), which leaves the sign of a
    zero result unspecified; else bit for bit."""
    if "approx" in rule.tags:
        return False, None
    for op in module.walk():
        flags = op.attr("fastmath")
        if flags is not None and ("nsz" in str(flags) or "fast>" in str(flags)):
            return False, Tolerance(0.0, 0.0)
    return True, None


def _reason(error: Exception) -> str:
    if isinstance(error, UnsoundRewrite):
        return _NUMPY_SCALAR.sub(r"\1", str(error))  # np.float16(-0.0) -> -0.0
    return f"the rewritten program fails: {type(error).__name__}: {error}".splitlines()[0]


def _explain(before: Operation, after: Operation, inputs: list[Any], reason: str) -> Counterexample:
    func = find_function(before)
    ftype = func.attr("function_type").value  # type: ignore[union-attr]
    return Counterexample(
        reason, print_ir(func), print_ir(find_function(after)),
        tuple(f"%arg{i} = {value_text(v, t)}" for i, (v, t) in enumerate(zip(inputs, ftype.inputs))),
        _results(before, inputs, ftype.results), _results(after, inputs, ftype.results), tuple(inputs))


def _results(module: Operation, inputs: list[Any], types: tuple[T.Type, ...]) -> tuple[str, ...]:
    try:
        values = execute(module, inputs).results
    except Undefined as e:
        return (f"undefined: {e}",)
    except Exception as e:  # noqa: BLE001 - shown, not raised: it is the rule's failure being reported
        return (f"fails: {type(e).__name__}: {e}".splitlines()[0],)
    return tuple(value_text(v, t) for v, t in zip(values, types))


def value_text(value: Any, t: T.Type) -> str:
    """A runtime value as MLIR writes a constant of its type: `inf : f32`,
    `dense<[1.5, nan]> : tensor<2xf32>` (floats in the shortest text of their own precision)."""
    array = np.asarray(value.data if isinstance(value, MemRef) else value)
    if array.ndim == 0 and not isinstance(t, T.ShapedType):
        return f"{_element(array[()])} : {t}"
    return f"dense<{_nested(array)}> : {t}"


def _nested(array: np.ndarray) -> str:
    if array.ndim == 0:
        return _element(array[()])
    return "[" + ", ".join(_nested(sub) for sub in array) + "]"


def _element(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (float, np.floating)):
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf" if x > 0 else "-inf"
        return str(x)  # numpy's shortest round-trip text for the value's own precision
    return str(int(x)) if isinstance(x, (int, np.integer)) else str(x)


__all__ = ["Counterexample", "NEVER_APPLIED", "NOT_CHECKED", "SOUND", "UNSOUND", "Verdict", "check_rule",
           "value_text"]
