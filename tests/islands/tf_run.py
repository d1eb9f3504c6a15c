"""Run tf_executor modules in TensorFlow with island semantics intact (tests and bench only).

egraft's export (``executor_to_tfg`` then ``export_graphdef``) turns every op of an island
into its own node carrying the island's *control* operands, so a multi-op island's rule
"dead if any captured value is dead" is lost: each node is dead only when its own inputs
are.  Exported that way, a deadness-unsafe merge would run exactly like the original and
no execution could show it.  :func:`island_exact_graphdef` therefore first gives every
multi-op island that captures values a join island ``tf.IdentityN(captured...)`` as an
extra control operand: in TensorFlow a node with a dead input is dead and so is its
control edge, so every exported node of the island is dead exactly when the island is.

Node names come from ``_mlir_name`` or, for TensorFlow's MLIR printed with debug info, from
the op's location (``loc(fused["Op:", "name"])``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from egraft.ir import Operation
from egraft.ir.core import attributes as A
from egraft.ir.graphdef.export_graphdef import export_graphdef
from egraft.ir.core.location import FusedLoc, Location, NameLoc
from egraft.passes.tf.executor_to_tfg import executor_to_tfg
from egraft.rewrite.islands.breakup import island_inputs, make_island

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "tfmodels"


def loc_name(loc: Location) -> str | None:
    """The node name a location carries: a name location, or the last one in a fusion."""
    if isinstance(loc, FusedLoc):
        names = [part for part in loc.locations if isinstance(part, NameLoc)]
        loc = names[-1] if names else loc
    return loc.name if isinstance(loc, NameLoc) else None


def node_name(op: Operation) -> str | None:
    """``_mlir_name``, else the location's name."""
    name = op.attr("_mlir_name")
    if isinstance(name, A.StringAttr) and isinstance(name.value, str):
        return name.value
    return loc_name(op.loc)


def executor_graph(module: Operation) -> Operation:
    return next(op for op in module.walk() if op.name == "tf_executor.graph")


def islands(module: Operation) -> list[Operation]:
    return [op for op in executor_graph(module).regions[0].blocks[0] if op.name == "tf_executor.island"]


def island_exact_graphdef(module: Operation) -> Any:
    """``module`` (tf_executor, modified in place) as a TensorFlow GraphDef that keeps island deadness."""
    block = executor_graph(module).regions[0].blocks[0]
    for op in module.walk():
        name = node_name(op)
        if name is not None and op.name not in ("tf_executor.island", "tf_executor.yield"):
            op.set_attr("_mlir_name", A.StringAttr(name))
    for k, island in enumerate(islands(module)):
        captured = island_inputs(island, block)
        if len(island.regions[0].blocks[0].ops) < 3 or not captured:
            continue  # one op consumes what its island captures: its node is exact already
        ident = Operation.create("tf.IdentityN", captured, [v.type for v in captured],
                                 {"_mlir_name": A.StringAttr(f"island_deadness_{k}")}, loc=island.loc)
        join = make_island([], [ident], list(ident.results), island.loc)
        block.insert_before(island, join)
        island.set_operands([*island.operands, join.results[-1]])
    from tensorflow.core.framework import graph_pb2
    return graph_pb2.GraphDef.FromString(export_graphdef(executor_to_tfg(module)).SerializeToString())


def run(graph_def: Any, feeds: dict[str, Any], fetches: Sequence[str]) -> list[Any] | str:
    """Fetched values, or the error's last line (a dead fetch is an error in TensorFlow).

    A 20 s timeout turns a hang (a loop waiting on a value that never comes) into an error.
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto()
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = tf.compat.v1.OptimizerOptions.L0
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        try:
            return sess.run([f if ":" in f else f + ":0" for f in fetches],
                            {k if ":" in k else k + ":0": v for k, v in feeds.items()},
                            options=tf.compat.v1.RunOptions(timeout_in_ms=20000))
        except tf.errors.OpError as err:
            return f"{type(err).__name__}: {err.message.strip().splitlines()[-1]}"
