"""The calibrated cost model (`egraft.ir.semantics.tf_cost`) and its extraction form
(`rewrite/encoding/cost_models.TFCalibratedCost`): sane, monotone in size, one price for
one op whichever way it is asked for."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import parse
from egraft.ir.graphdef import load_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.ir.semantics.tf_cost import (CALIBRATION, CLASSES, cost_of_work, load_calibration, op_class, op_cost_us,
                                         predict_breakdown, predict_ms, work)
from egraft.ir.semantics.tf_shapes import Shapes, refine_types
from egraft.rewrite.encoding.cost_models import TFCalibratedCost, tf_op_cost, tf_ops_cost

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.pb"

dim = st.integers(1, 512)


def test_the_saved_calibration_is_complete_and_non_negative():
    cal = load_calibration()
    assert CALIBRATION.exists(), "tf_cost_calibration.json is saved with the code"
    assert cal.meta.get("samples", 0) >= 50
    for c in CLASSES:
        co = cal.classes[c]
        assert co.overhead_us >= 0 and co.us_per_flop >= 0 and co.us_per_byte >= 0
    for co in cal.kinds.values():
        assert co.overhead_us >= 0 and co.us_per_flop >= 0 and co.us_per_byte >= 0


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["MatMul", "BatchMatMulV2", "Conv2D", "DepthwiseConv2dNative", "AddV2", "Relu", "Tanh",
                        "Transpose", "Sum", "Softmax", "MaxPool", "FusedBatchNormV3", "ConcatV2"]),
       dim, dim, dim, st.integers(2, 4))
def test_cost_is_monotone_in_size(kind, m, k, n, factor):
    """Growing any dimension never makes an op cheaper (non-negative coefficients on
    FLOPs and bytes that grow with every dimension)."""
    def shapes(m: int, k: int, n: int) -> tuple[list, list]:
        if kind == "MatMul":
            return [(m, k), (k, n)], [(m, n)]
        if kind == "BatchMatMulV2":
            return [(4, m, k), (4, k, n)], [(4, m, n)]
        if kind in ("Conv2D", "DepthwiseConv2dNative", "MaxPool"):
            c_out = n if kind == "Conv2D" else k
            return [(1, m, m, k), (3, 3, k, n if kind == "Conv2D" else 1)], [(1, m, m, c_out)]
        if kind == "AddV2":
            return [(m, k, n), (n,)], [(m, k, n)]
        if kind == "FusedBatchNormV3":
            return [(1, m, k, n)] + [(n,)] * 4, [(1, m, k, n)] + [(n,)] * 4
        if kind == "Sum":
            return [(m, k, n), (1,)], [(m, k)]
        if kind == "ConcatV2":
            return [(m, k), (m, n), ()], [(m, k + n)]
        return [(m, k, n)], [(m, k, n)]

    base = cost_of_work(work(kind, *shapes(m, k, n)))
    assert base > 0
    for grown in ((m * factor, k, n), (m, k * factor, n), (m, k, n * factor)):
        assert cost_of_work(work(kind, *shapes(*grown))) >= base - 1e-9


def test_every_class_prices_a_big_op_above_a_small_one():
    for kind in ("MatMul", "Conv2D", "Relu", "Exp", "Transpose", "Mean"):
        small = work(kind, [(8, 8), (8, 8)] if kind == "MatMul" else [(1, 8, 8, 8), (3, 3, 8, 8)]
                     if kind == "Conv2D" else [(8, 8), (2,)], [(8, 8)] if kind != "Conv2D" else [(1, 8, 8, 8)])
        big = work(kind, [(512, 512), (512, 512)] if kind == "MatMul" else [(1, 64, 64, 64), (3, 3, 64, 64)]
                   if kind == "Conv2D" else [(512, 512), (2,)], [(512, 512)] if kind != "Conv2D" else [(1, 64, 64, 64)])
        assert cost_of_work(big) > 2 * cost_of_work(small), kind


def test_classes():
    assert op_class("MatMul") == op_class("_FusedMatMul") == op_class("BatchMatMulV2") == "matmul"
    assert op_class("Einsum") == "einsum"
    assert op_class("Reshape") == op_class("Const") == "view"
    assert op_class("AddV2") == "elementwise" and op_class("Tanh") == "transcendental"
    assert op_class("SomethingNew") == "other"


def test_predict_ms_is_the_serial_sum_plus_the_session():
    module = import_graphdef(load_graphdef(EXAMPLE), str(EXAMPLE))
    rows = predict_breakdown(module)
    assert sum(r["unknown"] for r in rows.values()) == 0  # every op of the example is shaped
    total = sum(r["us"] for r in rows.values())
    assert predict_ms(module) == pytest.approx((total + load_calibration().session_us) / 1e3)
    assert rows["conv"]["us"] > rows["view"]["us"]


def test_an_op_costs_the_same_before_and_after_refinement_and_in_the_egraph():
    """tf_op_cost on unrefined types (shapes on demand), after tf-shape-inference, and
    TFCalibratedCost on the e-graph of the same function agree, attributes included (a
    transposed MatMul's inner size, an Einsum's equation, a pool's window)."""
    module = parse('''
func.func @f(%x: tensor<64x256xf32>, %w: tensor<256x512xf32>, %b: tensor<64xf32>, %q: tensor<1x16x4x8xf32>,
             %k: tensor<1x16x4x8xf32>, %i: tensor<1x32x32x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "tf.MatMul"(%w, %x) {transpose_a = true, transpose_b = true} : (tensor<256x512xf32>, tensor<64x256xf32>) -> tensor<*xf32>
  %1 = "tf.BiasAdd"(%0, %b) : (tensor<*xf32>, tensor<64xf32>) -> tensor<*xf32>
  %2 = "tf.Tanh"(%1) : (tensor<*xf32>) -> tensor<*xf32>
  %3 = "tf.Einsum"(%q, %k) {equation = "bqnh,bknh->bnqk"} : (tensor<1x16x4x8xf32>, tensor<1x16x4x8xf32>) -> tensor<*xf32>
  %4 = "tf.MaxPool"(%i) {ksize = [1, 3, 3, 1], strides = [1, 2, 2, 1], padding = "SAME"} : (tensor<1x32x32x8xf32>) -> tensor<*xf32>
  return %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}''')
    ops = [op for op in module.walk() if op.name.startswith("tf.")]
    before = [tf_op_cost(op, Shapes()) for op in ops]
    assert all(c > 0 for c in before)
    assert tf_ops_cost(ops) == pytest.approx(sum(before))
    refine_types(module)
    after = [op_cost_us(op) for op in ops]
    assert after == pytest.approx(before)

    from egraft.rewrite.lower_pipeline import optimize

    trip = optimize(next(op for op in module.walk() if op.name == "func.func"))
    g = trip.egraph
    costs = TFCalibratedCost().node_costs(g)
    from egraft.rewrite.encoding.schema import op_name_of

    names = [op_name_of(g.op_names[g.node_op[n]], g.payloads[n]) or "" for n in range(g.n_nodes)]
    priced = {name: costs[n] for n, name in enumerate(names) if name.startswith("tf.")}
    for op, c in zip(ops, after):
        assert priced[op.name] == pytest.approx(c, rel=1e-6), op.name


def test_kernel_us_prices_an_op_not_yet_built_as_the_built_op_is_priced():
    """kernel_us (shapes in, result shapes from the shape functions) == op_cost_us of that op."""
    from egraft.ir.semantics.tf_cost import kernel_us

    module = parse('''
func.func @f(%x: tensor<1x128x256xf32>, %w: tensor<256x768xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "tf.BatchMatMulV2"(%x, %w) : (tensor<1x128x256xf32>, tensor<256x768xf32>) -> tensor<*xf32>
  %a = "tf.Const"() <{value = dense<-1> : tensor<i32>}> : () -> tensor<i32>
  %1:3 = "tf.Split"(%a, %0) {num_split = 3 : i64} : (tensor<i32>, tensor<*xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return %1#0, %1#1, %1#2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}''')
    ops = {op.name: op for op in module.walk()}
    shapes = Shapes()
    assert kernel_us("BatchMatMulV2", [(1, 128, 256), (256, 768)]) == pytest.approx(
        op_cost_us(ops["tf.BatchMatMulV2"], shapes))
    assert kernel_us("Split", [(), (1, 128, 768)], values=[-1, None], n_results=3) == pytest.approx(
        op_cost_us(ops["tf.Split"], shapes))
    # a merged product costs less than three of a third of its size (the per-call overhead)
    assert kernel_us("BatchMatMulV2", [(1, 128, 256), (256, 768)]) < 3 * kernel_us(
        "BatchMatMulV2", [(1, 128, 256), (256, 256)])


def test_a_fused_kernels_epilogue_is_priced_as_the_ops_it_stands_for():
    """_FusedMatMul [BiasAdd, GeluExact] costs the [BiasAdd] kernel plus, per output
    element, the calibrated compute rate of an Erf (GELU exact's transcendental)."""
    module = parse('''
func.func @f(%x: tensor<128x256xf32>, %w: tensor<256x1024xf32>, %b: tensor<1024xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = "tf._FusedMatMul"(%x, %w, %b) {fused_ops = ["BiasAdd"], num_args = 1 : i64} : (tensor<128x256xf32>, tensor<256x1024xf32>, tensor<1024xf32>) -> tensor<*xf32>
  %1 = "tf._FusedMatMul"(%x, %w, %b) {fused_ops = ["BiasAdd", "GeluExact"], num_args = 1 : i64} : (tensor<128x256xf32>, tensor<256x1024xf32>, tensor<1024xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}''')
    bias, gelu = [op for op in module.walk() if op.name == "tf._FusedMatMul"]
    cal = load_calibration()
    erf = cal.coefficients("Erf", op_class("Erf")).us_per_flop
    assert op_cost_us(gelu) - op_cost_us(bias) == pytest.approx(128 * 1024 * erf)
    assert op_cost_us(gelu) > op_cost_us(bias)


CALLS = '''
func.func @main(%x: tensor<2x3xf32>, %y: tensor<50x30xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %a = "tf.PartitionedCall"(%x) {f = @g, config = "", config_proto = "", executor_type = ""} : (tensor<2x3xf32>) -> tensor<*xf32>
  %b = "tf.PartitionedCall"(%y) {f = @g, config = "", config_proto = "", executor_type = ""} : (tensor<50x30xf32>) -> tensor<*xf32>
  return %a, %b : tensor<*xf32>, tensor<*xf32>
}
func.func private @g(%arg: tensor<*xf32>) -> tensor<*xf32> {
  %0 = "tf.Exp"(%arg) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}'''


def test_a_function_is_shaped_and_priced_at_each_call():
    """A function called twice at two shapes: each call's result has its own shape, and the
    body counts once per call, at that call's shapes (not once, unshaped)."""
    from egraft.ir.semantics.tf_cost import kernel_us

    module = parse(CALLS)
    calls = [op for op in module.walk() if op.name == "tf.PartitionedCall"]
    shapes = Shapes()
    assert [shapes.shape(c.results[0]) for c in calls] == [(2, 3), (50, 30)]
    rows = predict_breakdown(module)
    assert rows["transcendental"]["ops"] == 2 and rows["transcendental"]["unknown"] == 0
    assert rows["transcendental"]["us"] == pytest.approx(kernel_us("Exp", [(2, 3)]) + kernel_us("Exp", [(50, 30)]))


@pytest.mark.tf
def test_a_savedmodel_is_priced_through_its_functions_and_variables():
    """The zoo's Keras SavedModel (read by egraft-opt): its serving call's results are shaped
    through the called functions and the variables' handles, and with the signature's
    fetches only the nodes a run needs are priced (not the save/restore subgraphs)."""
    pytest.importorskip("tensorflow")
    import contextlib
    import io
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "keras_apps"))
    import zoo  # noqa: E402

    if "cnn_savedmodel" not in getattr(zoo, "SAVEDMODELS", ("cnn_savedmodel",)):
        pytest.skip("the zoo has no cnn_savedmodel")
    files = zoo.ensure(("cnn_savedmodel",))["cnn_savedmodel"]
    from egraft.passes.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(files.pb)]) == 0
    module = parse(out.getvalue(), allow_unregistered=True)
    fetches = json.loads(files.pb.with_suffix(".json").read_text())["outputs"]
    everything = predict_breakdown(module)
    served = predict_breakdown(module, fetches=fetches, feed_dim=1)
    assert sum(r["unknown"] for r in served.values()) == 0
    assert sum(r["ops"] for r in served.values()) < sum(r["ops"] for r in everything.values())
    assert served["conv"]["us"] > everything["conv"]["us"]  # shaped convolutions cost more than their overhead
