"""Count how many `// -----` cases of a folder of MLIR test files egraft reads.

    python bench/std_era/measure.py DIR [--show-failures N] [--json OUT]

Every `*.mlir` file under DIR is split at `// -----` lines (as `-split-input-file`
does) and each case is run in-process through `egraft-opt`:

* a case with `expected-error`/`-warning`/`-remark`/`-note` comments passes when
  `egraft-opt --verify-diagnostics` accepts it (the expected diagnostics, and only
  those, are produced at the expected lines);
* any other case passes when it parses, verifies and prints, and the printed text
  parses and verifies again (a round trip; the printed text is today's syntax,
  where unregistered ops need `--allow-unregistered-dialect`, so it gets the flag).

No flag is added: `--allow-unregistered-dialect` is passed only when the file's
RUN line has it, as the file's own test would.  Pass pipelines on RUN lines are
not run: this measures reading, not transforming.  The folder is an input; nothing
from it is kept in the repository.

Failures are grouped by the first diagnostic's message with names, numbers and
quoted text blanked, so the table says what is missing, most common first.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path

from egraft.passes.cli.driver import split_chunks
from egraft.passes.cli.main import main as egraft_opt

EXPECTED = re.compile(r"expected-(error|warning|remark|note)")
DIAG = re.compile(r"^[^:\n]*:\d+:\d+: (error|warning|remark|note): (.*)$", re.M)


def run(argv: list[str], text: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = egraft_opt([*argv, "-"], stdin=lambda: text.encode(), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def category(message: str) -> str:
    """The message with its particulars blanked, so like failures group together."""
    m = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'_'", message)
    m = re.sub(r"%[\w.$-]+|@[\w.$-]+|\^[\w.$-]+|#[\w.$-]+|\b\d+\b", "_", m)
    return m.strip()[:110]


def run_case(text: str, flags: list[str]) -> tuple[bool, str]:
    """(passed, why not)."""
    if EXPECTED.search(text):
        rc, _, err = run([*flags, "--verify-diagnostics"], text)
        if rc == 0:
            return True, ""
        m = DIAG.search(err)
        return False, "diagnostics: " + (category(m.group(2)) if m else err.strip()[:100])
    rc, out, err = run(flags, text)
    if rc != 0:
        m = DIAG.search(err)
        return False, category(m.group(2)) if m else "exit %d: %s" % (rc, err.strip()[:100])
    # Printed in today's syntax, where unregistered ops need the flag.
    rc, _, err = run(["--allow-unregistered-dialect"], out)
    if rc != 0:
        m = DIAG.search(err)
        return False, "round trip: " + (category(m.group(2)) if m else err.strip()[:100])
    return True, ""


def measure(folder: Path) -> dict:
    files = sorted(folder.rglob("*.mlir"))
    per_file, reasons, failures = {}, Counter(), []
    for path in files:
        text = path.read_text()
        run_line = " ".join(re.findall(r"//\s*RUN:(.*)", text))
        flags = ["--allow-unregistered-dialect"] if "allow-unregistered-dialect" in run_line else []
        chunks = split_chunks(text, "// -----") if "split-input-file" in run_line else [(text, 0)]
        ok = 0
        for chunk, before in chunks:
            if not chunk.strip():
                continue
            passed, why = run_case("\n" * before + chunk, flags)
            ok += passed
            if not passed:
                reasons[why] += 1
                failures.append((str(path.relative_to(folder)), before + 1, why))
        per_file[str(path.relative_to(folder))] = (ok, sum(1 for c, _ in chunks if c.strip()))
    return {"files": per_file, "reasons": reasons, "failures": failures}


def report(result: dict, show: int) -> str:
    lines = ["| file | cases | pass |", "| --- | ---: | ---: |"]
    total = passed = 0
    for name, (ok, n) in result["files"].items():
        lines.append(f"| {name} | {n} | {ok} |")
        total += n
        passed += ok
    pct = 100.0 * passed / total if total else 0.0
    lines.append(f"| **all** | {total} | {passed} ({pct:.1f}%) |")
    lines += ["", "| failing cases | reason (first diagnostic, particulars blanked) |", "| ---: | --- |"]
    lines += [f"| {n} | {why} |" for why, n in result["reasons"].most_common()]
    if show:
        lines += ["", "first failures:"]
        lines += [f"  {f}:{line}: {why}" for f, line, why in result["failures"][:show]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--show-failures", type=int, default=0, metavar="N")
    ap.add_argument("--json", type=Path, metavar="OUT")
    args = ap.parse_args(argv)
    if not args.folder.is_dir():
        print(f"measure.py: {args.folder}: not a folder", file=sys.stderr)
        return 1
    sys.setrecursionlimit(20000)
    result = measure(args.folder)
    try:
        print(report(result, args.show_failures))
    except BrokenPipeError:  # `| head`
        return 0
    if args.json:
        args.json.write_text(json.dumps({"files": result["files"], "reasons": dict(result["reasons"]),
                                         "failures": result["failures"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
