// RUN: egraft-opt %s -split-input-file -canonicalize | filecheck %s
// RUN: egraft-opt %s -split-input-file -canonicalize="driver=greedy" | filecheck %s

// Both drivers run the same rules to the same fixpoint: each case holds for either.

// x - x is 0 on integers (wrapping subtraction is a group operation).
// CHECK-LABEL: func.func @sub_self_int
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    return %[[ZERO]] : i32
func.func @sub_self_int(%a: i32) -> i32 {
  %0 = arith.subi %a, %a : i32
  return %0 : i32
}

// -----

// On floats x - x is NaN for x = Inf or NaN, so it stays unless fast-math waives both.
// CHECK-LABEL: func.func @sub_self_float
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[KEPT:.*]] = arith.subf %arg0, %arg0 : f32
// CHECK-NOT:     arith.subf
// CHECK:         return %[[KEPT]], %[[ZERO]] : f32, f32
func.func @sub_self_float(%b: f32) -> (f32, f32) {
  %0 = arith.subf %b, %b : f32
  %1 = arith.subf %b, %b fastmath<nnan,ninf> : f32
  return %0, %1 : f32, f32
}

// -----

// Folds: constant operands compute their constant, (x + 1) + 2 reassociates to x + 3,
// x * 1 is x, select on a constant true condition is its first operand; what is left
// of the input's constants and ops is dead and goes.
// CHECK-LABEL: func.func @folds
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : i32
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : i32
// CHECK-DAG:     %[[TRUE:.*]] = arith.constant true
// CHECK-DAG:     %[[SUM:.*]] = arith.addi %arg0, %[[C3]] : i32
// CHECK-NOT:     arith.
// CHECK:         return %[[C5]], %[[SUM]], %[[TRUE]], %[[SUM]] : i32, i32, i1, i32
func.func @folds(%a: i32) -> (i32, i32, i1, i32) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %0 = arith.addi %c2, %c3 : i32
  %1 = arith.addi %a, %c1 : i32
  %2 = arith.addi %1, %c2 : i32
  %3 = arith.cmpi slt, %c2, %c3 : i32
  %4 = arith.muli %2, %c1 : i32
  %5 = arith.select %3, %4, %a : i32
  return %0, %2, %3, %5 : i32, i32, i1, i32
}

// -----

// Folds whose operands are not all constant are left alone: the division by zero
// has no value to fold to (arith.divsi by 0 is undefined behaviour, not a constant).
// CHECK-LABEL: func.func @no_fold
// CHECK:         %[[Q:.*]] = arith.divsi %arg0, %{{.*}} : i32
// CHECK:         return %[[Q]]
func.func @no_fold(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.divsi %a, %c0 : i32
  return %0 : i32
}

// -----

// tf ops: integer Sub(x, x) is a zeros constant of a static shape and ZerosLike of a
// dynamic one; the float Sub stays (Inf - Inf is NaN); Neg(Neg x) and Identity forward
// x; Mul by a splat 1 of the result's type is x.
// CHECK-LABEL: func.func @tf
// CHECK-DAG:     %[[ZEROS:.*]] = "tf.Const"() <{value = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
// CHECK-DAG:     %[[FSUB:.*]] = "tf.Sub"(%arg1, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-DAG:     %[[DYN:.*]] = "tf.ZerosLike"(%arg2) : (tensor<?xi32>) -> tensor<?xi32>
// CHECK-NOT:     "tf.
// CHECK:         return %[[ZEROS]], %[[FSUB]], %[[DYN]], %arg1, %arg1 :
func.func @tf(%a: tensor<2xi32>, %b: tensor<2xf32>, %d: tensor<?xi32>)
    -> (tensor<2xi32>, tensor<2xf32>, tensor<?xi32>, tensor<2xf32>, tensor<2xf32>) {
  %0 = "tf.Sub"(%a, %a) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %1 = "tf.Sub"(%b, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "tf.Sub"(%d, %d) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  %3 = "tf.Neg"(%b) : (tensor<2xf32>) -> tensor<2xf32>
  %4 = "tf.Neg"(%3) : (tensor<2xf32>) -> tensor<2xf32>
  %5 = "tf.Identity"(%4) : (tensor<2xf32>) -> tensor<2xf32>
  %one = "tf.Const"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %6 = "tf.Mul"(%one, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2, %5, %6 : tensor<2xi32>, tensor<2xf32>, tensor<?xi32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Mul by 1 that broadcasts (the result has another type than x) is not x.
// CHECK-LABEL: func.func @tf_broadcast
// CHECK:         %[[M:.*]] = "tf.Mul"(%{{.*}}, %arg0) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    return %[[M]]
func.func @tf_broadcast(%b: tensor<2xf32>) -> tensor<2x2xf32> {
  %one = "tf.Const"() {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %0 = "tf.Mul"(%one, %b) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// (x - y)^2 is SquaredDifference on real elements.
// CHECK-LABEL: func.func @squared_difference
// CHECK-NEXT:    %[[D:.*]] = "tf.SquaredDifference"(%arg0, %arg1)
// CHECK-NEXT:    return %[[D]]
func.func @squared_difference(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tf.Sub"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "tf.Square"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// A graph of one island without control operands runs its ops in the enclosing block;
// the Identity inside the island goes like any other.
// CHECK-LABEL: func.func @single_island
// CHECK-NOT:     tf_executor
// CHECK:         %[[N:.*]] = "tf.Neg"(%arg0)
// CHECK-NOT:     tf_executor
// CHECK:         return %[[N]]
func.func @single_island(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %1:2 = tf_executor.island {
      %2 = "tf.Identity"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      %3 = "tf.Neg"(%2) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %3 : tensor<2xf32>
    }
    tf_executor.fetch %1#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// An island that only yields an outside value, without control operands and whose
// control nobody uses, is that value; a ControlTrigger without operands fires at once
// and carries nothing: both go, and their users lose them.
// CHECK-LABEL: func.func @empty_island_and_trigger
// CHECK:         tf_executor.graph {
// CHECK-NEXT:      %[[A:.*]], %{{.*}} = tf_executor.island {
// CHECK-NEXT:        %[[N:.*]] = "tf.Neg"(%arg0)
// CHECK-NEXT:        tf_executor.yield %[[N]]
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[B:.*]], %{{.*}} = tf_executor.island {
// CHECK-NEXT:        %[[S:.*]] = "tf.Sqrt"(%arg0)
// CHECK-NEXT:        tf_executor.yield %[[S]]
// CHECK-NEXT:      }
// CHECK-NEXT:      tf_executor.fetch %[[A]], %[[B]]
// CHECK-NOT:     ControlTrigger
func.func @empty_island_and_trigger(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = tf_executor.graph {
    %1:2 = tf_executor.island {
      tf_executor.yield %x : tensor<2xf32>
    }
    %t = tf_executor.ControlTrigger {}
    %2:2 = tf_executor.island(%t) {
      %n = "tf.Neg"(%1#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %3:2 = tf_executor.island {
      %s = "tf.Sqrt"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %s : tensor<2xf32>
    }
    tf_executor.fetch %2#0, %3#0 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Deadness keeps these: the empty island with a control operand and a data result
// (its value is dead when %a is), and the ControlTrigger with an operand (it turns a
// dead input live, which its user observes).
// CHECK-LABEL: func.func @deadness_kept
// CHECK:         %[[A:.*]], %[[AC:.*]] = tf_executor.island {
// CHECK:         %[[C:.*]], %{{.*}} = tf_executor.island(%[[AC]]) {
// CHECK-NEXT:      tf_executor.yield %arg0
// CHECK:         %[[T:.*]] = tf_executor.ControlTrigger %[[AC]]
// CHECK:         tf_executor.island(%[[T]])
// CHECK:           "tf.AddV2"(%[[A]], %[[C]])
func.func @deadness_kept(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %a:2 = tf_executor.island {
      %n = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %c:2 = tf_executor.island(%a#1) {
      tf_executor.yield %x : tensor<2xf32>
    }
    %t = tf_executor.ControlTrigger %a#1 {}
    %d:2 = tf_executor.island(%t) {
      %s = "tf.AddV2"(%a#0, %c#0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %s : tensor<2xf32>
    }
    tf_executor.fetch %d#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// affine.apply of the identity map forwards its operand; of constants, it is the
// index constant its map computes (2 * 3 + 1).
// CHECK-LABEL: func.func @affine_apply
// CHECK-NEXT:    %[[C7:.*]] = arith.constant 7 : index
// CHECK-NEXT:    return %arg0, %[[C7]] : index, index
func.func @affine_apply(%i: index) -> (index, index) {
  %c2 = arith.constant 2 : index
  %0 = affine.apply affine_map<(d0) -> (d0)>(%i)
  %1 = affine.apply affine_map<(d0) -> (d0 * 3 + 1)>(%c2)
  return %0, %1 : index, index
}

// -----

// tf.LogicalNot has no op record; TensorFlow registers it stateless (ir/effects.py), so once
// logical-not-of-equal replaced its value it is dead on either driver, and so is the
// tf.Equal it read.
// CHECK-LABEL: func.func @replaced_op_without_record
// CHECK-NEXT:    %[[NE:.*]] = "tf.NotEqual"(%arg0, %arg1) <{incompatible_shape_error = true}>
// CHECK-NEXT:    return %[[NE]]
func.func @replaced_op_without_record(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xi1> {
  %0 = "tf.Equal"(%a, %b) {incompatible_shape_error = true} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %1 = "tf.LogicalNot"(%0) : (tensor<2xi1>) -> tensor<2xi1>
  return %1 : tensor<2xi1>
}
