"""Every affine/memref pass keeps memory contents, on generated loop nests (issue #14 §6).

`tests/strategies/loop_nests.py` draws functions of affine loop nests (depth 1-5, random
affine subscripts with symbols, grayboxes at random depths, casts, subviews and
reinterpret_casts aliasing the buffers, scratch buffers, stores followed by loads of the same
place, `affine.if`, zero/one-trip loops, apply chains, calls of a private callee). Each
pass in `PIPELINES` runs on a drawn function; the verifier must accept its output, and the
reference interpreter must see the same returned value and the same final contents of every
memref argument on random inputs (NaN and infinities included). The generated functions are
defined on every input, so an input on which the rewritten function is undefined (an access
out of bounds, a read of unwritten or freed memory) fails the test too.

A pass joins `PIPELINES` when it is registered (`egraft-opt --help`). The same programs in
the late-2019 spelling must read as the same function (the era reader), and the generator's
own promises (verifier-valid, defined, every shape present) are tested here too.
"""

from __future__ import annotations

import re

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
from tests.strategies.loop_nests import STATEMENTS, LoopNestBuilder, SeededChoices, loop_nest_programs, spell_2019

PIPELINES = {
    "canonicalize": "func.func(canonicalize)",
    "canonicalize-greedy": "func.func(canonicalize{driver=greedy})",
    "cse": "func.func(cse)",
    "dce": "func.func(dce)",
    "canonicalize,cse": "func.func(canonicalize,cse)",
    "affine-graybox-eliminate": "func.func(affine-graybox-eliminate)",
    "affine-graybox-hoist": "func.func(affine-graybox-hoist)",
    "hoist,canonicalize": "func.func(affine-graybox-hoist,canonicalize)",
    "affine-scalrep": "func.func(affine-scalrep)",
    "scalrep,canonicalize": "func.func(affine-scalrep,canonicalize)",
    "inline": "inline",
    "inline,affine-graybox-eliminate": "inline,func.func(affine-graybox-eliminate)",
}

_SETTINGS = settings(max_examples=25, deadline=None, database=None,
                     suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.filter_too_much))


@pytest.mark.parametrize("name", sorted(PIPELINES))
@_SETTINGS
@given(st.data())
def test_pass_keeps_memory(name: str, data: st.DataObject) -> None:
    program = data.draw(loop_nest_programs(), label="program")
    before = parse(program.text)
    verify(before)
    after = parse(program.text)
    PassManager(parse_pipeline(PIPELINES[name])).run(after)
    note(f"after {name}:\n{print_ir(after)}")
    verify(after)
    arg_types = argument_types(before, "f")
    for _ in range(3):
        inputs = data.draw(values_for_types(arg_types, special_floats=True), label="inputs")
        assert check_agreement(before, after, inputs, exact=True, tol=None, name="f"), \
            "a generated function is undefined on an input (generator bug)"


# --------------------------------------------------------------------------- the generator itself


def _programs(count: int) -> list[str]:
    return [LoopNestBuilder(SeededChoices(seed), 40, 5).function() for seed in range(count)]


def _max_loop_depth(text: str) -> int:
    depth = best = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("}"):
            depth -= 1
        if re.search(r"affine\.(for|if|graybox) .*\{$|= affine\.(for|if|graybox) .*\{$", stripped):
            depth += 1
            best = max(best, depth)
    return best


def test_generator_covers_the_shapes_the_passes_rewrite() -> None:
    """Over a few hundred seeds every statement kind shows up, nests reach depth 5, grayboxes
    sit inside loops and inside grayboxes, and the interesting forms all occur."""
    texts = _programs(300)
    joined = "\n".join(texts)
    for needle in ("affine.graybox", "iter_args", "affine.if", "} else {", "affine.min", "affine.max",
                   "memref.cast", "memref.dim", "memref.alloc()", "memref.alloca()", "memref.dealloc",
                   "memref.load", "memref.store", "symbol(", "floordiv", "mod", "step 2", "max affine_map",
                   "min affine_map", "-> i32 {", "memref.subview", "memref.reinterpret_cast", "strided<[?"):
        assert needle in joined, needle
    assert max(_max_loop_depth(t) for t in texts) >= 5
    nested_grayboxes = sum(1 for t in texts if re.search(r"affine\.graybox[^\n]*\n(.*\n)*?\s+affine\.for"
                                                         r"(.*\n)*?\s+affine\.graybox", t))
    assert nested_grayboxes > 0
    assert all(kind in STATEMENTS for kind in ("graybox", "store_load", "cast"))
    # store-to-load pairs: a load right after a store of the same place
    assert re.search(r"affine\.store [^,]+, (%\w+\[[^\]]*\]) : [^\n]*\n\s*%v\d+ = affine\.load \1", joined)


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large))
@given(loop_nest_programs(), st.data())
def test_generated_functions_verify_and_are_defined(program, data: st.DataObject) -> None:
    """The generator's promise the pass tests rely on: verifier-valid, defined on every input."""
    module = parse(program.text)
    verify(module)
    inputs = data.draw(values_for_types(argument_types(module, "f"), special_floats=True))
    assert check_agreement(module, module, inputs, exact=True, tol=None, name="f")


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large))
@given(loop_nest_programs(era2019=True), st.data())
def test_the_2019_spelling_reads_as_the_same_program(program, data: st.DataObject) -> None:
    """The same loop nests spelled as late-2019 MLIR (`func`, `constant`, bare maps and sets,
    `load`/`store`, `memref_cast`, `dim %m, 0`, `call`): the era reader gives a function that
    verifies and computes what today's spelling computes."""
    today = parse(program.text)
    old = parse(spell_2019(program.text))
    verify(old)
    inputs = data.draw(values_for_types(argument_types(today, "f"), special_floats=True))
    assert check_agreement(today, old, inputs, exact=True, tol=None, name="f")


# --------------------------------------------------------------------------- cases the generator found


def test_dce_counts_a_dead_loops_uses_once() -> None:
    """A dead loop whose body is dead too: the body's uses of `%c1` were counted twice (as a
    root of its own, then with the loop), so `%c1` was erased under the live load."""
    text = """func.func @f(%A0: memref<5xi32>) -> i32 {
      %c1 = arith.constant 1 : index
      %v3 = affine.load %A0[symbol(%c1)] : memref<5xi32>
      affine.for %q = 0 to 1 {
        %m14 = affine.max affine_map<(d0) -> (d0)>(%c1)
      }
      return %v3 : i32
    }"""
    module = parse(text)
    PassManager(parse_pipeline("func.func(dce)")).run(module)
    verify(module)
    assert "arith.constant 1 : index" in print_ir(module) and "affine.for" not in print_ir(module)


ALIASED_STORES = """func.func @f(%A: memref<4x4xi32>, %x: i32, %y: i32) -> i32 {
  %sv = memref.subview %A[1, 1] [2, 2] [1, 1] : memref<4x4xi32> to memref<2x2xi32, strided<[4, 1], offset: 5>>
  affine.store %x, %A[1, 1] : memref<4x4xi32>
  affine.store %y, %sv[0, 0] : memref<2x2xi32, strided<[4, 1], offset: 5>>
  %v = affine.load %A[1, 1] : memref<4x4xi32>
  %rc = memref.reinterpret_cast %A to offset: [0], sizes: [16], strides: [1]
      : memref<4x4xi32> to memref<16xi32, strided<[1]>>
  affine.store %x, %A[2, 2] : memref<4x4xi32>
  affine.store %y, %rc[10] : memref<16xi32, strided<[1]>>
  %w = affine.load %A[2, 2] : memref<4x4xi32>
  %s = arith.addi %v, %w : i32
  return %s : i32
}"""


@pytest.mark.parametrize("name", ["affine-scalrep", "scalrep,canonicalize", "canonicalize"])
def test_stores_through_views_block_forwarding(name: str) -> None:
    """`%A[1, 1]` is overwritten through a subview and `%A[2, 2]` through a reinterpret_cast:
    forwarding either first store to its load would return `%x` where memory holds `%y`."""
    assert_pass_sound(ALIASED_STORES, PIPELINES[name], examples=20)
    module = parse(ALIASED_STORES)
    PassManager(parse_pipeline(PIPELINES[name])).run(module)
    assert print_ir(module).count("affine.load") == 2
