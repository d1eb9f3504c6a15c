"""The `report=` option of the rewriting passes (eqsat, canonicalize, apply-rules): where a
pass's report goes.

* `report=-`, `report=true` (or `1`): a remark on the op the pass ran on;
* `report=false` (or `0`), or no option: nowhere;
* anything else is a path: the report is written there as JSON. A pass anchored on
  functions runs once per function, so the file holds every run of the process:
  `{"version": 1, "runs": [...]}`, one object per run in the order they ran (a file left by
  an earlier process is replaced). Each write goes to a temporary file renamed over the
  path, so a reader never sees half a report.

Booleans keep their meaning (a report once went to a file named `true`). A path that cannot
be written is an error of the pass, located at its op.
"""

from __future__ import annotations

import json
import os
from typing import Any

from egraft.ir import Diagnostic, Operation

from egraft.passes.manager.registry import PassContext, PassFailure, option

REPORT_VERSION = 1
_REMARK = ("-", "true", "1")
_NONE = ("", "false", "0")

# path -> the runs written to it by this process
_RUNS: dict[str, list[dict]] = {}


def report_option() -> Any:
    """The `report` option's declaration."""
    return option("", "What the rewrite did: '-' or true as a remark, a file path to write it as JSON "
                  "(per-rule statistics included)")


def emit_report(spec: str, text: str, data: dict, op: Operation, ctx: PassContext) -> None:
    """Send a pass's report where `spec` (the option's value) says: ``text`` as a remark, or
    ``data`` (JSON-ready) appended to the runs of the file."""
    if spec.lower() in _NONE:
        return
    if spec.lower() in _REMARK:
        ctx.emit(Diagnostic("remark", text, op.loc))
        return
    runs = _RUNS.setdefault(os.path.abspath(spec), [])
    runs.append(data)
    partial = f"{spec}.partial"
    try:
        with open(partial, "w", encoding="utf-8") as f:
            json.dump({"version": REPORT_VERSION, "runs": runs}, f, indent=1)
            f.write("\n")
        os.replace(partial, spec)
    except OSError as err:
        runs.pop()
        raise PassFailure(Diagnostic("error", f"cannot write the report to '{spec}': {err.strerror or err}",
                                     op.loc)) from None


def op_label(op: Operation) -> str:
    """What a report calls the op a pass ran on: its name and symbol (`func.func @main`)."""
    value = getattr(op.attr("sym_name"), "value", None)
    return f"{op.name} @{value}" if value is not None else op.name
