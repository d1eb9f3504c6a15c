"""`affine-graybox-eliminate` and `affine-graybox-hoist`: the graybox RFC's "hoist or eliminate" pass.

The RFC names one function pass "that will hoist or eliminate unnecessary affine.graybox ops ...
without violating the dimension and symbol requirements"; these are its two halves, MLIR-style
names. Both are anchored on `func.func` and walk it once (the grayboxes in it, outermost first);
the surgery, its legality and soundness are in `rewrite/structural/graybox.py` and
`graybox_hoist.py`, and docs/graybox.md states the decided semantics.

They are not `AFFINE_SCOPED`: they restructure the scopes themselves (an elimination removes one,
a hoist moves one), so they see the whole function rather than one scope at a time.
"""

from __future__ import annotations

import attrs

from egraft.ir import Diagnostic, Operation

from egraft.passes.manager.registry import Pass, PassContext, option, register_pass


@attrs.define
class _GrayboxSurgery(Pass):
    """What both passes share: the anchor, the `report` option, running one structural step."""

    ANCHOR = "func.func"
    report: bool = option(False, "Emit how many rewrites were made as a remark")

    def run(self, op: Operation, ctx: PassContext) -> None:
        done = self.rewrite(op)
        if self.report:
            ctx.emit(Diagnostic("remark", f"{self.NAME}: {done} rewrites", op.loc))

    def rewrite(self, op: Operation) -> int:
        raise NotImplementedError


@register_pass
@attrs.define
class AffineGrayboxEliminate(_GrayboxSurgery):
    """Splices each `affine.graybox` into its parent block where every affine operand it holds
    stays a valid dimension or symbol there (symbols that become dimensions are moved to the
    map's dimensions); an empty graybox without results is erased. Multi-block grayboxes stay.
    Semantics, legality and what is refused: docs/graybox.md."""

    NAME = "affine-graybox-eliminate"
    SUMMARY = "Eliminate affine.graybox ops whose bodies are affine in the enclosing scope"

    def rewrite(self, op: Operation) -> int:
        from egraft.rewrite.structural.graybox import eliminate_grayboxes

        return eliminate_grayboxes(op)


@register_pass
@attrs.define
class AffineGrayboxHoist(_GrayboxSurgery):
    """Eliminates each `affine.graybox` where legal, else moves it out of the affine loops and
    ifs around it as far as the dimension and symbol rules allow (the loop moves into the
    graybox), when that lowers the number of graybox instances; a graybox hoisted to the top of
    its scope is eliminated. Semantics, legality and profitability: docs/graybox.md."""

    NAME = "affine-graybox-hoist"
    SUMMARY = "Hoist affine.graybox ops out of affine loops and ifs, eliminating what that allows"

    def rewrite(self, op: Operation) -> int:
        from egraft.rewrite.structural.graybox_hoist import hoist_grayboxes

        return hoist_grayboxes(op)
