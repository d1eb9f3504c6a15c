"""One model through `-tf-grappler` and Grappler: what each leaves, costs, computes and runs at.

:func:`measure` is the whole comparison for one :class:`models.Model`:

1. egraft, each in a process of its own (:mod:`egraft_side`): the whole ``egraft-opt``
   process, whose output is egraft's graph; then import + pass + export in one process
   (medians after a warm-up run);
2. Grappler's default meta-optimizer (:mod:`tf_side`, nodes placed on CPU), medians of
   its ``OptimizeGraph`` calls after a warm-up call;
3. the original and both optimized graphs in TensorFlow sessions with every graph
   optimization off (what runs is the graph handed in): every fetch, and the logits under
   a softmax fetch, on 3 seeded feeds (rtol 1e-4, atol 1e-5; the last leaves the feeds the
   sidecar marks optional unfed, as cflow_v1's ``n_iters``); then the inference time of
   each (median of ``runs`` interleaved runs after a warm-up, same session options);
4. node counts and op histograms, function bodies included (``fn:Op`` in the histograms,
   as make_graphs.py counts them);
5. when H3's cost model is installed, its predicted time of the three graphs
   (``tf_cost.predict_ms``, serial sum over the ops, function bodies included).

A SavedModel (``model.format == "savedmodel"``) goes through the same steps as a directory:
``egraft-opt DIR -tf-grappler -o OUT_DIR`` (feeds and fetches from its signature; the
in-process timing is not run), Grappler on its MetaGraphDef, the three directories run in
Sessions with their variables restored; and each optimized directory is also loaded with
``tf.saved_model.load`` and its signature called (TF2's path, which the object graph and the
library's function names must survive), compared with the original's.
"""

from __future__ import annotations

import collections
import os
import shutil
import time
from pathlib import Path
import numpy as np

import egraft_side
import tf_side
from models import Model

SEEDS = (0, 1, 2)


def _graph_of(pb: Path):
    return tf_side.graph_pb2.GraphDef.FromString(pb.read_bytes())


def _error_text(message: str) -> str:
    """TF's error without its 'Graph execution error:' heading and '[[{{node ..}}]]' trailer."""
    lines = [line.strip() for line in message.splitlines()]
    kept = [line for line in lines if line and line != "Graph execution error:" and not line.startswith("[[")]
    return (kept[-1] if kept else message.strip())[:300]


def _tolerance_used(expected, actual) -> float:
    """max |actual - expected| / (atol + rtol |actual|), as np.allclose measures: above 1 fails."""
    a, b = np.asarray(expected), np.asarray(actual)
    if a.shape != b.shape or a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        return 0.0
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(np.nanmax(np.abs(b - a) / (tf_side.ATOL + tf_side.RTOL * np.abs(b)), initial=0.0))


def equivalence(original, runners: dict, candidates: dict, feeds: list[dict], fetches: list[str]) -> dict:
    """Per candidate: ok, the largest difference, and whether logits were compared.
    ``runners`` hold a :class:`tf_side.Runner` for ``"original"`` and for each candidate.

    The logits are the input of the Softmax each graph's fetch reads (Grappler renames
    or fuses the node producing them, so each graph is searched on its own)."""
    tensors = [f if ":" in f else f + ":0" for f in fetches]
    base = runners["original"]
    report = {}
    for name, graph in candidates.items():
        runner = runners[name]
        missing = [t for t in tensors if not runner.has(t)]
        if missing:  # a pass lost an output: the graph no longer answers to its fetch names
            report[name] = {"ok": False, "max_abs": float("inf"), "logits": [], "missing": missing}
            continue
        pairs = [(a, b) for a, b in ((tf_side.logits_of(original, f), tf_side.logits_of(graph, f))
                                     for f in fetches) if a is not None and b is not None]
        ok, worst, used = True, 0.0, 0.0
        for seed in SEEDS:  # the last seed leaves optional feeds out: their defaults must still be there
            feed = tf_side.random_feeds(feeds, seed, omit_optional=seed == SEEDS[-1])
            expected = base.run(tensors + [a for a, _ in pairs], feed)
            try:
                actual = runner.run(tensors + [b for _, b in pairs], feed)
            except tf_side.tf.errors.OpError as err:  # TF rejects the graph it was given: a finding
                report[name] = {"ok": False, "max_abs": float("inf"), "logits": [], "error": _error_text(err.message)}
                break
            for a, b in zip(expected, actual):
                same, diff = tf_side.agree(a, b)
                ok &= same
                worst = max(worst, diff)
                used = max(used, _tolerance_used(a, b))
        else:
            report[name] = {"ok": ok, "max_abs": worst, "tolerance_used": used,
                            "logits": [f"{a} ~ {b}" for a, b in pairs]}
    return report


def check_equivalence(original, candidates: dict, feeds: list[dict], fetches: list[str]) -> dict:
    """:func:`equivalence` with sessions of its own."""
    runners = {name: tf_side.Runner(g) for name, g in {"original": original, **candidates}.items()}
    try:
        return equivalence(original, runners, candidates, feeds, fetches)
    finally:
        for runner in runners.values():
            runner.close()


def histogram(graph) -> collections.Counter:
    """Ops of the graph, and of its library functions' bodies as ``fn:Op``."""
    counts = collections.Counter(node.op for node in graph.node)
    counts.update("fn:" + node.op for f in graph.library.function for node in f.node_def)
    return counts


class _Signature:
    """A loaded SavedModel signature in :func:`tf_side.time_inference`'s runner shape."""

    def __init__(self, fn, inputs: dict) -> None:
        self.fn, self.inputs = fn, inputs

    def run(self, tensors, feed) -> dict:
        return self.fn(**self.inputs)


def tf2_load_check(original: Path, candidates: dict[str, Path], signature: str, feeds: list[dict],
                   runs: int = 50, seconds: float = 0.0) -> tuple[dict, dict]:
    """Each candidate SavedModel directory loaded by ``tf.saved_model.load``, its ``signature``
    called on the seeded feeds and compared with the original's outputs: ok, max difference,
    or the error TensorFlow gave. Then the deployed path's inference time: the signatures that
    loaded, called eagerly in turns as :func:`tf_side.time_inference` does, with TensorFlow's
    defaults (its runtime Grappler optimizes each function when it first runs it, as it does
    for anyone serving the directory), paired against Grappler's when it loaded, else the
    original's."""
    tf = tf_side.tf
    loaded = tf.saved_model.load(str(original)).signatures[signature]
    keys = {feed["name"]: feed.get("key", feed["name"]) for feed in feeds}
    inputs = [{keys[name.partition(":")[0]]: tf.constant(v) for name, v in tf_side.random_feeds(feeds, seed).items()}
              for seed in SEEDS]
    expected = [{k: v.numpy() for k, v in loaded(**x).items()} for x in inputs]
    report, signatures = {}, {"original": _Signature(loaded, inputs[0])}
    for name, path in candidates.items():
        try:
            fn = tf.saved_model.load(str(path)).signatures[signature]
            actual = [{k: v.numpy() for k, v in fn(**x).items()} for x in inputs]
        except Exception as err:  # noqa: BLE001 - TF refusing the directory is the finding
            report[name] = {"ok": False, "error": _error_text(str(err))}
            continue
        pairs = [tf_side.agree(e[k], a.get(k)) if k in a else (False, float("inf"))
                 for e, a in zip(expected, actual) for k in e]
        report[name] = {"ok": all(ok for ok, _ in pairs), "max_abs": max((d for _, d in pairs), default=0.0)}
        signatures[name] = _Signature(fn, inputs[0])
    timing = tf_side.time_inference(signatures, [], {}, runs, seconds=seconds,
                                    baseline="grappler" if "grappler" in signatures else "original")
    return report, timing


def histogram_diff(before: collections.Counter, after: collections.Counter) -> dict[str, int]:
    """Op -> change in count (negative: removed), largest changes first."""
    diff = {op: after[op] - before[op] for op in set(before) | set(after) if after[op] != before[op]}
    return dict(sorted(diff.items(), key=lambda kv: (-abs(kv[1]), kv[0])))


def measure(model: Model, out_dir: Path, options: str = "", repeat: int = 3, runs: int = 50,
            timeout: float = 900, inference_seconds: float = 0.0) -> dict:
    """The comparison for one model (see the module docstring), as a JSON-able dict."""
    started = time.perf_counter()
    inputs, fetches = [f["name"] for f in model.feeds], list(model.fetches)
    saved = model.format == "savedmodel"
    result: dict = {"model": model.name, "source": model.source, "format": model.format,
                    "load_before": os.getloadavg()}
    out_dir.mkdir(parents=True, exist_ok=True)
    ours_pb = out_dir / f"{model.name}.egraft{'' if saved else '.pb'}"
    theirs_pb = out_dir / f"{model.name}.grappler{'' if saved else '.pb'}"
    shutil.rmtree(ours_pb) if ours_pb.is_dir() else ours_pb.unlink(missing_ok=True)
    if saved:  # the signature gives egraft-opt the feeds and fetches
        result["egraft_opt"] = egraft_side.time_egraft_opt(model.pb, [], [], options, ours_pb, timeout)
        result["egraft"] = {"skipped": "SavedModel: only the egraft-opt process is timed"}
        original = tf_side.serving_metagraph(tf_side.read_savedmodel(model.pb)).graph_def
        theirs, result["grappler"] = tf_side.grappler_savedmodel(model.pb, fetches, theirs_pb, repeat)
    else:
        result["egraft_opt"] = egraft_side.time_egraft_opt(model.pb, inputs, fetches, options, ours_pb, timeout)
        result["egraft"] = egraft_side.time_in_process(model.pb, inputs, fetches, options, repeat, timeout)
        original = _graph_of(model.pb)
        theirs, result["grappler"] = tf_side.grappler_timed(original, model.feeds, fetches, repeat)
        theirs_pb.write_bytes(theirs.SerializeToString())
    graphs = {"original": original, "grappler": theirs}
    paths = {"original": model.pb, "grappler": theirs_pb}
    if "error" not in result["egraft_opt"]:
        graphs["egraft"] = (tf_side.serving_metagraph(tf_side.read_savedmodel(ours_pb)).graph_def if saved
                            else _graph_of(ours_pb))
        paths["egraft"] = ours_pb
    counts = {name: histogram(g) for name, g in graphs.items()}
    result["node_counts"] = {name: tf_side.node_counts(g) for name, g in graphs.items()}
    result["nodes"] = {name: c["total"] for name, c in result["node_counts"].items()}
    if egraft_side.predictor_available():
        result["predicted_ms"] = egraft_side.predict(paths, timeout)
    result["histogram"] = {name: dict(c.most_common()) for name, c in counts.items()}
    result["histogram_diff"] = {name: histogram_diff(counts["original"], counts[name]) for name in graphs
                                if name != "original"}
    if "egraft" in counts:  # what egraft's graph has that Grappler's has not, and the reverse
        result["histogram_diff"]["egraft_vs_grappler"] = histogram_diff(counts["grappler"], counts["egraft"])

    runners, rejected = {}, {}
    for name, graph in graphs.items():
        try:
            runners[name] = tf_side.Runner(graph, paths[name] if saved else None)
        except (ValueError, tf_side.tf.errors.OpError) as err:  # TF will not import the graph: a finding
            rejected[name] = {"ok": False, "max_abs": float("inf"), "logits": [], "error": f"TF import: {err}"[:300]}
    try:
        candidates = {name: g for name, g in graphs.items() if name in runners and name != "original"}
        result["equivalence"] = {**equivalence(original, runners, candidates, model.feeds, fetches), **rejected}
        runnable = {name: r for name, r in runners.items()
                    if name == "original" or not {"missing", "error"} & set(result["equivalence"][name])}
        tensors = [f if ":" in f else f + ":0" for f in fetches]
        result["inference"] = tf_side.time_inference(runnable, tensors, tf_side.random_feeds(model.feeds, 0), runs,
                                                     baseline="grappler" if "grappler" in runnable else "original",
                                                     seconds=inference_seconds)
        result["inference_runs"] = result["inference"]["original"]["runs"]
    finally:
        for runner in runners.values():
            runner.close()
    if saved:
        result["tf2_load"], result["tf2_inference"] = tf2_load_check(
            model.pb, {k: v for k, v in paths.items() if k != "original"}, model.signature, model.feeds, runs,
            inference_seconds)
    result["load_after"] = os.getloadavg()
    result["bench_s"] = time.perf_counter() - started
    return result
