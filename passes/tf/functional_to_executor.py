"""`tf-functional-to-executor-conversion`: a tf function body becomes one island of a graph.

TensorFlow's pass of the same name, so its RUN lines work.  A function whose body is
not already a `tf_executor.graph` (followed by the return) is rewritten as

    %r = tf_executor.graph {
      %outs, %ctl = tf_executor.island { <the body's ops>; tf_executor.yield <returned values> }
      tf_executor.fetch %outs          (the island's control token when nothing is returned)
    }
    return %r

which is the form the rest of the GraphDef path reads: `egraft-opt --emit=tf_executor`
and an export to `.pb`/`.pbtxt` (through `executor_to_tfg`) accept the functional form
this way instead of leaving it unchanged or refusing it.
"""

from __future__ import annotations

import attrs

from egraft.ir import Block, Operation, Region
from egraft.ir.dialects.tf_types import CONTROL

from egraft.passes.manager.registry import Pass, PassContext, register_pass


def _is_executor_body(block: Block) -> bool:
    """A body that is only a graph and the return (TF leaves those alone)."""
    ops = block.ops
    return len(ops) == 2 and ops[0].name == "tf_executor.graph"


def functional_to_executor(func: Operation) -> bool:
    """Wrap `func`'s body in a graph with one island; False if there was nothing to do
    (no body, several blocks, or already in executor form)."""
    region = func.regions[0] if func.regions else None
    if region is None or len(region.blocks) != 1:
        return False
    body = region.blocks[0]
    ret = body.terminator
    if ret is None or _is_executor_body(body):
        return False
    results = list(ret.operands)
    types = [v.type for v in results]
    island_body = Block()
    island_body.extend([op.detach() for op in body.ops if op is not ret])
    island_body.append(Operation.create("tf_executor.yield", results))
    island = Operation.create("tf_executor.island", (), [*types, CONTROL], regions=[Region(blocks=[island_body])],
                              loc=func.loc)
    fetched = list(island.results[:-1]) if types else [island.results[-1]]
    graph_body = Block()
    graph_body.extend([island, Operation.create("tf_executor.fetch", fetched)])
    graph = Operation.create("tf_executor.graph", (), types, regions=[Region(blocks=[graph_body])], loc=func.loc)
    body.insert_before(ret, graph)
    ret.set_operands(list(graph.results))
    return True


def module_to_executor(module: Operation) -> int:
    """Convert every function directly in `module`; the number converted."""
    funcs = [op for region in module.regions for op in region.ops() if op.name == "func.func"]
    return sum(functional_to_executor(f) for f in funcs)


@register_pass
@attrs.define
class FunctionalToExecutor(Pass):
    """Wraps each function body (tf ops in functional form) into a tf_executor.graph holding
    one island that yields the returned values, as TensorFlow's pass of the same name does;
    a body that already is a graph is left alone."""

    NAME = "tf-functional-to-executor-conversion"
    SUMMARY = "Transform a function body into a tf_executor graph with a single island"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        functional_to_executor(op)
