"""One GraphDef, several fetch sets: `-tf-grappler` must not change what any of them runs.

A TF1 graph is run with different fetches in turn (the initializer `init`, the saver's restore op
`save/restore_all`, its save tensor `save/Identity`, the inference output `y`). Grappler keeps the
fetched nodes and never makes one fetch run another's nodes; egraft's island coarsening merged the
nodes of all of them into one island, whose export made the restore op wait on the initializers and
a save, and the forwarding of the fetched `save/Identity` dropped its wait on the checkpoint's
`MergeV2Checkpoints` (found by H2). Checked here:

* TensorFlow, on the TF1 SavedModelBuilder graph of tests/savedmodel/models.py, each fetch run on
  its own in a TF1 Session (Grappler off in the session) before and after: the same effectful
  nodes run for each (step stats), and init, restore, infer and save behave as the original's
  (variable values, outputs, checkpoint files written only by the save).
* A hypothesis property on generated graphs of variables, assignments, reads, arithmetic, NoOps
  and control edges with several fetches: for each fetch, the effectful nodes it runs (its
  ancestors over data and control edges) are the original's, and every ordering between two of
  them that the original had is still there.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from egraft.ir.graphdef.messages import GraphDef
from egraft.passes.cli.main import main

#: Ops of the generated graphs (and of the TF1 graph) whose running is visible.
EFFECTFUL = frozenset({"AssignVariableOp", "AssignAddVariableOp", "SaveV2", "MergeV2Checkpoints", "RestoreV2"})


def optimize(graph: GraphDef, tmp: Path, outputs: list[str], control_outputs: list[str],
             inputs: list[str] = ()) -> GraphDef:
    """``graph`` through `egraft-opt -tf-grappler` with those feeds and fetches."""
    src, out = tmp / "in.pb", tmp / "out.pb"
    src.write_bytes(graph.SerializeToString())
    flags = [f"--tf-output-arrays={','.join(outputs)}", f"--tf-control-output-arrays={','.join(control_outputs)}"]
    if inputs:
        flags.append(f"--tf-input-arrays={','.join(inputs)}")
    err = io.StringIO()
    code = main([str(src), *flags, "-tf-grappler", "-o", str(out)], stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    result = GraphDef()
    result.ParseFromString(out.read_bytes())
    return result


def ancestors(graph: GraphDef, name: str) -> set[str]:
    """``name`` and every node it waits on, over data and control edges."""
    inputs = {n.name: [i.lstrip("^").split(":")[0] for i in n.input] for n in graph.node}
    seen, work = {name}, [name]
    while work:
        for i in inputs[work.pop()]:
            if i not in seen:
                seen.add(i)
                work.append(i)
    return seen


def effectful_runs(graph: GraphDef, name: str) -> set[str]:
    ops = {n.name: n.op for n in graph.node}
    return {a for a in ancestors(graph, name) if ops[a] in EFFECTFUL}


def feeds_needed(graph: GraphDef, name: str) -> set[str]:
    """The Placeholders fetching ``name`` needs fed."""
    ops = {n.name: n.op for n in graph.node}
    return {a for a in ancestors(graph, name) if ops[a] == "Placeholder"}


def orderings(graph: GraphDef, names: set[str]) -> set[tuple[str, str]]:
    """Pairs (a, b) of effectful nodes among ``names`` where b waits on a."""
    ops = {n.name: n.op for n in graph.node}
    return {(a, b) for b in names if ops.get(b) in EFFECTFUL for a in ancestors(graph, b)
            if a != b and ops.get(a) in EFFECTFUL}


# --- TensorFlow: the TF1 SavedModelBuilder graph -------------------------------------------------------

TF1_OUTPUTS = ["y", "save/Identity"]
TF1_CONTROLS = ["init", "save/restore_all"]


#: The TF1 SavedModelBuilder models of tests/savedmodel/models.py and their variables' shapes
#: (tf1_control_flow: v1 cond and while_loop, Switch/Merge/Enter/Exit, around its variable's read).
TF1_MODELS = {"tf1_builder": {"w": (4, 3), "b": (3,)}, "tf1_control_flow": {"w": (4, 3)}}


def _tf1_graph(name: str = "tf1_builder") -> GraphDef:
    from egraft.ir.graphdef import savedmodel as sm
    from tests.savedmodel.models import saved_model

    saved, _ = sm.load_saved_model(saved_model(name))
    graph = GraphDef()
    graph.ParseFromString(saved.meta_graphs[0].graph_def.SerializeToString())
    return graph


class _Session:
    """A TF1 Session on one GraphDef, Grappler off (what runs is what the GraphDef says)."""

    def __init__(self, graph: GraphDef, variables: tuple[str, ...] = ("w", "b")) -> None:
        import tensorflow as tf

        v1 = tf.compat.v1
        self.graph = tf.Graph()
        with self.graph.as_default():
            v1.import_graph_def(v1.GraphDef.FromString(graph.SerializeToString()), name="")
        config = v1.ConfigProto()
        config.graph_options.rewrite_options.disable_meta_optimizer = True
        self.session = v1.Session(graph=self.graph, config=config)
        self.names = variables

    def run(self, fetch: str, feeds: dict[str, Any] | None = None) -> tuple[Any, set[str]]:
        """The fetch's value and the effectful nodes that ran for it."""
        import tensorflow as tf

        v1 = tf.compat.v1
        options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
        meta = v1.RunMetadata()
        value = self.session.run(fetch, feeds or {}, options=options, run_metadata=meta)
        ops = {op.name: op.type for op in self.graph.get_operations()}
        ran = {s.node_name for dev in meta.step_stats.dev_stats for s in dev.node_stats}
        return value, {n for n in ran if ops.get(n) in EFFECTFUL}

    def variables(self) -> dict[str, np.ndarray]:
        import tensorflow as tf

        with self.graph.as_default():
            reads = {v: tf.raw_ops.ReadVariableOp(resource=self.graph.get_tensor_by_name(f"{v}:0"), dtype=tf.float32)
                     for v in self.names}
        return self.session.run(reads)

    def assign(self, values: dict[str, np.ndarray]) -> None:
        import tensorflow as tf

        with self.graph.as_default():
            ops = [tf.raw_ops.AssignVariableOp(resource=self.graph.get_tensor_by_name(f"{v}:0"), value=value)
                   for v, value in values.items()]
        self.session.run(ops)


def _checkpoint_files(prefix: Path) -> list[str]:
    return sorted(p.name for p in prefix.parent.iterdir() if p.name.startswith(prefix.name))


@pytest.mark.tf
@pytest.mark.parametrize("model", sorted(TF1_MODELS))
def test_tf1_graph_each_fetch_runs_what_it_ran(tmp_path: Path, model: str) -> None:
    """init, restore, infer and save, each run on its own, behave as the original's, and run the same
    effectful nodes (RunMetadata step stats, Grappler off in the session)."""
    graph = _tf1_graph(model)
    optimized = optimize(graph, tmp_path, TF1_OUTPUTS, TF1_CONTROLS, ["x"])
    rng = np.random.default_rng(11)
    new_values = {v: rng.normal(size=shape).astype(np.float32) for v, shape in TF1_MODELS[model].items()}
    names = tuple(new_values)
    source = tmp_path / "source" / "ckpt"
    source.parent.mkdir()
    writer = _Session(graph, names)  # a checkpoint holding other values than the initializers'
    writer.run("init")
    writer.assign(new_values)
    writer.run("save/Identity", {"save/Const:0": str(source)})
    results = []
    for label, g in (("original", graph), ("optimized", optimized)):
        out = tmp_path / label
        out.mkdir()
        sess = _Session(g, names)
        record: dict[str, Any] = {}
        _, record["init ran"] = sess.run("init", {"save/Const:0": str(out / "init")})
        record["after init"] = sess.variables()
        record["files after init"] = _checkpoint_files(out / "init")
        _, record["restore ran"] = sess.run("save/restore_all", {"save/Const:0": str(source)})
        record["after restore"] = sess.variables()
        record["y"] = [sess.run("y:0", {"x:0": np.random.default_rng(seed).normal(size=(2, 4)).astype(np.float32)})[0]
                       for seed in (0, 1, 2)]
        saved, record["save ran"] = sess.run("save/Identity:0", {"save/Const:0": str(out / "saved")})
        record["save returns"] = saved.decode().replace(str(out), "")
        record["files after save"] = _checkpoint_files(out / "saved")
        results.append(record)
    want, got = results
    assert want["init ran"] == got["init ran"] == {f"{v}/Assign" for v in names}
    assert want["restore ran"] == got["restore ran"]
    assert {"save/RestoreV2", "save/AssignVariableOp"} <= got["restore ran"]
    assert want["save ran"] == got["save ran"] == {"save/SaveV2", "save/MergeV2Checkpoints"}
    assert got["files after init"] == want["files after init"] == []
    assert got["files after save"] == want["files after save"] and got["files after save"]
    assert got["save returns"] == want["save returns"]
    for key in ("after init", "after restore"):
        for v in names:
            np.testing.assert_array_equal(got[key][v], want[key][v], err_msg=f"{key}: {v}")
    for v in names:
        np.testing.assert_array_equal(got["after restore"][v], new_values[v])
    for a, b in zip(got["y"], want["y"]):
        np.testing.assert_allclose(a, b, rtol=1e-4)
    # The optimized saver's checkpoint restores into the original.
    check = _Session(graph, names)
    check.run("save/restore_all", {"save/Const:0": str(tmp_path / "optimized" / "saved")})
    for v, value in check.variables().items():
        np.testing.assert_array_equal(value, new_values[v])


def test_tf1_graph_fetch_reach_is_kept(tmp_path: Path) -> None:
    """Without TensorFlow: in the exported GraphDef each fetch waits on the effectful nodes it waited
    on in the original, and on no other (the restore op not on the initializers, the save tensor on
    the checkpoint's SaveV2 and MergeV2Checkpoints)."""
    pytest.importorskip("tensorflow", reason="the TF1 test model is built by TensorFlow")
    graph = _tf1_graph()
    optimized = optimize(graph, tmp_path, TF1_OUTPUTS, TF1_CONTROLS, ["x"])
    for fetch in TF1_OUTPUTS + TF1_CONTROLS:
        assert effectful_runs(optimized, fetch) == effectful_runs(graph, fetch), fetch
        assert orderings(optimized, ancestors(optimized, fetch)) >= orderings(graph, ancestors(graph, fetch)), fetch
    assert effectful_runs(optimized, "save/Identity") == {"save/SaveV2", "save/MergeV2Checkpoints"}


# --- the property: generated graphs with several fetches ---------------------------------------------

def _node(graph: GraphDef, name: str, op: str, inputs: list[str], **attrs: Any) -> None:
    from egraft.ir.graphdef.messages import DataType

    node = graph.node.add(name=name, op=op)
    node.input.extend(inputs)
    for key, value in attrs.items():
        if key in ("dtype", "T"):
            node.attr[key].type = DataType.Value(value)
        elif key == "value":
            node.attr[key].tensor.dtype = DataType.Value("DT_FLOAT")
            node.attr[key].tensor.tensor_shape.SetInParent()
            node.attr[key].tensor.float_val.append(value)
        elif key == "shape":
            node.attr[key].shape.SetInParent()
        elif isinstance(value, str):
            node.attr[key].s = value.encode()


@st.composite
def fetch_set_graphs(draw: Any) -> tuple[GraphDef, list[str], list[str], list[str]]:
    """Variables, their assignments and reads, float arithmetic, NoOps, random control edges (only
    to later nodes: a DAG) and maybe a fed Placeholder; fetches: some float nodes (data) and some
    assignments/NoOps (control), so that different fetches need different, overlapping parts of
    the graph; and the feeds."""
    graph = GraphDef()
    n_vars = draw(st.integers(1, 3))
    floats: list[str] = []
    controllable: list[str] = []   # nodes a later node may wait on
    waiters: list[str] = []        # nodes without data outputs (control outputs)
    for v in range(n_vars):
        _node(graph, f"v{v}", "VarHandleOp", [], dtype="DT_FLOAT", shape=True, shared_name=f"v{v}", container="")
    feeds = ["p"] if draw(st.booleans()) else []
    for name in feeds:
        _node(graph, name, "Placeholder", [], dtype="DT_FLOAT", shape=True)
        floats.append(name)
    for i in range(draw(st.integers(4, 14))):
        kind = draw(st.sampled_from(["const", "read", "add", "identity", "assign", "assign_add", "noop"]))
        controls = sorted(set(draw(st.lists(st.sampled_from(controllable), max_size=2)))) if controllable else []
        ctl = [f"^{c}" for c in controls]
        name = f"n{i}"
        if kind == "const" or (kind in ("add", "identity", "assign", "assign_add") and not floats):
            _node(graph, name, "Const", ctl, dtype="DT_FLOAT", value=float(i))
            floats.append(name)
        elif kind == "read":
            _node(graph, name, "ReadVariableOp", [f"v{draw(st.integers(0, n_vars - 1))}", *ctl], dtype="DT_FLOAT")
            floats.append(name)
        elif kind == "add":
            a, b = draw(st.sampled_from(floats)), draw(st.sampled_from(floats))
            _node(graph, name, "AddV2", [a, b, *ctl], T="DT_FLOAT")
            floats.append(name)
        elif kind == "identity":
            _node(graph, name, "Identity", [draw(st.sampled_from(floats)), *ctl], T="DT_FLOAT")
            floats.append(name)
        elif kind in ("assign", "assign_add"):
            op = "AssignVariableOp" if kind == "assign" else "AssignAddVariableOp"
            _node(graph, name, op, [f"v{draw(st.integers(0, n_vars - 1))}", draw(st.sampled_from(floats)), *ctl],
                  dtype="DT_FLOAT")
            waiters.append(name)
        else:
            _node(graph, name, "NoOp", ctl)
            waiters.append(name)
        controllable.append(name)
    candidates = [f for f in floats if f not in feeds]
    if not candidates:
        _node(graph, "out", "Const", [], dtype="DT_FLOAT", value=0.5)
        candidates = ["out"]
    outputs = sorted(set(draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3))))
    controls = sorted(set(draw(st.lists(st.sampled_from(waiters), max_size=3)))) if waiters else []
    return graph, outputs, controls, feeds


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(fetch_set_graphs())
def test_each_fetch_runs_the_same_effects_in_the_same_order(
        tmp_path: Path, case: tuple[GraphDef, list[str], list[str], list[str]]) -> None:
    """For each fetch of a generated graph, the effectful nodes it reaches in the exported GraphDef
    are those it reached in the original (pure nodes may go), each ordering between two of them
    the original had (one waited on the other) is still there, and it needs no feed it did not."""
    graph, outputs, controls, feeds = case
    work = Path(os.path.join(tmp_path, str(abs(hash(graph.SerializeToString())))))
    work.mkdir(exist_ok=True)
    optimized = optimize(graph, work, outputs, controls, feeds)
    for fetch in outputs + controls:
        before, after = effectful_runs(graph, fetch), effectful_runs(optimized, fetch)
        assert after == before, f"fetch {fetch}: runs {sorted(after)}, the original {sorted(before)}"
        assert feeds_needed(optimized, fetch) <= feeds_needed(graph, fetch), f"fetch {fetch} needs another feed"
        assert orderings(optimized, before) >= orderings(graph, before), f"fetch {fetch}: an ordering is lost"


# --- the grouping itself ----------------------------------------------------------------------------------

def _islands_after_coarsening(graph: GraphDef, outputs: list[str], controls: list[str]) -> list[set[str]]:
    """The node names per island of the graph's tf_executor form after island coarsening."""
    from egraft.ir.graphdef.import_graphdef import import_graphdef
    from egraft.passes.tf.island_coarsening import coarsen
    from egraft.passes.tf.tfg_to_executor import tfg_to_executor

    module = tfg_to_executor(import_graphdef(graph), outputs, control_fetches=controls)
    coarsen(module)
    return [{str(inner.attr("_mlir_name").value) for inner in op.walk() if inner.attr("_mlir_name") is not None}
            for op in module.walk() if op.name == "tf_executor.island"]


def _variable_graph(writes: bool) -> GraphDef:
    """A variable read by two outputs; with ``writes``, an initializer and a 'restore' assigning it,
    each run through a NoOp of its own."""
    graph = GraphDef()
    _node(graph, "v", "VarHandleOp", [], dtype="DT_FLOAT", shape=True, shared_name="v", container="")
    _node(graph, "one", "Const", [], dtype="DT_FLOAT", value=1.0)
    _node(graph, "read", "ReadVariableOp", ["v"], dtype="DT_FLOAT")
    _node(graph, "y", "AddV2", ["read", "one"], T="DT_FLOAT")
    _node(graph, "z", "AddV2", ["read", "read"], T="DT_FLOAT")
    if writes:
        _node(graph, "init_value", "Const", [], dtype="DT_FLOAT", value=0.0)
        _node(graph, "v/Assign", "AssignVariableOp", ["v", "init_value"], dtype="DT_FLOAT")
        _node(graph, "init", "NoOp", ["^v/Assign"])
        _node(graph, "restored", "Const", [], dtype="DT_FLOAT", value=2.0)
        _node(graph, "restore/Assign", "AssignVariableOp", ["v", "restored"], dtype="DT_FLOAT")
        _node(graph, "restore", "NoOp", ["^restore/Assign"])
    return graph


def test_islands_of_different_fetch_sets_stay_apart() -> None:
    """The initializer's and the restore's assignments, and the outputs' reads, land in islands of
    their own fetch sets; each NoOp waiting on an assignment stays out of the assignment's island."""
    islands = _islands_after_coarsening(_variable_graph(True), ["y", "z"], ["init", "restore"])
    home = {name: i for i, members in enumerate(islands) for name in members}
    assert home["v/Assign"] != home["restore/Assign"]
    assert home["v/Assign"] != home["init"] and home["restore/Assign"] != home["restore"]
    assert home["read"] not in (home["v/Assign"], home["restore/Assign"])


def test_a_graph_without_writes_is_one_island() -> None:
    """Reads, a handle and arithmetic for two outputs (a Keras model with variables): nothing writes,
    so the two outputs' fetch sets do not split the graph."""
    islands = _islands_after_coarsening(_variable_graph(False), ["y", "z"], [])
    assert len(islands) == 1 and {"v", "read", "y", "z", "one"} <= islands[0]
