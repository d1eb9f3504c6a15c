"""The `report=` option of the rewriting passes (eqsat, canonicalize, apply-rules): where a
pass's report goes.

* `report=-`, `report=true` (or `1`, or a bare `report`): a remark on the op the pass ran on;
* `report=false` (or `0`), or no option: nowhere;
* anything else is a path: the report is written there as JSON. A pass anchored on
  functions runs once per function, so the file holds every run of the pipeline:
  `{"version": 1, "runs": [...]}`, one object per run in the order they ran (passes of one
  pipeline naming the same path share it; a file left by an earlier pipeline is replaced). Each write goes to a temporary file renamed over the
  path, so a reader never sees half a report.

Booleans keep their meaning (a report once went to a file named `true`). A path that cannot
be written is an error of the pass, located at its op.
"""

from __future__ import annotations

import json
import os
import weakref
from typing import TYPE_CHECKING, Any

import attrs

from egraft.ir import Diagnostic, Operation

from egraft.passes.manager.registry import PassContext, PassFailure, option

if TYPE_CHECKING:
    from egraft.rewrite.greedy.driver import GreedyReport
    from egraft.rewrite.phases import PhasesReport

REPORT_VERSION = 1
_REMARK = ("-", "true", "1")
_NONE = ("", "false", "0")

# pipeline (its pass context) -> path -> the runs written to it
_RUNS: weakref.WeakKeyDictionary[PassContext, dict[str, list[dict]]] = weakref.WeakKeyDictionary()


def report_option() -> Any:
    """The `report` option's declaration."""
    return option("", "What the rewrite did: '-' or true (or a bare `report`) as a remark, a file path to "
                  "write it as JSON (per-rule statistics included)", bare="true")


def wants_report(spec: str) -> bool:
    """Whether the option's value asks for a report (a pass skips building one otherwise)."""
    return spec.lower() not in _NONE


def emit_report(spec: str, text: str, data: dict, op: Operation, ctx: PassContext) -> None:
    """Send a pass's report where `spec` (the option's value) says: ``text`` as a remark, or
    ``data`` (JSON-ready) appended to the runs of the file."""
    if not wants_report(spec):
        return
    if spec.lower() in _REMARK:
        ctx.emit(Diagnostic("remark", text, op.loc))
        return
    runs = _RUNS.setdefault(ctx, {}).setdefault(os.path.abspath(spec), [])
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


def greedy_data(report: GreedyReport) -> dict:
    """A greedy run's report as JSON, its per-rule stats left to the report's ``rules`` rows."""
    return attrs.asdict(report, filter=lambda a, _: a.name != "rules")


def phases_data(done: PhasesReport) -> dict:
    """The JSON-ready parts of a rule-set run (rewrite/phases.py) other than its rules: what the
    e-graph round trip and the greedy driver did, the structural steps, refused folds."""
    trip, greedy = done.round_trip, done.greedy
    egraph = None
    if trip is not None:
        rep = trip.report
        egraph = {"stop": rep.stop if rep else None, "iterations": rep.iterations if rep else 0,
                  "ops_in": trip.ops_in, "enodes": trip.enodes, "eclasses": trip.eclasses, "cost": trip.cost,
                  "seconds": trip.seconds, "written": trip.written,
                  "writeback": attrs.asdict(trip.writeback) if attrs.has(type(trip.writeback))
                  else vars(trip.writeback)}
    return {"converged": done.converged, "egraph": egraph,
            "greedy": None if greedy is None else greedy_data(greedy),
            "not_on_egraph": done.not_on_egraph, "structural": dict(done.structural), "folds_refused": done.refused}
