#!/usr/bin/env python
"""egraft vs Grappler on the shipped models: node counts, wall time, equivalence.

    python bench/grappler/run.py [models...] [--pipeline cse,dce] [--repeat 3] [--form tf_executor]
    python bench/grappler/run.py mobilenetv2 --grappler        # egraft-opt's -tf-grappler
    python bench/grappler/run.py resnet50 --grappler --graphs /work/tfpeer/graphs

For each model of ../shared/tfmodels/graphs (GraphDef + .json feeds and fetches): run
the egraft pipeline (:mod:`egraft_side`, fetching the sidecar's outputs, whose names
the export keeps whatever the passes do) and Grappler's default meta-optimizer
(:mod:`tf_side`), then run the original, Grappler's and egraft's graphs in TensorFlow
on the same seeded random feeds (3 seeds) and check every fetch, and the logits under
a softmax fetch, agree (rtol 1e-4, atol 1e-5); a graph that lost a fetched name is
reported MISSING. Prints a table and writes
``bench/out/grappler.{json,md}``. Exit status 1 if any result disagrees.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPO = HERE.parents[1]
GRAPHS = REPO.parent / "shared" / "tfmodels" / "graphs"
OUT = REPO / "bench" / "out"
MODELS = ("mobilenetv2", "bert4", "cflow_v1")
SEEDS = (0, 1, 2)


def check_equivalence(original, candidates: dict, feeds: list[dict], fetches: list[str]) -> dict:
    """Per candidate: ok, the largest difference, and whether logits were compared.

    The logits are the input of the Softmax each graph's fetch reads (Grappler renames
    or fuses the node producing them, so each graph is searched on its own)."""
    import tf_side

    tensors = [f if ":" in f else f + ":0" for f in fetches]
    base = tf_side.Runner(original)
    runners = {name: tf_side.Runner(g) for name, g in candidates.items()}
    report = {}
    try:
        for name, runner in runners.items():
            missing = [t for t in tensors if not runner.has(t)]
            if missing:  # a pass lost an output: the graph no longer answers to its fetch names
                report[name] = {"ok": False, "max_abs": float("inf"), "logits": [], "missing": missing}
                continue
            pairs = [(a, b) for a, b in ((tf_side.logits_of(original, f), tf_side.logits_of(candidates[name], f))
                                         for f in fetches) if a is not None and b is not None]
            ok, worst = True, 0.0
            for seed in SEEDS:
                feed = tf_side.random_feeds(feeds, seed)
                expected = base.run(tensors + [a for a, _ in pairs], feed)
                try:
                    actual = runner.run(tensors + [b for _, b in pairs], feed)
                except tf_side.tf.errors.OpError as err:  # TF rejects the graph it was given: a finding
                    report[name] = {"ok": False, "max_abs": float("inf"), "logits": [],
                                    "error": err.message.strip().splitlines()[-1]}
                    break
                for a, b in zip(expected, actual):
                    same, diff = tf_side.agree(a, b)
                    ok &= same
                    worst = max(worst, diff)
            else:
                report[name] = {"ok": ok, "max_abs": worst, "logits": [f"{a} ~ {b}" for a, b in pairs]}
    finally:
        base.close()
        for runner in runners.values():
            runner.close()
    return report


def compare_model(model: str, pipeline: str = "cse,dce", repeat: int = 3, form: str = "tf_executor",
                  graphs: Path = GRAPHS) -> dict:
    import egraft_side
    import tf_side
    from egraft.ir.graphdef import load_graphdef

    meta = json.loads((graphs / f"{model}.json").read_text())
    graph = load_graphdef(graphs / meta["pb"])
    fetches = meta["outputs"]
    runs = [egraft_side.optimize(graph, fetches, pipeline, form) for _ in range(repeat)]
    ours = runs[-1].graph
    theirs, grappler_s, warmup = tf_side.grappler(graph, meta["inputs"], fetches, repeat)
    equiv = check_equivalence(graph, {"egraft": ours, "grappler": theirs}, meta["inputs"], fetches)
    return {
        "model": model, "pipeline": pipeline, "form": form, "nodes": len(graph.node),
        "egraft_nodes": len(ours.node), "egraft_s": statistics.median(r.seconds for r in runs),
        "egraft_pipeline_s": statistics.median(r.pipeline_seconds for r in runs),
        "grappler_nodes": len(theirs.node), "grappler_s": grappler_s, "grappler_warmup_s": warmup,
        "equivalence": equiv,
    }


def _equiv_text(entry: dict) -> str:
    if entry.get("missing"):
        return "MISSING " + ", ".join(entry["missing"])
    if entry.get("error"):
        return "TF ERROR: " + entry["error"].replace("|", "/")
    text = ("ok" if entry["ok"] else "MISMATCH") + f" ({entry['max_abs']:.1e})"
    return text + (" +logits" if entry["logits"] else "")


def table(results: list[dict]) -> str:
    lines = ["| model | nodes | egraft nodes | egraft s (passes s) | Grappler nodes | Grappler s | "
             "egraft = original | Grappler = original |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        eq = r["equivalence"]
        lines.append(f"| {r['model']} | {r['nodes']} | {r['egraft_nodes']} | {r['egraft_s']:.3f} "
                     f"({r['egraft_pipeline_s']:.3f}) | {r['grappler_nodes']} | {r['grappler_s']:.3f} | "
                     f"{_equiv_text(eq['egraft'])} | {_equiv_text(eq['grappler'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=list(MODELS))
    ap.add_argument("--pipeline", default="cse,dce", help="egraft passes, as in --pass-pipeline")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--grappler", action="store_true",
                    help="run the tf-grappler pass as egraft-opt does (GraphDef in, the sidecar's fetches as "
                         "--tf-output-arrays, GraphDef out); same as --pipeline tf-grappler --form grappler")
    ap.add_argument("--graphs", type=Path, default=GRAPHS, help="folder of <model>.pb and <model>.json")
    ap.add_argument("--form", choices=("tf_executor", "tfg", "grappler"), default="tf_executor",
                    help="the dialect the egraft pipeline runs on")
    args = ap.parse_args(argv)
    if args.grappler:
        args.pipeline, args.form = "tf-grappler", "grappler"
    if not args.graphs.is_dir():
        print(f"error: models not found at {args.graphs}", file=sys.stderr)
        return 2
    results = [compare_model(m, args.pipeline, args.repeat, args.form, args.graphs) for m in args.models]
    text = (f"egraft pipeline `{args.pipeline}` on {args.form}; Grappler default optimizers, nodes on CPU; "
            f"times are medians of {args.repeat} (Grappler after a warm-up call); equivalence over "
            f"{len(SEEDS)} seeded feeds, rtol 1e-4 atol 1e-5 (max |diff| in parentheses).\n\n"
            + table(results))
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "grappler.json").write_text(json.dumps(results, indent=1))
    (OUT / "grappler.md").write_text(text + "\n")
    return 0 if all(e["ok"] for r in results for e in r["equivalence"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
