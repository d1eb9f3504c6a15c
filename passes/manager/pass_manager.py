"""Op-anchored pass pipelines and the manager that runs them.

An `OpPipeline` runs on one op: its passes run on that op, and a nested
pipeline runs on each op *directly* inside the op's regions whose name
matches the nested anchor (`any` matches every op).  This is MLIR's
OpToOpPassAdaptor, run sequentially: each function gets the whole nested
pipeline before the next one starts.

After every pass the manager verifies the op the pass ran on (unless
`verify_each` is off), so a pass that breaks the IR is named in the report
instead of surfacing as a confusing error at print time.  It can also time
passes (MLIR's `--mlir-timing` report) and dump the IR after each pass.
"""

from __future__ import annotations

import time
from typing import Callable, Hashable

import attrs

from egraft.ir import Diagnostic, DiagnosticError, Operation, verify

from egraft.passes.manager.affine_scopes import run_per_affine_scope
from egraft.passes.manager.registry import Pass, PassContext, PassFailure


@attrs.define
class OpPipeline:
    """Passes and nested pipelines anchored on `anchor` (None: any op)."""

    anchor: str | None
    elements: list["Pass | OpPipeline"] = attrs.field(factory=list)
    # A root nobody anchored explicitly (pass flags, flat lists): it runs on
    # whatever the top op is, as mlir-opt anchors its manager on the parsed op.
    implicit: bool = False

    def add(self, p: Pass) -> None:
        """Append a pass, nesting it implicitly if it is anchored on another op
        (adjacent passes anchored alike share one nested pipeline)."""
        if p.ANCHOR is None or p.ANCHOR == self.anchor or self.anchor is None:
            self.elements.append(p)
            return
        last = self.elements[-1] if self.elements else None
        if not (isinstance(last, OpPipeline) and last.anchor == p.ANCHOR):
            last = OpPipeline(p.ANCHOR)
            self.elements.append(last)
        last.elements.append(p)

    def extend(self, other: "OpPipeline") -> None:
        """Append another pipeline's elements (both anchored on the same op)."""
        for e in other.elements:
            if isinstance(e, Pass):
                self.add(e)
            else:
                self.elements.append(e)

    @property
    def anchor_name(self) -> str:
        return self.anchor or "any"

    def text(self) -> str:
        """The pipeline in MLIR's textual syntax."""
        inner = ",".join(e.text() if isinstance(e, OpPipeline) else e.NAME + e.options_text()
                         for e in self.elements)
        return f"{self.anchor_name}({inner})"


@attrs.define
class TimingNode:
    """Accumulated wall time of one pass or pipeline (summed over the ops it ran on)."""

    name: str
    seconds: float = 0.0
    children: dict[Hashable, "TimingNode"] = attrs.field(factory=dict)

    def child(self, key: Hashable, name: str) -> "TimingNode":
        node = self.children.get(key)
        if node is None:
            node = self.children[key] = TimingNode(name)
        return node

    def report(self, total: float) -> str:
        """MLIR's execution time report layout (wall time only)."""
        rule = "===" + "-" * 73 + "==="
        lines = [rule, " " * 25 + "... Execution time report ...", rule,
                 f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]

        def row(node: TimingNode, depth: int) -> None:
            pct = 100.0 * node.seconds / total if total > 0 else 0.0
            lines.append(f"  {node.seconds:8.4f} ({pct:5.1f}%)  {'  ' * depth}{node.name}")
            for c in node.children.values():
                row(c, depth + 1)

        for c in self.children.values():
            row(c, 0)
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


class PassManager:
    """Runs a root pipeline on a top-level op."""

    def __init__(self, root: OpPipeline, *, verify_each: bool = True, timing: TimingNode | None = None,
                 print_after: Callable[[Pass, Operation], None] | None = None,
                 emit: Callable[[Diagnostic], None] = lambda d: None) -> None:
        self.root = root
        self.verify_each = verify_each
        self.timing = timing
        self.print_after = print_after
        self.context = PassContext(emit)

    def run(self, top: Operation) -> None:
        """Run the pipeline; raise PassFailure (with diagnostics) if a pass fails
        or leaves invalid IR."""
        if self.root.anchor is not None and top.name != self.root.anchor and not self.root.implicit:
            raise PassFailure(Diagnostic(
                "error", f"can't run '{self.root.anchor}' pass manager on '{top.name}' op", top.loc))
        self._run(self.root, top, self.timing)

    def _run(self, pipeline: OpPipeline, op: Operation, timing: TimingNode | None) -> None:
        for e in pipeline.elements:
            node = timing.child(id(e), _timing_name(e)) if timing is not None else None
            start = time.perf_counter()
            if isinstance(e, OpPipeline):
                for region in op.regions:
                    for child in list(region.ops()):
                        if e.anchor is None or child.name == e.anchor:
                            self._run(e, child, node)
            else:
                self.context.timing = node
                self._run_pass(e, op)
            if node is not None:
                node.seconds += time.perf_counter() - start

    def _run_pass(self, p: Pass, op: Operation) -> None:
        if p.ANCHOR is not None and op.name != p.ANCHOR:
            raise PassFailure(Diagnostic(
                "error", f"pass '{p.NAME}' runs on '{p.ANCHOR}' ops, not on '{op.name}'", op.loc))
        try:
            if p.AFFINE_SCOPED:
                run_per_affine_scope(p, op, self.context)
            else:
                p.run(op, self.context)
        except DiagnosticError as e:
            raise PassFailure(e.diagnostics) from None
        if self.verify_each:
            try:
                verify(op)
            except DiagnosticError as e:
                for d in e.diagnostics:
                    d.attach_note(f"the IR was invalid after running pass '{p.display_name}' ({p.NAME})", op.loc)
                raise PassFailure(e.diagnostics) from None
        if self.print_after is not None:
            self.print_after(p, op)


def _timing_name(e: Pass | OpPipeline) -> str:
    return f"'{e.anchor_name}' Pipeline" if isinstance(e, OpPipeline) else e.display_name
