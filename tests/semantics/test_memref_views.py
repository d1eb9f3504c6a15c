"""The interpreter's memory model: views alias their source, frees and scopes end lifetimes.

`memref.subview`, `memref.reinterpret_cast`, `memref.view` and `memref.cast` are views of one
allocation, so a store through one is seen through every other; `dealloc` through any alias
frees them all; an `alloca` made in an `affine.for` iteration dies with the iteration.
The subview property checks the interpreter's strided arithmetic against numpy's slicing.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir.semantics import MemRef, Undefined, execute
from egraft.ir.syntax.parser import parse
from egraft.ir.verifier import verify


def _run(text: str, inputs: list) -> tuple[list, list]:
    module = parse(text)
    verify(module)
    out = execute(module, inputs)
    return out.results, out.memory


def test_subview_and_reinterpret_cast_alias_their_source() -> None:
    text = """func.func @f(%m: memref<4x6xi32>, %v: i32, %w: i32) -> (i32, i32, i32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %s = memref.subview %m[1, 2] [2, 2] [1, 2] : memref<4x6xi32> to memref<2x2xi32, strided<[6, 2], offset: 8>>
      memref.store %v, %s[%c1, %c1] : memref<2x2xi32, strided<[6, 2], offset: 8>>
      %a = memref.load %m[%c2, %c1] : memref<4x6xi32>
      %r = memref.reinterpret_cast %m to offset: [3], sizes: [5], strides: [1]
          : memref<4x6xi32> to memref<5xi32, strided<[1], offset: 3>>
      memref.store %w, %r[%c2] : memref<5xi32, strided<[1], offset: 3>>
      %b = memref.load %s[%c0, %c1] : memref<2x2xi32, strided<[6, 2], offset: 8>>
      %row = memref.subview %m[2, 0] [1, 6] [1, 1] : memref<4x6xi32> to memref<6xi32, strided<[1], offset: 12>>
      %c = memref.load %row[%c1] : memref<6xi32, strided<[1], offset: 12>>
      return %a, %b, %c : i32, i32, i32
    }"""
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    (a, b, c), (m,) = _run(text, [MemRef(base), np.int32(100), np.int32(200)])
    expected = base.copy()
    expected[2, 4] = 100  # subview [1,1] = m[1 + 1, 2 + 1 * 2]
    expected[0, 5] = 200  # reinterpret_cast element 2 = flat 3 + 2
    assert (m.data == expected).all()
    assert (int(a), int(b), int(c)) == (13, 10, 13)  # b = subview [0, 1] = m[1, 4]


def test_view_reinterprets_bytes_and_needs_every_byte_written() -> None:
    text = """func.func @f(%v: f32) -> (i8, f32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %buf = memref.alloc() : memref<12xi8>
      %f = memref.view %buf[%c4][] : memref<12xi8> to memref<2xf32>
      memref.store %v, %f[%c0] : memref<2xf32>
      %byte = memref.load %buf[%c4] : memref<12xi8>
      %back = memref.load %f[%c0] : memref<2xf32>
      return %byte, %back : i8, f32
    }"""
    (byte, back), _ = _run(text, [np.float32(1.0)])
    assert float(back) == 1.0
    assert int(byte) == int(np.frombuffer(np.float32(1.0).tobytes()[:1], np.int8)[0])
    unwritten = text.replace("%back = memref.load %f[%c0]", "%back = memref.load %f[%c1]")
    with pytest.raises(Undefined, match="uninitialized"):
        _run(unwritten, [np.float32(1.0)])


def test_views_outside_their_allocation_are_undefined() -> None:
    subview = """func.func @f(%m: memref<4xi32>) {
      %s = memref.subview %m[2] [3] [1] : memref<4xi32> to memref<3xi32, strided<[1], offset: 2>>
      return
    }"""
    with pytest.raises(Undefined, match="outside"):
        _run(subview, [MemRef(np.zeros(4, np.int32))])
    reinterpret = """func.func @f(%m: memref<4xi32>) {
      %r = memref.reinterpret_cast %m to offset: [1], sizes: [2], strides: [2]
          : memref<4xi32> to memref<2xi32, strided<[2], offset: 1>>
      return
    }"""
    _run(reinterpret, [MemRef(np.zeros(4, np.int32))])  # elements 1 and 3: inside
    with pytest.raises(Undefined, match="exceeds"):
        _run(reinterpret.replace("offset: [1]", "offset: [2]").replace("offset: 1>", "offset: 2>"),
             [MemRef(np.zeros(4, np.int32))])


def test_dealloc_through_an_alias_frees_every_view() -> None:
    text = """func.func @f(%v: i32) -> i32 {
      %c0 = arith.constant 0 : index
      %a = memref.alloc() : memref<4xi32>
      %c = memref.cast %a : memref<4xi32> to memref<?xi32>
      %s = memref.subview %a[1] [2] [1] : memref<4xi32> to memref<2xi32, strided<[1], offset: 1>>
      memref.store %v, %s[%c0] : memref<2xi32, strided<[1], offset: 1>>
      memref.dealloc %c : memref<?xi32>
      %x = memref.load %s[%c0] : memref<2xi32, strided<[1], offset: 1>>
      return %x : i32
    }"""
    with pytest.raises(Undefined, match="deallocated"):
        _run(text, [np.int32(5)])
    (x,), _ = _run(text.replace("memref.dealloc %c : memref<?xi32>\n", ""), [np.int32(5)])
    assert int(x) == 5


def test_an_alloca_dies_with_its_loop_iteration() -> None:
    text = """func.func @f(%v: i32, %init: memref<1xi32>) -> i32 {
      %c0 = arith.constant 0 : index
      %r = affine.for %i = 0 to 2 iter_args(%m = %init) -> (memref<1xi32>) {
        %a = memref.alloca() : memref<1xi32>
        affine.store %v, %a[0] : memref<1xi32>
        affine.yield %a : memref<1xi32>
      }
      %x = memref.load %r[%c0] : memref<1xi32>
      return %x : i32
    }"""
    with pytest.raises(Undefined, match="deallocated"):
        _run(text, [np.int32(3), MemRef(np.zeros(1, np.int32))])
    (x,), _ = _run(text.replace("memref.alloca()", "memref.alloc()"), [np.int32(3), MemRef(np.zeros(1, np.int32))])
    assert int(x) == 3


@st.composite
def _subviews(draw):
    """A 2-D base, an in-bounds strided window of it, and one element of the window."""
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 6))
    spec = []
    for extent in (rows, cols):
        stride = draw(st.integers(1, 3))
        offset = draw(st.integers(0, extent - 1))
        size = draw(st.integers(1, (extent - 1 - offset) // stride + 1))
        spec.append((offset, size, stride))
    at = tuple(draw(st.integers(0, size - 1)) for _, size, _ in spec)
    return (rows, cols), spec, at


@settings(max_examples=60, deadline=None, database=None)
@given(_subviews(), st.integers(-1000, 1000))
def test_subview_matches_numpy_slicing(case, value: int) -> None:
    """Reading and writing element `at` of a subview is numpy's `base[o0::s0][i0, ...]`."""
    (rows, cols), spec, at = case
    (o0, n0, s0), (o1, n1, s1) = spec
    layout = f"strided<[{cols * s0}, {s1}], offset: {o0 * cols + o1}>"
    sv_type = f"memref<{n0}x{n1}xi32, {layout}>"
    text = f"""func.func @f(%m: memref<{rows}x{cols}xi32>, %v: i32) -> i32 {{
      %i = arith.constant {at[0]} : index
      %j = arith.constant {at[1]} : index
      %s = memref.subview %m[{o0}, {o1}] [{n0}, {n1}] [{s0}, {s1}] : memref<{rows}x{cols}xi32> to {sv_type}
      %old = memref.load %s[%i, %j] : {sv_type}
      memref.store %v, %s[%i, %j] : {sv_type}
      return %old : i32
    }}"""
    base = np.arange(rows * cols, dtype=np.int32).reshape(rows, cols)
    (old,), (m,) = _run(text, [MemRef(base), np.int32(value)])
    window = base[o0::s0, o1::s1][:n0, :n1]
    assert int(old) == int(window[at])
    expected = base.copy()
    expected[o0::s0, o1::s1][at] = value
    assert (m.data == expected).all()


def test_2019_view_and_subview_alias_the_byte_buffer() -> None:
    """2019's `view` (offset in elements of the result) and `subview` (one value per dimension),
    their layouts affine maps with symbols, and a static `offset: 0, strides: [4, 1]` view of
    the same bytes: a store through the first is read through the other two."""
    text = """func @f(%buf: memref<64xi8>, %v: f32) -> (f32, f32) {
      %c0 = constant 0 : index
      %c1 = constant 1 : index
      %c2 = constant 2 : index
      %c3 = constant 3 : index
      %1 = view %buf[%c1][%c3] : memref<64xi8> to memref<?x4xf32, (d0, d1)[s0] -> (d0 * 4 + d1 + s0)>
      store %v, %1[%c1, %c2] : memref<?x4xf32, (d0, d1)[s0] -> (d0 * 4 + d1 + s0)>
      %2 = subview %1[%c1, %c0][%c2, %c2][%c1, %c2] : memref<?x4xf32, (d0, d1)[s0] -> (d0 * 4 + d1 + s0)>
          to memref<?x?xf32, (d0, d1)[s0, s1, s2] -> (d0 * s1 + d1 * s2 + s0)>
      %x = load %2[%c0, %c1] : memref<?x?xf32, (d0, d1)[s0, s1, s2] -> (d0 * s1 + d1 * s2 + s0)>
      %3 = view %buf[][] : memref<64xi8> to memref<4x4xf32, offset: 0, strides: [4, 1]>
      %y = load %3[%c1, %c3] : memref<4x4xf32, offset: 0, strides: [4, 1]>
      return %x, %y : f32, f32
    }"""
    (x, y), (buf,) = _run(text, [MemRef(np.zeros(64, np.int8)), np.float32(2.5)])
    assert float(x) == float(y) == 2.5  # element 1 + 1 * 4 + 2 = 7 of the f32 view, bytes 28..31
    assert buf.data[28:32].tobytes() == np.float32(2.5).tobytes()
