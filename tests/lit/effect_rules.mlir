// Rules that rewrite effects, on the e-graph: the affine.load/affine.store compositions of
// memref-affine-canonical rebuild each access in its place on the effect chain (the
// affine-maps step, which composes too, is disabled so the rules alone act). Order of
// stores and loads is kept; the loads between the stores read what the stores wrote.

// RUN: egraft-opt %s -canonicalize="disable-patterns=affine-maps,affine-loops" | filecheck %s
// RUN: egraft-opt %s -canonicalize="driver=greedy disable-patterns=affine-maps,affine-loops" | filecheck %s

// CHECK-LABEL: func.func @compose_in_place
// CHECK-NEXT:    affine.store %arg2, %arg0[%arg1 + 1] : memref<8xf32>
// CHECK-NEXT:    %[[X:.*]] = affine.load %arg0[%arg1 + 1] : memref<8xf32>
// CHECK-NEXT:    affine.store %[[X]], %arg0[%arg1 * 2] : memref<8xf32>
// CHECK-NEXT:    %[[Y:.*]] = affine.load %arg0[%arg1 * 2] : memref<8xf32>
// CHECK-NEXT:    return %[[X]], %[[Y]]
func.func @compose_in_place(%m: memref<8xf32>, %i: index, %v: f32) -> (f32, f32) {
  %a = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
  %b = affine.apply affine_map<(d0) -> (d0 * 2)>(%i)
  affine.store %v, %m[%a] : memref<8xf32>
  %x = affine.load %m[%a] : memref<8xf32>
  affine.store %x, %m[%b] : memref<8xf32>
  %y = affine.load %m[%b] : memref<8xf32>
  return %x, %y : f32, f32
}

// A store whose index is not an apply stays as it is, and so does its order with the
// composed ones around it.
// CHECK-LABEL: func.func @untouched_between
// CHECK-NEXT:    affine.store %arg2, %arg0[%arg1 + 3] : memref<8xf32>
// CHECK-NEXT:    affine.store %arg2, %arg0[%arg1] : memref<8xf32>
// CHECK-NEXT:    %[[Z:.*]] = affine.load %arg0[%arg1 + 3] : memref<8xf32>
// CHECK-NEXT:    return %[[Z]]
func.func @untouched_between(%m: memref<8xf32>, %i: index, %v: f32) -> f32 {
  %a = affine.apply affine_map<(d0) -> (d0 + 3)>(%i)
  affine.store %v, %m[%a] : memref<8xf32>
  affine.store %v, %m[%i] : memref<8xf32>
  %z = affine.load %m[%a] : memref<8xf32>
  return %z : f32
}
