// A small affine program to try the affine passes on (README):
//   egraft-opt examples/affine_loops.mlir -inline -affine-graybox-hoist -affine-scalrep -canonicalize
// @axpy is inlined into the loop (wrapped in an affine.graybox, which is then eliminated:
// %i is a valid dimension outside it too), the memref.casts fold into the accesses, the
// load of y[i] right after its store is forwarded, and the apply composes into the map.
func.func private @axpy(%x: memref<?xf32>, %y: memref<?xf32>, %a: f32, %i: index) {
  %xv = affine.load %x[%i] : memref<?xf32>
  %yv = affine.load %y[%i] : memref<?xf32>
  %p = arith.mulf %a, %xv : f32
  %s = arith.addf %p, %yv : f32
  affine.store %s, %y[%i] : memref<?xf32>
  return
}

func.func @main(%X: memref<64xf32>, %Y: memref<64xf32>, %Z: memref<64xf32>, %a: f32) {
  %x = memref.cast %X : memref<64xf32> to memref<?xf32>
  %y = memref.cast %Y : memref<64xf32> to memref<?xf32>
  affine.for %i = 0 to 32 {
    %j = affine.apply affine_map<(d0) -> (d0 * 2)>(%i)
    func.call @axpy(%x, %y, %a, %j) : (memref<?xf32>, memref<?xf32>, f32, index) -> ()
    %v = affine.load %y[%j] : memref<?xf32>
    %w = arith.mulf %v, %v : f32
    affine.store %w, %Z[%j] : memref<64xf32>
  }
  return
}
