// RUN: egraft-opt %s -split-input-file -verify-diagnostics

// Literals MLIR (as built into TensorFlow 2.21) rejects, with its wording and
// columns; each case was checked against tf.mlir.experimental.run_pass_pipeline.

func.func @i8_too_big() -> i8 {
  // expected-error@+1 {{integer constant out of range for attribute}}
  %0 = arith.constant 300 : i8
  return %0 : i8
}

// -----

func.func @i8_too_small() -> i8 {
  // expected-error@+1 {{integer constant out of range for attribute}}
  %0 = arith.constant -129 : i8
  return %0 : i8
}

// -----

func.func @i32_huge() -> i32 {
  // expected-error@+1 {{integer constant out of range for attribute}}
  %0 = arith.constant 99999999999999999999999 : i32
  return %0 : i32
}

// -----

func.func @negative_zero() -> i32 {
  // expected-error@+1 {{integer constant out of range for attribute}}
  %0 = arith.constant -0 : i32
  return %0 : i32
}

// -----

func.func @i1_two() -> i1 {
  // expected-error@+1 {{integer constant out of range for attribute}}
  %0 = arith.constant 2 : i1
  return %0 : i1
}

// -----

func.func @index_sign_bit() -> index {
  // expected-error@+1 {{integer constant out of range for attribute}}
  %0 = arith.constant 9223372036854775808 : index
  return %0 : index
}

// -----

// expected-error@+1 {{integer constant out of range for attribute}}
func.func private @signed() attributes {a = 128 : si8}

// -----

// expected-error@+1 {{negative integer literal not valid for unsigned integer type}}
func.func private @unsigned_negative() attributes {a = -1 : ui8}

// -----

// expected-error@+1 {{integer bitwidth is limited to 16777215 bits}}
func.func private @wide() attributes {a = i99999999}

// -----

// expected-error@+1 {{invalid dimension}}
func.func private @dim() attributes {a = tensor<99999999999999999999999xf32>}

// -----

// expected-error@+1 {{invalid tensor element type}}
func.func private @tensor_of_tensor() attributes {a = tensor<tensor<f32>>}

// -----

// expected-error@+1 {{invalid element type for complex}}
func.func private @complex_of_index() attributes {a = complex<index>}

// -----

// expected-error@+1 {{invalid memref element type}}
func.func private @memref_of_tuple() attributes {a = memref<2xtuple<f32>>}

// -----

// expected-error@+1 {{failed to verify 'elementType': VectorElementTypeInterface instance}}
func.func private @vector_of_tensor() attributes {a = vector<2xtensor<f32>>}

// -----

// expected-error@+1 {{vector types must have positive constant sizes but got 1, 0}}
func.func private @vector_zero() attributes {a = vector<1x0xf32>}

// -----

// expected-error@+1 {{elements hex data size is invalid for provided type: 'tensor<2xf32>'}}
func.func private @hex_size() attributes {a = dense<"0x0000"> : tensor<2xf32>}

// -----

// expected-error@+1 {{elements hex data size is invalid for provided type: 'tensor<16xi1>'}}
func.func private @hex_bits() attributes {a = dense<"0x01"> : tensor<16xi1>}

// -----

// expected-error@+1 {{expected string containing hex digits starting with `0x`}}
func.func private @hex_odd() attributes {a = dense<"0x000"> : tensor<1xi8>}

// -----

// expected-error@+1 {{elements literal type must have static shape}}
func.func private @hex_dynamic() attributes {a = dense<"0x0000"> : tensor<?xf32>}

// -----

// expected-error@+1 {{integer constant out of range for type}}
func.func private @dense_range() attributes {a = dense<[1, 300]> : tensor<2xi8>}

// -----

// expected-error@+1 {{expected unsigned integer elements, but parsed negative value}}
func.func private @dense_unsigned() attributes {a = dense<-1> : tensor<ui8>}

// -----

// expected-error@+1 {{integer constant out of range}}
func.func private @array_range() attributes {a = array<i8: 300>}
