"""Which module registers each built-in pass (generated; do not edit).

Written by `python -m egraft.passes.manager.regenerate` from the passes that the modules
under egraft/passes register; the registry imports a pass's module from here on first use.
tests/cli/test_docs.py fails while this file is stale.
"""

PASS_MODULES: dict[str, str] = {
    "affine-graybox-eliminate": "egraft.passes.transforms.affine_graybox",
    "affine-graybox-hoist": "egraft.passes.transforms.affine_graybox",
    "affine-scalrep": "egraft.passes.transforms.affine_scalrep",
    "apply-rules": "egraft.passes.transforms.apply_rules",
    "canonicalize": "egraft.passes.transforms.canonicalize",
    "cse": "egraft.passes.transforms.cse",
    "dce": "egraft.passes.transforms.dce",
    "eqsat": "egraft.passes.transforms.eqsat",
    "inline": "egraft.passes.transforms.inline",
    "symbol-dce": "egraft.passes.transforms.symbol_dce",
    "tf-executor-break-up-islands": "egraft.passes.tf.break_up_islands",
    "tf-executor-graph-pruning": "egraft.passes.tf.graph_pruning",
    "tf-executor-island-coarsening": "egraft.passes.tf.island_coarsening",
    "tf-functional-to-executor-conversion": "egraft.passes.tf.functional_to_executor",
    "tf-grappler": "egraft.passes.tf.grappler",
    "tf-shape-inference": "egraft.passes.tf.shape_inference",
}
