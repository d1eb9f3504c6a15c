"""The lower → extract → write-back path on dependency chains far deeper than Python's stack.

A chain of n ops, each reading the previous result, is n values deep. The write-back used
to materialise values by recursion (value → op → build → value ...), so 2,000 tf ops ended
in RecursionError; the extraction's tree costs overflowed on such chains too. The 100k-deep
runs and their timings are in bench/engine/bench_writeback.py; here the chains are a few
thousand deep, and the stack the round trip may use is capped a few hundred frames above
the caller's, so any recursion per op fails at once.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from egraft.ir import parse, print_ir, verify
from egraft.ir.core.location import FusedLoc
from egraft.ir.semantics.interpreter import run_function
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.rewrite.lower_pipeline import optimize

T = "tensor<4xf32>"

#: Frames the round trip may use above its caller: region nesting, list chunks and
#: library calls need a few dozen; one frame per op of a 3,000-op chain would not fit.
STACK_MARGIN = 250


def tf_chain(n: int, seed: int = 0) -> str:
    """``n`` tf ops on tensor<4xf32>, each reading the previous result (so ~n deep)."""
    rnd = random.Random(seed)
    body = [f'    %c = "tf.Const"() <{{value = dense<2.500000e-01> : {T}}}> : () -> {T}']
    prev = "arg"
    for k in range(n):
        kind = rnd.random()
        if kind < 0.1:
            body.append(f'    %v{k} = "tf.{rnd.choice(["Neg", "Identity", "Relu"])}"(%{prev}) : ({T}) -> {T}')
        else:
            other = rnd.choice(["c", "arg", prev])
            body.append(f'    %v{k} = "tf.{rnd.choice(["AddV2", "Mul", "Sub"])}"(%{prev}, %{other}) '
                        f': ({T}, {T}) -> {T}')
        prev = f"v{k}"
    return (f'"builtin.module"() ({{\n  "func.func"() <{{function_type = ({T}) -> {T}, sym_name = "chain"}}> ({{\n'
            f"  ^bb0(%arg: {T}):\n" + "\n".join(body) + f'\n    "func.return"(%{prev}) : ({T}) -> ()\n'
            "  }) : () -> ()\n}) : () -> ()\n")


def i32_sub_chain(n: int) -> str:
    """``n`` i32 ops ``v = op(prev, prev)``, every tenth ``prev - prev``: all of it is 0."""
    body = []
    prev = "arg"
    for k in range(n):
        op = "subi" if k % 10 == 3 else ("addi", "muli")[k % 2]
        body.append(f'    %v{k} = "arith.{op}"(%{prev}, %{prev}) <{{overflowFlags = #arith.overflow<none>}}> '
                    ": (i32, i32) -> i32")
        prev = f"v{k}"
    return ('"builtin.module"() ({\n  "func.func"() <{function_type = (i32) -> i32, sym_name = "chain"}> ({\n'
            "  ^bb0(%arg: i32):\n" + "\n".join(body) + f'\n    "func.return"(%{prev}) : (i32) -> ()\n'
            "  }) : () -> ()\n}) : () -> ()\n")


@contextmanager
def shallow_stack(margin: int = STACK_MARGIN) -> Iterator[None]:
    """Cap Python's recursion limit ``margin`` frames above the current depth."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + margin)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def function_of(module):
    return next(iter(module.regions[0].blocks[0]))


def test_identity_round_trip_of_a_chain_deeper_than_the_stack():
    text = tf_chain(3000)
    module = parse(text)
    with shallow_stack():
        result = optimize(function_of(module))
    verify(module)
    assert result.writeback.reused == 3002 and result.writeback.created == result.writeback.dropped == 0
    assert print_ir(module) == print_ir(parse(text))


def test_canonicalize_of_a_deep_tf_chain_is_sound():
    """The issue's input shape (it crashed at 2,000 ops): the result verifies and computes
    what the input computes."""
    text = tf_chain(3000, seed=1)
    before, after = parse(text), parse(text)
    with shallow_stack():
        PassManager(parse_pipeline("func.func(canonicalize)")).run(after)
    verify(after)
    rnd = np.random.default_rng(0)
    for _ in range(3):
        x = rnd.uniform(-2, 2, 4).astype(np.float32)
        np.testing.assert_array_equal(run_function(after, [x])[0], run_function(before, [x])[0])


def test_dropping_a_folded_chain_fuses_each_location_once():
    """Canonicalize folds the whole chain into one constant 0; the constant carries the
    fused location of the ops it replaces, each once and in order (fusing them used to be
    quadratic: 250 s at 12.5k ops)."""
    n = 2000
    module = parse(i32_sub_chain(n), "chain.mlir")
    with shallow_stack():
        PassManager(parse_pipeline("func.func(canonicalize)")).run(module)
    verify(module)
    ops = list(function_of(module).regions[0].blocks[0])
    assert [op.name for op in ops] == ["arith.constant", "func.return"]
    loc = ops[0].loc
    assert isinstance(loc, FusedLoc)
    lines = [part.line for part in loc.locations]
    assert lines == sorted(set(lines)) and len(lines) > n * 0.9
