// RUN: egraft-opt %s --inline=keep-wrappers | filecheck %s
// RUN: egraft-opt %s --inline | filecheck %s --check-prefix=ELIM

// The inliner (`inline`): at the top level of a function the callee's body is spliced in
// place; inside affine code it is wrapped in an affine.graybox (the graybox RFC), whose
// operands are the call's memrefs, deduplicated, and whose region arguments replace the
// callee's memref parameters; other parameters are substituted.  Private callees left
// without uses are erased; recursion is refused.  Without `keep-wrappers`, graybox
// elimination then removes each wrapper whose body is affine-valid where it stands
// (ELIM lines).

// CHECK-NOT: func.func private @scale_at
// CHECK-NOT: func.func private @add_one
func.func private @scale_at(%A: memref<16xf32>, %i: index, %f: f32) {
  %v = affine.load %A[%i] : memref<16xf32>
  %w = arith.mulf %v, %f : f32
  affine.store %w, %A[%i] : memref<16xf32>
  return
}

func.func private @add_one(%x: f32) -> f32 {
  %c = arith.constant 1.0 : f32
  %y = arith.addf %x, %c : f32
  return %y : f32
}

// Inside an affine loop: wrapped.  %i is a loop IV, a symbol of the graybox's scope.
// CHECK-LABEL: func.func @in_loop
// CHECK-SAME: (%[[A:.*]]: memref<16xf32>, %[[F:.*]]: f32)
// CHECK: affine.for %[[I:.*]] = 0 to 16 {
// CHECK-NEXT: affine.graybox [%[[R:.*]]] = (%[[A]]) : (memref<16xf32>) -> () {
// CHECK-NEXT: %[[V:.*]] = affine.load %[[R]][%[[I]]] : memref<16xf32>
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[V]], %[[F]] : f32
// CHECK-NEXT: affine.store %[[W]], %[[R]][%[[I]]] : memref<16xf32>
// CHECK-NEXT: return
// CHECK-NOT: call
// ELIM-LABEL: func.func @in_loop
// ELIM-SAME: (%[[A:.*]]: memref<16xf32>, %[[F:.*]]: f32)
// ELIM: affine.for %[[I:.*]] = 0 to 16 {
// ELIM-NEXT: %[[V:.*]] = affine.load %[[A]][%[[I]]] : memref<16xf32>
// ELIM-NEXT: %[[W:.*]] = arith.mulf %[[V]], %[[F]] : f32
// ELIM-NEXT: affine.store %[[W]], %[[A]][%[[I]]] : memref<16xf32>
// ELIM-NEXT: }
func.func @in_loop(%A: memref<16xf32>, %f: f32) {
  affine.for %i = 0 to 16 {
    func.call @scale_at(%A, %i, %f) : (memref<16xf32>, index, f32) -> ()
  }
  return
}

// At the top level: spliced, no graybox.
// CHECK-LABEL: func.func @at_top
// CHECK-NOT: affine.graybox
// CHECK: %[[V:.*]] = affine.load %{{.*}}[%{{.*}}] : memref<16xf32>
// CHECK: %[[C:.*]] = arith.constant 1.0
// CHECK: %[[Y:.*]] = arith.addf %[[V]], %[[C]] : f32
// CHECK: return %[[Y]] : f32
func.func @at_top(%A: memref<16xf32>, %n: index) -> f32 {
  %v = affine.load %A[%n] : memref<16xf32>
  %y = func.call @add_one(%v) : (f32) -> f32
  return %y : f32
}

// A memref passed twice is captured once.
// CHECK-LABEL: func.func @copy_twice
// CHECK: affine.graybox [%[[R:.*]]] = (%{{.*}}) : (memref<8xf32>) -> () {
// CHECK: affine.load %[[R]]
// CHECK: affine.store %{{.*}}, %[[R]]
// ELIM-LABEL: func.func @copy_twice
// ELIM-NOT: affine.graybox
// ELIM: return
func.func private @copy(%S: memref<8xf32>, %D: memref<8xf32>, %k: index) {
  %v = affine.load %S[%k] : memref<8xf32>
  affine.store %v, %D[%k + 1] : memref<8xf32>
  return
}
func.func @copy_twice(%M: memref<8xf32>) {
  affine.for %k = 0 to 7 {
    func.call @copy(%M, %M, %k) : (memref<8xf32>, memref<8xf32>, index) -> ()
  }
  return
}

// A multi-block callee inside affine code: the graybox holds its CFG.
// CHECK-LABEL: func.func @cfg_in_loop
// CHECK: affine.for
// CHECK: %{{.*}} = affine.graybox [] = () : () -> f32 {
// CHECK: cf.cond_br
// CHECK: return
// CHECK: return
// ELIM-LABEL: func.func @cfg_in_loop
// ELIM: affine.graybox
func.func private @relu(%x: f32) -> f32 {
  %z = arith.constant 0.0 : f32
  %p = arith.cmpf olt, %x, %z : f32
  cf.cond_br %p, ^neg, ^pos
^neg:
  return %z : f32
^pos:
  return %x : f32
}
func.func @cfg_in_loop(%A: memref<4xf32>) {
  affine.for %i = 0 to 4 {
    %v = affine.load %A[%i] : memref<4xf32>
    %r = func.call @relu(%v) : (f32) -> f32
    affine.store %r, %A[%i] : memref<4xf32>
  }
  return
}

// The same callee at the top level: the caller's block is split around it.
// CHECK-LABEL: func.func @cfg_at_top
// CHECK: cf.br ^[[ENTRY:bb[0-9]+]]
// CHECK: ^[[ENTRY]]:
// CHECK: cf.cond_br
// CHECK: cf.br ^[[CONT:bb[0-9]+]](%{{.*}} : f32)
// CHECK: cf.br ^[[CONT]](%{{.*}} : f32)
// CHECK: ^[[CONT]](%[[R:.*]]: f32):
// CHECK-NEXT: return %[[R]] : f32
func.func @cfg_at_top(%x: f32) -> f32 {
  %r = func.call @relu(%x) : (f32) -> f32
  return %r : f32
}

// Recursion is refused: the call inside the recursive function stays, and so does the
// function; a call from outside its call-graph SCC is inlined once (as MLIR does), the
// copied recursive call is not inlined again.
// CHECK-LABEL: func.func private @countdown
// CHECK: call @countdown
// CHECK-LABEL: func.func @uses_countdown
// CHECK: cf.cond_br
// CHECK: call @countdown
// CHECK-NOT: call
func.func private @countdown(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  cf.cond_br %done, ^end, ^again
^end:
  return %c0 : index
^again:
  %m = arith.subi %n, %c1 : index
  %r = func.call @countdown(%m) : (index) -> index
  return %r : index
}
func.func @uses_countdown(%n: index) -> index {
  %r = func.call @countdown(%n) : (index) -> index
  return %r : index
}

// A callee whose parameter is a subscript, called with an index loaded in the loop (the
// RFC's third example, A[B[i]]++): the loaded index is a symbol only inside a graybox, so
// the wrapper stays after elimination.
// CHECK-LABEL: func.func @indirect
// ELIM-LABEL: func.func @indirect
// ELIM: affine.for %[[I:.*]] = 0 to 100 {
// ELIM: %[[V:.*]] = affine.load %{{.*}}[%[[I]]] : memref<100xi32>
// ELIM: %[[X:.*]] = arith.index_cast %[[V]] : i32 to index
// ELIM: affine.graybox [%[[R:.*]]] = (%{{.*}}) : (memref<100xf32>) -> () {
// ELIM: affine.load %[[R]][%[[X]]] : memref<100xf32>
// ELIM: affine.store %{{.*}}, %[[R]][%[[X]]] : memref<100xf32>
func.func private @increment(%A: memref<100xf32>, %x: index) {
  %cf1 = arith.constant 1.0 : f32
  %s = affine.load %A[%x] : memref<100xf32>
  %o = arith.addf %s, %cf1 : f32
  affine.store %o, %A[%x] : memref<100xf32>
  return
}
func.func @indirect(%A: memref<100xf32>, %B: memref<100xi32>) {
  affine.for %i = 0 to 100 {
    %v = affine.load %B[%i] : memref<100xi32>
    %x = arith.index_cast %v : i32 to index
    func.call @increment(%A, %x) : (memref<100xf32>, index) -> ()
  }
  return
}
