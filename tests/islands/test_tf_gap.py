"""TensorFlow's island coarsening vs egraft's on cflow_v1 (v1 control flow), op by op.

TensorFlow's pass ignores deadness.  Each group it forms is mapped back to the original ops
(by node name, from the debug-info locations), every member gets egraft's deadness
signature, and the groups joining different signatures are checked: a merge is harmless
exactly when every value leaving the merged island (and its control token, if used) comes
from a member whose signature is the union of the group's, because then no value anyone
outside observes is dead more often.  On cflow_v1 all six of TensorFlow's cross-signature
merges are of that kind (the smaller-signature members feed only ops inside the island),
and egraft's sink rule reaches them.  Execution backs both verdicts: the original, TF's
and egraft's coarsened graphs, exported with island deadness intact, compute the same on
feeds taking every branch; on the spike's graph TF's output makes a fetched value dead.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from egraft.ir import Operation, parse, print_ir
from egraft.ir.core import attributes as A
from egraft.passes.tf.island_coarsening import coarsen
from egraft.rewrite.islands.facts import collect, signatures

from .test_coarsening import DEADNESS_DEMO
from .tf_run import SHARED, executor_graph, island_exact_graphdef, islands, node_name, run

pytestmark = [pytest.mark.tf, pytest.mark.peer]
PB = SHARED / "graphs" / "cflow_v1.pb"
COARSEN = "func.func(tf-executor-island-coarsening)"
_ATOM = re.compile(r"\(SwA \(IV (\d+) (\d+)\) (\d+)\)|\(OpA (\d+)\)")

#: TensorFlow's groups joining different egraft signatures (named by a member), all harmless.
TF_CROSS_SIGNATURE = {"outer_cond/add", "outer_cond/sub", "loop/add", "loop/cond/mul", "loop/cond/add",
                      "loop/add_1"}


@pytest.fixture(scope="module")
def tf():
    if not PB.exists():
        pytest.skip(f"{PB} not found (shared TensorFlow models)")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return pytest.importorskip("tensorflow")


@pytest.fixture(scope="module")
def cflow_text(tf) -> str:
    """cflow_v1 as TensorFlow imports it (the text of ../shared/tfmodels/mlir/cflow_v1.mlir) with names."""
    from tensorflow.core.framework import graph_pb2
    graph_def = graph_pb2.GraphDef.FromString(PB.read_bytes())
    return tf.mlir.experimental.convert_graph_def(graph_def, pass_pipeline="", show_debug_info=True)


def _atoms(text: str, names: list[str | None]) -> frozenset[str]:
    """A ``dd`` set with node ids replaced by names: ``Greater==true``, ``dead(loop/Exit_1)``."""
    out = set()
    for pred, _, port, opaque in _ATOM.findall(text):
        out.add(f"{names[int(pred)]}=={'true' if port == '1' else 'false'}" if pred else f"dead({names[int(opaque)]})")
    return frozenset(out)


def _member_names(island: Operation) -> list[str]:
    return [node_name(op) for op in island.regions[0].blocks[0].ops[:-1]]  # type: ignore[misc]


def _escaping(island: Operation) -> list[str]:
    """Members whose value is used outside the island; ``<control>`` for a used control token."""
    body = island.regions[0].blocks[0]
    out = [node_name(v.owner_op) for r, v in zip(island.results, body.last.operands) if r.uses]
    return out + (["<control>"] if island.results[-1].uses else [])  # type: ignore[list-item]


def test_every_tensorflow_merge_across_signatures_is_invisible(tf, cflow_text: str) -> None:
    module = parse(cflow_text)
    nodes = collect(executor_graph(module))
    names = [node_name(op.regions[0].blocks[0].ops[0]) if op.name == "tf_executor.island" else node_name(op)
             for op in nodes.ops]
    sig = {names[n]: (_atoms(dd, names), bd) for n, (dd, bd) in signatures(nodes).items()}
    assert len(set(sig.values())) == 24

    tf_module = parse(tf.mlir.experimental.run_pass_pipeline(cflow_text, COARSEN, show_debug_info=True))
    tf_groups = [g for g in islands(tf_module) if len(g.regions[0].blocks[0].ops) > 1]
    assert len(tf_groups) == 18
    crossing = set()
    for island in tf_groups:
        members = _member_names(island)
        if len({sig[m] for m in members}) == 1:
            continue
        union = frozenset().union(*(sig[m][0] for m in members))
        escaping = [m for m in _escaping(island) if m != "<control>"]
        assert escaping and all(sig[m][0] == union for m in escaping), (members, escaping)
        crossing.update(escaping)
    assert crossing == TF_CROSS_SIGNATURE

    ours = parse(cflow_text)
    coarsen(ours)
    our_groups = [set(_member_names(g)) for g in islands(ours)]
    assert len(our_groups) == 11
    apart = [sorted(_member_names(g)) for g in tf_groups
             if not any(set(_member_names(g)) <= ours_ for ours_ in our_groups)]
    # TF keeps loop/Const and loop/mul/y out of the pivot's island and sinks them into
    # loop/add_1's; egraft keeps them with the pivot (same signature) and sinks the rest.
    assert apart == [["loop/Const", "loop/Identity_2", "loop/Sum", "loop/add_1", "loop/mul", "loop/mul/y"]]


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["outer-true", "outer-false"])
def test_coarsened_cflow_runs_like_the_original(tf, cflow_text: str, sign: float) -> None:
    """x's sign picks the outer cond's branch; n_iters 1..4 runs the inner cond both ways."""
    tf_text = tf.mlir.experimental.run_pass_pipeline(cflow_text, COARSEN, show_debug_info=True)
    ours = parse(cflow_text)
    coarsen(ours)
    graphs = [island_exact_graphdef(m) for m in (parse(cflow_text), parse(tf_text), ours)]
    assert sum(n.name.startswith("island_deadness_") for n in graphs[1].node) == 8  # TF's islands capturing values
    for n_iters in range(1, 5):
        feeds = {"x": np.full((1, 64), 0.1 * sign, np.float32), "n_iters": np.int32(n_iters)}
        original, tf_out, egraft_out = (run(g, feeds, ["y", "acc"]) for g in graphs)
        assert not isinstance(original, str), original
        for other in (tf_out, egraft_out):
            assert not isinstance(other, str), other
            for a, b in zip(original, other):
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_tensorflow_makes_the_demo_fetch_dead_when_run(tf) -> None:
    """The spike's graph, executed: with %p false TF's island holding Neg and the true branch's
    AddV2 is dead, so the fetched Identity(Neg) has no value; egraft's output matches the input."""
    module = parse(DEADNESS_DEMO)
    for k, op in enumerate(op for op in module.walk() if op.name.startswith("tf.") or op.name == "tf_executor.Merge"):
        op.set_attr("_mlir_name", A.StringAttr(f"{op.name.rsplit('.', 1)[-1]}_{k}"))
    text = print_ir(module)
    fetch = executor_graph(module).regions[0].blocks[0].last.operands
    y = fetch[1].owner_op.regions[0].blocks[0].ops[0]  # the island's Identity
    fetches = [f"{node_name(fetch[0].owner_op)}:0", node_name(y)]
    tf_module = parse(tf.mlir.experimental.run_pass_pipeline(text, COARSEN))
    ours = parse(text)
    coarsen(ours)
    results = {label: [run(island_exact_graphdef(m), {"arg0": pred}, fetches) for pred in (False, True)]
               for label, m in (("original", parse(text)), ("tf", tf_module), ("egraft", ours))}
    assert [[int(v) for v in r] for r in results["original"]] == [[4, -4], [0, -4]]
    assert results["egraft"] == results["original"]
    assert results["tf"][0] == "InvalidArgumentError: Retval[0] does not have value"  # p false: dead
    assert results["tf"][1] == results["original"][1]
