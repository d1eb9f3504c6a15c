"""Count the `memref.cast` cases of MLIR's `Dialect/MemRef/canonicalize.mlir`, one by one, with reasons.

    python bench/memref_canon/count.py [FILE]

FILE defaults to `../shared/peer-tests/llvm+llvm-project/mlir/test/Dialect/MemRef/canonicalize.mlir`
beside the checkout (the file is an input; nothing from it is kept in the repository). Each
`// -----` case that mentions `memref.cast` runs as its own RUN line says
(`-canonicalize="test-convergence" ... | FileCheck`, in-process, through the peer runner of
tests/peer), and is reported as passing or failing with the reason: for a failing case the
reviewed reason below when there is one, else the first error line of the run. A reviewed reason
on a case that now passes is reported as stale, so the table cannot lie quietly.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.peer.runner import cases, run_case  # noqa: E402

DEFAULT = ROOT.parent / "shared/peer-tests/llvm+llvm-project/mlir/test/Dialect/MemRef/canonicalize.mlir"

_SUBVIEW = ("memref.subview canonicalization (constant offsets/sizes/strides folded into the static type, then "
            "a cast back): a subview rewrite whose result type follows its operands, not cast folding")
_ALLOC = ("SimplifyAllocConst: constant sizes folded into the alloc's type and a cast back to the old type: "
          "an alloc rewrite, not cast folding")
_RESHAPE = "memref.expand_shape/collapse_shape are not in egraft's memref dialect"
#: Reviewed reasons for failing cases, by function name (why, not what the runner printed).
REASONS = {
    "subview_of_size_memcast": _SUBVIEW, "subview_of_strides_memcast": _SUBVIEW,
    "subview_canonicalize": _SUBVIEW, "rank_reducing_subview_canonicalize": _SUBVIEW,
    "subview_negative_stride1": _SUBVIEW, "subview_negative_stride2": _SUBVIEW,
    "reduced_memref": _SUBVIEW, "fold_no_op_subview": _SUBVIEW, "subview_rank_reduction": _SUBVIEW,
    "alloc_const_fold": _ALLOC, "alloc_alignment_const_fold": _ALLOC, "alloc_const_fold_with_symbols2": _ALLOC,
    "fold_memref_expand_cast": _RESHAPE, "collapse_after_memref_cast_type_change": _RESHAPE,
    "collapse_after_memref_cast": _RESHAPE, "collapse_after_memref_cast_type_change_dynamic": _RESHAPE,
    "collapse_expand_fold_to_cast": _RESHAPE,
    "atomicrmw_cast_fold": "memref.atomic_rmw is not in egraft's memref dialect (its fold is foldMemRefCast)",
    "reinterpret_of_extract_strided_metadata_w_type_mistach":
        "memref.extract_strided_metadata is not in egraft's memref dialect",
    "reinterpret_of_extract_strided_metadata_w_constants":
        "memref.extract_strided_metadata is not in egraft's memref dialect",
    "cannot_fold_transpose_cast": "memref.transpose is not in egraft's memref dialect",
}
_FUNC = re.compile(r"func(?:\.func)?\s+(?:private\s+)?@([\w.$-]+)")


def first_error(log: str) -> str:
    """The first line of a failing run that says what went wrong."""
    for line in log.splitlines()[1:]:
        if "error" in line:
            return re.sub(r"^\S*?:(\d+)(:\d+)?: ", "", line.strip())[:160]
    return log.strip().splitlines()[-1][:160] if log.strip() else "(no output)"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT
    if not path.exists():
        print(f"{path}: not found (the peer tests live in ../shared beside the checkout)", file=sys.stderr)
        return 1
    rows, tally = [], Counter()
    for case in cases(path, path.name):
        if "memref.cast" not in case.text:
            continue
        found = _FUNC.search(case.text)
        name = found.group(1) if found else "?"
        outcome = run_case(case)
        if outcome.passed:
            status, reason = "pass", "stale reviewed reason: " + REASONS[name] if name in REASONS else ""
        else:
            status, reason = "fail", REASONS.get(name) or "unreviewed: " + first_error(outcome.log)
        tally[status] += 1
        rows.append((case.id.rsplit("::", 1)[-1], name, status, reason))
    print(f"# memref.cast cases of {path.name}: {tally['pass']} of {sum(tally.values())} pass\n")
    print("| case | function | result | reason |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
