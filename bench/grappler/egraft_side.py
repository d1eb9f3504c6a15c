"""The egraft side of the Grappler comparison: GraphDef in, pipeline, GraphDef out.

The graph goes GraphDef -> tfg -> tf_executor (with the model's fetches as the
graph's results and in ``tf.entry_function``, so dead-code elimination knows what must
stay and the export gives the fetched tensors their names back), the pipeline runs on
that module, and the result goes back to a GraphDef. ``form="tfg"`` runs the pipeline
on the tfg module instead (no fetches: nothing is dead there). ``form="grappler"`` runs
``pipeline`` (``tf-grappler``) on the tfg module as egraft-opt does with
``--tf-output-arrays``: the pass converts to tf_executor with the fetches and back itself.
"""

from __future__ import annotations

import time
from typing import Sequence

import attrs

from egraft.ir.graphdef import GraphDef
from egraft.ir.graphdef.export_graphdef import export_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.passes.tf.executor_to_tfg import executor_to_tfg
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.tf.tfg_to_executor import tfg_to_executor


@attrs.frozen
class EgraftRun:
    graph: GraphDef
    seconds: float  # import + convert + pipeline + convert back + export
    pipeline_seconds: float


def optimize(graph: GraphDef, fetches: Sequence[str], pipeline: str, form: str = "tf_executor") -> EgraftRun:
    """Run ``pipeline`` (e.g. ``"cse,dce"``) on ``graph``; the optimized GraphDef and times."""
    if form == "grappler":
        pipeline = f"{pipeline}{{outputs={','.join(fetches)}}}"
    manager = PassManager(parse_pipeline(f"builtin.module({pipeline})"))
    start = time.perf_counter()
    module = import_graphdef(graph, "<graph>")
    if form == "tf_executor":
        module = tfg_to_executor(module, fetches)
    passes_start = time.perf_counter()
    manager.run(module)
    passes_end = time.perf_counter()
    if form == "tf_executor":
        module = executor_to_tfg(module)
    out = export_graphdef(module)
    return EgraftRun(out, time.perf_counter() - start, passes_end - passes_start)
