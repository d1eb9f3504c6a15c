// RUN: egraft-opt %s | filecheck %s
// RUN: egraft-opt %s -mlir-print-op-generic | egraft-opt | filecheck %s
// RUN: egraft-opt %s -canonicalize | filecheck %s --check-prefix=FOLD

// What MLIR accepts at the edges of the literal checks, printed as MLIR prints
// it: signless values in two's complement, i1 as true/false, i0 and leading
// zeros in widths, and a function type in attribute position (also the
// function_type of a zero-argument function, read back from the generic form).

// CHECK-LABEL: func.func @edges() -> (i8, i8, i8, i1)
// CHECK: arith.constant -1 : i8
// CHECK: arith.constant -128 : i8
// CHECK: arith.constant -1 : i8
// CHECK: arith.constant true
func.func @edges() -> (i8, i8, i8, i1) {
  %a = arith.constant 255 : i8
  %b = arith.constant -128 : i8
  %c = arith.constant 0xFF : i8
  %d = arith.constant -1 : i1
  return %a, %b, %c, %d : i8, i8, i8, i1
}

// 255 + 1 wraps to 0 in eight bits.
// FOLD-LABEL: func.func @wrap() -> i8
// FOLD: %[[C:.*]] = arith.constant 0 : i8
// FOLD: return %[[C]]
func.func @wrap() -> i8 {
  %a = arith.constant 255 : i8
  %b = arith.constant 1 : i8
  %s = arith.addi %a, %b : i8
  return %s : i8
}

// CHECK-LABEL: func.func private @types()
// CHECK-SAME: a = i0, b = i7, c = i16777215, d = ui8, e = tensor<9223372036854775807xf32>
// CHECK-SAME: f = () -> (), g = () -> i32, h = (i32) -> (() -> i32)
// CHECK-SAME: i = 255 : ui8, j = -9223372036854775808 : i64
func.func private @types() attributes {a = i0, b = i007, c = i16777215, d = ui8, e = tensor<9223372036854775807xf32>,
                                       f = () -> (), g = () -> i32, h = (i32) -> (() -> i32),
                                       i = 255 : ui8, j = 9223372036854775808}

// CHECK-LABEL: func.func private @zero_args() -> i32
func.func private @zero_args() -> i32

// CHECK-LABEL: func.func private @bits()
// CHECK-SAME: a = dense<"0x0300"> : tensor<9xi1>, b = dense<true> : tensor<20xi1>
func.func private @bits() attributes {a = dense<"0x0300"> : tensor<9xi1>, b = dense<"0xFF"> : tensor<20xi1>}
