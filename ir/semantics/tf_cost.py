"""What a TensorFlow op costs on this machine, from its static shapes; a whole graph's time.

    from egraft.ir.semantics.tf_cost import op_cost_us, predict_ms, predict_breakdown
    op_cost_us(op)            # µs for one tf.X / tfg.X op (its shapes from tf_shapes, on demand)
    predict_ms(module)        # ms for one run of every op (tf_executor, functional or tfg form)

**Work.** Each op gets a class (`matmul`, `einsum`, `conv`, `depthwise`, `pool`, `elementwise`,
`transcendental`, `reduction`, `movement`, `batchnorm`, `view`, `other`) and its work from
the shapes (:func:`work`): FLOPs (2·m·k·n for a MatMul, 2·out·kh·kw·cin for a Conv2D, one
per element for elementwise ops, ...) and bytes moved (inputs read plus output written;
`view` ops such as Reshape, Identity and Const move nothing).

**Time.** ``µs = overhead + FLOPs · s_flop + bytes · s_byte`` with non-negative
coefficients per class (a fused kernel adds its epilogue: per fused op, the calibrated
per-element rate of the op it stands for, `EPILOGUE_AS`), fitted to TensorFlow CPU kernel times measured on this machine by
`python -m egraft.ir.semantics.tf_cost_calibrate` (2 intra- and 2 inter-op threads,
oneDNN on, Grappler off: as `bench/grappler` runs inference) and saved in
`tf_cost_calibration.json` next to this module; the file also has per-op-type
coefficients where enough shapes were measured (MatMul and BatchMatMulV2 are different
kernels), which take precedence over their class's.

**Assumptions, said plainly.** :func:`predict_ms` is a serial sum: TensorFlow runs
independent ops on 2 inter-op threads, so a graph with parallel branches can run faster
than predicted, and a session's fixed cost per run (`session_us` in the file) is added
once. An op whose shapes are not static costs its class's overhead only (a lower bound).
Functions are priced where they are called, at each call's shapes (a function called twice
counts twice); a functional loop's body and a v1 loop's ops count once (trip counts are not
static); an `If` counts its costlier branch, a v1 cond both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.semantics.tf_shapes import Facts, Shape, Shapes, kind_of, _data_operands, _data_results

CALIBRATION = Path(__file__).with_name("tf_cost_calibration.json")

CLASSES = ("matmul", "einsum", "conv", "depthwise", "pool", "elementwise", "transcendental", "reduction", "movement",
           "batchnorm", "view", "other")

_MATMUL = {"MatMul", "_FusedMatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3",
           "_MklMatMul", "_MklFusedMatMul", "_MklBatchMatMulV2", "_FusedBatchMatMulV2"}
_CONV = {"Conv2D", "_FusedConv2D", "Conv3D", "_MklConv2D", "_MklFusedConv2D", "_MklNativeConv2D",
         "_MklNativeFusedConv2D", "Conv2DBackpropInput"}
_DEPTHWISE = {"DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative", "_MklDepthwiseConv2dNative",
              "_MklFusedDepthwiseConv2dNative"}
_POOL = {"MaxPool", "AvgPool", "MaxPoolV2", "MaxPool3D", "AvgPool3D", "_MklMaxPool", "_MklAvgPool"}
_TRANSCENDENTAL = {"Exp", "Expm1", "Log", "Log1p", "Tanh", "Sigmoid", "Erf", "Erfc", "Softmax", "LogSoftmax",
                   "Rsqrt", "Sqrt", "Pow", "Softplus", "Gelu", "_MklSwish", "Swish", "Mish", "_MklFusedMish",
                   "Sin", "Cos", "Tan", "Atan", "Atan2", "Elu", "Selu", "Reciprocal", "RealDiv", "Div",
                   "DivNoNan", "FloorDiv", "FloorMod", "Mod", "Inv", "Xlogy", "Xdivy", "LRN"}
_REDUCTION = {"Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm", "ArgMax", "ArgMin", "_MklMean",
              "Cumsum", "Cumprod", "TopKV2"}
_MOVEMENT = {"Transpose", "ConjugateTranspose", "ConcatV2", "Concat", "Pad", "PadV2", "MirrorPad", "Split",
             "SplitV", "Gather", "GatherV2", "ResourceGather", "StridedSlice", "Slice", "Tile", "Pack", "Unpack",
             "BroadcastTo", "OneHot", "ResizeBilinear", "ResizeNearestNeighbor", "DepthToSpace", "SpaceToDepth",
             "Fill", "ZerosLike", "OnesLike", "Cast", "_MklTranspose", "_MklConcatV2", "Range",
             "ReverseV2", "Select", "SelectV2"}
_BATCHNORM = {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3", "_FusedBatchNormEx",
              "_MklFusedBatchNorm", "_MklFusedBatchNormV3"}
_VIEW = {"Const", "Identity", "IdentityN", "Reshape", "Squeeze", "ExpandDims", "Shape", "ShapeN", "Size", "Rank",
         "NoOp", "Snapshot", "StopGradient", "PreventGradient", "Placeholder", "PlaceholderWithDefault",
         "Enter", "Exit", "NextIteration", "Switch", "Merge", "LoopCond", "_MklReshape", "EnsureShape",
         "CheckNumerics", "ControlTrigger", "_Arg", "_Retval", "ReadVariableOp", "VarHandleOp"}
_ELEMENTWISE_EXTRA = {"BiasAdd", "BiasAddV1", "AddN", "_MklAddN", "ClipByValue"}


def op_class(kind: str) -> str:
    if kind in _MATMUL:
        return "matmul"
    if kind == "Einsum":  # its own class: TF runs it as transposes and reshapes around a batch matmul
        return "einsum"
    if kind in _CONV:
        return "conv"
    if kind in _DEPTHWISE:
        return "depthwise"
    if kind in _POOL:
        return "pool"
    if kind in _BATCHNORM:
        return "batchnorm"
    if kind in _VIEW:
        return "view"
    if kind in _TRANSCENDENTAL:
        return "transcendental"
    if kind in _REDUCTION:
        return "reduction"
    if kind in _MOVEMENT:
        return "movement"
    from egraft.ir.semantics.tf_shapes import BINARY, UNARY

    if kind in _ELEMENTWISE_EXTRA or kind in UNARY or kind in BINARY:
        return "elementwise"
    return "other"


@dataclass(frozen=True, slots=True)
class Work:
    """One op's work: its class, FLOPs and bytes moved; `known` is False when a shape it
    needs is not static (FLOPs and bytes are then 0: the overhead is all that is counted)."""

    kind: str
    cls: str
    flops: float
    bytes: float
    known: bool
    epilogue: tuple[str, ...] = ()   # a fused kernel's elementwise ops ("BiasAdd", "GeluExact")
    out_elements: float = 0.0        # the elements each of them is applied to


def _elements(s: Shape) -> int | None:
    if s is None or any(d < 0 for d in s):
        return None
    return int(np.prod(s, dtype=np.int64)) if s else 1


def _itemsize(t: T.Type) -> int:
    et = T.element_type(t) if isinstance(t, T.ShapedType) else None
    width = getattr(et, "width", None)
    if isinstance(width, int) and width > 0:
        return max(1, width // 8)
    return 4


def work(kind: str, inputs: list[Shape], outputs: list[Shape], op: Operation | None = None,
         in_types: list[T.Type] | None = None, out_types: list[T.Type] | None = None) -> Work:
    """FLOPs and bytes of one op of TF kind `kind` from its operands' and results' shapes."""
    cls = op_class(kind)
    in_types = in_types or [T.f32] * len(inputs)  # type: ignore[attr-defined]
    out_types = out_types or [T.f32] * len(outputs)  # type: ignore[attr-defined]
    if cls == "view":
        return Work(kind, cls, 0.0, 0.0, True)
    n_in = [_elements(s) for s in inputs]
    n_out = [_elements(s) for s in outputs]
    # the data a kernel reads: for shape-like operands (axes, perms, sizes) that is nothing worth counting
    data_in = [(n, t) for n, t in zip(n_in, in_types) if n is None or n > 16 or cls in ("elementwise", "transcendental")]
    if any(n is None for n, _ in data_in) or any(n is None for n in n_out) or not outputs:
        return Work(kind, cls, 0.0, 0.0, False)
    moved = float(sum(n * _itemsize(t) for n, t in data_in) + sum(n * _itemsize(t) for n, t in zip(n_out, out_types)))  # type: ignore[operator]
    out = float(n_out[0])  # type: ignore[arg-type]
    flops = 0.0
    if cls in ("matmul", "einsum"):
        flops = _matmul_flops(kind, inputs, outputs, op)
        if flops is None:
            return Work(kind, cls, 0.0, 0.0, False)
        return Work(kind, cls, flops, moved, True, _epilogue(op), out)
    elif cls == "conv":
        f = inputs[1] if len(inputs) > 1 else None
        if f is None or len(f) < 3 or any(d < 0 for d in f):
            return Work(kind, cls, 0.0, 0.0, False)
        return Work(kind, cls, 2.0 * out * float(np.prod(f[:-1], dtype=np.int64)), moved, True, _epilogue(op), out)
    elif cls == "depthwise":
        f = inputs[1] if len(inputs) > 1 else None
        if f is None or len(f) != 4 or any(d < 0 for d in f):
            return Work(kind, cls, 0.0, 0.0, False)
        return Work(kind, cls, 2.0 * out * f[0] * f[1], moved, True, _epilogue(op), out)
    elif cls == "pool":
        k = _ints_attr(op, "ksize") or [1, 1, 1, 1]
        flops = out * float(np.prod(k))
    elif cls == "reduction":
        flops = float(n_in[0] or 0)
    elif cls == "batchnorm":
        flops = 2.0 * out
    elif cls in ("elementwise", "transcendental"):
        flops = out * max(1, len([s for s in inputs if s is not None]) - 1)
        if kind in ("Softmax", "LogSoftmax"):
            flops = 4.0 * out
    return Work(kind, cls, flops, moved, True)


def _ints_attr(op: Operation | None, name: str) -> list[int] | None:
    from egraft.ir.core import attributes as A

    a = op.attr(name) if op is not None else None
    if isinstance(a, A.ArrayAttr) and all(isinstance(x, A.IntegerAttr) for x in a.value):
        return [int(x.value) for x in a.value]  # type: ignore[attr-defined]
    return None


def _epilogue(op: Operation | None) -> tuple[str, ...]:
    """The elementwise ops a _Fused* kernel applies per output element (BiasAdd, activation)."""
    from egraft.ir.core import attributes as A

    a = op.attr("fused_ops") if op is not None else None
    if not isinstance(a, A.ArrayAttr):
        return ()
    return tuple(str(x.value) for x in a.value if isinstance(x, A.StringAttr))


#: What each epilogue op of a fused kernel costs like: the standalone op whose calibrated
#: per-element compute rate prices it (GELU exact is an erf and a few multiplies).
EPILOGUE_AS = {"BiasAdd": "BiasAdd", "Relu": "Relu", "Relu6": "Relu6", "LeakyRelu": "Relu", "Elu": "Elu",
               "Tanh": "Tanh", "Sigmoid": "Sigmoid", "GeluExact": "Erf", "GeluApproximate": "Tanh", "Add": "AddV2",
               "FusedBatchNorm": "Mul", "Swish": "Sigmoid", "_MklSwish": "Sigmoid", "Mish": "Tanh"}


def _matmul_flops(kind: str, inputs: list[Shape], outputs: list[Shape], op: Operation | None) -> float | None:
    out = _elements(outputs[0]) if outputs else None
    if out is None:
        return None
    if kind == "Einsum":
        from egraft.ir.core import attributes as A

        eq = op.attr("equation") if op is not None else None
        text = eq.value if isinstance(eq, A.StringAttr) and isinstance(eq.value, str) else ""
        lhs = text.replace(" ", "").split("->")[0].replace("...", "")
        sizes: dict[str, int] = {}
        for term, s in zip(lhs.split(","), inputs):
            if s is None:
                return None
            for c, d in zip(term, s[len(s) - len(term):]):
                if d < 0:
                    return None
                sizes[c] = max(sizes.get(c, 1), d)
        # 2 per multiply-add over every index, times the broadcast (ellipsis) batch
        batch = out / max(1, int(np.prod([sizes[c] for c in text.split("->")[-1] if c in sizes] or [1])))
        return 2.0 * float(np.prod(list(sizes.values()) or [1])) * max(1.0, batch)
    a = inputs[0] if inputs else None
    if a is None or len(a) < 2:
        return None
    if op is None:  # no attributes (an e-graph's node): the contraction size from the shapes
        b = inputs[1] if len(inputs) > 1 else None
        o = outputs[0]
        if kind in ("MatMul", "_FusedMatMul", "_MklMatMul", "_MklFusedMatMul") and b is not None:
            na, nb = _elements(a), _elements(b)
            if na is None or nb is None or out == 0:
                return None
            return 2.0 * out * round(float(np.sqrt(na * nb / out)))
        k = a[-1] if o is not None and len(o) >= 2 and a[-2] == o[-2] else a[-2]
        return 2.0 * out * k if k >= 0 else None
    adj = False
    if op is not None:
        from egraft.ir.core import attributes as A

        flag = op.attr("transpose_a") if kind in ("MatMul", "_FusedMatMul", "_MklMatMul", "_MklFusedMatMul") \
            else op.attr("adj_x")
        adj = isinstance(flag, A.IntegerAttr) and bool(flag.value)
    k = a[-2] if adj else a[-1]
    if k < 0:
        return None
    return 2.0 * out * k


# ----------------------------------------------------------------- the calibrated model

@dataclass(frozen=True, slots=True)
class Coefficients:
    overhead_us: float
    us_per_flop: float
    us_per_byte: float

    def time_us(self, w: Work) -> float:
        return self.overhead_us + w.flops * self.us_per_flop + w.bytes * self.us_per_byte


@dataclass(frozen=True)
class Calibration:
    classes: dict[str, Coefficients]
    kinds: dict[str, Coefficients]
    session_us: float
    meta: dict

    def coefficients(self, kind: str, cls: str) -> Coefficients:
        return self.kinds.get(kind) or self.classes.get(cls) or self.classes["other"]

    def epilogue_us(self, w: Work) -> float:
        """A fused kernel's epilogue: per fused op, its standalone op's calibrated compute
        rate per element (no overhead, no memory traffic: the kernel does both once)."""
        total = 0.0
        for f in w.epilogue:
            kind = EPILOGUE_AS.get(f, "AddV2")
            total += w.out_elements * self.coefficients(kind, op_class(kind)).us_per_flop
        return total

    def time_us(self, w: Work) -> float:
        """Predicted µs of work `w`."""
        return self.coefficients(w.kind, w.cls).time_us(w) + self.epilogue_us(w)


def _coeffs(d: dict) -> Coefficients:
    return Coefficients(float(d["overhead_us"]), float(d["us_per_flop"]), float(d["us_per_byte"]))


#: Used when no calibration file is present: rough figures for a 2-thread AVX-512 CPU.
DEFAULT = Calibration(
    classes={c: Coefficients(3.0, 1 / 40e3, 1 / 8e3) for c in CLASSES} | {"view": Coefficients(1.0, 0.0, 0.0)},
    kinds={}, session_us=50.0, meta={"source": "built-in defaults (no calibration file)"})


@lru_cache(maxsize=4)
def load_calibration(path: str | None = None) -> Calibration:
    p = Path(path) if path else CALIBRATION
    if not p.exists():
        return DEFAULT
    data = json.loads(p.read_text())
    classes = {c: _coeffs(v) for c, v in data["classes"].items()}
    for c in CLASSES:
        classes.setdefault(c, classes.get("elementwise", DEFAULT.classes[c]))
    return Calibration(classes, {k: _coeffs(v) for k, v in data.get("kinds", {}).items()},
                       float(data.get("session_us", 0.0)), data.get("meta", {}))


def op_work(op: Operation, shapes: Shapes | None = None) -> Work | None:
    """The work of a tf.X/tfg.X op (None for anything else)."""
    kind = kind_of(op)
    if kind is None:
        return None
    shapes = shapes if shapes is not None else Shapes()
    operands, results = _data_operands(op), _data_results(op)
    return work(kind, [shapes.shape(v) for v in operands], [shapes.shape(r) for r in results], op,
                [v.type for v in operands], [r.type for r in results])


def op_cost_us(op: Operation, shapes: Shapes | None = None, calibration: Calibration | None = None) -> float:
    """Predicted µs of one tf op on this machine (0 for ops that are not TensorFlow ops)."""
    w = op_work(op, shapes)
    if w is None:
        return 0.0
    cal = calibration or load_calibration()
    return cal.time_us(w)


def ops_cost_us(ops: Iterable[Operation], shapes: Shapes | None = None,
                calibration: Calibration | None = None) -> float:
    """The summed :func:`op_cost_us` of several ops, one Shapes shared (a rewrite's gate:
    what it removes against what it builds). Importable from patterns/ (ir layer)."""
    shapes = shapes if shapes is not None else Shapes()
    return sum(op_cost_us(op, shapes, calibration) for op in ops)


def cost_of_work(w: Work, calibration: Calibration | None = None) -> float:
    cal = calibration or load_calibration()
    return cal.time_us(w)


def kernel_us(kind: str, inputs: list[Shape], outputs: list[Shape] | None = None, *,
              values: list | None = None, n_results: int = 1, op: Operation | None = None,
              calibration: Calibration | None = None) -> float:
    """Predicted µs of an op that does not exist yet: TF op type ``kind`` ("BatchMatMulV2")
    on operands of these shapes; the result shapes come from the shape functions when not
    given (``values``: constant operands such as axes, perms, split sizes; ``op``: an op
    whose attributes to read, e.g. transpose flags or a window).

        kernel_us("BatchMatMulV2", [(1, 128, 256), (256, 768)])
        kernel_us("Split", [(), (1, 128, 768)], values=[-1, None], n_results=3)  # needs num_split: pass op
    """
    if outputs is None:
        from egraft.ir.semantics.tf_shapes import result_shapes

        vals = values or [None] * len(inputs)
        facts = [Facts(s, None if v is None else np.asarray(v)) for s, v in zip(inputs, vals)]
        outputs = result_shapes(kind, op, facts, n_results)
    return cost_of_work(work(kind, list(inputs), list(outputs), op), calibration)


_NOT_RUN = ("Placeholder", "_Arg", "_Retval")
_BRANCHES = {"If": ("then_branch", "else_branch"), "StatelessIf": ("then_branch", "else_branch")}
_LOOPS = {"While": ("cond", "body"), "StatelessWhile": ("cond", "body")}


def graph_ops(root: Operation) -> Iterable[Operation]:
    """The TensorFlow ops under `root` (function bodies included, each once)."""
    for op in root.walk():
        kind = kind_of(op)
        if kind is not None and kind not in _NOT_RUN:
            yield op


def entry_points(root: Operation) -> list[Operation]:
    """What one run executes from: a GraphDef's `tfg.graph`, else the function `main`, else
    (a library alone) every function."""
    graphs = [op for op in root.walk() if op.name == "tfg.graph"]
    if graphs:
        return graphs
    mains = [op for op in root.walk() if op.name == "func.func" and getattr(op.attr("sym_name"), "value", None) == "main"]
    return mains or [root]


def _rows_of(container: Operation, shapes: Shapes, cal: Calibration, out: dict[str, dict], calls: bool,
             keep: set[Operation] | None = None) -> None:
    for op in container.walk():
        kind = kind_of(op)
        if kind is None or kind in _NOT_RUN or (keep is not None and op not in keep):
            continue
        w = op_work(op, shapes)
        if w is not None:
            _add(out, w.cls, 1, cal.time_us(w), 0 if w.known else 1)
        if not calls:
            continue
        if kind in ("PartitionedCall", "StatefulPartitionedCall"):
            _add_callee(op, "f", shapes, cal, out)
        elif kind in _LOOPS:  # one iteration: the trip count is not static
            for attr in _LOOPS[kind]:
                _add_callee(op, attr, shapes, cal, out)
        elif kind in _BRANCHES:  # the costlier branch
            options = []
            for attr in _BRANCHES[kind]:
                rows: dict[str, dict] = {}
                _add_callee(op, attr, shapes, cal, rows)
                options.append(rows)
            worst = max(options, key=lambda r: sum(x["us"] for x in r.values()))
            for cls, r in worst.items():
                _add(out, cls, r["ops"], r["us"], r["unknown"])


def _add(out: dict[str, dict], cls: str, ops: int, us: float, unknown: int) -> None:
    row = out.setdefault(cls, {"ops": 0, "us": 0.0, "unknown": 0})
    row["ops"] += ops
    row["us"] += us
    row["unknown"] += unknown


def _add_callee(op: Operation, attr: str, shapes: Shapes, cal: Calibration, out: dict[str, dict]) -> None:
    func = shapes.callee(op, attr)
    child = shapes.at_call(op, func) if func is not None else None
    if func is not None and child is not None:
        _rows_of(func, child, cal, out, True)


def needed_ops(graph: Operation, fetches: Iterable[str]) -> set[Operation]:
    """The ops of a `tfg.graph` a run fetching `fetches` ("name" or "name:0") executes:
    everything they depend on through data and control operands."""
    by_name = {}
    for op in graph.walk():
        name = getattr(op.attr("_mlir_name"), "value", None)
        if name is not None:
            by_name[str(name)] = op
    stack = [by_name[f.split(":")[0]] for f in fetches if f.split(":")[0] in by_name]
    seen: set[Operation] = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(v.owner for v in op.operands if isinstance(getattr(v, "owner", None), Operation))
    return seen


def predict_breakdown(root: Operation, calibration: Calibration | None = None, *,
                      fetches: Iterable[str] | None = None, feed_dim: int | None = None) -> dict[str, dict]:
    """Per op class: {'ops', 'us', 'unknown'} (ops whose shapes were not static). The ops of
    one run: from the entry points (:func:`entry_points`; with ``fetches``, a GraphDef's
    nodes they need, as Session.run prunes: a SavedModel's save/restore nodes do not run),
    a called function's body at each call with that call's shapes, a loop's body once, an
    `If`'s costlier branch. ``feed_dim``: the size of the fed tensors' unknown dims (batch)."""
    cal = calibration or load_calibration()
    shapes = Shapes(feed_dim=feed_dim)
    out: dict[str, dict] = {}
    for entry in entry_points(root):
        if fetches is not None and entry.name == "tfg.graph":
            keep = needed_ops(entry, list(fetches))
            _rows_of(entry, shapes, cal, out, True, keep)
            continue
        if entry is root:  # no graph and no main: every function once, with what its own types say
            for op in graph_ops(root):
                w = op_work(op, shapes)
                if w is not None:
                    _add(out, w.cls, 1, cal.time_us(w), 0 if w.known else 1)
        else:
            _rows_of(entry, shapes, cal, out, True)
    return out


def predict_ms(root: Operation, calibration: Calibration | None = None, *,
               fetches: Iterable[str] | None = None, feed_dim: int | None = None) -> float:
    """Predicted ms of one Session.run of the graph under `root`: the serial sum of its ops'
    predicted times plus the session's fixed cost (see the module doc for what that ignores)."""
    cal = calibration or load_calibration()
    us = sum(row["us"] for row in predict_breakdown(root, cal, fetches=fetches, feed_dim=feed_dim).values())
    return (us + cal.session_us) / 1e3


__all__ = ["CALIBRATION", "CLASSES", "Calibration", "Coefficients", "Facts", "Work", "cost_of_work", "graph_ops",
           "kernel_us", "load_calibration", "ops_cost_us", "op_class", "op_cost_us", "op_work", "predict_breakdown", "predict_ms", "work"]
