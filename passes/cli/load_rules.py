"""`egraft-opt --load-rules FILE` (repeatable): the user's rule sets, registered before the run.

`patterns/load_rules.py` reads the files (a Python module, a DRR `.td`, a rule file) and
registers their sets; this module reports on stderr what a file got wrong: a located
`file:line:col: error:` for rule files and `.td` files, the error at the user's frame with a
traceback clipped to the user's files for a Python module, and the warnings (a DRR pattern
not imported, a module that registered nothing).  Once loaded, the sets are named like the
built-in ones: `-eqsat="rules=my-set"`, `-apply-rules="rules=my-set"`,
`-canonicalize="rules=my-set"`, `--check-rules=my-set`.
"""

from __future__ import annotations

from typing import Sequence, TextIO

from egraft.ir import DiagnosticError
from egraft.ir.core.deep import run_with_deep_stack


def load_rule_files(paths: Sequence[str], stderr: TextIO) -> bool:
    """Load each file in order; False (after reporting) at the first that fails."""
    from egraft.patterns.load_rules import RuleLoadError, load_rules  # only runs that load rules pay for it

    for path in paths:
        try:
            loaded = run_with_deep_stack(load_rules, path)  # rules nest as deep as MLIR text may
        except DiagnosticError as e:
            stderr.write(e.render() + "\n")
            return False
        except RuleLoadError as e:
            stderr.write(f"{e}\n")
            return False
        for warning in loaded.warnings:
            stderr.write(warning + "\n")
    return True
