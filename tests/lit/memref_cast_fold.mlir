// RUN: egraft-opt %s -split-input-file -canonicalize="driver=greedy rules=memref-cast-folding" | filecheck %s
// RUN: egraft-opt %s -split-input-file -canonicalize="rules=memref-cast-folding" | filecheck %s

// A cast to a more dynamic type folds into loads and dim (std-era spelling); the static size
// of a dim is read off the source's type.
// CHECK-LABEL: func.func @fold_into_readers
// CHECK-SAME: (%[[A:.*]]: memref<16xf32>, %[[I:.*]]: index)
// CHECK-NOT: memref.cast
// CHECK-DAG: memref.load %[[A]][%[[I]]] : memref<16xf32>
// CHECK-DAG: affine.load %[[A]][%[[I]] + 1] : memref<16xf32>
// CHECK-DAG: arith.constant 16 : index
func @fold_into_readers(%A: memref<16xf32>, %i: index) -> (f32, f32, index) {
  %B = memref_cast %A : memref<16xf32> to memref<?xf32>
  %v = load %B[%i] : memref<?xf32>
  %w = affine.load %B[%i + 1] : memref<?xf32>
  %d = dim %B, 0 : memref<?xf32>
  return %v, %w, %d : f32, f32, index
}

// -----

// A cast to a more static type also folds into a reader (MLIR's foldMemRefCast: the source is
// ranked); dim of it is the size the cast asserts.
// CHECK-LABEL: func.func @more_static
// CHECK-SAME: (%[[D:.*]]: memref<?x?xf32>, %[[I:.*]]: index)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: affine.load %[[D]][%[[I]], %[[I]]] : memref<?x?xf32>
// CHECK: return %{{.*}}, %[[C4]]
func.func @more_static(%D: memref<?x?xf32>, %i: index) -> (f32, index) {
  %S = memref.cast %D : memref<?x?xf32> to memref<4x?xf32>
  %v = affine.load %S[%i, %i] : memref<4x?xf32>
  %c0 = arith.constant 0 : index
  %d = memref.dim %S, %c0 : memref<4x?xf32>
  return %v, %d : f32, index
}

// -----

// Cast chains: back to the source's type is the source; otherwise one cast when one is valid.
// CHECK-LABEL: func.func @chains
// CHECK-SAME: (%[[A:.*]]: memref<4x?xf32>)
// CHECK: %[[C:.*]] = memref.cast %[[A]] : memref<4x?xf32> to memref<?x8xf32>
// CHECK: return %[[A]], %[[C]] : memref<4x?xf32>, memref<?x8xf32>
func.func @chains(%A: memref<4x?xf32>) -> (memref<4x?xf32>, memref<?x8xf32>) {
  %B = memref.cast %A : memref<4x?xf32> to memref<?x?xf32>
  %C = memref.cast %B : memref<?x?xf32> to memref<4x?xf32>
  %D = memref.cast %B : memref<?x?xf32> to memref<?x8xf32>
  return %C, %D : memref<4x?xf32>, memref<?x8xf32>
}

// -----

// Casts that stay: a call and a return need the cast's type, a cast from an unranked memref
// has no ranked source to read through, and two casts joining different static sizes are not
// one valid cast.
// CHECK-LABEL: func.func @must_stay
// CHECK: %[[B:.*]] = memref.cast %{{.*}} : memref<16xf32> to memref<?xf32>
// CHECK: call @use(%[[B]])
// CHECK: %[[R:.*]] = memref.cast %{{.*}} : memref<*xf32> to memref<?xf32>
// CHECK: memref.load %[[R]]
// CHECK: %[[P:.*]] = memref.cast %{{.*}} : memref<4xf32> to memref<?xf32>
// CHECK: memref.cast %[[P]] : memref<?xf32> to memref<5xf32>
// CHECK: return %[[B]]
func.func private @use(memref<?xf32>)
func.func @must_stay(%A: memref<16xf32>, %U: memref<*xf32>, %F: memref<4xf32>, %i: index) -> (memref<?xf32>, f32, memref<5xf32>) {
  %B = memref.cast %A : memref<16xf32> to memref<?xf32>
  func.call @use(%B) : (memref<?xf32>) -> ()
  %R = memref.cast %U : memref<*xf32> to memref<?xf32>
  %v = memref.load %R[%i] : memref<?xf32>
  %P = memref.cast %F : memref<4xf32> to memref<?xf32>
  %Q = memref.cast %P : memref<?xf32> to memref<5xf32>
  return %B, %v, %Q : memref<?xf32>, f32, memref<5xf32>
}

// -----

// Inside loop bodies the same folds apply.
// CHECK-LABEL: func.func @in_loop
// CHECK: affine.for %[[I:.*]] = 0 to 16
// CHECK: affine.load %{{.*}}[%[[I]]] : memref<16xf32>
func.func @in_loop(%A: memref<16xf32>) -> f32 {
  %B = memref.cast %A : memref<16xf32> to memref<?xf32>
  %z = arith.constant 0.0 : f32
  %s = affine.for %i = 0 to 16 iter_args(%acc = %z) -> (f32) {
    %v = affine.load %B[%i] : memref<?xf32>
    %n = arith.addf %acc, %v : f32
    affine.yield %n : f32
  }
  return %s : f32
}

// -----

// Writers and dealloc take the cast's source too; copy takes only a cast that changes the
// layout alone.
// CHECK-LABEL: func.func @fold_into_writers
// CHECK-SAME: (%[[A:.*]]: memref<16xf32>, %[[D:.*]]: memref<?xf32>, %[[V:.*]]: f32, %[[I:.*]]: index)
// CHECK-NOT: memref.cast %[[A]]
// CHECK: memref.store %[[V]], %[[A]][%[[I]]] : memref<16xf32>
// CHECK: affine.store %[[V]], %[[A]][%[[I]] + 1] : memref<16xf32>
// CHECK: memref.copy %[[D]], %{{.*}} : memref<?xf32> to memref<16xf32>
// CHECK: %[[S:.*]] = memref.cast %[[D]] : memref<?xf32> to memref<16xf32>
// CHECK: memref.copy %[[S]], %[[A]]
// CHECK: memref.dealloc %[[A]] : memref<16xf32>
func.func @fold_into_writers(%A: memref<16xf32>, %D: memref<?xf32>, %v: f32, %i: index) {
  %B = memref.cast %A : memref<16xf32> to memref<?xf32>
  store %v, %B[%i] : memref<?xf32>
  affine.store %v, %B[%i + 1] : memref<?xf32>
  %L = memref.cast %D : memref<?xf32> to memref<?xf32, strided<[1], offset: 0>>
  %T = memref.alloc() : memref<16xf32>
  memref.copy %L, %T : memref<?xf32, strided<[1], offset: 0>> to memref<16xf32>
  %S = memref.cast %D : memref<?xf32> to memref<16xf32>
  memref.copy %S, %A : memref<16xf32> to memref<16xf32>
  memref.dealloc %B : memref<?xf32>
  return
}

// -----

// A cast stored as a value stays: it is the value written, not the buffer written to.
// CHECK-LABEL: func.func @no_fold_of_stored_value
// CHECK: %[[B:.*]] = memref.cast
// CHECK: memref.store %[[B]], %{{.*}}[] : memref<memref<?xf32>>
func.func @no_fold_of_stored_value(%A: memref<16xf32>, %H: memref<memref<?xf32>>) {
  %B = memref.cast %A : memref<16xf32> to memref<?xf32>
  memref.store %B, %H[] : memref<memref<?xf32>>
  return
}

// -----

// reinterpret_cast places its view from the allocation's start, which a cast does not move: it
// takes the cast's source, also a more static cast's.
// CHECK-LABEL: func.func @reinterpret
// CHECK-SAME: (%[[A:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK-NOT: memref.cast
// CHECK: memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%[[N]]], strides: [1] : memref<?xf32> to memref<?xf32>
func.func @reinterpret(%A: memref<?xf32>, %n: index) -> memref<?xf32> {
  %S = memref.cast %A : memref<?xf32> to memref<6xf32>
  %R = memref.reinterpret_cast %S to offset: [0], sizes: [%n], strides: [1] : memref<6xf32> to memref<?xf32>
  return %R : memref<?xf32>
}
