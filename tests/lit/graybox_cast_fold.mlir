// RUN: egraft-opt %s -split-input-file -canonicalize="rules=arith-canonical,memref-affine-canonical,memref-cast-folding" | filecheck %s

// memref casts folded into graybox operands and dropped graybox operands (structural steps
// graybox-cast-fold and graybox-drop-args of memref-affine-canonical; docs/graybox.md).
// T9 and T10a are the graybox note's (/work/shared/notes/graybox-semantics-and-encoding.md §3).

// T9: static -> dynamic: operand and region argument retyped; the re-cast is kept only for the
// call (type-sensitive); `dim` of the now static size folds to 16; the outer cast is gone.
// CHECK-LABEL: func.func @fold_to_dynamic
// CHECK-SAME: (%[[A:.*]]: memref<16xf32>)
// CHECK-NOT: memref.cast
// CHECK: affine.graybox [%[[R:.*]]] = (%[[A]]) : (memref<16xf32>)
// CHECK-NOT: memref.dim
// CHECK: %[[C:.*]] = memref.cast %[[R]] : memref<16xf32> to memref<?xf32>
// CHECK-NOT: memref.dim
// CHECK: affine.store {{.*}}, %[[R]][{{.*}} + 15] : memref<16xf32>
// CHECK: call @use(%[[C]])
func @get_index(index) -> index
func @use(memref<?xf32>)
func @fold_to_dynamic(%A: memref<16xf32>) {
  %B = memref_cast %A : memref<16xf32> to memref<?xf32>
  affine.for %i = 0 to 16 {
    %t = call @get_index(%i) : (index) -> index
    affine.graybox [%rB] = (%B) : (memref<?xf32>) -> () {
      %d = dim %rB, 0 : memref<?xf32>
      %v = affine.load %rB[%t] : memref<?xf32>
      affine.store %v, %rB[symbol(%d) - %i - 1] : memref<?xf32>
      call @use(%rB) : (memref<?xf32>) -> ()
      return
    }
  }
  return
}

// -----

// T10a: a cast to a more static type is not folded (it would erase static information inside).
// CHECK-LABEL: func.func @no_fold_more_static
// CHECK: %[[S:.*]] = memref.cast %{{.*}} : memref<?xf32> to memref<16xf32>
// CHECK: affine.graybox [%{{.*}}] = (%[[S]]) : (memref<16xf32>)
func @get_index(index) -> index
func @no_fold_more_static(%D: memref<?xf32>) {
  %S = memref_cast %D : memref<?xf32> to memref<16xf32>
  affine.for %i = 0 to 16 {
    %t = call @get_index(%i) : (index) -> index
    affine.graybox [%rS] = (%S) : (memref<16xf32>) -> () {
      %v = affine.load %rS[%t] : memref<16xf32>
      affine.store %v, %rS[%i] : memref<16xf32>
      return
    }
  }
  return
}

// -----

// An unranked source cannot be a graybox operand: the cast stays.
// CHECK-LABEL: func.func @no_fold_unranked
// CHECK: %[[C:.*]] = memref.cast %{{.*}} : memref<*xf32> to memref<?xf32>
// CHECK: affine.graybox [%{{.*}}] = (%[[C]]) : (memref<?xf32>)
func @get_index(index) -> index
func @no_fold_unranked(%U: memref<*xf32>) {
  %C = memref_cast %U : memref<*xf32> to memref<?xf32>
  affine.for %i = 0 to 16 {
    %t = call @get_index(%i) : (index) -> index
    affine.graybox [%rC] = (%C) : (memref<?xf32>) -> () {
      %v = affine.load %rC[%t] : memref<?xf32>
      affine.store %v, %rC[%t + 1] : memref<?xf32>
      return
    }
  }
  return
}

// -----

// Folding makes the two operands the same buffer: the duplicate goes (RegionArgumentCanonicalizer),
// and so do the unused operand and the graybox that does nothing.
// CHECK-LABEL: func.func @fold_then_dedupe
// CHECK-SAME: (%[[A:.*]]: memref<16xf32>,
// CHECK: affine.graybox [%[[R:.*]]] = (%[[A]]) : (memref<16xf32>) -> () {
// CHECK: affine.load %[[R]]
// CHECK: affine.store {{.*}}, %[[R]]
// CHECK-NOT: affine.graybox
func @get_index(index) -> index
func @fold_then_dedupe(%A: memref<16xf32>, %B: memref<16xf32>) {
  %D = memref_cast %A : memref<16xf32> to memref<?xf32>
  affine.for %i = 0 to 16 {
    %t = call @get_index(%i) : (index) -> index
    affine.graybox [%rA, %rD, %rB] = (%A, %D, %B) : (memref<16xf32>, memref<?xf32>, memref<16xf32>) -> () {
      %v = affine.load %rA[%t] : memref<16xf32>
      affine.store %v, %rD[%t] : memref<?xf32>
      return
    }
    affine.graybox [%rB2] = (%B) : (memref<16xf32>) -> () {
      return
    }
  }
  return
}
