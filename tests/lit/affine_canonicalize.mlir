// Affine canonicalization (memref-affine-canonical: rules and the affine-maps/affine-loops
// steps) on both drivers: composition, maps and operands, min/max, bounds, loops and ifs.

// RUN: egraft-opt %s -split-input-file -canonicalize | filecheck %s
// RUN: egraft-opt %s -split-input-file -canonicalize="driver=greedy" | filecheck %s

// Chains of applies compose into one; a constant operand goes into the map and a dim that
// is a valid symbol becomes a symbol (MLIR's partial_fold_map, mix_dims_and_symbols).
// CHECK-DAG:   #[[$FOLD:.*]] = affine_map<()[s0] -> (s0 - 42)>
// CHECK-DAG:   #[[$CHAIN:.*]] = affine_map<()[s0, s1] -> (s0 * 42 + s1 + 6)>
// CHECK-LABEL: func.func @compose
// CHECK-NEXT:    %[[A:.*]] = affine.apply #[[$FOLD]]()[%arg0]
// CHECK-NEXT:    %[[B:.*]] = affine.apply #[[$CHAIN]]()[%arg1, %arg0]
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @compose(%arg0: index, %arg1: index) -> (index, index) {
  %c42 = arith.constant 42 : index
  %0 = affine.apply affine_map<(d0, d1) -> (d0 - d1)>(%arg0, %c42)
  %a = affine.apply affine_map<(d0)[s0] -> (d0 - 1 + 42 * s0)>(%arg0)[%arg1]
  %b = affine.apply affine_map<(d0) -> (d0 + 7)>(%a)
  return %0, %b : index, index
}

// -----

// min/max of constants fold to the least/greatest result; duplicates and non-extreme
// constant results go; a min left with one result is an apply.
// CHECK-DAG:   #[[$MM:.*]] = affine_map<()[s0] -> (s0, 7)>
// CHECK-DAG:   #[[$ONE:.*]] = affine_map<()[s0] -> (s0 + 1)>
// CHECK-LABEL: func.func @min_max
// CHECK-DAG:     %[[C512:.*]] = arith.constant 512 : index
// CHECK-DAG:     %[[C1000:.*]] = arith.constant 1000 : index
// CHECK-DAG:     %[[MX:.*]] = affine.max #[[$MM]]()[%arg0]
// CHECK-DAG:     %[[AP:.*]] = affine.apply #[[$ONE]]()[%arg0]
// CHECK-NOT:     affine.min
// CHECK:         return %[[C512]], %[[C1000]], %[[MX]], %[[AP]]
func.func @min_max(%arg0: index) -> (index, index, index, index) {
  %c511 = arith.constant 511 : index
  %c0 = arith.constant 0 : index
  %0 = affine.min affine_map<(d0)[s0] -> (1000, d0 + 512, s0 + 1)>(%c0)[%c511]
  %1 = affine.max affine_map<(d0)[s0] -> (1000, d0 + 512, s0 + 1)>(%c0)[%c511]
  %2 = affine.max affine_map<(d0) -> (d0, d0, 4, 7)>(%arg0)
  %3 = affine.min affine_map<(d0) -> (d0 + 1, d0 + 1)>(%arg0)
  return %0, %1, %2, %3 : index, index, index, index
}

// -----

// Bounds: constants folded, unused and duplicate operands dropped, a dim promoted to a
// symbol, duplicate results dropped (MLIR's constant_fold_bounds, canonicalize_bounds,
// drop_duplicate_bounds).
// CHECK-DAG:   #[[$UB:.*]] = affine_map<()[s0] -> (1024, s0 * 2)>
// CHECK-LABEL: func.func @bounds
// CHECK:         affine.for %{{.*}} = 5 to 7 {
// CHECK:         affine.for %{{.*}} = 0 to min #[[$UB]]()[%arg1] {
// CHECK:         affine.for %{{.*}} = %arg1 to #{{.*}}()[%arg1] {
func.func @bounds(%m: memref<16xindex>, %M: index, %N: index) {
  %c9 = arith.constant 9 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c1024 = arith.constant 1024 : index
  %c3 = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%c1, %c2)
  affine.for %i = max affine_map<(d0, d1) -> (0, d0 + d1)>(%c2, %c3) to min affine_map<(d0, d1) -> (d0 - 2, 32 * d1)>(%c9, %c1) {
    affine.store %i, %m[%i] : memref<16xindex>
  }
  affine.for %i = 0 to min affine_map<(d0, d1, d2, d3) -> (d0, d1 + d2)>(%c1024, %M, %M, %N) {
    affine.store %i, %m[%i mod 16] : memref<16xindex>
  }
  affine.for %i = max affine_map<(d0) -> (d0, d0)>(%M) to min affine_map<(d0) -> (d0 + 2, d0 + 2)>(%M) {
    affine.store %i, %m[%i mod 16] : memref<16xindex>
  }
  return
}

// -----

// Loops of zero trips give their inits, one trip is inlined (iv := lb), an empty loop goes.
// CHECK-LABEL: func.func @trips
// CHECK-NOT:     affine.for
// CHECK:         %[[V:.*]] = affine.load %arg0[3]
// CHECK-NEXT:    affine.store %[[V]], %arg0[4]
// CHECK-NEXT:    return %arg1, %[[V]]
func.func @trips(%m: memref<16xindex>, %x: index, %n: index) -> (index, index) {
  %r = affine.for %i = 3 to 3 iter_args(%s = %x) -> (index) {
    affine.store %s, %m[%i] : memref<16xindex>
    affine.yield %i : index
  }
  %q = affine.for %i = 3 to 5 step 2 iter_args(%s = %x) -> (index) {
    %v = affine.load %m[%i] : memref<16xindex>
    affine.store %v, %m[%i + 1] : memref<16xindex>
    affine.yield %v : index
  }
  affine.for %i = 0 to %n {
  }
  return %r, %q : index, index
}

// -----

// affine.if: unused operand dropped, constant propagated, a dim promoted (MLIR's
// canonicalize_affine_if); decided conditions replaced by their branch; empty ifs erased.
// CHECK-DAG:   #[[$SET:.*]] = affine_set<(d0, d1)[s0] : (d0 >= 0, -d0 + 1022 >= 0, d1 >= 0, -d1 + s0 - 2 >= 0)>
// CHECK-LABEL: func.func @ifs
// CHECK:         affine.if #[[$SET]](%{{.*}}, %{{.*}})[%arg2] {
// CHECK:         affine.store %arg2, %arg0[1]
// CHECK-NOT:     affine.if
// CHECK:         return
func.func @ifs(%m: memref<16xindex>, %M: index, %N: index) {
  %c1022 = arith.constant 1022 : index
  affine.for %i = 0 to 1024 {
    affine.for %j = 0 to %N {
      affine.if affine_set<(d0, d1, d2, d3)[s0] : (d1 >= 0, d0 - d1 >= 0, d2 >= 0, d3 - d2 - 2 >= 0)>(%c1022, %i, %j, %N)[%M] {
        affine.store %i, %m[0] : memref<16xindex>
      }
    }
  }
  affine.if affine_set<(d0) : (d0 - 2000 >= 0)>(%c1022) {
    affine.store %N, %m[0] : memref<16xindex>
  } else {
    affine.store %N, %m[1] : memref<16xindex>
  }
  affine.if affine_set<()[s0] : (s0 >= 0)>()[%M] {
  }
  return
}

// -----

// A min whose operand is a min used as a result on its own takes that min's results
// (appended); one used inside an expression stays an operand.
// CHECK-DAG:   #[[$MERGED:.*]] = affine_map<()[s0, s1, s2] -> (s0 - 1, s1 * 2, s2 + 3, s2 * 4)>
// CHECK-LABEL: func.func @merge_min
// CHECK:         %[[IN:.*]] = affine.min #{{.*}}()[%arg0]
// CHECK-NEXT:    %[[OUT:.*]] = affine.min #[[$MERGED]]()[%[[IN]], %arg1, %arg0]
// CHECK-NEXT:    %[[MAX:.*]] = affine.max #{{.*}}()[%arg0, %arg1]
// CHECK-NEXT:    return %[[OUT]], %[[MAX]]
func.func @merge_min(%a: index, %b: index) -> (index, index) {
  %0 = affine.min affine_map<()[s0] -> (s0 + 3, s0 * 4)>()[%a]
  %1 = affine.min affine_map<()[s0, s1, s2] -> (s0, s1 - 1, s2 * 2)>()[%0, %0, %b]
  %2 = affine.max affine_map<()[s0] -> (s0 + 3, s0 * 4)>()[%a]
  %3 = affine.max affine_map<(d0)[s0] -> (s0, d0 + 5)>(%b)[%2]
  return %1, %3 : index, index
}

// -----

// affine.parallel bounds: constants folded in, an apply composed.
// CHECK-LABEL: func.func @parallel_bounds
// CHECK:         affine.parallel (%[[I:.*]]) = (0) to (6) {
// CHECK-NEXT:      affine.parallel (%{{.*}}) = (%[[I]] * 2) to (%[[I]] * 2 + 2) {
func.func @parallel_bounds(%m: memref<16xindex>) {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  affine.parallel (%i) = (%c0) to (%c0 + %c6) {
    %lo = affine.apply affine_map<(d0) -> (d0 * 2)>(%i)
    affine.parallel (%j) = (%lo) to (%lo + 2) {
      affine.store %j, %m[%j] : memref<16xindex>
    }
  }
  return
}
