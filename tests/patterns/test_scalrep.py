"""`affine-scalrep`: store-to-load forwarding checked against the interpreter.

Every rule of the set goes through `assert_rule_sound`; the pass runs on generated straight-line
memref programs (stores and loads, affine and memref forms, over function arguments, fresh
allocations and casts of them, so that stores through one name of a buffer must block
forwarding through another) and must leave results and memory unchanged, with both drivers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from egraft.ir import parse, print_ir
from egraft.ir.semantics.compare import check_agreement
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.ir.verifier import verify
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness import assert_pass_sound, assert_rule_sound
from egraft.patterns import rule_set

#: The rules whose conditions are patterns (the `*-walk` rules follow the chain as far as it goes:
#: a rule instance holds no chain, so they are checked on generated programs below).
RULES = [r for r in rule_set("affine-scalrep").rules if not r.name.endswith("-walk")]
TYPE = "memref<4xf32>"


@pytest.mark.parametrize("r", RULES, ids=[r.name for r in RULES])
def test_rule_is_sound(r) -> None:
    assert_rule_sound(r, examples=40)


@st.composite
def straight_line_programs(draw, min_casts: int = 0, indices: int = 3) -> str:
    """A function over buffers: arguments, allocations and casts of either (`min_casts` to 2); a
    random sequence of affine/memref loads and stores at constant indices (`indices` of them, maps
    `d0` and `d0 + 1`); every loaded value is returned, stored values come from arguments or
    earlier loads."""
    args = draw(st.integers(1, 2))
    allocs = draw(st.integers(0, 2))
    lines = [f"  %a{k} = memref.alloc() : {TYPE}" for k in range(allocs)]
    buffers = [(f"%arg{k}", TYPE) for k in range(args)] + [(f"%a{k}", TYPE) for k in range(allocs)]
    for k in range(draw(st.integers(min_casts, 2))):
        name, _ = draw(st.sampled_from([b for b in buffers if b[1] == TYPE]))
        lines.append(f"  %c{k} = memref.cast {name} : {TYPE} to memref<?xf32>")
        buffers.append((f"%c{k}", "memref<?xf32>"))
    lines += [f"  %i{k} = arith.constant {k} : index" for k in range(3)]
    values = [f"%x{k}" for k in range(2)]
    loaded: list[str] = []
    for n in range(draw(st.integers(1, 12))):
        mem, t = draw(st.sampled_from(buffers))
        i = f"%i{draw(st.integers(0, indices - 1))}"
        form = draw(st.sampled_from(("affine", "affine+1", "memref")))
        index = {"affine": f"[{i}]", "affine+1": f"[{i} + 1]", "memref": f"[{i}]"}[form]
        op = "memref" if form == "memref" else "affine"
        if draw(st.booleans()):
            lines.append(f"  %l{n} = {op}.load {mem}{index} : {t}")
            loaded.append(f"%l{n}")
            values.append(f"%l{n}")
        else:
            lines.append(f"  {op}.store {draw(st.sampled_from(values))}, {mem}{index} : {t}")
    params = ", ".join([f"%arg{k}: {TYPE}" for k in range(args)] + ["%x0: f32", "%x1: f32"])
    results = ", ".join(["f32"] * len(loaded))
    ret = f"  return {', '.join(loaded)} : {results}" if loaded else "  return"
    return (f"func.func @f({params}) -> ({results}) {{\n" + "\n".join(lines) + f"\n{ret}\n}}\n")


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
@settings(max_examples=60, deadline=None, database=None, suppress_health_check=(HealthCheck.too_slow,))
@given(data=st.data())
def test_generated_programs_keep_results_and_memory(driver: str, data: st.DataObject) -> None:
    text = data.draw(straight_line_programs(), label="program")
    before = parse(text)
    verify(before)
    after = parse(text)
    PassManager(parse_pipeline(f"func.func(affine-scalrep{{driver={driver}}})")).run(after)
    note(f"after:\n{print_ir(after)}")
    types = argument_types(before)
    for _ in range(4):
        check_agreement(before, after, data.draw(values_for_types(types, True), label="inputs"), True, None)


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
def test_forwarding_happens_on_generated_shapes(driver: str) -> None:
    """The pass forwards in the programs it is checked on (the property above is not vacuous)."""
    text = ("func.func @f(%arg0: memref<4xf32>, %x0: f32) -> f32 {\n  %i = arith.constant 1 : index\n"
            "  affine.store %x0, %arg0[%i + 1] : memref<4xf32>\n"
            "  %l = affine.load %arg0[%i + 1] : memref<4xf32>\n  return %l : f32\n}\n")
    module = parse(text)
    PassManager(parse_pipeline(f"func.func(affine-scalrep{{driver={driver}}})")).run(module)
    assert "affine.load" not in print_ir(module)


def test_casts_are_looked_through_after_canonicalize() -> None:
    """A store through a cast forwards to a load of the cast's source once canonicalize has
    folded the cast (the scalrep rules compare memref values, not buffers)."""
    text = ("func.func @f(%A: memref<4xf32>, %x: f32, %i: index) -> f32 {\n"
            "  %B = memref.cast %A : memref<4xf32> to memref<?xf32>\n"
            "  affine.store %x, %B[%i] : memref<?xf32>\n"
            "  %v = affine.load %A[%i] : memref<4xf32>\n  return %v : f32\n}\n")
    alone = parse(text)
    PassManager(parse_pipeline("func.func(affine-scalrep)")).run(alone)
    assert "affine.load" in print_ir(alone)
    pipeline = "func.func(canonicalize{rules=memref-cast-folding},affine-scalrep)"
    together = parse(text)
    PassManager(parse_pipeline(pipeline)).run(together)
    assert "affine.load" not in print_ir(together)
    assert_pass_sound(text, pipeline, examples=30)


LIT = Path(__file__).resolve().parents[1] / "lit" / "affine_scalrep.mlir"
#: The lit cases the interpreter can run (one calls an external function: FileCheck only).
RUNNABLE = [c for c in LIT.read_text(encoding="utf-8").split("// -----") if "call @" not in c]


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
@pytest.mark.parametrize("case", range(len(RUNNABLE)))
def test_lit_inputs_are_rewritten_soundly(case: int, driver: str) -> None:
    """Results and memref contents agree before and after on each runnable lit case."""
    assert_pass_sound(RUNNABLE[case], f"func.func(affine-scalrep{{driver={driver}}})", examples=25)


def test_forwarding_through_an_aliasing_store_is_caught() -> None:
    """Without its alias condition (distinct allocations), forwarding through another store is
    wrong when that store writes the same buffer through a cast; the interpreter sees it."""
    from egraft.patterns.affine_scalrep import A_LOAD, A_STORE, other, v, w, widx, wmp
    from egraft.patterns.dsl import op, rule
    from egraft.rewrite.greedy.driver import apply_rules_greedily
    from egraft.ir.semantics import UnsoundRewrite
    from egraft.ir.semantics.values import MemRef

    careless = rule("careless", A_LOAD.after(op("affine.store", w, other, widx, map=wmp).after(A_STORE)), v,
                    doc="wrong on purpose: no alias condition")
    text = ("func.func @f(%A: memref<4xf32>, %x: f32, %y: f32) -> f32 {\n  %i = arith.constant 1 : index\n"
            "  %C = memref.cast %A : memref<4xf32> to memref<?xf32>\n"
            "  affine.store %x, %A[%i] : memref<4xf32>\n  affine.store %y, %C[%i] : memref<?xf32>\n"
            "  %l = affine.load %A[%i] : memref<4xf32>\n  return %l : f32\n}\n")
    before, after = parse(text), parse(text)
    assert apply_rules_greedily(after, [careless]).rewrites["careless"] == 1
    with pytest.raises(UnsoundRewrite):
        check_agreement(before, after, [MemRef(np.zeros(4, np.float32)), np.float32(1), np.float32(2)], True, None)
    kept = parse(text)
    PassManager(parse_pipeline("func.func(affine-scalrep)")).run(kept)
    assert "affine.load" in print_ir(kept)  # the real rules see the alias and keep the load



def test_a_walk_past_aliasing_stores_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The program property sees a walk that ignores whether a store may write the loaded element:
    with `cannot_write` always true, hypothesis finds a program whose results change (programs
    with casts, which write a buffer under another name, and few indices, so accesses collide)."""
    import egraft.patterns.affine_scalrep as scalrep
    from egraft.ir.semantics import UnsoundRewrite

    monkeypatch.setattr(scalrep, "cannot_write", lambda store, load: True)

    @settings(max_examples=300, deadline=None, database=None, suppress_health_check=(HealthCheck.too_slow,))
    @given(data=st.data())
    def careless(data: st.DataObject) -> None:
        text = data.draw(straight_line_programs(min_casts=1, indices=2), label="program")
        before, after = parse(text), parse(text)
        PassManager(parse_pipeline("func.func(affine-scalrep{driver=greedy})")).run(after)
        for _ in range(4):
            check_agreement(before, after, data.draw(values_for_types(argument_types(before), True)), True, None)

    with pytest.raises(UnsoundRewrite):
        careless()


@pytest.mark.parametrize("driver", ["greedy", "egraph"])
def test_a_later_blocks_argument_may_be_the_allocation(driver: str) -> None:
    """A fresh allocation cannot alias a function's arguments, but a later block's argument
    may be that allocation itself (passed by the branch): the store to %b blocks forwarding."""
    text = """
func.func @f(%A: memref<4xf32>, %x: f32, %y: f32) -> f32 {
  %a = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  cf.br ^bb1(%a : memref<4xf32>)
^bb1(%b: memref<4xf32>):
  memref.store %x, %a[%c0] : memref<4xf32>
  memref.store %y, %b[%c0] : memref<4xf32>
  %v = memref.load %a[%c0] : memref<4xf32>
  return %v : f32
}"""
    module = parse(text)
    PassManager(parse_pipeline(f"builtin.module(func.func(affine-scalrep{{driver={driver}}}))")).run(module)
    assert "memref.load" in print_ir(module)
    assert_pass_sound(text, f"builtin.module(func.func(affine-scalrep{{driver={driver}}}))")
