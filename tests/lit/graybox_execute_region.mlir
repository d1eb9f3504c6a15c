// RUN: egraft-opt %s -split-input-file -allow-unregistered-dialect | filecheck %s
// RUN: egraft-opt %s -split-input-file -allow-unregistered-dialect -affine-graybox-eliminate \
// RUN:   | filecheck %s --check-prefix=ELIM

// `affine.execute_region`, the graybox's later name in mlirx (same syntax), reads as an alias
// of `affine.graybox` (printed under its name here).

// CHECK-LABEL: func.func @with_result
// CHECK: %{{.*}} = affine.graybox [%[[RI:.*]], %[[RM:.*]]] = (%{{.*}}, %{{.*}}) : (memref<64xi32>, memref<256xf32>) -> f32 {
// CHECK: affine.load %[[RI]]
// CHECK: affine.load %[[RM]]
// CHECK: return %{{.*}} : f32
// ELIM-LABEL: func.func @with_result
// ELIM: affine.graybox
func @with_result(%I: memref<64xi32>, %M: memref<256xf32>) {
  affine.for %i = 0 to 64 {
    %r = affine.execute_region [%rI, %rM] = (%I, %M) : (memref<64xi32>, memref<256xf32>) -> f32 {
      %x = affine.load %rI[%i] : memref<64xi32>
      %j = index_cast %x : i32 to index
      %v = affine.load %rM[%j] : memref<256xf32>
      return %v : f32
    }
    "test.sink"(%r) : (f32) -> ()
  }
  return
}

// -----

// CHECK-LABEL: func.func @top_level
// CHECK: affine.graybox [%[[R:.*]]] = (%{{.*}}) : (memref<16xf32>) -> () {
// ELIM-LABEL: func.func @top_level
// ELIM-NOT: affine.graybox
// ELIM: affine.load %{{.*}}[symbol(%{{.*}}) + 2]
func @top_level(%A: memref<16xf32>, %p: index) {
  affine.execute_region [%rA] = (%A) : (memref<16xf32>) -> () {
    %v = affine.load %rA[symbol(%p) + 2] : memref<16xf32>
    "test.sink"(%v) : (f32) -> ()
    return
  }
  return
}
