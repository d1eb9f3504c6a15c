// S4: tf ops without op records that TensorFlow registers as stateless. The dead ones
// (Abs, LogicalAnd, Shape, the first SelectV2) are erased; the live SelectV2 stays.
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %gt = "tf.Greater"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %dead_select = "tf.SelectV2"(%gt, %b, %a) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %and = "tf.LogicalAnd"(%gt, %gt) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %abs = "tf.Abs"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %shape = "tf.Shape"(%abs) : (tensor<4xf32>) -> tensor<1xi32>
  %max = "tf.SelectV2"(%gt, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %max : tensor<4xf32>
}
