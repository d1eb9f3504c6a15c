"""One model through egraft's paths, and TensorFlow's verdict on each result.

A path is GraphDef -> tfg -> tf_executor -> a pass pipeline -> tfg -> GraphDef with no
fetch flags (the e-graph passes' reports, e.g. which budget stopped them, are kept), so the conversion fetches every node nothing consumes (the model's
outputs) and the export gives them their names back.  The paths (:data:`PATHS`): the
identity round trip through the e-graph (``eqsat{rules=none}``), ``canonicalize`` and
island coarsening.  TensorFlow then imports each result (it must accept it) and runs
it next to the original on seeded random feeds (:mod:`tf_side` of the Grappler bench:
a v1 Session with every graph optimization off); the fetched outputs, and the logits
under a softmax, must agree to rtol 1e-4 (atol 1e-5).

Used by ``bench/keras_apps/run.py`` (all models) and ``tests/tfmodels_keras`` (a few).
"""

from __future__ import annotations

import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grappler"))

PATHS: dict[str, str] = {
    "identity": "builtin.module(func.func(eqsat{rules=none report=-}))",
    "canonicalize": "builtin.module(func.func(canonicalize{report=true}))",
    "coarsening": "builtin.module(func.func(tf-executor-island-coarsening))",
}
SEEDS = (0, 1, 2)


@attrs.define
class PathResult:
    """One path on one model: the GraphDef it wrote (None if it failed) and why not."""

    path: str
    nodes_after: int = 0
    seconds: float = 0.0  # wall, import to export
    cpu_s: float = 0.0  # CPU, import to export
    pipeline_cpu_s: float = 0.0
    error: str | None = None  # egraft failed: the exception's type and message
    tf_error: str | None = None  # TensorFlow rejected or could not run the output
    ok: bool = False  # TensorFlow ran it and every compared tensor agreed
    max_abs: float = float("nan")
    max_rel: float = float("nan")  # max |a - b| / max |a|, per tensor
    compared: list[str] = attrs.field(factory=list)
    remarks: list[str] = attrs.field(factory=list)  # what the e-graph passes report (budget stops, ...)
    input_sensitive: bool = False  # the original's outputs change with the feed: the check is not vacuous

    @property
    def status(self) -> str:
        if self.error:
            return "egraft error"
        if self.tf_error:
            return "TF error"
        return "ok" if self.ok else "MISMATCH"


def _last_frame(err: BaseException) -> str:
    """``Type: message (file:line in function)`` of the innermost frame, no traceback."""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    message = str(err).strip().splitlines()
    return f"{type(err).__name__}: {message[0] if message else ''}{where}"


def run_path(graph: Any, name: str, pipeline: str) -> tuple[PathResult, Any]:
    """``graph`` (a GraphDef) through ``pipeline`` on its tf_executor form; the result
    and the GraphDef written (None on failure)."""
    from egraft.ir.graphdef.export_graphdef import export_graphdef
    from egraft.ir.graphdef.import_graphdef import import_graphdef
    from egraft.passes.tf.executor_to_tfg import executor_to_tfg
    from egraft.passes.manager.pass_manager import PassManager
    from egraft.passes.manager.pipeline import parse_pipeline
    from egraft.passes.tf.tfg_to_executor import tfg_to_executor

    result = PathResult(name)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        module = tfg_to_executor(import_graphdef(graph, name))
        start = time.process_time()
        PassManager(parse_pipeline(pipeline), emit=lambda d: result.remarks.append(d.message)).run(module)
        result.pipeline_cpu_s = time.process_time() - start
        out = export_graphdef(executor_to_tfg(module))
    except Exception as err:  # noqa: BLE001 - the table reports every failure, the run goes on
        result.error = _last_frame(err)
        out = None
    result.seconds, result.cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    result.nodes_after = len(out.node) if out is not None else 0
    return result, out


def _differences(expected, actual) -> tuple[bool, float, float]:
    import numpy as np
    import tf_side

    same, max_abs = tf_side.agree(expected, actual)
    scale = float(np.max(np.abs(expected), initial=0.0)) if np.asarray(expected).dtype.kind in "fc" else 0.0
    return same, max_abs, (max_abs / scale if scale else max_abs)


def compare_in_tensorflow(original: Any, outputs: dict[str, Path], meta: dict,
                          results: dict[str, PathResult]) -> None:
    """Run ``original`` and each output GraphDef file on :data:`SEEDS` and fill in the
    results' TensorFlow verdicts.  The original runs once per seed; each output is
    loaded, run and released before the next (a big model is in memory twice at most)."""
    import tf_side

    from egraft.ir.graphdef import load_graphdef

    fetches = [f if ":" in f else f + ":0" for f in meta["outputs"]]
    logits = {f: tf_side.logits_of(original, f) for f in meta["outputs"]}
    feeds = [tf_side.random_feeds(meta["inputs"], seed) for seed in SEEDS]
    base = tf_side.Runner(original)
    try:
        wanted = fetches + [t for t in logits.values() if t]
        expected = [base.run(wanted, feed) for feed in feeds]
    finally:
        base.close()
    sensitive = any(not tf_side.agree(a, b)[0] for a, b in zip(expected[0], expected[1]))
    for name, path in outputs.items():
        result = results[name]
        result.input_sensitive = sensitive
        try:
            graph = load_graphdef(path)
            runner = tf_side.Runner(graph)
        except Exception as err:  # noqa: BLE001 - TensorFlow refusing the GraphDef is a finding
            result.tf_error = f"import: {_last_frame(err)}"
            continue
        try:
            theirs = [tf_side.logits_of(graph, f) if logits[f] else None for f in meta["outputs"]]
            pairs = [(i, t) for i, t in enumerate(fetches)]
            pairs += [(len(fetches) + k, t) for k, t in enumerate(x for x in theirs if x)]
            if len([t for t in theirs if t]) != len([t for t in logits.values() if t]):
                result.tf_error = "the logits (a softmax's input) of an output are gone"
                continue
            missing = [t for _, t in pairs if not runner.has(t)]
            if missing:
                result.tf_error = f"missing tensors {missing}"
                continue
            result.ok, result.max_abs, result.max_rel = True, 0.0, 0.0
            logit_slots = set(range(len(fetches), len(wanted)))
            for feed, exp in zip(feeds, expected):
                got = runner.run([t for _, t in pairs], feed)
                for (slot, _), a, b in zip(pairs, exp, got):
                    same, max_abs, max_rel = _differences(a, b)
                    result.ok &= same
                    if slot in logit_slots or not logit_slots:  # report the logits' differences when there are logits
                        result.max_abs = max(result.max_abs, max_abs)
                        result.max_rel = max(result.max_rel, max_rel)
            result.compared = [t for _, t in pairs]
        except Exception as err:  # noqa: BLE001
            result.tf_error = f"run: {_last_frame(err)}"
        finally:
            runner.close()


def check_model(pb: Path, meta: dict, paths: dict[str, str] = PATHS) -> list[PathResult]:
    """Every path on the model in ``pb``, each checked in TensorFlow.  The outputs wait
    in temporary files, so a big model is not held once per path."""
    from egraft.ir.graphdef import load_graphdef, save_graphdef

    graph = load_graphdef(pb)
    results: dict[str, PathResult] = {}
    with tempfile.TemporaryDirectory(prefix="egraft-keras-") as tmp:
        outputs: dict[str, Path] = {}
        for name, pipeline in paths.items():
            results[name], out = run_path(graph, name, pipeline)
            if out is not None:
                outputs[name] = Path(tmp) / f"{name}.pb"
                save_graphdef(out, outputs[name])
            del out
        compare_in_tensorflow(graph, outputs, meta, results)
    return list(results.values())
