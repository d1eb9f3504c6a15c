"""The equivalence checker of the identity test is itself tested: it accepts exactly
CSE, DCE and motion of pure ops, and rejects every other change."""

from __future__ import annotations

import pytest

from egraft.ir import parse
from egraft.rewrite.encoding.equivalence import equivalent

BASE = """
func.func @f(%a: i32, %m: memref<4xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  %x = arith.addi %a, %a : i32
  memref.store %x, %m[%c0] : memref<4xi32>
  %y = memref.load %m[%c0] : memref<4xi32>
  %z = arith.muli %y, %x : i32
  return %z : i32
}
"""


def same(a: str, b: str) -> bool:
    return bool(equivalent(parse(a), parse(b)))


def test_identical_text_is_equivalent() -> None:
    assert same(BASE, BASE)


@pytest.mark.parametrize("variant", [
    # CSE: a duplicated pure op computing the same value
    BASE.replace("  %z = arith.muli %y, %x : i32",
                 "  %x2 = arith.addi %a, %a : i32\n  %z = arith.muli %y, %x2 : i32"),
    # DCE: an unused pure op
    BASE.replace("  return", "  %dead = arith.subi %a, %a : i32\n  return"),
    # motion of a pure op across an effect
    BASE.replace("  %x = arith.addi %a, %a : i32\n", "").replace(
        "  %c0 = arith.constant 0 : index\n",
        "  %c0 = arith.constant 0 : index\n  %x = arith.addi %a, %a : i32\n"),
])
def test_allowed_changes(variant: str) -> None:
    assert same(BASE, variant)


@pytest.mark.parametrize("variant, why", [
    (BASE.replace("arith.addi %a, %a", "arith.subi %a, %a"), "op name"),
    (BASE.replace("arith.muli %y, %x", "arith.muli %x, %y"), "operand order"),
    (BASE.replace("%c0 = arith.constant 0", "%c0 = arith.constant 1"), "attribute"),
    (BASE.replace("  memref.store %x, %m[%c0] : memref<4xi32>\n", ""), "a dropped effect"),
    (BASE.replace("  memref.store %x, %m[%c0] : memref<4xi32>\n  %y = memref.load %m[%c0] : memref<4xi32>\n",
                  "  %y = memref.load %m[%c0] : memref<4xi32>\n  memref.store %x, %m[%c0] : memref<4xi32>\n"),
     "effects swapped"),
    (BASE.replace("  return", "  memref.store %a, %m[%c0] : memref<4xi32>\n  return"), "an extra effect"),
])
def test_rejected_changes(variant: str, why: str) -> None:
    verdict = equivalent(parse(BASE), parse(variant))
    assert not verdict, why
    assert verdict.reason


EXECUTOR = """
func.func @g() {
  tf_executor.graph {
    %c1 = tf_executor.island {
      tf_executor.yield
    }
    %c2 = tf_executor.island(%c1) {
      tf_executor.yield
    }
    tf_executor.fetch %c2 : !tf_executor.control
  }
  return
}
"""


def test_control_dependencies_count() -> None:
    assert same(EXECUTOR, EXECUTOR)
    assert not same(EXECUTOR, EXECUTOR.replace("tf_executor.island(%c1)", "tf_executor.island"))


def test_nested_regions_are_compared() -> None:
    loop = """
func.func @h(%m: memref<8xf32>, %v: f32) {
  affine.for %i = 0 to 8 {
    affine.store %v, %m[%i] : memref<8xf32>
  }
  return
}
"""
    assert same(loop, loop)
    assert not same(loop, loop.replace("0 to 8", "0 to 7"))
    assert not same(loop, loop.replace("%m[%i]", "%m[0]"))
