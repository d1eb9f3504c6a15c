"""`egraft-opt --check-rules=SET[,SET...]`: every rule of the sets through the soundness check.

Each rule gets one verdict line (`passes/soundness/counterexample.py`): sound, with how many
drawn programs it rewrote; UNSOUND, with the minimal function that shows it, its inputs,
the results before and after and the rewritten function; never applied (its pattern and
checks matched none of the drawn programs, so nothing was shown); not checked, and why (an
op the interpreter has no semantics for).  A summary line follows.  Exit status 1 when a rule
is unsound or a set is unknown, else 0.  The check draws programs with hypothesis (a
dependency of egraft; an environment without it is told how to install it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, TextIO

from egraft.ir.core.deep import run_with_deep_stack

if TYPE_CHECKING:
    from egraft.passes.soundness.counterexample import Counterexample

DEFAULT_EXAMPLES = 100


def check_rule_sets(names: Sequence[str], stdout: TextIO, stderr: TextIO, examples: int = DEFAULT_EXAMPLES) -> int:
    """Check every rule of the named sets; the exit status."""
    from egraft.passes.soundness.counterexample import NEVER_APPLIED, NOT_CHECKED, UNSOUND, check_rule
    from egraft.patterns import rules_of

    try:
        rules = rules_of(names)
    except KeyError as e:
        stderr.write(f"egraft-opt: error: {e.args[0]}\n")
        return 1
    counts = {status: 0 for status in ("sound", UNSOUND, NEVER_APPLIED, NOT_CHECKED)}
    for rule in rules:
        verdict = run_with_deep_stack(check_rule, rule, examples)  # deep patterns make deep programs
        counts[verdict.status] += 1
        head = f"{rule.name} ({rule.origin}): "
        if verdict.status == "sound":
            stdout.write(f"{head}sound: {verdict.programs} generated programs rewritten, every result equal\n")
        elif verdict.status == UNSOUND:
            stdout.write(f"{head}UNSOUND: {verdict.reason}\n")
            _write_counterexample(verdict.counterexample, stdout)
        else:
            stdout.write(f"{head}{verdict.status}: {verdict.reason}\n")
        stdout.flush()
    stdout.write(f"{len(rules)} rule(s): " + ", ".join(f"{n} {status}" for status, n in counts.items()) + "\n")
    return 1 if counts[UNSOUND] else 0


def _write_counterexample(found: "Counterexample", stdout: TextIO) -> None:
    indent = "    "
    stdout.write("  counterexample:\n")
    stdout.write("".join(f"{indent}{line}\n" for line in found.function.splitlines() if line))
    stdout.write("  inputs:\n" + "".join(f"{indent}{line}\n" for line in found.inputs))
    stdout.write("  results before: " + ", ".join(found.before) + "\n")
    stdout.write("  results after:  " + ", ".join(found.after) + "\n")
    stdout.write("  rewritten:\n" + "".join(f"{indent}{line}\n" for line in found.rewritten.splitlines() if line))
