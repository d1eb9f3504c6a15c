"""The rule soundness harness: rules and pass pipelines checked against the reference interpreter.

``harness`` has ``assert_rule_sound`` (a rule applied by the greedy driver to programs drawn
from its source pattern) and ``assert_pass_sound`` (a textual pipeline run on a module);
``instantiate`` draws those programs with hypothesis.  Both run each program before and after
with ``egraft.ir.semantics`` and compare with its ``check_agreement``.  It drives rules and
passes, so it sits above them: it may import ``egraft.ir``, ``egraft.patterns``,
``egraft.rewrite``, ``egraft.passes.manager``, ``egraft.passes.transforms`` and
``egraft.passes.tf``.  Only tests import it (it needs hypothesis, a test dependency); of the
package's layers only ``egraft.passes.cli`` sits above it.
"""

from egraft.passes.soundness.harness import assert_pass_sound, assert_rule_sound

__all__ = ["assert_pass_sound", "assert_rule_sound"]
