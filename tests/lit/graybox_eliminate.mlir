// RUN: egraft-opt %s -split-input-file -allow-unregistered-dialect -affine-graybox-eliminate | filecheck %s
// RUN: egraft-opt %s -split-input-file -allow-unregistered-dialect -affine-graybox-eliminate -canonicalize \
// RUN:   | filecheck %s --check-prefix=CANON

// The graybox note's T1-T6 and T8 (/work/shared/notes/graybox-semantics-and-encoding.md §3),
// the RFC's three examples (corrected to valid IR as the note and mlirx did), and own cases.
// CHECK lines pin only what the note states; value names and pure-op placement are free.

// T1: a graybox at the function's top level always goes (the note's Corollary).
// CHECK-LABEL: func.func @elim_top_level
// CHECK-SAME: (%[[A:.*]]: memref<?xf32>,
// CHECK-NOT: affine.graybox
// CHECK: %[[N:.*]] = arith.index_cast
// CHECK: affine.for %[[K:.*]] = 0 to %[[N]] {
// CHECK: affine.load %[[A]][%[[K]]]
// CHECK: affine.store {{.*}}, %[[A]][%[[K]] + 1]
func @elim_top_level(%A: memref<?xf32>, %x: i32) {
  affine.graybox [%rA] = (%A) : (memref<?xf32>) -> () {
    %n = index_cast %x : i32 to index
    affine.for %k = 0 to %n {
      %v = affine.load %rA[%k] : memref<?xf32>
      affine.store %v, %rA[%k + 1] : memref<?xf32>
    }
    return
  }
  return
}

// -----

// T2: in a loop; %c4 is a constant (a symbol anywhere), %i an induction variable (a dim).
// CHECK-LABEL: func.func @in_loop
// CHECK-NOT: affine.graybox
// CHECK: affine.for %[[I:.*]] = 0 to 10 {
// CHECK: affine.for %[[J:.*]] = 0 to %{{.*}} {
// CHECK: affine.load %{{.*}}[%[[I]] * 4 + %[[J]]]
// CHECK: affine.store {{.*}}[%[[I]] * 4 + %[[J]] + symbol(%{{.*}})]
// With constants propagated (the note's T2 expectation): the bound is 4.
// CANON-LABEL: func.func @in_loop
// CANON-NOT: affine.graybox
// CANON: affine.for %{{.*}} = 0 to 4 {
func @in_loop(%A: memref<100xf32>, %n: index) {
  affine.for %i = 0 to 10 {
    affine.graybox [%rA] = (%A) : (memref<100xf32>) -> () {
      %c4 = constant 4 : index
      affine.for %j = 0 to %c4 {
        %v = affine.load %rA[%i * 4 + %j] : memref<100xf32>
        affine.store %v, %rA[%i * 4 + %j + symbol(%n)] : memref<100xf32>
      }
      return
    }
  }
  return
}

// -----

// T3: a graybox with a result: the result becomes the returned value.
// CHECK-LABEL: func.func @elim_with_result
// CHECK-SAME: (%[[A:.*]]: memref<100xf32>, %[[N:.*]]: index)
// CHECK-NOT: affine.graybox
// CHECK: affine.for %[[I:.*]] = 0 to 10 {
// CHECK: %[[V:.*]] = affine.load %[[A]][%[[I]] + symbol(%{{.*}})]
// CHECK: affine.store %[[V]], %[[A]][%[[I]] + symbol(%[[N]])]
func @elim_with_result(%A: memref<100xf32>, %n: index) {
  affine.for %i = 0 to 10 {
    %r = affine.graybox [%rA] = (%A) : (memref<100xf32>) -> f32 {
      %c3 = constant 3 : index
      %v = affine.load %rA[%i + symbol(%c3)] : memref<100xf32>
      return %v : f32
    }
    affine.store %r, %A[%i + symbol(%n)] : memref<100xf32>
  }
  return
}

// -----

// T4: %vi is a symbol only inside the graybox (its top level): the graybox stays.
// CHECK-LABEL: func.func @symbol_only_inside
// CHECK: affine.graybox [%[[R:.*]]] = (%{{.*}})
// CHECK: affine.load %[[R]][
// CHECK: affine.store {{.*}}, %[[R]][
func @symbol_only_inside(%A: memref<100xf32>, %B: memref<100xi32>) {
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

// T5: a multi-block region is never spliced (E1), even when every access is affine outside.
// CHECK-LABEL: func.func @multi_block
// CHECK: affine.graybox
// CHECK: cf.cond_br
// CHECK: ^bb1:
// CHECK: ^bb2:
func @multi_block(%A: memref<?xi32>, %key: i32) {
  affine.for %i = 0 to 10 {
    affine.graybox [%rA] = (%A) : (memref<?xi32>) -> () {
      %v = affine.load %rA[%i] : memref<?xi32>
      %p = cmpi "eq", %v, %key : i32
      cond_br %p, ^bb1, ^bb2
    ^bb1:
      affine.store %key, %rA[%i + 1] : memref<?xi32>
      br ^bb2
    ^bb2:
      return
    }
  }
  return
}

// -----

// T6: after the splice `dim %M, 0` of a loop-local call result is neither symbol nor dim.
// CHECK-LABEL: func.func @dim_of_operand
// CHECK: affine.graybox [%[[R:.*]]] =
// CHECK: memref.dim %[[R]]
func @get_buffer(index) -> memref<?xf32>
func @dim_of_operand(%n: index) {
  affine.for %i = 0 to 10 {
    %M = call @get_buffer(%i) : (index) -> memref<?xf32>
    affine.graybox [%rM] = (%M) : (memref<?xf32>) -> () {
      %d = dim %rM, 0 : memref<?xf32>
      affine.for %j = 0 to %d {
        %v = affine.load %rM[%j] : memref<?xf32>
        "test.use"(%v) : (f32) -> ()
      }
      return
    }
  }
  return
}

// -----

// T6's twin (the note's positive variant): %M = alloc(%n) in the loop, so `dim %M, 0` is
// the alloc's size %n, a symbol: the graybox goes.
// CHECK-LABEL: func.func @dim_of_alloc
// CHECK-NOT: affine.graybox
// CHECK: memref.alloc
// CHECK: affine.for
func @dim_of_alloc(%n: index) {
  affine.for %i = 0 to 10 {
    %M = alloc(%n) : memref<?xf32>
    affine.graybox [%rM] = (%M) : (memref<?xf32>) -> () {
      %d = dim %rM, 0 : memref<?xf32>
      affine.for %j = 0 to %d {
        %v = affine.load %rM[%j] : memref<?xf32>
        "test.use"(%v) : (f32) -> ()
      }
      return
    }
    dealloc %M : memref<?xf32>
  }
  return
}

// -----

// T8: a graybox at the top level of its parent graybox merges into it; the parent stays.
// CHECK-LABEL: func.func @merge_nested
// CHECK: affine.graybox [%[[R:.*]]] = (%{{.*}}) : (memref<100xf32>) -> () {
// CHECK-NOT: affine.graybox
// CHECK: affine.load %[[R]][
// CHECK: affine.store {{.*}}, %[[R]][
// CHECK: return
// CHECK-NEXT: }
func @merge_nested(%A: memref<100xf32>, %B: memref<100xi32>) {
  affine.for %i = 0 to 100 {
    %v = affine.load %B[%i] : memref<100xi32>
    %vi = index_cast %v : i32 to index
    affine.graybox [%rA] = (%A) : (memref<100xf32>) -> () {
      %w = affine.load %rA[%vi] : memref<100xf32>
      affine.graybox [%rA2] = (%rA) : (memref<100xf32>) -> () {
        affine.store %w, %rA2[%vi + 1] : memref<100xf32>
        return
      }
      return
    }
  }
  return
}

// -----

// Symbol -> dim demotion (E2): %i is a symbol inside the graybox (it dominates it) and only a
// dim outside, so the bound's symbol becomes a dim of the map.
// CHECK-LABEL: func.func @demote
// CHECK-NOT: affine.graybox
// CHECK: affine.for %[[I:.*]] = 0 to 10 {
// CHECK: affine.for %{{.*}} = 0 to #map(%[[I]]) {
func @demote(%A: memref<100xf32>) {
  affine.for %i = 0 to 10 {
    affine.graybox [%rA] = (%A) : (memref<100xf32>) -> () {
      affine.for %j = 0 to affine_map<()[s0] -> (s0 + 2)>()[%i] {
        %v = affine.load %rA[%j] : memref<100xf32>
        affine.store %v, %rA[%j + 1] : memref<100xf32>
      }
      return
    }
  }
  return
}

// -----

// Nested top-level grayboxes (the note's own3): both go.
// CHECK-LABEL: func.func @nested
// CHECK-NOT: affine.graybox
// CHECK: affine.for
func @nested(%A: memref<?xf32>, %x: i32) {
  affine.graybox [%rA] = (%A) : (memref<?xf32>) -> () {
    %m = index_cast %x : i32 to index
    affine.graybox [%rA2] = (%rA) : (memref<?xf32>) -> () {
      affine.for %k = 0 to %m {
        %v = affine.load %rA2[%k] : memref<?xf32>
        affine.store %v, %rA2[%k + 1] : memref<?xf32>
      }
      return
    }
    return
  }
  return
}

// -----

// A result used as a loop bound outside: the returned value, moved to the function's top
// level, is a symbol there as the result was.
// CHECK-LABEL: func.func @result_bound
// CHECK-NOT: affine.graybox
// CHECK: %[[N:.*]] = arith.index_cast
// CHECK: affine.for %{{.*}} = 0 to %[[N]] {
func @result_bound(%A: memref<?xi32>, %c: i32) {
  %r = affine.graybox [%rA] = (%A) : (memref<?xi32>) -> index {
    %c0 = constant 0 : index
    %v = affine.load %rA[%c0] : memref<?xi32>
    %n = index_cast %v : i32 to index
    return %n : index
  }
  affine.for %j = 0 to %r {
    affine.store %c, %A[%j] : memref<?xi32>
  }
  return
}

// -----

// An empty graybox without results is erased.
// CHECK-LABEL: func.func @empty
// CHECK-NEXT: return
func @empty(%A: memref<4xf32>) {
  affine.graybox [%rA] = (%A) : (memref<4xf32>) -> () {
    return
  }
  return
}

// -----

// RFC example 1 (linear search; corrected as mlirx's test: typed block arguments, index
// compare): a CFG body stays.
// CHECK-LABEL: func.func @search
// CHECK: affine.graybox
// CHECK: cf.br
func @search(%A : memref<?x?xi32>, %S : memref<?xi32>, %key : i32) {
  %ni = dim %A, 0 : memref<?x?xi32>
  %c1 = constant 1 : index
  affine.for %i = 0 to %ni {
    affine.graybox [%rA, %rS] = (%A, %S) : (memref<?x?xi32>, memref<?xi32>) -> () {
      %c0 = constant 0 : index
      %nj = dim %rA, 1 : memref<?x?xi32>
      br ^bb1(%c0 : index)
    ^bb1(%j: index):
      %p1 = cmpi "slt", %j, %nj : index
      cond_br %p1, ^bb2(%j : index), ^bb5
    ^bb2(%j_arg : index):
      %v = affine.load %rA[%i, %j_arg] : memref<?x?xi32>
      %p2 = cmpi "eq", %v, %key : i32
      cond_br %p2, ^bb3(%j_arg : index), ^bb4(%j_arg : index)
    ^bb3(%j_arg2: index):
      %j_int = index_cast %j_arg2 : index to i32
      affine.store %j_int, %rS[%i] : memref<?xi32>
      br ^bb5
    ^bb4(%j_arg3 : index):
      %jinc = addi %j_arg3, %c1 : index
      br ^bb1(%jinc : index)
    ^bb5:
      return
    }
  }
  return
}

// -----

// RFC example 2 (non-affine bound; `...` filled in): %pow is a call result: the graybox stays.
// CHECK-LABEL: func.func @nest
// CHECK: affine.graybox
// CHECK: call @powi
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

// RFC example 3 (A[B[i]]++; an i32 index through index_cast, as the note and mlirx corrected
// it): %vi is not a symbol in the loop, so the graybox stays.
// CHECK-LABEL: func.func @indirect
// CHECK: affine.graybox [%[[R:.*]]] =
// CHECK: affine.load %[[R]][
// CHECK: affine.store {{.*}}, %[[R]][
func @indirect(%A: memref<100xf32>, %B: memref<100xi32>) {
  %cf1 = constant 1.0 : f32
  affine.for %i = 0 to 100 {
    %v = affine.load %B[%i] : memref<100xi32>
    %vi = index_cast %v : i32 to index
    affine.graybox [%rA] = (%A) : (memref<100xf32>) -> () {
      %s = affine.load %rA[%vi] : memref<100xf32>
      %o = addf %s, %cf1 : f32
      affine.store %o, %rA[%vi] : memref<100xf32>
      return
    }
  }
  return
}

// -----

// The `dim` quirk reaches into nested grayboxes (a departure from the note's "nested grayboxes
// need no re-check"): %d = dim of the outer graybox's argument is a symbol inside the inner one;
// spliced, it would be a dim of a loop-local call result, which is not. So the outer graybox
// stays, and the inner one merges into it (at its top level: always legal).
// CHECK-LABEL: func.func @dim_quirk_nested
// CHECK: affine.graybox [%[[R:.*]]] =
// CHECK: %[[D:.*]] = memref.dim %[[R]]
// CHECK-NOT: affine.graybox
// CHECK: affine.for %{{.*}} = 0 to %[[D]]
func @get_buffer(index) -> memref<?xf32>
func @dim_quirk_nested(%n: index) {
  affine.for %i = 0 to 10 {
    %M = call @get_buffer(%i) : (index) -> memref<?xf32>
    affine.graybox [%rM] = (%M) : (memref<?xf32>) -> () {
      %d = dim %rM, 0 : memref<?xf32>
      affine.graybox [%rM2] = (%rM) : (memref<?xf32>) -> () {
        affine.for %j = 0 to %d {
          %v = affine.load %rM2[%j] : memref<?xf32>
          "test.use"(%v) : (f32) -> ()
        }
        return
      }
      return
    }
  }
  return
}
