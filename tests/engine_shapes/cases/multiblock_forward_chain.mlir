func.func @f(%a: i32, %b: tensor<2x3xf32>) -> (i32, tensor<2x3xf32>) {
  %z = arith.constant 0 : i32
  %0 = arith.addi %a, %z : i32
  %c0 = "tf.Cast"(%b) {Truncate = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  cf.br ^bb1
^bb1:
  %1 = arith.addi %0, %z : i32
  %c1 = "tf.Cast"(%c0) {Truncate = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  cf.br ^bb2
^bb2:
  %2 = arith.addi %1, %z : i32
  return %2, %c1 : i32, tensor<2x3xf32>
}
