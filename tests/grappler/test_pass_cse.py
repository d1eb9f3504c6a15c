"""The `tf-cse` step (Grappler's common-subgraph elimination): equal tf ops of one island merge
whatever their node names; effectful ops, placeholders and ops of different islands do not."""

from __future__ import annotations

from egraft.ir import parse, print_ir
from egraft.passes.soundness.harness import assert_pass_sound
from egraft.rewrite.structural.tf_cse import eliminate_common_subgraphs

GRAPH = """
func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:3 = tf_executor.graph {
    %a:3 = tf_executor.island {
      %c1 = "tf.Const"() {_mlir_name = "c1", value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
      %c2 = "tf.Const"() {_mlir_name = "c2", value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
      %m1 = "tf.Mul"(%x, %c1) {_mlir_name = "m1"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %m2 = "tf.Mul"(%x, %c2) {_mlir_name = "m2"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %r1 = "tf.RandomUniform"(%m1) {_mlir_name = "r1"} : (tensor<2xf32>) -> tensor<2xf32>
      %r2 = "tf.RandomUniform"(%m2) {_mlir_name = "r2"} : (tensor<2xf32>) -> tensor<2xf32>
      %s = "tf.AddV2"(%m1, %m2) {_mlir_name = "s"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %t = "tf.AddV2"(%r1, %r2) {_mlir_name = "t"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %s, %t : tensor<2xf32>, tensor<2xf32>
    }
    %b:2 = tf_executor.island {
      %n = "tf.Neg"(%x) {_mlir_name = "n1"} : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %c:2 = tf_executor.island {
      %n = "tf.Neg"(%x) {_mlir_name = "n2"} : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    tf_executor.fetch %a#0, %b#0, %c#0 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
"""


def test_equal_ops_merge_names_aside() -> None:
    module = parse(GRAPH)
    assert eliminate_common_subgraphs(module) == 2  # c2 (then m2, whose operands became m1's)
    out = print_ir(module)
    assert '"c2"' not in out and '"m2"' not in out and '"tf.AddV2"(%1, %1)' in out.replace("%2", "%1"), out
    assert out.count("tf.RandomUniform") == 2, out  # effectful: each draws its own
    assert out.count("tf.Neg") == 2, out  # different islands: their deadness may differ


def test_pass_sound_on_the_graph() -> None:
    assert_pass_sound(GRAPH.replace('"tf.RandomUniform"', '"tf.Exp"'),
                      "builtin.module(tf-grappler{coarsen=false constant-folding=false dependency=false})", examples=10)
