"""Count the cases of LLVM's 2021 `mlir/test/Dialect/Affine/canonicalize.mlir` that egraft passes, one by one.

    python bench/affine_canon/measure.py [FILE]

FILE defaults to `/tmp/egraft-affine-canon/canonicalize_2021.mlir`; when it is absent the script
fetches it there (never into the repository) from `SOURCE`: the file as LLVM had it in mid 2021
(memref dialect split off, std's `constant` still in use), in Polygeist's copy of the LLVM tree
at a fixed commit. Each `// -----` case runs its RUN line (`-pass-pipeline='func(canonicalize)'
| FileCheck`, in-process, through the peer runner of tests/peer) twice: as written (egraft's
default e-graph driver) and with `canonicalize{driver=greedy}`. A failing case is reported with
its reason: a reviewed one where the failure is understood (`classify`), else the CHECK line that
did not match. Prints a markdown table and the totals.
"""

from __future__ import annotations

import re
import sys
import urllib.request
from collections import Counter
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.peer.runner import Case, cases, run_case  # noqa: E402

SOURCE = ("https://raw.githubusercontent.com/llvm/Polygeist/6e4d9f92f1f12d4dfc2a2afff1f8ab3f961de56f/"
          "mlir/test/Dialect/Affine/canonicalize.mlir")
DEFAULT = Path("/tmp/egraft-affine-canon/canonicalize_2021.mlir")

_FUNC = re.compile(r"func(?:\.func)?\s+(?:private\s+)?@([\w.$-]+)")
_UNMATCHED = re.compile(r"error: (?:CHECK[-A-Z]*: )?(?:Couldn't match|Can't find match) \(?['\"](.*)['\"]\)?")

#: Reviewed reasons, by what the failing CHECK line expects (first match wins).
REASONS = (
    (re.compile(r"(?<![.\w])constant \d"),
     "2021 printed std's `constant`; egraft prints today's `arith.constant` (the fold itself happens: "
     "same value)"),
    (re.compile(r"memref\.(load|store) [^%]*%0\["),
     "2021 named memref.alloc's result `%0`; today's printer (and egraft's) names it `%alloc`"),
)
#: Reviewed reasons, by function name, for failures the CHECK text does not explain.
BY_FUNCTION = {
    "compose_affine_maps_1dto2d_with_symbols":
        "two affine.apply that compose to the same map and operand are one e-class on the e-graph "
        "(hash-consing), so one apply feeds both stores; MLIR's canonicalize does no CSE and keeps two",
}


def fetch(path: Path) -> None:
    """Download `SOURCE` to `path` (outside the repository)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(SOURCE, timeout=30) as response:  # noqa: S310 (a fixed https URL)
        path.write_bytes(response.read())


def greedy(case: Case) -> Case:
    """`case` with its canonicalize run on the greedy driver."""
    return attrs.evolve(case, run_lines=tuple(r.replace("canonicalize)", "canonicalize{driver=greedy})")
                                              for r in case.run_lines))


def classify(name: str, log: str) -> str:
    """Why a case failed: a reviewed reason, else the CHECK line that did not match."""
    found = _UNMATCHED.search(log)
    expected = found.group(1) if found else ""
    for pattern, reason in REASONS:
        if pattern.search(expected):
            return reason
    if name in BY_FUNCTION:
        return BY_FUNCTION[name]
    if expected:
        return f"unreviewed: CHECK `{expected}` not matched"
    lines = [line for line in log.splitlines() if "error" in line]
    return "unreviewed: " + (lines[0].strip()[:160] if lines else "(no error line)")


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT
    if not path.exists():
        try:
            fetch(path)
        except OSError as e:
            print(f"{path}: not found, and fetching {SOURCE} failed ({e}); put the file there by hand",
                  file=sys.stderr)
            return 1
    rows, tally = [], Counter()
    for case in cases(path, path.name):
        found = _FUNC.search(case.text)
        if found is None:
            continue  # the header before the first split
        name = found.group(1)
        egraph, on_greedy = run_case(case), run_case(greedy(case))
        tally["cases"] += 1
        tally["egraph"] += egraph.passed
        tally["greedy"] += on_greedy.passed
        failed = egraph if not egraph.passed else on_greedy
        reason = "" if egraph.passed and on_greedy.passed else classify(name, failed.log)
        rows.append((case.id.rsplit("::", 1)[-1], name, "pass" if egraph.passed else "fail",
                     "pass" if on_greedy.passed else "fail", reason))
    print(f"# {path.name}: egraph driver {tally['egraph']} of {tally['cases']} pass, "
          f"greedy driver {tally['greedy']} of {tally['cases']}\n")
    print("| case | function | egraph | greedy | reason |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
