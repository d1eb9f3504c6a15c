"""Regenerate ``tf_cost_calibration.json``: TensorFlow CPU kernel times measured on this machine.

    python -m egraft.ir.semantics.tf_cost_calibrate [GRAPH.pb | DIR ...] [--per-class 10] [--out FILE]
    python -m egraft.ir.semantics.tf_cost_calibrate --refit          # fit the saved samples again
    python -m egraft.ir.semantics.tf_cost_calibrate --check GRAPH.pb # where the model is wrong on a graph

Needs TensorFlow (the cost model then works without it). Run on the machine the
predictions are for, when it is quiet: the figures are that machine's.

**What is measured.** The ops of real models at the shapes they have there: each given
GraphDef (default: the `bench/grappler` models in ``$EGRAFT_TFPEER_GRAPHS`` or
``/work/tfpeer/graphs``, and the Keras zoo cache) is read with egraft (``egraft-opt`` in a
subprocess, then its parser), shaped with
`tf_shapes`, and also put through ``egraft-opt -tf-grappler`` (a subprocess) so that the
fused kernels it emits (`_FusedConv2D`, ...) are measured too, and so are ops that
rewrites emit at the bench models' shapes (:func:`synthetic_samples`). Ops with
every operand shape static are grouped by (op, operand shapes, small constant operands,
attributes); see :func:`select` for which are measured.

**How.** For one op: a graph of Const inputs (random values of the operand shapes, a set
per copy; the model's own values for shape-like operands) and a chain of K copies of the
model's NodeDef, each waiting on the one before (a control edge: they run one at a time, as the
predictor assumes), ending in a NoOp; the same with one copy. The op's time is the
difference of the two best (lowest) of 31 interleaved Session.run times, over K-1; every
sample is measured in ``--passes`` (2) passes over the whole list, minutes apart, and the
lower kept (the machine is shared: a neighbour's benchmark can last longer than 31 runs) (K chosen so the chain runs for
about 3 ms). Sessions as `bench/grappler` times inference: 2 intra- and 2 inter-op
threads, ``TF_ENABLE_ONEDNN_OPTS=1``, Grappler and graph optimizations off.

**The fit.** Per class and, where at least 8 shapes of 4 sizes were measured, per op type:
non-negative ``overhead_us``, ``us_per_flop``, ``us_per_byte`` minimising the squared
*relative* error (times span four orders of magnitude); an op type with fewer shapes gets
its class's coefficients scaled by its median measured/predicted ratio when that is off
by more than 25% (GELU's Erfc is 3-4x an average transcendental op). Every measured sample is saved
with its prediction, so where the model is wrong can be read from the file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

OUTPUT = Path(__file__).with_name("tf_cost_calibration.json")
SKIP_KINDS = {"Placeholder", "NoOp", "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "_Arg", "_Retval",
              "Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", "TensorListReserve",
              "TensorListFromTensor", "TensorListGetItem", "TensorListSetItem", "TensorListStack",
              "PartitionedCall", "StatefulPartitionedCall", "If", "While", "StatelessIf", "StatelessWhile"}
VIEW_SAMPLES = 6
CHAIN_MS = 3.0
#: models whose -tf-grappler output is measured too (fused kernels; the bench's BERTs and CNNs)
GRAPPLER_MODELS = {"bert4", "mobilenetv2", "efficientnetb0", "resnet50", "inceptionv3", "bert_l2_h128_s64",
                   "small_cnn", "MobileNet"}


def default_sources() -> list[Path]:
    out = []
    graphs = Path(os.environ.get("EGRAFT_TFPEER_GRAPHS", "/work/tfpeer/graphs"))
    if graphs.is_dir():
        out += sorted(graphs.glob("*.pb"))
    cache = Path(os.environ.get("EGRAFT_TFMODELS_CACHE", Path.home() / ".cache" / "egraft-tfmodels"))
    if cache.is_dir():
        out += sorted(p for p in cache.glob("*/*.pb") if p.stat().st_size < 60e6)
    return out


def _grappler_output(pb: Path, tmp: Path) -> Path | None:
    """``egraft-opt -tf-grappler`` of a model (fetches from its .json when there is one)."""
    meta = pb.with_suffix(".json")
    args = [sys.executable, "-m", "egraft.passes.cli.main", str(pb)]
    if meta.exists():
        m = json.loads(meta.read_text())
        feeds = [f["name"] if isinstance(f, dict) else f for f in m.get("inputs", m.get("feeds", []))]
        fetches = m.get("outputs", m.get("fetches", []))
        if feeds:
            args.append("--tf-input-arrays=" + ",".join(feeds))
        if fetches:
            args.append("--tf-output-arrays=" + ",".join(fetches))
    out = tmp / (pb.stem + ".grappler.pb")
    args += ["-tf-grappler", "-o", str(out)]
    try:
        subprocess.run(args, check=True, capture_output=True, timeout=900)
    except (subprocess.SubprocessError, OSError) as e:
        print(f"  (no -tf-grappler output for {pb.name}: {e})", file=sys.stderr)
        return None
    return out


def _tfg_module(pb: Path):
    """The tfg module of a GraphDef, through ``egraft-opt`` (a subprocess: the importer is in
    ir/graphdef, a layer this module may not import) and egraft's parser."""
    from egraft.ir.syntax.parser import parse

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "graph.mlir"
        try:
            subprocess.run([sys.executable, "-m", "egraft.passes.cli.main", str(pb), "-o", str(out)], check=True,
                           capture_output=True, timeout=600)
        except (subprocess.SubprocessError, OSError) as e:
            print(f"  (cannot read {pb.name}: {e})", file=sys.stderr)
            return None
        return parse(out.read_text(), str(pb), allow_unregistered=True)


def collect(paths: list[Path]) -> dict[tuple, dict]:
    """Distinct op signatures with static shapes: key -> sample description."""
    import tensorflow as tf

    from egraft.ir.core import types as T
    from egraft.ir.semantics.tf_cost import op_work
    from egraft.ir.semantics.tf_shapes import Shapes, _data_operands, kind_of

    found: dict[tuple, dict] = {}
    for path in paths:
        graph_def = tf.compat.v1.GraphDef()
        graph_def.ParseFromString(path.read_bytes())
        nodes = {n.name: n for n in graph_def.node}
        module = _tfg_module(path)
        if module is None:
            continue
        shapes = Shapes()
        for op in module.walk():
            kind = kind_of(op)
            parent = op.parent_op
            if kind is None or kind in SKIP_KINDS or parent is None or parent.name != "tfg.graph":
                continue
            name = getattr(op.attr("_mlir_name"), "value", None)
            node = nodes.get(name)
            if node is None:
                continue
            operands = _data_operands(op)
            facts = [shapes.facts(v) for v in operands]
            if any(f.shape is None or any(d < 0 for d in f.shape) for f in facts):
                continue
            w = op_work(op, shapes)
            if w is None or not w.known:
                continue
            dtypes = [str(T.element_type(v.type)) for v in operands]
            if any(d not in _TF_DTYPES for d in dtypes):
                continue
            small = [None if f.value is None or f.value.size > 64 else f.value.tolist() for f in facts]
            attrs = sorted((k, v.SerializeToString()) for k, v in node.attr.items() if not k.startswith("_"))
            key = (kind, tuple(f.shape for f in facts), tuple(dtypes), json.dumps(small), tuple(attrs))
            if key in found:
                found[key]["count"] += 1
                continue
            found[key] = {"kind": kind, "cls": w.cls, "flops": w.flops, "bytes": w.bytes, "count": 1,
                          "epilogue": list(w.epilogue), "out_elements": w.out_elements,
                          "shapes": [list(f.shape) for f in facts], "values": small, "model": path.name,
                          "node": node, "dtypes": [_TF_DTYPES.get(d) for d in dtypes]}
    return found


_TF_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "i32": "int32",
              "i64": "int64", "i16": "int16", "i8": "int8", "ui8": "uint8", "i1": "bool"}


def select(found: dict[tuple, dict], per_class: int) -> list[dict]:
    """Per class: ``per_class`` signatures across the range of their work, as many again of
    the biggest (they are what a graph's time is made of); per op type: its biggest,
    median and smallest signatures (so each type can get its own fit); the bench's BERT's
    matmuls, elementwise and data-movement ops at all their shapes."""
    by_class: dict[str, list[dict]] = {}
    for s in found.values():
        by_class.setdefault(s["cls"], []).append(s)
    chosen: list[dict] = []
    for cls, samples in sorted(by_class.items()):
        samples.sort(key=lambda s: s["flops"] + s["bytes"])
        limit = VIEW_SAMPLES if cls == "view" else per_class
        keep = {id(samples[int(round(i))]) for i in np.linspace(0, len(samples) - 1, min(limit, len(samples)))}
        if cls != "view":
            keep |= {id(s) for s in samples[-limit:]}
            by_kind: dict[str, list[dict]] = {}
            for s in samples:
                by_kind.setdefault(s["kind"], []).append(s)
            for same in by_kind.values():
                keep |= {id(same[0]), id(same[len(same) // 2]), id(same[-1])}
        keep |= {id(s) for s in samples if s["model"] == "bert4.pb" and cls in ("matmul", "einsum", "elementwise",
                                                                                 "transcendental", "movement")}
        kinds_seen = {s["kind"] for s in samples if id(s) in keep}
        for s in samples[::-1]:
            if s["kind"] not in kinds_seen:
                keep.add(id(s))
                kinds_seen.add(s["kind"])
        chosen += [s for s in samples if id(s) in keep]
    return chosen


DISTINCT_BYTES = 64e6


def _graph_for(sample: dict, copies: int):
    """Const inputs + a control-chained run of `copies` copies of the node; targets 'done'.

    Each copy reads its own data inputs (as a layer of a model reads the activations and
    weights nobody else read just before; up to 64 MB of them, then reused round-robin):
    a chain re-reading one tensor would find it in cache and measure memory-bound kernels
    several times too fast. Shape-like operands (the model's own small constants) are
    shared."""
    import tensorflow as tf
    from tensorflow.core.framework import attr_value_pb2, graph_pb2, node_def_pb2

    rng = np.random.default_rng(0)
    graph = graph_pb2.GraphDef()
    arrays = []
    for shape, value, dtype in zip(sample["shapes"], sample["values"], sample["dtypes"]):
        dt = tf.as_dtype(dtype) if dtype else tf.float32
        if value is not None:
            arr = np.asarray(value, dtype=dt.as_numpy_dtype).reshape(shape)
        elif dt.is_floating:
            arr = rng.standard_normal(shape).astype(dt.as_numpy_dtype)
        elif dt == tf.bool:
            arr = rng.integers(0, 2, shape).astype(bool)
        else:
            arr = np.zeros(shape, dt.as_numpy_dtype)
        arrays.append((arr, dt, value is not None))
    data_bytes = sum(a.nbytes for a, _, shared in arrays if not shared)
    distinct = max(1, min(copies, int(DISTINCT_BYTES // max(1, data_bytes))))

    def const(name: str, arr: np.ndarray, dt) -> str:
        node = node_def_pb2.NodeDef(name=name, op="Const")
        node.attr["dtype"].CopyFrom(attr_value_pb2.AttrValue(type=dt.as_datatype_enum))
        node.attr["value"].CopyFrom(attr_value_pb2.AttrValue(tensor=tf.make_tensor_proto(arr)))
        graph.node.append(node)
        return name

    shared = {i: const(f"in{i}", a, dt) for i, (a, dt, is_shared) in enumerate(arrays) if is_shared}
    sets = [[shared[i] if i in shared else const(f"in{i}_{d}", a if d == 0 else a + d * np.asarray(1e-3, a.dtype)
                                                 if a.dtype.kind == "f" else a, dt)
             for i, (a, dt, _) in enumerate(arrays)] for d in range(distinct)]
    node = sample["node"]
    for c in range(copies):
        copy = node_def_pb2.NodeDef()
        copy.CopyFrom(node)
        copy.name = f"op{c}"
        del copy.input[:]
        copy.input.extend(sets[c % distinct] + ([f"^op{c - 1}"] if c else []))
        copy.device = ""
        for k in [k for k in copy.attr if k.startswith("_")]:
            del copy.attr[k]
        graph.node.append(copy)
    done = node_def_pb2.NodeDef(name="done", op="NoOp")
    done.input.append(f"^op{copies - 1}")
    graph.node.append(done)
    return graph


def plain_session(graph_def):
    """A TF1 Session that runs ``graph_def`` as given, as the benchmark times inference:
    2 intra- and 2 inter-op threads, Grappler and the graph optimizations off (function
    inlining and constant folding too), so what is measured is the graph handed in."""
    import tensorflow as tf
    from tensorflow.core.protobuf import config_pb2

    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    config = config_pb2.ConfigProto(intra_op_parallelism_threads=2, inter_op_parallelism_threads=2)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    options = config.graph_options.optimizer_options
    options.opt_level = config_pb2.OptimizerOptions.L0
    options.do_constant_folding = options.do_common_subexpression_elimination = False
    options.do_function_inlining = False
    return tf.compat.v1.Session(graph=graph, config=config)


def synthetic_samples() -> list[dict]:
    """Ops the models do not have but rewrites emit (fused kernels, the pieces of a merged
    Q/K/V projection, transposes through attention), at the bench BERT's and CNNs' shapes."""
    import tensorflow as tf
    from tensorflow.core.framework import attr_value_pb2, node_def_pb2

    from egraft.ir.semantics.tf_cost import op_class, work

    f32 = attr_value_pb2.AttrValue(type=tf.float32.as_datatype_enum)
    i32 = attr_value_pb2.AttrValue(type=tf.int32.as_datatype_enum)

    def array(**kw) -> attr_value_pb2.AttrValue:
        return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(**kw))

    def sample(kind: str, shapes: list, outs: list, attrs: dict, values: list | None = None,
               dtypes: list | None = None) -> dict:
        node = node_def_pb2.NodeDef(name="x", op=kind)
        for k, v in attrs.items():
            node.attr[k].CopyFrom(v)
        fused = [f.decode() for f in attrs["fused_ops"].list.s] if "fused_ops" in attrs else []
        w = work(kind, [tuple(x) for x in shapes], [tuple(o) for o in outs], _FakeOp(attrs, fused))
        return {"kind": kind, "cls": op_class(kind), "flops": w.flops, "bytes": w.bytes, "count": 1,
                "epilogue": list(w.epilogue), "out_elements": w.out_elements,
                "shapes": shapes, "values": values or [None] * len(shapes), "model": "synthetic", "node": node,
                "dtypes": dtypes or ["float32"] * len(shapes)}

    out: list[dict] = []
    for m, k, n in ((128, 256, 256), (128, 256, 1024), (128, 1024, 256), (128, 256, 768), (64, 128, 512),
                    (1, 1280, 1000)):
        for fused in (["BiasAdd"], ["BiasAdd", "Relu"], ["BiasAdd", "GeluExact"], ["BiasAdd", "GeluApproximate"]):
            out.append(sample("_FusedMatMul", [[m, k], [k, n], [n]], [[m, n]],
                              {"T": f32, "num_args": attr_value_pb2.AttrValue(i=1),
                               "fused_ops": array(s=[f.encode() for f in fused])}))
    for h, c in ((112, 32), (56, 144), (28, 192), (14, 576), (7, 960)):
        for fused in (["BiasAdd"], ["BiasAdd", "Relu6"]):
            out.append(sample("_FusedDepthwiseConv2dNative", [[1, h, h, c], [3, 3, c, 1], [c]], [[1, h, h, c]],
                              {"T": f32, "num_args": attr_value_pb2.AttrValue(i=1),
                               "fused_ops": array(s=[f.encode() for f in fused]), "strides": array(i=[1, 1, 1, 1]),
                               "padding": attr_value_pb2.AttrValue(s=b"SAME")}))
        out.append(sample("_MklSwish", [[1, h, h, c]], [[1, h, h, c]], {"T": f32}))
        for kind in ("FusedBatchNormV3", "_FusedBatchNormEx"):
            extra = {"activation_mode": attr_value_pb2.AttrValue(s=b"Relu"),
                     "num_side_inputs": attr_value_pb2.AttrValue(i=0)} if kind == "_FusedBatchNormEx" else {}
            out.append(sample(kind, [[1, h, h, c]] + [[c]] * 4, [[1, h, h, c]] + [[c]] * 4,
                              {"T": f32, "U": f32, "is_training": attr_value_pb2.AttrValue(b=False), **extra}))
    for a, b, adj in (([1, 4, 128, 64], [1, 4, 64, 128], False), ([1, 4, 128, 128], [1, 4, 128, 64], False),
                      ([1, 4, 128, 64], [1, 4, 128, 64], True), ([1, 2, 64, 64], [1, 2, 64, 64], True),
                      ([4, 128, 64], [4, 64, 128], False), ([1, 128, 256], [256, 768], False)):
        o = a[:-1] + [b[-2] if adj else b[-1]]
        out.append(sample("BatchMatMulV2", [a, b], [o], {"T": f32, "adj_y": attr_value_pb2.AttrValue(b=adj)}))
    for shape, perm in (([1, 128, 4, 64], [0, 2, 1, 3]), ([1, 4, 128, 64], [0, 2, 1, 3]), ([1, 128, 12, 64],
                                                                                           [0, 2, 1, 3]),
                        ([1, 64, 2, 64], [0, 2, 3, 1]), ([256, 768], [1, 0]), ([1, 56, 56, 64], [0, 3, 1, 2])):
        o = [shape[p] for p in perm]
        out.append(sample("Transpose", [shape, [len(perm)]], [o], {"T": f32, "Tperm": i32}, [None, perm],
                          ["float32", "int32"]))
    for shape, parts in (([1, 128, 768], 3), ([128, 768], 3), ([1, 64, 384], 3), ([128, 3072], 2)):
        o = shape[:-1] + [shape[-1] // parts]
        out.append(sample("Split", [[], shape], [o] * parts, {"T": f32, "num_split": attr_value_pb2.AttrValue(i=parts)},
                          [-1, None], ["int32", "float32"]))
        out.append(sample("SplitV", [shape, [parts], []], [o] * parts,
                          {"T": f32, "Tlen": i32, "num_split": attr_value_pb2.AttrValue(i=parts)},
                          [None, [shape[-1] // parts] * parts, -1], ["float32", "int32", "int32"]))
    for shape in ([1, 128, 1024], [1, 64, 512], [1, 128, 256], [1, 112, 112, 32]):
        for kind in ("Erf", "Erfc", "Tanh", "Sigmoid", "Exp"):
            out.append(sample(kind, [shape], [shape], {"T": f32}))
    return out


class _FakeOp:
    """What `work` reads of an op (its attributes), for a NodeDef not in any module."""

    def __init__(self, attrs: dict, fused: list[str]) -> None:
        self.fused = fused
        self.attrs = attrs

    def attr(self, name: str):
        from egraft.ir.core import attributes as A
        from egraft.ir.core import types as T

        if name == "fused_ops" and self.fused:
            return A.ArrayAttr(tuple(A.StringAttr(f) for f in self.fused))
        if name in ("transpose_a", "adj_x") and name in self.attrs:
            return A.IntegerAttr(int(self.attrs[name].b), T.i1)
        if name == "ksize" and name in self.attrs:
            return A.ArrayAttr(tuple(A.IntegerAttr(int(i), T.i64) for i in self.attrs[name].list.i))
        return None


def _best_runs(sessions: list, runs: int) -> list[float]:
    """Per session, the lowest of `runs` interleaved Session.run times (µs): the machine is
    shared, and the least disturbed run is the kernel's own time."""
    times: list[list[float]] = [[] for _ in sessions]
    for r in range(runs):
        order = list(range(len(sessions)))
        if r % 2:
            order.reverse()
        for i in order:
            start = time.perf_counter()
            sessions[i].run("done")
            times[i].append(time.perf_counter() - start)
    return [min(t) * 1e6 for t in times]


def measure(sample: dict, runs: int = 31) -> float | None:
    """µs of one run of the op (chain difference), None when TF cannot run it."""
    try:
        one = plain_session(_graph_for(sample, 1))
        probe = plain_session(_graph_for(sample, 5))
        for s in (one, probe):
            for _ in range(3):
                s.run("done")
        t1, t5 = _best_runs([one, probe], 7)
        per = max((t5 - t1) / 4, 1.0)
        k = int(min(200, max(4, CHAIN_MS * 1e3 / per)))
        probe.close()
        chain = plain_session(_graph_for(sample, k + 1))
        for _ in range(3):
            chain.run("done")
        t1, tk = _best_runs([one, chain], runs)
        one.close()
        chain.close()
        return max((tk - t1) / k, 0.05)
    except Exception as e:  # noqa: BLE001 - a kernel TF will not run here is reported, not fatal
        print(f"  skip {sample['kind']} {sample['shapes']}: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
        return None


def session_overhead_us() -> float:
    """The best Session.run time of a graph that is one NoOp (µs)."""
    from tensorflow.core.framework import graph_pb2, node_def_pb2

    graph = graph_pb2.GraphDef()
    graph.node.append(node_def_pb2.NodeDef(name="done", op="NoOp"))
    s = plain_session(graph)
    for _ in range(5):
        s.run("done")
    return _best_runs([s], 51)[0]


def fit_measured(measured: list[dict]) -> tuple[dict, dict, list[dict]]:
    """Coefficients per class and op type, and each sample with its prediction."""
    classes, kinds = fit_all(measured)
    # fused kernels: fit their own work on what is left once their epilogue (priced by the
    # standalone ops' rates just fitted) is taken off; everything else is unchanged
    provisional = _calibration(classes, kinds)
    for s in measured:
        s["target"] = max(0.1 * s["us"], s["us"] - provisional.epilogue_us(_work_of(s)))
    classes, kinds = fit_all(measured)
    final = _calibration(classes, kinds)
    rows = []
    for s in measured:
        rows.append({"kind": s["kind"], "class": s["cls"], "shapes": s["shapes"], "model": s["model"],
                     "flops": s["flops"], "bytes": s["bytes"], "epilogue": s["epilogue"],
                     "out_elements": s["out_elements"],
                     "measured_us": round(s["us"], 2), "predicted_us": round(final.time_us(_work_of(s)), 2)})
    return classes, kinds, rows


def _work_of(s: dict):
    from egraft.ir.semantics.tf_cost import Work

    return Work(s["kind"], s["cls"], s["flops"], s["bytes"], True, tuple(s["epilogue"]), s["out_elements"])


def _calibration(classes: dict, kinds: dict):
    from egraft.ir.semantics.tf_cost import CLASSES, Calibration, Coefficients

    cls = {c: Coefficients(**v) for c, v in classes.items()}
    for c in CLASSES:
        cls.setdefault(c, cls.get("elementwise", Coefficients(0.0, 0.0, 0.0)))
    return Calibration(cls, {k: Coefficients(**v) for k, v in kinds.items()}, 0.0, {})


def fit_all(measured: list[dict]) -> tuple[dict, dict]:
    """Per class, and per op type where it has 8 samples of 4 sizes (else its class's
    coefficients scaled to its samples when they are off by more than 25%: three free
    coefficients on a few noisy samples extrapolated badly, e.g. _FusedConv2D at 4x)."""
    classes, kinds = {}, {}
    by_class: dict[str, list[dict]] = {}
    by_kind: dict[str, list[dict]] = {}
    for s in measured:
        by_class.setdefault(s["cls"], []).append(s)
        by_kind.setdefault(s["kind"], []).append(s)
    for cls, samples in by_class.items():
        classes[cls] = fit(samples)
    for kind, samples in by_kind.items():
        if len(samples) >= 8 and len({s["flops"] + s["bytes"] for s in samples}) >= 4:
            kinds[kind] = fit(samples)
        elif samples[0]["cls"] != "view":
            c = classes[samples[0]["cls"]]
            ratio = float(np.median([_target(s) / max(1e-9, c["overhead_us"] + s["flops"] * c["us_per_flop"]
                                                      + s["bytes"] * c["us_per_byte"]) for s in samples]))
            if not 0.8 <= ratio <= 1.25:
                kinds[kind] = {k: v * ratio for k, v in c.items()}
    return classes, kinds


def _target(s: dict) -> float:
    return s.get("target", s["us"])


def fit(samples: list[dict]) -> dict[str, float]:
    """Non-negative (overhead, per-flop, per-byte) minimising squared relative error."""
    from scipy.optimize import nnls

    t = np.array([_target(s) for s in samples])
    a = np.array([[1.0, s["flops"], s["bytes"]] for s in samples])
    scale = np.maximum(a.max(axis=0), 1e-30)
    weighted = (a / scale) / t[:, None]
    coef, _ = nnls(weighted, np.ones_like(t))
    coef = coef / scale
    return {"overhead_us": float(coef[0]), "us_per_flop": float(coef[1]), "us_per_byte": float(coef[2])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("graphs", nargs="*", type=Path, help="GraphDefs (.pb) or folders of them")
    parser.add_argument("--per-class", type=int, default=14)
    parser.add_argument("--no-grappler", action="store_true", help="do not add -tf-grappler outputs")
    parser.add_argument("--passes", type=int, default=2,
                        help="measure every sample this many times, minutes apart, and keep the best")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true",
                        help="say where the model is wrong on the given graphs: each node's time traced in the "
                             "running graph (FULL_TRACE, median of 10 runs) against its prediction, per op type")
    parser.add_argument("--refit", action="store_true",
                        help="fit the samples saved in --out again, without measuring (after a change to the fit)")
    args = parser.parse_args(argv)
    if args.refit:
        return refit(args.out)
    if args.check:
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"
        for pb in args.graphs:
            check(pb)
        return 0
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"
    import tensorflow as tf

    paths: list[Path] = []
    for p in args.graphs or default_sources():
        paths += sorted(p.glob("*.pb")) if p.is_dir() else [p]
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_grappler:
            extra = [_grappler_output(p, Path(tmp)) for p in paths if p.stem in GRAPPLER_MODELS]
            paths += [p for p in extra if p is not None]
        found = collect(paths)
    chosen = select(found, args.per_class) + synthetic_samples()
    print(f"{len(found)} distinct op signatures in {len(paths)} graphs; measuring {len(chosen)}", file=sys.stderr)
    session_us = session_overhead_us()
    for p in range(args.passes):
        for i, s in enumerate(chosen):
            if p and "us" not in s:
                continue  # TF could not run it the first time
            us = measure(s)
            if us is None:
                continue
            s["us"] = min(us, s.get("us", us))
            print(f"  pass {p + 1} [{i + 1}/{len(chosen)}] {s['kind']:24s} {str(s['shapes']):52.52s} {us:10.1f} us",
                  file=sys.stderr)
    measured = [s for s in chosen if "us" in s]
    classes, kinds, rows = fit_measured(measured)
    errors = [abs(r["predicted_us"] - r["measured_us"]) / r["measured_us"] for r in rows]
    data = {
        "meta": {
            "generator": "python -m egraft.ir.semantics.tf_cost_calibrate",
            "tensorflow": tf.__version__, "machine": platform.machine(), "cpu": _cpu_name(),
            "cpus": os.cpu_count(), "threads": {"intra_op": 2, "inter_op": 2}, "onednn": True,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "seconds": round(time.time() - started),
            "passes": args.passes,
            "graphs": [p.name for p in paths], "signatures_found": len(found), "samples": len(rows),
            "median_relative_error": round(float(np.median(errors)), 3) if errors else None,
            "load_average": os.getloadavg(),
        },
        "session_us": round(session_us, 2),
        "classes": classes,
        "kinds": kinds,
        "samples": rows,
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out} ({len(rows)} samples, median relative error {data['meta']['median_relative_error']})",
          file=sys.stderr)
    return 0


def check(pb: Path, runs: int = 10) -> None:
    """Per op type of one GraphDef: traced node times in the running graph against the
    model (feeds: random values for its Placeholders; fetches: from ``<pb>.json``'s
    ``outputs`` when there is one, else the nodes nothing reads)."""
    import collections

    import tensorflow as tf
    from tensorflow.core.protobuf import config_pb2

    from egraft.ir.semantics.tf_cost import op_cost_us
    from egraft.ir.semantics.tf_shapes import Shapes, kind_of

    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(pb.read_bytes())
    meta = pb.with_suffix(".json")
    fetches = json.loads(meta.read_text()).get("outputs") if meta.exists() else None
    if not fetches:
        read = {i.split(":")[0].lstrip("^") for n in graph_def.node for i in n.input}
        fetches = [n.name for n in graph_def.node if n.name not in read and n.op not in ("NoOp", "Assert")]
    session = plain_session(graph_def)
    rng = np.random.default_rng(0)
    feed = {}
    for node in graph_def.node:
        if node.op == "Placeholder":
            t = session.graph.get_tensor_by_name(node.name + ":0")
            shape = [d if d is not None else 1 for d in (t.shape.as_list() if t.shape.rank is not None else [])]
            dt = t.dtype
            feed[t] = rng.standard_normal(shape).astype(dt.as_numpy_dtype) if dt.is_floating else \
                np.zeros(shape, dt.as_numpy_dtype)
    tensors = [f if ":" in f else f + ":0" for f in fetches]
    for _ in range(3):
        session.run(tensors, feed)
    per: dict[str, list[float]] = collections.defaultdict(list)
    walls = []
    for _ in range(runs):
        metadata = config_pb2.RunMetadata()
        session.run(tensors, feed, options=config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE),
                    run_metadata=metadata)
        stats = [ns for dev in metadata.step_stats.dev_stats for ns in dev.node_stats]
        for ns in stats:
            per[ns.node_name.split(":")[0]].append(ns.all_end_rel_micros)
        walls.append(max(ns.all_start_micros + ns.all_end_rel_micros for ns in stats)
                     - min(ns.all_start_micros for ns in stats))
    module = _tfg_module(pb)
    shapes = Shapes()
    rows: dict[str, list] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for op in module.walk() if module is not None else ():
        kind = kind_of(op)
        name = getattr(op.attr("_mlir_name"), "value", None)
        if kind is None or name is None or op.parent_op is None or op.parent_op.name != "tfg.graph":
            continue
        row = rows[kind]
        row[0] += 1
        row[1] += float(np.median(per[name])) if per.get(name) else 0.0
        row[2] += op_cost_us(op, shapes)
    measured = sum(r[1] for r in rows.values())
    predicted = sum(r[2] for r in rows.values())
    print(f"{pb.name}: traced step {np.median(walls) / 1e3:.2f} ms; node times {measured / 1e3:.2f} ms, "
          f"predicted {predicted / 1e3:.2f} ms (load {os.getloadavg()[0]:.1f})")
    for kind, (n, m, p) in sorted(rows.items(), key=lambda kv: -kv[1][1])[:12]:
        print(f"  {kind:28s} {n:5d} ops  measured {m / 1e3:8.2f} ms  predicted {p / 1e3:8.2f} ms  "
              f"ratio {p / m if m else float('nan'):5.2f}")


def refit(path: Path) -> int:
    data = json.loads(path.read_text())
    measured = [{"kind": r["kind"], "cls": r["class"], "flops": r["flops"], "bytes": r["bytes"],
                 "epilogue": r.get("epilogue", []), "out_elements": r.get("out_elements", 0.0),
                 "us": r["measured_us"], **{k: r[k] for k in ("shapes", "model")}} for r in data["samples"]]
    classes, kinds, rows = fit_measured(measured)
    data.update(classes=classes, kinds=kinds, samples=rows)
    errors = [abs(r["predicted_us"] - r["measured_us"]) / r["measured_us"] for r in rows]
    data["meta"]["median_relative_error"] = round(float(np.median(errors)), 3)
    data["meta"]["refit_utc"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"refit {path}: median relative error {data['meta']['median_relative_error']}", file=sys.stderr)
    return 0


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
