"""`tf-batchnorm-folding`: inference BatchNorm folded into the convolution or product before it.

TensorFlow graphs normalize in two shapes.  `FusedBatchNorm`/`V2`/`V3` with `is_training =
false` computes y = (x - mean) * scale * rsqrt(variance + epsilon) + offset per channel;
Keras 3 writes the same as arithmetic on the layer's variables (frozen: constants),

    AddV2(Mul(x, Mul(Rsqrt(AddV2(variance, eps)), gamma)),
          Sub(beta, Mul(mean, Mul(Rsqrt(AddV2(variance, eps)), gamma))))

(every BatchNorm of the keras.applications models is this form).  Both are an affine map
per channel, x * k + b with constant k and b, which the rules below state in small steps:

1. `keras-batchnorm` (and `-no-gamma`, for scale=False or a gamma of ones that mul-one
   removed): the normalization becomes `AddV2(Mul(x, k), b)` with k and b folded from the
   constants (float32), the same broadcasts as the original, so x's shape need not be
   known (GraphDefs carry no shapes: imported values are unranked).
   `fused-batchnorm*-inference`: y becomes `BiasAdd(Mul(x, k), b)`; `*-into-conv2d` /
   `*-into-depthwiseconv2dnative` fold k straight into the preceding convolution's filter.
   These are greedy-only: the batch statistics and reserve spaces must be unused, which
   only the IR can tell (on the e-graph, rewriting y beside an op kept for its statistics
   duplicated the convolution).
2. `mul-into-*`: a per-output-channel `Mul` by a constant after `Conv2D` (filter HWIO, last
   axis), `DepthwiseConv2dNative` (filter [H, W, in, multiplier], output channel
   in * multiplier + m) or `MatMul` (weights [in, out], or [out, in] with transpose_b) with
   constant weights is folded into the weights. The channel count comes from the weights.
3. `mul-of-biasadd`, `biasadd-of-biasadd`, `addv2-of-biasadd`: a scale moves through an
   existing bias (a convolution with use_bias=True before its BatchNorm), and a bias or a
   per-channel constant added after a bias joins it.

How they compose: the e-graph needs no order between them.  Rule 1 puts `AddV2(Mul(x, k),
b)` in the class of the BatchNorm's output; when x is a convolution with constant weights,
rule 2 puts the scaled convolution in the class of `Mul(x, k)`, so the class holds
`AddV2(Conv2D(x', w * k), b)` and extraction takes it (fewer ops). With a bias already
there, rule 3 moves the scale past it first and joins the shift to it.  The e-graph
chooses the rules whose source ops are present or built by other chosen rules
(rewrite/rules/compile.py: rules_for), so a step that only a rewrite makes possible is
still loaded.  Constants reached through `Identity` (frozen variable reads) match once
the Identity rule (tf-canonical, or the dependency family) has put the constant in the
Identity's class; constants computed by other ops (a Keras depthwise bias is a Reshape
of its variable) once the constant folding family (tf-constant-folding) has folded them.
Rules that build ops carry their result types (the e-graph would give a nested op the
replaced value's), and the convolution attributes they copy are bound one by one (the
e-graph copies no others), so they match only ops that spell those attributes out, as
GraphDef imports do.

Every rule changes float rounding (the product is distributed, sums regrouped), so all
are tagged "approx": the soundness tests compare with the interpreter's tolerance.
"""

from __future__ import annotations

import math

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.records import constraints as C

from ..checks import element_type_is, is_constant, pred, same_type
from ..dsl import const_of, op, rule, type_of, var
from ..fold_limits import allows
from ..rule import ConstOf, Native, Rule, Var
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
    splat = c.is_splat  # once: it scans a weight's hex digits
    if not splat and not allows(math.prod(c.type.shape or ()), who):
        return None
    if splat:
        return np.full(c.type.shape or (), c.data, np.float32)
    return c.to_numpy().astype(np.float32, copy=False)


def _dense(arr: np.ndarray) -> A.Attribute:
    """A float32 tensor constant, stored as raw little-endian bytes (weights are large)."""
    arr = np.ascontiguousarray(arr, "<f4")
    return A.DenseElementsAttr(T.RankedTensorType(arr.shape, T.f32), arr.tobytes())


def _layout(f: A.Attribute | None) -> str:
    return f.value if isinstance(f, A.StringAttr) else "NHWC"


def _per_channel(factor: np.ndarray, channels: int, layout: str, rank: int | None,
                 may_broadcast: bool = False) -> np.ndarray | None:
    """`factor` as one value per channel, if multiplying an output of `channels` channels
    (and of rank `rank`, None when unknown) by it scales each channel by one number and
    leaves the output's shape as it was; None otherwise. The channel count comes from the
    constants (weights, biases), not from the output's type: GraphDefs carry no shapes, so
    imported values are unranked. With `may_broadcast` (the rewrite keeps whatever shape the
    product had), a factor of more dimensions than the output is accepted too."""
    if rank is None:  # unknown rank: only a 1-D factor along NHWC's last axis keeps the shape
        ok = (layout == "NHWC" and factor.ndim >= 1 and (factor.ndim == 1 or may_broadcast)
              and all(d == 1 for d in factor.shape[:-1]) and factor.shape[-1] in (1, channels))
        return np.broadcast_to(factor.reshape(-1), (channels,)) if ok else None
    if factor.ndim > rank:
        return None
    axis = rank - 1 if layout == "NHWC" else 1
    shape = (1,) * (rank - factor.ndim) + factor.shape
    if any(d != 1 for i, d in enumerate(shape) if i != axis) or shape[axis] not in (1, channels):
        return None
    return np.broadcast_to(factor.reshape(-1), (channels,))


# ------------------------------------------------------------------ 1. BatchNorm to x * k + b


def _bn_factor(s: np.ndarray, v: np.ndarray, e: A.Attribute | None) -> np.ndarray:
    """scale * rsqrt(variance + epsilon) in float32, as TF's kernel computes it."""
    epsilon = np.float32(e.value if isinstance(e, A.FloatAttr) else 0.0001)
    with np.errstate(all="ignore"):
        return (np.float32(1) / np.sqrt(v + epsilon)) * s


def _fused_scale(s: A.Attribute, v: A.Attribute, e: A.Attribute | None, f: A.Attribute | None) -> A.Attribute | None:
    """The factor shaped to multiply a 4-D x in layout `f`: [C] (NHWC) or [C, 1, 1] (NCHW)."""
    arrays = _array(s, "fused-batchnorm factor"), _array(v, "fused-batchnorm factor")
    if arrays[0] is None or arrays[1] is None or arrays[0].shape != arrays[1].shape or arrays[0].ndim != 1:
        return None
    factor = _bn_factor(arrays[0], arrays[1], e)
    return _dense(factor if _layout(f) == "NHWC" else factor.reshape(-1, 1, 1))


def _fused_shift(s: A.Attribute, o: A.Attribute, m: A.Attribute, v: A.Attribute,
                 e: A.Attribute | None) -> A.Attribute | None:
    arrays = [_array(c, "fused-batchnorm shift") for c in (s, o, m, v)]
    if any(a is None or a.shape != arrays[0].shape or a.ndim != 1 for a in arrays):
        return None
    s_, o_, m_, v_ = arrays
    with np.errstate(all="ignore"):
        return _dense(o_ - m_ * _bn_factor(s_, v_, e))


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
        return [element_type_is(v, T.f32), *(is_constant(c) for c in (scale, offset, mean, variance)), unused]

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
                    (ConstOf("scale"), ConstOf("variance"), Var("eps"), Var("fmt")), "attr")
    made = [rule(f"{short}-inference", source(x),
                 (bias(op("tf.Mul", x, op("tf.Const", value=factor), types=[type_of("x")])), *unused_results),
                 where=where("x"), tags=_APPROX, doc=doc)]
    for conv, axis in (("Conv2D", "last"), ("DepthwiseConv2dNative", "depthwise")):
        scaled = Native(f"{short}-{conv.lower()}-filter", _fold_into_filter(axis),
                        (ConstOf("w"), ConstOf("scale"), ConstOf("variance"), Var("eps"), Var("fmt"),
                         Var("f")), "attr")
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
    def fn(wc, s, v, e, bn_format, conv_format) -> A.Attribute | None:
        if _layout(bn_format) != _layout(conv_format):
            return None
        factor = _fused_scale(s, v, e, bn_format)
        return None if factor is None else _scaled_filter(axis_shape)(wc, factor, conv_format)
    return fn


def _keras_factor(v: A.Attribute, e: A.Attribute, g: A.Attribute | None, who: str) -> np.ndarray | None:
    """rsqrt(variance + eps) * gamma in float32 (gamma None: Keras's scale=False, or a gamma
    of ones another rule already multiplied away)."""
    arrays = [_array(c, who) for c in (v, e)] + [_array(g, who) if g is not None else np.float32(1)]
    if any(a is None for a in arrays):
        return None
    with np.errstate(all="ignore"):
        return (np.float32(1) / np.sqrt(arrays[0] + arrays[1])) * arrays[2]


def _keras_scale(v: A.Attribute, e: A.Attribute, g: A.Attribute | None) -> A.Attribute | None:
    factor = _keras_factor(v, e, g, "keras-batchnorm factor")
    return None if factor is None or factor.shape != _shape(v) else _dense(factor)


def _keras_shift(v: A.Attribute, e: A.Attribute, g: A.Attribute | None, beta: A.Attribute,
                 m: A.Attribute) -> A.Attribute | None:
    factor = _keras_factor(v, e, g, "keras-batchnorm shift")
    beta_, mean_ = _array(beta, "keras-batchnorm shift"), _array(m, "keras-batchnorm shift")
    if factor is None or beta_ is None or mean_ is None:
        return None
    with np.errstate(all="ignore"):
        shift = beta_ - mean_ * factor
    return None if shift.shape != _shape(v) else _dense(shift)


def _shape(c: A.Attribute) -> tuple[int, ...] | None:
    return tuple(c.type.shape) if isinstance(c, A.DenseElementsAttr) else None


def _type_of_const(c: A.Attribute) -> T.Type | None:
    """The type of a constant's value (the folded constants have the variance's shape)."""
    return c.type if isinstance(c, A.DenseElementsAttr) else None


def _keras_rule(with_gamma: bool) -> Rule:
    """Keras 3's BatchNormalization (frozen) as AddV2(Mul(x, k), b): the same broadcasts as
    the original, so nothing about x's shape needs to be known (GraphDefs carry none)."""
    beta, gamma = var("beta"), var("gamma")
    norm = op("tf.Rsqrt", op("tf.AddV2", variance, eps))
    if with_gamma:
        norm = op("tf.Mul", norm, gamma)
    source = op("tf.AddV2", op("tf.Mul", x, norm), op("tf.Sub", beta, op("tf.Mul", mean, norm))).bind("out")
    g = ConstOf("gamma") if with_gamma else None
    factor = Native("keras-batchnorm-factor", _keras_scale, (ConstOf("variance"), ConstOf("eps"), g), "attr")
    shift = Native("keras-batchnorm-shift", _keras_shift,
                   (ConstOf("variance"), ConstOf("eps"), g, ConstOf("beta"), ConstOf("mean")), "attr")
    typed = [Native("keras-batchnorm-type", _type_of_const, (ConstOf("variance"),), "type")]
    constants = (variance, eps, beta, mean) + ((gamma,) if with_gamma else ())
    return rule("keras-batchnorm" + ("" if with_gamma else "-no-gamma"), source,
                op("tf.AddV2", op("tf.Mul", x, op("tf.Const", value=factor, types=typed), types=[type_of("out")]),
                   op("tf.Const", value=shift, types=typed)),
                where=[element_type_is(x, T.f32), *(is_constant(c) for c in constants)],
                commutative=True, tags=_APPROX,
                doc="x * (gamma * rsqrt(var + eps)) + (beta - mean * (gamma * rsqrt(var + eps))) with constant "
                    "statistics is x * k + b, k and b folded: Keras's BatchNormalization"
                    + ("" if with_gamma else "; here without gamma (scale=False, or gamma of ones removed)"))


# ------------------------------------------------------------------ 2. a channel scale into weights


def _scaled_filter(axis_shape: str):
    """Native: the constant weights times a per-output-channel factor. `axis_shape` says where
    the output channel is in the weights: "last" (Conv2D HWIO), "last2" (MatMul [in, out]),
    "first" (MatMul [out, in] with transpose_b) or "depthwise" ([H, W, in, multiplier]); the
    output's rank is the weights' (4 for convolutions, 2 for MatMul)."""
    def fn(wc: A.Attribute, kc: A.Attribute, f: A.Attribute | None) -> A.Attribute | None:
        weights, factor = _array(wc, "mul-into-weights"), _array(kc, "mul-into-weights")
        if weights is None or factor is None or weights.ndim != (2 if axis_shape in ("last2", "first") else 4):
            return None
        if axis_shape == "depthwise":
            per = _per_channel(factor, weights.shape[2] * weights.shape[3], _layout(f), 4)
            return None if per is None else _dense(weights * per.reshape(weights.shape[2], weights.shape[3]))
        per = _per_channel(factor, weights.shape[0 if axis_shape == "first" else -1], _layout(f), weights.ndim)
        if per is None:
            return None
        return _dense(weights * (per.reshape(-1, 1) if axis_shape == "first" else per))
    return fn


def _into_weights(name: str, source_op, axis_shape: str, f: Var | None, doc: str) -> Rule:
    """The rule `Mul(P(x, w), k) -> P(x, w * k)`. The product is rebuilt from the attributes
    its pattern binds (every one that changes its value), as the e-graph copies no others."""
    weights = Native(f"{name}-weights", _scaled_filter(axis_shape),
                     (ConstOf("w"), ConstOf("k"), f if f is not None else None), "attr")
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


def _scaled_bias(bc: A.Attribute, kc: A.Attribute, f: A.Attribute | None) -> A.Attribute | None:
    bias, factor = _array(bc, "mul-of-biasadd"), _array(kc, "mul-of-biasadd")
    if bias is None or factor is None or bias.ndim != 1:
        return None
    per = _per_channel(factor, bias.shape[0], _layout(f), None, may_broadcast=True)
    return None if per is None or per.shape != bias.shape else _dense(bias * per)


def _bias_sum(a: A.Attribute, c: A.Attribute) -> A.Attribute | None:
    left, right = _array(a, "biasadd-of-biasadd"), _array(c, "biasadd-of-biasadd")
    if left is None or right is None or left.shape != right.shape or left.ndim != 1:
        return None
    return _dense(left + right)


def _keeps_rank(kc: A.Attribute, pt: T.Type) -> bool:
    """Multiplying p by the constant k cannot raise p's rank (p unranked: its type fits any)."""
    return not isinstance(pt, T.RankedTensorType) or (isinstance(kc, A.DenseElementsAttr)
                                                      and len(kc.type.shape) <= pt.rank)


def _bias_plus(a: A.Attribute, c: A.Attribute, f: A.Attribute | None, rank: int | None = None) -> A.Attribute | None:
    """b + c for a BiasAdd's bias b and a constant c added after it, if c is one value per
    channel (1-D, NHWC: the sum keeps the BiasAdd's shape; or, when the BiasAdd's input has
    ``rank``, shaped (1, ..., C) of at most that rank)."""
    left, right = _array(a, "addv2-of-biasadd"), _array(c, "addv2-of-biasadd")
    if left is None or right is None or left.ndim != 1:
        return None
    per = _per_channel(right, left.shape[0], _layout(f), rank)
    return None if per is None else _dense(left + per)


def _bias_plus_4d(a: A.Attribute, c: A.Attribute, f: A.Attribute | None) -> A.Attribute | None:
    return _bias_plus(a, c, f, 4)


def _conv_bias_shift(name: str, conv: str) -> Rule:
    """`AddV2(BiasAdd(conv(x, w), b), c) -> BiasAdd(conv(x, w), b + c)`: a convolution's output
    is 4-D, so a constant c of shape (1, 1, 1, C) (Keras's resnet50 reshapes its BatchNorm
    variables so) adds one value per channel and keeps the shape."""
    return rule(name, op("tf.AddV2", op("tf.BiasAdd", op(conv, x, w).bind("cv"), b, data_format=_f), b2),
                op("tf.BiasAdd", "cv", op("tf.Const", value=Native(f"{name}-bias", _bias_plus_4d,
                                                                   (ConstOf("b"), ConstOf("b2"), Var("f")), "attr"),
                                          types=[type_of("b")]), data_format=_f),
                where=[is_constant(b), is_constant(b2)], commutative=True, tags=_APPROX,
                doc="(conv + b) + c = conv + (b + c) for c one constant per channel of the 4-D convolution "
                    "output, (1, 1, 1, C) included")


RULES = [
    *_fused_rules("FusedBatchNorm", 5),
    *_fused_rules("FusedBatchNormV2", 5),
    *_fused_rules("FusedBatchNormV3", 6),
    _keras_rule(True),
    _keras_rule(False),
    _into_weights("mul-into-conv2d", op("tf.Conv2D", x, w, **_window_attrs()), "last", _f,
                  "conv(x, w) * k = conv(x, w * k) for k per output channel (the filter's last axis, HWIO)"),
    _into_weights("mul-into-depthwise", op("tf.DepthwiseConv2dNative", x, w, **_window_attrs()), "depthwise", _f,
                  "depthwise(x, w) * k = depthwise(x, w * k): output channel c * multiplier + m is filter "
                  "[:, :, c, m]"),
    _into_weights("mul-into-matmul", op("tf.MatMul", x, w, transpose_a=var("ta"), transpose_b=A.BoolAttr(False)),
                  "last2", None, "(x w) * k = x (w * k) for k per column of the product ([in, out] weights)"),
    _into_weights("mul-into-matmul-transposed",
                  op("tf.MatMul", x, w, transpose_a=var("ta"), transpose_b=A.BoolAttr(True)), "first", None,
                  "(x wᵀ) * k = x (w * k[:, None])ᵀ: transposed [out, in] weights scale by row"),
    rule("mul-of-biasadd", op("tf.Mul", op("tf.BiasAdd", x, b, data_format=_f).bind("p"), k),
         op("tf.BiasAdd", op("tf.Mul", x, k, types=[type_of("p")]),
            op("tf.Const", value=Native("mul-of-biasadd-bias", _scaled_bias,
                                        (ConstOf("b"), ConstOf("k"), Var("f")), "attr"),
               types=[type_of("b")]),
            data_format=_f),
         where=[is_constant(b), is_constant(k), same_type("x", "p"),
                pred("k does not raise a ranked p's rank", _keeps_rank, const_of("k"), type_of("p"))],
         commutative=True, tags=_APPROX,
         doc="(x + b) * k = x * k + b * k for k per channel (1, ..., 1, C): the scale moves to the op before "
             "the bias; the new product has the old one's shape (BiasAdd keeps x's), typed as p (its type "
             "is the product's when p is unranked, or when k has no more dimensions than p)"),
    rule("biasadd-of-biasadd", op("tf.BiasAdd", op("tf.BiasAdd", x, b, data_format=_f), b2, data_format=_f),
         op("tf.BiasAdd", x, op("tf.Const", value=Native("bias-sum", _bias_sum, (ConstOf("b"), ConstOf("b2")),
                                                         "attr"), types=[type_of("b")]), data_format=_f),
         where=[is_constant(b), is_constant(b2)], tags=_APPROX,
         doc="(x + b) + b2 = x + (b + b2) per channel: two constant biases are one"),
    rule("addv2-of-biasadd", op("tf.AddV2", op("tf.BiasAdd", x, b, data_format=_f), b2),
         op("tf.BiasAdd", x, op("tf.Const", value=Native("bias-plus", _bias_plus, (ConstOf("b"), ConstOf("b2"), Var("f")),
                                                         "attr"), types=[type_of("b")]), data_format=_f),
         where=[is_constant(b), is_constant(b2)], commutative=True, tags=_APPROX,
         doc="(x + b) + c = x + (b + c) when c is one constant per channel: the shift Keras's BatchNorm "
             "leaves after a biased convolution joins its bias"),
    _conv_bias_shift("addv2-of-conv2d-biasadd", "tf.Conv2D"),
    _conv_bias_shift("addv2-of-depthwise-biasadd", "tf.DepthwiseConv2dNative"),
]

GREEDY_ONLY = [r for r in RULES if r.name.startswith("fused-batchnorm")]

register_rule_set("tf-batchnorm-folding", [r for r in RULES if r not in GREEDY_ONLY],
                  "inference BatchNorm (FusedBatchNorm V1-V3, Keras's arithmetic form) folded into the "
                  "Conv2D / DepthwiseConv2dNative / MatMul weights before it and a BiasAdd",
                  greedy_rules=GREEDY_ONLY)
