"""`tf-batchnorm-folding`: inference BatchNorm folded into the convolution or product before it.

TensorFlow graphs normalize in two shapes.  `FusedBatchNorm`/`V2`/`V3` with `is_training =
false` computes y = (x - mean) * scale * rsqrt(variance + epsilon) + offset per channel;
Keras 3 writes the same as arithmetic on the layer's variables (frozen: constants),

    AddV2(Mul(x, Mul(Rsqrt(AddV2(variance, eps)), gamma)),
          Sub(beta, Mul(mean, Mul(Rsqrt(AddV2(variance, eps)), gamma))))

(every BatchNorm of the keras.applications models is this form).  Both are an affine map
per channel, x * k + b with constant k and b, which the rules below state in small steps:

1. `fused-batchnorm*-inference`, `keras-batchnorm`: the normalization becomes
   `BiasAdd(Mul(x, k), b)` with k and b folded from the constants (float32, as TF's kernel
   computes the factor).  Only result 0 (`y`) of a FusedBatchNorm is replaced: the batch
   statistics and reserve spaces stay results of the original op, which extraction keeps
   only if something reads them (then the rewrite gains nothing and the e-graph keeps the
   op; greedy, a second form of each rule applies only when they are unused).
2. `mul-into-*`: a per-output-channel `Mul` by a constant after `Conv2D` (filter HWIO, last
   axis), `DepthwiseConv2dNative` (filter [H, W, in, multiplier], output channel
   in * multiplier + m) or `MatMul` (weights [in, out], or [out, in] with transpose_b) with
   constant weights is folded into the weights.
3. `mul-of-biasadd`, `biasadd-of-biasadd`: a scale moves through an existing bias (a
   convolution with use_bias=True before its BatchNorm) and two biases become one.

How they compose: the e-graph needs no order between them.  Rule 1 puts `BiasAdd(Mul(x,
k), b)` in the class of the BatchNorm's output; when x is a convolution with constant
weights, rule 2 puts the scaled convolution in the class of `Mul(x, k)`, so the class
holds `BiasAdd(Conv2D(x', w * k), b)` and extraction takes it (fewer ops). With a bias
already there, rule 3 moves the scale past it first.  Constants reached through
`Identity` (frozen variable reads) match once the Identity rule (tf-canonical, or the
dependency family) has put the constant in the Identity's class; constants computed by
other ops (resnet50 reshapes its BatchNorm variables) match once the constant folding
family has folded them.

Every rule changes float rounding (the product is distributed, sums regrouped), so all
are tagged "approx": the soundness tests compare with the interpreter's tolerance.
"""

from __future__ import annotations

import math

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.records import constraints as C

from ..checks import element_type_is, has_rank, is_constant, pred, same_type
from ..dsl import op, ref, rule, type_of, var
from ..fold_limits import allows
from ..rule import ConstOf, Native, Rule, TypeOf, Var
from ..rule_sets import register_rule_set

x, w, k, b, b2 = var("x"), var("w"), var("k"), var("b"), var("b2")
scale, offset, mean, variance, eps = var("scale"), var("offset"), var("mean"), var("variance"), var("eps")
fmt = var("fmt", C.str_enum("NHWC", "NCHW"))
_f = var("f")
_APPROX = ("approx",)

# ------------------------------------------------------------------ constants as arrays


def _array(c: A.Attribute, who: str) -> np.ndarray | None:
    """A float32 constant's elements (None: not float32 dense, or over the pass's fold limit)."""
    if not isinstance(c, A.DenseElementsAttr) or c.element_type is not T.f32:
        return None
    if not c.is_splat and not allows(math.prod(c.type.shape or ()), who):
        return None
    if c.is_splat:
        return np.full(c.type.shape or (), c.data, np.float32)
    return c.to_numpy().astype(np.float32, copy=False)


def _dense(arr: np.ndarray) -> A.Attribute:
    """A float32 tensor constant, stored as raw little-endian bytes (weights are large)."""
    arr = np.ascontiguousarray(arr, "<f4")
    return A.DenseElementsAttr(T.RankedTensorType(arr.shape, T.f32), "0x" + arr.tobytes().hex().upper())


def _layout(f: A.Attribute | None) -> str:
    return f.value if isinstance(f, A.StringAttr) else "NHWC"


def _per_channel(factor: np.ndarray, out: T.Type, layout: str) -> np.ndarray | None:
    """`factor` as one value per channel of `out`, if multiplying by it scales each channel by
    one number and leaves the shape as it was (so the product has `out`'s type: the rules
    ask this of the operand's type, which the e-graph knows, not of the product's, which it
    does not when an earlier rule built the product); None otherwise."""
    if not isinstance(out, T.RankedTensorType) or not out.has_static_shape or factor.ndim > out.rank:
        return None
    axis = out.rank - 1 if layout == "NHWC" else 1
    shape = (1,) * (out.rank - factor.ndim) + factor.shape
    if any(d != 1 for i, d in enumerate(shape) if i != axis) or shape[axis] not in (1, out.shape[axis]):
        return None
    return np.broadcast_to(factor.reshape(-1), (out.shape[axis],))


# ------------------------------------------------------------------ 1. BatchNorm to x * k + b


def _bn_factor(s: np.ndarray, v: np.ndarray, e: A.Attribute | None) -> np.ndarray:
    """scale * rsqrt(variance + epsilon) in float32, as TF's kernel computes it."""
    epsilon = np.float32(e.value if isinstance(e, A.FloatAttr) else 0.0001)
    with np.errstate(all="ignore"):
        return (np.float32(1) / np.sqrt(v + epsilon)) * s


def _fused_scale(s: A.Attribute, v: A.Attribute, e: A.Attribute | None, f: A.Attribute | None,
                 xt: T.Type) -> A.Attribute | None:
    arrays = _array(s, "fused-batchnorm factor"), _array(v, "fused-batchnorm factor")
    if arrays[0] is None or arrays[1] is None or arrays[0].shape != arrays[1].shape or arrays[0].ndim != 1:
        return None
    factor = _bn_factor(arrays[0], arrays[1], e)
    if _per_channel(factor, xt, _layout(f)) is None:
        return None
    return _dense(factor if _layout(f) == "NHWC" else factor.reshape(-1, 1, 1))


def _fused_shift(s: A.Attribute, o: A.Attribute, m: A.Attribute, v: A.Attribute,
                 e: A.Attribute | None) -> A.Attribute | None:
    arrays = [_array(c, "fused-batchnorm shift") for c in (s, o, m, v)]
    if any(a is None or a.shape != arrays[0].shape or a.ndim != 1 for a in arrays):
        return None
    s_, o_, m_, v_ = arrays
    with np.errstate(all="ignore"):
        return _dense(o_ - m_ * _bn_factor(s_, v_, e))


def _channel_type(broadcast: bool):
    """Native: the type of a per-channel constant of x (1-D; with `broadcast`, shaped to
    multiply x: [C] for NHWC, [C, 1, 1] for NCHW). The e-graph needs result types of the
    ops a multi-result rule builds spelled out."""
    def fn(xt: T.Type, f: A.Attribute | None) -> T.Type | None:
        nchw = _layout(f) == "NCHW"
        if not isinstance(xt, T.RankedTensorType) or xt.rank != (4 if nchw else max(xt.rank, 1)) \
                or not xt.has_static_shape:
            return None
        c = xt.shape[1 if nchw else -1]
        return T.RankedTensorType((c, 1, 1) if broadcast and nchw else (c,), T.f32)
    return fn


def _others_unused(bn) -> bool:
    """Nothing reads the batch statistics or the reserve spaces (greedy: looks at the IR)."""
    return all(not r.uses for r in bn.results[1:])


def _fused_rules(name: str, results: int) -> list[Rule]:
    """Greedy only: the op's other results must be unused, which only the IR can tell (on
    the e-graph, where uses are not seen, rewriting y beside an op kept for its statistics
    duplicated the convolution). So that the e-graph driver (which runs greedy-only rules
    after extraction) still folds the common case whole, two forms fold straight into a
    preceding Conv2D / DepthwiseConv2dNative with constant filter."""
    unused = pred("the other results are unused", _others_unused, Var("bn"))

    def where(v: str) -> list:
        return [has_rank(v, 4), element_type_is(v, T.f32), *(is_constant(c) for c in (scale, offset, mean, variance)),
                unused]

    short = "fused-batchnorm" + name[len("FusedBatchNorm"):].lower().replace("v", "-v")
    doc = (f"{name} in inference mode is x * k + b per channel, k = scale * rsqrt(variance + eps), "
           "b = offset - mean * k (constants folded in float32), when nothing reads its other results")
    shift = Native("batchnorm-shift", _fused_shift,
                   (ConstOf("scale"), ConstOf("offset"), ConstOf("mean"), ConstOf("variance"), Var("eps")), "attr")
    unused_results = [mean, variance, mean, variance, mean][:results - 1]  # replace nothing: never read

    def source(operand) -> object:
        return op(f"tf.{name}", operand, scale, offset, mean, variance, is_training=A.BoolAttr(False), epsilon=eps,
                  data_format=fmt).bind("bn")

    def bias(value) -> object:
        return op("tf.BiasAdd", value, op("tf.Const", value=shift), data_format=fmt)

    factor = Native("batchnorm-factor", _fused_scale,
                    (ConstOf("scale"), ConstOf("variance"), Var("eps"), Var("fmt"), TypeOf("x")), "attr")
    made = [rule(f"{short}-inference", source(x),
                 (bias(op("tf.Mul", x, op("tf.Const", value=factor), types=[type_of("x")])), *unused_results),
                 where=where("x"), tags=_APPROX, doc=doc)]
    for conv, axis in (("Conv2D", "last"), ("DepthwiseConv2dNative", "depthwise")):
        scaled = Native(f"{short}-{conv.lower()}-filter", _fold_into_filter(axis),
                        (ConstOf("w"), ConstOf("scale"), ConstOf("variance"), Var("eps"), Var("fmt"),
                         Var("f"), TypeOf("p")), "attr")
        folded = op(f"tf.{conv}", x, op("tf.Const", value=scaled, types=[type_of("w")]),
                    copy_attrs="p", types=[type_of("p")])
        made.append(rule(f"{short}-into-{conv.lower()}", source(op(f"tf.{conv}", x, w, data_format=_f).bind("p")),
                         (bias(folded), *unused_results),
                         where=[*where("p"), is_constant(w), pred("one use", _one_use, Var("p"))], tags=_APPROX,
                         doc=f"{doc}; k folded into the preceding {conv}'s constant filter (its only use)"))
    return made


def _one_use(producer) -> bool:
    """The convolution feeds only the BatchNorm (else scaling its filter would duplicate it)."""
    return sum(1 for r in producer.results for _ in r.uses) == 1


def _fold_into_filter(axis_shape: str):
    """Native: the filter scaled by the BatchNorm's factor (both folded from constants)."""
    def fn(wc, s, v, e, bn_format, conv_format, xt) -> A.Attribute | None:
        if _layout(bn_format) != _layout(conv_format):
            return None
        factor = _fused_scale(s, v, e, bn_format, xt)
        return None if factor is None else _scaled_filter(axis_shape)(wc, factor, xt, conv_format)
    return fn


def _keras_scale(v: A.Attribute, e: A.Attribute, g: A.Attribute, xt: T.Type) -> A.Attribute | None:
    arrays = [_array(c, "keras-batchnorm factor") for c in (v, e, g)]
    if any(a is None for a in arrays):
        return None
    with np.errstate(all="ignore"):
        factor = (np.float32(1) / np.sqrt(arrays[0] + arrays[1])) * arrays[2]
    per = _per_channel(factor, xt, "NHWC")
    return None if per is None else _dense(per)


def _keras_shift(v: A.Attribute, e: A.Attribute, g: A.Attribute, beta: A.Attribute, m: A.Attribute,
                 xt: T.Type) -> A.Attribute | None:
    arrays = [_array(c, "keras-batchnorm shift") for c in (v, e, g, beta, m)]
    if any(a is None for a in arrays):
        return None
    with np.errstate(all="ignore"):
        factor = (np.float32(1) / np.sqrt(arrays[0] + arrays[1])) * arrays[2]
        shift = arrays[3] - arrays[4] * factor
    per = _per_channel(shift, xt, "NHWC")
    return None if per is None else _dense(per)


def _keras_rule() -> Rule:
    """Keras 3's BatchNormalization (frozen) as BiasAdd(Mul(x, k), b)."""
    beta, gamma = var("beta"), var("gamma")
    norm = op("tf.Mul", op("tf.Rsqrt", op("tf.AddV2", variance, eps)), gamma)
    source = op("tf.AddV2", op("tf.Mul", x, norm), op("tf.Sub", beta, op("tf.Mul", mean, norm))).bind("out")
    factor = Native("keras-batchnorm-factor", _keras_scale,
                    (ConstOf("variance"), ConstOf("eps"), ConstOf("gamma"), TypeOf("x")), "attr")
    shift = Native("keras-batchnorm-shift", _keras_shift,
                   (ConstOf("variance"), ConstOf("eps"), ConstOf("gamma"), ConstOf("beta"), ConstOf("mean"),
                    TypeOf("x")), "attr")
    channels = Native("keras-batchnorm-channels", _channel_type(False), (TypeOf("x"), None), "type")
    return rule("keras-batchnorm", source,
                op("tf.BiasAdd", op("tf.Mul", x, op("tf.Const", value=factor, types=[channels]), types=[type_of("x")]),
                   op("tf.Const", value=shift, types=[channels]), data_format=A.StringAttr("NHWC"),
                   types=[type_of("x")]),
                where=[has_rank(x), element_type_is(x, T.f32), same_type("x", "out"), pred("x has rank >= 2 (BiasAdd's)", lambda t: isinstance(t, T.RankedTensorType) and t.rank >= 2,
                                 type_of("x")),
                       *(is_constant(c) for c in (variance, eps, gamma, beta, mean))],
                commutative=True, tags=_APPROX,
                doc="x * (gamma * rsqrt(var + eps)) + (beta - mean * (gamma * rsqrt(var + eps))) with constant "
                    "statistics is x * k + b per channel (last axis): Keras's BatchNormalization, folded")


# ------------------------------------------------------------------ 2. a channel scale into weights


def _scaled_filter(axis_shape: str):
    """Native: the constant weights times a per-output-channel factor. `axis_shape` says where
    the output channel is in the weights: "last" (Conv2D HWIO, MatMul [in, out]), "first"
    (MatMul [out, in] with transpose_b) or "depthwise" ([H, W, in, multiplier])."""
    def fn(wc: A.Attribute, kc: A.Attribute, out: T.Type, f: A.Attribute | None) -> A.Attribute | None:
        weights, factor = _array(wc, "mul-into-weights"), _array(kc, "mul-into-weights")
        if weights is None or factor is None:
            return None
        per = _per_channel(factor, out, _layout(f))
        if per is None:
            return None
        if axis_shape == "depthwise":
            if weights.ndim != 4 or weights.shape[2] * weights.shape[3] != per.shape[0]:
                return None
            return _dense(weights * per.reshape(weights.shape[2], weights.shape[3]))
        if weights.ndim < 1 or weights.shape[0 if axis_shape == "first" else -1] != per.shape[0]:
            return None
        return _dense(weights * (per.reshape(-1, 1) if axis_shape == "first" else per))
    return fn


def _into_weights(name: str, source_op, axis_shape: str, f: Var | None, doc: str) -> Rule:
    """The rule `Mul(P(x, w), k) -> P(x, w * k)`. The product is rebuilt from the attributes
    its pattern binds (every one that changes its value), as the e-graph copies no others."""
    weights = Native(f"{name}-weights", _scaled_filter(axis_shape),
                     (ConstOf("w"), ConstOf("k"), TypeOf("p"), f if f is not None else None), "attr")
    attrs = dict(source_op.attrs)
    product = op(source_op.name, x, op("tf.Const", value=weights, types=[type_of("w")]), **attrs)
    return rule(name, op("tf.Mul", source_op.bind("p"), k), product,
                where=[is_constant(w), is_constant(k), element_type_is(x, T.f32)],
                commutative=True, tags=_APPROX, doc=doc)


def _window_attrs() -> dict[str, Var]:
    """The attributes of a convolution that decide its value, bound to be copied."""
    return {"strides": var("st"), "padding": var("pad"), "explicit_paddings": var("ep"), "data_format": _f,
            "dilations": var("dil")}


# ------------------------------------------------------------------ 3. scales and biases


def _scaled_bias(bc: A.Attribute, kc: A.Attribute, out: T.Type, f: A.Attribute | None) -> A.Attribute | None:
    bias, factor = _array(bc, "mul-of-biasadd"), _array(kc, "mul-of-biasadd")
    if bias is None or factor is None or bias.ndim != 1:
        return None
    per = _per_channel(factor, out, _layout(f))
    return None if per is None or per.shape != bias.shape else _dense(bias * per)


def _bias_sum(a: A.Attribute, c: A.Attribute) -> A.Attribute | None:
    left, right = _array(a, "biasadd-of-biasadd"), _array(c, "biasadd-of-biasadd")
    if left is None or right is None or left.shape != right.shape or left.ndim != 1:
        return None
    return _dense(left + right)


RULES = [
    *_fused_rules("FusedBatchNorm", 5),
    *_fused_rules("FusedBatchNormV2", 5),
    *_fused_rules("FusedBatchNormV3", 6),
    _keras_rule(),
    _into_weights("mul-into-conv2d", op("tf.Conv2D", x, w, **_window_attrs()), "last", _f,
                  "conv(x, w) * k = conv(x, w * k) for k per output channel (the filter's last axis, HWIO)"),
    _into_weights("mul-into-depthwise", op("tf.DepthwiseConv2dNative", x, w, **_window_attrs()), "depthwise", _f,
                  "depthwise(x, w) * k = depthwise(x, w * k): output channel c * multiplier + m is filter "
                  "[:, :, c, m]"),
    _into_weights("mul-into-matmul", op("tf.MatMul", x, w, transpose_a=var("ta"), transpose_b=A.BoolAttr(False)),
                  "last", None, "(x w) * k = x (w * k) for k per column of the product ([in, out] weights)"),
    _into_weights("mul-into-matmul-transposed",
                  op("tf.MatMul", x, w, transpose_a=var("ta"), transpose_b=A.BoolAttr(True)), "first", None,
                  "(x wᵀ) * k = x (w * k[:, None])ᵀ: transposed [out, in] weights scale by row"),
    rule("mul-of-biasadd", op("tf.Mul", op("tf.BiasAdd", x, b, data_format=_f).bind("p"), k),
         op("tf.BiasAdd", op("tf.Mul", x, k, types=[type_of("x")]),
            op("tf.Const", value=Native("mul-of-biasadd-bias", _scaled_bias,
                                        (ConstOf("b"), ConstOf("k"), TypeOf("p"), Var("f")), "attr"),
               types=[type_of("b")]),
            data_format=_f),
         where=[is_constant(b), is_constant(k), same_type("x", "p")],
         commutative=True, tags=_APPROX,
         doc="(x + b) * k = x * k + b * k for k per channel: the scale moves to the op before the bias"),
    rule("biasadd-of-biasadd", op("tf.BiasAdd", op("tf.BiasAdd", x, b, data_format=_f), b2, data_format=_f),
         op("tf.BiasAdd", x, op("tf.Const", value=Native("bias-sum", _bias_sum, (ConstOf("b"), ConstOf("b2")),
                                                         "attr"), types=[type_of("b")]), data_format=_f),
         where=[is_constant(b), is_constant(b2)], tags=_APPROX,
         doc="(x + b) + b2 = x + (b + b2) per channel: two constant biases are one"),
]

GREEDY_ONLY = [r for r in RULES if r.name.startswith("fused-batchnorm")]

register_rule_set("tf-batchnorm-folding", [r for r in RULES if r not in GREEDY_ONLY],
                  "inference BatchNorm (FusedBatchNorm V1-V3, Keras's arithmetic form) folded into the "
                  "Conv2D / DepthwiseConv2dNative / MatMul weights before it and a BiasAdd",
                  greedy_rules=GREEDY_ONLY)
