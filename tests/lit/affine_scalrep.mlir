// RUN: egraft-opt %s -split-input-file -affine-scalrep="driver=greedy" | filecheck %s
// RUN: egraft-opt %s -split-input-file -affine-scalrep="driver=egraph" | filecheck %s

// A load right after a store to the same place is the stored value (affine and std-era forms).
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[A:.*]]: memref<10xf32>, %[[X:.*]]: f32, %[[Y:.*]]: f32, %[[I:.*]]: index)
// CHECK: affine.store %[[X]], %[[A]][%[[I]] + 1]
// CHECK: memref.store %[[Y]], %[[A]][%[[I]]]
// CHECK-NOT: load
// CHECK: return %[[X]], %[[Y]]
func @forward(%A: memref<10xf32>, %x: f32, %y: f32, %i: index) -> (f32, f32) {
  affine.store %x, %A[%i + 1] : memref<10xf32>
  %v = affine.load %A[%i + 1] : memref<10xf32>
  store %y, %A[%i] : memref<10xf32>
  %w = load %A[%i] : memref<10xf32>
  return %v, %w : f32, f32
}

// -----

// A load right after a load of the same place is that load; a load between a store and a load
// writes nothing, so the store still forwards.
// CHECK-LABEL: func.func @repeated_and_through_a_load
// CHECK: %[[L:.*]] = affine.load %{{.*}}[%{{.*}}] : memref<10xf32>
// CHECK-NOT: affine.load
// CHECK: affine.store %[[X:.*]], %[[A:.*]][0]
// CHECK: %[[M:.*]] = affine.load %{{.*}}[1]
// CHECK-NOT: affine.load
// CHECK: return %[[L]], %[[L]], %[[X]], %[[M]]
func.func @repeated_and_through_a_load(%A: memref<10xf32>, %B: memref<10xf32>, %x: f32, %i: index)
    -> (f32, f32, f32, f32) {
  %0 = affine.load %A[%i] : memref<10xf32>
  %1 = affine.load %A[%i] : memref<10xf32>
  affine.store %x, %A[0] : memref<10xf32>
  %m = affine.load %B[1] : memref<10xf32>
  %2 = affine.load %A[0] : memref<10xf32>
  return %0, %1, %2, %m : f32, f32, f32, f32
}

// -----

// Stores that may alias block forwarding: another index of the same memref, another memref
// argument (arguments may alias), a call; so do different indices and a non-identity map
// between affine and memref accesses.
// CHECK-LABEL: func.func @blocked
// CHECK-COUNT-5: affine.load
// CHECK: memref.load
func.func private @opaque()
func.func @blocked(%A: memref<10xf32>, %B: memref<10xf32>, %x: f32, %i: index, %j: index)
    -> (f32, f32, f32, f32, f32, f32) {
  affine.store %x, %A[%i] : memref<10xf32>
  affine.store %x, %A[%j] : memref<10xf32>
  %0 = affine.load %A[%i] : memref<10xf32>
  affine.store %x, %A[%i] : memref<10xf32>
  affine.store %x, %B[%i] : memref<10xf32>
  %1 = affine.load %A[%i] : memref<10xf32>
  affine.store %x, %A[%i] : memref<10xf32>
  func.call @opaque() : () -> ()
  %2 = affine.load %A[%i] : memref<10xf32>
  affine.store %x, %A[%i] : memref<10xf32>
  %3 = affine.load %A[%j] : memref<10xf32>
  affine.store %x, %A[%i] : memref<10xf32>
  %4 = affine.load %A[%i + 1] : memref<10xf32>
  affine.store %x, %A[%i + 1] : memref<10xf32>
  %5 = memref.load %A[%i] : memref<10xf32>
  return %0, %1, %2, %3, %4, %5 : f32, f32, f32, f32, f32, f32
}

// -----

// Two distinct allocations never alias: a store to one does not block forwarding in the other.
// CHECK-LABEL: func.func @other_allocation
// CHECK-NOT: affine.load
// CHECK: return %{{.*}}, %[[X:.*]] : memref<4xf32>, f32
func.func @other_allocation(%x: f32, %y: f32, %i: index) -> (memref<4xf32>, f32) {
  %A = memref.alloc() : memref<4xf32>
  %B = memref.alloc() : memref<4xf32>
  affine.store %x, %A[%i] : memref<4xf32>
  affine.store %y, %B[%i] : memref<4xf32>
  %v = affine.load %A[%i] : memref<4xf32>
  return %B, %v : memref<4xf32>, f32
}

// -----

// Straight-line code inside a graybox and inside a loop body is forwarded the same way; nothing
// is forwarded into a region from outside it (the loop may run zero times, the body's token is
// its own).
// CHECK-LABEL: func.func @regions
// CHECK: affine.graybox
// CHECK-NOT: affine.load
// CHECK: return %[[X:.*]] : f32
// CHECK: affine.for
// CHECK: affine.load
// CHECK: affine.store %[[Y:.*]], %{{.*}}[%{{.*}} + 1]
// CHECK-NOT: affine.load
// CHECK: arith.addf %{{.*}}, %[[Y]]
func.func @regions(%A: memref<100xf32>, %O: memref<100xf32>, %x: f32, %y: f32) -> f32 {
  %i = arith.constant 50 : index
  %r = affine.graybox [%rA] = (%A) : (memref<100xf32>) -> f32 {
    affine.store %x, %rA[%i] : memref<100xf32>
    %v = affine.load %rA[%i] : memref<100xf32>
    return %v : f32
  }
  affine.store %y, %A[%i] : memref<100xf32>
  affine.for %k = 0 to 10 {
    %u = affine.load %A[%i] : memref<100xf32>
    affine.store %y, %A[%k + 1] : memref<100xf32>
    %w = affine.load %A[%k + 1] : memref<100xf32>
    %s = arith.addf %u, %w : f32
    affine.store %s, %O[%k] : memref<100xf32>
  }
  return %r : f32
}

// -----

// Farther back (greedy-only walk, also after the e-graph): over loads, stores to another constant
// address of the same memref and stores to another allocation, up to the first access to the same
// place (the same constant address counts); a store that may write the element stops the walk: to
// another memref argument (arguments may alias) or at an unknown address.
// CHECK-LABEL: func.func @walk
// CHECK-SAME: (%[[A:.*]]: memref<10xf32>, %[[B:.*]]: memref<10xf32>, %[[X:.*]]: f32, %[[Y:.*]]: f32, %[[J:.*]]: index)
// CHECK: %[[L:.*]] = affine.load %[[B]][4]
// CHECK: %[[K:.*]] = affine.load %[[B]][4]
// CHECK: %[[M:.*]] = affine.load %[[A]][%[[J]]]
// CHECK: %[[N:.*]] = affine.load %[[A]][3]
// CHECK: return %[[X]], %[[K]], %[[M]], %[[N]], %[[Y]]
func.func @walk(%A: memref<10xf32>, %B: memref<10xf32>, %x: f32, %y: f32, %j: index) -> (f32, f32, f32, f32, f32) {
  %c3 = arith.constant 3 : index
  %c2 = arith.constant 2 : index
  %T = memref.alloc() : memref<10xf32>
  affine.store %x, %A[%c2 + 1] : memref<10xf32>
  affine.store %y, %A[5] : memref<10xf32>
  %l = affine.load %B[4] : memref<10xf32>
  memref.store %y, %A[%c2] : memref<10xf32>
  affine.store %y, %T[%c3] : memref<10xf32>
  %0 = memref.load %A[%c3] : memref<10xf32>
  %1 = affine.load %B[4] : memref<10xf32>
  %m = affine.load %A[%j] : memref<10xf32>
  affine.store %y, %A[%j] : memref<10xf32>
  %n = affine.load %A[3] : memref<10xf32>
  %t = affine.load %T[3] : memref<10xf32>
  return %0, %1, %m, %n, %t : f32, f32, f32, f32, f32
}
