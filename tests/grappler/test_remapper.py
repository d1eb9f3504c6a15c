"""tf-remapper (patterns/grappler/remapper.py): each fusion checked against the interpreter
through the soundness harness, the fusions it must refuse (a second use, a device without
the kernel, a layout the bias does not follow), the fused ops' records against TensorFlow's
registry snapshot, their semantics against TensorFlow's kernels, and a Keras model frozen at
test time, folded and fused, whose outputs TensorFlow confirms with the fused ops present.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from egraft.ir import parse, print_ir
from egraft.ir.dialects.tf_fused_ops import TF_FUSED_OPS
from egraft.ir.graphdef.op_registry import lookup_op
from egraft.ir.semantics import Tolerance, run_function
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness import assert_pass_sound
from egraft.patterns import rule_set
from egraft.patterns.grappler.fused_kernels import COMPUTES
from egraft.patterns.grappler.remapper import ACTIVATIONS, device_type

from .keras_models import frozen, randomize_batchnorms, run_graph

REMAP = "builtin.module(func.func(canonicalize{driver=greedy rules=%s}))"
TOLERANCE = Tolerance(rtol=1e-4, atol=1e-4)
_CONV = ('strides = [1, 1, 1, 1], data_format = "NHWC", dilations = [1, 1, 1, 1], explicit_paddings = [], '
         'padding = "SAME"')
X, O = "tensor<1x4x4x2xf32>", "tensor<1x4x4x3xf32>"


def _module(body: str, device: str = "", returned: str = f"%r : {O}", arg: str = X) -> str:
    """A function of x with a constant 2x2x2x3 filter and bias; `body` computes %r."""
    dev = f'device = "{device}"'
    return (f"func.func @f(%x: {arg}) -> ({returned.split(' : ', 1)[1]}) {{\n"
            '  %w = "tf.Const"() {value = dense<[[[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], [[1.0, 2.0, 3.0], '
            '[-1.0, 0.5, 0.125]]], [[[0.25, 0.5, -2.0], [1.0, -1.5, 0.75]], [[2.0, -1.0, 0.5], [0.5, 1.0, '
            '-0.25]]]]> : tensor<2x2x2x3xf32>} : () -> tensor<2x2x2x3xf32>\n'
            '  %b = "tf.Const"() {value = dense<[0.1, -2.0, 0.3]> : tensor<3xf32>} : () -> tensor<3xf32>\n'
            f'  %c = "tf.Conv2D"(%x, %w) {{{_CONV}, use_cudnn_on_gpu = true, {dev}}} : ({arg}, '
            f'tensor<2x2x2x3xf32>) -> {O}\n'
            + body.replace("DEV", dev) + f"  return {returned}\n}}\n")


def _fuse(text: str, rules: str = "tf-remapper") -> str:
    module = parse(text)
    PassManager(parse_pipeline(REMAP % rules)).run(module)
    return print_ir(module)


def _sound(text: str, rules: str = "tf-remapper") -> str:
    """The set on `text`, checked by the soundness harness (interpreter before and after)."""
    assert_pass_sound(text, REMAP % rules, examples=20, exact=False, tolerance=TOLERANCE, special_floats=False)
    return _fuse(text, rules)


BIAS = '  %a = "tf.BiasAdd"(%c, %b) {data_format = "NHWC", DEV} : (' + O + ', tensor<3xf32>) -> ' + O + "\n"


@pytest.mark.parametrize("act", ["", "Relu", "Relu6", "Elu", "LeakyRelu"])
def test_conv_bias_activation_fuses(act: str) -> None:
    attrs = ", alpha = 0.3 : f32" if act == "LeakyRelu" else ""
    body = BIAS + (f'  %r = "tf.{act}"(%a) {{DEV{attrs}}} : ({O}) -> {O}\n' if act
                   else f'  %r = "tf.Identity"(%a) : ({O}) -> {O}\n')
    out = _sound(_module(body))
    expected = '["BiasAdd"' + (f', "{act}"]' if act else "]")
    assert out.count('"tf._FusedConv2D"') == 1 and f"fused_ops = {expected}" in out, out
    assert '"tf.Conv2D"' not in out and '"tf.BiasAdd"' not in out and (not act or f'"tf.{act}"' not in out), out
    assert ("leakyrelu_alpha = 3.000000e-01" in out) == (act == "LeakyRelu") and "num_args = 1" in out, out


def test_per_channel_addv2_is_a_bias() -> None:
    body = (f'  %a = "tf.AddV2"(%b, %c) {{DEV}} : (tensor<3xf32>, {O}) -> {O}\n'
            f'  %r = "tf.Relu"(%a) {{DEV}} : ({O}) -> {O}\n')
    out = _sound(_module(body))
    assert 'fused_ops = ["BiasAdd", "Relu"]' in out and '"tf.AddV2"' not in out, out


def test_addv2_of_a_broadcast_scalar_is_not_a_bias() -> None:
    body = ('  %s = "tf.Const"() {value = dense<0.5> : tensor<1xf32>} : () -> tensor<1xf32>\n'
            f'  %r = "tf.AddV2"(%c, %s) {{DEV}} : ({O}, tensor<1xf32>) -> {O}\n')
    assert '"tf._FusedConv2D"' not in _fuse(_module(body))


def test_second_use_of_the_convolution_is_not_fused() -> None:
    """The Conv2D is also returned: fusing would compute it twice."""
    out = _fuse(_module(BIAS, returned=f"%a, %c : {O}, {O}"))
    assert '"tf._FusedConv2D"' not in out, out


def test_second_use_of_the_bias_keeps_the_activation_apart() -> None:
    body = BIAS + f'  %r = "tf.Relu"(%a) {{DEV}} : ({O}) -> {O}\n'
    out = _sound(_module(body, returned=f"%r, %a : {O}, {O}"))
    assert 'fused_ops = ["BiasAdd"]' in out and '"tf.Relu"' in out, out


@pytest.mark.parametrize("device, fused", [("", True), ("/job:localhost/replica:0/task:0/device:CPU:0", True),
                                           ("/device:GPU:0", False), ("/job:worker/task:1", False)])
def test_only_on_a_device_with_the_kernel(device: str, fused: bool) -> None:
    """TensorFlow 2.21's tensorflow-cpu registers the fused kernels on CPU only; a node with
    no device type named is left to the placer, and not fused."""
    out = _fuse(_module(BIAS + f'  %r = "tf.Relu"(%a) {{DEV}} : ({O}) -> {O}\n', device=device))
    assert ('"tf._FusedConv2D"' in out) == fused, out


def test_device_types() -> None:
    from egraft.ir.core import attributes as A

    assert [device_type(A.StringAttr(d)) for d in ("", "/device:GPU:1", "/gpu:0", "/cpu:0", "/job:w/task:0")] == [
        "CPU", "GPU", "GPU", "CPU", None]


def test_matmul_bias_tanh_fuses() -> None:
    text = ("func.func @f(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {\n"
            '  %w = "tf.Const"() {value = dense<[[0.5, -1.0, 2.0, 1.0], [1.5, 0.25, -0.75, 2.0], '
            '[1.0, 2.0, 3.0, -1.0]]> : tensor<3x4xf32>} : () -> tensor<3x4xf32>\n'
            '  %b = "tf.Const"() {value = dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>} : () -> tensor<4xf32>\n'
            '  %p = "tf.MatMul"(%x, %w) {transpose_a = false, transpose_b = false} : (tensor<2x3xf32>, '
            'tensor<3x4xf32>) -> tensor<2x4xf32>\n'
            '  %a = "tf.BiasAdd"(%p, %b) {data_format = "NHWC"} : (tensor<2x4xf32>, tensor<4xf32>) -> '
            'tensor<2x4xf32>\n'
            '  %r = "tf.Tanh"(%a) : (tensor<2x4xf32>) -> tensor<2x4xf32>\n'
            "  return %r : tensor<2x4xf32>\n}\n")
    out = _sound(text)
    assert '"tf._FusedMatMul"' in out and 'fused_ops = ["BiasAdd", "Tanh"]' in out and '"tf.MatMul"' not in out, out


def _conv_batch_norm(act: str, returned: str = f"%r : {O}") -> str:
    c = "tensor<3xf32>"
    consts = "".join(f'  %{n} = "tf.Const"() {{value = dense<{v}> : {c}}} : () -> {c}\n'
                     for n, v in (("s", "[1.5, 0.5, 2.0]"), ("o", "[0.1, -0.2, 0.3]"), ("m", "[0.4, 0.5, -0.6]"),
                                  ("v", "[1.0, 2.0, 0.5]")))
    body = (consts + f'  %y:6 = "tf.FusedBatchNormV3"(%c, %s, %o, %m, %v) {{data_format = "NHWC", epsilon = 0.001 '
            f': f32, is_training = false, DEV}} : ({O}, {c}, {c}, {c}, {c}) -> '
            f'({O}, {c}, {c}, {c}, {c}, tensor<*xf32>)\n'
            f'  %r = "tf.{act}"(%y#0) {{DEV}} : ({O}) -> {O}\n')
    return _module(body, returned=returned)


def test_conv_batchnorm_relu_fuses() -> None:
    out = _sound(_conv_batch_norm("Relu6"))
    assert 'fused_ops = ["FusedBatchNorm", "Relu6"]' in out and "num_args = 4" in out, out
    assert "epsilon = 1.000000e-03" in out and '"tf.FusedBatchNormV3"' not in out, out


def test_batchnorm_statistics_read_is_not_fused() -> None:
    out = _fuse(_conv_batch_norm("Relu", returned=f"%r, %y#1 : {O}, tensor<3xf32>"))
    assert '"tf._FusedConv2D"' not in out, out


def test_onednn_set_fuses_depthwise_and_batchnorm_ex() -> None:
    """The oneDNN lists add the fusions whose CPU kernels compute only with oneDNN on."""
    portable, onednn = rule_set("tf-remapper"), rule_set("tf-remapper-onednn")
    assert not any("depthwise" in r.name or "fusedbatchnormv3-relu" == r.name for r in portable.rules)
    assert any("depthwise" in r.name for r in onednn.rules) and all(r.name.endswith("-onednn") for r in onednn.rules)
    x = "tensor<1x4x4x3xf32>"
    text = ("func.func @f(%x: " + x + ") -> " + x + " {\n"
            '  %w = "tf.Const"() {value = dense<[[[[0.5], [1.5], [-2.0]], [[1.0], [-0.25], [3.0]]]]> : '
            'tensor<1x2x3x1xf32>} : () -> tensor<1x2x3x1xf32>\n'
            '  %b = "tf.Const"() {value = dense<[0.25, -0.5, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>\n'
            f'  %c = "tf.DepthwiseConv2dNative"(%x, %w) {{{_CONV}}} : ({x}, tensor<1x2x3x1xf32>) -> {x}\n'
            f'  %a = "tf.BiasAdd"(%c, %b) {{data_format = "NHWC"}} : ({x}, tensor<3xf32>) -> {x}\n'
            f'  %r = "tf.Relu6"(%a) : ({x}) -> {x}\n  return %r : {x}\n}}\n')
    assert '"tf._Fused' not in _fuse(text)
    out = _sound(text, "tf-remapper-onednn")
    assert '"tf._FusedDepthwiseConv2dNative"' in out and 'fused_ops = ["BiasAdd", "Relu6"]' in out, out


def test_records_follow_the_registry() -> None:
    """Every attribute and operand name of the records is TensorFlow's (snapshot in
    ir/graphdef/op_registry.json, generated from TF 2.21)."""
    for record in TF_FUSED_OPS:
        op_def = lookup_op(record.name.removeprefix("tf."))
        assert op_def is not None, record.name
        names = {a.name for a in op_def.attr}
        assert {a.name for a in record.attributes} <= names, record.name
        inputs = [a.name for a in op_def.input_arg]
        assert [o.name for o in record.operands] == inputs[:len(record.operands)], record.name


# ------------------------------------------------------------------ against TensorFlow's kernels


def _crosscheck(setting: str) -> list[str]:
    """Each fused op and fused_ops list TensorFlow computes in `setting` with an activation
    the remapper emits (not Gelu), run by TF's CPU kernel and by the interpreter on random
    inputs: the disagreements."""
    import tensorflow as tf
    from tensorflow.core.framework import attr_value_pb2, graph_pb2

    rng = np.random.default_rng(1)
    f32 = tf.float32.as_datatype_enum
    failures = []

    def run_tf(op: str, inputs: list, attrs: dict) -> np.ndarray:
        graph = graph_pb2.GraphDef()
        for i, value in enumerate(inputs):
            node = graph.node.add(name=f"in{i}", op="Const")
            node.attr["dtype"].type = f32
            node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))
        node = graph.node.add(name="out", op=op, input=[f"in{i}" for i in range(len(inputs))])
        for key, value in attrs.items():
            node.attr[key].CopyFrom(value)
        with tf.Graph().as_default() as g:
            tf.graph_util.import_graph_def(graph, name="")
            with tf.compat.v1.Session(graph=g) as session:
                return session.run("out:0")

    def run_ours(op: str, inputs: list, attrs: str) -> np.ndarray:
        types = ", ".join("tensor<" + "x".join(map(str, a.shape)) + "xf32>" for a in inputs)
        args = ", ".join(f"%a{i}" for i in range(len(inputs)))
        params = ", ".join(f"%a{i}: tensor<" + "x".join(map(str, a.shape)) + "xf32>" for i, a in enumerate(inputs))
        n = 6 if op == "_FusedBatchNormEx" else 1
        results = ", ".join(["tensor<*xf32>"] * n)
        module = parse(f"func.func @f({params}) -> tensor<*xf32> {{\n"
                       f'  %r:{n} = "tf.{op}"({args}) {{{attrs}}} : ({types}) -> ({results})\n'
                       f"  return %r#0 : tensor<*xf32>\n}}")
        return run_function(module, inputs)[0]

    def listed(**kw) -> attr_value_pb2.AttrValue:
        return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(**kw))

    x = rng.standard_normal((2, 5, 5, 4)).astype(np.float32)
    vec = [rng.uniform(0.5, 1.5, 4).astype(np.float32) for _ in range(4)]
    for op, lists in COMPUTES[setting].items():
        for fused in lists:
            if fused[-1] not in ACTIVATIONS + ("BiasAdd", "FusedBatchNorm"):
                continue
            if op == "_FusedBatchNormEx":
                inputs = [x, *vec]
                ours = f'activation_mode = "{fused[0]}", is_training = false, epsilon = 0.001 : f32'
                theirs = dict(T=attr_value_pb2.AttrValue(type=f32), U=attr_value_pb2.AttrValue(type=f32),
                              activation_mode=attr_value_pb2.AttrValue(s=fused[0].encode()),
                              is_training=attr_value_pb2.AttrValue(b=False),
                              num_side_inputs=attr_value_pb2.AttrValue(i=0), epsilon=attr_value_pb2.AttrValue(f=0.001))
            else:
                n = 1 if fused[0] == "BiasAdd" else 4
                weights = {"_FusedConv2D": (3, 3, 4, 4), "_FusedDepthwiseConv2dNative": (3, 3, 4, 1),
                           "_FusedMatMul": (20, 4)}[op]
                a = x.reshape(10, 20) if op == "_FusedMatMul" else x
                inputs = [a, rng.standard_normal(weights).astype(np.float32), *vec[:n]]
                fused_ops = "[" + ", ".join(f'"{f}"' for f in fused) + "]"
                ours = f"fused_ops = {fused_ops}, num_args = {n}, epsilon = 0.001 : f32, leakyrelu_alpha = 0.3 : f32"
                theirs = dict(T=attr_value_pb2.AttrValue(type=f32), num_args=attr_value_pb2.AttrValue(i=n),
                              fused_ops=listed(s=[f.encode() for f in fused]),
                              epsilon=attr_value_pb2.AttrValue(f=0.001),
                              leakyrelu_alpha=attr_value_pb2.AttrValue(f=0.3))
                if op != "_FusedMatMul":
                    ours += ', strides = [1, 2, 2, 1], padding = "SAME"'
                    theirs.update(strides=listed(i=[1, 2, 2, 1]), padding=attr_value_pb2.AttrValue(s=b"SAME"))
                if op == "_FusedConv2D":
                    theirs["TArgs"] = listed(type=[f32] * n)
            expected, actual = run_tf(op, inputs, theirs), run_ours(op, inputs, ours)
            if expected.shape != actual.shape or not np.allclose(actual, expected, rtol=1e-4, atol=1e-4):
                failures.append(f"{op} {fused}: max |diff| {np.abs(actual - expected).max()}")
    return failures


@pytest.mark.tf
def test_semantics_against_tensorflow_without_onednn() -> None:
    """Every list computed with oneDNN off, in a process with TF_ENABLE_ONEDNN_OPTS=0 (the
    other setting runs in the next test's subprocess: it is read when TF loads)."""
    assert _crosscheck_in("default") == []


@pytest.mark.tf
def test_semantics_against_tensorflow_with_onednn() -> None:
    assert _crosscheck_in("onednn") == []


def _crosscheck_in(setting: str) -> list[str]:
    pytest.importorskip("tensorflow")
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1" if setting == "onednn" else "0", TF_CPP_MIN_LOG_LEVEL="3")
    code = ("import json; from tests.grappler.test_remapper import _crosscheck; "
            f"print(json.dumps(_crosscheck({setting!r})))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.tf
def test_keras_model_fused_agrees_in_tensorflow(tmp_path) -> None:
    """A small Keras model (Conv2D + bias + ReLU, Conv2D + BatchNormalization + ReLU6, Dense +
    ReLU, Dense), frozen by TensorFlow at test time, through egraft-opt -tf-grappler with the
    remapper family (after constant and BatchNorm folding): the GraphDef TensorFlow imports has
    _FusedConv2D and _FusedMatMul and no Conv2D, BiasAdd or Relu left, and computes the same
    outputs (rtol 1e-4, 3 inputs)."""
    tf = pytest.importorskip("tensorflow")

    from egraft.passes.cli.main import main

    keras = tf.keras
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    inputs = keras.Input((8, 8, 3), batch_size=2)
    bias = "random_normal"  # Keras's zero biases would be dropped before the remapper (Grappler drops them too)
    h = keras.layers.Conv2D(4, 3, padding="same", activation="relu", bias_initializer=bias)(inputs)
    h = keras.layers.Conv2D(6, 3, strides=2, use_bias=False)(h)
    h = keras.layers.ReLU(6.0)(keras.layers.BatchNormalization()(h))
    h = keras.layers.GlobalAveragePooling2D()(h)
    outputs = keras.layers.Dense(5, bias_initializer=bias)(keras.layers.Dense(7, activation="relu",
                                                                            bias_initializer=bias)(h))
    model = keras.Model(inputs, outputs)
    randomize_batchnorms(model, rng)
    graph, feed, fetch = frozen(model, (2, 8, 8, 3))

    source, target = tmp_path / "keras.pb", tmp_path / "fused.pb"
    source.write_bytes(graph.SerializeToString())
    err = io.StringIO()
    code = main([str(source), f"--tf-input-arrays={feed}", f"--tf-output-arrays={fetch}",
                 "-tf-grappler=remapper=true report=true", "-o", str(target)],
                stdin=lambda: b"", stdout=io.StringIO(), stderr=err)
    assert code == 0 and "remapper: Graph size after" in err.getvalue(), err.getvalue()
    fused = tf.compat.v1.GraphDef.FromString(target.read_bytes())
    ops = [n.op for n in fused.node]
    assert ops.count("_FusedConv2D") == 2 and ops.count("_FusedMatMul") == 2, [o for o in ops if o != "Const"]
    assert not {"Conv2D", "MatMul", "BiasAdd", "Relu", "Relu6"} & set(ops), ops

    for seed in range(3):
        x = np.random.default_rng(seed).normal(0, 1, (2, 8, 8, 3)).astype(np.float32)
        np.testing.assert_allclose(run_graph(fused, feed, fetch, x), run_graph(graph, feed, fetch, x), rtol=1e-4, atol=1e-5)


def test_a_batchnorm_scale_after_the_bias_waits_for_its_fold() -> None:
    """Conv2D + BiasAdd then Mul by a constant (a Keras BatchNorm tf-batchnorm-folding folds
    into the weights): not fused, which would block that fold."""
    body = (BIAS + '  %k = "tf.Const"() {value = dense<[2.0, 0.5, 1.5]> : tensor<3xf32>} : () -> tensor<3xf32>\n'
            f'  %r = "tf.Mul"(%a, %k) {{DEV}} : ({O}, tensor<3xf32>) -> {O}\n')
    assert '"tf._FusedConv2D"' not in _fuse(_module(body))


def test_a_fused_node_without_a_name_exports_under_a_valid_one() -> None:
    """An op other rules built has no GraphDef name; the export's fallback must still be a
    name TensorFlow accepts (not '_FusedConv2D_1': names cannot start with '_')."""
    import re

    from egraft.ir.graphdef.export_graphdef import export_graphdef
    from egraft.passes.tf.executor_to_tfg import executor_to_tfg

    inner = _module(BIAS + f'  %r = "tf.Relu"(%a) : ({O}) -> {O}\n').split("\n", 1)[1].rsplit("  return", 1)[0]
    text = (f"func.func @main(%x: {X}) -> {O} {{\n  %g = tf_executor.graph {{\n    %o, %ctl = tf_executor.island {{\n"
            + inner + f"      tf_executor.yield %r : {O}\n    }}\n    tf_executor.fetch %o : {O}\n  }}\n"
            f"  return %g : {O}\n}}\n")
    module = parse(text)
    PassManager(parse_pipeline(REMAP % "tf-remapper")).run(module)
    nodes = {n.name: n.op for n in export_graphdef(executor_to_tfg(module)).node}
    assert "_FusedConv2D" in nodes.values(), nodes
    assert all(re.fullmatch(r"[A-Za-z0-9.][A-Za-z0-9_.\-/>]*", name) for name in nodes), nodes


def test_only_float32_the_lists_were_run_on() -> None:
    f16 = _module(BIAS + f'  %r = "tf.Relu"(%a) : ({O}) -> {O}\n').replace("f32", "f16")
    assert '"tf._Fused' not in _fuse(f16)


def test_keras_reshaped_bias_is_flattened() -> None:
    """A (1, 1, 1, C) constant added after the convolution (Keras's reshaped BatchNorm shift)
    is a bias: the fused op reads it as (C,)."""
    body = ('  %s = "tf.Const"() {value = dense<[[[[0.5, -1.0, 2.0]]]]> : tensor<1x1x1x3xf32>} : () -> '
            'tensor<1x1x1x3xf32>\n'
            f'  %a = "tf.AddV2"(%c, %s) {{DEV}} : ({O}, tensor<1x1x1x3xf32>) -> {O}\n'
            f'  %r = "tf.Relu"(%a) {{DEV}} : ({O}) -> {O}\n')
    out = _sound(_module(body))
    assert 'fused_ops = ["BiasAdd", "Relu"]' in out and "tensor<3xf32>) -> " + O in out, out


FUSED = (f'  %f = "tf._FusedConv2D"(%c0, %w, %b) {{{_CONV}, fused_ops = ["BiasAdd"], num_args = 1, DEV}} : '
         f'({O}, tensor<2x2x2x3xf32>, tensor<3xf32>) -> {O}\n')


@pytest.mark.parametrize("after", ["relu", "shift"])
def test_what_follows_a_fused_bias_joins_it(after: str) -> None:
    """A fused op with fused_ops = [BiasAdd] takes the activation after it, or a constant
    per-channel shift into its bias (a BatchNorm shift folded after the remapper ran)."""
    body = ('  %c0 = "tf.Relu"(%c) : (' + O + ') -> ' + O + "\n" + FUSED.replace("%w, %b", "%w0, %b")
            .replace("tensor<2x2x2x3xf32>", "tensor<2x2x3x3xf32>"))
    body = ('  %w0 = "tf.Const"() {value = dense<0.25> : tensor<2x2x3x3xf32>} : () -> tensor<2x2x3x3xf32>\n' + body)
    if after == "relu":
        body += f'  %r = "tf.Relu6"(%f) {{DEV}} : ({O}) -> {O}\n'
    else:
        body += ('  %s = "tf.Const"() {value = dense<[[[[0.5, -1.0, 2.0]]]]> : tensor<1x1x1x3xf32>} : () -> '
                 'tensor<1x1x1x3xf32>\n' + f'  %r = "tf.AddV2"(%s, %f) {{DEV}} : (tensor<1x1x1x3xf32>, {O}) -> {O}\n')
    out = _sound(_module(body))
    assert out.count('"tf._FusedConv2D"') == 1 and '"tf.AddV2"' not in out and '"tf.Relu6"' not in out, out
    if after == "relu":
        assert 'fused_ops = ["BiasAdd", "Relu6"]' in out, out
    else:
        summed = np.array([0.1 + 0.5, -2.0 - 1.0, 0.3 + 2.0], "<f4").tobytes().hex().upper()
        assert f'dense<"0x{summed}">' in out, out


@pytest.mark.parametrize("channels", [4, 3])
def test_batchnorm_relu_fuses_with_onednn_on_channels_divisible_by_4(channels: int) -> None:
    t, c = f"tensor<1x2x2x{channels}xf32>", f"tensor<{channels}xf32>"
    consts = "".join(f'  %{n} = "tf.Const"() {{value = dense<{v}> : {c}}} : () -> {c}\n'
                     for n, v in (("s", 1.5), ("o", 0.25), ("m", -0.5), ("v", 2.0)))
    text = (f"func.func @f(%x: {t}) -> {t} {{\n" + consts
            + f'  %y:6 = "tf.FusedBatchNormV3"(%x, %s, %o, %m, %v) {{data_format = "NHWC", epsilon = 0.001 : f32, '
              f'exponential_avg_factor = 1.0 : f32, is_training = false}} : ({t}, {c}, {c}, {c}, {c}) -> '
              f'({t}, {c}, {c}, {c}, {c}, tensor<*xf32>)\n'
            + f'  %r = "tf.Relu"(%y#0) : ({t}) -> {t}\n  return %r : {t}\n}}\n')
    assert '"tf._FusedBatchNormEx"' not in _fuse(text)
    out = _sound(text, "tf-remapper-onednn")
    assert ('"tf._FusedBatchNormEx"' in out and 'activation_mode = "Relu"' in out) == (channels == 4), out


@pytest.mark.parametrize("fused", ["_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul"])
def test_constant_folding_folds_a_fused_op_of_constants(fused: str) -> None:
    """tf-constant-folding folds every op the interpreter evaluates, the fused ones too (its
    harness draws no valid fused_ops or window attributes: checked here on real ones)."""
    shapes = {"_FusedConv2D": ("1x3x3x2", "2x2x2x3", "3"), "_FusedDepthwiseConv2dNative": ("1x3x3x3", "2x2x3x1", "3"),
              "_FusedMatMul": ("2x3", "3x4", "4")}[fused]
    window = f', strides = [1, 1, 1, 1], padding = "VALID"' if fused != "_FusedMatMul" else ""
    consts = "".join(f'  %{n} = "tf.Const"() {{value = dense<{v}> : tensor<{s}xf32>}} : () -> tensor<{s}xf32>\n'
                     for n, v, s in zip("xwb", ("0.5", "-1.5", "[0.25, -1.0, 2.0, 4.0]" if fused == "_FusedMatMul"
                                                 else "[0.25, -1.0, 2.0]"), shapes))
    types = ", ".join(f"tensor<{s}xf32>" for s in shapes)
    text = ("func.func @f() -> tensor<*xf32> {\n" + consts
            + f'  %r = "tf.{fused}"(%x, %w, %b) {{fused_ops = ["BiasAdd", "Relu"], num_args = 1{window}}} : '
              f"({types}) -> tensor<*xf32>\n  return %r : tensor<*xf32>\n}}\n")
    before = run_function(parse(text), [])[0]
    out = _fuse(text, "tf-constant-folding")
    assert f'"tf.{fused}"' not in out, out
    np.testing.assert_array_equal(run_function(parse(out), [])[0], before)
