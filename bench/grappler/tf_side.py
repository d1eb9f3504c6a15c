"""The TensorFlow side: Grappler's default meta-optimizer, and running graphs on feeds.

Grappler is driven as TensorFlow's own tooling drives it: ``tf_optimizer.OptimizeGraph``
on a MetaGraphDef whose ``train_op`` collection lists the fetches (nodes Grappler must
keep) and whose serving signature declares the feeds (so fed
``PlaceholderWithDefault`` nodes survive), with every node placed on the CPU first as
a Session's placer would (the remapper only fuses placed nodes).

Graphs run in a v1 Session with Grappler and the classic graph optimizer switched
off, so what runs is the graph handed in. A function call node (``PartitionedCall``,
``StatefulPartitionedCall``) carries a ``config_proto`` attribute with which TensorFlow
runs Grappler on the callee's body when it instantiates it, whatever the session says:
:func:`no_runtime_grappler` sets it to a config with the meta-optimizer off in every
graph (main and library) before it runs, so a function body also runs as handed in (the
session's own lowering of ``If``/``While`` and inlining of calls, TensorFlow's graph
construction, still happens, alike for all three graphs).

A SavedModel (:func:`read_savedmodel`) runs the same way: its MetaGraphDef's graph in a
Session, the variables restored by the ``saver_def``'s restore op from ``variables/``,
the signature's tensors fed and fetched. Grappler optimizes it as TensorFlow's tooling
does, ``OptimizeGraph`` on the MetaGraphDef (:func:`grappler_savedmodel`), whose output
graph replaces the graph in a copy of the directory. Softmax outputs hide small changes under
atol 1e-5 (1000 classes around 1e-3), so the softmax's input (the logits) is
compared as well, whenever each graph still has that tensor.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Sequence

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
from paired_stats import median_interval  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2, saved_model_pb2  # noqa: E402
from tensorflow.python.grappler import cluster as gcluster  # noqa: E402
from tensorflow.python.grappler import tf_optimizer  # noqa: E402
from egraft.ir.semantics.tf_cost_calibrate import plain_session  # noqa: E402

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
RTOL, ATOL = 1e-4, 1e-5


def to_tf(graph) -> graph_pb2.GraphDef:
    return graph_pb2.GraphDef.FromString(graph.SerializeToString())


def node_counts(graph) -> dict[str, int]:
    """Nodes of the graph, of all its library functions' bodies, their sum, and the functions."""
    body = sum(len(f.node_def) for f in graph.library.function)
    return {"main": len(graph.node), "functions": body, "total": len(graph.node) + body,
            "library": len(graph.library.function)}


_NO_GRAPPLER = None


def no_runtime_grappler(graph: graph_pb2.GraphDef) -> graph_pb2.GraphDef:
    """A copy of ``graph`` whose function call nodes (main graph and function bodies) carry a
    ``config_proto`` with the meta-optimizer off: TensorFlow then instantiates the callees as
    they are instead of running Grappler on them first."""
    global _NO_GRAPPLER
    if _NO_GRAPPLER is None:
        config = config_pb2.ConfigProto()
        config.graph_options.rewrite_options.disable_meta_optimizer = True
        _NO_GRAPPLER = config.SerializeToString()
    out = graph_pb2.GraphDef()
    out.CopyFrom(graph)
    for node in [*out.node, *(n for f in out.library.function for n in f.node_def)]:
        if "config_proto" in node.attr:
            node.attr["config_proto"].s = _NO_GRAPPLER
    return out


def read_savedmodel(path) -> saved_model_pb2.SavedModel:
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        return saved_model_pb2.SavedModel.FromString(f.read())


def serving_metagraph(saved: saved_model_pb2.SavedModel, tags: Sequence[str] = ("serve",)):
    for meta in saved.meta_graphs:
        if set(meta.meta_info_def.tags) == set(tags):
            return meta
    raise ValueError(f"no MetaGraphDef tagged {sorted(tags)}")


def grappler_savedmodel(path, fetches: Sequence[str], out_dir, repeat: int = 3):
    """Grappler's default optimizers on a SavedModel's serving MetaGraphDef (its signatures
    and saver kept, nodes placed on CPU, ``fetches`` in ``train_op``): (the optimized
    GraphDef, timings as :func:`grappler_timed`), and a copy of the directory at ``out_dir``
    whose saved_model.pb has Grappler's graph."""
    import shutil

    saved = read_savedmodel(path)
    meta = meta_graph_pb2.MetaGraphDef()
    meta.CopyFrom(serving_metagraph(saved))
    for node in meta.graph_def.node:
        node.device = CPU
    meta.collection_def["train_op"].node_list.value.extend(fetches)
    out, timing = _optimize_timed(meta, repeat)
    shutil.rmtree(out_dir, ignore_errors=True)
    shutil.copytree(path, out_dir)
    serving_metagraph(saved).graph_def.CopyFrom(out)
    with open(os.path.join(out_dir, "saved_model.pb"), "wb") as f:
        f.write(saved.SerializeToString())
    return out, timing


def _metagraph(graph: graph_pb2.GraphDef, feeds: Sequence[dict], fetches: Sequence[str]):
    meta = meta_graph_pb2.MetaGraphDef()
    meta.graph_def.CopyFrom(graph)
    for node in meta.graph_def.node:
        node.device = CPU
    meta.collection_def["train_op"].node_list.value.extend(fetches)
    signature = meta.signature_def["serving_default"]
    for feed in feeds:
        info = signature.inputs[feed["name"]]
        info.name = feed["name"] + ":0"
        info.dtype = tf.as_dtype(feed["dtype"]).as_datatype_enum
        for size in feed["shape"]:
            info.tensor_shape.dim.add().size = -1 if size is None else size
    for fetch in fetches:
        signature.outputs[fetch].name = fetch if ":" in fetch else fetch + ":0"
    return meta


def grappler(graph, feeds: Sequence[dict], fetches: Sequence[str], repeat: int = 3):
    """Grappler's default optimizers: (optimized GraphDef, median seconds, warm-up seconds)."""
    out, timing = grappler_timed(graph, feeds, fetches, repeat)
    return out, timing["wall_s"], timing["warmup_wall_s"]


def grappler_timed(graph, feeds: Sequence[dict], fetches: Sequence[str], repeat: int = 3):
    """Grappler's default optimizers: the optimized GraphDef and the medians of ``repeat``
    ``OptimizeGraph`` calls after a warm-up call, wall and CPU (``process_time``: the
    calling thread and Grappler's own threads), with the warm-up's."""
    return _optimize_timed(_metagraph(to_tf(graph), feeds, fetches), repeat)


def _optimize_timed(meta, repeat: int):
    config = config_pb2.ConfigProto()
    cluster = gcluster.Cluster()
    calls, out = [], None
    for i in range(1 + repeat):
        start, cpu = time.perf_counter(), time.process_time()
        out = tf_optimizer.OptimizeGraph(config, meta, cluster=cluster, graph_id=f"run{i}".encode())
        calls.append((time.perf_counter() - start, time.process_time() - cpu))
    timed = calls[1:]
    return out, {"wall_s": statistics.median(w for w, _ in timed), "cpu_s": statistics.median(c for _, c in timed),
                 "warmup_wall_s": calls[0][0], "warmup_cpu_s": calls[0][1], "runs": len(timed)}


def random_feeds(feeds: Sequence[dict], seed: int, omit_optional: bool = False) -> dict[str, np.ndarray]:
    """Seeded inputs: floats ~ N(0, 1), integers in the sidecar's [low, high), bools fair.
    ``omit_optional`` leaves out the feeds the sidecar marks optional (a PlaceholderWithDefault
    then takes its default)."""
    out = {}
    for k, feed in enumerate(feeds):
        if omit_optional and feed.get("optional"):
            continue
        rng = np.random.default_rng(seed * 1000 + k)
        shape = [1 if d is None or d < 0 else d for d in feed["shape"]]
        dtype = np.dtype(tf.as_dtype(feed["dtype"]).as_numpy_dtype)
        if dtype.kind == "f":
            value = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            value = rng.integers(feed.get("low", 0), feed.get("high", 10), size=shape).astype(dtype)
        else:
            value = rng.random(shape) < 0.5
        out[feed["name"] + ":0"] = np.asarray(value)
    return out


def logits_of(graph, fetch: str) -> str | None:
    """The input of the Softmax a fetch is (through Identity nodes), if any."""
    nodes = {n.name: n for n in graph.node}
    node = nodes.get(fetch.partition(":")[0])
    while node is not None and node.op == "Identity":
        node = nodes.get(node.input[0].partition(":")[0]) if node.input else None
    if node is None or node.op != "Softmax" or not node.input:
        return None
    name = node.input[0]
    return name if ":" in name else name + ":0"


class Runner:
    """One graph imported once into its own Session with optimizations off (function bodies
    too: :func:`no_runtime_grappler`). With ``savedmodel`` (its directory), ``graph`` is its
    MetaGraphDef's graph and the variables are restored from the directory first."""

    def __init__(self, graph, savedmodel=None) -> None:
        self.session = plain_session(no_runtime_grappler(to_tf(graph)))
        self.graph = self.session.graph
        if savedmodel is not None:
            saver = serving_metagraph(read_savedmodel(savedmodel)).saver_def
            self.session.run(saver.restore_op_name,
                             {saver.filename_tensor_name: os.path.join(savedmodel, "variables", "variables")})

    def has(self, tensor: str) -> bool:
        try:
            self.graph.get_tensor_by_name(tensor)
            return True
        except (KeyError, ValueError):
            return False

    def run(self, tensors: Sequence[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        return self.session.run(list(tensors), feed_dict=feeds)

    def close(self) -> None:
        self.session.close()


def time_inference(runners: dict[str, Runner], tensors: Sequence[str], feed: dict[str, np.ndarray],
                   runs: int = 50, warmup: int = 5, baseline: str | None = None, seconds: float = 0.0,
                   max_runs: int = 2000) -> dict[str, dict]:
    """Per runner: median wall and CPU milliseconds of the timed ``Session.run`` calls after
    ``warmup`` untimed ones: ``runs`` rounds, and more while fewer than ``seconds`` have passed
    (at most ``max_runs``: a graph of 0.3 ms gets thousands of rounds, one of 300 ms its 50).
    The runners take turns within each round (the order rotating each round), so a change in
    the machine's load falls on all of them alike; the median of each round's ratio to
    ``baseline`` (default: the first runner), wall and CPU (``process_time``, TF's threads
    included), with a 95% interval of each median (:func:`median_interval`)."""
    names = list(runners)
    for _ in range(warmup):
        for name in names:
            runners[name].run(tensors, feed)
    wall = {name: [] for name in names}
    cpu = {name: [] for name in names}
    started, r = time.perf_counter(), 0
    while r < runs or (time.perf_counter() - started < seconds and r < max_runs):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start, used = time.perf_counter(), time.process_time()
            runners[name].run(tensors, feed)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - used)
        r += 1
    base, base_cpu = wall[baseline or names[0]], cpu[baseline or names[0]]
    out = {}
    for name in names:
        ratios = [a / b for a, b in zip(wall[name], base)]
        cpu_ratios = [a / b for a, b in zip(cpu[name], base_cpu) if b > 0]
        low, high = median_interval(ratios)
        out[name] = {"median_ms": 1e3 * statistics.median(wall[name]),
                     "cpu_median_ms": 1e3 * statistics.median(cpu[name]), "min_ms": 1e3 * min(wall[name]),
                     "paired_ratio": statistics.median(ratios), "ratio_low": low, "ratio_high": high,
                     "runs": len(ratios)}
        if cpu_ratios:
            cpu_low, cpu_high = median_interval(cpu_ratios)
            out[name].update(cpu_ratio=statistics.median(cpu_ratios), cpu_ratio_low=cpu_low, cpu_ratio_high=cpu_high)
    return out


def agree(a: np.ndarray, b: np.ndarray) -> tuple[bool, float]:
    """allclose(rtol 1e-4, atol 1e-5) and the largest absolute difference."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False, float("inf")
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b)), float(np.sum(a != b))
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)), float(np.nanmax(diff, initial=0.0))
