"""Pins made redundant by a Switch on the same predicate (rewrite/structural/tf_switch_pins.py,
used by tf_island_pins.drop_redundant_pins at the end of tf-grappler).

An island pinning output k of a cond's predicate switch ``Switch(p, p)`` while reading output
k of another Switch on ``p`` is dead exactly when it was: the pin goes, and the predicate
Switch with it when nothing else uses it. Checked on generated graphs by the deadness
reference of tests/islands (every feed, dead or live), on hand-written graphs for what must
stay, and (marked ``tf``) on cflow_v1 from /work/tfpeer/graphs in TensorFlow, 3 seeds and the
optional feed left out.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import Operation, parse
from egraft.ir.verifier import verify
from egraft.rewrite.structural.tf_island_pins import drop_redundant_pins

from tests.islands.test_coarsening import _outputs

I32, I1 = "tensor<i32>", "tensor<i1>"


def _ops(module: Operation) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _wrap(lines: list[str], fetched: list[str]) -> str:
    body = "\n    ".join(lines + [f"tf_executor.fetch {', '.join(fetched)} : {', '.join([I32] * len(fetched))}"])
    results = ", ".join([I32] * len(fetched))
    return (f"func.func @main(%arg0: {I32}, %arg1: {I32}, %arg2: {I1}) -> ({results}) {{\n"
            f"  %r:{len(fetched)} = tf_executor.graph {{\n    {body}\n  }}\n"
            f"  func.return {', '.join(f'%r#{i}' for i in range(len(fetched)))} : {results}\n}}\n")


#: An island reading the false output of Switch(%arg0, %p) and pinning the false output of the
#: predicate switch Switch(%p, %p); %p is yielded twice by one island (pred and pred_id).
PINNED = [
    '%p:3 = tf_executor.island { %l = "tf.Less"(%arg0, %arg1) : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
    '      tf_executor.yield %l, %l : tensor<i1>, tensor<i1> }',
    "%pf, %pt, %pc = tf_executor.Switch %p#0, %p#0 : tensor<i1>",
    "%f, %t, %sc = tf_executor.Switch %arg0, %p#1 : tensor<i32>",
    '%n:3 = tf_executor.island { %v = "tf.Neg"(%READ) : (tensor<i32>) -> tensor<i32>\n'
    '      tf_executor.yield %v, %PIN : tensor<i32>, tensor<i1> }',
]


def _pinned(read: str, pin: str) -> Operation:
    return parse(_wrap([line.replace("%READ", read).replace("%PIN", pin) for line in PINNED], ["%n#0"]))


def test_pin_implied_by_same_port_on_same_predicate_goes_with_its_switch() -> None:
    module = _pinned("%f", "%pf")
    before = _outputs(module)
    assert drop_redundant_pins(module) == 1
    verify(module)
    assert _outputs(module) == before
    assert _ops(module)["tf_executor.Switch"] == 1


@pytest.mark.parametrize("read, pin", [("%t", "%pf"),   # the other port: dead when the pin is live
                                       ("%arg0", "%pf")])  # nothing on the predicate read
def test_pin_not_implied_stays(read: str, pin: str) -> None:
    module = _pinned(read, pin)
    before = _outputs(module)
    drop_redundant_pins(module)
    verify(module)
    assert _outputs(module) == before
    assert any(op.name == "tf_executor.Switch" and op.operands[0] is op.operands[1] for op in module.walk())


def test_data_switch_pin_is_not_implied() -> None:
    """A pinned Switch(d, p) output is dead also when d is: another Switch on p says nothing of it."""
    lines = [line.replace("%READ", "%f").replace("%PIN", "%gf") for line in PINNED]
    lines.insert(3, "%gf, %gt, %gc = tf_executor.Switch %arg1, %p#0 : tensor<i32>")
    module = parse(_wrap(lines, ["%n#0"]).replace("tf_executor.yield %v, %gf : tensor<i32>, tensor<i1>",
                                                   "tf_executor.yield %v, %gf : tensor<i32>, tensor<i32>"))
    before = _outputs(module)
    drop_redundant_pins(module)
    assert _outputs(module) == before
    island = [op for op in module.walk() if op.name == "tf_executor.island"][-1]
    assert len(island.results) == 3  # the pin stays (the unused predicate Switch goes)


@st.composite
def _graphs(draw) -> str:
    """Predicates (the fed %arg2, Less islands yielding their value once or twice), predicate
    Switches Switch(p, p), data Switches, and islands that read some switch outputs and pin
    others; some island results and switch outputs fetched."""
    lines: list[str] = []
    preds = ["%arg2"]
    ints = ["%arg0", "%arg1"]
    bool_outs: list[str] = []
    pick = lambda pool: pool[draw(st.integers(0, len(pool) - 1))]  # noqa: E731
    for n in range(draw(st.integers(3, 12))):
        kind = draw(st.sampled_from(["pred", "pswitch", "pswitch", "switch", "switch", "island", "island"]))
        if kind == "pred":
            a, b = pick(ints), pick(ints)
            lines.append(f'%q{n}:3 = tf_executor.island {{ %l{n} = "tf.Less"({a}, {b}) : ({I32}, {I32}) -> {I1}\n'
                         f"      tf_executor.yield %l{n}, %l{n} : {I1}, {I1} }}")
            preds += [f"%q{n}#0", f"%q{n}#1"]
        elif kind == "pswitch":
            p = pick(preds)
            lines.append(f"%pf{n}, %pt{n}, %pc{n} = tf_executor.Switch {p}, {p} : {I1}")
            bool_outs += [f"%pf{n}", f"%pt{n}"]
        elif kind == "switch":
            lines.append(f"%f{n}, %t{n}, %c{n} = tf_executor.Switch {pick(ints)}, {pick(preds)} : {I32}")
            ints += [f"%f{n}", f"%t{n}"]
        elif bool_outs:
            pins = draw(st.lists(st.sampled_from(bool_outs), min_size=1, max_size=2, unique=True))
            types = ", ".join([I32] + [I1] * len(pins))
            lines.append(f'%n{n}:{len(pins) + 2} = tf_executor.island {{ %v{n} = "tf.Neg"({pick(ints)}) : ({I32}) -> {I32}\n'
                         f"      tf_executor.yield %v{n}, {', '.join(pins)} : {types} }}")
            ints.append(f"%n{n}#0")
    fetched = draw(st.lists(st.sampled_from(ints), min_size=1, max_size=3, unique=True))
    return _wrap(lines, fetched)


@settings(max_examples=150, deadline=None)
@given(_graphs())
def test_deadness_preserved(text: str) -> None:
    module = parse(text)
    before = _outputs(module)
    drop_redundant_pins(module)
    verify(module)
    assert _outputs(module) == before, text


GRAPHS = Path(os.environ.get("EGRAFT_TFPEER_GRAPHS", "/work/tfpeer/graphs"))


@pytest.mark.tf
def test_cflow_v1_computes_the_same(tmp_path: Path) -> None:
    """cflow_v1 (v1 cond in a while loop, and a cond after it) through -tf-grappler: TensorFlow's
    outputs equal the original's on 3 seeds and with n_iters left to its default; the cond
    predicate Switches only pinned are gone, and the loop's bias of zeros."""
    source = GRAPHS / "cflow_v1.pb"
    if not source.exists():
        pytest.skip(f"{source} is absent (built by the peer's make_graphs.py)")
    tf = pytest.importorskip("tensorflow")
    from egraft.passes.cli.main import main

    out = tmp_path / "out.pb"
    assert main([str(source), "--tf-input-arrays=x,n_iters", "--tf-output-arrays=y,acc",
                 "-tf-grappler=onednn=true", "-o", str(out)]) in (0, None)

    def load(path: Path):
        graph_def = tf.compat.v1.GraphDef()
        graph_def.ParseFromString(path.read_bytes())
        return graph_def

    def run(graph_def, feeds: dict) -> list[np.ndarray]:
        config = tf.compat.v1.ConfigProto()
        config.graph_options.rewrite_options.disable_meta_optimizer = True
        with tf.Graph().as_default() as graph:
            tf.compat.v1.import_graph_def(graph_def, name="")
            with tf.compat.v1.Session(graph=graph, config=config) as session:
                return session.run(["y:0", "acc:0"], feeds)

    original, optimized = load(source), load(out)
    switches = lambda g: sum(n.op == "Switch" for n in g.node)  # noqa: E731
    assert switches(original) == 14 and switches(optimized) <= 8  # 10 before: the 2 predicate switches go
    adds = sum(n.op == "AddV2" for n in optimized.node)
    assert adds <= 3  # tf-captured-neutral: the loop's MatMul + bias of zeros (through an Enter), the branch's + zeros_like
    for seed in range(3):
        rng = np.random.default_rng(seed)
        for feeds in ({"x:0": rng.standard_normal((1, 64)).astype(np.float32),
                       "n_iters:0": np.int32(rng.integers(1, 8))},
                      {"x:0": rng.standard_normal((1, 64)).astype(np.float32)}):
            for a, b in zip(run(optimized, feeds), run(original, feeds)):
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
