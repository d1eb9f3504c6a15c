"""affine.dma_start / affine.dma_wait: MLIR's forms, verifier and (interpreter) semantics."""

import io
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import parse, print_ir, verify
from egraft.ir.semantics import dialects  # noqa: F401  (registers the evaluators)
from egraft.ir.semantics.interpreter import execute
from egraft.ir.semantics.values import MemRef, Undefined
from egraft.passes.cli.main import main as egraft_opt


def run_opt(text: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = egraft_opt(["-"], stdin=lambda: textwrap.dedent(text).encode(), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


ROUND_TRIP = """\
func.func @f(%A: memref<256xf32>, %B: memref<4x32xf32, 1>, %n: index, %tag: memref<2xi32>) {
  %c0 = arith.constant 0 : index
  affine.for %i = 0 to 8 {
    affine.dma_start %A[%i * 32 + symbol(%n)], %B[%i floordiv 2, 0], %tag[%c0], %n, %c0, %n : memref<256xf32>, memref<4x32xf32, 1>, memref<2xi32>
    affine.dma_start %B[%i mod 4, %i], %A[%i], %tag[%i floordiv 8 + 1], %n : memref<4x32xf32, 1>, memref<256xf32>, memref<2xi32>
    affine.dma_wait %tag[%c0], %n : memref<2xi32>
  }
  return
}
"""


def test_forms_round_trip_and_keep_their_maps():
    top = parse(ROUND_TRIP)
    verify(top)
    printed = print_ir(top)
    assert print_ir(parse(printed)) == printed
    start = next(op for op in top.walk() if op.name == "affine.dma_start")
    assert all(start.attr(name) is not None for name in ("src_map", "dst_map", "tag_map"))
    assert "%arg4 * 32 + symbol(%arg2)]" in printed and "%arg2, %c0, %arg2 :" in printed
    generic = print_ir(top, generic=True)
    assert print_ir(parse(generic)) == printed


def test_2019_trailing_comma_before_the_types_is_an_empty_stride_list():
    rc, out, err = run_opt("""\
        func @f(%A: memref<512xf32>, %c4: index) {
          %c0 = constant 0 : index
          %1 = alloc() : memref<4xf32, 1>
          %2 = alloc() : memref<1xi32>
          affine.dma_start %A[%c0], %1[%c0], %2[%c0], %c4,
                    : memref<512xf32>, memref<4xf32, 1>, memref<1xi32>
          return
        }
        """)
    assert rc == 0, err
    assert "%alloc_0[%c0], %arg1 : memref<512xf32>, memref<4xf32, 1>, memref<1xi32>" in out


HEAD = "func.func @f(%A: memref<16xf32>, %B: memref<4x4xf32, 1>, %t: memref<1xi32>, %n: index, %f: f32) {\n"


@pytest.mark.parametrize("body, message", [
    ("affine.dma_start %A[0], %B[0, 0], %t[0], %n, %n : memref<16xf32>, memref<4x4xf32, 1>, memref<1xi32>",
     "expected two stride related operands"),
    ("affine.dma_start %A[0], %B[0, 0], %t[0], %n : memref<16xf32>, memref<4x4xf32, 1>",
     "expected three types"),
    ("affine.dma_start %A[0], %B[0], %t[0], %n : memref<16xf32>, memref<4x4xf32, 1>, memref<1xi32>",
     "'affine.dma_start' op dst map num results must equal destination memref rank"),
    ("affine.dma_start %A[0], %f[0], %t[0], %n : memref<16xf32>, f32, memref<1xi32>",
     "'affine.dma_start' op expected DMA destination to be of memref type"),
    ('"affine.dma_start"(%A, %B, %t, %n) {src_map = affine_map<() -> (0)>, dst_map = affine_map<() -> (0, 0)>, '
     'tag_map = affine_map<() -> (0)>} : (memref<16xf32>, memref<4x4xf32, 1>, memref<1xi32>, index) -> ()',
     None),
    ('"affine.dma_start"(%A, %f, %B, %t, %n) {src_map = affine_map<(d0) -> (d0)>, dst_map = affine_map<() -> (0, 0)>, '
     'tag_map = affine_map<() -> (0)>} : (memref<16xf32>, f32, memref<4x4xf32, 1>, memref<1xi32>, index) -> ()',
     "'affine.dma_start' op src index to dma_start must have 'index' type"),
    ('"affine.dma_start"(%A, %B, %t, %n, %n) {src_map = affine_map<() -> (0)>, dst_map = affine_map<() -> (0, 0)>, '
     'tag_map = affine_map<() -> (0)>} : (memref<16xf32>, memref<4x4xf32, 1>, memref<1xi32>, index, index) -> ()',
     "'affine.dma_start' op incorrect number of operands"),
    ("affine.dma_wait %t[0], %n : memref<1xi32>", None),
    ("affine.dma_wait %A[0, 1], %n : memref<16xf32>",
     "'affine.dma_wait' op tag map num results must equal tag memref rank"),
    ('"affine.dma_wait"(%t, %f, %n) {tag_map = affine_map<(d0) -> (d0)>} : (memref<1xi32>, f32, index) -> ()',
     "'affine.dma_wait' op index to dma_wait must have 'index' type"),
])
def test_parser_and_verifier_rules(body, message):
    rc, _, err = run_opt(HEAD + "  " + body + "\n  return\n}\n")
    if message is None:
        assert rc == 0, err
    else:
        assert rc != 0 and "<stdin>:2:" in err and message in err, err
        assert "Traceback" not in err


def test_subscripts_must_be_valid_dims_or_symbols():
    rc, _, err = run_opt("""\
        func.func @f(%A: memref<16xindex>, %B: memref<16xindex, 1>, %t: memref<1xi32>, %n: index) {
          affine.for %i = 0 to 4 {
            %v = affine.load %A[%i] : memref<16xindex>
            affine.dma_start %A[%v], %B[%i], %t[0], %n : memref<16xindex>, memref<16xindex, 1>, memref<1xi32>
          }
          return
        }
        """)
    assert rc != 0 and "<stdin>:4:" in err, err
    assert "'affine.dma_start' op src index must be a dimension or symbol identifier" in err


@st.composite
def dma_programs(draw):
    """A DMA between memrefs of random shapes, its subscripts written as affine expressions of
    constants and a loop's induction variable, and a count that stays inside both memrefs."""
    src_shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    dst_shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    iv = draw(st.integers(0, 3))
    src_at = [draw(st.integers(0, d - 1)) for d in src_shape]
    dst_at = [draw(st.integers(0, d - 1)) for d in dst_shape]
    src_flat = int(np.ravel_multi_index(src_at, src_shape))
    dst_flat = int(np.ravel_multi_index(dst_at, dst_shape))
    room = min(int(np.prod(src_shape)) - src_flat, int(np.prod(dst_shape)) - dst_flat)
    count = draw(st.integers(0, room))

    def subscript(at):  # the first coordinate through the loop's induction variable: `%i + (k - iv)`
        first = f"%i + {at[0] - iv}" if at[0] != iv else "%i"
        return ", ".join([first, *map(str, at[1:])])

    src_t = f"memref<{'x'.join(map(str, src_shape))}xf32>"
    dst_t = f"memref<{'x'.join(map(str, dst_shape))}xf32, 1>"
    text = f"""func.func @f(%S: {src_t}, %D: {dst_t}) {{
  %n = arith.constant {count} : index
  %tag = memref.alloc() : memref<1xi32>
  affine.for %i = {iv} to {iv + 1} {{
    affine.dma_start %S[{subscript(src_at)}], %D[{subscript(dst_at)}], %tag[0], %n
        : {src_t}, {dst_t}, memref<1xi32>
    affine.dma_wait %tag[0], %n : memref<1xi32>
  }}
  return
}}
"""
    return text, src_shape, dst_shape, src_flat, dst_flat, count


@settings(max_examples=60, deadline=None)
@given(dma_programs(), st.randoms(use_true_random=False))
def test_dma_copies_count_elements_row_major_and_survives_a_round_trip(case, rnd):
    text, src_shape, dst_shape, src_flat, dst_flat, count = case
    src, dst = (np.array([rnd.uniform(-9, 9) for _ in range(int(np.prod(shape)))], np.float32).reshape(shape)
                for shape in (src_shape, dst_shape))
    expected = dst.copy().ravel()
    expected[dst_flat:dst_flat + count] = src.ravel()[src_flat:src_flat + count]
    top = parse(text)
    verify(top)
    again = parse(print_ir(top))
    verify(again)
    for program in (top, again):
        memory = execute(program, [MemRef(src.copy()), MemRef(dst.copy())]).memory
        np.testing.assert_array_equal(memory[1].data.ravel(), expected)
        np.testing.assert_array_equal(memory[0].data, src)


def test_dma_past_the_end_is_undefined():
    top = parse("""func.func @f(%S: memref<4xf32>, %D: memref<4xf32, 1>) {
  %n = arith.constant 3 : index
  %tag = memref.alloc() : memref<1xi32>
  affine.dma_start %S[2], %D[0], %tag[0], %n : memref<4xf32>, memref<4xf32, 1>, memref<1xi32>
  return
}
""")
    verify(top)
    with pytest.raises(Undefined):
        execute(top, [MemRef(np.zeros(4, np.float32)), MemRef(np.zeros(4, np.float32))])
