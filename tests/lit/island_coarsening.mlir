// RUN: egraft-opt %s -split-input-file -tf-executor-island-coarsening | filecheck %s
// RUN: egraft-opt %s -split-input-file -tf-executor-island-coarsening="keep-independent=true" \
// RUN:   | filecheck %s --check-prefix=KEEP

// Islands merge when they are dead under the same conditions and sit at the same
// barrier depth (docs/island_merging.md): a graph without barriers becomes one island.
// The merged island holds the members' ops in block order and yields only what is used
// outside it.

// Linked by data (%a -> %b) and by control (%b -> %c): one island, yielding what the
// fetch reads.
// CHECK-LABEL: func.func @data_and_control
// CHECK:         tf_executor.graph {
// CHECK-NEXT:      %[[OUT:.*]], %{{.*}} = tf_executor.island {
// CHECK-NEXT:        %[[N:.*]] = "tf.Neg"(%arg0)
// CHECK-NEXT:        "tf.Sqrt"(%[[N]])
// CHECK-NEXT:        %[[A:.*]] = "tf.Abs"(%arg0)
// CHECK-NEXT:        tf_executor.yield %[[A]] : tensor<2xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      tf_executor.fetch %[[OUT]] : tensor<2xf32>
// KEEP-LABEL:  func.func @data_and_control
// KEEP-COUNT-1:  tf_executor.island
// KEEP-NOT:      tf_executor.island
func.func @data_and_control(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %a:2 = tf_executor.island {
      %n = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %b:2 = tf_executor.island {
      %s = "tf.Sqrt"(%a#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %s : tensor<2xf32>
    }
    %c:2 = tf_executor.island(%b#1) {
      %k = "tf.Abs"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %k : tensor<2xf32>
    }
    tf_executor.fetch %c#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// Two islands with no edge between them: one island by default; keep-independent keeps
// them apart (each may run in parallel).
// CHECK-LABEL: func.func @independent
// CHECK:         %[[OUT:.*]]:2, %{{.*}} = tf_executor.island {
// CHECK-NEXT:      %[[N:.*]] = "tf.Neg"(%arg0)
// CHECK-NEXT:      %[[S:.*]] = "tf.Sqrt"(%arg1)
// CHECK-NEXT:      tf_executor.yield %[[N]], %[[S]] : tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tf_executor.fetch %[[OUT]]#0, %[[OUT]]#1
// KEEP-LABEL:  func.func @independent
// KEEP:          %[[A:.*]], %{{.*}} = tf_executor.island {
// KEEP-NEXT:       "tf.Neg"(%arg0)
// KEEP:          %[[B:.*]], %{{.*}} = tf_executor.island {
// KEEP-NEXT:       "tf.Sqrt"(%arg1)
// KEEP:          tf_executor.fetch %[[A]], %[[B]]
func.func @independent(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = tf_executor.graph {
    %a:2 = tf_executor.island {
      %n = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %b:2 = tf_executor.island {
      %s = "tf.Sqrt"(%y) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %s : tensor<2xf32>
    }
    tf_executor.fetch %a#0, %b#0 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// A Switch is a barrier and its two outputs are dead under opposite conditions: the
// islands reading its false output (%a and %d after it) merge, the one reading its true
// output stays apart, and so do the islands that are always live (Abs, Exp), which
// merge with each other. Merging Abs into the false branch's island would make its
// value dead whenever the branch is, so it is not.
// CHECK-LABEL: func.func @switch
// CHECK:         %[[F:.*]], %[[T:.*]], %{{.*}} = tf_executor.Switch %arg0, %arg1
// CHECK-NEXT:    %[[LIVE:.*]]:2, %{{.*}} = tf_executor.island {
// CHECK-NEXT:      %[[ABS:.*]] = "tf.Abs"(%arg0)
// CHECK-NEXT:      %[[EXP:.*]] = "tf.Exp"(%arg0)
// CHECK-NEXT:      tf_executor.yield %[[ABS]], %[[EXP]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[FALSE:.*]], %{{.*}} = tf_executor.island {
// CHECK-NEXT:      %[[SUB:.*]] = "tf.Sub"(%[[F]], %[[LIVE]]#0)
// CHECK-NEXT:      %[[NEG:.*]] = "tf.Neg"(%[[SUB]])
// CHECK-NEXT:      tf_executor.yield %[[NEG]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[TRUE:.*]], %{{.*}} = tf_executor.island {
// CHECK-NEXT:      %[[SQRT:.*]] = "tf.Sqrt"(%[[T]])
// CHECK-NEXT:      tf_executor.yield %[[SQRT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    tf_executor.fetch %[[FALSE]], %[[TRUE]], %[[LIVE]]#1
// With keep-independent, Abs and Exp share no edge and stay apart; Abs's island is then
// used only by the false branch's island, and sinks into it: nothing outside reads it,
// so its being dead with the branch is seen by no one. Exp, fetched, stays alone.
// KEEP-LABEL:  func.func @switch
// KEEP:          %[[F:.*]], %[[T:.*]], %{{.*}} = tf_executor.Switch %arg0, %arg1
// KEEP-NEXT:     %[[FALSE:.*]], %{{.*}} = tf_executor.island {
// KEEP-NEXT:       %[[ABS:.*]] = "tf.Abs"(%arg0)
// KEEP-NEXT:       %[[SUB:.*]] = "tf.Sub"(%[[F]], %[[ABS]])
// KEEP-NEXT:       %[[NEG:.*]] = "tf.Neg"(%[[SUB]])
// KEEP-NEXT:       tf_executor.yield %[[NEG]]
// KEEP-NEXT:     }
// KEEP-NEXT:     %[[TRUE:.*]], %{{.*}} = tf_executor.island {
// KEEP-NEXT:       "tf.Sqrt"(%[[T]])
// KEEP:          %[[LIVE:.*]], %{{.*}} = tf_executor.island {
// KEEP-NEXT:       "tf.Exp"(%arg0)
// KEEP:          tf_executor.fetch %[[FALSE]], %[[TRUE]], %[[LIVE]]
func.func @switch(%x: tensor<2xf32>, %p: tensor<i1>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:3 = tf_executor.graph {
    %s:3 = tf_executor.Switch %x, %p : tensor<2xf32>
    %e:2 = tf_executor.island {
      %k = "tf.Abs"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %k : tensor<2xf32>
    }
    %a:2 = tf_executor.island {
      %n = "tf.Sub"(%s#0, %e#0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %d:2 = tf_executor.island {
      %n = "tf.Neg"(%a#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %b:2 = tf_executor.island {
      %m = "tf.Sqrt"(%s#1) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %m : tensor<2xf32>
    }
    %c:2 = tf_executor.island {
      %k = "tf.Exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %k : tensor<2xf32>
    }
    tf_executor.fetch %d#0, %b#0, %c#0 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
