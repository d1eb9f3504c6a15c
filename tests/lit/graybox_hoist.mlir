// RUN: egraft-opt %s -split-input-file -allow-unregistered-dialect -affine-graybox-hoist | filecheck %s

// affine-graybox-hoist (docs/graybox.md): the graybox note's T7 and RFC example 2
// (/work/shared/notes/graybox-semantics-and-encoding.md §3), and own cases: hoisting out of
// nested loops and ifs, grayboxes that must stay, and the profitability rule.

// T7: hoisted above %j (%n dominates the new graybox: a symbol; %j an induction variable
// inside it), not above %i (%n would be defined inside the graybox, not at its top level).
// CHECK-LABEL: func.func @hoist_one_level
// CHECK: affine.for %[[I:.*]] =
// CHECK:   call @rows
// CHECK:   affine.graybox
// CHECK:     affine.for %{{.*}} = 0 to 8
// CHECK-NOT: affine.graybox
func @rows(index) -> index
func @hoist_one_level(%A: memref<?x?xf32>, %N: index, %cst: f32) {
  affine.for %i = 0 to %N {
    %n = call @rows(%i) : (index) -> index
    affine.for %j = 0 to 8 {
      affine.graybox [%rA] = (%A) : (memref<?x?xf32>) -> () {
        affine.for %k = 0 to %n {
          affine.store %cst, %rA[%j, %k] : memref<?x?xf32>
        }
        return
      }
    }
  }
  return
}

// -----

// RFC example 2: %pow = call @powi(%c2, %j) depends on %j: no level is legal.
// CHECK-LABEL: func.func @nest
// CHECK: affine.for
// CHECK-NEXT: affine.for
// CHECK-NEXT: affine.graybox
// CHECK-NEXT: call @powi
func @powi(index, index) -> index
func @nest(%n : index) {
  %c2 = constant 2 : index
  affine.for %i = 0 to %n {
    affine.for %j = 0 to %n {
      affine.graybox [] = () : () -> () {
        %pow = call @powi(%c2, %j) : (index, index) -> index
        affine.for %k = 0 to %pow {
          affine.for %l = 0 to %n {
            "test.foo"(%k, %l) : (index, index) -> ()
          }
        }
        return
      }
    }
  }
  return
}

// -----

// Out of an if and two loops at once; the new graybox captures both memrefs the loops use
// (the store to %B outside the old graybox included), in first-use order.
// CHECK-LABEL: func.func @nested_loops_and_if
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?xf32>,
// CHECK: affine.for %{{.*}} = 0 to %{{.*}} {
// CHECK:   call @rows
// CHECK:   affine.graybox [%[[RB:.*]], %[[RA:.*]]] = (%[[B]], %[[A]])
// CHECK:     affine.for %[[J:.*]] = 0 to 8 {
// CHECK:       affine.for %[[K:.*]] = 0 to 4 {
// CHECK:         affine.if
// CHECK:           affine.store {{.*}}, %[[RB]][%[[J]]]
// CHECK:           affine.for %[[L:.*]] = 0 to %{{.*}} {
// CHECK:             affine.store {{.*}}, %[[RA]][%[[J]], %[[K]] + %[[L]]]
// CHECK-NOT: affine.graybox
func @rows(index) -> index
func @nested_loops_and_if(%A: memref<?x?xf32>, %B: memref<?xf32>, %N: index, %cst: f32) {
  affine.for %i = 0 to %N {
    %n = call @rows(%i) : (index) -> index
    affine.for %j = 0 to 8 {
      affine.for %k = 0 to 4 {
        affine.if affine_set<(d0) : (d0 - 2 >= 0)>(%k) {
          affine.store %cst, %B[%j] : memref<?xf32>
          affine.graybox [%rA] = (%A) : (memref<?x?xf32>) -> () {
            affine.for %l = 0 to %n {
              affine.store %cst, %rA[%j, %k + %l] : memref<?x?xf32>
            }
            return
          }
        }
      }
    }
  }
  return
}

// -----

// Legal out of the whole nest: the new graybox reaches the function's top level and goes.
// CHECK-LABEL: func.func @hoist_to_top
// CHECK-NOT: affine.graybox
// CHECK: affine.for
func @hoist_to_top(%A: memref<?xf32>, %x: i32, %cst: f32) {
  %n = index_cast %x : i32 to index
  affine.for %i = 0 to 8 {
    affine.graybox [%rA] = (%A) : (memref<?xf32>) -> () {
      affine.for %k = 0 to %n {
        affine.store %cst, %rA[%i + %k] : memref<?xf32>
      }
      return
    }
  }
  return
}

// -----

// Must stay: %vi is a symbol only at the graybox's top level (the note's T4), at any level.
// CHECK-LABEL: func.func @must_stay
// CHECK: affine.for
// CHECK-NEXT: affine.load
// CHECK-NEXT: affine.graybox
func @must_stay(%A: memref<100xf32>, %B: memref<100xi32>) {
  affine.for %i = 0 to 100 {
    %v = affine.load %B[%i] : memref<100xi32>
    affine.graybox [%rA] = (%A) : (memref<100xf32>) -> () {
      %vi = index_cast %v : i32 to index
      %s = affine.load %rA[%vi] : memref<100xf32>
      affine.store %s, %rA[%vi + 1] : memref<100xf32>
      return
    }
  }
  return
}

// -----

// Not profitable: only the if could be left (%n is loop-local), and an if runs its graybox at
// most once anyway: the graybox stays inside it.
// CHECK-LABEL: func.func @only_an_if
// CHECK: affine.if
// CHECK-NEXT: affine.graybox
func @rows(index) -> index
func @only_an_if(%A: memref<?xf32>, %N: index, %cst: f32) {
  affine.for %i = 0 to %N {
    %n = call @rows(%i) : (index) -> index
    affine.if affine_set<(d0) : (d0 - 2 >= 0)>(%i) {
      affine.graybox [%rA] = (%A) : (memref<?xf32>) -> () {
        affine.for %k = 0 to %n {
          affine.store %cst, %rA[%k] : memref<?xf32>
        }
        return
      }
    }
  }
  return
}

// -----

// A loop that never runs is never left (its graybox runs zero times, a hoisted one once).
// CHECK-LABEL: func.func @zero_trip
// CHECK: affine.for %{{.*}} = 0 to 0 {
// CHECK-NEXT: affine.graybox
func @rows(index) -> index
func @zero_trip(%A: memref<?xf32>, %N: index, %cst: f32) {
  affine.for %i = 0 to %N {
    %n = call @rows(%i) : (index) -> index
    affine.for %j = 0 to 0 {
      affine.graybox [%rA] = (%A) : (memref<?xf32>) -> () {
        affine.for %k = 0 to %n {
          affine.store %cst, %rA[%j + %k] : memref<?xf32>
        }
        return
      }
    }
  }
  return
}

// -----

// A hoist that makes its neighbour eliminable: once the %j loop sits in a graybox, the other
// graybox's bound %n (loop-local outside) dominates that scope and is a symbol there.
// CHECK-LABEL: func.func @neighbours
// CHECK: affine.graybox
// CHECK-NOT: affine.graybox
// CHECK: return
func @rows(index) -> index
func @neighbours(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %N: index, %cst: f32) {
  affine.for %i = 0 to %N {
    %n = call @rows(%i) : (index) -> index
    affine.for %j = 0 to 8 {
      affine.graybox [%rA] = (%A) : (memref<?x?xf32>) -> () {
        affine.for %k = 0 to %n {
          affine.store %cst, %rA[%j, %k] : memref<?x?xf32>
        }
        return
      }
      affine.graybox [%rB] = (%B) : (memref<?x?xf32>) -> () {
        affine.for %k = 0 to %n {
          affine.store %cst, %rB[%j, %k] : memref<?x?xf32>
        }
        return
      }
    }
  }
  return
}

// -----

// A loop with results: the new graybox returns them.
// CHECK-LABEL: func.func @loop_results
// CHECK: %[[S:.*]] = affine.graybox {{.*}} -> f32 {
// CHECK:   %[[R:.*]] = affine.for {{.*}} iter_args
// CHECK:   return %[[R]] : f32
// CHECK: affine.store %[[S]]
func @rows(index) -> index
func @loop_results(%A: memref<?xf32>, %N: index, %cst: f32) {
  affine.for %i = 0 to %N {
    %n = call @rows(%i) : (index) -> index
    %s = affine.for %j = 0 to 8 iter_args(%acc = %cst) -> (f32) {
      %t = affine.graybox [%rA] = (%A) : (memref<?xf32>) -> f32 {
        affine.for %k = 0 to %n {
          affine.store %cst, %rA[%j + %k] : memref<?xf32>
        }
        %v = affine.load %rA[%j] : memref<?xf32>
        return %v : f32
      }
      %a = addf %acc, %t : f32
      affine.yield %a : f32
    }
    affine.store %s, %A[%i] : memref<?xf32>
  }
  return
}
