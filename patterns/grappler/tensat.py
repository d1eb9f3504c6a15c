"""`tf-tensat`, `tf-tensat-onednn`: rewrites that make a TensorFlow graph run faster (issue #13 §3).

Grappler's optimizers shrink a graph; these change what the kernels do, and each is taken
only where a cost estimate from static shapes says the result is cheaper.

**Contractions sharing an input merged** (Tensat's multi-pattern rules). BERT's attention
projects one input three times, `BatchMatMulV2(x, Wq)`, `(x, Wk)`, `(x, Wv)`, each a
`[tokens, hidden] x [hidden, hidden]` product too small to use the machine well. With
constant weights of one shape they become one product with the weights concatenated
(the concatenation is folded: a new constant) and a `Split` of its last axis:

    BatchMatMulV2(x, W1), ..., BatchMatMulV2(x, Wn)  ->  Split(-1, BatchMatMulV2(x, [W1 ... Wn]))   n = 2, 3
    MatMul(x, W1), ..., MatMul(x, Wn)                ->  Split(-1, MatMul(x, [W1 ... Wn]))

Every output element is the same dot product of a row of x and a column of some Wi, summed
by the same kernel (a wider one: its blocking may sum in another order, so the rules are
tagged approx). Only untransposed operands (adj/transpose false), float32, on one device.
It pays when the products are small enough that the calls saved cost more than the
`Split`'s copy of the output: the calibrated cost model (`tf_cost.kernel_us`) prices the
products apart and merged + Split on x's static shape (`tf_shapes`' analysis; unknown: not
merged).

**Layer norm with identity parameters** (`_layer_norm_rules`). Keras's LayerNormalization
exports as `x * s + (-m * s + beta)` with `s = Rsqrt(var + eps) * gamma`: with gamma all
ones (or beta all zeros, Keras's initial values) the broadcast of `s` to x's full shape and
the Mul or AddV2 by the parameter are wasted, and `(x - m) * Rsqrt(Mean(Square(x - m)) + eps)`
computes the difference once. Taken only when a parameter is an identity (with neither, the
rewrite has as many full-size ops and measured no gain on bert4).

**Exact GELU into the contraction** (oneDNN only). TensorFlow 2.21 computes
`gelu(y, approximate=False)` as `0.5 * y * erfc(-y * 0.70710677)`: five element-wise ops
over the widest tensor of a transformer's feed-forward block. TensorFlow's oneDNN
`_FusedMatMul` computes `fused_ops = [BiasAdd, GeluExact]` in its output loop
(fused_kernels.py: on with oneDNN, not without), so

    gelu(MatMul(x, w))                 ->  _FusedMatMul(x, w, 0)  [BiasAdd, GeluExact]
    gelu(Reshape(MatMul(x, w), s))     ->  Reshape(_FusedMatMul(x, w, 0), s)     (Keras's Dense on 3-D input)
    gelu(Reshape(MatMul(x, w), s) + b) ->  Reshape(_FusedMatMul(x, w, b), s)     b per output column, s keeps it last
    gelu(_FusedMatMul(x, w, b) [BiasAdd]) (Reshaped or not) -> the same with [BiasAdd, GeluExact]

Gelu is element-wise, so it commutes with the Reshape; a bias of one value per column
commutes with a Reshape whose last dimension is the columns. A zero bias adds +0.0, which
changes only -0.0 (to +0.0; gelu(-0.0) is -0.0 against +0.0: equal as numbers). The
contraction and gelu input must have no other use (else the product runs twice). These
rules are in `tf-tensat-onednn`, which `-tf-grappler="onednn=true"` runs: a graph with
them runs only where TensorFlow's oneDNN is on (TF_ENABLE_ONEDNN_OPTS=1), as Grappler's own
`_MklSwish`/`_MklLayerNorm` do.

**Small ones.** `x * 1 = x` where the ones broadcast within x's shape (Keras's swish multiplies by beta = 1.0,
which the next round's batchnorm folding would scale into a second copy of a convolution
that has another use), `x / c = x * (1/c)` for a float32 constant (Grappler's constant
folding does it), and, oneDNN only, `x * sigmoid(x)` as `_MklSwish(x)` (Grappler's remapper
with oneDNN on).

Measured on bert4 (4 layers, 128 tokens, hidden 256; `Session.run` with 2+2 threads, oneDNN
on, 40 interleaved rounds, against Grappler's graph), each applied by hand to egraft's
-tf-grappler output before these rules were written: Q/K/V merged 0.966 (BatchMatMulV2 form
0.976), GELU fused 0.948, both 0.92; then the layer norm with identity parameters on top,
0.87 (and 0.885 for the rules' own output; load average 3-4 on the 2 cores). The attention
computed transposed (below), by hand on the rules' output: bert4 0.88 -> 0.84,
bert_l2_h128_s64 0.93 -> 0.74; by the rules: 0.88 and 0.78 (load 5-6). Tried and not kept: `_MklLayerNorm` for Keras's
LayerNormalization (1.05: slower), every MatMul as `_FusedMatMul` with a zero bias (0.99),
BatchMatMulV2 with 2-D weights as Reshape + MatMul (1.00), the attention's 1/sqrt(d) scale
folded into Wq (within noise), the attention's Einsums as BatchMatMulV2 between explicit Transposes (bert4
0.87 -> 0.91, bert_l2 0.92 -> 1.03), the output projection and residual add as oneDNN's
_FusedMatMul [BiasAdd, Add] (no gain).
"""

from __future__ import annotations

import math

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

from ..checks import pred
from ..dsl import _, const_of, native, op, ref, rule, type_of, var
from ..rule import Rule
from ..rule_sets import register_rule_set
from .fused_kernels import COMPUTES, KERNELS

_APPROX = ("approx",)
_NAME = var("root_name")
_DEV = var("dev")
_F32 = T.f32
_SCALAR_I32 = T.RankedTensorType((), T.i32)
_LAST_AXIS = A.DenseElementsAttr(_SCALAR_I32, -1)
_INV_SQRT2 = 1 / math.sqrt(2)

# ------------------------------------------------------------------ cost

_SHAPES: list = [None, None]  # (the outermost op of the IR last asked about, its Shapes)


def _shapes_for(x):
    """One tf_shapes analysis per IR (the outermost op above x), kept while rules run on it:
    it is memoised per value, and the rewrites here keep every value's shape (as tf_shapes
    asks of a shared analysis)."""
    from egraft.ir.core.operation import OpResult
    from egraft.ir.semantics.tf_shapes import Shapes

    top = x.owner if isinstance(x, OpResult) else x.owner.parent_op  # a block argument's owner is its block
    while top is not None and top.parent_op is not None:
        top = top.parent_op
    if top is None or _SHAPES[0] is not top:
        _SHAPES[0], _SHAPES[1] = top, Shapes()
    return _SHAPES[1]


def _static_shape(x) -> tuple[int, ...] | None:
    """x's static shape, from its type or, when the type is not static, from tf_shapes'
    analysis (None: not fully known)."""
    t = x.type
    if isinstance(t, T.RankedTensorType) and all(d >= 0 for d in t.shape):
        return tuple(t.shape)
    found = _shapes_for(x).shape(x)
    return tuple(found) if found is not None and all(d >= 0 for d in found) else None


def merge_costs(kind: str, x_shape: tuple[int, ...], w_shape: tuple[int, int], n: int) -> tuple[float, float]:
    """(predicted µs of the n separate products, of the merged product and its Split): the
    calibrated cost model's (`egraft.ir.semantics.tf_cost.kernel_us`)."""
    from egraft.ir.semantics.tf_cost import kernel_us

    wide = (w_shape[0], w_shape[1] * n)
    out = (*x_shape[:-1], wide[1])
    apart = n * kernel_us(kind, [x_shape, w_shape])
    merged = kernel_us(kind, [x_shape, wide]) + kernel_us("Split", [(), out], values=[-1, None], n_results=n)
    return apart, merged


def _attention_after(products, x_shape: tuple[int, ...], w_shape: tuple[int, ...]) -> bool:
    """The three products (Q, K, V) feed a multi-head attention the attention rules take
    (their heads -> the scores Einsum; V's -> the context Einsum -> Reshape -> BatchMatMulV2 by
    a constant) and the calibrated model prices the block computed transposed below the
    block as it is: merging is then priced with what it makes possible, as Tensat prices a
    rewrite sequence and not one step."""
    from egraft.ir.semantics.tf_cost import kernel_us, ops_cost_us as tf_ops_cost

    if len(products) != 3:
        return False
    heads = [_sole_user(m, "tf.Reshape") for m in products]
    if any(h is None for h in heads) or len({id(h.operands[1]) for h in heads}) != 1:
        return False
    shape = heads[0].operands[1]
    dims_attr = shape.owner.attr("value") if hasattr(shape.owner, "attr") else None
    dims = _head_dims(dims_attr, (w_shape[0], 3 * w_shape[1]))
    if dims is None or x_shape != (1, dims[0], dims[3]):
        return False
    t, n, h, e = dims
    heads = [_head_end(hd) for hd in heads]
    scores = [_sole_user(hd, "tf.Einsum") for hd in heads]
    if scores[0] is None or scores[0] is not scores[1] or not _equation(_SCORES)(scores[0].attr("equation")) \
            or scores[0].operands[0] is not heads[0].results[0] or scores[0].operands[1] is not heads[1].results[0]:
        return False
    ctx = scores[2]
    if ctx is None or not _equation(_CONTEXT)(ctx.attr("equation")) or ctx.operands[1] is not heads[2].results[0]:
        return False
    back = _sole_user(ctx, "tf.Reshape")
    proj = _sole_user(back, "tf.BatchMatMulV2") if back is not None else None
    wo = proj.operands[1].owner.attr("value") if proj is not None and hasattr(proj.operands[1].owner, "attr") else None
    if not isinstance(wo, A.DenseElementsAttr) or len(wo.type.shape) != 2 or wo.type.shape[0] != n * h:
        return False
    d, out = n * h, wo.type.shape[1]
    transposed = (kernel_us("MatMul", [(3 * d, e), (t, e)], op=None)
                  + kernel_us("Split", [(), (3 * d, t)], values=[0, None], n_results=3)
                  + kernel_us("BatchMatMulV2", [(n, h, t), (n, h, t)], [(n, t, t)])
                  + kernel_us("BatchMatMulV2", [(n, h, t), (n, t, t)], [(n, h, t)])
                  + kernel_us("MatMul", [(d, t), (d, out)], [(t, out)]))
    return transposed < tf_ops_cost([*products, scores[0], ctx, proj], _shapes_for(products[0].results[0]))


def merge_pays(kind: str, x, *weights: A.Attribute | None, products: tuple = ()) -> bool:
    """The `kind` contractions of x by `weights` (constant 2-D float32, one shape) cost
    more apart than merged (`merge_costs`), on x's static shape; or, for BatchMatMulV2s
    `products` feeding an attention block, the block computed transposed costs less."""
    if not all(isinstance(w, A.DenseElementsAttr) and w.element_type is _F32 for w in weights):
        return False
    shapes = {tuple(w.type.shape) for w in weights}
    if len(shapes) != 1:
        return False
    (shape,) = shapes
    x_shape = _static_shape(x)
    if len(shape) != 2 or x_shape is None or len(x_shape) < 2 or x_shape[-1] != shape[0]:
        return False
    apart, merged = merge_costs(kind, x_shape, shape, len(weights))
    if merged < apart:
        return True
    return kind == "BatchMatMulV2" and _attention_after(products, x_shape, shape)


# ------------------------------------------------------------------ merged contractions


def _concatenated(*weights: A.Attribute) -> A.Attribute | None:
    """The weights (or a fused convolution's biases) concatenated along their last axis (a
    product's columns, a filter's output channels), as one float32 constant."""
    arrays = [w.to_numpy() for w in weights if isinstance(w, A.DenseElementsAttr)]
    if len(arrays) != len(weights):
        return None
    wide = np.ascontiguousarray(np.concatenate(arrays, axis=-1), "<f4")
    return A.DenseElementsAttr(T.RankedTensorType(wide.shape, _F32), wide.tobytes())


def _concatenated_type(*weights: A.Attribute) -> T.Type | None:
    if not all(isinstance(w, A.DenseElementsAttr) for w in weights):
        return None
    return T.RankedTensorType((*weights[0].type.shape[:-1], sum(w.type.shape[-1] for w in weights)), _F32)


def _widened(n: int):
    """The merged product's type: the first product's with n times its last dimension."""
    def fn(t: T.Type) -> T.Type:
        if isinstance(t, T.RankedTensorType) and t.shape and t.shape[-1] >= 0:
            return T.RankedTensorType((*t.shape[:-1], t.shape[-1] * n), T.element_type(t))
        return T.UnrankedTensorType(T.element_type(t))
    return fn


def _one_device(*ops) -> bool:
    """The matched ops are on one device (an absent `device` is the empty one, as the
    ops other rules build have none)."""
    from .remapper import _device

    return len({_device(o.attr("device")) for o in ops}) <= 1


def _is_f32(t: T.Type) -> bool:
    return T.element_type(t) is _F32


def _shared_input_rule(kind: str, n: int, *, flags: dict, biased: bool, pays, doc: str) -> Rule:
    """n `kind` ops of one input x by constants w0..w(n-1) (and, `biased`, one constant
    argument b_i each: a fused convolution's bias) -> one `kind` by the constants concatenated
    along their last axis (folded), its result split along the last axis into the n results.
    The merged op copies the first one's attributes (`flags` are required of every root);
    `pays(x, w0.., [b0..,] m0..)` is the gate."""
    x = var("x")
    names = [f"w{i}" for i in range(n)]
    bias_names = [f"b{i}" for i in range(n)] if biased else []

    def operands(w, i):
        return (x, w, [var(bias_names[i])]) if biased else (x, w)

    roots = [op(f"tf.{kind}", *operands(var(names[i]), i), **flags,
                **({"device": _DEV} if i == 0 else {})).bind(f"m{i}") for i in range(n)]

    def folded(label: str, group: list[str]):
        return op("tf.Const", value=native(f"concatenated-{label}", _concatenated, *map(const_of, group)),
                  types=[native(f"concatenated-{label}-type", _concatenated_type, *map(const_of, group), kind="type")])
    merged_operands = (x, folded("weights", names)) + ((([folded("biases", bias_names)]),) if biased else ())
    merged = op(f"tf.{kind}", *merged_operands, device=_DEV, **flags, **({"copy_attrs": "m0"} if biased or not flags
                                                                         else {}),
                types=[native("widened-type", _widened(n), type_of("m0"), kind="type")])
    axis = op("tf.Const", value=_LAST_AXIS, types=[_SCALAR_I32])
    split = op("tf.Split", axis, merged, num_split=A.IntegerAttr(n, T.i64), device=_DEV,
               types=[type_of(f"m{i}") for i in range(n)]).bind("split")
    bound = [var(f"m{i}") for i in range(n)]
    return rule(f"{kind.lower().lstrip('_')}-shared-input-{n}", roots, [split[i] for i in range(n)],
                where=[pred("x is float32", _is_f32, type_of("x")),
                       pred("the ops are on one device", _one_device, *bound),
                       pred("merging pays (the calibrated model on x's static shape)", pays, x,
                            *map(const_of, names + bias_names), *bound)],
                tags=_APPROX, doc=doc)


def _merge_rule(kind: str, n: int) -> Rule:
    flags = {"adj_x": False, "adj_y": False} if kind == "BatchMatMulV2" else {"transpose_a": False,
                                                                               "transpose_b": False}
    return _shared_input_rule(
        kind, n, flags=flags, biased=False,
        pays=lambda *a, k=kind, n=n: merge_pays(k, *a[:1 + n], products=a[1 + n:]),
        doc=f"{n} {kind}s of one input by constant weights of one shape are one {kind} by the "
            "weights concatenated (folded), split along the last axis, where the calibrated model (alone or "
            "with the attention it makes possible) says it pays")


MERGE_RULES = [_merge_rule(kind, n) for kind in ("BatchMatMulV2", "MatMul") for n in (3, 2)]

# ------------------------------------------------------------------ convolutions sharing an input
#
#     Conv2D(x, W1), ..., Conv2D(x, Wn)  ->  Split(-1, Conv2D(x, [W1 ... Wn]))                     n = 2, 3
#     _FusedConv2D(x, Wi, bi) [BiasAdd(, Act)]  ->  Split(-1, _FusedConv2D(x, [W1 .. Wn], [b1 .. bn]))
#
# (Tensat's multi-pattern rule; Inception's 1x1 branches read one input.) Output channel c of
# the merged convolution is the same sum over the same window and input channels as channel c
# of the convolution it came from, plus the same bias, through the same element-wise
# activation: NHWC only (the channels are the last axis), filters HWIO of one shape (equal
# output channels: Split, not SplitV), equal strides/padding/explicit_paddings/dilations and
# fused attributes. Gated by the calibrated model as the products above: the convolutions
# apart against the merged one plus the Split's copy.
#
# It does not pay on inceptionv3 (the only bench model with such branches), and the gate
# says so: on its seven kinds of candidate groups (1x1 filters, x 35x35x192..288 or
# 17x17x768, 2-3 branches of 64..192 channels) the model prices merged 2-9 % above apart.
# Forced (every group merged: 9 convolutions fewer, 8 Splits), egraft's graph measured
# x1.02 (1.01-1.04, 150 interleaved rounds, oneDNN on, 2+2 threads) against it unmerged:
# the Split copies the merged output, and the branches no longer run side by side.

_CONV_ATTRS = ("strides", "padding", "explicit_paddings", "dilations", "data_format", "fused_ops", "num_args",
               "epsilon", "leakyrelu_alpha", "filter_format", "num_host_args", "use_cudnn_on_gpu", "T")
_CHANNELWISE = {"Relu", "Relu6", "Elu", "LeakyRelu", "Sigmoid", "Tanh", "_MklSwish", "GeluExact", "GeluApproximate"}


def _same_conv_attrs(*convs) -> bool:
    """The convolutions agree on every attribute that decides what they compute."""
    first = convs[0]
    return all(c.attr(a) == first.attr(a) for c in convs[1:] for a in _CONV_ATTRS)


def _conv_form_ok(conv) -> bool:
    """NHWC (absent: the default), HWIO; a fused one's ops are [BiasAdd] then at most one
    element-wise activation, with one argument (its bias)."""
    fmt, ff = conv.attr("data_format"), conv.attr("filter_format")
    if fmt not in (None, A.StringAttr("NHWC")) or ff not in (None, A.StringAttr("HWIO")):
        return False
    if conv.name == "tf.Conv2D":
        return True
    fused = conv.attr("fused_ops")
    names = [x.value for x in fused.value] if isinstance(fused, A.ArrayAttr) else []
    return (len(conv.operands) == 3 and bool(names) and names[0] == "BiasAdd" and len(names) <= 2
            and all(nm in _CHANNELWISE for nm in names[1:]))


def conv_merge_costs(kind: str, x_shape, w_shape, out_shape, n: int, conv=None) -> tuple[float, float]:
    """(predicted µs of the n convolutions apart, of the merged one and its Split), from the
    calibrated model (`tf_cost.kernel_us`)."""
    from egraft.ir.semantics.tf_cost import kernel_us

    bias = [(w_shape[-1],)] if kind == "_FusedConv2D" else []
    wide = (*w_shape[:-1], w_shape[-1] * n)
    wide_out = (*out_shape[:-1], out_shape[-1] * n)
    apart = n * kernel_us(kind, [x_shape, w_shape, *bias], [out_shape], op=conv)
    merged = (kernel_us(kind, [x_shape, wide, *[(wide[-1],)] * len(bias)], [wide_out], op=conv)
              + kernel_us("Split", [(), wide_out], [out_shape] * n, values=[-1, None], n_results=n))
    return apart, merged


def conv_merge_pays(kind: str, n: int):
    def fn(x, *rest) -> bool:
        consts, convs = rest[:-n], rest[-n:]
        if not all(isinstance(c, A.DenseElementsAttr) and c.element_type is _F32 for c in consts):
            return False
        filters, biases = consts[:n], consts[n:]
        shapes = {tuple(w.type.shape) for w in filters}
        if len(shapes) != 1 or not _same_conv_attrs(*convs) or not all(map(_conv_form_ok, convs)):
            return False
        (w_shape,) = shapes
        if len(w_shape) != 4 or any(tuple(b.type.shape) != (w_shape[-1],) for b in biases):
            return False
        x_shape, out_shape = _static_shape(x), _static_shape(convs[0].results[0])
        if x_shape is None or out_shape is None or len(x_shape) != 4 or x_shape[-1] != w_shape[2] \
                or out_shape[-1] != w_shape[-1]:
            return False
        apart, merged = conv_merge_costs(kind, x_shape, w_shape, out_shape, n, convs[0])
        return merged < apart
    return fn


CONV_MERGE_RULES = [
    _shared_input_rule(kind, n, flags={}, biased=kind == "_FusedConv2D", pays=conv_merge_pays(kind, n),
                       doc=f"{n} {kind}s (NHWC, HWIO) of one input by constant filters of one shape, equal "
                           "attributes" + (" and per-channel epilogues, their biases concatenated too"
                                           if kind == "_FusedConv2D" else "")
                           + ", are one by the filters concatenated along the output channels (folded), split "
                             "along the channels, where the calibrated model says it pays")
    for kind in ("Conv2D", "_FusedConv2D") for n in (3, 2)]


# ------------------------------------------------------------------ attention without transposes
#
# After the Q/K/V merge, Keras's multi-head attention (batch 1) is
#
#     qkv = Split(-1, BatchMatMulV2(x, Wcat))                    x [1, T, E], Wcat [E, 3D]
#     q, k, v = Reshape(qkv[i], [_, T, N, H])                     D = N * H
#     scores = Einsum("BTNH,BSNH->BNTS", q, k)      ...  P = softmax(scores ...)   [1, N, T, T]
#     out = BatchMatMulV2(Reshape(Einsum("BNTS,BSNH->BTNH", P, v), [_, T, D]), Wo)
#
# and oneDNN's Einsum transposes its operands on every call (bert_l2_h128_s64: a third of the
# time). Computed transposed, no transpose is needed anywhere: qkvT = MatMul(WcatT, x2d,
# transpose_b) is [3D, T], its Split on axis 0 is three contiguous [D, T] slices (TensorFlow
# aliases them, no copy), each a [N, H, T] tensor by a Reshape; then
#
#     scores = Reshape(BatchMatMulV2(qT, kT, adj_x), [1, N, T, T])          q kT per head
#     ctxT = BatchMatMulV2(vT, Reshape(P, [N, T, T]), adj_y)                [N, H, T] = (P v)T
#     out = Reshape(MatMul(Reshape(ctxT, [D, T]), Wo, transpose_a), [1, T, D'])
#
# A projection's bias (Keras's use_bias: AddV2 of a constant [N, H] after each head's Reshape)
# is added to the transposed head as [N, H, 1]. Two rules, one per root (the scores Einsum,
# the output projection), each taken only when
# the other's part of the block has the same form (else the projection would run twice);
# both build the same transposed projection, which common-subgraph elimination (the next
# round) makes one. Products and sums are the same (summed in another order: approx).


def _head_dims(s: A.Attribute | None, shape: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """(T, N, H, E) from the head Reshape's constant shape [1 or -1, T, N, H] and the merged
    weights' shape [E, 3 N H]."""
    if not isinstance(s, A.DenseElementsAttr):
        return None
    dims = [int(d) for d in s.to_numpy().reshape(-1)]
    if len(dims) != 4 or dims[0] not in (1, -1) or min(dims[1:]) <= 0 or len(shape) != 2:
        return None
    t, n, h = dims[1:]
    return (t, n, h, shape[0]) if shape[1] == 3 * n * h else None


def _attention_dims(s: A.Attribute | None, wcat: A.Attribute | None) -> tuple[int, int, int, int] | None:
    """`_head_dims` with the merged weights, a float32 constant."""
    if not isinstance(wcat, A.DenseElementsAttr) or wcat.element_type is not _F32:
        return None
    return _head_dims(s, tuple(wcat.type.shape))


def _i32(*values: int) -> A.Attribute:
    return A.DenseElementsAttr(T.RankedTensorType((len(values),), T.i32),
                               np.asarray(values, "<i4").tobytes())


def _i32_type(n: int) -> T.Type:
    return T.RankedTensorType((n,), T.i32)


def _transposed_weights(wcat: A.Attribute | None) -> A.Attribute | None:
    if not isinstance(wcat, A.DenseElementsAttr) or wcat.element_type is not _F32 or len(wcat.type.shape) != 2:
        return None
    wt = np.ascontiguousarray(wcat.to_numpy().T, "<f4")
    return A.DenseElementsAttr(T.RankedTensorType(wt.shape, _F32), wt.tobytes())


def _transposed_weights_type(wcat: A.Attribute | None) -> T.Type | None:
    if not isinstance(wcat, A.DenseElementsAttr) or len(wcat.type.shape) != 2:
        return None
    return T.RankedTensorType(tuple(reversed(wcat.type.shape)), _F32)


def _shape_native(name: str, pick):
    """A native int32 shape constant computed from (T, N, H, E) (and the output weights)."""
    def value(s, wcat, *more):
        dims = _attention_dims(s, wcat)
        return None if dims is None else _i32(*pick(*dims, *more))

    def kind(s, wcat, *more):
        dims = _attention_dims(s, wcat)
        return None if dims is None else _i32_type(len(pick(*dims, *more)))
    return value, kind


def _equation(text: str):
    return lambda e: isinstance(e, A.StringAttr) and e.value.replace(" ", "") == text


_SCORES, _CONTEXT = "BTNH,BSNH->BNTS", "BNTS,BSNH->BTNH"


def _sole_user(value_op, name: str):
    """The single user of value_op's results if it is a `name` op, else None."""
    users = [u for r in value_op.results for u in r.uses]
    return users[0] if len(users) == 1 and users[0].name == name else None


def _head_end(reshape):
    """A head's last op: its Reshape, or the AddV2 of a constant (the projection's bias, Keras's
    use_bias) that is the Reshape's only user."""
    from egraft.ir.core.operation import OpResult

    add = _sole_user(reshape, "tf.AddV2")
    if add is not None:
        other = [v for v in add.operands if v is not reshape.results[0]]
        if len(other) == 1 and isinstance(other[0], OpResult) and other[0].owner.name == "tf.Const":
            return add
    return reshape


def _unused(op, depth: int = 2) -> bool:
    """op's results are used by nothing, or only by Reshapes/AddV2s that are themselves unused."""
    users = [u for r in op.results for u in r.uses]
    return not users or (depth > 0 and all(u.name in ("tf.Reshape", "tf.AddV2") and _unused(u, depth - 1)
                                            for u in users))


def _done(split, i: int) -> bool:
    """split's result i is used by nothing but Reshapes (and their bias adds) nothing uses: the
    other rule has taken its part of the block already."""
    return all(u.name == "tf.Reshape" and _unused(u) for u in split.results[i].uses)


def _context_path_ok(split) -> bool:
    """split's third result reaches an output projection the context rule takes: Reshape ->
    Einsum (the context equation) -> Reshape -> BatchMatMulV2 by a constant 2-D weight, each
    the previous one's only user; or the context rule has taken it already."""
    if _done(split, 2):
        return True
    uses = [u for u in split.results[2].uses]
    if len(uses) != 1 or uses[0].name != "tf.Reshape":
        return False
    end = _head_end(uses[0])
    ein = _sole_user(end, "tf.Einsum")
    if ein is None or not _equation(_CONTEXT)(ein.attr("equation")) or ein.operands[1] is not end.results[0]:
        return False
    back = _sole_user(ein, "tf.Reshape")
    proj = _sole_user(back, "tf.BatchMatMulV2") if back is not None else None
    if proj is None or proj.operands[0] is not back.results[0]:
        return False
    from egraft.ir.core.operation import OpResult

    wo = proj.operands[1]
    return isinstance(wo, OpResult) and wo.owner.name == "tf.Const"


def _scores_path_ok(split) -> bool:
    """split's first two results reach one scores Einsum (q, k), each through a Reshape; or
    the scores rule has taken them already."""
    if _done(split, 0) and _done(split, 1):
        return True
    users = []
    for i in (0, 1):
        uses = list(split.results[i].uses)
        if len(uses) != 1 or uses[0].name != "tf.Reshape":
            return False
        end = _head_end(uses[0])
        ein = _sole_user(end, "tf.Einsum")
        if ein is None or not _equation(_SCORES)(ein.attr("equation")) or ein.operands[i] is not end.results[0]:
            return False
        users.append(ein)
    return users[0] is users[1]


def _batch_one(xv, s, wcat) -> bool:
    dims = _attention_dims(s, wcat)
    shape = _static_shape(xv)
    return dims is not None and shape == (1, dims[0], dims[3])


def _head_bias(b: A.Attribute | None) -> A.Attribute | None:
    """A head's bias [N, H] as [N, H, 1]: added to a [N, H, T] head, one value per (head, feature)."""
    if not isinstance(b, A.DenseElementsAttr) or b.element_type is not _F32 or len(b.type.shape) != 2:
        return None
    arr = np.ascontiguousarray(b.to_numpy().reshape(*b.type.shape, 1), "<f4")
    return A.DenseElementsAttr(T.RankedTensorType(arr.shape, _F32), arr.tobytes())


def _head_bias_type(b: A.Attribute | None) -> T.Type | None:
    return T.RankedTensorType((*b.type.shape, 1), _F32) if isinstance(b, A.DenseElementsAttr) and len(
        b.type.shape) == 2 else None


def _bias_of_heads(b: A.Attribute | None, s: A.Attribute | None, wcat: A.Attribute | None) -> bool:
    dims = _attention_dims(s, wcat)
    return (dims is not None and isinstance(b, A.DenseElementsAttr) and b.element_type is _F32
            and tuple(b.type.shape) == (dims[1], dims[2]))


def _attention_rules(biased: bool) -> list[Rule]:
    x, wcat, s = var("x"), var("wcat"), var("s")
    split = op("tf.Split", var("axis"), op("tf.BatchMatMulV2", x, wcat, adj_x=False, adj_y=False).bind("proj"),
               num_split=A.IntegerAttr(3, T.i64)).bind("split")

    def head(i: int, reshape: str, first: bool):
        r = op("tf.Reshape", split[i] if first else ref("split", i), s).bind(reshape)
        return op("tf.AddV2", r, var(f"b{i}")).bind(reshape + "b") if biased else r

    wt = op("tf.Const", value=native("transposed-weights", _transposed_weights, const_of("wcat")),
            types=[native("transposed-weights-type", _transposed_weights_type, const_of("wcat"), kind="type")])

    def const_shape(name: str, pick, *more):
        value, kind = _shape_native(name, pick)
        return op("tf.Const", value=native(name, value, const_of("s"), const_of("wcat"), *more),
                  types=[native(name + "-type", kind, const_of("s"), const_of("wcat"), *more, kind="type")])

    x2d = op("tf.Reshape", x, const_shape("x-2d", lambda t, n, h, e: (t, e)), types=[T.UnrankedTensorType(_F32)])
    qkv_t = op("tf.MatMul", wt, x2d, transpose_a=False, transpose_b=True, device=_DEV,
               types=[T.UnrankedTensorType(_F32)])
    axis0 = op("tf.Const", value=A.DenseElementsAttr(_SCALAR_I32, 0), types=[_SCALAR_I32])
    split_t = op("tf.Split", axis0, qkv_t, num_split=A.IntegerAttr(3, T.i64), device=_DEV,
                 types=[T.UnrankedTensorType(_F32)] * 3).bind("split_t")
    unranked = [T.UnrankedTensorType(_F32)]

    def head_t(i: int):
        r = op("tf.Reshape", split_t[i], const_shape("nht", lambda t, n, h, e: (n, h, t)), types=unranked)
        if not biased:
            return r
        b = op("tf.Const", value=native("head-bias", _head_bias, const_of(f"b{i}")),
               types=[native("head-bias-type", _head_bias_type, const_of(f"b{i}"), kind="type")])
        return op("tf.AddV2", r, b, device=_DEV, types=unranked)

    def biases(*idx: int) -> list:
        return [pred(f"b{i} is a float32 constant [N, H]", _bias_of_heads, const_of(f"b{i}"), const_of("s"),
                     const_of("wcat")) for i in idx] if biased else []

    def adds(*names: str) -> list:
        return [var(n + "b") for n in names] if biased else []

    common = [pred("x is float32", _is_f32, type_of("x")),
              pred("x is [1, T, E] and the heads [_, T, N, H] of the merged weights [E, 3 N H]", _batch_one, x,
                   const_of("s"), const_of("wcat")),
              pred("the split is of the last axis", lambda a: isinstance(a, A.DenseElementsAttr)
                   and int(a.to_numpy().reshape(-1)[0]) in (-1, 2), const_of("axis")),
              pred("the projection feeds only the split", _single_use, var("proj"))]

    # the scores: root Einsum(q, k)
    scores_src = op("tf.Einsum", [head(0, "qh", True), head(1, "kh", False)], equation=var("eq1"), device=_DEV,
                    _mlir_name=_NAME).bind("scores")
    scores = op("tf.Reshape", op("tf.BatchMatMulV2", head_t(0), head_t(1), adj_x=True, adj_y=False, device=_DEV,
                                 types=unranked),
                const_shape("scores-4d", lambda t, n, h, e: (1, n, t, t)), device=_DEV, _mlir_name=_NAME,
                types=[type_of("scores")])
    suffix = "-biased" if biased else ""
    scores_rule = rule("attention-scores-transposed" + suffix, scores_src, scores, tags=_APPROX, commutative=biased,
                       where=[*common, pred("the scores equation", _equation(_SCORES), var("eq1")),
                              pred("q and k are used by the scores only", _single_use, var("qh"), var("kh"),
                                   *adds("qh", "kh")),
                              *biases(0, 1),
                              pred("v reaches an output projection the context rule takes", _context_path_ok,
                                   var("split"))],
                       doc="multi-head attention's scores Einsum from the merged Q/K/V projection, computed "
                           "transposed: a BatchMatMulV2 with adj_x of [N, H, T] heads, no transpose")

    # the context and output projection: root BatchMatMulV2(Reshape(Einsum(P, v)), Wo)
    p_ = var("p")
    ctx_src = op("tf.BatchMatMulV2",
                 op("tf.Reshape", op("tf.Einsum", [p_, head(2, "vh", True)], equation=var("eq2")).bind("ctx"),
                    var("s2")).bind("back"),
                 var("wo"), adj_x=False, adj_y=False, device=_DEV, _mlir_name=_NAME).bind("out")
    ctx_t = op("tf.BatchMatMulV2", head_t(2),
               op("tf.Reshape", p_, const_shape("p-3d", lambda t, n, h, e: (n, t, t)), types=unranked),
               adj_x=False, adj_y=True, device=_DEV, types=unranked)
    out2d = op("tf.MatMul", op("tf.Reshape", ctx_t, const_shape("ctx-2d", lambda t, n, h, e: (n * h, t)),
                               types=unranked),
               var("wo"), transpose_a=True, transpose_b=False, device=_DEV, types=unranked)
    out = op("tf.Reshape", out2d, const_shape("out-3d", lambda t, n, h, e, wo: (1, t, wo.type.shape[1]),
                                              const_of("wo")),
             device=_DEV, _mlir_name=_NAME, types=[type_of("out")])
    ctx_rule = rule("attention-context-transposed" + suffix, ctx_src, out, tags=_APPROX, commutative=biased,
                    where=[*common, pred("the context equation", _equation(_CONTEXT), var("eq2")),
                           pred("the output weights are a constant [N H, D']",
                                lambda wo, s_, wc: isinstance(wo, A.DenseElementsAttr) and len(wo.type.shape) == 2
                                and _attention_dims(s_, wc) is not None
                                and wo.type.shape[0] == _attention_dims(s_, wc)[1] * _attention_dims(s_, wc)[2],
                                const_of("wo"), const_of("s"), const_of("wcat")),
                           pred("v, the context and its reshape have one use each", _single_use, var("vh"),
                                var("ctx"), var("back"), *adds("vh")),
                           *biases(2),
                           pred("q and k reach one scores Einsum", _scores_path_ok, var("split"))],
                    doc="multi-head attention's context Einsum and output projection from the merged Q/K/V "
                        "projection, computed transposed: BatchMatMulV2 with adj_y, then MatMul with transpose_a")
    return [scores_rule, ctx_rule]


# ------------------------------------------------------------------ exact GELU into _FusedMatMul

_GELU = ("BiasAdd", "GeluExact")


def _splat_near(value: float):
    def fn(c: A.Attribute | None) -> bool:
        if not isinstance(c, A.DenseElementsAttr) or c.element_type is not _F32:
            return False
        arr = c.to_numpy()
        return arr.size >= 1 and bool(np.all(np.abs(arr.astype(np.float64) - value) <= 1e-7 * max(1.0, abs(value))))
    return fn


def _columns(w: A.Attribute | None, transpose_b: A.Attribute | None) -> int | None:
    if not isinstance(w, A.DenseElementsAttr) or len(w.type.shape) != 2:
        return None
    flipped = transpose_b == A.TRUE
    return w.type.shape[0] if flipped else w.type.shape[1]


def _zero_bias(w: A.Attribute | None, transpose_b: A.Attribute | None) -> A.Attribute | None:
    n = _columns(w, transpose_b)
    if n is None or n <= 0:
        return None
    return A.DenseElementsAttr(T.RankedTensorType((n,), _F32), np.zeros(n, "<f4").tobytes())


def _zero_bias_type(w: A.Attribute | None, transpose_b: A.Attribute | None) -> T.Type | None:
    n = _columns(w, transpose_b)
    return None if n is None else T.RankedTensorType((n,), _F32)


def _flat_bias(b: A.Attribute | None) -> A.Attribute | None:
    if not isinstance(b, A.DenseElementsAttr) or b.element_type is not _F32:
        return None
    flat = np.ascontiguousarray(b.to_numpy().reshape(-1), "<f4")
    return A.DenseElementsAttr(T.RankedTensorType(flat.shape, _F32), flat.tobytes())


def _flat_bias_type(b: A.Attribute | None) -> T.Type | None:
    return T.RankedTensorType((int(np.prod(b.type.shape)),), _F32) if isinstance(b, A.DenseElementsAttr) else None


def _column_bias(b: A.Attribute | None, w: A.Attribute | None, transpose_b: A.Attribute | None,
                 shape: A.Attribute | None) -> bool:
    """b is one float32 per output column ((N,) or (1, ..., 1, N)) and the Reshape's target
    shape (a constant) ends in N, so the bias after it is a bias of the product's columns."""
    n = _columns(w, transpose_b)
    if n is None or not isinstance(b, A.DenseElementsAttr) or b.element_type is not _F32:
        return False
    dims = tuple(b.type.shape)
    if not dims or dims[-1] != n or any(d != 1 for d in dims[:-1]):
        return False
    if not isinstance(shape, A.DenseElementsAttr):
        return False
    target = shape.to_numpy().reshape(-1)
    return target.size >= 1 and int(target[-1]) == n and len(dims) <= target.size


def _uses_within(value_op, *ops) -> bool:
    """Every use of value_op's single result is by one of `ops` (the matched gelu)."""
    users = {id(o) for o in ops}
    return all(id(user) in users for r in value_op.results for user in r.uses)


def _single_use(*ops) -> bool:
    return all(sum(1 for r in o.results for _ in r.uses) == 1 for o in ops)


def _kernel(kind: str, t: T.Type, device: A.Attribute | None) -> bool:
    """The oneDNN _FusedMatMul computes [BiasAdd, GeluExact] on the node's device for x's type."""
    from .remapper import device_type

    return (_GELU in COMPUTES["onednn"].get("_FusedMatMul", ()) and device_type(device) == "CPU"
            and _is_f32(t) and "float32" in KERNELS.get("_FusedMatMul", {}).get("CPU", ()))


def _gelu_of(y, y_name: str):
    """TensorFlow 2.21's exact gelu of y (an op pattern bound to `y_name`), its root named
    for the fused op to take its name."""
    half = op("tf.Mul", var("half"), y).bind("g_half")
    neg = op("tf.Neg", ref(y_name, 0)).bind("g_neg")
    scaled = op("tf.Mul", neg, var("k")).bind("g_scaled")
    return op("tf.Mul", half, op("tf.Erfc", scaled).bind("g_erfc"), device=_DEV,
              _mlir_name=_NAME).bind("g_root")


def _gelu_rules() -> list[Rule]:
    x, w, b, s = var("x"), var("w"), var("b"), var("s")
    made = []
    gelu_ops = ("g_half", "g_neg", "g_scaled", "g_erfc", "g_root")
    for inner in ("MatMul", "_FusedMatMul"):
        for reshaped in (False, True):
            for post_bias in ((None, "AddV2", "BiasAdd") if inner == "MatMul" and reshaped else (None,)):
                mm_attrs = {"transpose_a": var("ta"), "transpose_b": var("tb")}
                if inner == "MatMul":
                    c = op("tf.MatMul", x, w, **mm_attrs).bind("c")
                else:
                    c = op("tf._FusedMatMul", x, w, [b], fused_ops=A.ArrayAttr((A.StringAttr("BiasAdd"),)),
                           **mm_attrs).bind("c")
                y = op("tf.Reshape", c, s).bind("r") if reshaped else c
                if post_bias == "AddV2":
                    y = op("tf.AddV2", y, b).bind("pb")
                elif post_bias == "BiasAdd":
                    y = op("tf.BiasAdd", y, b, data_format=var("pb_fmt")).bind("pb")
                y_name = "pb" if post_bias else "r" if reshaped else "c"
                source = _gelu_of(y, y_name)
                if inner == "_FusedMatMul" or post_bias is not None:
                    bias = b if inner == "_FusedMatMul" else op(
                        "tf.Const", value=native("flat-bias", _flat_bias, const_of("b")),
                        types=[native("flat-bias-type", _flat_bias_type, const_of("b"), kind="type")])
                else:
                    bias = op("tf.Const", value=native("zero-bias", _zero_bias, const_of("w"), var("tb")),
                              types=[native("zero-bias-type", _zero_bias_type, const_of("w"), var("tb"), kind="type")])
                fused_attrs = {"transpose_a": var("ta"), "transpose_b": var("tb"),
                               "fused_ops": A.ArrayAttr(tuple(A.StringAttr(f) for f in _GELU)),
                               "num_args": A.IntegerAttr(1, T.i64), "epsilon": A.FloatAttr(0.0, _F32),
                               "leakyrelu_alpha": A.FloatAttr(0.2, _F32)}
                fused = op("tf._FusedMatMul", x, w, [bias], device=_DEV, types=[type_of("c")],
                           **({} if reshaped else {"_mlir_name": _NAME}), **fused_attrs)
                result = op("tf.Reshape", fused, s, device=_DEV, _mlir_name=_NAME, types=[type_of("g_root")]) \
                    if reshaped else fused
                chain = ["c"] + (["r"] if reshaped else []) + (["pb"] if post_bias else [])
                where = [pred("0.5", _splat_near(0.5), const_of("half")),
                         pred("1/sqrt(2)", _splat_near(_INV_SQRT2), const_of("k")),
                         pred("a oneDNN _FusedMatMul computes [BiasAdd, GeluExact] for x on its device",
                              lambda t, d: _kernel("_FusedMatMul", t, d), type_of("x"), _DEV),
                         pred("the gelu's input is used by the gelu only",
                              lambda yo, *g: _uses_within(yo, *g), var(y_name), *map(var, gelu_ops[:2])),
                         pred("the contraction (and what follows it) has one use", _single_use,
                              *map(var, chain[:-1])),
                         pred("on one device", _one_device, *map(var, gelu_ops + tuple(chain)))]
                if inner == "MatMul" and post_bias is None:
                    where.append(pred("w is a constant 2-D weight (its columns size the bias)",
                                      lambda wc, tb: _columns(wc, tb) is not None, const_of("w"), var("tb")))
                if post_bias is not None:
                    where.append(pred("b is one constant per output column, kept last by the Reshape",
                                      _column_bias, const_of("b"), const_of("w"), var("tb"), const_of("s")))
                if post_bias == "BiasAdd":
                    where.append(pred("NHWC (the bias on the last axis)",
                                      lambda f: f is None or f == A.StringAttr("NHWC"), var("pb_fmt")))
                name = "gelu-exact-" + inner.lstrip("_").lower() + ("-reshaped" if reshaped else "") + (
                    f"-{post_bias.lower()}" if post_bias else "") + "-onednn"
                made.append(rule(name, source, result, where=where, tags=_APPROX, commutative=True,
                                 doc=f"TensorFlow's exact gelu of {inner}" + (" reshaped" if reshaped else "")
                                     + (f" plus a per-column {post_bias}" if post_bias else "")
                                     + " is oneDNN's _FusedMatMul with fused_ops = [BiasAdd, GeluExact]"))
    return made


GELU_RULES = _gelu_rules()


def _swish_rules() -> list[Rule]:
    """Mul(x, Sigmoid(x)) is oneDNN's `_MklSwish(x)`, as Grappler's remapper makes it with oneDNN
    on (efficientnetb0 has 49): one pass over x instead of two ops and a temporary."""
    x = var("x")
    made = []
    for scaled in (False, True):
        inner = op("tf.Mul", var("beta"), x).bind("bx") if scaled else x
        source = op("tf.Mul", x, op("tf.Sigmoid", inner).bind("sig"), device=_DEV,
                    _mlir_name=_NAME).bind("sw")
        where = [pred("x is float32 on a CPU", lambda t, d: _is_f32(t) and _cpu(d), type_of("x"), _DEV),
                 pred("the Sigmoid has one use", _single_use, var("sig")),
                 pred("on one device", _one_device, var("sw"), var("sig"), *([var("bx")] if scaled else []))]
        if scaled:  # Keras's swish is x * sigmoid(beta * x), beta = 1.0 a scalar
            where += [pred("beta is a scalar 1.0", lambda c: _all_equal(1.0)(c) and len(c.type.shape) <= 1
                           and int(np.prod(c.type.shape)) == 1, const_of("beta")),
                      pred("beta * x has one use", _single_use, var("bx"))]
        made.append(rule("swish-onednn" + ("-keras" if scaled else ""), source,
                         op("tf._MklSwish", x, device=_DEV, _mlir_name=_NAME, types=[type_of("sw")]),
                         where=where, tags=_APPROX, commutative=True,
                         doc="x * sigmoid(x)" + (" (Keras's x * sigmoid(1.0 * x))" if scaled else "")
                             + " is oneDNN's _MklSwish(x) (registered only with oneDNN on)"))
    return made


def _swish_into_conv_rules() -> list[Rule]:
    """_MklSwish(_FusedConv2D(x, w, b) [BiasAdd]) is one _FusedConv2D [BiasAdd, _MklSwish]:
    oneDNN's convolution applies the swish in its output loop (probed in TF 2.21 with oneDNN
    on; its depthwise kernel refuses the list)."""
    x, w, b = var("x"), var("w"), var("b")
    only_bias = A.ArrayAttr((A.StringAttr("BiasAdd"),))
    inner = op("tf._FusedConv2D", x, w, [b], fused_ops=only_bias, data_format=var("fmt")).bind("f")
    source = op("tf._MklSwish", inner, device=_DEV, _mlir_name=_NAME).bind("sw")
    fused = op("tf._FusedConv2D", x, w, [b], copy_attrs="f", _mlir_name=_NAME, types=[type_of("sw")],
               fused_ops=A.ArrayAttr((A.StringAttr("BiasAdd"), A.StringAttr("_MklSwish"))))
    conv = op("tf.Conv2D", x, w, data_format=var("fmt")).bind("f")
    plain = op("tf._MklSwish", conv, device=_DEV, _mlir_name=_NAME).bind("sw")
    zero = op("tf.Const", value=native("zero-channel-bias", _zero_channels, const_of("w")),
              types=[native("zero-channel-bias-type", _zero_channels_type, const_of("w"), kind="type")])
    unbiased = op("tf._FusedConv2D", x, w, [zero], copy_attrs="f", _mlir_name=_NAME, types=[type_of("sw")],
                  fused_ops=A.ArrayAttr((A.StringAttr("BiasAdd"), A.StringAttr("_MklSwish"))),
                  num_args=A.IntegerAttr(1, T.i64), num_host_args=A.IntegerAttr(0, T.i64),
                  filter_format=A.StringAttr("HWIO"), epsilon=A.FloatAttr(0.0, _F32),
                  leakyrelu_alpha=A.FloatAttr(0.2, _F32))
    common = [pred("x is float32 on a CPU", lambda t, d: _is_f32(t) and _cpu(d), type_of("x"), _DEV),
              pred("NHWC", lambda f: f is None or f == A.StringAttr("NHWC"), var("fmt")),
              pred("the convolution has one use", _single_use, var("f")),
              pred("on one device", _one_device, var("sw"), var("f"))]
    return [rule("conv2d-then-swish-onednn", plain, unbiased, where=common, tags=_APPROX,
                 doc="oneDNN's swish after a Conv2D with a constant HWIO filter is _FusedConv2D with a zero bias, "
                     "fused_ops = [BiasAdd, _MklSwish] (+0.0 changes only -0.0)"),
            rule("fusedconv2d-then-swish-onednn", source, fused,
                 where=[pred("x is float32 on a CPU", lambda t, d: _is_f32(t) and _cpu(d), type_of("x"), _DEV),
                        pred("NHWC", lambda f: f is None or f == A.StringAttr("NHWC"), var("fmt")),
                        pred("the convolution has one use", _single_use, var("f")),
                        pred("on one device", _one_device, var("sw"), var("f"))],
                 tags=_APPROX, doc="oneDNN's swish after a _FusedConv2D with fused_ops = [BiasAdd] joins it")]


def _zero_channels(w: A.Attribute | None) -> A.Attribute | None:
    """Zeros, one per output channel of a constant HWIO filter."""
    if not isinstance(w, A.DenseElementsAttr) or len(w.type.shape) != 4 or w.element_type is not _F32:
        return None
    n = w.type.shape[3]
    return A.DenseElementsAttr(T.RankedTensorType((n,), _F32), np.zeros(n, "<f4").tobytes())


def _zero_channels_type(w: A.Attribute | None) -> T.Type | None:
    return T.RankedTensorType((w.type.shape[3],), _F32) if isinstance(w, A.DenseElementsAttr) and len(
        w.type.shape) == 4 else None


def _cpu(device: A.Attribute | None) -> bool:
    from .remapper import device_type

    return device_type(device) == "CPU"


SWISH_RULES = _swish_rules() + _swish_into_conv_rules()

# ------------------------------------------------------------------ layer normalization


def _all_equal(value: float):
    def fn(c: A.Attribute | None) -> bool:
        return (isinstance(c, A.DenseElementsAttr) and c.element_type is _F32
                and bool(np.all(c.to_numpy() == value)))
    return fn


def _broadcast_keeps(x, c: A.Attribute | None) -> bool:
    """A constant c broadcast against x leaves x's (static) shape as it is."""
    shape = _static_shape(x)
    if shape is None or not isinstance(c, A.DenseElementsAttr):
        return False
    dims = tuple(c.type.shape)
    if len(dims) > len(shape):
        return False
    return all(d in (1, s) for d, s in zip(reversed(dims), reversed(shape)))


def _uses_only(bound, *users) -> bool:
    """Every use of bound's results is by one of `users` (matched ops)."""
    ids = {id(u) for u in users}
    return all(id(user) in ids for r in bound.results for user in r.uses)


_LN_INNER = ("ln_sd", "ln_var", "ln_eps", "ln_r", "ln_xs", "ln_neg", "ln_ms", "ln_shift")


def _layer_norm_pays(keep_gamma: bool, keep_beta: bool):
    """The calibrated cost model prices the matched ops (all but the mean, which stays) above
    what replaces them, on x's static shape."""
    def fn(xv, mean_op, axes, eps, gamma, beta, *old) -> bool:
        from egraft.ir.semantics.tf_cost import kernel_us, ops_cost_us as tf_ops_cost

        x_shape = _static_shape(xv)
        m_shape = _static_shape(mean_op.results[0])
        if x_shape is None or m_shape is None or not all(isinstance(c, A.DenseElementsAttr) for c in (axes, eps)):
            return False
        e_shape = tuple(eps.type.shape)
        new = (kernel_us("Sub", [x_shape, m_shape]) + kernel_us("Square", [x_shape])
               + kernel_us("Mean", [x_shape, tuple(axes.type.shape)], [m_shape])
               + kernel_us("AddV2", [m_shape, e_shape]) + kernel_us("Rsqrt", [m_shape])
               + kernel_us("Mul", [x_shape, m_shape]))
        if keep_gamma:
            new += kernel_us("Mul", [x_shape, tuple(gamma.type.shape)])
        if keep_beta:
            new += kernel_us("AddV2", [x_shape, tuple(beta.type.shape)])
        return new < tf_ops_cost(old, _shapes_for(xv))
    return fn


def _layer_norm_rules() -> list[Rule]:
    """Keras's LayerNormalization, as TensorFlow 2.21 exports it and Grappler leaves it:

        m = Mean(x, axes); v = Mean(SquaredDifference(x, m), axes); s = Rsqrt(v + eps) * gamma
        y = x * s + (-m * s + beta)

    is (x - m) * Rsqrt(Mean(Square(x - m), axes) + eps) * gamma + beta, the difference computed
    once; and where gamma is all ones or beta all zeros (what Keras initializes them to)
    whose broadcast leaves x's shape as it is, that Mul or AddV2 goes: y = x * s + ... has
    to broadcast s = Rsqrt(v) * gamma to the full shape of x, the rewritten form does not.
    Only then is it taken: with neither, the rewrite has as many full-size element-wise ops
    (measured on bert4: no gain). Regrouped float arithmetic (tagged approx); adding 0.0
    only changes -0.0 to +0.0."""
    x, axes, gamma, beta, eps, kd = var("x"), var("axes"), var("gamma"), var("beta"), var("eps"), var("kd")
    mean = op("tf.Mean", x, axes, keep_dims=kd).bind("ln_mean")
    sd = op("tf.SquaredDifference", x, mean).bind("ln_sd")
    variance = op("tf.Mean", sd, axes, keep_dims=kd).bind("ln_var")
    r = op("tf.Rsqrt", op("tf.AddV2", variance, eps).bind("ln_eps")).bind("ln_r")
    s = op("tf.Mul", r, gamma).bind("ln_s")
    xs = op("tf.Mul", x, s).bind("ln_xs")
    ms = op("tf.Mul", op("tf.Neg", ref("ln_mean", 0)).bind("ln_neg"), ref("ln_s", 0)).bind("ln_ms")
    source = op("tf.AddV2", xs, op("tf.AddV2", ms, beta).bind("ln_shift"), device=_DEV,
                _mlir_name=_NAME).bind("ln_out")
    made = []
    for keep_gamma, keep_beta in ((False, False), (True, False), (False, True)):
        d = op("tf.Sub", x, ref("ln_mean", 0), device=_DEV, types=[type_of("x")])
        v2 = op("tf.Mean", op("tf.Square", d, device=_DEV, types=[type_of("x")]), axes, keep_dims=kd, device=_DEV,
                types=[type_of("ln_var")])
        r2 = op("tf.Rsqrt", op("tf.AddV2", v2, eps, device=_DEV, types=[type_of("ln_eps")]), device=_DEV,
                types=[type_of("ln_r")])
        last = not keep_gamma and not keep_beta
        y = op("tf.Mul", d, r2, device=_DEV, types=[type_of("ln_out")], **({"_mlir_name": _NAME} if last else {}))
        if keep_gamma:
            y = op("tf.Mul", y, gamma, device=_DEV, types=[type_of("ln_out")], _mlir_name=_NAME)
        if keep_beta:
            y = op("tf.AddV2", y, beta, device=_DEV, types=[type_of("ln_out")], _mlir_name=_NAME)
        where = [pred("x is float32", _is_f32, type_of("x")),
                 pred("m is used by the layer norm only", lambda o, a, b: _uses_only(o, a, b), var("ln_mean"),
                      var("ln_sd"), var("ln_neg")),
                 pred("s is used by the layer norm only", lambda o, a, b: _uses_only(o, a, b), var("ln_s"),
                      var("ln_xs"), var("ln_ms")),
                 pred("the inner values have one use each", _single_use, *map(var, _LN_INNER)),
                 pred("gamma is " + ("not all ones" if keep_gamma else "all ones, broadcast within x's shape"),
                      (lambda xv, c: not _all_equal(1.0)(c)) if keep_gamma
                      else (lambda xv, c: _all_equal(1.0)(c) and _broadcast_keeps(xv, c)), x, const_of("gamma")),
                 pred("beta is " + ("not all zeros" if keep_beta else "all zeros, broadcast within x's shape"),
                      (lambda xv, c: not _all_equal(0.0)(c)) if keep_beta
                      else (lambda xv, c: _all_equal(0.0)(c) and _broadcast_keeps(xv, c)), x, const_of("beta")),
                 pred("the mean keeps its axes (keep_dims)", lambda k: k == A.TRUE, kd),
                 pred("the cost model says the rewrite is cheaper", _layer_norm_pays(keep_gamma, keep_beta), x,
                      var("ln_mean"), const_of("axes"), const_of("eps"), const_of("gamma"), const_of("beta"),
                      var("ln_out"), *map(var, _LN_INNER)),
                 pred("on one device", _one_device, *map(var, ("ln_out", "ln_mean", "ln_s") + _LN_INNER))]
        name = "layer-norm" + ("-gamma" if keep_gamma else "") + ("-beta" if keep_beta else "")
        made.append(rule(name, source, y, where=where, tags=_APPROX, commutative=True,
                         doc="Keras's layer norm as (x - m) * rsqrt(var + eps)"
                             + (" * gamma" if keep_gamma else ", gamma all ones dropped")
                             + (" + beta" if keep_beta else ", beta all zeros dropped")))
    return made


LAYER_NORM_RULES = _layer_norm_rules()

def _one_keeps_shape(xv, c: A.Attribute | None) -> bool:
    """c is a float32 constant of ones whose broadcast leaves x's shape as it is: a scalar, or
    a shape x's static shape absorbs (tf-canonical's mul-one asks for equal types, which
    unranked GraphDef types always are: Mul(r [1,128,1], ones [1,1,256]) is not r)."""
    if not _all_equal(1.0)(c):
        return False
    return len(c.type.shape) == 0 or _broadcast_keeps(xv, c)


#: x * 1 = x (exact, NaN included) when the ones do not broadcast x to a larger shape. Keras's
#: swish multiplies by beta = 1.0: left there, the next round's batchnorm folding scales a
#: convolution with another use by it into a second convolution (efficientnetb0: 16 of them).
MUL_ONE = [rule("mul-by-ones", op("tf.Mul", var("x"), var("c")).bind("m1"), var("x"),
                where=[pred("x is float32", _is_f32, type_of("x")),
                       pred("c is ones whose broadcast keeps x's shape", _one_keeps_shape, var("x"), const_of("c"))],
                commutative=True, doc="x * 1 = x where the ones broadcast within x's shape")]


def _reciprocal(c: A.Attribute | None) -> A.Attribute | None:
    """1/c of a float32 constant whose elements and reciprocals are all normal numbers (a
    subnormal c's reciprocal overflows: x / c is finite where x * (1/c) is not)."""
    if not isinstance(c, A.DenseElementsAttr) or c.element_type is not _F32:
        return None
    arr = c.to_numpy().astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    with np.errstate(all="ignore"):
        inv = (np.float32(1) / arr).astype(np.float32)
    if arr.size == 0 or not (np.all(np.isfinite(arr)) and np.all(np.abs(arr) >= tiny)
                             and np.all(np.isfinite(inv)) and np.all(np.abs(inv) >= tiny)):
        return None
    return A.DenseElementsAttr(c.type, np.ascontiguousarray(inv, "<f4").tobytes())


#: x / c -> x * (1/c) for a float32 constant c: Grappler's constant folding does it (a
#: division costs several multiplications); MobileNetV3Small's hard-swish divides by 6 19 times.
DIV_RULES = [rule("realdiv-by-constant", op("tf.RealDiv", var("x"), var("c")).bind("dv"),
                  op("tf.Mul", var("x"), op("tf.Const", value=native("reciprocal", _reciprocal, const_of("c")),
                                            types=[type_of("c")]), types=[type_of("dv")]),
                  where=[pred("x is float32", _is_f32, type_of("x"))], tags=_APPROX,
                  doc="x / c = x * (1/c) up to rounding, for c a float32 constant whose elements and "
                      "reciprocals are normal numbers")]

ATTENTION_RULES = _attention_rules(False) + _attention_rules(True)

register_rule_set("tf-tensat", (), "contractions of one input by constant weights merged into one and split, "
                  "where a cost estimate from static shapes says it pays (Tensat's multi-pattern rules); Keras's "
                  "layer norm without its identity gamma/beta; x * 1 = x; x / c = x * (1/c)",
                  greedy_rules=MUL_ONE + DIV_RULES + MERGE_RULES + CONV_MERGE_RULES + LAYER_NORM_RULES + ATTENTION_RULES)
register_rule_set("tf-tensat-onednn", (), "TensorFlow's exact gelu after a MatMul into oneDNN's _FusedMatMul "
                  "[BiasAdd, GeluExact], x * sigmoid(x) as _MklSwish (runs only with TF_ENABLE_ONEDNN_OPTS=1)", greedy_rules=GELU_RULES + SWISH_RULES)
