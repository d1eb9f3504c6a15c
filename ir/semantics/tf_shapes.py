"""Static shapes of TensorFlow ops: a shape function per op, and a demand-driven analysis.

    from egraft.ir.semantics.tf_shapes import Shapes, refine_types
    shapes = Shapes()                  # one per analysis; memoised per Value
    shapes.shape(value)                # (1, 128, 768), (-1, 10) or None (rank unknown)
    shapes.facts(value).value          # the constant value of small integer tensors (shape arithmetic)
    shapes.op_shapes(op)               # ([operand shapes], [result shapes]) of one tf op
    refine_types(func_op)              # what `tf-shape-inference` does: result types refined in place

A shape is a tuple of dims (``-1`` for a dimension not known statically) or None when not
even the rank is known. The analysis works on both forms egraft has of a TensorFlow graph:
``tf.X`` ops (functional or inside ``tf_executor.island``, seen through islands' yields and
graphs' fetches) and ``tfg.X`` ops (a GraphDef as imported; control operands are ignored),
and on ops a rule has just built: a value's shape is computed on demand from its producer's
operands, recursively (an explicit stack, no Python recursion), and memoised.

A shape function gets an op's attributes and its operands' facts (shape, and the value of
small constant integer tensors: Const, Shape, and the shape arithmetic graphs compute with
(StridedSlice, Pack, ConcatV2, Cast, Gather, Prod, ...) through the reference interpreter's
evaluators). What it cannot know it leaves unknown (a dim -1, or the rank None): it is never
wrong on a graph TensorFlow accepts. An op without a shape function keeps its declared type.
Semantics are TensorFlow's op definitions' shape functions (read, not copied).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import BlockArgument, Operation, OpResult, Value

Shape = tuple[int, ...] | None
"""Dims (-1 unknown), or None: rank unknown."""

VALUE_LIMIT = 64
"""Constant values are tracked for integer tensors of at most this many elements (shapes,
axes, perms, sizes) and for float scalars; weights are not copied around."""


@dataclass(frozen=True, slots=True)
class Facts:
    """What is known statically about one tensor."""

    shape: Shape
    value: np.ndarray | None = None
    handle: Shape = None   # a resource handle's variable shape (VarHandleOp's `shape`), None: unknown

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def elements(self) -> int | None:
        """Static element count, None when a dim is unknown."""
        if self.shape is None or any(d < 0 for d in self.shape):
            return None
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1


UNKNOWN = Facts(None)


def shape_of_type(t: T.Type) -> Shape:
    shape = getattr(t, "shape", None)
    return None if shape is None else tuple(int(d) for d in shape)


def merge(a: Shape, b: Shape) -> Shape:
    """The more precise of two descriptions of one tensor (a's dims where they conflict)."""
    if a is None:
        return b
    if b is None or len(a) != len(b):
        return a
    return tuple(x if x >= 0 else y for x, y in zip(a, b))


def broadcast(*shapes: Shape) -> Shape:
    """numpy/TF broadcasting of partially known shapes; None when a rank is unknown or the
    shapes cannot broadcast (TF would fail: nothing to say)."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)  # type: ignore[arg-type]
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]  # type: ignore[arg-type]
        known = {d for d in dims if d > 1}
        if len(known) > 1:
            return None
        if known:
            out.append(known.pop())
        elif any(d < 0 for d in dims):
            out.append(-1)
        elif any(d == 0 for d in dims):
            out.append(0)
        else:
            out.append(1)
    return tuple(out)


# ----------------------------------------------------------------- attribute readers

class Node:
    """What a shape function sees: the op's kind (TF's name), attributes and operands."""

    __slots__ = ("kind", "op", "inputs", "n_results")

    def __init__(self, kind: str, op: Operation | None, inputs: Sequence[Facts], n_results: int) -> None:
        self.kind = kind
        self.op = op
        self.inputs = list(inputs)
        self.n_results = n_results

    def attr(self, name: str) -> A.Attribute | None:
        return None if self.op is None else self.op.attr(name)

    def int(self, name: str, default: int = 0) -> int:
        a = self.attr(name)
        return int(a.value) if isinstance(a, A.IntegerAttr) else default

    def bool(self, name: str, default: bool = False) -> bool:
        a = self.attr(name)
        return bool(a.value) if isinstance(a, A.IntegerAttr) else default

    def str(self, name: str, default: str = "") -> str:
        a = self.attr(name)
        if isinstance(a, A.StringAttr):
            return a.value if isinstance(a.value, str) else a.value.decode()
        return default

    def ints(self, name: str) -> list[int] | None:
        a = self.attr(name)
        if isinstance(a, A.ArrayAttr) and all(isinstance(x, A.IntegerAttr) for x in a.value):
            return [int(x.value) for x in a.value]  # type: ignore[attr-defined]
        if isinstance(a, A.DenseArrayAttr):
            return [int(x) for x in a.values] if hasattr(a, "values") else None
        return None

    def shape(self, i: int) -> Shape:
        return self.inputs[i].shape if i < len(self.inputs) else None

    def value(self, i: int) -> np.ndarray | None:
        return self.inputs[i].value if i < len(self.inputs) else None

    def rank_of_shape_operand(self, i: int) -> Shape:
        """All dims unknown, of the rank operand i (a shape, perm or paddings) gives, if static."""
        s = self.shape(i)
        return None if s is None or len(s) < 1 or s[0] < 0 else (-1,) * s[0]

    def int_list(self, i: int) -> list[int] | None:
        """Operand i's constant value as a flat list of ints (a scalar is a list of one)."""
        v = self.value(i)
        if v is None or v.dtype.kind not in "iub":
            return None
        return [int(x) for x in np.ravel(v)]


ShapeFn = Callable[[Node], "list[Shape] | None"]
SHAPE_FNS: dict[str, ShapeFn] = {}


def shape_fn(*kinds: str) -> Callable[[ShapeFn], ShapeFn]:
    def register(fn: ShapeFn) -> ShapeFn:
        for k in kinds:
            SHAPE_FNS[k] = fn
        return fn
    return register


def _norm_axis(axis: int, rank: int) -> int | None:
    if -rank <= axis < rank:
        return axis % rank
    return None


# ----------------------------------------------------------------- elementwise

UNARY = (
    "Identity", "Snapshot", "StopGradient", "PreventGradient", "CheckNumerics", "Cast", "ZerosLike", "OnesLike",
    "Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Expm1", "Log", "Log1p", "Sqrt",
    "Rsqrt", "Square", "Neg", "Abs", "Sign", "Reciprocal", "Inv", "Floor", "Ceil", "Round", "Rint", "Erf",
    "Erfc", "Softplus", "Softsign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
    "Acosh", "Atanh", "LogicalNot", "IsNan", "IsInf", "IsFinite", "Softmax", "LogSoftmax", "LRN", "Gelu",
    "_MklSwish", "Swish", "Mish", "_MklFusedMish", "Invert", "Conj", "Real", "Imag", "Digamma", "Lgamma",
    "Cumsum", "Cumprod", "MatrixBandPart", "ClipByValue", "Relu6Grad", "ReluGrad", "HardSwish", "Bitcast_same",
    "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars", "DebugIdentity", "Enter", "Exit", "NextIteration", "RefIdentity",
    "PlaceholderWithDefault", "EnsureShape",
)

BINARY = (
    "Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "DivNoNan", "MulNoNan", "FloorDiv", "FloorMod", "Mod",
    "TruncateDiv", "TruncateMod", "Maximum", "Minimum", "Pow", "SquaredDifference", "Equal", "NotEqual",
    "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr", "Atan2", "Xdivy", "Xlogy",
    "Xlog1py", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift", "SigmoidGrad", "TanhGrad",
    "RsqrtGrad", "SqrtGrad", "ReciprocalGrad", "BiasAddGrad_", "ApproximateEqual", "SelectV2",
)


@shape_fn(*UNARY)
def _unary(n: Node) -> list[Shape]:
    s = n.shape(0)
    if n.kind == "EnsureShape" or n.kind == "PlaceholderWithDefault":
        s = merge(s, _shape_attr(n.attr("shape")))
    if n.kind == "ClipByValue":
        s = merge(s, broadcast(n.shape(0), n.shape(1), n.shape(2)))
    return [s]


@shape_fn(*BINARY)
def _binary(n: Node) -> list[Shape]:
    return [broadcast(*(f.shape for f in n.inputs))]


@shape_fn("AddN", "_MklAddN")
def _addn(n: Node) -> list[Shape]:
    out: Shape = None
    for f in n.inputs:
        out = merge(out, f.shape)
    return [out]


@shape_fn("Select")
def _select(n: Node) -> list[Shape]:
    return [merge(n.shape(1), n.shape(2))]


@shape_fn("BiasAdd", "BiasAddV1")
def _bias_add(n: Node) -> list[Shape]:
    s, b = n.shape(0), n.shape(1)
    if s is None or b is None or len(b) != 1 or len(s) < 2:
        return [s]
    c = 1 if n.str("data_format", "NHWC") == "NCHW" else len(s) - 1
    return [s[:c] + (s[c] if s[c] >= 0 else b[0],) + s[c + 1:]]


# ----------------------------------------------------------------- constants, arguments, shape ops

_SHAPE_BODY = re.compile(r"^shape<(.*)>$")


def _shape_attr(a: A.Attribute | None) -> Shape:
    """TF's shape attribute: `#tf_type.shape<1x?x3>` / `#tf_type.shape<*>` (or a type)."""
    if isinstance(a, A.TypeAttr):
        return shape_of_type(a.value)
    body = getattr(a, "body", None)
    if not isinstance(body, str):
        return None
    m = _SHAPE_BODY.match(body.strip())
    if m is None or m.group(1) == "*":
        return None
    if m.group(1) == "":
        return ()
    try:
        return tuple(-1 if d == "?" else int(d) for d in m.group(1).split("x"))
    except ValueError:
        return None


@shape_fn("Placeholder")
def _placeholder(n: Node) -> list[Shape]:
    return [_shape_attr(n.attr("shape"))]


@shape_fn("Const")
def _const(n: Node) -> list[Shape]:
    a = n.attr("value")
    return [shape_of_type(a.type) if isinstance(a, (A.DenseElementsAttr, A.DenseResourceAttr)) else None]


@shape_fn("Shape")
def _shape(n: Node) -> list[Shape]:
    s = n.shape(0)
    return [None if s is None else (len(s),)]


@shape_fn("ShapeN")
def _shape_n(n: Node) -> list[Shape]:
    return [None if f.shape is None else (len(f.shape),) for f in n.inputs]


@shape_fn("Size", "Rank")
def _scalar(n: Node) -> list[Shape]:
    return [()]


@shape_fn("Fill", "BroadcastTo", "Zeros", "Empty")
def _from_dims(n: Node) -> list[Shape]:
    i = 1 if n.kind == "BroadcastTo" else 0
    dims = n.int_list(i)
    if dims is not None:
        return [tuple(dims)]
    return [n.rank_of_shape_operand(i)]


@shape_fn("Range")
def _range(n: Node) -> list[Shape]:
    vals = [n.value(i) for i in range(3)]
    if any(v is None or v.size != 1 for v in vals):
        return [(-1,)]
    start, limit, delta = (float(np.ravel(v)[0]) for v in vals)  # type: ignore[union-attr]
    if delta == 0:
        return [(-1,)]
    return [(max(0, int(np.ceil((limit - start) / delta))),)]


# ----------------------------------------------------------------- linear algebra

@shape_fn("MatMul", "_FusedMatMul", "_MklMatMul", "_MklFusedMatMul")
def _matmul(n: Node) -> list[Shape]:
    a, b = n.shape(0), n.shape(1)
    m = k1 = k2 = nn = -1
    if a is not None:
        if len(a) != 2:
            return [None]
        m, k1 = (a[1], a[0]) if n.bool("transpose_a") else a
    if b is not None:
        if len(b) != 2:
            return [None]
        k2, nn = (b[1], b[0]) if n.bool("transpose_b") else b
    return [(m, nn)]


@shape_fn("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "_MklBatchMatMul", "_MklBatchMatMulV2",
          "_FusedBatchMatMulV2")
def _batch_matmul(n: Node) -> list[Shape]:
    a, b = n.shape(0), n.shape(1)
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return [None]
    m = a[-1] if n.bool("adj_x") else a[-2]
    nn = b[-2] if n.bool("adj_y") else b[-1]
    batch = broadcast(a[:-2], b[:-2])
    if batch is None:
        return [None]
    return [batch + (m, nn)]


@shape_fn("Einsum")
def _einsum(n: Node) -> list[Shape]:
    eq = n.str("equation").replace(" ", "")
    if "->" not in eq:
        return [None]
    lhs, out = eq.split("->")
    terms = lhs.split(",")
    if len(terms) != len(n.inputs):
        return [None]
    dims: dict[str, int] = {}
    ellipsis: list[Shape] = []
    for term, f in zip(terms, n.inputs):
        s = f.shape
        if s is None:
            if "..." in term:
                ellipsis.append(None)
            continue
        letters = term.replace("...", "")
        if "..." in term:
            n_ell = len(s) - len(letters)
            if n_ell < 0:
                return [None]
            pre = term.index("...")
            ellipsis.append(s[pre:pre + n_ell])
            s = s[:pre] + s[pre + n_ell:]
        elif len(s) != len(term):
            return [None]
        for c, d in zip(letters, s):
            if d > 1 or (d >= 0 and dims.get(c, -1) < 0) or c not in dims:
                if d == 1 and dims.get(c, -1) > 1:
                    continue
                dims[c] = d if d >= 0 or c not in dims else dims[c]
    ell = broadcast(*ellipsis) if ellipsis else ()
    result: list[int] = []
    if "..." in out:
        if ell is None:
            return [None]
        pre, post = out.split("...")
        return [tuple(dims.get(c, -1) for c in pre) + ell + tuple(dims.get(c, -1) for c in post)]
    result = [dims.get(c, -1) for c in out]
    return [tuple(result)]


# ----------------------------------------------------------------- convolutions and pools

def _spatial_out(size: int, window: int, stride: int, dilation: int, padding: str,
                 pad: tuple[int, int] = (0, 0)) -> int:
    if size < 0:
        return -1
    if padding == "SAME":
        return -(-size // stride)
    if window < 0:
        return -1
    eff = (window - 1) * dilation + 1
    if padding == "VALID":
        return max(0, -(-(size - eff + 1) // stride))
    if padding == "EXPLICIT":
        return max(0, (size + pad[0] + pad[1] - eff) // stride + 1)
    return -1


def _layout(fmt: str, rank: int) -> tuple[int, list[int], int] | None:
    """(batch axis, spatial axes, channel axis) of NHWC/NCHW/NDHWC/NCDHW."""
    if fmt.startswith("NC"):
        return 0, list(range(2, rank)), 1
    if fmt.startswith("N") and fmt.endswith("C"):
        return 0, list(range(1, rank - 1)), rank - 1
    return None


def _conv_like(n: Node, x: Shape, windows: list[int] | None, out_channels: int | None) -> Shape:
    """Output shape of a convolution or pool over `x` with per-spatial-axis `windows`."""
    rank = 5 if n.kind.startswith("Conv3D") or n.kind.endswith("3D") else 4
    if x is None:
        return None
    if len(x) != rank:
        return None
    lay = _layout(n.str("data_format", "NHWC" if rank == 4 else "NDHWC"), rank)
    if lay is None:
        return None
    b, spatial, c = lay
    strides = n.ints("strides") or [1] * rank
    if n.kind == "MaxPoolV2":
        strides = n.int_list(2) or [-1] * rank
    dil = n.ints("dilations") or [1] * rank
    if len(strides) != rank or len(dil) != rank:
        return None
    padding = n.str("padding", "VALID")
    explicit = n.ints("explicit_paddings") or []
    out = list(x)
    out[c] = -1 if out_channels is None else out_channels
    for j, ax in enumerate(spatial):
        w = windows[j] if windows is not None else -1
        pad = (explicit[2 * ax], explicit[2 * ax + 1]) if len(explicit) == 2 * rank else (0, 0)
        if strides[ax] <= 0:
            out[ax] = -1
        else:
            out[ax] = _spatial_out(x[ax], w, strides[ax], dil[ax], padding, pad)
    return tuple(out)


@shape_fn("Conv2D", "_FusedConv2D", "_MklConv2D", "_MklFusedConv2D", "Conv3D", "_MklNativeConv2D",
          "_MklNativeFusedConv2D")
def _conv(n: Node) -> list[Shape]:
    f = n.shape(1)
    rank = 5 if "3D" in n.kind else 4
    if f is not None and len(f) != rank:
        return [None]
    windows = list(f[:-2]) if f is not None else None
    return [_conv_like(n, n.shape(0), windows, f[-1] if f is not None and f[-1] >= 0 else None)]


@shape_fn("DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative", "_MklDepthwiseConv2dNative",
          "_MklFusedDepthwiseConv2dNative")
def _depthwise(n: Node) -> list[Shape]:
    f = n.shape(1)
    if f is not None and len(f) != 4:
        return [None]
    x = n.shape(0)
    cin = f[2] if f is not None and f[2] >= 0 else (x[-1] if x is not None and len(x) == 4 and
                                                    n.str("data_format", "NHWC") == "NHWC" else
                                                    x[1] if x is not None and len(x) == 4 else -1)
    ch = cin * f[3] if f is not None and cin >= 0 and f[3] >= 0 else None
    return [_conv_like(n, x, list(f[:2]) if f is not None else None, ch)]


@shape_fn("MaxPool", "AvgPool", "MaxPoolV2", "MaxPool3D", "AvgPool3D", "_MklMaxPool", "_MklAvgPool")
def _pool(n: Node) -> list[Shape]:
    x = n.shape(0)
    rank = 5 if "3D" in n.kind else 4
    k = n.int_list(1) if n.kind == "MaxPoolV2" else n.ints("ksize")
    if x is None or k is None or len(k) != rank:
        return [None] if x is None else [_conv_like(n, x, None, x[_layout(n.str("data_format", "NHWC"), rank)[2]]
                                                    if _layout(n.str("data_format", "NHWC"), rank) and len(x) == rank
                                                    else None)]
    lay = _layout(n.str("data_format", "NHWC" if rank == 4 else "NDHWC"), rank)
    if lay is None or len(x) != rank:
        return [None]
    if k[lay[0]] != 1 or k[lay[2]] != 1:
        return [None]
    windows = [k[a] for a in lay[1]]
    return [_conv_like(n, x, windows, x[lay[2]] if x[lay[2]] >= 0 else None)]


@shape_fn("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3", "_FusedBatchNormEx", "_MklFusedBatchNorm",
          "_MklFusedBatchNormV3")
def _fused_batch_norm(n: Node) -> list[Shape]:
    x = n.shape(0)
    lay = _layout(n.str("data_format", "NHWC"), len(x)) if x is not None and len(x) >= 3 else None
    ch = -1
    for i in range(1, 5):
        s = n.shape(i)
        if s is not None and len(s) == 1 and s[0] >= 0:
            ch = s[0]
    if x is not None and lay is not None and x[lay[2]] >= 0:
        ch = x[lay[2]]
    if x is not None and lay is not None:
        x = x[:lay[2]] + (ch,) + x[lay[2] + 1:]
    out: list[Shape] = [x] + [(ch,)] * 4
    if n.n_results > 5:
        out.append(None)  # reserve_space_3: TF's shape function leaves it unknown
    return out[:n.n_results]


# ----------------------------------------------------------------- data movement

@shape_fn("Reshape", "_MklReshape")
def _reshape(n: Node) -> list[Shape]:
    x = n.inputs[0] if n.inputs else UNKNOWN
    dims = n.int_list(1)
    if dims is None:
        return [n.rank_of_shape_operand(1)]
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        return [None]
    if -1 in dims:
        total = x.elements
        known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
        if total is not None and known > 0 and total % known == 0:
            dims[dims.index(-1)] = total // known
    return [tuple(dims)]


@shape_fn("Transpose", "ConjugateTranspose", "_MklTranspose")
def _transpose(n: Node) -> list[Shape]:
    x = n.shape(0)
    perm = n.int_list(1)
    if perm is None:
        return [(-1,) * len(x) if x is not None else n.rank_of_shape_operand(1)]
    if x is None:
        return [(-1,) * len(perm)]
    if sorted(p % len(x) if len(x) else p for p in perm) != list(range(len(x))):
        return [None]
    return [tuple(x[p % len(x)] for p in perm)]


def _concat(n: Node, values: list[Facts], axis: int | None) -> Shape:
    rank = next((len(f.shape) for f in values if f.shape is not None), None)
    if rank is None:
        return None
    if axis is None or rank == 0:
        return (-1,) * rank
    ax = _norm_axis(axis, rank)
    if ax is None:
        return None
    out = [-1] * rank
    total = 0
    for f in values:
        if f.shape is None:
            total = -1
            continue
        if len(f.shape) != rank:
            return None
        for i, d in enumerate(f.shape):
            if i != ax and d >= 0:
                out[i] = d
        if total >= 0:
            total = total + f.shape[ax] if f.shape[ax] >= 0 else -1
    out[ax] = total
    return tuple(out)


@shape_fn("ConcatV2", "_MklConcatV2")
def _concat_v2(n: Node) -> list[Shape]:
    axis = n.int_list(len(n.inputs) - 1)
    return [_concat(n, n.inputs[:-1], axis[0] if axis and len(axis) == 1 else None)]


@shape_fn("Concat", "_MklConcat")
def _concat_v1(n: Node) -> list[Shape]:
    axis = n.int_list(0)
    return [_concat(n, n.inputs[1:], axis[0] if axis and len(axis) == 1 else None)]


@shape_fn("Split")
def _split(n: Node) -> list[Shape]:
    x = n.shape(1)
    axis = n.int_list(0)
    k = n.int("num_split", n.n_results)
    if x is None:
        return [None] * n.n_results
    if axis is None or len(axis) != 1:
        return [(-1,) * len(x)] * n.n_results
    ax = _norm_axis(axis[0], len(x))
    if ax is None or k <= 0:
        return [None] * n.n_results
    d = x[ax] // k if x[ax] >= 0 and x[ax] % k == 0 else -1
    return [x[:ax] + (d,) + x[ax + 1:]] * n.n_results


@shape_fn("SplitV")
def _split_v(n: Node) -> list[Shape]:
    x = n.shape(0)
    sizes = n.int_list(1)
    axis = n.int_list(2)
    if x is None:
        return [None] * n.n_results
    if axis is None or len(axis) != 1:
        return [(-1,) * len(x)] * n.n_results
    ax = _norm_axis(axis[0], len(x))
    if ax is None:
        return [None] * n.n_results
    if sizes is None or len(sizes) != n.n_results or sizes.count(-1) > 1:
        return [x[:ax] + (-1,) + x[ax + 1:]] * n.n_results
    if -1 in sizes:
        rest = x[ax] - sum(s for s in sizes if s != -1) if x[ax] >= 0 else -1
        sizes[sizes.index(-1)] = rest if rest >= 0 else -1
    return [x[:ax] + (s,) + x[ax + 1:] for s in sizes]


@shape_fn("Pack")
def _pack(n: Node) -> list[Shape]:
    s: Shape = None
    for f in n.inputs:
        s = merge(s, f.shape)
    if s is None:
        return [None]
    ax = _norm_axis(n.int("axis"), len(s) + 1)
    if ax is None:
        return [None]
    return [s[:ax] + (len(n.inputs),) + s[ax:]]


@shape_fn("Unpack")
def _unpack(n: Node) -> list[Shape]:
    x = n.shape(0)
    if x is None:
        return [None] * n.n_results
    ax = _norm_axis(n.int("axis"), len(x))
    if ax is None:
        return [None] * n.n_results
    return [x[:ax] + x[ax + 1:]] * n.n_results


@shape_fn("Squeeze")
def _squeeze(n: Node) -> list[Shape]:
    x = n.shape(0)
    dims = n.ints("squeeze_dims") or n.ints("axis") or []
    if x is None:
        return [None]
    if not dims:
        if any(d < 0 for d in x):
            return [None]
        return [tuple(d for d in x if d != 1)]
    axes = {_norm_axis(d, len(x)) for d in dims}
    if None in axes:
        return [None]
    return [tuple(d for i, d in enumerate(x) if i not in axes)]


@shape_fn("ExpandDims")
def _expand_dims(n: Node) -> list[Shape]:
    x = n.shape(0)
    axis = n.int_list(1)
    if x is None:
        return [None]
    if axis is None or len(axis) != 1:
        return [(-1,) * (len(x) + 1)]
    ax = _norm_axis(axis[0], len(x) + 1)
    if ax is None:
        return [None]
    return [x[:ax] + (1,) + x[ax:]]


REDUCTIONS = ("Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm", "_MklMean")


@shape_fn(*REDUCTIONS)
def _reduce(n: Node) -> list[Shape]:
    x = n.shape(0)
    axes = n.int_list(1)
    keep = n.bool("keep_dims")
    if x is None:
        return [None]
    if axes is None:
        return [(-1,) * len(x) if keep or not x else None]
    if len(x) == 0:
        return [()]
    norm = {_norm_axis(a, len(x)) for a in axes}
    if None in norm:
        return [None]
    if keep:
        return [tuple(1 if i in norm else d for i, d in enumerate(x))]
    return [tuple(d for i, d in enumerate(x) if i not in norm)]


@shape_fn("ArgMax", "ArgMin")
def _arg_reduce(n: Node) -> list[Shape]:
    x = n.shape(0)
    axis = n.int_list(1)
    if x is None:
        return [None]
    if axis is None or len(axis) != 1 or not x:
        return [(-1,) * max(len(x) - 1, 0)]
    ax = _norm_axis(axis[0], len(x))
    return [None if ax is None else x[:ax] + x[ax + 1:]]


@shape_fn("Pad", "PadV2", "MirrorPad")
def _pad(n: Node) -> list[Shape]:
    x = n.shape(0)
    pads = n.int_list(1)
    if x is None:
        return [n.rank_of_shape_operand(1)]
    if pads is None or len(pads) != 2 * len(x):
        return [(-1,) * len(x)]
    return [tuple(d + pads[2 * i] + pads[2 * i + 1] if d >= 0 else -1 for i, d in enumerate(x))]


@shape_fn("Tile")
def _tile(n: Node) -> list[Shape]:
    x = n.shape(0)
    m = n.int_list(1)
    if x is None:
        return [None if m is None else (-1,) * len(m)]
    if m is None or len(m) != len(x):
        return [(-1,) * len(x)]
    return [tuple(d * k if d >= 0 else -1 for d, k in zip(x, m))]


@shape_fn("Slice")
def _slice(n: Node) -> list[Shape]:
    x = n.shape(0)
    begin, size = n.int_list(1), n.int_list(2)
    if size is None:
        return [n.rank_of_shape_operand(2)]
    out = []
    for i, k in enumerate(size):
        if k >= 0:
            out.append(k)
        elif k == -1 and x is not None and begin is not None and i < len(x) and x[i] >= 0 and i < len(begin):
            out.append(x[i] - begin[i])
        else:
            out.append(-1)
    return [tuple(out)]


@shape_fn("StridedSlice")
def _strided_slice(n: Node) -> list[Shape]:
    x = n.shape(0)
    spec = [n.int_list(i) for i in (1, 2, 3)]
    if x is None or any(s is None for s in spec) or n.op is None:
        return [None]
    from egraft.ir.semantics.tf_shape import _slice_index  # TF's sparse slice spec, as the interpreter reads it

    known = tuple(d if d >= 0 else 1 for d in x)
    try:
        index = _slice_index(n.op, len(x), *spec)  # type: ignore[arg-type]
        out = np.broadcast_to(np.empty((), dtype=np.bool_), known)[index].shape
    except Exception:
        return [None]
    if all(d >= 0 for d in x):
        return [tuple(out)]
    # dims of unknown size: find which outputs they map to by slicing a shape with a distinct size there
    probe = tuple(d if d >= 0 else 1000003 for d in x)
    try:
        out2 = np.broadcast_to(np.empty((), dtype=np.bool_), probe)[_slice_index(n.op, len(x), *spec)].shape  # type: ignore[arg-type]
    except Exception:
        return [None]
    if len(out2) != len(out):
        return [None]
    return [tuple(a if a == b else -1 for a, b in zip(out, out2))]


@shape_fn("Gather", "GatherV2", "ResourceGather_")
def _gather(n: Node) -> list[Shape]:
    params, idx = n.shape(0), n.shape(1)
    if n.kind == "Gather":
        axis: list[int] | None = [0]
    else:
        axis = n.int_list(2)
    batch = n.int("batch_dims")
    if params is None or idx is None:
        return [None]
    if axis is None or len(axis) != 1:
        return [None]
    ax = _norm_axis(axis[0], len(params))
    if ax is None:
        return [None]
    if batch < 0:
        batch += len(idx)
    return [params[:ax] + idx[batch:] + params[ax + 1:]]


@shape_fn("OneHot")
def _one_hot(n: Node) -> list[Shape]:
    idx = n.shape(0)
    depth = n.int_list(1)
    if idx is None:
        return [None]
    d = depth[0] if depth and len(depth) == 1 else -1
    ax = n.int("axis", -1)
    ax = len(idx) if ax == -1 else ax
    if not 0 <= ax <= len(idx):
        return [None]
    return [idx[:ax] + (d,) + idx[ax:]]


@shape_fn("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea")
def _resize(n: Node) -> list[Shape]:
    x = n.shape(0)
    size = n.int_list(1)
    if x is None or len(x) != 4:
        return [None] if x is None else [None]
    hw = tuple(size) if size is not None and len(size) == 2 else (-1, -1)
    return [(x[0],) + hw + (x[3],)]


@shape_fn("DepthToSpace", "SpaceToDepth")
def _depth_space(n: Node) -> list[Shape]:
    x = n.shape(0)
    b = n.int("block_size", 0)
    if x is None or len(x) != 4 or b <= 0 or n.str("data_format", "NHWC") != "NHWC":
        return [None if x is None else (-1,) * len(x)]
    N, H, W, C = x
    if n.kind == "DepthToSpace":
        return [(N, H * b if H >= 0 else -1, W * b if W >= 0 else -1, C // (b * b) if C >= 0 else -1)]
    return [(N, H // b if H >= 0 else -1, W // b if W >= 0 else -1, C * b * b if C >= 0 else -1)]


@shape_fn("TopKV2")
def _top_k(n: Node) -> list[Shape]:
    x = n.shape(0)
    k = n.int_list(1)
    if x is None or not x:
        return [None, None]
    s = x[:-1] + (k[0] if k and len(k) == 1 else -1,)
    return [s, s]


@shape_fn("Switch", "RefSwitch")
def _switch(n: Node) -> list[Shape]:
    return [n.shape(0)] * n.n_results


@shape_fn("Merge", "RefMerge")
def _merge(n: Node) -> list[Shape]:
    """Whatever input is taken: dims all inputs agree on (an input of unknown rank, as a
    loop's back edge is here, leaves the rank unknown)."""
    shapes = [f.shape for f in n.inputs]
    if not shapes or any(s is None for s in shapes) or len({len(s) for s in shapes}) != 1:  # type: ignore[arg-type]
        out: Shape = None
    else:
        out = tuple(col[0] if len(set(col)) == 1 else -1 for col in zip(*shapes))  # type: ignore[misc]
        if not shapes[0]:
            out = ()
    return [out, ()][:n.n_results]


@shape_fn("LoopCond")
def _loop_cond(n: Node) -> list[Shape]:
    return [merge(n.shape(0), ())]


@shape_fn("If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase")
def _functional(n: Node) -> list[Shape]:
    """Functional control flow: the op's own `output_shapes` when it has one per result
    (TensorFlow's shape functions read it too); else unknown (a loop is not assumed to keep
    its shapes, branches are not inferred)."""
    a = n.attr("output_shapes")
    if isinstance(a, A.ArrayAttr) and len(a.value) == n.n_results:
        return [_shape_attr(x) for x in a.value]
    return [None] * n.n_results


@shape_fn("IdentityN")
def _identity_n(n: Node) -> list[Shape]:
    return [f.shape for f in n.inputs][:n.n_results]


# ----------------------------------------------------------------- values (shape arithmetic)

VALUE_KINDS = {
    "Identity", "Snapshot", "StopGradient", "Cast", "Pack", "ConcatV2", "StridedSlice", "Slice", "Gather",
    "GatherV2", "Prod", "Sum", "Max", "Min", "Add", "AddV2", "Sub", "Mul", "FloorDiv", "RealDiv", "Div",
    "Maximum", "Minimum", "Reshape", "Squeeze", "ExpandDims", "Range", "Fill", "Neg", "FloorMod", "Equal",
    "Transpose", "Tile", "Unpack", "Select", "SelectV2", "Size", "Rank", "Shape",
}


def _own_value(n: Node, shapes: list[Shape], dtypes: list[T.Type | None]) -> list[np.ndarray | None] | None:
    """Values this module computes itself (no interpreter needed)."""
    if n.kind == "Const":
        a = n.attr("value")
        if isinstance(a, A.DenseElementsAttr) and isinstance(a.type, T.ShapedType) and a.type.has_static_shape:
            et = a.type.element_type
            small_int = isinstance(et, (T.IntegerType, T.IndexType)) and a.type.num_elements <= VALUE_LIMIT
            scalar = isinstance(et, T.FloatType) and a.type.num_elements == 1
            if small_int or scalar:
                from egraft.ir.semantics.values import attribute_value

                try:
                    return [np.asarray(attribute_value(a, a.type))]
                except Exception:
                    return None
        return None
    if n.kind in ("Shape", "ShapeN"):
        out: list[np.ndarray | None] = []
        for i, f in enumerate(n.inputs[:n.n_results]):
            ok = f.shape is not None and all(d >= 0 for d in f.shape)
            dt = _np_int(dtypes[i] if i < len(dtypes) else None)
            out.append(np.array(f.shape, dtype=dt) if ok else None)
        return out
    if n.kind in ("Size", "Rank"):
        f = n.inputs[0] if n.inputs else UNKNOWN
        v = f.elements if n.kind == "Size" else f.rank
        return [None if v is None else np.array(v, dtype=_np_int(dtypes[0] if dtypes else None))]
    return None


def _np_int(t: T.Type | None) -> np.dtype:
    et = T.element_type(t) if isinstance(t, T.ShapedType) else t
    return np.dtype(np.int64) if isinstance(et, T.IntegerType) and et.width == 64 else np.dtype(np.int32)


# ----------------------------------------------------------------- the analysis


_EXECUTOR_KINDS = {"tf_executor." + k for k in ("Switch", "Merge", "Enter", "Exit", "LoopCond")}


def kind_of(op: Operation) -> str | None:
    """TF's op name for a `tf.X` or `tfg.X` op, None for anything else."""
    name = op.name
    if name in _EXECUTOR_KINDS:
        return name[12:]
    if name.startswith("tf."):
        return name[3:]
    if name.startswith("tfg.") and name not in ("tfg.graph", "tfg.func", "tfg.return", "tfg.yield"):
        return name[4:]
    return None


def _is_control(t: T.Type) -> bool:
    return isinstance(t, T.DialectType) and "control" in str(t)


def _data_operands(op: Operation) -> list[Value]:
    return [v for v in op.operands if not _is_control(v.type)]


def _data_results(op: Operation) -> list[OpResult]:
    return [r for r in op.results if not _is_control(r.type)]


CALLS = ("PartitionedCall", "StatefulPartitionedCall")

_FUNC_NAME = re.compile(r'^func<@(?:"((?:[^"\\]|\\.)*)"|([^,>\s]+))')


def callee_name(a: A.Attribute | None) -> str | None:
    """The function a call or branch attribute names: `#tf_type.func<@f, {}>` or `@f`."""
    if isinstance(a, A.SymbolRefAttr):
        return a.leaf
    body = getattr(a, "body", None)
    if isinstance(body, str):
        m = _FUNC_NAME.match(body.strip())
        if m:
            return m.group(1) if m.group(1) is not None else m.group(2)
    return None


class Shapes:
    """Demand-driven static shapes (and small constant values) of a graph's values, memoised.

    Valid while the values' producers compute what they computed when first asked (sound
    rewrites do not change a value's shape); make a new one after unsound surgery."""

    MAX_CALL_DEPTH = 8

    def __init__(self, depth: int = 0, functions: dict | None = None, feed_dim: int | None = None) -> None:
        """``feed_dim``: the size to assume for the unknown dims of what is fed (Placeholders
        and the arguments of the outermost functions), e.g. 1 for a batch size; None: unknown."""
        self.memo: dict[Value, Facts] = {}
        self.depth = depth
        self.functions: dict[int, dict[str, Operation]] = functions if functions is not None else {}
        self.feed_dim = feed_dim

    def _fed(self, shape: Shape) -> Shape:
        if shape is None or self.feed_dim is None:
            return shape
        return tuple(self.feed_dim if d < 0 else d for d in shape)

    def callee(self, op: Operation, attr: str = "f") -> Operation | None:
        """The function (tfg.func / func.func) an op's attribute `attr` names, if in its module."""
        name = callee_name(op.attr(attr))
        if name is None:
            return None
        root = op
        while root.parent_op is not None:
            root = root.parent_op
        table = self.functions.get(id(root))
        if table is None:
            table = self.functions[id(root)] = {}
            for f in root.walk():
                if f.name in ("tfg.func", "func.func"):
                    sym = f.attr("sym_name")
                    if isinstance(sym, A.StringAttr):
                        table[str(sym.value)] = f
        return table.get(name)

    def at_call(self, op: Operation, func: Operation) -> "Shapes | None":
        """A fresh analysis of `func`'s body with its arguments as the call `op` passes them
        (None past MAX_CALL_DEPTH calls deep: recursion), or when the arities differ."""
        region = func.regions[0] if func.regions else None
        entry = region.entry if region is not None else None
        if entry is None or self.depth >= self.MAX_CALL_DEPTH:
            return None
        args = [a for a in entry.args if not _is_control(a.type)]
        operands = _data_operands(op)
        if kind_of(op) in ("If", "StatelessIf", "Case", "StatelessCase"):
            operands = operands[1:]  # the predicate / branch index
        if len(args) != len(operands):
            return None
        child = Shapes(self.depth + 1, self.functions)
        for a, v in zip(args, operands):
            f = self.facts(v)
            child.memo[a] = Facts(merge(shape_of_type(a.type), f.shape), f.value, f.handle)
        return child

    def call_results(self, op: Operation) -> list[Facts] | None:
        """What a PartitionedCall's callee returns for this call's operands."""
        func = self.callee(op)
        child = self.at_call(op, func) if func is not None else None
        if child is None:
            return None
        term = func.regions[0].entry.terminator  # type: ignore[union-attr]
        if term is None:
            return None
        return [child.facts(v) for v in _data_operands(term)]

    # public --------------------------------------------------------------
    def facts(self, v: Value) -> Facts:
        f = self.memo.get(v)
        if f is not None:
            return f
        self._solve(v)
        return self.memo.get(v, UNKNOWN)

    def shape(self, v: Value) -> Shape:
        return self.facts(v).shape

    def type_of(self, v: Value) -> T.Type:
        """v's type with its shape refined (the declared type when nothing more is known)."""
        return refined_type(v.type, self.facts(v).shape)

    def op_shapes(self, op: Operation) -> tuple[list[Shape], list[Shape]]:
        """Shapes of a tf op's data operands and data results."""
        return ([self.shape(v) for v in _data_operands(op)], [self.shape(r) for r in _data_results(op)])

    # internals ------------------------------------------------------------
    def _deps(self, v: Value) -> list[Value]:
        if isinstance(v, OpResult):
            op = v.owner
            if kind_of(op) is not None:
                return _data_operands(op)
            if op.name == "tf_executor.island":
                y = op.regions[0].entry.terminator if op.regions and op.regions[0].entry else None
                return [y.operands[v.index]] if y is not None and v.index < len(y.operands) else []
            if op.name == "tf_executor.graph":
                f = op.regions[0].entry.terminator if op.regions and op.regions[0].entry else None
                return [f.operands[v.index]] if f is not None and v.index < len(f.operands) else []
        return []

    def _solve(self, root: Value) -> None:
        stack: list[tuple[Value, bool]] = [(root, False)]
        active: set[Value] = set()
        memo = self.memo
        while stack:
            v, expanded = stack.pop()
            if v in memo:
                continue
            if not expanded:
                deps = [d for d in self._deps(v) if d not in memo]
                if v in active:  # a cycle (graph regions): what the type says
                    memo[v] = Facts(shape_of_type(v.type))
                    continue
                active.add(v)
                stack.append((v, True))
                stack.extend((d, False) for d in deps if d not in active)
                continue
            active.discard(v)
            self._compute(v)

    def _compute(self, v: Value) -> None:
        memo = self.memo
        declared = shape_of_type(v.type)
        if not isinstance(v, OpResult):
            memo[v] = Facts(self._fed(declared))
            return
        op = v.owner
        kind = kind_of(op)
        if kind is None:
            deps = self._deps(v)
            if deps:  # island / graph result: its yield's / fetch's operand
                f = memo.get(deps[0], UNKNOWN)
                memo[v] = Facts(merge(declared, f.shape), f.value, f.handle)
            else:
                memo[v] = Facts(declared)
            return
        results = _data_results(op)
        inputs = [memo.get(d) or Facts(shape_of_type(d.type)) for d in _data_operands(op)]
        node = Node(kind, op, inputs, len(results))
        fn = SHAPE_FNS.get(kind)
        shapes: list[Shape] = [None] * len(results)
        if fn is not None:
            try:
                got = fn(node)
            except Exception:  # a malformed op: nothing to say, never a crash
                got = None
            if got is not None and len(got) == len(results):
                shapes = got
        if kind == "Placeholder":
            shapes = [self._fed(shapes[0])] if shapes else shapes
        if kind in CALLS and all(x is None for x in shapes):
            called = self.call_results(op)
            if called is not None and len(called) == len(results):
                shapes = [f.shape for f in called]
        values = self._values(node, results, [merge(shape_of_type(r.type), s) for r, s in zip(results, shapes)])
        handles = _handles(node, len(results))
        if kind == "ReadVariableOp" and inputs and inputs[0].handle is not None:
            shapes = [inputs[0].handle]
        for i, r in enumerate(results):
            s = merge(shape_of_type(r.type), shapes[i])
            val = values[i] if values is not None and i < len(values) else None
            if val is not None:
                if s is not None and (len(s) != val.ndim or any(d >= 0 and d != e for d, e in zip(s, val.shape))):
                    val = None  # disagrees with what is known: do not trust it
                else:
                    s = tuple(val.shape)
            memo[r] = Facts(s, val, handles[i])

    def _values(self, node: Node, results: list[OpResult], shapes: list[Shape]) -> list | None:
        own = _own_value(node, shapes, [r.type for r in results])
        if own is not None or node.kind not in VALUE_KINDS:
            return own
        if len(results) != 1 or not node.inputs or any(f.value is None for f in node.inputs):
            return None
        et = T.element_type(results[0].type) if isinstance(results[0].type, T.ShapedType) else None
        if not isinstance(et, (T.IntegerType, T.IndexType)):
            return None
        from egraft.ir.semantics.interpreter import EVALUATORS, Interpreter

        ev = EVALUATORS.get("tf." + node.kind)
        if ev is None or node.op is None:
            return None
        try:
            out = ev(Interpreter(check_types=False), node.op, [f.value for f in node.inputs])
        except Exception:
            return None
        if isinstance(out, (list, tuple)):
            out = out[0] if len(out) == 1 else None
        if out is None:
            return None
        arr = np.asarray(out)
        return [arr] if arr.size <= VALUE_LIMIT else None


_HANDLE_THROUGH = {"Identity", "IdentityN", "Enter", "Exit", "Switch", "Snapshot"}


def _handles(n: Node, n_results: int) -> list[Shape]:
    """Resource handles' variable shapes: made by VarHandleOp (its `shape`), carried by
    Identity-like ops (input i to output i); ReadVariableOp reads them."""
    if n.kind == "VarHandleOp":
        return [_shape_attr(n.attr("shape"))] + [None] * (n_results - 1)
    if n.kind in _HANDLE_THROUGH:
        if n.kind == "Switch":
            return [n.inputs[0].handle if n.inputs else None] * n_results
        return [n.inputs[i].handle if i < len(n.inputs) else None for i in range(n_results)]
    return [None] * n_results


@shape_fn("VarHandleOp")
def _var_handle(n: Node) -> list[Shape]:
    return [()]


def refined_type(t: T.Type, shape: Shape) -> T.Type:
    """`t` with `shape` when that says more (a tensor type only; anything else as it is)."""
    if shape is None or not isinstance(t, (T.RankedTensorType, T.UnrankedTensorType)):
        return t
    old = shape_of_type(t)
    new = merge(old, shape) if old is not None else shape
    if old == new:
        return t
    if old is not None and len(old) != len(new):  # type: ignore[arg-type]
        return t
    enc = t.encoding if isinstance(t, T.RankedTensorType) else None
    return T.RankedTensorType(tuple(new), t.element_type, enc) if enc is not None else \
        T.RankedTensorType(tuple(new), t.element_type)  # type: ignore[arg-type]


def result_shapes(kind: str, op: Operation | None, inputs: Sequence[Facts], n_results: int) -> list[Shape]:
    """One op's result shapes from its operands' facts (for a rule pricing an op it has not built)."""
    fn = SHAPE_FNS.get(kind)
    if fn is None:
        return [None] * n_results
    try:
        got = fn(Node(kind, op, inputs, n_results))
    except Exception:
        return [None] * n_results
    return got if got is not None and len(got) == n_results else [None] * n_results


# ----------------------------------------------------------------- refining types in place

def refine_types(root: Operation, shapes: Shapes | None = None) -> int:
    """Refines the result types of the tf ops under `root` (and the island and graph results
    and function results they flow to, so the IR stays valid); returns how many values
    changed. Function signatures change only in their results, and only for functions whose
    returned values were refined; call sites keep their (compatible) types."""
    shapes = shapes or Shapes()
    changed = 0
    ops = [op for op in root.walk() if kind_of(op) is not None and (op.name.startswith("tf.") or _in_tfg_graph(op))]
    for op in ops:
        for r in _data_results(op):
            shapes.facts(r)
    for op in ops:
        for r in _data_results(op):
            t = refined_type(r.type, shapes.shape(r))
            if t is not r.type:
                r.type = t
                changed += 1
    # islands and graphs take their yields' / fetches' types (their verifiers demand equality)
    for op in list(root.walk_post_order()):
        if op.name in ("tf_executor.island", "tf_executor.graph") and op.regions and op.regions[0].entry:
            term = op.regions[0].entry.terminator
            if term is None:
                continue
            for i, r in enumerate(op.results):
                if i < len(term.operands) and not _is_control(r.type) and r.type is not term.operands[i].type:
                    if refined_type(r.type, shape_of_type(term.operands[i].type)) is term.operands[i].type:
                        r.type = term.operands[i].type
                        changed += 1
        if op.name == "func.func":
            changed += _refine_function_results(op)
    return changed


def _in_tfg_graph(op: Operation) -> bool:
    """A tfg op directly in a `tfg.graph` (a GraphDef's nodes; tfg.func bodies are left alone)."""
    parent = op.parent_op
    return parent is not None and parent.name == "tfg.graph"


def _refine_function_results(func: Operation) -> int:
    ftype_attr = func.attr("function_type")
    if not isinstance(ftype_attr, A.TypeAttr) or not isinstance(ftype_attr.value, T.FunctionType):
        return 0
    ftype = ftype_attr.value
    region = func.regions[0] if func.regions else None
    if region is None or region.entry is None:
        return 0
    returns = [b.terminator for b in [region.entry] if b.terminator is not None and b.terminator.name == "func.return"]
    if not returns or len(returns[0].operands) != len(ftype.results):
        return 0
    new = [v.type if refined_type(t, shape_of_type(v.type)) is v.type else t
           for t, v in zip(ftype.results, returns[0].operands)]
    if all(a is b for a, b in zip(new, ftype.results)):
        return 0
    func.set_attr("function_type", A.TypeAttr(T.FunctionType(tuple(ftype.inputs), tuple(new))))
    return sum(a is not b for a, b in zip(new, ftype.results))
