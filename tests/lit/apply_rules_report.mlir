// RUN: egraft-opt %s -pass-pipeline='builtin.module(func.func(apply-rules{rules=tf-multi report}))' 2>&1 | filecheck %s

// Two MatMuls of one lhs become one MatMul of the concatenated rhs, split (a multi-root rule).
// CHECK: remark: converged (converged) after 2 iteration(s): 1 rewrite(s)
// CHECK-NEXT: matmul-shared-lhs: 1 rewrite(s), 1 match(es), {{[0-9]+}} op(s) added
// CHECK-LABEL: func.func @merge
// CHECK: "tf.ConcatV2"(%arg1, %arg2, %{{.*}}) {{.*}} -> tensor<8x32xf32>
// CHECK: "tf.MatMul"(%arg0, %{{.*}}) {{.*}} -> tensor<4x32xf32>
// CHECK: %[[S:.*]]:2 = "tf.Split"
// CHECK: return %[[S]]#0, %[[S]]#1
func.func @merge(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = "tf.MatMul"(%x, %w1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "tf.MatMul"(%x, %w2) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}
