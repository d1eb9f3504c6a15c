// RUN: egraft-opt %s -tf-functional-to-executor-conversion | filecheck %s
// RUN: egraft-opt %s --emit=tf_executor | filecheck %s
// RUN: egraft-opt %s --emit=tf_executor | egraft-opt - --emit=tf_executor | filecheck %s
// RUN: tfg-translate -mlir-to-graphdef %s | filecheck %s --check-prefix=GRAPHDEF
// RUN: egraft-opt %s -o %t.pbtxt && tfg-translate -graphdef-to-mlir %t.pbtxt | filecheck %s --check-prefix=TFG
// RUN: egraft-opt %s -o %t.pb && egraft-opt -graphdef-to-mlir %t.pb | filecheck %s --check-prefix=TFG

// A function of tf ops in functional form: --emit=tf_executor and the GraphDef writers
// convert it as TensorFlow's -tf-functional-to-executor-conversion does (one island
// per body), instead of leaving it unchanged or refusing it.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[GRAPH:.*]] = tf_executor.graph {
// CHECK-NEXT:      %[[OUT:.*]], %{{.*}} = tf_executor.island {
// CHECK-NEXT:        %[[NEG:.*]] = "tf.Neg"(%arg0)
// CHECK-NEXT:        %[[RELU:.*]] = "tf.Relu"(%[[NEG]])
// CHECK-NEXT:        tf_executor.yield %[[RELU]] : tensor<2xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      tf_executor.fetch %[[OUT]] : tensor<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[GRAPH]] : tensor<2xf32>
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> attributes {tf.entry_function = {control_outputs = "", inputs = "x", outputs = "y"}} {
  %0 = "tf.Neg"(%x) {device = ""} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "tf.Relu"(%0) {device = ""} : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// Nothing returned: the graph fetches the island's control token.
// CHECK-LABEL: func.func @no_results
// CHECK-NEXT:    tf_executor.graph {
// CHECK-NEXT:      %[[CTL:.*]] = tf_executor.island {
// CHECK-NEXT:        tf_executor.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      tf_executor.fetch %[[CTL]] : !tf_executor.control
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @no_results() {
  return
}

// GRAPHDEF: name: "x"
// GRAPHDEF: op: "Placeholder"
// GRAPHDEF: op: "Neg"
// GRAPHDEF: op: "Relu"
// GRAPHDEF: name: "y"

// TFG: tfg.graph
// TFG-NEXT: Placeholder name("x")
// TFG-NEXT: Neg(%Placeholder)
// TFG-NEXT: Relu(%Neg)
// TFG-NEXT: Identity(%Relu) name("y")
