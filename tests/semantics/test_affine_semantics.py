"""The interpreter's `affine.parallel`, `affine.delinearize_index` and vector loads/stores."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir.semantics import MemRef, Undefined, execute
from egraft.ir.syntax.parser import parse
from egraft.ir.verifier import verify

REDUCE = """func.func @f(%m: memref<{rows}x{cols}xi32>, %x: memref<{rows}x{cols}xf32>) -> (i32, i32, i32, f32) {{
  %r:4 = affine.parallel (%i, %j) = (0, {lo}) to ({rows}, {cols}) step (1, {step})
      reduce ("addi", "maxs", "minu", "maximumf") -> (i32, i32, i32, f32) {{
    %v = affine.load %m[%i, %j] : memref<{rows}x{cols}xi32>
    %f = affine.load %x[%i, %j] : memref<{rows}x{cols}xf32>
    affine.yield %v, %v, %v, %f : i32, i32, i32, f32
  }}
  return %r#0, %r#1, %r#2, %r#3 : i32, i32, i32, f32
}}"""


def _run(text: str, inputs: list) -> list:
    module = parse(text)
    verify(module)
    return execute(module, inputs).results


@settings(max_examples=40, deadline=None, database=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 5), st.integers(1, 2), st.data())
def test_parallel_reductions_match_numpy(rows: int, cols: int, lo: int, step: int, data) -> None:
    ints = np.array(data.draw(st.lists(st.integers(-2**31, 2**31 - 1), min_size=rows * cols,
                                       max_size=rows * cols)), np.int32).reshape(rows, cols)
    floats = np.array(data.draw(st.lists(st.floats(-1e6, 1e6, width=32), min_size=rows * cols,
                                         max_size=rows * cols)), np.float32).reshape(rows, cols)
    add, maxs, minu, maxf = _run(REDUCE.format(rows=rows, cols=cols, lo=lo, step=step),
                                 [MemRef(ints), MemRef(floats)])
    window, fwindow = ints[:, lo::step], floats[:, lo::step]
    assert int(add) == int(np.sum(window, dtype=np.int64).astype(np.int32)) if window.size else int(add) == 0
    if window.size:
        assert int(maxs) == int(window.max())
        assert int(minu) == int(window.view(np.uint32).min().view(np.int32))
        assert float(maxf) == float(fwindow.max())
    else:  # the identities
        assert (int(maxs), int(minu), float(maxf)) == (-2**31, -1, float("-inf"))


def test_assign_over_zero_iterations_is_undefined() -> None:
    text = """func.func @f(%x: i32) -> i32 {
      %r = affine.parallel (%i) = (3) to (1) reduce ("assign") -> (i32) {
        affine.yield %x : i32
      }
      return %r : i32
    }"""
    with pytest.raises(Undefined, match="assign"):
        _run(text, [np.int32(1)])
    assert int(_run(text.replace("(3) to (1)", "(0) to (2)"), [np.int32(7)])[0]) == 7


@settings(max_examples=40, deadline=None, database=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_delinearize_is_unravel_index(basis: list[int], data) -> None:
    total = int(np.prod(basis))
    index = data.draw(st.integers(-2, total + 1))
    params = ", ".join(f"%b{k}: index" for k in range(len(basis)))
    indices = ", ".join(["index"] * len(basis))
    text = f"""func.func @f(%i: index, {params}) -> ({indices}) {{
      %r:{len(basis)} = affine.delinearize_index %i into ({", ".join(f"%b{k}" for k in range(len(basis)))}) : {indices}
      return {", ".join(f"%r#{k}" for k in range(len(basis)))} : {indices}
    }}"""
    inputs = [np.int64(index), *(np.int64(b) for b in basis)]
    if not 0 <= index < total:
        with pytest.raises(Undefined, match="outside"):
            _run(text, inputs)
        return
    assert [int(v) for v in _run(text, inputs)] == [int(v) for v in np.unravel_index(index, basis)]


def test_vector_load_and_store_move_trailing_blocks() -> None:
    text = """func.func @f(%m: memref<3x4xf32>) -> vector<2xf32> {
      %w = affine.vector_load %m[1, 2] : memref<3x4xf32>, vector<2xf32>
      affine.vector_store %w, %m[2, 0] : memref<3x4xf32>, vector<2xf32>
      return %w : vector<2xf32>
    }"""
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    module = parse(text)
    out = execute(module, [MemRef(base)])
    assert list(out.results[0]) == [6.0, 7.0]
    assert list(out.memory[0].data[2, :2]) == [6.0, 7.0]
    with pytest.raises(Undefined, match="out of bounds"):
        _run(text.replace("%m[1, 2]", "%m[1, 3]"), [MemRef(base)])
