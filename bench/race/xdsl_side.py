"""xDSL 0.74's two canonicalization routes on the race modules, timed without parsing.

* greedy: its `canonicalize` pass (its own arith canonicalization patterns and folders);
* eqsat: `eqsat-create-eclasses`, `apply-eqsat-pdl-interp`, `eqsat-add-costs`,
  `eqsat-extract`, `dce`, with the x-x→0 family written as PDL (`PDL_PATTERNS`), compiled
  once to e-class-aware `pdl_interp` by xDSL's own converter (not timed).
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

#: The x-x→0 family as PDL: six of the eight rules egraft's arith-canonical has for them.
#: `x * 0 -> 0` and `x + 0 -> x` are left out: xDSL 0.74's convert-pdl-to-pdl-interp tests a
#: `pdl.attribute = <value>` for truthiness (`elif attr_op.value:`, conversion.py:293) and
#: `IntegerAttr(0)` is falsy, so the `= 0` constraint is dropped and the two rules fire on every
#: `muli x, c` / `addi x, c` (its outputs then compute other results: `muli %x, %c1` became `%c1`).
_SELF = """
pdl.pattern @{name} : benefit(1) {{
  %t = pdl.type{type}
  %x = pdl.operand
  %root = pdl.operation "arith.{op}" (%x, %x : !pdl.value, !pdl.value) -> (%t : !pdl.type)
  pdl.rewrite %root {{
    {body}
  }}
}}"""
_ZERO_BODY = """%zero = pdl.attribute = 0 : i32
    %c = pdl.operation "arith.constant" {"value" = %zero} -> (%t : !pdl.type)
    %r = pdl.result 0 of %c
    pdl.replace %root with (%r : !pdl.value)"""
_SAME_BODY = "pdl.replace %root with (%x : !pdl.value)"
_CONST_RHS = """
pdl.pattern @{name} : benefit(1) {{
  %t = pdl.type
  %x = pdl.operand
  %k = pdl.attribute = {value} : i32
  %c = pdl.operation "arith.constant" {{"value" = %k}} -> (%t : !pdl.type)
  %cv = pdl.result 0 of %c
  %root = pdl.operation "arith.{op}" (%x, %cv : !pdl.value, !pdl.value) -> (%t : !pdl.type)
  pdl.rewrite %root {{
    pdl.replace %root with ({result} : !pdl.value)
  }}
}}"""

PDL_PATTERNS = "builtin.module {" + "".join([
    # the zero they build is `0 : i32`, so they match i32 only (else xDSL builds an ill-typed constant)
    _SELF.format(name="subi_self", op="subi", body=_ZERO_BODY, type=" : i32"),
    _SELF.format(name="xori_self", op="xori", body=_ZERO_BODY, type=" : i32"),
    _SELF.format(name="andi_self", op="andi", body=_SAME_BODY, type=""),
    _SELF.format(name="ori_self", op="ori", body=_SAME_BODY, type=""),
    _CONST_RHS.format(name="muli_one", op="muli", value=1, result="%x"),
    _CONST_RHS.format(name="divsi_one", op="divsi", value=1, result="%x"),
]) + "\n}\n"


def _context() -> Any:
    from xdsl.context import Context
    from xdsl.dialects import get_all_dialects

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def _pipeline(spec: str) -> Any:
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    return PassPipeline.parse_spec(get_all_passes(), spec)


def _parse(ctx: Any, text: str) -> Any:
    from xdsl.parser import Parser

    return Parser(ctx, text).parse_module()


def eqsat_matcher_file(workdir: str) -> str:
    """The PDL patterns converted to eqsat-aware pdl_interp, written to a file."""
    from xdsl.printer import Printer

    ctx = _context()
    module = _parse(ctx, PDL_PATTERNS)
    _pipeline("convert-pdl-to-pdl-interp,convert-pdl-interp-to-eqsat-pdl-interp").apply(ctx, module)
    path = os.path.join(workdir, "patterns.pdl_interp.mlir")
    with open(path, "w") as f:
        Printer(stream=f).print_op(module)
    return path


def count_ops(module: Any) -> int:
    return sum(1 for _ in module.walk())


def run(text: str, route: str) -> tuple[float, int]:
    """(seconds for the pass pipeline alone, ops left) for `route` = greedy or eqsat."""
    ctx = _context()
    with tempfile.TemporaryDirectory(prefix="race-xdsl-") as workdir:
        if route == "greedy":
            spec = "canonicalize"
        else:
            matcher = eqsat_matcher_file(workdir)
            spec = (f"eqsat-create-eclasses,apply-eqsat-pdl-interp{{pdl_interp_file=\"{matcher}\"}},"
                    "eqsat-add-costs{default=1},eqsat-extract,dce")
        pipeline = _pipeline(spec)
        module = _parse(ctx, text)
        start = time.perf_counter()
        pipeline.apply(ctx, module)
        return time.perf_counter() - start, count_ops(module)
