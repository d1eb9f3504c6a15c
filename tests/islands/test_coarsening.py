"""Island coarsening: soundness against a reference semantics with deadness, the
coarsen ∘ break-up ∘ coarsen round trip, the inter-op parallelism option, and the
v1-control-flow graph where TensorFlow's own pass makes a fetched value dead."""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import given, settings

from egraft.ir import Operation, parse, print_ir, verify
from egraft.passes.tf.island_coarsening import coarsen
from egraft.rewrite.islands.facts import collect
from egraft.rewrite.islands.breakup import break_up

from .gen import graphs
from .semantics import run_graph

FEEDS = list(itertools.product([0, 3], [1, -2], [False, True]))


def _graph(module: Operation) -> Operation:
    return next(op for op in module.walk() if op.name == "tf_executor.graph")


def _outputs(module: Operation) -> list[list]:
    func = next(op for op in module.walk() if op.name == "func.func")
    args = func.regions[0].blocks[0].args
    return [run_graph(_graph(module), dict(zip(args, feed))) for feed in FEEDS]


def _grouping(module: Operation) -> set[frozenset[int]]:
    """The tf op ids per island (islands holding no tagged op are ignored)."""
    out = set()
    for island in (op for op in _graph(module).regions[0].blocks[0] if op.name == "tf_executor.island"):
        ids = frozenset(int(str(o.attr("_id")).split(":")[0]) for o in island.walk() if o.attr("_id"))
        if ids:
            out.add(ids)
    return out


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_coarsening_keeps_what_the_graph_computes(text: str) -> None:
    module = parse(text)
    before = _outputs(module)
    coarsen(module)
    verify(module)
    assert _outputs(module) == before
    assert _outputs(parse(print_ir(module))) == before


@settings(max_examples=100, deadline=None)
@given(graphs())
def test_coarsen_break_up_coarsen_regroups_the_same(text: str) -> None:
    module = parse(text)
    coarsen(module)
    first = _grouping(module)
    for island in [op for op in _graph(module).regions[0].blocks[0] if op.name == "tf_executor.island"]:
        break_up(island)
    verify(module)
    assert all(len(g) == 1 for g in _grouping(module))
    before = _outputs(parse(text))
    assert _outputs(module) == before
    coarsen(module)
    assert _grouping(module) == first


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_keep_independent_keeps_islands_connected_and_stays_sound(text: str) -> None:
    """Every island keep-independent forms is connected by island-to-island edges of the input.

    (Not a refinement of the default grouping: a group pinned there by a fetched
    same-signature neighbour may sink into its consumer once it is its own component.)"""
    split = parse(text)
    before = _outputs(split)
    nodes = collect(_graph(parse(text)))
    ids = {n: int(str(inner.attr("_id")).split(":")[0]) for n, op in enumerate(nodes.ops)
           if op.name == "tf_executor.island" for inner in op.walk() if inner.attr("_id")}
    edges = {(ids[s], ids[d]) for s, _, d in nodes.edges if s in ids and d in ids}
    coarsen(split, keep_independent=True)
    verify(split)
    assert _outputs(split) == before
    for group in _grouping(split):
        reached, todo = set(), [min(group)]
        while todo:
            n = todo.pop()
            if n not in reached:
                reached.add(n)
                todo += [b for a, b in edges if a == n and b in group] + [a for a, b in edges if b == n and a in group]
        assert reached == group


def test_keep_independent_separates_unrelated_chains() -> None:
    text = """func.func @f(%a: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
      %r:2 = tf_executor.graph {
        %x, %cx = tf_executor.island wraps "tf.Neg"(%a) : (tensor<i32>) -> tensor<i32>
        %y, %cy = tf_executor.island wraps "tf.Neg"(%x) : (tensor<i32>) -> tensor<i32>
        %u, %cu = tf_executor.island wraps "tf.Identity"(%a) : (tensor<i32>) -> tensor<i32>
        %v, %cv = tf_executor.island wraps "tf.Neg"(%u) : (tensor<i32>) -> tensor<i32>
        tf_executor.fetch %y, %v : tensor<i32>, tensor<i32>
      }
      func.return %r#0, %r#1 : tensor<i32>, tensor<i32>
    }"""
    joined, split = parse(text), parse(text)
    coarsen(joined)
    coarsen(split, keep_independent=True)
    count = lambda m: sum(op.name == "tf_executor.island" for op in _graph(m).regions[0].blocks[0])  # noqa: E731
    assert (count(joined), count(split)) == (1, 2)


# The spike's counterexample (../shared/notes/island-merging-spike.md, §5.4): Neg is always
# live and feeds both the true branch (AddV2) and a fetched Sqrt-like consumer.
DEADNESS_DEMO = """func.func @main(%p: tensor<i1>) -> (tensor<i32>, tensor<i32>) {
  %r:2 = tf_executor.graph {
    %x, %cx = tf_executor.island wraps "tf.Const"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
    %f, %t, %cs = tf_executor.Switch %x, %p : tensor<i32>
    %w, %cw = tf_executor.island wraps "tf.Neg"(%x) : (tensor<i32>) -> tensor<i32>
    %b, %cb = tf_executor.island wraps "tf.AddV2"(%t, %w) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %m, %mi, %cm = tf_executor.Merge %f, %b : tensor<i32>
    %y, %cy = tf_executor.island wraps "tf.Identity"(%w) : (tensor<i32>) -> tensor<i32>
    tf_executor.fetch %m, %y : tensor<i32>, tensor<i32>
  }
  func.return %r#0, %r#1 : tensor<i32>, tensor<i32>
}
"""


def _run_demo(module: Operation, pred: bool) -> list:
    func = next(op for op in module.walk() if op.name == "func.func")
    return run_graph(_graph(module), {func.regions[0].blocks[0].args[0]: pred})


def test_egraft_keeps_the_live_neg_out_of_the_true_branch_island() -> None:
    module = parse(DEADNESS_DEMO)
    coarsen(module)
    verify(module)
    for pred in (False, True):
        assert _run_demo(module, pred) == _run_demo(parse(DEADNESS_DEMO), pred)
    assert _run_demo(module, False)[1] == (False, -4)  # the always-live value stays live


@pytest.mark.tf
def test_tensorflow_pass_makes_a_fetched_value_dead() -> None:
    """TF's pass merges Neg into AddV2's island; with %p false that island is dead, so the
    fetched Identity(Neg) becomes dead: TF's output computes something else."""
    tf = pytest.importorskip("tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    out = tf.mlir.experimental.run_pass_pipeline(DEADNESS_DEMO, "func.func(tf-executor-island-coarsening)")
    tf_module = parse(out)
    assert _run_demo(tf_module, False)[1] == (True, None)        # TF: dead
    assert _run_demo(parse(DEADNESS_DEMO), False)[1] == (False, -4)  # the input: live
    ours = parse(DEADNESS_DEMO)
    coarsen(ours)
    assert tf.mlir.experimental.run_pass_pipeline(print_ir(ours), "")  # TF accepts egraft's output


def test_send_recv_are_barriers() -> None:
    from pathlib import Path

    from tests.peer.runner import Case, run_case, run_lines
    path = Path(__file__).with_name("send_recv.mlir")
    text = path.read_text(encoding="utf-8")
    outcome = run_case(Case("send_recv", path, text, tuple(run_lines(text))))
    assert outcome.passed, outcome.log
