"""The soundness harness: rules and pass pipelines checked against the interpreter.

`assert_rule_sound(rule)` draws small programs whose body is the rule's source
pattern (`instantiate.py`), applies the rule with the greedy driver (folding
off, so only the rule acts), and runs the function before and after on random
inputs, special floats included.  An input on which the original program is
undefined is skipped (any result is a refinement of undefined behaviour);
the rewritten program must then be defined too, and agree (`compare.py`):
exactly, unless the rule is tagged "approx" or `exact=False` is passed.
Instances the verifier rejects or where the rule does not apply (its checks
fail) are discarded with `assume`; a rule that never applies fails the test,
so a check can not be passed vacuously.

`assert_pass_sound(module_text, pipeline)` does the same for a pass pipeline
on a given module: every function with a body is run before and after on
random inputs, and results plus the final contents of memref arguments must
agree.  The comparison itself (`check_agreement`, `UnsoundRewrite`) is the
interpreter's, in `egraft.ir.semantics.compare`.
"""

from __future__ import annotations

from typing import Any, Iterable

from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis.errors import Unsatisfiable
from hypothesis import strategies as st

from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.compare import Tolerance, check_agreement
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.ir.syntax.parser import parse
from egraft.ir.syntax.printer import print_ir
from egraft.ir.verifier import verify
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness.instantiate import rule_instances
from egraft.patterns.rule import Rule
from egraft.rewrite.greedy.driver import apply_rules_greedily

#: Rewrites of one drawn program: enough for every instance of the pattern in it, and an end for a
#: rule that matches what it builds (the greedy driver's own bound is per scan, ten scans).
MAX_APPLICATIONS = 16


def _clone(module: Operation) -> Operation:
    """An independent copy, through text (also checks that the IR prints and parses)."""
    return parse(print_ir(module))


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=(HealthCheck.filter_too_much, HealthCheck.too_slow,
                                           HealthCheck.data_too_large))


def assert_rule_sound(rule: Rule, examples: int = 100, *, exact: bool | None = None,
                      tolerance: Tolerance | None = None, special_floats: bool = True,
                      inputs_per_program: int = 4, types: st.SearchStrategy[T.Type] | None = None,
                      min_applications: int = 1) -> int:
    """Raise (hypothesis shrinks to a small counterexample) unless `rule` preserves semantics.

    `exact` defaults to True unless the rule is tagged "approx"; `types`
    overrides the strategy of base types (`instantiate.base_types`).  Returns
    how many drawn programs the rule rewrote (at least `min_applications`)."""
    exact = ("approx" not in rule.tags) if exact is None else exact
    applied = [0]

    @_settings(examples)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        module = data.draw(rule_instances(rule, types), label="program")
        try:
            verify(module)
        except Exception:
            assume(False)
        before_text = print_ir(module)
        after = parse(before_text)
        # a few applications: a rule that matches its own result (x+y -> y+x) would rewrite on
        report = apply_rules_greedily(after, [rule], fold=False, max_num_rewrites=MAX_APPLICATIONS)
        assume(report.rewrites[rule.name] > 0)
        note(f"before:\n{before_text}\nafter:\n{print_ir(after)}")
        verify(after)
        applied[0] += 1
        arg_types = argument_types(module)
        for _ in range(inputs_per_program):
            inputs = data.draw(values_for_types(arg_types, special_floats), label="inputs")
            check_agreement(module, after, inputs, exact, tolerance)

    try:
        run()
    except Unsatisfiable:
        pass  # every drawn program was discarded: reported below
    if applied[0] < min_applications:
        raise AssertionError(f"rule '{rule.name}' applied to {applied[0]} of {examples} drawn programs; "
                             "its pattern or checks may be unsatisfiable by the generated types "
                             "(pass `types=`)")
    return applied[0]


def assert_pass_sound(module_text: str, pipeline: str, examples: int = 50, *, exact: bool = True,
                      tolerance: Tolerance | None = None, special_floats: bool = True,
                      functions: Iterable[str] | None = None) -> None:
    """Run `pipeline` (textual, e.g. `"func.func(cse)"`) on the module and check that
    every function (or those named) computes the same before and after."""
    before = parse(module_text)
    after = _clone(before)
    PassManager(parse_pipeline(pipeline)).run(after)
    names = list(functions) if functions is not None else _function_names(before)
    survivors = set(_function_names(after))

    for name in names:
        if name in survivors:
            _check_function(before, after, name, examples, exact, tolerance, special_floats)


def _check_function(before: Operation, after: Operation, name: str, examples: int, exact: bool,
                    tolerance: Tolerance | None, special_floats: bool) -> None:
    @_settings(examples)
    @given(values_for_types(argument_types(before, name), special_floats))
    def run(inputs: list[Any]) -> None:
        check_agreement(before, after, inputs, exact, tolerance, name)

    run()


def _function_names(module: Operation) -> list[str]:
    return [op.attr("sym_name").value for op in module.walk()  # type: ignore[union-attr]
            if op.name == "func.func" and op.regions[0].blocks]


__all__ = ["assert_pass_sound", "assert_rule_sound"]
