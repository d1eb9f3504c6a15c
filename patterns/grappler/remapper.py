"""`tf-remapper`: Grappler's remapper fusions, where the node's device has the fused kernel.

Grappler's remapper replaces a contraction and the ops after it by one TensorFlow kernel
that computes them in the contraction's output loop:

    Act(BiasAdd(Conv2D(x, w), b))               -> _FusedConv2D(x, w, b)  fused_ops = [BiasAdd, Act]
    Act(BiasAdd(DepthwiseConv2dNative(x, w), b)) -> _FusedDepthwiseConv2dNative(x, w, b)
    Act(BiasAdd(MatMul(a, w), b))               -> _FusedMatMul(a, w, b)
    Act(FusedBatchNorm(Conv2D(x, w), s, o, m, v)) -> _FusedConv2D(x, w, s, o, m, v)  [FusedBatchNorm, Act]
    Relu(FusedBatchNormV3(x, s, o, m, v))       -> _FusedBatchNormEx(x, s, o, m, v) activation_mode = Relu

each also without the activation (Act: Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid). A bias
may also be an `AddV2` of a constant with one value per output channel (what Keras's
BatchNorm leaves after folding, patterns/grappler/batchnorm.py): that is a BiasAdd, when
the channel is the last axis (NHWC, or a MatMul's columns) and the constant is shaped (C,)
or (1, ..., 1, C) (Keras reshapes its BatchNorm variables), of no higher rank than the
output, C the output channel count the weights give; the fused op reads it flattened.

**Only where the kernel exists.** `fused_kernels.py` is generated from TensorFlow's kernel
registry and by running each kernel (fused_kernels_gen.py says how): which devices
register each fused op for which element types, and which `fused_ops` lists its CPU
kernel computes, with oneDNN off ("default") and on ("onednn"). A rule fires only if the
contraction's device type (CPU when its `device` is empty, as Grappler's placer would put
it; parsed from `/device:GPU:0`, or a legacy `/gpu:0`) registers the fused op for the
element type, which must be float32 (the lists were run on float32 only), and the fused list
is computed in the chosen setting; every node fused must be on the same device. `tf-remapper` uses the lists computed with oneDNN off AND on (a
graph must run wherever it is loaded, and oneDNN's default depends on the machine): that
excludes `_FusedDepthwiseConv2dNative` and `_FusedBatchNormEx`, whose CPU kernels produce
nothing without oneDNN in TensorFlow 2.21. `tf-remapper-onednn` uses the oneDNN lists.

**No duplicated work.** A fusion replaces its last op; the contraction (and the bias,
before an activation) must have that op as their only use, as Grappler requires, or the
contraction would run twice. Uses are seen only in the IR, so the rules are greedy-only.
The FusedBatchNorm forms also need the BatchNorm's other results unused and
is_training = false.

**No order with BatchNorm folding.** tf-batchnorm-folding cannot fold a scale or a shift
through a fused op, and in `-tf-grappler` the families take turns. So a contraction + bias
whose only user is a `Mul` (a BatchNorm scale, maybe not yet a constant) is left alone, and
what follows a fused op with fused_ops = [BiasAdd] joins it: an activation, or a constant
per-channel shift summed into its constant bias. The result is the same whichever ran first.

The fused op gets the attributes its kernel reads: the contraction's own (bound one by
one, so nothing the fused op's registry lacks is copied), `fused_ops`, `num_args`,
`epsilon` (the BatchNorm's, else 0 as Grappler writes), `leakyrelu_alpha` (the
LeakyRelu's `alpha`, else the default) and `_FusedConv2D`'s `num_host_args = 0`,
`filter_format = "HWIO"`; the export derives `T` and `TArgs` from the operand types. It
takes the fused nodes' device and the last one's GraphDef node name (`_mlir_name`), as
Grappler's does, so its consumers and a fetch still find it.
Fused kernels sum in their own order and the BatchNorm is regrouped, so every rule is
tagged "approx" (the soundness tests compare with a tolerance).
"""

from __future__ import annotations

import re

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.records import constraints as C

from ..checks import is_constant, pred
from ..dsl import const_of, native, op, rule, type_of, var
from ..rule import Rule
from ..rule_sets import register_rule_set
from .fused_kernels import COMPUTES, KERNELS

x, w, b = var("x"), var("w"), var("b")
scale, offset, mean, variance = var("scale"), var("offset"), var("mean"), var("variance")
_APPROX = ("approx",)
_ELEMENTS = {T.f16: "float16", T.bf16: "bfloat16", T.f32: "float32", T.f64: "float64"}
_DEVICE = re.compile(r"(?:/device:([A-Za-z_]+):\d+|^/?([A-Za-z]+):\d+)$")
_SAME_OR_VALID = C.str_enum("SAME", "VALID")
_NHWC = A.StringAttr("NHWC")
_NAME = var("root_name")
ACTIVATIONS = ("Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid")

# ------------------------------------------------------------------ where the kernel exists


def device_type(device: A.Attribute | None) -> str | None:
    """The device type a node's `device` names: CPU when empty (the placer's default here),
    None when it names none (a job or task only: the placer decides, so no fusion)."""
    text = _device(device)
    if not text:
        return "CPU"
    found = _DEVICE.search(text)
    return (found.group(1) or found.group(2)).upper() if found else None


def _device(device: A.Attribute | None) -> str:
    """A node's `device` as text (absent, as on ops other rules built, is empty)."""
    return device.value if isinstance(device, A.StringAttr) else ""


def _has_kernel(fused: str, devices: tuple[A.Attribute | None, ...], xt: T.Type) -> bool:
    """Every fused node is on one device, whose type registers `fused` for x's elements,
    which are float32: the fused_ops lists were run on float32 only (a kernel registered for
    float16 may still refuse a list at run time)."""
    if any(_device(d) != _device(devices[0]) for d in devices[1:]):
        return False
    kind = device_type(devices[0])
    element = _ELEMENTS.get(T.element_type(xt))
    return kind is not None and element == "float32" and element in KERNELS.get(fused, {}).get(kind, ())


def _single_use(*ops) -> bool:
    """Each matched intermediate op's value is used once (by the next op of the fusion)."""
    return all(sum(1 for r in o.results for _ in r.uses) == 1 for o in ops)


def _no_activation_after(activations: tuple[str, ...]):
    """A check on the last op of a fusion without activation: its value is not used only by
    one of `activations` on its device, which the longer fusion takes instead (the greedy
    driver meets the bias before the activation), nor only by a `Mul`: a BatchNorm scale
    (Keras computes it from its variables, a constant only once constant folding has run)
    that tf-batchnorm-folding folds into the weights and bias, which it cannot do through a
    fused op (Grappler runs the remapper after its folding for this). A Mul that never
    folds costs this fusion: one node."""
    def fn(last) -> bool:
        uses = list(last.results[0].uses)
        if len(uses) != 1:
            return True
        user = uses[0]
        if user.name == "tf.Mul":
            return False
        return not (user.name.removeprefix("tf.") in activations
                    and _device(user.attr("device")) == _device(last.attr("device")))
    return fn


def _others_unused(bn) -> bool:
    """Nothing reads a BatchNorm's statistics or reserve spaces."""
    return all(not r.uses for r in bn.results[1:])


def _channels(kind: str):
    """A check: constant b is one value per output channel of the contraction, the channel
    being the output's last axis: a MatMul's columns (`option` is its transpose_b), or a
    convolution's in NHWC (`option` is its data_format). The weights' shape comes from
    their constant (`wc`; GraphDef imports type values unranked) or else their type."""
    def fn(bias: A.Attribute, wc: A.Attribute | None, wt: T.Type, option: A.Attribute | None) -> bool:
        if isinstance(wc, A.DenseElementsAttr):
            shape = tuple(wc.type.shape)
        elif isinstance(wt, T.RankedTensorType):
            shape = tuple(wt.shape)
        else:
            return False
        if not isinstance(bias, A.DenseElementsAttr):
            return False
        if kind == "MatMul":
            if len(shape) != 2:
                return False
            count = shape[0] if isinstance(option, A.IntegerAttr) and option.value else shape[1]
        elif len(shape) != 4 or (option or _NHWC) != _NHWC:
            return False
        else:
            count = shape[2] * shape[3] if kind == "DepthwiseConv2dNative" else shape[3]
        found = tuple(bias.type.shape)  # (C,), or (1, ..., 1, C) as Keras reshapes its BatchNorm
        return (count >= 0 and 1 <= len(found) <= len(shape) and found[-1] == count
                and all(d == 1 for d in found[:-1]))
    return fn


def _flat_bias(bias: A.Attribute) -> A.Attribute | None:
    """A (1, ..., 1, C) float32 constant as the 1-D bias the fused kernel reads."""
    if not isinstance(bias, A.DenseElementsAttr) or bias.element_type is not T.f32:
        return None
    flat = np.ascontiguousarray(bias.to_numpy().reshape(-1), "<f4")
    return A.DenseElementsAttr(T.RankedTensorType(flat.shape, T.f32), flat.tobytes())


def _flat_type(bias: A.Attribute) -> T.Type | None:
    return T.RankedTensorType((bias.type.shape[-1],), T.f32) if isinstance(bias, A.DenseElementsAttr) else None


def _same_layout(first: A.Attribute | None, second: A.Attribute | None) -> bool:
    return (first or _NHWC) == (second or _NHWC)


# ------------------------------------------------------------------ the contractions


def _contraction(kind: str):
    """(source pattern of the contraction, attributes of the fused op copied from it)."""
    if kind == "MatMul":
        names = ("transpose_a", "transpose_b")
    elif kind == "Conv2D":
        names = ("strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu")
    else:  # _FusedDepthwiseConv2dNative has no explicit_paddings: EXPLICIT padding is not fused
        names = ("strides", "padding", "data_format", "dilations")
    bound = {n: var(f"c_{n}") for n in names}
    if kind == "DepthwiseConv2dNative":
        bound["padding"] = var("c_padding", _SAME_OR_VALID)
    source = op(f"tf.{kind}", x, w, device=var("d_c"), **bound).bind("c")
    extra = {"num_host_args": A.IntegerAttr(0, T.i64), "filter_format": A.StringAttr("HWIO")} \
        if kind == "Conv2D" else {}
    return source, {**bound, **extra}


def _fused_attrs(fused_ops: tuple[str, ...], num_args: int, epsilon, alpha) -> dict:
    return {"fused_ops": A.ArrayAttr(tuple(A.StringAttr(s) for s in fused_ops)),
            "num_args": A.IntegerAttr(num_args, T.i64),
            "epsilon": epsilon if epsilon is not None else A.FloatAttr(0.0, T.f32),
            "leakyrelu_alpha": alpha if alpha is not None else A.FloatAttr(0.2, T.f32)}


def _root_name(is_root: bool) -> dict:
    """The last op's GraphDef node name (`_mlir_name`, when imported), bound so that the
    fused node takes it, as Grappler's does: its consumers and a fetch still find it."""
    return {"_mlir_name": _NAME} if is_root else {}


def _activation(name: str, inner):
    """The activation op over `inner`; LeakyRelu's slope is bound to become leakyrelu_alpha."""
    attrs = {"alpha": var("alpha")} if name == "LeakyRelu" else {}
    return op(f"tf.{name}", inner, device=var("d_act"), _mlir_name=_NAME, **attrs).bind("act")


def _bias_rules(kind: str, computes: tuple[tuple[str, ...], ...], suffix: str) -> list[Rule]:
    """Contraction + BiasAdd (or a per-channel AddV2) (+ activation) into the fused op."""
    fused = "_FusedConv2D" if kind == "Conv2D" else f"_Fused{kind}"
    made = []
    for adder in ("BiasAdd", "AddV2"):
        for act in (None, *ACTIVATIONS):
            fused_ops = ("BiasAdd",) if act is None else ("BiasAdd", act)
            if fused_ops not in computes:
                continue
            contraction, copied = _contraction(kind)
            if adder == "BiasAdd":
                add = op("tf.BiasAdd", contraction, b, data_format=var("b_fmt"), device=var("d_b"),
                         **_root_name(act is None)).bind("add")
            else:
                add = op("tf.AddV2", contraction, b, device=var("d_b"), **_root_name(act is None)).bind("add")
            source = add if act is None else _activation(act, add)
            attrs = {**copied, **_fused_attrs(fused_ops, 1, None, var("alpha") if act == "LeakyRelu" else None)}
            devices = ("d_c", "d_b") + (() if act is None else ("d_act",))
            where = [pred(f"the device has a {fused} kernel for x's type",
                          lambda *a, f=fused: _has_kernel(f, a[:-1], a[-1]), *map(var, devices), type_of("x")),
                     pred("the contraction's value has one use", _single_use, var("c"))]
            if act is not None:
                where.append(pred("the bias's value has one use", _single_use, var("add")))
            else:
                where.append(pred("no fusable activation follows", _no_activation_after(
                    tuple(f[1] for f in computes if len(f) == 2 and f[0] == "BiasAdd")), var("add")))
            if adder == "BiasAdd" and kind != "MatMul":  # a matrix's channel is its last axis in both
                where.append(pred("the BiasAdd's layout is the contraction's", _same_layout, var("b_fmt"),
                                  var("c_data_format")))
            elif adder == "AddV2":
                where += [is_constant(b),
                          pred("b is one constant per output channel (the last axis)", _channels(kind), const_of("b"),
                               const_of("w"), type_of("w"),
                               var("c_transpose_b" if kind == "MatMul" else "c_data_format"))]
            name = f"{kind.lower()}-{adder.lower()}" + ("" if act is None else f"-{act.lower()}") + suffix
            what = f"{kind} then {'a per-channel AddV2 of a constant' if adder == 'AddV2' else 'BiasAdd'}" + (
                "" if act is None else f" then {act}")
            bias = b if adder == "BiasAdd" else op("tf.Const", value=native("flat-bias", _flat_bias, const_of("b")),
                                                    types=[native("flat-bias-type", _flat_type, const_of("b"),
                                                                  kind="type")])
            made.append(rule(name, source, op(f"tf.{fused}", x, w, [bias], device=var("d_c"), _mlir_name=_NAME,
                                                        **attrs),
                             where=where, tags=_APPROX, commutative=adder == "AddV2",
                             doc=f"{what} is {fused} with fused_ops = {list(fused_ops)}, on a device with its "
                                 "kernel, when each intermediate value has one use"))
    return made


def _batch_norm_rules(computes: tuple[tuple[str, ...], ...], suffix: str) -> list[Rule]:
    """Conv2D + inference FusedBatchNorm (V1-V3) (+ activation) into _FusedConv2D."""
    made = []
    for version, results in (("", 5), ("V2", 5), ("V3", 6)):
        for act in (None, *ACTIVATIONS):
            fused_ops = ("FusedBatchNorm",) if act is None else ("FusedBatchNorm", act)
            if fused_ops not in computes:
                continue
            contraction, copied = _contraction("Conv2D")
            bn = op(f"tf.FusedBatchNorm{version}", contraction, scale, offset, mean, variance,
                    is_training=A.BoolAttr(False), epsilon=var("eps"), data_format=var("bn_fmt"),
                    device=var("d_b"), **_root_name(act is None)).bind("bn")
            source = bn if act is None else _activation(act, bn[0])
            attrs = {**copied, **_fused_attrs(fused_ops, 4, var("eps"), var("alpha") if act == "LeakyRelu" else None)}
            devices = ("d_c", "d_b") + (() if act is None else ("d_act",))
            fused = op("tf._FusedConv2D", x, w, [scale, offset, mean, variance], device=var("d_c"),
                       _mlir_name=_NAME, **attrs)
            where = [pred("the device has a _FusedConv2D kernel for x's type",
                          lambda *a: _has_kernel("_FusedConv2D", a[:-1], a[-1]), *map(var, devices), type_of("x")),
                     pred("the Conv2D's value has one use", _single_use, var("c")),
                     pred("the BatchNorm's statistics are unused", _others_unused, var("bn")),
                     pred("the BatchNorm's layout is the Conv2D's", _same_layout, var("bn_fmt"),
                          var("c_data_format"))]
            if act is not None:
                where.append(pred("y has one use", lambda o: len(o.results[0].uses) == 1, var("bn")))
            else:
                where.append(pred("no fusable activation follows", _no_activation_after(
                    tuple(f[1] for f in computes if len(f) == 2 and f[0] == "FusedBatchNorm")), var("bn")))
            unused = (mean, variance, mean, variance, mean)[:results - 1]  # never read (checked)
            name = f"conv2d-fusedbatchnorm{version.lower()}" + ("" if act is None else f"-{act.lower()}") + suffix
            made.append(rule(name, source, (fused, *unused) if act is None else fused, where=where, tags=_APPROX,
                             doc=f"Conv2D then inference FusedBatchNorm{version}" + (
                                 "" if act is None else f" then {act}") + f" is _FusedConv2D with fused_ops = "
                             f"{list(fused_ops)}, when the BatchNorm's statistics are unused"))
    return made


def _batch_norm_ex_rules(computes: tuple[tuple[str, ...], ...], suffix: str) -> list[Rule]:
    """Act(FusedBatchNormV3(x, ...)) in inference into _FusedBatchNormEx."""
    made = []
    for (mode,) in computes:
        if mode not in ACTIVATIONS:
            continue
        bn = op("tf.FusedBatchNormV3", x, scale, offset, mean, variance, is_training=A.BoolAttr(False),
                epsilon=var("eps"), data_format=var("bn_fmt"), exponential_avg_factor=var("eaf"),
                device=var("d_b")).bind("bn")
        source = op(f"tf.{mode}", bn, device=var("d_act"), _mlir_name=_NAME).bind("act")
        fused = op("tf._FusedBatchNormEx", x, scale, offset, mean, variance, [], is_training=A.BoolAttr(False),
                   epsilon=var("eps"), data_format=var("bn_fmt"), exponential_avg_factor=var("eaf"),
                   activation_mode=A.StringAttr(mode), num_side_inputs=A.IntegerAttr(0, T.i64),
                   device=var("d_b"), _mlir_name=_NAME,
                   types=[type_of("act"), *(type_of("scale") for _ in range(4)), T.UnrankedTensorType(T.f32)])
        made.append(rule(f"fusedbatchnormv3-{mode.lower()}{suffix}", source, fused[0], where=[
            pred("the device has a _FusedBatchNormEx kernel for x's type",
                 lambda d1, d2, xt: _has_kernel("_FusedBatchNormEx", (d1, d2), xt), var("d_b"), var("d_act"),
                 type_of("x")),
            pred("the BatchNorm's statistics are unused and y has one use",
                 lambda o: _others_unused(o) and len(o.results[0].uses) == 1, var("bn")),
            pred("NHWC with a channel count divisible by 4 (the kernel refuses others at run time)",
                 _batch_norm_ex_shape, var("bn_fmt"), const_of("scale"), type_of("scale"))],
            tags=_APPROX, doc=f"{mode}(FusedBatchNormV3(x)) in inference is _FusedBatchNormEx with activation_mode "
                              f"= {mode}, when the BatchNorm's statistics are unused"))
    return made


def _batch_norm_ex_shape(fmt: A.Attribute | None, sc: A.Attribute | None, st: T.Type) -> bool:
    shape = sc.type.shape if isinstance(sc, A.DenseElementsAttr) else getattr(st, "shape", None)
    return _same_layout(fmt, _NHWC) and shape is not None and len(shape) == 1 and shape[0] > 0 and shape[0] % 4 == 0


def _summed_bias(bias: A.Attribute, shift: A.Attribute, rank: int) -> A.Attribute | None:
    """b + c for a fused op's 1-D float32 bias b and a constant c added after it, if c is
    one value per channel ((C,) or (1, ..., 1, C), of rank <= the output's)."""
    if not all(isinstance(a, A.DenseElementsAttr) and a.element_type is T.f32 for a in (bias, shift)):
        return None
    left, right = bias.to_numpy(), shift.to_numpy()
    if left.ndim != 1 or not 1 <= right.ndim <= rank or right.shape[-1] != left.shape[0] \
            or any(d != 1 for d in right.shape[:-1]):
        return None
    total = np.ascontiguousarray(left + right.reshape(-1), "<f4")
    return A.DenseElementsAttr(bias.type, total.tobytes())


def _absorbing_rules(fused: str, computes: tuple[tuple[str, ...], ...], suffix: str) -> list[Rule]:
    """What follows a fused op with fused_ops = [BiasAdd] joins it: an activation it
    computes, or a constant per-channel shift added to its constant bias (a BatchNorm
    shift tf-batchnorm-folding left after a bias the remapper had already fused: the
    result is the same whichever family ran first)."""
    if ("BiasAdd",) not in computes:
        return []
    rank = 2 if fused == "_FusedMatMul" else 4
    only_bias = A.ArrayAttr((A.StringAttr("BiasAdd"),))

    def inner():
        layout = {} if fused == "_FusedMatMul" else {"data_format": var("f_fmt")}
        return op(f"tf.{fused}", x, w, [b], fused_ops=only_bias, device=var("d_c"), **layout).bind("f")

    one_use = pred("the fused op's value has one use", _single_use, var("f"))
    made = []
    for act in ACTIVATIONS:
        if ("BiasAdd", act) not in computes:
            continue
        alpha = var("alpha") if act == "LeakyRelu" else None
        source = _activation(act, inner())
        attrs = {"fused_ops": A.ArrayAttr((A.StringAttr("BiasAdd"), A.StringAttr(act)))}
        if alpha is not None:
            attrs["leakyrelu_alpha"] = alpha
        made.append(rule(f"{fused.lower().lstrip('_')}-then-{act.lower()}{suffix}", source,
                         op(f"tf.{fused}", x, w, [b], copy_attrs="f", _mlir_name=_NAME, **attrs),
                         where=[one_use, pred(f"the device has a {fused} kernel for x's type",
                                              lambda a, c, t: _has_kernel(fused, (a, c), t), var("d_c"),
                                              var("d_act"), type_of("x"))], tags=_APPROX,
                         doc=f"{act} after {fused} with fused_ops = [BiasAdd] joins it as [BiasAdd, {act}]"))
    for adder in ("AddV2", "BiasAdd"):
        shift = var("shift")
        attrs = {"data_format": var("s_fmt")} if adder == "BiasAdd" else {}
        source = op(f"tf.{adder}", inner(), shift, device=var("d_s"), _mlir_name=_NAME, **attrs)
        summed = op("tf.Const", value=native("summed-bias", lambda bc, sc: _summed_bias(bc, sc, rank), const_of("b"),
                                             const_of("shift")), types=[type_of("b")])
        where = [one_use, is_constant(b), is_constant(shift),
                 pred("on one device", lambda a, c: _device(a) == _device(c), var("d_c"), var("d_s"))]
        if adder == "BiasAdd" and fused != "_FusedMatMul":  # a matrix's channel is its last axis in both
            where.append(pred("the shift's layout is the fused op's", _same_layout, var("s_fmt"), var("f_fmt")))
        elif adder == "AddV2" and fused != "_FusedMatMul":  # a constant added broadcasts on the last axis
            where.append(pred("the fused op is NHWC", lambda f: _same_layout(f, _NHWC), var("f_fmt")))
        made.append(rule(f"{fused.lower().lstrip('_')}-then-{adder.lower()}{suffix}", source,
                         op(f"tf.{fused}", x, w, [summed], copy_attrs="f", _mlir_name=_NAME),
                         where=where, tags=_APPROX, commutative=adder == "AddV2",
                         doc=f"a constant per-channel {adder} after {fused} with fused_ops = [BiasAdd] joins its "
                             "constant bias"))
    return made


def rules(setting: str) -> list[Rule]:
    """Every fusion whose kernel computes in `setting` ("portable": oneDNN off and on)."""
    suffix = "" if setting == "portable" else f"-{setting}"

    def lists(fused: str) -> tuple[tuple[str, ...], ...]:
        if setting == "portable":
            return tuple(f for f in COMPUTES["default"][fused] if f in COMPUTES["onednn"][fused])
        return COMPUTES[setting][fused]
    return [*_bias_rules("Conv2D", lists("_FusedConv2D"), suffix),
            *_bias_rules("DepthwiseConv2dNative", lists("_FusedDepthwiseConv2dNative"), suffix),
            *_bias_rules("MatMul", lists("_FusedMatMul"), suffix),
            *_batch_norm_rules(lists("_FusedConv2D"), suffix),
            *_batch_norm_ex_rules(lists("_FusedBatchNormEx"), suffix),
            *(r for f in ("_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul")
              for r in _absorbing_rules(f, lists(f), suffix))]


RULES = rules("portable")
ONEDNN_RULES = rules("onednn")

register_rule_set("tf-remapper", (), "Grappler's remapper: contraction + bias / BatchNorm (+ activation) "
                  "into TensorFlow's fused kernels, where the device has one computing it with oneDNN on and off",
                  greedy_rules=RULES)
register_rule_set("tf-remapper-onednn", (), "tf-remapper's fusions for TensorFlow with oneDNN on "
                  "(TF_ENABLE_ONEDNN_OPTS=1): also _FusedDepthwiseConv2dNative, _FusedBatchNormEx, Gelu",
                  greedy_rules=ONEDNN_RULES)
