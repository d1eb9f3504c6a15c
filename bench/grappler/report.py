"""The Grappler benchmark's markdown: the targets table, the op histogram diffs, the failures.

Issue #12's targets, per model, each marked ``yes`` or ``**no**``:

* nodes: egraft's graph has no more nodes than Grappler's;
* outputs: egraft's graph computes the original's fetches (and logits) on 3 seeds, rtol 1e-4;
* time: egraft's import + `-tf-grappler` + export, in one process, takes no more CPU time
  than Grappler's ``OptimizeGraph`` call (CPU, because 5 engineers share the 2 cores: wall
  times are given too);
* inference: egraft's graph runs no slower than Grappler's in TensorFlow (median wall time
  of the interleaved runs; the paired ratio says how close).
"""

from __future__ import annotations

NOTES_MARKER = "<!-- notes: written by hand; run.py keeps everything below this line -->"


def _mark(ok: bool | None) -> str:
    return "–" if ok is None else ("yes" if ok else "**no**")


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


def targets(r: dict) -> dict[str, bool | None]:
    """The four targets of one model's result (None: not measurable, egraft failed)."""
    nodes, eq, inf = r.get("nodes", {}), r.get("equivalence", {}), r.get("inference", {})
    egraft, grappler = r.get("egraft", {}), r.get("grappler", {})
    return {
        "nodes": nodes["egraft"] <= nodes["grappler"] if "egraft" in nodes else None,
        "outputs": eq["egraft"]["ok"] if "egraft" in eq else None,
        "time": egraft["cpu_s"] <= grappler["cpu_s"] if "cpu_s" in egraft else None,
        "inference": inf["egraft"]["median_ms"] <= inf["grappler"]["median_ms"] if {"egraft", "grappler"} <= set(inf)
        else None,
    }


def _seconds(cpu: float | None, wall: float | None) -> str:
    return "–" if cpu is None else f"{cpu:.3f} ({wall:.3f})"


def _row(r: dict) -> str:
    t, nodes, eq, inf = targets(r), r["nodes"], r["equivalence"], r["inference"]
    eg, opt, gr = r["egraft"], r["egraft_opt"], r["grappler"]
    ms = [f"{inf[k]['median_ms']:.1f}" if k in inf else "–" for k in ("original", "grappler", "egraft")]
    ratio = f" ×{inf['egraft']['paired_ratio']:.2f}" if "egraft" in inf else ""
    return (f"| {r['model']} | {nodes['original']} | {nodes['grappler']} | {nodes.get('egraft', '–')} "
            f"| {_mark(t['nodes'])} | {_equiv(eq.get('egraft'))} | {_equiv(eq.get('grappler'))} "
            f"| {_mark(t['outputs'])} | {_seconds(gr['cpu_s'], gr['wall_s'])} "
            f"| {_seconds(eg.get('cpu_s'), eg.get('wall_s'))} | {_seconds(eg.get('pass_cpu_s'), eg.get('pass_wall_s'))} "
            f"| {_seconds(opt.get('cpu_s'), opt.get('wall_s'))} | {_mark(t['time'])} "
            f"| {' / '.join(ms)}{ratio} | {_mark(t['inference'])} |")


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


def tables(results: list[dict], pending: list[str]) -> str:
    """The targets table, the histogram table and what failed or did not run."""
    lines = [
        "| model | nodes | Grappler | egraft | nodes ≤ | egraft = original | Grappler = original | outputs "
        "| Grappler CPU s (wall) | egraft CPU s (wall) | of which pass | egraft-opt process | time ≤ "
        "| inference ms: original / Grappler / egraft (egraft÷Grappler, paired) | inference ≤ |",
        "|---|---:|---:|---:|---|---|---|---|---:|---:|---:|---:|---|---|---|",
        *(_row(r) for r in results),
        "", "Op histogram change against the original: the 5 largest removals / the 4 largest additions:", "",
        "| model | Grappler | egraft `-tf-grappler` | egraft's graph against Grappler's (+: egraft has more) |",
        "|---|---|---|---|",
        *(f"| {r['model']} | {short_diff(r['histogram_diff']['grappler'])} | "
          f"{short_diff(r['histogram_diff'].get('egraft'))} | "
          f"{short_diff(r['histogram_diff'].get('egraft_vs_grappler'), +1, (6, 3))} |"
          for r in results),
    ]
    lines += ["", *family_table(results)]
    missed = {key: [r["model"] for r in results if targets(r)[key] is False]
              for key in ("nodes", "outputs", "time", "inference")}
    met = sum(all(targets(r).values()) for r in results)
    lines += ["", f"All four targets met on {met} of {len(results)} models. Missed: "
              + "; ".join(f"{key} on {', '.join(models)}" for key, models in missed.items() if models) + "."
              if any(missed.values()) else f"All four targets met on {met} of {len(results)} models."]
    failures = [f"* {r['model']}: egraft-opt {r['egraft_opt']['error']}" for r in results if "error" in r["egraft_opt"]]
    failures += [f"* {r['model']}: in-process run {r['egraft']['error']}" for r in results if "error" in r["egraft"]]
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
