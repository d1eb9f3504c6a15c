// RUN: egraft-opt %s -split-input-file -verify-diagnostics

func.func @f() -> i32 {
  // expected-error@+1 {{use of undeclared SSA value name}}
  return %nope : i32
}

// -----

func.func @g() -> i32 {
  return %nope : i32 // expected-error {{undeclared SSA value}}
}

// -----

// expected-error@below {{use of undeclared}}
func.func @h() -> i32 { return %nope : i32 }

// -----

func.func @i() -> i32 { return %nope : i32 }
// expected-error-re@above {{use of {{[a-z]+}} SSA value name}}

// -----

// func.return ends a function's or a graybox's blocks only (MLIR's HasParent); an
// affine.for body ends in affine.yield.
func.func @return_in_loop(%x0: i32) -> i32 {
  %s = affine.for %i = 1 to 3 iter_args(%a = %x0) -> (i32) {
    // expected-error@+1 {{'func.return' op expects parent op to be one of 'func.func', 'affine.graybox'}}
    return
  }
  return %x0 : i32
}
