"""The egraft side of the Grappler comparison: GraphDef in, pipeline, GraphDef out.

The graph goes GraphDef -> tfg -> tf_executor (with the model's fetches as the
graph's results and in ``tf.entry_function``, so dead-code elimination knows what must
stay and the export gives the fetched tensors their names back), the pipeline runs on
that module, and the result goes back to a GraphDef. ``form="tfg"`` runs the pipeline
on the tfg module instead (no fetches: nothing is dead there). ``form="grappler"`` runs
``pipeline`` (``tf-grappler``) on the tfg module as egraft-opt does with
``--tf-input-arrays``/``--tf-output-arrays``: the pass converts to tf_executor with the
feeds and fetches and back itself.

Two ways to time ``-tf-grappler``, each in a process of its own without TensorFlow (its
hundreds of thousands of Python objects would slow the cyclic GC egraft's passes run under):

* :func:`time_in_process` starts ``python egraft_side.py PB ...``, which reads the ``.pb``
  bytes, imports, runs the pass, exports and serializes, once to warm up (lazy imports,
  rule compilation) and then ``repeat`` times, and prints wall and CPU seconds as JSON;
* :func:`time_egraft_opt` runs the whole ``egraft-opt model.pb ... -tf-grappler -o out.pb``
  process (interpreter start, imports, reading, writing) and takes its wall and CPU
  seconds from the OS; its output is the graph the benchmark runs in TensorFlow.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

import attrs

from egraft.ir.graphdef import GraphDef, load_graphdef
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
    cpu_seconds: float = 0.0
    pipeline_cpu_seconds: float = 0.0


def grappler_pipeline(inputs: Sequence[str], fetches: Sequence[str], options: str = "") -> str:
    """``tf-grappler{...}`` with the feeds and fetches egraft-opt's --tf-* flags would give it."""
    given = [f"inputs={','.join(inputs)}"] if inputs else []
    given += [f"outputs={','.join(fetches)}", *options.split()]
    return f"tf-grappler{{{' '.join(given)}}}"


def optimize(graph: GraphDef, fetches: Sequence[str], pipeline: str, form: str = "tf_executor",
             inputs: Sequence[str] = ()) -> EgraftRun:
    """Run ``pipeline`` (e.g. ``"cse,dce"``) on ``graph``; the optimized GraphDef and times.
    With ``form="grappler"``, ``pipeline`` is ``tf-grappler``'s options (may be empty)."""
    if form == "grappler":
        pipeline = grappler_pipeline(inputs, fetches, pipeline.removeprefix("tf-grappler"))
    manager = PassManager(parse_pipeline(f"builtin.module({pipeline})"))
    start, cpu = time.perf_counter(), time.process_time()
    module = import_graphdef(graph, "<graph>")
    if form == "tf_executor":
        module = tfg_to_executor(module, fetches)
    passes_start, passes_cpu = time.perf_counter(), time.process_time()
    manager.run(module)
    passes_end, passes_cpu_end = time.perf_counter(), time.process_time()
    if form == "tf_executor":
        module = executor_to_tfg(module)
    out = export_graphdef(module)
    return EgraftRun(out, time.perf_counter() - start, passes_end - passes_start,
                     time.process_time() - cpu, passes_cpu_end - passes_cpu)


def _child_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_timed(argv: list[str], timeout: float) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``argv``; (process, wall seconds, CPU seconds of that child). Children run one at a
    time here, so the growth of RUSAGE_CHILDREN is this one's."""
    cpu, start = _child_seconds(), time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    return proc, time.perf_counter() - start, _child_seconds() - cpu


def _failure(proc: subprocess.CompletedProcess) -> str:
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return f"exit {proc.returncode}: " + (lines[-1] if lines else "no output")


def time_in_process(pb: Path, inputs: Sequence[str], fetches: Sequence[str], options: str, repeat: int,
                    timeout: float) -> dict:
    """Import + tf-grappler + export, bytes to bytes, in a fresh process: medians of ``repeat``
    runs after one warm-up, wall and CPU, for the whole and for the pass alone; or ``error``."""
    return _json_child([str(pb), "--inputs", ",".join(inputs), "--outputs", ",".join(fetches), "--options",
                        options, "--repeat", str(repeat)], timeout)


def _json_child(args: list[str], timeout: float) -> dict:
    """``python egraft_side.py ARGS``: the JSON line it prints last, or ``{"error": ...}``."""
    try:
        proc, _, _ = _run_timed([sys.executable, __file__, *args], timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode:
        return {"error": _failure(proc)}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def egraft_opt() -> str:
    """The egraft-opt script of the running interpreter's environment."""
    script = Path(sys.executable).with_name("egraft-opt")
    return str(script) if script.exists() else "egraft-opt"


REPORT_LINE = re.compile(r"remark: (?P<family>[^:]+): Graph size after: (?P<nodes>\d+) nodes \((?P<change>[+-]\d+)\), "
                         r"time = (?P<ms>\d+)ms")


def family_report(stderr: str) -> list[dict]:
    """The pass's report lines (``report=true``): family, nodes after, change, milliseconds."""
    return [{"family": m["family"], "nodes": int(m["nodes"]), "change": int(m["change"]), "ms": int(m["ms"])}
            for m in map(REPORT_LINE.search, stderr.splitlines()) if m]


def time_egraft_opt(pb: Path, inputs: Sequence[str], fetches: Sequence[str], options: str, out: Path,
                    timeout: float) -> dict:
    """``egraft-opt PB --tf-input-arrays=.. --tf-output-arrays=.. -tf-grappler="report=true .." -o OUT``:
    wall and CPU seconds of the whole process and the pass's report lines; or ``error``.
    ``report=true`` only prints what the pass measures anyway (the node count after each family)."""
    argv = [egraft_opt(), str(pb), f"-tf-grappler={' '.join(['report=true', *options.split()])}", "-o", str(out)]
    if fetches:  # none for a SavedModel: its signature gives the feeds and fetches
        argv.insert(2, f"--tf-output-arrays={','.join(fetches)}")
    if inputs:
        argv.insert(2, f"--tf-input-arrays={','.join(inputs)}")
    try:
        proc, wall, cpu = _run_timed(argv, timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s", "argv": argv}
    if proc.returncode:
        return {"error": _failure(proc), "argv": argv}
    return {"wall_s": wall, "cpu_s": cpu, "argv": argv, "report": family_report(proc.stderr)}


def predictor_available() -> bool:
    """Whether H3's cost model (``egraft.ir.semantics.tf_cost.predict_ms``) is installed."""
    import importlib.util

    try:
        return importlib.util.find_spec("egraft.ir.semantics.tf_cost") is not None
    except ModuleNotFoundError:
        return False


def predict(paths: dict[str, Path], timeout: float) -> dict:
    """``tf_cost.predict_ms`` of each graph (a .pb, or a SavedModel directory: its serving
    MetaGraphDef's graph), in one process without TensorFlow: name -> predicted ms, or
    ``{"error": ...}`` for the whole or ``{name: "error: ..."}`` for one graph."""
    return _json_child(["--predict", *(f"{name}={path}" for name, path in paths.items())], timeout)


def _predict_child(argv: list[str]) -> int:
    """The process :func:`predict` starts: ``NAME=PATH ...``; prints one JSON line."""
    from egraft.ir.semantics.tf_cost import predict_ms

    out: dict = {}
    for item in argv:
        name, _, path = item.partition("=")
        try:
            if Path(path).is_dir():
                from egraft.ir.graphdef.savedmodel import load_saved_model, select_meta_graph

                saved, source = load_saved_model(path)
                graph = saved.meta_graphs[select_meta_graph(saved, ["serve"], str(source))].graph_def
            else:
                graph = load_graphdef(path)
            out[name] = predict_ms(import_graphdef(graph, path))
        except Exception as err:  # noqa: BLE001 - a failed prediction is a result of the benchmark
            out[name] = f"error: {type(err).__name__}: {err}"[:300]
    print(json.dumps(out))
    return 0


def _child(argv: list[str]) -> int:
    """The process :func:`time_in_process` starts; prints one JSON line."""
    ap = argparse.ArgumentParser()
    ap.add_argument("pb", type=Path)
    ap.add_argument("--inputs", default="")
    ap.add_argument("--outputs", required=True)
    ap.add_argument("--options", default="")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    inputs, fetches = [i for i in args.inputs.split(",") if i], args.outputs.split(",")
    runs = []
    for _ in range(1 + args.repeat):  # the first warms up
        start, cpu = time.perf_counter(), time.process_time()
        run = optimize(load_graphdef(args.pb), fetches, args.options, "grappler", inputs)
        data = run.graph.SerializeToString()
        runs.append({"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu,
                     "pass_wall_s": run.pipeline_seconds, "pass_cpu_s": run.pipeline_cpu_seconds})
    timed = runs[1:]
    result = {key: statistics.median(r[key] for r in timed) for key in timed[0]}
    nodes = len(run.graph.node) + sum(len(f.node_def) for f in run.graph.library.function)  # bodies too
    print(json.dumps({**result, "first": runs[0], "runs": len(timed), "nodes": nodes, "bytes": len(data)}))
    return 0


if __name__ == "__main__":
    sys.exit(_predict_child(sys.argv[2:]) if sys.argv[1:2] == ["--predict"] else _child(sys.argv[1:]))
