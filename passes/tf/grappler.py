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

**Islands: coarsened first, and why.** A GraphDef import puts every node in an island of
its own, and a rule sees one island's region at a time: `ConstOf` does not see a constant
in another island, and a BatchNorm's `Mul(Conv2D(x, w), k)` spans three. So the pass first
merges islands (`tf-executor-island-coarsening`, `coarsen=false` skips it) once, after the
model pruner and before the first family with rules, as TensorFlow's own MLIR pipeline
coarsens before its graph optimizations. egraft's coarsening merges only
islands dead under the same conditions and at the same barrier depth, so v1 control flow
(Switch/Merge, loop frames) stays sound; on the Keras models every node lands in one island
and the whole graph is one region for the rules. The alternative, a constant lookup that
sees through an island's result, is sound only for islands without control operands (a
dead control input makes the constant dead and the fold would revive its users) and would
still leave the BatchNorm patterns split (on mobilenetv2 batchnorm folding removes 104 of the
520 nodes the two folding families remove). Measured on the 8 models of `bench/grappler`:
coarsening takes 0.03-0.6 s CPU, merges each Keras model into one island (cflow_v1: 46
merges, 10 islands pinned) and serves every family; without it the folding families changed
nothing. The islands are not broken up again: the
GraphDef export writes each op of a multi-op island as a node carrying the island's
control operands, and an op without operands waits on what the island captures (so a
loop's constant keeps its frame), which is what `tf-executor-break-up-islands` would do at
the cost of join nodes. A rewrite inside an island must not drop what the island waits on
(a folded or erased op may have been the one reading a Switch output), so each island's
captures are pinned as extra yields while the families run (`rewrite/structural/
tf_island_pins.py`) and the pins still needed are kept.

**Families.** Each is one entry of `FAMILIES`: its on/off option (`dependency=false`),
Grappler's name for its report line, the rule sets it runs through `rewrite/phases.py`
(with canonicalize's budgets) and the module registering them. The model pruner has no
rules: it is reachability from the fetches, `tf-executor-graph-pruning`'s. Families run in
Grappler's order, and the whole list again (`iterations=`, Grappler's default 2) while
the graph still shrinks. `report=true` emits one line per family and round, in
Grappler's form: `dependency optimizer: Graph size after: 548 nodes (-505), time = 142ms`.
Nodes are counted on the tf_executor form as the export writes them (`node_count`): on a
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
from egraft.passes.tf.island_coarsening import coarsen
from egraft.rewrite.structural.tf_island_pins import drop_redundant_pins, pin_captures
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
#: Constant and batchnorm folding run greedily too: a fold has one result (nothing to choose
#: either); `driver=egraph` runs every family on the e-graph (mobilenetv2: 2.6 s CPU, 210 MB,
#: against about 0.7 s greedily, for the same node count within 2). Constant folding forwards Identity
#: first, as Grappler's pruner does before its folding: a frozen variable is Const -> Identity.
FAMILIES = (
    Family("pruning", "model pruner"),
    Family("function", "function optimizer"),
    Family("common-subgraph-elimination", "common subgraph elimination", ("grappler-cse",),
           "egraft.patterns.grappler.cse", "greedy"),
    Family("constant-folding", "constant folding", ("grappler-forwarding", "tf-constant-folding"),
           "egraft.patterns.grappler.dependency", "greedy"),
    Family("batchnorm", "batchnorm folding", ("tf-batchnorm-folding",), "", "greedy"),
    Family("arithmetic", "arithmetic optimizer", ("tf-arithmetic",), "", "greedy"),
    Family("remapper", "remapper", ("tf-remapper",), "", "greedy"),
    Family("tensat", "tensat optimizer", ("tf-tensat",), "egraft.patterns.grappler.tensat", "greedy"),
    Family("onednn", "oneDNN remapper", ("tf-remapper-onednn", "tf-tensat-onednn"), "egraft.patterns.grappler.tensat",
           "greedy", default=False),
    Family("control-flow", "loop optimizer", ("tf-control-flow",), "egraft.patterns.grappler.control_flow", "greedy"),
    Family("dependency", "dependency optimizer", ("grappler-dependency",), "egraft.patterns.grappler.dependency",
           "greedy"),
)


#: The largest constant a fold reads or writes, in elements: a bound on the time and memory of
#: one fold, not the size policy (which refuses folds that grow the model). Grappler's constant
#: folding materializes up to 10 MiB, but it still scales larger weights by a BatchNorm (Xception's
#: last 1x1 convolution, 3.1M elements): a scaled weight replaces the old one. 32M float32
#: elements (128 MiB) cost about 0.1 s per fold.
GRAPPLER_FOLD_ELEMENTS = 32 * 1024 * 1024


def _family_options(cls: type) -> type:
    """One `<family>=true|false` option per entry of `FAMILIES` (before attrs makes the class)."""
    for family in FAMILIES:
        cls.__annotations__[family.field] = "bool"
        setattr(cls, family.field, option(family.default, f"Run Grappler's {family.label}"))
    return cls


def node_count(top: Operation) -> int:
    """GraphDef nodes of the functions under ``top``, as the export writes them: the ops
    inside each island and each other executor op but the fetch (a NextIteration's
    Source/Sink pair is one node); a function the executor canonicalization left without
    a graph (it was one island) counts its ops but the return."""
    count = 0
    for func in (o for o in top.walk() if o.name == "func.func"):
        body = func.regions[0].blocks[0].ops if func.regions and func.regions[0].blocks else []
        graphs = [o for o in body if o.name == "tf_executor.graph"]
        if not graphs:
            count += sum(1 for o in body if o.name != "func.return")
        for graph in graphs:
            for op in graph.regions[0].blocks[0].ops:
                if op.name == "tf_executor.island":
                    count += len(op.regions[0].blocks[0].ops) - 1
                elif op.name not in ("tf_executor.fetch", "tf_executor.NextIteration.Sink"):
                    count += 1
    return count


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
    fold_element_limit: int = fold_element_limit_option(GRAPPLER_FOLD_ELEMENTS)
    report: bool = option(False, "Emit one line per family and round, in Grappler's form")
    rules: list[str] = option([], "More rule sets (built-in, or loaded with --load-rules) run after the families "
                              "as one more, 'user rules', on the e-graph unless driver= says otherwise")
    coarsen: bool = option(True, "Merge islands first (tf-executor-island-coarsening), so rules see across nodes")

    def use_signature(self, signature: EntrySignature) -> None:
        """Take the feeds and fetches egraft-opt's --tf-* flags name (types and shapes stay the graph's)."""
        self.inputs = [f.tensor for f in signature.inputs]
        self.outputs = list(signature.outputs or ())
        self.control_outputs = list(signature.control_outputs or ())

    def run(self, op: Operation, ctx: PassContext) -> None:
        from egraft.patterns import declaration

        try:
            declaration(self.rules)  # an unknown set fails before any work
        except KeyError as err:
            raise PassFailure(Diagnostic("error", f"tf-grappler: {err.args[0]}", op.loc)) from None
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
            executor.loc = graph.loc  # the report's remarks name the input, as its errors do
            self.optimize(executor, ctx)
            _replace_contents(op, executor_to_tfg(executor))
        except ConversionError as err:
            raise PassFailure(Diagnostic("error", f"tf-grappler: {err}", graph.loc)) from None

    def _feeds(self, graph: Operation) -> tuple[Feed, ...]:
        """The feeds that become arguments. A fed `PlaceholderWithDefault` stays the node it
        is, as Grappler keeps it: as an argument it would be written back as a `Placeholder`,
        and a caller that relied on its default would have to feed it. No family folds or
        forwards it, so its value stays whatever is fed."""
        from egraft.passes.tf.tfg_to_executor import node_name

        try:
            feeds = tuple(Feed(*parse_tensor(t)) for t in self.inputs)
        except ValueError as err:
            raise PassFailure(Diagnostic("error", f"tf-grappler: inputs: {err}", graph.loc)) from None
        with_default = {node_name(op) for op in graph.regions[0].blocks[0] if op.name == "tfg.PlaceholderWithDefault"}
        return tuple(f for f in feeds if not (f.port == 0 and f.name in with_default))

    def optimize(self, top: Operation, ctx: PassContext) -> None:
        """The enabled families on the tf_executor module ``top``, in rounds."""
        size = node_count(top)
        prepared = False
        for _ in range(self.iterations):
            before = size
            for family in self._families():
                if not getattr(self, family.field):
                    continue
                if family.rule_sets and not prepared:  # after the pruner: what it removes joins no island
                    if self.coarsen:
                        coarsen(top)
                    pin_captures(top)
                    prepared = True
                started = time.perf_counter()
                detail = self._run_family(family, top, ctx)
                after = node_count(top)
                if self.report:
                    ctx.emit(Diagnostic("remark", f"{family.label}: Graph size after: {after} nodes ({after - size:+d}"
                                        f"), time = {(time.perf_counter() - started) * 1000:.0f}ms{detail}", top.loc))
                size = after
            if size == before:
                break
        drop_redundant_pins(top)

    def _families(self) -> tuple[Family, ...]:
        """Grappler's families, then the `rules=` sets as one more: TensorFlow runs its custom
        graph optimizers after its own, too. (Its option is `rules`, a list: on when not empty.)"""
        return FAMILIES + ((Family("rules", "user rules", tuple(self.rules)),) if self.rules else ())

    def _run_family(self, family: Family, top: Operation, ctx: PassContext) -> str:
        """Run one family; what its rules did, for the report ('' for the pruner)."""
        if family.option == "function":
            return _optimize_functions(top)
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


def _optimize_functions(top: Operation) -> str:
    """Grappler's function optimizer: calls inlined, If/Case on constants folded to the branch
    taken, then the private functions nothing refers to removed (rewrite/structural/tf_inline.py)."""
    from egraft.rewrite.structural.tf_inline import inline_calls, remove_unused_functions

    inlined, folded = inline_calls(top)
    removed = remove_unused_functions(top)
    return f" [inlined {inlined} calls ({folded} If/Case folded), removed {removed} functions]"


def _replace_contents(top: Operation, new: Operation) -> None:
    """``top`` (the module the pass manager holds) takes ``new``'s ops and attributes."""
    block = top.regions[0].blocks[0]
    erase_all(list(block.ops))
    for inner in list(new.regions[0].blocks[0].ops):
        block.append(inner.detach())
    top.attributes.clear()
    top.attributes.update(new.attributes)

