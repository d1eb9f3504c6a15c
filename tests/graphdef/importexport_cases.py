"""TF's GraphDef import/export suite (``core/ir/importexport/tests``) as runnable cases.

``roundtrip/*.pbtxt`` are checked as TF's ``verify_roundtrip`` does: import, verify,
print (with locations) and re-parse, export, compare under TF's equivalence.
``graphdef_to_mlir/*.pbtxt`` and ``mlir_to_graphdef/*.mlir`` run their RUN lines through
the peer runner, which swaps only the tool name (``egraft-opt`` takes ``tfg-translate``'s
``-graphdef-to-mlir`` and ``-mlir-to-graphdef`` flags); CHECK lines go to the
``filecheck`` package.
Also runnable as a script that prints per-folder pass counts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from graphdef_paths import IMPORTEXPORT

def _runner():
    """The lit-style peer runner (tests/peer), importable from any working directory."""
    repo = str(Path(__file__).resolve().parents[2])
    if repo not in sys.path:
        sys.path.insert(0, repo)
    from tests.peer import runner

    return runner


def translate_cases():
    """Runner cases of the graphdef_to_mlir and mlir_to_graphdef folders."""
    cases = _runner().cases
    out = []
    for pattern in ("graphdef_to_mlir/*.pbtxt", "mlir_to_graphdef/*.mlir"):
        for path in sorted(IMPORTEXPORT.glob(pattern)):
            out += cases(path, f"{path.parent.name}/{path.name}")
    return out


def roundtrip_files() -> list[Path]:
    return sorted(IMPORTEXPORT.glob("roundtrip/*.pbtxt"))


def check_roundtrip(path: Path) -> list[str]:
    """TF's verify_roundtrip on one file: the differences ([] = equal)."""
    from egraft.ir import parse, print_ir, verify
    from egraft.ir.graphdef import compare_graphdefs, load_graphdef
    from egraft.ir.graphdef.export_graphdef import export_graphdef
    from egraft.ir.graphdef.import_graphdef import import_graphdef

    graph = load_graphdef(path)
    module = import_graphdef(graph, str(path))
    verify(module)
    again = parse(print_ir(module, debuginfo=True), str(path))
    verify(again)
    return compare_graphdefs(graph, export_graphdef(again))


def main() -> int:
    run_case = _runner().run_case
    rt = roundtrip_files()
    rt_ok = sum(not check_roundtrip(p) for p in rt)
    print(f"roundtrip: {rt_ok}/{len(rt)}")
    counts: dict[str, list[int]] = {}
    for case in translate_cases():
        folder = case.id.split("/")[0]
        outcome = run_case(case)
        entry = counts.setdefault(folder, [0, 0])
        entry[0] += outcome.passed
        entry[1] += 1
        if not outcome.passed:
            print(f"FAIL {case.id}\n  " + outcome.log.replace("\n", "\n  ")[:1500])
    for folder, (ok, total) in counts.items():
        print(f"{folder}: {ok}/{total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
