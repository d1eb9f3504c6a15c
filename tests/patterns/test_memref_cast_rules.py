"""`memref-cast-folding`: every rule against the interpreter (drawn buffers, casts, indices), the
casts that must not fold, and the set run by both canonicalize drivers on std-era input."""

from __future__ import annotations

from pathlib import Path

import pytest

from egraft.ir import parse, print_ir
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness import assert_pass_sound, assert_rule_sound
from egraft.ir.semantics import UnsoundRewrite
from egraft.patterns import rule_set
from egraft.patterns.dsl import op, rule, type_of, var
from egraft.patterns.memref_cast_rules import cast_compatible, static_size
from egraft.patterns.rule import Native
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

RULES = rule_set("memref-cast-folding").rules


@pytest.mark.parametrize("r", RULES, ids=[r.name for r in RULES])
def test_rule_is_sound(r) -> None:
    assert_rule_sound(r, examples=40)


def test_harness_catches_a_wrong_size() -> None:
    """The drawn memref programs are defined often enough that a wrong fold is caught."""
    x, k = var("x"), var("k")
    wrong = rule("dim-off-by-one", op("memref.dim", x, k),
                 op("arith.constant", value=Native("size+1", lambda t: A.IntegerAttr(t.shape[0] + 1, T.index)
                                                   if t.shape[0] != T.DYNAMIC else None, (type_of(x),))),
                 doc="wrong on purpose")
    with pytest.raises(UnsoundRewrite):
        assert_rule_sound(wrong, examples=60)


def run(text: str, driver: str) -> str:
    module = parse(text)
    PassManager(parse_pipeline(f"func.func(canonicalize{{driver={driver} rules=memref-cast-folding}})")).run(module)
    return print_ir(module)


STD_ERA = """
func @f(%A: memref<16xf32>, %D: memref<?xf32>, %i: index) -> (f32, f32, index, index) {
  %B = memref_cast %A : memref<16xf32> to memref<?xf32>
  %v = load %B[%i] : memref<?xf32>
  %w = affine.load %B[%i + 1] : memref<?xf32>
  %d = dim %B, 0 : memref<?xf32>
  %S = memref_cast %D : memref<?xf32> to memref<4xf32>
  %e = dim %S, 0 : memref<4xf32>
  return %v, %w, %d, %e : f32, f32, index, index
}
"""


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
def test_std_era_casts_fold_into_users(driver: str) -> None:
    out = run(STD_ERA, driver)
    assert "memref.cast" not in out, out
    assert "memref.load %arg0[%arg2] : memref<16xf32>" in out
    assert "affine.load %arg0[%arg2 + 1] : memref<16xf32>" in out
    assert "arith.constant 16 : index" in out and "arith.constant 4 : index" in out, out
    assert_pass_sound(STD_ERA, f"func.func(canonicalize{{driver={driver} rules=memref-cast-folding}})", examples=30)


MUST_STAY = """
func.func private @use(memref<?xf32>)
func.func @g(%A: memref<16xf32>, %U: memref<*xf32>, %i: index) -> memref<?xf32> {
  %B = memref.cast %A : memref<16xf32> to memref<?xf32>
  func.call @use(%B) : (memref<?xf32>) -> ()
  %R = memref.cast %U : memref<*xf32> to memref<?xf32>
  %v = memref.load %R[%i] : memref<?xf32>
  memref.store %v, %A[%i] : memref<16xf32>
  return %B : memref<?xf32>
}
"""


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
def test_type_sensitive_users_and_unranked_sources_keep_their_casts(driver: str) -> None:
    """A call and a return need the cast's type; a cast from an unranked memref never folds."""
    out = run(MUST_STAY, driver)
    assert "call @use(%cast)" in out, out
    assert "return %cast" in out, out
    assert "memref.load %cast_0[%arg2]" in out, out


def test_cast_chain_joining_two_static_sizes_does_not_fold() -> None:
    """memref<4xf32> -> memref<?xf32> -> memref<5xf32> is not one valid cast (and is undefined)."""
    text = """
func.func @h(%A: memref<4xf32>) -> memref<5xf32> {
  %B = memref.cast %A : memref<4xf32> to memref<?xf32>
  %C = memref.cast %B : memref<?xf32> to memref<5xf32>
  return %C : memref<5xf32>
}
"""
    out = run(text, "greedy")
    assert out.count("memref.cast") == 2, out


def test_cast_compatibility_and_static_sizes() -> None:
    f16, fdyn, f2x = T.MemRefType((16,), T.f32), T.MemRefType((T.DYNAMIC,), T.f32), T.MemRefType((2, 8), T.f32)
    assert cast_compatible(f16, fdyn) and cast_compatible(fdyn, f16)
    assert not cast_compatible(f16, T.MemRefType((8,), T.f32))
    assert not cast_compatible(f16, T.MemRefType((16,), T.i32))
    assert not cast_compatible(f16, f2x)
    assert not cast_compatible(T.UnrankedMemRefType(T.f32), fdyn)
    assert static_size(f2x, A.IntegerAttr(1, T.index)) == A.IntegerAttr(8, T.index)
    assert static_size(fdyn, A.IntegerAttr(0, T.index)) is None
    assert static_size(f2x, A.IntegerAttr(2, T.index)) is None  # out of range: undefined, left alone


LIT = Path(__file__).resolve().parents[1] / "lit" / "memref_cast_fold.mlir"


def lit_cases(path: Path) -> list[str]:
    """The `// -----` cases of a lit file whose functions the interpreter can run (no calls of
    external functions, no memrefs of memrefs as arguments)."""
    return [c for c in path.read_text(encoding="utf-8").split("// -----")
            if "call @" not in c and "memref<memref" not in c]


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
@pytest.mark.parametrize("case", range(len(lit_cases(LIT))))
def test_lit_inputs_are_rewritten_soundly(case: int, driver: str) -> None:
    """Results and memref contents agree before and after on each lit case."""
    assert_pass_sound(lit_cases(LIT)[case], f"func.func(canonicalize{{driver={driver} rules=memref-cast-folding}})",
                      examples=25)
