#!/usr/bin/env python
"""`-tf-grappler` against Grappler on every model: nodes, op changes, time, outputs, inference time.

    python bench/grappler/run.py                       # all 16 models (~15 min on 2 idle cores)
    python bench/grappler/run.py --quick               # cflow_v1, a small BERT, an LSTM, issue #13's 3
    python bench/grappler/run.py --models resnet50,lstm_u64_s32 --merge
    python bench/grappler/run.py --options "constant-folding=true"   # tf-grappler's options
    python bench/grappler/run.py mobilenetv2 --pipeline cse,dce      # any pipeline, outputs only

For each model (:mod:`models`: make_graphs.py's 8 from ``--graphs``, and 5 built here into
the model cache) :func:`measure.measure` runs ``egraft-opt model.pb --tf-input-arrays=..
--tf-output-arrays=.. -tf-grappler -o out.pb`` (the whole process timed), egraft's import +
pass + export in one process (medians of ``--repeat`` after a warm-up), Grappler's default
meta-optimizer (nodes on CPU; medians of ``--repeat`` calls after a warm-up call), checks both
graphs' outputs against the original's in TensorFlow (3 seeds, rtol 1e-4) and times the three
graphs' inference (median of ``--runs`` interleaved runs after a warm-up). Writes
``bench/grappler/results.md`` (the tables with issue #12's targets marked, above the hand-written
notes, which are kept) and ``bench/out/grappler_results.json``, after every model, so a run cut
short leaves what it finished. Exit status 1 if a graph's outputs differ from the original's.

``--pipeline`` runs the older comparison instead: any egraft pipeline (``--form``: on the
tf_executor form with the fetches, on tfg, or ``grappler``) against Grappler, outputs and node
counts only, into ``bench/out/grappler.{json,md}``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPO = HERE.parents[1]
OUT = REPO / "bench" / "out"
RESULTS = HERE / "results.md"
RESULTS_JSON = OUT / "grappler_results.json"

import models  # noqa: E402
import report  # noqa: E402

GRAPHS = models.SHARED_GRAPHS
MODELS = ("mobilenetv2", "bert4", "cflow_v1")  # the --pipeline comparison's default: the shipped models


# ------------------------------------------------------------------ the --pipeline comparison


def compare_model(model: str, pipeline: str = "cse,dce", repeat: int = 3, form: str = "tf_executor",
                  graphs: Path = GRAPHS) -> dict:
    """Any egraft pipeline against Grappler's default on one model: node counts, times, outputs."""
    import egraft_side
    import measure
    import tf_side
    from egraft.ir.graphdef import load_graphdef

    meta = json.loads((graphs / f"{model}.json").read_text())
    graph = load_graphdef(graphs / meta["pb"])
    fetches = meta["outputs"]
    runs = [egraft_side.optimize(graph, fetches, pipeline, form) for _ in range(repeat)]
    ours = runs[-1].graph
    theirs, grappler_s, warmup = tf_side.grappler(graph, meta["inputs"], fetches, repeat)
    equiv = measure.check_equivalence(graph, {"egraft": ours, "grappler": theirs}, meta["inputs"], fetches)
    return {
        "model": model, "pipeline": pipeline, "form": form, "nodes": len(graph.node),
        "egraft_nodes": len(ours.node), "egraft_s": statistics.median(r.seconds for r in runs),
        "egraft_pipeline_s": statistics.median(r.pipeline_seconds for r in runs),
        "grappler_nodes": len(theirs.node), "grappler_s": grappler_s, "grappler_warmup_s": warmup,
        "equivalence": equiv,
    }


def pipeline_table(results: list[dict]) -> str:
    lines = ["| model | nodes | egraft nodes | egraft s (passes s) | Grappler nodes | Grappler s | "
             "egraft = original | Grappler = original |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        eq = r["equivalence"]
        lines.append(f"| {r['model']} | {r['nodes']} | {r['egraft_nodes']} | {r['egraft_s']:.3f} "
                     f"({r['egraft_pipeline_s']:.3f}) | {r['grappler_nodes']} | {r['grappler_s']:.3f} | "
                     f"{report._equiv(eq['egraft'])} | {report._equiv(eq['grappler'])} |")
    return "\n".join(lines)


def run_pipeline_comparison(args: argparse.Namespace, names: list[str]) -> int:
    graphs = args.graphs or GRAPHS
    results = [compare_model(m, args.pipeline, args.repeat, args.form, graphs) for m in names or MODELS]
    text = (f"egraft pipeline `{args.pipeline}` on {args.form}; Grappler default optimizers, nodes on CPU; "
            f"times are medians of {args.repeat} (Grappler after a warm-up call); equivalence over "
            f"3 seeded feeds, rtol 1e-4 atol 1e-5 (max |diff| in parentheses).\n\n" + pipeline_table(results))
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "grappler.json").write_text(json.dumps(results, indent=1))
    (OUT / "grappler.md").write_text(text + "\n")
    return 0 if all(e["ok"] for r in results for e in r["equivalence"].values()) else 1


# ------------------------------------------------------------------ the -tf-grappler benchmark


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _commit() -> str:
    head = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %cI %s"], capture_output=True,
                          text=True).stdout.strip()
    return head[:100] + ("…" if len(head) > 100 else "")


def _uncommitted() -> list[str]:
    """Tracked files changed in the checkout (others' work in progress runs too: it is shared)."""
    status = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True).stdout
    return [line[3:] for line in status.splitlines()]


def _header(argv: list[str], settings: dict, load: list[str], results: list[dict]) -> str:
    import tf_side

    loads = [v for r in results for v in (*r["load_before"][:1], *r["load_after"][:1])]
    spread = f"1-minute load average during the models: {min(loads):.1f} to {max(loads):.1f}" if loads else ""
    return "\n".join([
        "# `-tf-grappler` against Grappler (issues #12 and #13, Measured)", "",
        f"Command: `python bench/grappler/run.py {shlex.join(argv)}`, at `{settings.get('commit') or _commit()}`"
        + (f", with uncommitted changes to {', '.join(f'`{p}`' for p in settings['uncommitted'])}."
           if settings["uncommitted"] else "."),
        f"Machine: {platform.machine()}, 2 cores shared with the other engineers, TensorFlow "
        f"{tf_side.tf.__version__}. Load (`uptime`) at the start: `{load[0]}`; at the end: `{load[-1]}`. "
        f"{spread}. Wall times are inflated by it: the CPU times are the figures to compare.", "",
        f"TensorFlow's oneDNN optimizations {settings['onednn']} (`TF_ENABLE_ONEDNN_OPTS`, for Grappler and the "
        f"sessions; `--onednn`). This build's default is off; on, Grappler's remapper makes `_FusedConv2D` of "
        f"a Conv2D, its folded BatchNorm's add and the activation (and `_MklSwish`), which gives the issue's "
        f"figures (mobilenetv2 1053 -> 256; off: 299, no fusion).", "",
        f"* Grappler: default meta-optimizer (`tf_optimizer.OptimizeGraph`, fetches in `train_op`, feeds in a "
        f"serving signature, every node placed on CPU); median of {settings['repeat']} calls after a warm-up "
        f"call, CPU = `process_time` of the call (Grappler's threads included).",
        f"* egraft: `egraft-opt model.pb --tf-input-arrays=<feeds> --tf-output-arrays=<fetches> "
        f"-tf-grappler{'=' + repr(settings['options']) if settings['options'] else ''} -o out.pb` (`onednn=true`, "
        f"egraft's oneDNN-only fusions, is added when TensorFlow runs with oneDNN, as Grappler's remapper then "
        f"makes its own); \"egraft-opt process\" is that whole process (interpreter start, imports, read, write), "
        f"its output is the graph checked and timed below. \"egraft\" is read .pb bytes -> import -> pass -> "
        f"export -> serialize in one process without TensorFlow, median of {settings['repeat']} runs after a "
        f"warm-up run; \"of which pass\" is the `tf-grappler` pass alone (its tfg <-> tf_executor conversions "
        f"included).",
        f"* Nodes: of the graph and of every library function's body (`main+functions` where there are "
        f"functions); a SavedModel's are its serving MetaGraphDef's (its save/restore functions included). "
        f"A SavedModel goes through `egraft-opt DIR -tf-grappler -o OUT_DIR` (feeds and fetches from its "
        f"`serving_default` signature; no in-process timing) and Grappler's `OptimizeGraph` on its MetaGraphDef.",
        f"* Outputs: every fetch and, under a softmax, the logits, on 3 seeded feeds, rtol 1e-4 atol 1e-5 "
        f"(max abs difference in parentheses).",
        f"* Inference: `Session.run` of the fetches, Grappler and TF's graph optimizations off in the session "
        f"and in every function call's `config_proto` (what runs is the graph handed in; TF's own lowering of "
        f"If/While and inlining of calls at graph construction still happen, alike for the three), 2 intra- and "
        f"2 inter-op threads for all three graphs, {settings['warmup']} warm-up runs each, then {settings['runs']} "
        f"rounds (and more, up to 2000, until {settings.get('inference_seconds', 0):g} s have passed: the rounds "
        f"column) in which the three graphs take turns (order rotating), one process; median wall ms, and the "
        f"median of the per-round ratio egraft÷Grappler with a distribution-free 95% confidence interval of that "
        f"median (order statistics): \"inference ≤\" is yes when the whole interval is ≤ 1, **no** when it is "
        f"all above, noise when it holds 1; \"≤ 0.9×\" likewise against 0.9.",
        f"* Predicted ms: H3's cost model (`egraft.ir.semantics.tf_cost.predict_ms`, a serial sum over the ops "
        f"of the graph and its functions) on each of the three graphs, when it is installed.",
    ])


def egraft_options(options: str, onednn: bool) -> str:
    """tf-grappler's options for the run: ``options``, plus ``onednn=true`` when TensorFlow runs with
    oneDNN (``--onednn on``) and the pass has that family, unless ``options`` sets it: Grappler's
    remapper emits its oneDNN-only fusions (``_MklSwish``, ...) exactly then, so egraft may target the
    same runtime."""
    from egraft.passes.tf.grappler import FAMILIES

    if not onednn or "onednn=" in options or not any(f.option == "onednn" for f in FAMILIES):
        return options
    return f"{options} onednn=true".strip()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", metavar="model", help="models (same as --models)")
    ap.add_argument("--models", default="", help=f"comma-separated; default all: {','.join(models.ALL)}")
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(models.QUICK)}")
    ap.add_argument("--merge", action="store_true",
                    help="keep the previous results.json's models in the table until this run re-measures them")
    ap.add_argument("--graphs", type=Path, default=None,
                    help=f"folder of make_graphs.py's <model>.pb/.json (default {models.default_graphs()})")
    ap.add_argument("--options", default="", help="tf-grappler options, e.g. 'constant-folding=true'")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each optimizer (after a warm-up)")
    ap.add_argument("--runs", type=int, default=50, help="timed inference rounds (at least)")
    ap.add_argument("--inference-seconds", type=float, default=10.0,
                    help="more rounds (up to 2000) while fewer seconds than this have passed: small graphs' "
                         "ratios get narrow intervals for little time")
    ap.add_argument("--timeout", type=float, default=900, help="seconds for each egraft process")
    ap.add_argument("--onednn", choices=("on", "off"), default="on",
                    help="TF_ENABLE_ONEDNN_OPTS for Grappler and the sessions (default on: the issue's Grappler "
                         "figures, its remapper's oneDNN fusions; this TensorFlow build's own default is off)")
    ap.add_argument("--render", action="store_true",
                    help=f"measure nothing: rewrite results.md from {RESULTS_JSON.relative_to(REPO)} (after a change "
                         f"of the report's format)")
    ap.add_argument("--pipeline", help="run the older comparison of this egraft pipeline instead")
    ap.add_argument("--form", choices=("tf_executor", "tfg", "grappler"), default="tf_executor",
                    help="with --pipeline: the dialect the pipeline runs on")
    args = ap.parse_args(argv)
    names = [*args.names, *(n for n in args.models.split(",") if n)]
    if "tensorflow" in sys.modules:
        raise RuntimeError("TF_ENABLE_ONEDNN_OPTS must be set before TensorFlow is imported")
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1" if args.onednn == "on" else "0"
    if args.pipeline:
        return run_pipeline_comparison(args, names)
    if args.render:
        saved = json.loads(RESULTS_JSON.read_text())
        notes = RESULTS.read_text().partition(report.NOTES_MARKER)[2].lstrip("\n") if RESULTS.exists() else ""
        header = _header(saved["settings"].get("argv", []), saved["settings"], saved["load"], saved["results"])
        RESULTS.write_text(report.document(header, saved["results"], [], notes))
        return 0

    import measure

    names = names or list(models.QUICK if args.quick else models.ALL)
    unknown = [n for n in names if n not in models.ALL]
    if unknown:
        print(f"error: unknown models {unknown}; known: {', '.join(models.ALL)}", file=sys.stderr)
        return 2
    graphs = args.graphs or models.default_graphs()
    try:
        chosen = models.resolve(names, graphs)
    except (FileNotFoundError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    options = egraft_options(args.options, args.onednn == "on")
    settings = {"repeat": args.repeat, "runs": args.runs, "warmup": 5, "options": options,
                "inference_seconds": args.inference_seconds, "argv": argv, "commit": _commit(),
                "onednn": args.onednn, "uncommitted": _uncommitted()}
    previous = json.loads(RESULTS_JSON.read_text())["results"] if args.merge and RESULTS_JSON.exists() else []
    notes = RESULTS.read_text().partition(report.NOTES_MARKER)[2].lstrip("\n") if RESULTS.exists() else ""
    load, results = [_uptime()], []
    for i, model in enumerate(chosen):
        print(f"[{datetime.datetime.now():%H:%M:%S}] {model.name} ...", flush=True)
        results.append(measure.measure(model, OUT / "grappler", options, args.repeat, args.runs, args.timeout,
                                       args.inference_seconds))
        results[-1]["measured"] = f"{datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC at {_commit()[:7]}"
        done = {r["model"] for r in results}
        kept = [r for r in previous if r["model"] not in done]  # --merge: earlier results until re-measured
        ordered = sorted(kept + results, key=lambda r: models.ALL.index(r["model"]))
        load_now = load + [_uptime()]
        header = _header(argv, settings, load_now, ordered)
        pending = [m.name for m in chosen[i + 1:] if m.name not in {r["model"] for r in kept}]
        text = report.document(header, ordered, pending, notes)
        RESULTS.write_text(text)
        OUT.mkdir(parents=True, exist_ok=True)
        RESULTS_JSON.write_text(json.dumps({"settings": settings, "load": load_now, "results": ordered}, indent=1))
        print(report._row(results[-1]), flush=True)
    print(report.tables(ordered, []))
    return 0 if all(e["ok"] for r in results for e in r["equivalence"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
