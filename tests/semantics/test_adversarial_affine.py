"""Adversarial inputs for the memref/affine passes of issue #14 (H10's QA session).

Shapes the passes' own generators (tests/strategies/loop_nests.py) do not draw: functions of
several blocks whose block arguments alias a fresh allocation, passed by `cf.br`/`cf.cond_br`.
Every pipeline must terminate, verify, and keep results and memref contents equal (the
reference interpreter, `assert_pass_sound`).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from egraft.ir.semantics.compare import check_agreement
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.ir.syntax.parser import parse
from egraft.ir.syntax.printer import print_ir
from egraft.ir.verifier import verify
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness.harness import assert_pass_sound

PIPELINES = [
    "func.func(canonicalize)",
    "func.func(canonicalize{driver=greedy})",
    "func.func(affine-scalrep{driver=greedy})",
    "func.func(affine-scalrep{driver=egraph})",
    "func.func(cse)",
    "func.func(affine-scalrep,canonicalize,cse)",
]

MEMREF = "memref<4xf32>"


@st.composite
def multi_block_programs(draw: st.DrawFn) -> str:
    """A function of 2-4 blocks in a chain: each block stores and loads at constant places of the
    arguments, a fresh allocation, a cast of an argument and the memrefs its predecessor passed
    as block arguments (which may be the allocation itself)."""
    lines = ["func.func @f(%A: memref<4xf32>, %B: memref<4xf32>, %x: f32, %y: f32, %c: i1) -> (f32, f32) {"]
    lines += [f"  %c{k} = arith.constant {k} : index" for k in range(4)]
    lines += ["  %a = memref.alloc() : memref<4xf32>", "  %d = memref.cast %A : memref<4xf32> to memref<?xf32>"]
    lines += [f"  memref.store %y, %a[%c{k}] : memref<4xf32>" for k in range(4)]
    memrefs = {"%A": MEMREF, "%B": MEMREF, "%a": MEMREF, "%d": "memref<?xf32>"}
    values = ["%x", "%y"]
    count = [0]

    def fresh(prefix: str) -> str:
        count[0] += 1
        return f"%{prefix}{count[0]}"

    def block_body() -> None:
        for _ in range(draw(st.integers(1, 6))):
            m = draw(st.sampled_from(sorted(memrefs)))
            ty, i = memrefs[m], draw(st.integers(0, 3))
            kind = draw(st.sampled_from(["store", "load", "addf"]))
            affine = draw(st.booleans())
            if kind == "store":
                v = draw(st.sampled_from(values))
                lines.append(f"  affine.store {v}, {m}[{i}] : {ty}" if affine
                             else f"  memref.store {v}, {m}[%c{i}] : {ty}")
            elif kind == "load":
                r = fresh("v")
                lines.append(f"  {r} = affine.load {m}[{i}] : {ty}" if affine
                             else f"  {r} = memref.load {m}[%c{i}] : {ty}")
                values.append(r)
            else:
                r = fresh("s")
                lines.append(f"  {r} = arith.addf {draw(st.sampled_from(values))}, "
                             f"{draw(st.sampled_from(values))} : f32")
                values.append(r)

    block_body()
    ranked = st.sampled_from(["%A", "%B", "%a"])
    for b in range(1, draw(st.integers(2, 4))):
        sources = draw(st.lists(ranked, min_size=1, max_size=2))
        args = [fresh("m") for _ in sources]
        types = ", ".join(MEMREF for _ in args)
        if draw(st.booleans()):
            lines.append(f"  cf.br ^bb{b}({', '.join(sources)} : {types})")
        else:
            other = [draw(ranked) for _ in sources]
            lines.append(f"  cf.cond_br %c, ^bb{b}({', '.join(sources)} : {types}), "
                         f"^bb{b}({', '.join(other)} : {types})")
        lines.append(f"^bb{b}({', '.join(f'{a}: {MEMREF}' for a in args)}):")
        memrefs.update((a, MEMREF) for a in args)
        block_body()
    lines += [f"  return {values[-1]}, {draw(st.sampled_from(values))} : f32, f32", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("pipeline", PIPELINES)
@settings(max_examples=15, deadline=None, database=None,
          suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large))
@given(st.data())
def test_multi_block_memref_programs(pipeline: str, data: st.DataObject) -> None:
    check_pipeline(data.draw(multi_block_programs(), label="program"), pipeline, data)


def check_pipeline(program: str, pipeline: str, data: st.DataObject, inputs: int = 3) -> None:
    """Run `pipeline` on `program`: the output verifies and computes what @f computed."""
    before = parse(program)
    verify(before)
    after = parse(program)
    PassManager(parse_pipeline(pipeline)).run(after)
    note(f"after {pipeline}:\n{print_ir(after)}")
    verify(after)
    arg_types = argument_types(before, "f")
    for _ in range(inputs):
        check_agreement(before, after, data.draw(values_for_types(arg_types, special_floats=True), label="inputs"),
                        exact=True, tol=None, name="f")


BRANCH_ONLY = """
func.func @f(%x: f32) -> f32 {
  cf.br ^bb1
^bb1:
  return %x : f32
}
"""


@pytest.mark.parametrize("pipeline", ["func.func(canonicalize)", "func.func(affine-scalrep{driver=egraph})"])
def test_branch_terminator_on_the_effect_chain(pipeline: str) -> None:
    """A `cf.br` is on its block's effect chain; the e-graph write-back placed it twice (once from
    the chain, once as the terminator), linking the block into a cycle: egraft-opt hung."""
    assert_pass_sound(BRANCH_ONLY, pipeline, examples=3)
