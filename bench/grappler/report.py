"""The Grappler benchmark's markdown: the targets table, the op histogram diffs, the failures.

Issue #13's targets, per model:

* outputs: egraft's graph computes the original's fetches (and logits) on 3 seeds, rtol 1e-4;
* inference ≤: egraft's graph runs no slower than Grappler's in TensorFlow, judged on the
  per-round ratio egraft÷Grappler of the interleaved runs: its median and a distribution-free
  95% confidence interval of that median (:func:`tf_side.median_interval`): ``yes`` when the
  whole interval is ≤ 1, ``**no**`` when all of it is above, ``noise`` when it holds 1 (the
  runs cannot tell the two graphs apart);
* inference ≤ 0.9×: the same against 0.9 (the issue wants it on at least two models).

Issue #12's targets stay as columns: nodes (now counting function bodies: ``main+functions``
where a graph has a library) no more than Grappler's, and egraft's import + pass + export
taking no more CPU time than Grappler's ``OptimizeGraph`` call.
"""

from __future__ import annotations

NOTES_MARKER = "<!-- notes: written by hand; run.py keeps everything below this line -->"


def _mark(ok: bool | str | None) -> str:
    return "–" if ok is None else ok if isinstance(ok, str) else ("yes" if ok else "**no**")


def _equiv(entry: dict | None) -> str:
    if entry is None:
        return "–"
    if entry.get("missing"):
        return "MISSING " + ", ".join(entry["missing"])
    if entry.get("error"):
        return "TF ERROR"
    used = entry.get("tolerance_used")
    return ("equal" if entry["ok"] else "**DIFFERENT**") + f" ({entry['max_abs']:.0e}" + \
        (f", {used:.2f} tol" if used is not None else "") + (", +logits)" if entry["logits"] else ")")


def _top(items: list[tuple[str, int]], top: int) -> str:
    text = ", ".join(f"{n:+d} {op}" for op, n in items[:top])
    return text + (f" ({len(items) - top} more)" if len(items) > top else "")


def short_diff(diff: dict[str, int] | None, first_sign: int = -1, top: tuple[int, int] = (5, 4)) -> str:
    """The largest changes of one sign, then of the other (``first_sign`` -1: removals first):
    ``-262 Identity, -195 Const (3 more) / +25 _FusedConv2D``."""
    if diff is None:
        return "–"
    first = [(op, n) for op, n in diff.items() if n * first_sign > 0]
    second = [(op, n) for op, n in diff.items() if n * first_sign < 0]
    return " / ".join(p for p in (_top(first, top[0]), _top(second, top[1])) if p) or "none"


def _versus(entry: dict, bound: float) -> bool | str | None:
    """True if the paired ratio's interval is ≤ ``bound``, False if above it, "noise" if it holds it."""
    if "ratio_high" not in entry:  # results written before the interval was measured: the median alone
        return entry["paired_ratio"] <= bound
    if entry["ratio_high"] <= bound:
        return True
    return False if entry["ratio_low"] > bound else "noise"


def targets(r: dict) -> dict[str, bool | str | None]:
    """The targets of one model's result (None: not measurable, egraft failed; "noise": the
    runs cannot tell)."""
    nodes, eq, inf = r.get("nodes", {}), r.get("equivalence", {}), r.get("inference", {})
    egraft, grappler = r.get("egraft", {}), r.get("grappler", {})
    paired = {"egraft", "grappler"} <= set(inf)
    return {
        "outputs": eq["egraft"]["ok"] if "egraft" in eq else None,
        "inference": _versus(inf["egraft"], 1.0) if paired else None,
        "inference_0.9": _versus(inf["egraft"], 0.9) if paired else None,
        "nodes": nodes["egraft"] <= nodes["grappler"] if "egraft" in nodes else None,
        "time": egraft["cpu_s"] <= grappler["cpu_s"] if "cpu_s" in egraft else None,
    }


def _seconds(cpu: float | None, wall: float | None) -> str:
    return "–" if cpu is None else f"{cpu:.3f} ({wall:.3f})"


def _nodes(r: dict, name: str) -> str:
    """``total`` or ``main+functions`` where the graph has function bodies."""
    counts = r.get("node_counts", {}).get(name)
    if counts is None:
        return str(r["nodes"].get(name, "–"))
    return f"{counts['main']}+{counts['functions']}" if counts["functions"] else str(counts["main"])


def _ms(value) -> str:
    """Milliseconds: one decimal from 10 ms, two below (the function-library models run in 0.3 ms)."""
    return (f"{value:.1f}" if value >= 10 else f"{value:.2f}") if isinstance(value, (int, float)) else "err"


def predicted(r: dict) -> str:
    """H3's predicted ms of original / Grappler / egraft, or – (not installed or failed)."""
    pred = r.get("predicted_ms")
    if not pred or "error" in pred:
        return "–"
    return " / ".join(_ms(pred[k]) if k in pred else "–" for k in ("original", "grappler", "egraft"))


def _ratio(entry: dict | None) -> str:
    """Wall: ×median (interval), then the CPU-time ratio likewise, and the rounds."""
    if entry is None:
        return "–"
    spread = f" ({entry['ratio_low']:.2f}–{entry['ratio_high']:.2f})" if "ratio_high" in entry else ""
    cpu = (f"; CPU ×{entry['cpu_ratio']:.2f} ({entry['cpu_ratio_low']:.2f}–{entry['cpu_ratio_high']:.2f})"
           if "cpu_ratio" in entry else "")
    rounds = f"; {entry['runs']} rounds" if "runs" in entry else ""
    return f"×{entry['paired_ratio']:.2f}{spread}{cpu}{rounds}"


def _row(r: dict, with_prediction: bool = True) -> str:
    t, eq, inf = targets(r), r["equivalence"], r["inference"]
    eg, opt, gr = r["egraft"], r["egraft_opt"], r["grappler"]
    ms = [_ms(inf[k]["median_ms"]) if k in inf else "–" for k in ("original", "grappler", "egraft")]
    return (f"| {r['model']} | {_nodes(r, 'original')} | {_nodes(r, 'grappler')} | {_nodes(r, 'egraft')} "
            f"| {_mark(t['nodes'])} | {_equiv(eq.get('egraft'))} | {_equiv(eq.get('grappler'))} "
            f"| {_mark(t['outputs'])} | {' / '.join(ms)} | {_ratio(inf.get('egraft'))} | {_mark(t['inference'])} "
            f"| {_mark(t['inference_0.9'])} " + (f"| {predicted(r)} " if with_prediction else "")
            + f"| {_seconds(gr['cpu_s'], gr['wall_s'])} "
            f"| {_seconds(eg.get('cpu_s'), eg.get('wall_s'))} | {_seconds(eg.get('pass_cpu_s'), eg.get('pass_wall_s'))} "
            f"| {_seconds(opt.get('cpu_s'), opt.get('wall_s'))} | {_mark(t['time'])} |")


def family_table(results: list[dict]) -> list[str]:
    """egraft's report lines summed over the rounds: per family, nodes removed and milliseconds."""
    sums: dict[str, dict[str, list[int]]] = {}
    for r in results:
        per = sums.setdefault(r["model"], {})
        for line in r["egraft_opt"].get("report", []):
            change, ms = per.setdefault(line["family"], [0, 0])
            per[line["family"]] = [change + line["change"], ms + line["ms"]]
    families = list(dict.fromkeys(f for per in sums.values() for f in per))
    if not families:
        return []
    return ["egraft's families (`report=true` lines of the egraft-opt run, summed over its rounds): node change, "
            "milliseconds:", "",
            "| model | " + " | ".join(families) + " |", "|---|" + "---:|" * len(families),
            *(f"| {model} | " + " | ".join(f"{per[f][0]:+d}, {per[f][1]} ms" if f in per else "–" for f in families)
              + " |" for model, per in sums.items())]


def prediction_table(results: list[dict]) -> list[str]:
    """Issue #13 §4, where the cost model is wrong: per model and graph, predicted ÷ measured
    (median wall ms), and whether the prediction orders egraft and Grappler as the runs do
    (the runs' order: the paired ratio's interval; "–" when the interval holds 1)."""
    rows = []
    for r in results:
        pred, inf = r.get("predicted_ms") or {}, r.get("inference", {})
        if "error" in pred or not pred:
            continue
        cells = []
        for name in ("original", "grappler", "egraft"):
            value, measured = pred.get(name), inf.get(name, {}).get("median_ms")
            cells.append(f"{_ms(value)} / {_ms(measured)} = ×{value / measured:.2f}"
                         if isinstance(value, (int, float)) and measured else "–")
        order = "–"
        if isinstance(pred.get("egraft"), (int, float)) and isinstance(pred.get("grappler"), (int, float)):
            verdict = targets(r)["inference"]
            if verdict in (True, False):
                predicted_faster = pred["egraft"] < pred["grappler"]
                order = "yes" if predicted_faster == (inf["egraft"]["ratio_high"] < 1) else "**no**"
        rows.append(f"| {r['model']} | {' | '.join(cells)} | {order} |")
    if not rows:
        return []
    return ["Predicted (`tf_cost.predict_ms`, serial sum over every op of the graph and its functions) against "
            "measured (median wall ms of the runs above), and whether the prediction orders egraft and Grappler "
            "as the runs do:", "",
            "| model | original: predicted / measured | Grappler | egraft | same order |", "|---|---|---|---|---|",
            *rows]


def _deployed(timing: dict | None) -> str:
    """The signatures' eager inference (runtime Grappler on, as deployed): ms and paired ratios."""
    if not timing:
        return ""
    base = "Grappler's" if "grappler" in timing else "the original's"
    parts = [f"{name} {_ms(t['median_ms'])} ms" + (f" (÷{base} ×{t['paired_ratio']:.2f}, "
                                                    f"{t['ratio_low']:.2f}–{t['ratio_high']:.2f})"
                                                    if name in ("egraft", "grappler") and t["paired_ratio"] != 1.0
                                                    else "") for name, t in timing.items()]
    return (f". Served as loaded (eager signature calls, TF's runtime Grappler on, {next(iter(timing.values()))['runs']} "
            f"rounds): " + ", ".join(parts))


def tables(results: list[dict], pending: list[str]) -> str:
    """The targets table, the histogram table and what failed or did not run."""
    with_prediction = any(predicted(r) != "–" for r in results)
    lines = [
        "| model | nodes (main+functions) | Grappler | egraft | nodes ≤ | egraft = original | Grappler = original "
        "| outputs | inference ms: original / Grappler / egraft | egraft÷Grappler, paired: wall (95% CI); CPU | inference ≤ "
        "| ≤ 0.9× | " + ("predicted ms: original / Grappler / egraft | " if with_prediction else "")
        + "Grappler CPU s (wall) | egraft CPU s (wall) | of which pass | egraft-opt process | time ≤ |",
        "|---|---:|---:|---:|---|---|---|---|---|---|---|---|" + ("---|" if with_prediction else "")
        + "---:|---:|---:|---:|---|",
        *(_row(r, with_prediction) for r in results),
        "", "Op histogram change against the original: the 5 largest removals / the 4 largest additions:", "",
        "| model | Grappler | egraft `-tf-grappler` | egraft's graph against Grappler's (+: egraft has more) |",
        "|---|---|---|---|",
        *(f"| {r['model']} | {short_diff(r['histogram_diff']['grappler'])} | "
          f"{short_diff(r['histogram_diff'].get('egraft'))} | "
          f"{short_diff(r['histogram_diff'].get('egraft_vs_grappler'), +1, (6, 3))} |"
          for r in results),
    ]
    lines += ["", *family_table(results)]
    predicted_rows = prediction_table(results)
    if predicted_rows:
        lines += ["", *predicted_rows]
    keys = ("outputs", "inference", "inference_0.9", "nodes", "time")
    missed = {key: [r["model"] for r in results if targets(r)[key] is False] for key in keys}
    noise = {key: [r["model"] for r in results if targets(r)[key] == "noise"] for key in keys}
    equal = sum(targets(r)["outputs"] is True for r in results)
    faster = [r["model"] for r in results if targets(r)["inference_0.9"] is True]
    lines += ["", f"Issue #13: outputs equal on {equal} of {len(results)} models; inference ≤ Grappler's "
              f"(interval ≤ 1) on {sum(targets(r)['inference'] is True for r in results)}, indistinguishable on "
              f"{len(noise['inference'])}, slower on {len(missed['inference'])}; ≤ 0.9× on {len(faster)}"
              + (f" ({', '.join(faster)})" if faster else "") + "."]
    if any(missed.values()):
        lines += ["Missed: " + "; ".join(f"{key} on {', '.join(models)}" for key, models in missed.items() if models)
                  + "." + (" Within noise: " + "; ".join(f"{key} on {', '.join(models)}" for key, models in
                                                         noise.items() if models) + "." if any(noise.values()) else "")]
    loads = [f"* {r['model']}: `tf.saved_model.load` of the optimized directory, signature called on 3 seeds: "
             + ", ".join(f"{name} " + ("equal" if e["ok"] else e.get("error") or f"**DIFFERENT** ({e['max_abs']:.0e})")
                         for name, e in r["tf2_load"].items()) + _deployed(r.get("tf2_inference"))
             for r in results if "tf2_load" in r]
    if loads:
        lines += ["", *loads]
    failures = [f"* {r['model']}: egraft-opt {r['egraft_opt']['error']}" for r in results if "error" in r["egraft_opt"]]
    failures += [f"* {r['model']}: in-process run {r['egraft']['error']}" for r in results if "error" in r["egraft"]]
    failures += [f"* {r['model']}: predicted time {r['predicted_ms']['error']}" for r in results
                 if "error" in r.get("predicted_ms", {})]
    failures += [f"* {r['model']}: predicted time of {name}: {value}" for r in results
                 for name, value in r.get("predicted_ms", {}).items() if isinstance(value, str) and name != "error"]
    failures += [f"* {r['model']}: {side} {entry.get('error') or 'missing ' + ', '.join(entry['missing'])}"
                 for r in results for side, entry in r["equivalence"].items() if "error" in entry or "missing" in entry]
    failures += [f"* {r['model']}: the in-process run left {r['egraft']['nodes']} nodes, egraft-opt "
                 f"{r['nodes']['egraft']}" for r in results
                 if "nodes" in r["egraft"] and "egraft" in r["nodes"] and r["egraft"]["nodes"] != r["nodes"]["egraft"]]
    if failures:
        lines += ["", "Failures:", "", *failures]
    when: dict[str, list[str]] = {}
    for r in results:
        moment, _, commit = r.get("measured", "? at ?").partition(" at ")
        when.setdefault(commit, []).append(f"{r['model']} {moment.removesuffix(' UTC')}")
    lines += ["", "Measured (UTC, commit of the checkout; others' uncommitted work ran too): "
              + "; ".join(f"at `{commit}`: {', '.join(models)}" for commit, models in when.items()) + "."]
    if pending:
        lines += ["", "Not run (the run stopped or was limited before them): " + ", ".join(pending) + "."]
    return "\n".join(lines)


def document(header: str, results: list[dict], pending: list[str], notes: str) -> str:
    """The generated part, the marker, and the hand-written notes kept from the previous file."""
    return f"{header}\n\n{tables(results, pending)}\n\n{NOTES_MARKER}\n{notes}"
