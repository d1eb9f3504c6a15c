"""Splat constants fold to splats without their elements being made, on both drivers, and
agree with the interpreter; a fold that would read too many elements is refused, with the
reason in the report (patterns/fold_limits.py, canon_fold.elements)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import parse, print_ir
from egraft.ir.core import attributes as A
from egraft.ir.semantics import check_agreement
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.patterns.canon_fold import CMPI, FLOAT_BINARY, INT_BINARY
from egraft.patterns.fold_limits import fold_limits
from egraft.patterns.natives import fold

DRIVERS = ("greedy", "egraph")
INT_TYPES = ("i1", "i8", "i32", "i64")
FLOAT_TYPES = ("f16", "f32", "f64")
SHAPES = ("tensor<3x{t}>", "tensor<2x2x{t}>", "vector<4x{t}>")


def literal(value: int | float, etype: str) -> str:
    if etype == "i1":
        return "true" if value else "false"
    return repr(float(value)) if etype.startswith("f") else str(value)


@st.composite
def fold_programs(draw: st.DrawFn) -> tuple[str, bool]:
    """A function folding two constants with one arith op: (text, both operands are splats)."""
    kind = draw(st.sampled_from(("int", "float", "cmpi")))
    etype = draw(st.sampled_from(FLOAT_TYPES if kind == "float" else INT_TYPES))
    shape = draw(st.sampled_from(SHAPES)).format(t=etype)
    count = 4 if "2x2" in shape or "vector" in shape else 3
    bits = 1 if etype == "i1" else int(etype[1:])
    if etype.startswith("f"):
        scalars = st.sampled_from([0.0, -0.0, 1.0, -2.5, 0.1, 3e4, 1e-3])
    else:
        lo, hi = (0, 1) if bits == 1 else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        scalars = st.one_of(st.sampled_from([0, 1, -1 if bits > 1 else 0, lo, hi]), st.integers(lo, hi))
    operands, splats = [], True
    for _ in range(2):
        if draw(st.sampled_from((True, True, True, False))):  # mostly splats; a list sometimes (mixed folds)
            operands.append(f"dense<{literal(draw(scalars), etype)}>")
            continue
        splats = False
        items = [literal(draw(scalars), etype) for _ in range(count)]
        rows = [items[:2], items[2:]] if "2x2" in shape else [items]
        body = ", ".join(f"[{', '.join(row)}]" for row in rows)
        operands.append(f"dense<[{body}]>" if "2x2" in shape else f"dense<{body}>")
    if kind == "cmpi":
        pred = draw(st.sampled_from(sorted(CMPI)))
        body = f"%2 = arith.cmpi {_PREDICATES[pred]}, %0, %1 : {shape}"
        rtype = shape.replace(f"x{etype}>", "xi1>")
    else:
        name = draw(st.sampled_from(sorted(FLOAT_BINARY if kind == "float" else INT_BINARY)))
        body, rtype = f"%2 = arith.{name} %0, %1 : {shape}", shape
    text = (f"func.func @f() -> {rtype} {{\n"
            f"  %0 = arith.constant {operands[0]} : {shape}\n"
            f"  %1 = arith.constant {operands[1]} : {shape}\n"
            f"  {body}\n"
            f"  return %2 : {rtype}\n}}\n")
    return text, splats


_PREDICATES = {0: "eq", 1: "ne", 2: "slt", 3: "sle", 4: "sgt", 5: "sge", 6: "ult", 7: "ule", 8: "ugt", 9: "uge"}


def run(text: str, pipeline: str):
    module = parse(text)
    PassManager(parse_pipeline(pipeline)).run(module)
    return module


def ops_of(module) -> list:
    return [op for op in module.walk() if op.name.startswith("arith.")]


@pytest.mark.parametrize("driver", DRIVERS)
def test_splat_folds_agree_with_the_interpreter(driver: str) -> None:
    @settings(max_examples=40 if driver == "greedy" else 12, deadline=None, database=None)
    @given(fold_programs())
    def check(program: tuple[str, bool]) -> None:
        text, splats = program
        before = parse(text)
        after = run(text, f"builtin.module(func.func(canonicalize{{driver={driver}}}))")
        check_agreement(before, after, [], exact=True, tol=None)
        left = ops_of(after)
        if splats and len(left) == 1:  # folded (undefined folds, e.g. division by zero, stay)
            value = left[0].attr("value")
            assert isinstance(value, A.DenseElementsAttr) and value.is_splat, print_ir(after)

    check()


CAST_TYPES = {"extsi": ("i8", "i32"), "extui": ("i1", "i64"), "trunci": ("i64", "i8"), "index_cast": ("i32", "index"),
              "index_castui": ("index", "i16"), "extf": ("f16", "f64")}


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("cast", sorted(CAST_TYPES))
def test_cast_of_a_splat_folds_to_a_splat(cast: str, driver: str) -> None:
    src, dst = CAST_TYPES[cast]
    value = {"i1": "true", "f16": "-2.5"}.get(src, "-77" if src != "index" else "70000")
    text = (f"func.func @f() -> vector<4x{dst}> {{\n  %0 = arith.constant dense<{value}> : vector<4x{src}>\n"
            f"  %1 = arith.{cast} %0 : vector<4x{src}> to vector<4x{dst}>\n  return %1 : vector<4x{dst}>\n}}\n")
    after = run(text, f"builtin.module(func.func(canonicalize{{driver={driver}}}))")
    check_agreement(parse(text), after, [], exact=True, tol=None)
    (const,) = ops_of(after)
    assert const.attr("value").is_splat, print_ir(after)


BILLION = """func.func @f() -> tensor<1000000000xi32> {
  %0 = arith.constant dense<1> : tensor<1000000000xi32>
  %1 = arith.addi %0, %0 : tensor<1000000000xi32>
  %2 = arith.constant dense<3> : tensor<1000000000xi32>
  %3 = arith.muli %1, %2 : tensor<1000000000xi32>
  return %3 : tensor<1000000000xi32>
}
"""


@pytest.mark.parametrize("driver", DRIVERS)
def test_billion_element_splats_fold_to_a_splat(driver: str) -> None:
    module = run(BILLION, f"builtin.module(func.func(canonicalize{{driver={driver}}}))")
    (const,) = ops_of(module)
    assert const.attr("value") == A.DenseElementsAttr(const.results[0].type, 6)


NON_SPLAT = """func.func @f() -> tensor<3xi32> {
  %0 = arith.constant dense<[1, 2, 3]> : tensor<3xi32>
  %1 = arith.addi %0, %0 : tensor<3xi32>
  return %1 : tensor<3xi32>
}
"""


@pytest.mark.parametrize("driver", DRIVERS)
def test_folds_over_the_element_limit_are_refused_with_the_reason(driver: str) -> None:
    remarks: list[str] = []
    module = parse(NON_SPLAT)
    PassManager(parse_pipeline(f"builtin.module(func.func(canonicalize{{driver={driver} "
                               f"fold-element-limit=2 report=true}}))"),
                emit=lambda d: remarks.append(d.message)).run(module)
    assert [op.name for op in ops_of(module)] == ["arith.constant", "arith.addi"]
    assert any("fold-addi: a constant of 3 elements is over fold-element-limit=2" in m for m in remarks), remarks
    folded = run(NON_SPLAT, f"builtin.module(func.func(canonicalize{{driver={driver} fold-element-limit=3}}))")
    (const,) = ops_of(folded)
    assert const.attr("value") == A.DenseElementsAttr(const.results[0].type, (2, 4, 6))


def test_numpy_fold_keeps_splats_when_elementwise() -> None:
    from egraft.ir.core import types as T

    big = T.RankedTensorType((1 << 30,), T.i32)
    add = fold("add", np.add, "a", "b", elementwise=True)
    assert add.fn(A.DenseElementsAttr(big, 2), A.DenseElementsAttr(big, 5)) == A.DenseElementsAttr(big, 7)
    small = T.RankedTensorType((3,), T.i32)
    total = fold("sum", lambda a: np.sum(a, keepdims=True), "a")  # not elementwise: reads every element
    assert total.fn(A.DenseElementsAttr(small, 2)) == A.DenseElementsAttr(T.RankedTensorType((1,), T.i32), 6)
    with fold_limits(2) as limits:
        assert total.fn(A.DenseElementsAttr(small, 2)) is None
    assert limits.refused
