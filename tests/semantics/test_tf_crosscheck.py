"""A sample of tf ops: the interpreter against TensorFlow itself (eager, CPU), special floats included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from egraft.ir import parse
from egraft.ir.semantics import Undefined, differences, run_function, values_for_types

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf

_UNARY = ["Neg", "Relu", "Relu6", "Sigmoid", "Rsqrt", "Sqrt", "Square", "Abs", "Reciprocal", "ZerosLike",
          "OnesLike", "Softmax"]
_BINARY = ["AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"]


def _module(op: str, n: int, t: str) -> object:
    args = ", ".join(f"%a{i}: {t}" for i in range(n))
    names = ", ".join(f"%a{i}" for i in range(n))
    return parse(f'func.func @f({args}) -> {t} {{\n %0 = "tf.{op}"({names}) : ({", ".join([t] * n)}) -> {t}\n'
                 f' return %0 : {t}\n}}')


@pytest.mark.parametrize("op", _UNARY + _BINARY)
def test_elementwise_against_tensorflow(op):
    n = 2 if op in _BINARY else 1
    module = _module(op, n, "tensor<2x3xf32>")
    from egraft.ir.semantics.inputs import argument_types

    @settings(max_examples=40, deadline=None)
    @given(values_for_types(argument_types(module), special_floats=True))
    def check(inputs):
        # TF's CPU kernels flush subnormals to zero (FTZ/DAZ); the interpreter is plain IEEE.
        tiny = np.finfo(np.float32).tiny
        assume(not any(((np.abs(x) < tiny) & (x != 0)).any() for x in inputs))
        # TF's Softmax on a row with NaN is kernel-specific (neither IEEE nor documented).
        assume(op != "Softmax" or not any(np.isnan(x).any() for x in inputs))
        ours = run_function(module, inputs)
        kwargs = {"x": inputs[0], "y": inputs[1]} if n == 2 else {_arg(op): inputs[0]}
        theirs = getattr(tf.raw_ops, op)(**kwargs)
        assert not differences([np.asarray(theirs)], ours, exact=False), (inputs, ours, theirs)

    check()


@pytest.mark.parametrize("row", [[0.0, np.inf, np.inf], [-np.inf, 0.0, np.inf], [-100.0, 0.0, np.inf],
                                 [-np.inf, 0.0, 1.0]])
def test_softmax_rows_with_infinite_logits(row):
    """A +Inf logit makes TF's whole row NaN, zeros of exp included (found by the property above)."""
    x = np.array([row, [1.0, 2.0, 3.0]], np.float32)
    ours = run_function(_module("Softmax", 1, "tensor<2x3xf32>"), [x])
    assert not differences([tf.raw_ops.Softmax(logits=x).numpy()], ours, exact=False)


def _arg(op: str) -> str:
    return {"Relu": "features", "Relu6": "features", "Softmax": "logits"}.get(op, "x")


def test_integer_wraparound_against_tensorflow():
    module = _module("Mul", 2, "tensor<4xi32>")
    x = np.array([2 ** 30, -2 ** 31, 7, -1], np.int32)
    assert (run_function(module, [x, x])[0] == tf.raw_ops.Mul(x=x, y=x).numpy()).all()


@settings(max_examples=30, deadline=None)
@given(st.permutations([0, 1, 2]), st.lists(st.sampled_from([0, 1, 2, -1, -2, -3]), unique_by=lambda a: a % 3,
                                             max_size=3), st.booleans())
def test_shape_ops_against_tensorflow(perm, axes, keep):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = parse("""func.func @f(%x: tensor<2x3x4xf32>, %p: tensor<3xi32>) -> tensor<*xf32> {
      %0 = "tf.Transpose"(%x, %p) : (tensor<2x3x4xf32>, tensor<3xi32>) -> tensor<*xf32>
      return %0 : tensor<*xf32>
    }""")
    assert (run_function(t, [x, np.array(perm, np.int32)])[0] == tf.transpose(x, perm).numpy()).all()
    m = parse(f"""func.func @f(%x: tensor<2x3x4xf32>, %a: tensor<{len(axes)}xi32>) -> tensor<*xf32> {{
      %0 = "tf.Mean"(%x, %a) {{keep_dims = {str(keep).lower()}}} : (tensor<2x3x4xf32>, tensor<{len(axes)}xi32>) -> tensor<*xf32>
      return %0 : tensor<*xf32>
    }}""")
    ours = run_function(m, [x, np.array(axes, np.int32).reshape(-1)])[0]
    theirs = tf.raw_ops.Mean(input=x, axis=np.array(axes, np.int32), keep_dims=keep).numpy()
    assert not differences([theirs], [ours], exact=False)


def test_reshape_errors_where_tensorflow_errors():
    m = parse("""func.func @f(%x: tensor<6xf32>, %s: tensor<2xi32>) -> tensor<*xf32> {
      %0 = "tf.Reshape"(%x, %s) : (tensor<6xf32>, tensor<2xi32>) -> tensor<*xf32>
      return %0 : tensor<*xf32>
    }""")
    x, bad = np.zeros(6, np.float32), np.array([4, -1], np.int32)
    with pytest.raises(Undefined):
        run_function(m, [x, bad])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.Reshape(tensor=x, shape=bad)
