"""Per-scope anchoring of affine passes: the graybox RFC's `AffineFunctionPass`.

An `affine.graybox` opens a new affine scope in place: inside it, values from
above are symbols, and memrefs come in only as its operands.  The RFC asks that
an affine pass "run on that function as well as every affine.graybox op in it",
sequentially, seeing each scope through `walkAffine` (which shows a nested
graybox as one opaque op with memref operands and does not enter it).  Written
as a pass, that is a `run(op)` that may be handed a `func.func` or an
`affine.graybox`; the manager makes the calls.

A pass opts in with the class flag `AFFINE_SCOPED = True`.  The manager then
calls `run` on every affine scope inside the op it anchors the pass on (each
`affine.graybox`, and any other op with the AffineScope trait, such as a
function in a module) and finally on that op itself, innermost first: a scope is
run only after every scope nested in it, so when a pass works on a graybox, the
grayboxes inside it are already in their final form and appear to it as opaque
ops.  Innermost-first is also what makes collecting the scopes up front safe:
a run on a scope may only change what is inside that scope (MLIR's rule for an
op pass), and everything inside it has already been visited.

The scopes are found in one post-order walk (linear, no recursion per nesting
level); the manager verifies once, after the last scope, instead of once per
scope (which would verify a nested graybox once per enclosing scope).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from egraft.ir import Operation
from egraft.ir.core.traits import Traits

if TYPE_CHECKING:
    from egraft.passes.manager.registry import Pass, PassContext


def affine_scopes(op: Operation) -> list[Operation]:
    """The affine scopes in `op`, each after every scope nested in it, ending with `op`.

    `op` itself is always last, whether or not it is an AffineScope op (a pass
    anchored on any op still runs on it)."""
    scopes = [o for o in op.walk_post_order() if o is not op and o.has_trait(Traits.AffineScope)]
    scopes.append(op)
    return scopes


def run_per_affine_scope(p: "Pass", op: Operation, ctx: "PassContext") -> None:
    """Run `p` on every affine scope in `op`, innermost first, then on `op`."""
    for scope in affine_scopes(op):
        p.run(scope, ctx)
