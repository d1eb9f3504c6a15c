// RUN: egraft-opt %s -split-input-file -allow-unregistered-dialect -verify-diagnostics

// T10b of the graybox note (/work/shared/notes/graybox-semantics-and-encoding.md §3): a memref
// defined outside and not passed as an operand, what a scope-unaware elimination or a hoist that
// forgets a capture would produce, is invalid IR.
func @missing_capture(%A: memref<2xi32>) {
  affine.for %i = 0 to 10 {
    affine.graybox [] = () : () -> () {
    // expected-error@-1 {{incoming memref not explicitly captured}}
      %v = affine.load %A[%i] : memref<2xi32>
      "test.use"(%v) : (i32) -> ()
      return
    }
  }
  return
}
