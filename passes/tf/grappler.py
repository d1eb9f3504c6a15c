"""`tf-grappler`: Grappler's optimizer families on a TensorFlow graph, as rule sets (issue #12).

    egraft-opt model.pb --tf-input-arrays=x --tf-output-arrays=y -tf-grappler -o out.pb
    egraft-opt model.pb -tf-grappler="dependency=false report=true" -o out.pbtxt
    egraft-opt tf_executor.mlir -tf-grappler

**Where it anchors, and why.** The rules are on tf ops inside tf_executor islands (where
`patterns/tf_rules.py` and the executor canonicalization already work), but a `.pb` input
is a tfg module, and which nodes are needed depends on the feeds and fetches, which only
the tfg -> tf_executor conversion knows (`passes/tf/tf_io_options.py`). So the pass runs
on the `builtin.module`: a tfg module is converted to tf_executor with the pass's feeds and
fetches (`inputs=`, `outputs=`, `control-outputs=`, which egraft-opt fills from
`--tf-input-arrays`, `--tf-output-arrays`, `--tf-control-output-arrays`; without them
every node nothing consumes is fetched), optimized, and converted back, so the output is
the form the input had and a `.pb` keeps its fetched names (the export restores them). A
tf_executor module is optimized in place, each function's fetch being its outputs.

**Families.** Each is one entry of `FAMILIES`: its on/off option (`dependency=false`),
Grappler's name for its report line, the rule sets it runs through `rewrite/phases.py`
(with canonicalize's budgets) and the module registering them. The model pruner has no
rules: it is reachability from the fetches, `tf-executor-graph-pruning`'s. Families run in
Grappler's order, and the whole list again (`iterations=`, Grappler's default 2) while
the graph still shrinks. `report=true` emits one line per family and round, in
Grappler's form: `dependency optimizer: Graph size after: 548 nodes (-505), time = 142ms`.
Nodes are counted on the tf_executor form: the ops of each graph but its fetch. On a
GraphDef that is its node count less the fed placeholders (`@main`'s arguments) and the
fetched nodes the passes removed (the export gives their names back, as Identity or NoOp).
"""

from __future__ import annotations

import importlib
import time

import attrs

from egraft.ir import Diagnostic, Operation
from egraft.ir.erasure import erase_all

from egraft.passes.manager.limits import (DEFAULT_MAX_ENODES, DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT, budget,
                                          fold_element_limit_option)
from egraft.passes.manager.registry import Pass, PassContext, PassFailure, option, register_pass
from egraft.passes.tf.graph_pruning import GraphPruning, graphs_in
from egraft.passes.tf.tf_io_options import EntrySignature, Feed, parse_tensor


@attrs.frozen
class Family:
    """One Grappler optimizer family: its option, its name in reports, the rule sets it runs
    (none: the pass's own step, the pruner) and the module that registers them."""

    option: str
    label: str
    rule_sets: tuple[str, ...] = ()
    module: str = ""  # '' for built-in sets
    driver: str = "egraph"  # the driver its rules run on unless the pass's driver= says otherwise
    default: bool = True    # whether it runs unless switched off

    @property
    def field(self) -> str:
        return self.option.replace("-", "_")


#: The families, in the order Grappler's meta-optimizer runs them. Adding one is one entry.
#: The dependency rules only forward values (nothing to choose between), so they run greedily:
#: the e-graph round trip of a 1,000-node model costs ~0.5 s for the same result.
#: Constant and batchnorm folding are off by default for now: on mobilenetv2 in this pass's
#: form (one island per node) they changed nothing in 2 s and 16 s (their rules see one
#: island's region at a time); `constant-folding=true batchnorm=true` runs them.
FAMILIES = (
    Family("pruning", "model pruner"),
    Family("constant-folding", "constant folding", ("tf-constant-folding",), default=False),
    Family("batchnorm", "batchnorm folding", ("tf-batchnorm-folding",), default=False),
    Family("control-flow", "loop optimizer", ("tf-control-flow",), "egraft.patterns.grappler.control_flow", "greedy",
           default=False),
    Family("dependency", "dependency optimizer", ("grappler-dependency",), "egraft.patterns.grappler.dependency",
           "greedy"),
)


def _family_options(cls: type) -> type:
    """One `<family>=true|false` option per entry of `FAMILIES` (before attrs makes the class)."""
    for family in FAMILIES:
        cls.__annotations__[family.field] = "bool"
        setattr(cls, family.field, option(family.default, f"Run Grappler's {family.label}"))
    return cls


def node_count(top: Operation) -> int:
    """GraphDef nodes of the tf_executor graphs under ``top``: their ops, the fetch excepted."""
    return sum(len(g.regions[0].blocks[0].ops) - 1 for g in graphs_in(top))


@register_pass
@attrs.define
@_family_options
class TfGrappler(Pass):
    """Runs Grappler's optimizer families (model pruner, dependency optimizer, ...) as rule
    sets on a TensorFlow graph: a GraphDef (tfg, converted to tf_executor with the feeds and
    fetches of --tf-input-arrays/--tf-output-arrays and back) or a tf_executor module.
    Each family can be switched off (`dependency=false`); `report=true` prints Grappler's
    per-optimizer lines."""

    NAME = "tf-grappler"
    SUMMARY = "Optimize a TensorFlow graph as Grappler does, with rule sets"
    ANCHOR = "builtin.module"
    inputs: list[str] = option([], "GraphDef input: fed tensors (--tf-input-arrays fills it)")
    outputs: list[str] = option([], "GraphDef input: fetched tensors (--tf-output-arrays fills it; empty: nodes "
                                "nothing consumes)")
    control_outputs: list[str] = option([], "GraphDef input: nodes that must run (--tf-control-output-arrays)")
    iterations: int = option(2, "Rounds of the whole family list (Grappler's meta_optimizer_iterations); a round "
                             "that removes nothing ends it", min=1)
    driver: str = option("family", "Rewrite driver of the rule families: egraph, greedy, or each family's own",
                         choices=("family", "egraph", "greedy"))
    egraph_iterations: int = option(DEFAULT_MAX_ITERATIONS, "Egraph: egglog iterations per family (0: no limit)",
                                    min=0)
    max_enodes: int = option(DEFAULT_MAX_ENODES, "Egraph: e-nodes per family (0: no limit)", min=0)
    timeout: float = option(DEFAULT_TIMEOUT, "Egraph: wall seconds per family's round trip (0: no limit)", min=0)
    fold_element_limit: int = fold_element_limit_option()
    report: bool = option(False, "Emit one line per family and round, in Grappler's form")

    def use_signature(self, signature: EntrySignature) -> None:
        """Take the feeds and fetches egraft-opt's --tf-* flags name (types and shapes stay the graph's)."""
        self.inputs = [f.tensor for f in signature.inputs]
        self.outputs = list(signature.outputs or ())
        self.control_outputs = list(signature.control_outputs or ())

    def run(self, op: Operation, ctx: PassContext) -> None:
        graph = next((o for o in op.walk() if o.name == "tfg.graph"), None)
        if graph is None:
            if self.inputs or self.outputs or self.control_outputs:
                raise PassFailure(Diagnostic("error", "tf-grappler: inputs/outputs/control-outputs name a GraphDef's "
                                                      "feeds and fetches, but the input is not a tfg graph", op.loc))
            self.optimize(op, ctx)
            return
        from egraft.passes.tf.executor_to_tfg import executor_to_tfg
        from egraft.passes.tf.tfg_to_executor import ConversionError, tfg_to_executor

        try:
            named = bool(self.outputs or self.control_outputs)  # neither: nodes nothing consumes are fetched
            executor = tfg_to_executor(op, self.outputs if named else None,
                                       control_fetches=self.control_outputs if named else None, feeds=self._feeds(graph))
            self.optimize(executor, ctx)
            _replace_contents(op, executor_to_tfg(executor))
        except ConversionError as err:
            raise PassFailure(Diagnostic("error", f"tf-grappler: {err}", graph.loc)) from None

    def _feeds(self, graph: Operation) -> tuple[Feed, ...]:
        try:
            return tuple(Feed(*parse_tensor(t)) for t in self.inputs)
        except ValueError as err:
            raise PassFailure(Diagnostic("error", f"tf-grappler: inputs: {err}", graph.loc)) from None

    def optimize(self, top: Operation, ctx: PassContext) -> None:
        """The enabled families on the tf_executor module ``top``, in rounds."""
        size = node_count(top)
        for _ in range(self.iterations):
            before = size
            for family in FAMILIES:
                if not getattr(self, family.field):
                    continue
                started = time.perf_counter()
                detail = self._run_family(family, top, ctx)
                after = node_count(top)
                if self.report:
                    ctx.emit(Diagnostic("remark", f"{family.label}: Graph size after: {after} nodes ({after - size:+d}"
                                        f"), time = {(time.perf_counter() - started) * 1000:.0f}ms{detail}", top.loc))
                size = after
            if size == before:
                break

    def _run_family(self, family: Family, top: Operation, ctx: PassContext) -> str:
        """Run one family; what its rules did, for the report ('' for the pruner)."""
        if not family.rule_sets:
            prune = GraphPruning()
            for func in [o for o in top.walk() if o.name == "func.func"]:
                prune.run(func, ctx)
            return ""
        return self._run_rules(family, top)

    def _run_rules(self, family: Family, top: Operation) -> str:
        started = time.perf_counter()
        from egraft.patterns import declaration
        from egraft.rewrite.encoding.cost_models import canonical_cost
        from egraft.rewrite.phases import run_phases

        if family.module:  # a set that is not built in (patterns/rule_sets.py) registers on import
            importlib.import_module(family.module)
        driver = family.driver if self.driver == "family" else self.driver
        done = run_phases(top, declaration(family.rule_sets), driver,
                          budget=budget(self.egraph_iterations, self.max_enodes, self.timeout, started),
                          cost=canonical_cost(), fold_element_limit=self.fold_element_limit or None)
        rewrites = sum(done.greedy.rewrites.values()) if done.greedy is not None else 0
        trip = done.round_trip
        stop = trip.report.stop if trip is not None and trip.report is not None else "no rules"
        return (f" [{driver}: stop={stop}"
                + (f", greedy rewrites {rewrites}" if done.greedy is not None else "")
                + (f", {done.refused}" if done.refused else "") + done.structural_summary() + "]")


def _replace_contents(top: Operation, new: Operation) -> None:
    """``top`` (the module the pass manager holds) takes ``new``'s ops and attributes."""
    block = top.regions[0].blocks[0]
    erase_all(list(block.ops))
    for inner in list(new.regions[0].blocks[0].ops):
        block.append(inner.detach())
    top.attributes.clear()
    top.attributes.update(new.attributes)

