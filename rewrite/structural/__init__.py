"""Structural steps: IR rewrites a rule cannot state, done by imperative code on the IR.

A rule replaces a matched op (its results, and its effect: docs/encoding.md); these steps
change what a rule cannot see or build: they inline a region's ops into the enclosing block,
restructure regions (grayboxes, loops) or shrink control-operand lists. A rule set names the
steps it needs (`structural=` in patterns/rule_sets.py) and `rewrite/phases.py` runs them around its rules,
only where the ops they rewrite occur. Each step returns how many rewrites it made and argues
its soundness in its module's docstring. May import `egraft.ir`, `egraft.patterns` and the island
analyses of `egraft.rewrite.islands` (tf-switch reads the deadness analysis island coarsening keys on).

To add a step: write `fn(op) -> int` in a module here, add a `StructuralStep` to `STEPS`, and
name it in the `structural=` of the rule set that needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from egraft.ir import Operation
from egraft.rewrite.structural.affine_loops import simplify_affine_control
from egraft.rewrite.structural.affine_maps import canonicalize_affine_maps
from egraft.rewrite.structural.executor import canonicalize_executor
from egraft.rewrite.structural.graybox import eliminate_grayboxes
from egraft.rewrite.structural.graybox_args import drop_graybox_args, fold_graybox_casts
from egraft.rewrite.structural.graybox_hoist import hoist_grayboxes
from egraft.rewrite.structural.tf_captured_neutral import fold_captured_neutral
from egraft.rewrite.structural.tf_cse import eliminate_common_subgraphs
from egraft.rewrite.structural.tf_dependency import optimize_dependencies
from egraft.rewrite.structural.tf_switch import fold_switches
from egraft.rewrite.structural.tf_switch_loop_invariant import hoist_loop_invariants


@dataclass(frozen=True)
class StructuralStep:
    """One step: its name (in reports and `disable-patterns=`), the function doing it, the op
    names it rewrites (a name ending in '.' stands for a dialect), and whether it also runs
    before the rules (it makes work for them), not only after."""

    name: str
    run: Callable[[Operation], int]
    ops: tuple[str, ...]
    before: bool = False

    def applies(self, present: set[str]) -> bool:
        """Whether any op this step rewrites is among the op names ``present``."""
        return any(n in present if not n.endswith(".") else any(p.startswith(n) for p in present)
                   for n in self.ops)


STEPS = {step.name: step for step in (
    StructuralStep("tf-executor-canonical", canonicalize_executor, ("tf_executor.",), before=True),
    StructuralStep("affine-loops", simplify_affine_control, ("affine.for", "affine.if"), before=True),
    StructuralStep("affine-maps", canonicalize_affine_maps, ("affine.",), before=True),
    StructuralStep("graybox-eliminate", eliminate_grayboxes, ("affine.graybox",)),
    StructuralStep("graybox-hoist", hoist_grayboxes, ("affine.graybox",)),
    StructuralStep("graybox-cast-fold", fold_graybox_casts, ("affine.graybox",), before=True),
    StructuralStep("graybox-drop-args", drop_graybox_args, ("affine.graybox",), before=True),
    StructuralStep("tf-dependency", optimize_dependencies, ("tf_executor.island", "tf.IdentityN")),
    StructuralStep("tf-cse", eliminate_common_subgraphs, ("tf.",)),
    StructuralStep("tf-switch", fold_switches, ("tf_executor.Switch",)),
    StructuralStep("tf-loop-invariant", hoist_loop_invariants, ("tf_executor.Enter",)),
    StructuralStep("tf-captured-neutral", fold_captured_neutral, ("tf.Mul", "tf.AddV2")),
)}
