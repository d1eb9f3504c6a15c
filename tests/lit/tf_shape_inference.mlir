// RUN: egraft-opt %s -split-input-file -tf-shape-inference | filecheck %s

// tf-shape-inference refines tf ops' result types from static shapes; islands, the graph
// and the function's results follow (their verifiers demand equal types).

// CHECK-LABEL: func.func @executor
// CHECK-SAME:    -> tensor<1x4x4x8xf32>
// CHECK:         "tf.Conv2D"(%arg0, %arg1)
// CHECK-SAME:      -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    tf_executor.yield %{{.*}} : tensor<1x4x4x8xf32>
// CHECK:         "tf.Relu"(%{{.*}}) : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK:         tf_executor.fetch %{{.*}} : tensor<1x4x4x8xf32>
// CHECK:         return %{{.*}} : tensor<1x4x4x8xf32>
func.func @executor(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<*xf32> {
  %0 = tf_executor.graph {
    %c:2 = tf_executor.island {
      %y = "tf.Conv2D"(%x, %w) {data_format = "NHWC", dilations = [1, 1, 1, 1], padding = "SAME", strides = [1, 2, 2, 1]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<*xf32>
      tf_executor.yield %y : tensor<*xf32>
    }
    %r:2 = tf_executor.island {
      %z = "tf.Relu"(%c#0) : (tensor<*xf32>) -> tensor<*xf32>
      tf_executor.yield %z : tensor<*xf32>
    }
    tf_executor.fetch %r#0 : tensor<*xf32>
  }
  return %0 : tensor<*xf32>
}

// -----

// A Reshape's shape computed by the graph (Shape -> StridedSlice -> Pack) is followed;
// a reshape to a fed shape stays unknown in its dims, an op without a shape function
// keeps its type.
// CHECK-LABEL: func.func @shape_arithmetic
// CHECK:         "tf.Reshape"(%arg0, %{{.*}}) : (tensor<4x6x8xf32>, tensor<2xi32>) -> tensor<4x48xf32>
// CHECK:         "tf.Reshape"(%arg0, %arg1) : (tensor<4x6x8xf32>, tensor<2xi32>) -> tensor<?x?xf32>
// CHECK:         "tf.SomethingNew"(%arg0) : (tensor<4x6x8xf32>) -> tensor<*xf32>
func.func @shape_arithmetic(%x: tensor<4x6x8xf32>, %s: tensor<2xi32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %shape = "tf.Shape"(%x) : (tensor<4x6x8xf32>) -> tensor<*xi32>
  %b = "tf.Const"() <{value = dense<[0]> : tensor<1xi32>}> : () -> tensor<1xi32>
  %e = "tf.Const"() <{value = dense<[1]> : tensor<1xi32>}> : () -> tensor<1xi32>
  %n = "tf.StridedSlice"(%shape, %b, %e, %e) {shrink_axis_mask = 1 : i64} : (tensor<*xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<*xi32>
  %m = "tf.Const"() <{value = dense<-1> : tensor<i32>}> : () -> tensor<i32>
  %p = "tf.Pack"(%n, %m) {axis = 0 : i64} : (tensor<*xi32>, tensor<i32>) -> tensor<2xi32>
  %r = "tf.Reshape"(%x, %p) : (tensor<4x6x8xf32>, tensor<2xi32>) -> tensor<*xf32>
  %f = "tf.Reshape"(%x, %s) : (tensor<4x6x8xf32>, tensor<2xi32>) -> tensor<*xf32>
  %u = "tf.SomethingNew"(%x) : (tensor<4x6x8xf32>) -> tensor<*xf32>
  return %r, %f, %u : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}
