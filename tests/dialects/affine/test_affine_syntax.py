"""Affine expressions, ops, dim/symbol rules and affine.graybox."""

import textwrap

import pytest

from egraft.ir import DiagnosticError, parse, print_ir, verify
from egraft.ir.core.affine import Dim, Symbol
from egraft.ir.dialects.affine_dims import get_enclosing_affine_graybox, walk_affine


@pytest.mark.parametrize("expr, text", [
    (Dim(0) - Dim(1), "d0 - d1"), (4 + Dim(0), "d0 + 4"), (-(Dim(0) + 1), "-(d0 + 1)"),
    (Dim(1) - (Dim(0) + 1), "d1 - (d0 + 1)"), (Dim(1) + Dim(0) * -3, "d1 - d0 * 3"),
    ((-Dim(0)).floordiv(2), "(-d0) floordiv 2"), (Dim(0) - Dim(0).floordiv(4) * 4, "d0 mod 4"),
    (Symbol(0) * Dim(0), "d0 * s0"), ((Dim(0) * 128).floordiv(64), "d0 * 2"), ((Dim(0) * 128).mod(64), "0"),
    (Dim(0) + 2 + Dim(1), "d0 + d1 + 2"), (Dim(0) * 2 + Dim(0) * 3, "d0 * 5"),
])
def test_expressions_simplify_and_print_as_mlir(expr, text):
    assert str(expr) == text


SRC = """func @f(%A: memref<100xf32>, %n: index) {
  %c0 = constant 0 : index
  affine.for %k = 0 to %n step 2 {
    %v = affine.load %A[%k + 1] : memref<100xf32>
    affine.store %v, %A[%k * 2 + symbol(%n) - 1] : memref<100xf32>
  }
  affine.for %k = max affine_map<(d0)[s0] -> (d0, s0)>(%c0)[%n] to 10 {
  }
  %r = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%c0)
  affine.if affine_set<(d0) : (d0 - 10 >= 0)>(%c0) {
  } else {
    %w = affine.load %A[0] : memref<100xf32>
  }
  return
}
"""

PRINTED = """#map = affine_map<(d0)[s0] -> (d0, s0)>
#map1 = affine_map<(d0) -> (d0 floordiv 2)>
#set = affine_set<(d0) : (d0 - 10 >= 0)>
module {
  func.func @f(%arg0: memref<100xf32>, %arg1: index) {
    %c0 = arith.constant 0 : index
    affine.for %arg2 = 0 to %arg1 step 2 {
      %1 = affine.load %arg0[%arg2 + 1] : memref<100xf32>
      affine.store %1, %arg0[%arg2 * 2 + symbol(%arg1) - 1] : memref<100xf32>
    }
    affine.for %arg2 = max #map(%c0)[%arg1] to 10 {
    }
    %0 = affine.apply #map1(%c0)
    affine.if #set(%c0) {
    } else {
      %1 = affine.load %arg0[0] : memref<100xf32>
    }
    return
  }
}
"""


def test_round_trip_prints_current_syntax_with_aliases():
    m = parse(SRC)
    verify(m)
    assert print_ir(m) == PRINTED
    assert print_ir(parse(PRINTED)) == PRINTED


def test_iter_args_print_terminator_and_results():
    src = """func.func @s(%b: memref<10xf32>) -> f32 {
  %z = arith.constant 0.0 : f32
  %r = affine.for %i = 0 to 10 iter_args(%acc = %z) -> (f32) {
    %t = affine.load %b[%i] : memref<10xf32>
    %s = arith.addf %acc, %t : f32
    affine.yield %s : f32
  }
  return %r : f32
}"""
    out = print_ir(parse(src))
    assert "affine.for %arg1 = 0 to 10 iter_args(%arg2 = %cst) -> (f32) {" in out
    assert "affine.yield %2 : f32" in out


PARALLEL = """func.func @p(%arg0: index, %arg1: index, %arg2: memref<100x100xf32>) -> (f32, i32) {
  affine.parallel (%arg3, %arg4) = (0, 0) to (symbol(%arg0), 100) step (10, 10) {
    affine.parallel (%arg5, %arg6) = (%arg3, max(%arg4, %arg1)) to (%arg3 + 10, min(%arg4 + 10, 5)) {
    }
  }
  %0:2 = affine.parallel (%arg3, %arg4) = (0, 0) to (100, 100) reduce ("addf", "maxs") -> (f32, i32) {
    %1 = affine.load %arg2[%arg3, %arg4] : memref<100x100xf32>
    %c1_i32 = arith.constant 1 : i32
    affine.yield %1, %c1_i32 : f32, i32
  } {tag}
  return %0#0, %0#1 : f32, i32
}"""


def test_parallel_round_trips_with_groups_steps_and_reductions():
    m = parse(PARALLEL)
    verify(m)
    out = print_ir(m)
    assert out == "module {\n" + textwrap.indent(PARALLEL, "  ") + "\n}\n"
    assert print_ir(parse(out)) == out
    generic = print_ir(m, generic=True)
    assert "lowerBoundsGroups = dense<[1, 2]> : tensor<2xi32>" in generic
    assert "reductions = [0, 4], steps = [1, 1]" in generic


@pytest.mark.parametrize("src, message", [
    ('affine.parallel (%i) = (0) to (10) reduce ("addi") -> (f32) {\n  %z = arith.constant 0.0 : f32\n'
     '  affine.yield %z : f32\n}', "result type cannot match reduction attribute"),
    ("affine.parallel (%i) = (0, 0) to (10) {\n}", "the number of region arguments (1) and the number of map "
     "groups for lower (2) and upper bound (1), and the number of steps (1) must all match"),
])
def test_parallel_verifier(src, message):
    assert message in _error(f"func.func @f() {{\n{src}\nreturn\n}}")


def test_delinearize_index_round_trips():
    src = """func.func @d(%arg0: index, %arg1: index, %arg2: index) -> index {
  %0:2 = affine.delinearize_index %arg0 into (%arg1, %arg2) : index, index
  return %0#1 : index
}"""
    m = parse(src)
    verify(m)
    assert print_ir(m) == "module {\n" + textwrap.indent(src, "  ") + "\n}\n"


def _error(src: str) -> str:
    with pytest.raises(DiagnosticError) as e:
        verify(parse(src, allow_unregistered=True))
    return e.value.diagnostics[0].message


def test_loop_local_value_is_not_a_symbol():
    assert "operand cannot be used as a symbol" in _error("""func.func @f(%a: index) {
  affine.for %i = 0 to 7 {
    %x = arith.addi %a, %i : index
    affine.for %j = 0 to %x {
    }
  }
  return
}""")


GRAYBOX = """func @g(%I: memref<128xi32>, %M: memref<1024xf32>) {
  affine.for %i = 0 to 128 {
    %r = affine.graybox [%rI, %rM] = (%I, %M) : (memref<128xi32>, memref<1024xf32>) -> f32 {
      %idx = affine.load %rI[%i] : memref<128xi32>
      %index = index_cast %idx : i32 to index
      %v = affine.load %rM[%index] : memref<1024xf32>
      return %v : f32
    }
  }
  return
}"""


def test_graybox_makes_inner_values_symbols_and_prints_back():
    m = parse(GRAYBOX)
    verify(m)
    out = print_ir(m)
    assert "%0 = affine.graybox [%arg3, %arg4] = (%arg0, %arg1) : (memref<128xi32>, memref<1024xf32>) -> f32 {" in out
    assert "        return %3 : f32" in out
    verify(parse(out))


def test_graybox_rules_and_walker():
    m = parse(GRAYBOX)
    loop = next(op for op in m.walk() if op.name == "affine.for")
    box = next(op for op in m.walk() if op.name == "affine.graybox")
    inner = box.regions[0].blocks[0].first
    assert get_enclosing_affine_graybox(inner) is box
    assert get_enclosing_affine_graybox(box) is None
    seen = [op.name for op in walk_affine(loop)]
    assert "affine.graybox" in seen and "affine.load" not in seen


def test_graybox_must_capture_memrefs():
    assert "incoming memref not explicitly captured" in _error("""func @m(%A: memref<2xi32>) {
  affine.for %i = 0 to 10 {
    affine.graybox [] = () : () -> () {
      %v = affine.load %A[%i] : memref<2xi32>
      return
    }
  }
  return
}""")


def test_graybox_symbol_outside_is_not_a_symbol():
    assert "index must be a dimension or symbol identifier" in _error("""func @s(%A: memref<100xf32>, %B: memref<100xi32>) {
  affine.for %i = 0 to 100 {
    %v = affine.load %B[%i] : memref<100xi32>
    %vi = index_cast %v : i32 to index
    %s = affine.load %A[%vi] : memref<100xf32>
  }
  return
}""")


@pytest.mark.parametrize("old, new", [
    ("memref<?x?xf32, offset: ?, strides: [?, 1]>", "memref<?x?xf32, strided<[?, 1], offset: ?>>"),
    ("memref<4xf32, offset : 0, strides : [1], 3>", "memref<4xf32, strided<[1]>, 3>"),
])
def test_2020_memref_layout_reads_as_strided(old, new):
    m = parse(f"func.func @f(%a: {old}) {{\n  return\n}}")
    assert f"%arg0: {new})" in print_ir(m)
