// RUN: egraft-opt %s -split-input-file -canonicalize | filecheck %s
// XFAIL: *

// Where canonicalize's e-graph driver falls short of its greedy driver on the same
// rules (the greedy driver passes every case here; tests/lit/canonicalize.mlir has
// what both do). Remove the XFAIL line once each case passes.

// Bug: a rule that rewrites to a form of equal cost is not applied on the e-graph.
// tf.Add on numbers is tf.AddV2 (add-to-addv2) and a rank-2 BatchMatMulV2 is MatMul
// (batchmatmulv2-to-matmul); both forms end up in one e-class, and extraction breaks
// the cost tie towards the input's op, so the canonical form never appears.
// CHECK-LABEL: func.func @canonical_form_of_equal_cost
// CHECK-NEXT:    %[[S:.*]] = "tf.AddV2"(%arg0, %arg1)
// CHECK-NEXT:    %[[M:.*]] = "tf.MatMul"(%arg2, %arg3) <{transpose_a = false, transpose_b = false}>
// CHECK-NEXT:    return %[[S]], %[[M]]
func.func @canonical_form_of_equal_cost(%a: tensor<2xf32>, %b: tensor<2xf32>, %x: tensor<2x3xf32>,
                                        %y: tensor<3x4xf32>) -> (tensor<2xf32>, tensor<2x4xf32>) {
  %0 = "tf.Add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "tf.BatchMatMulV2"(%x, %y) {adj_x = false, adj_y = false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2xf32>, tensor<2x4xf32>
}
