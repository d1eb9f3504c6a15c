// eqsat with each built-in rule set on the same functions: a set rewrites what its
// rules cover and leaves the rest as it was. Extraction keeps only what the results
// need, so dead pure ops go with any set (rules=none is the identity round trip).

// RUN: egraft-opt %s -eqsat | filecheck %s --check-prefix=NONE
// RUN: egraft-opt %s -eqsat="rules=arith-canonical" | filecheck %s --check-prefix=ARITH
// RUN: egraft-opt %s -eqsat="rules=tf-canonical" | filecheck %s --check-prefix=TF
// RUN: egraft-opt %s -eqsat="rules=tf-fast-math" | filecheck %s --check-prefix=FAST
// RUN: egraft-opt %s -eqsat="rules=tf-multi report=-" 2>&1 | filecheck %s --check-prefix=MULTI
// RUN: egraft-opt %s -eqsat="rules=memref-affine-canonical" | filecheck %s --check-prefix=AFFINE
// RUN: not egraft-opt %s -eqsat="rules=tf-canonical,nope" 2>&1 | filecheck %s --check-prefix=UNKNOWN

// tf-multi's one rule (two MatMuls of one lhs -> one MatMul and a Split) builds tf.Split,
// which has no op record: the e-graph cannot hold it, so eqsat has no rule to run.
// MULTI:         remark: eqsat: {{.*}} stop=no rules, iterations=0,

// UNKNOWN:       error: unknown rule set 'nope' (known: {{.*}}arith-canonical, {{.*}}tf-multi{{.*}})
// UNKNOWN-NOT:   module

// NONE-LABEL:    func.func @arith
// NONE-NEXT:       %[[C2:.*]] = arith.constant 2 : i32
// NONE-NEXT:       %[[C3:.*]] = arith.constant 3 : i32
// NONE-NEXT:       %[[S:.*]] = arith.subi %arg0, %arg0 : i32
// NONE-NEXT:       %[[F:.*]] = arith.subf %arg1, %arg1 : f32
// NONE-NEXT:       %[[M:.*]] = arith.muli %[[C2]], %[[C3]] : i32
// NONE-NEXT:       return %[[S]], %[[F]], %[[M]] : i32, f32, i32

// arith-canonical: integer x - x is 0, 2 * 3 folds to 6; float x - x stays.
// ARITH-LABEL:   func.func @arith
// ARITH-DAG:       %[[C0:.*]] = arith.constant 0 : i32
// ARITH-DAG:       %[[C6:.*]] = arith.constant 6 : i32
// ARITH-DAG:       %[[F:.*]] = arith.subf %arg1, %arg1 : f32
// ARITH-NOT:       arith.
// ARITH:           return %[[C0]], %[[F]], %[[C6]] : i32, f32, i32

// The tf sets have no arith rules.
// TF-LABEL:      func.func @arith
// TF:              arith.subi %arg0, %arg0
// TF:              arith.muli
// FAST-LABEL:    func.func @arith
// FAST:            arith.subi %arg0, %arg0
func.func @arith(%a: i32, %b: f32) -> (i32, f32, i32) {
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %0 = arith.subi %a, %a : i32
  %1 = arith.subf %b, %b : f32
  %2 = arith.muli %c2, %c3 : i32
  %dead = arith.addi %a, %c2 : i32
  return %0, %1, %2 : i32, f32, i32
}

// tf-canonical: integer Sub(x, x) of a static shape is a zeros constant; float Sub(x, x)
// is not 0 (Inf - Inf is NaN) and stays, as does !(x < x) on floats (NaN < NaN and
// NaN >= NaN are both false).
// TF-LABEL:      func.func @tf
// TF-DAG:          %[[Z:.*]] = "tf.Const"() <{value = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
// TF-DAG:          %[[F:.*]] = "tf.Sub"(%arg1, %arg1) : (tensor<2xf32>, tensor<2xf32>)
// TF-DAG:          %[[L:.*]] = "tf.Less"(%arg1, %arg1)
// TF-DAG:          %[[N:.*]] = "tf.LogicalNot"(%[[L]])
// TF:              return %[[Z]], %[[F]], %[[N]] :

// tf-fast-math assumes no NaN or Inf: float Sub(x, x) is a zeros constant and !(x < x)
// is x >= x; integer Sub(x, x) is tf-canonical's business and stays.
// FAST-LABEL:    func.func @tf
// FAST-DAG:        %[[Z:.*]] = "tf.Const"() <{value = dense<0.000000e+00> : tensor<2xf32>}> : () -> tensor<2xf32>
// FAST-DAG:        %[[GE:.*]] = "tf.GreaterEqual"(%arg1, %arg1)
// FAST-DAG:        %[[I:.*]] = "tf.Sub"(%arg0, %arg0) : (tensor<2xi32>, tensor<2xi32>)
// FAST:            return %[[I]], %[[Z]], %[[GE]] :

// NONE-LABEL:    func.func @tf
// NONE-COUNT-2:    "tf.Sub"
// NONE:            "tf.LogicalNot"
func.func @tf(%a: tensor<2xi32>, %b: tensor<2xf32>) -> (tensor<2xi32>, tensor<2xf32>, tensor<2xi1>) {
  %0 = "tf.Sub"(%a, %a) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %1 = "tf.Sub"(%b, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "tf.Less"(%b, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %3 = "tf.LogicalNot"(%2) : (tensor<2xi1>) -> tensor<2xi1>
  return %0, %1, %3 : tensor<2xi32>, tensor<2xf32>, tensor<2xi1>
}

// MULTI-LABEL:   func.func @shared_lhs
// MULTI-NEXT:      %[[A:.*]] = "tf.MatMul"(%arg0, %arg1)
// MULTI-NEXT:      %[[B:.*]] = "tf.MatMul"(%arg0, %arg2)
// MULTI-NEXT:      return %[[A]], %[[B]]
func.func @shared_lhs(%x: tensor<2x3xf32>, %w1: tensor<3x4xf32>, %w2: tensor<3x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = "tf.MatMul"(%x, %w1) {transpose_a = false, transpose_b = false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "tf.MatMul"(%x, %w2) {transpose_a = false, transpose_b = false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// memref-affine-canonical: an identity affine.apply is its operand and one of constants
// is the index constant its map computes (2 * 3 + 1). The apply feeding the load is
// composed into the load's map: the rule rebuilds the load in its place on the effect
// chain (docs/encoding.md, "Rules that rewrite effects"), on the e-graph.
// AFFINE-LABEL:  func.func @affine
// AFFINE-NOT:      affine.apply
// AFFINE-DAG:      %[[C7:.*]] = arith.constant 7 : index
// AFFINE-DAG:      %[[V:.*]] = affine.load %arg1[%arg0 + 1] : memref<8xf32>
// AFFINE:          return %arg0, %[[C7]], %[[V]] : index, index, f32
func.func @affine(%i: index, %m: memref<8xf32>) -> (index, index, f32) {
  %c2 = arith.constant 2 : index
  %0 = affine.apply affine_map<(d0) -> (d0)>(%i)
  %1 = affine.apply affine_map<(d0) -> (d0 * 3 + 1)>(%c2)
  %2 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
  %3 = affine.load %m[%2] : memref<8xf32>
  return %0, %1, %3 : index, index, f32
}
