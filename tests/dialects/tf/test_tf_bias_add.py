"""tf.BiasAdd's verifier: TensorFlow's rank, bias and channel rules, with its wording."""

import io

import pytest

from egraft.passes.cli.main import main as egraft_opt


def diagnose(value: str, bias: str, fmt: str) -> tuple[int, str]:
    text = (f"func.func @f(%v: {value}, %b: {bias}) -> {value} {{\n"
            f'  %0 = "tf.BiasAdd"(%v, %b) {{data_format = "{fmt}"}} : ({value}, {bias}) -> {value}\n'
            f"  return %0 : {value}\n}}\n")
    out, err = io.StringIO(), io.StringIO()
    rc = egraft_opt(["-"], stdin=lambda: text.encode(), stdout=out, stderr=err)
    return rc, err.getvalue()


@pytest.mark.parametrize("value, bias, fmt, message", [
    ("tensor<2x3x5x7xf32>", "tensor<7xf32>", "NHWC", None),
    ("tensor<2x7x5x3xf32>", "tensor<7xf32>", "NCHW", None),
    ("tensor<2x3x5x?xf32>", "tensor<7xf32>", "NHWC", None),   # unknown channel size: not checked
    ("tensor<*xf32>", "tensor<7xf32>", "NHWC", None),
    ("tensor<2x3xf32>", "tensor<?xf32>", "NHWC", None),
    ("tensor<3xf32>", "tensor<3xf32>", "NHWC",
     "requires value operand to have rank at least two with `NHWC` data format"),
    ("tensor<2x3xf32>", "tensor<3xf32>", "NCHW",
     "requires value operand to have rank at least three with `NCHW` data format"),
    ("tensor<2x3x5x7xf32>", "tensor<5x7xf32>", "NHWC", "requires bias operand to have rank exactly one"),
    ("tensor<2x3x5x7xf32>", "tensor<5xf32>", "NHWC",
     "requires channel dimension and feature dimension to match; found 7 and 5, respectively"),
    ("tensor<2x3x5x7xf32>", "tensor<7xf32>", "NCHW",
     "requires channel dimension and feature dimension to match; found 3 and 7, respectively"),
])
def test_bias_add_rules(value, bias, fmt, message):
    rc, err = diagnose(value, bias, fmt)
    if message is None:
        assert rc == 0, err
    else:
        assert rc != 0 and "<stdin>:2:" in err and f"'tf.BiasAdd' op {message}" in err, err
