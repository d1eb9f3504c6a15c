"""Island coarsening: egraft-opt vs TensorFlow's pass on the same tf_executor text.

    python bench/islands/run.py [FILE.mlir ...]   (default: ../shared/tfmodels/mlir/*.mlir)
    python bench/islands/run.py --extra-models efficientnetb0,densenet121,nasnetmobile

Per model: islands before, after TensorFlow's `func.func(tf-executor-island-coarsening)`
(its empty dummy fetch island excluded), after egraft's pass; wall time of each (min of
--repeat runs; egraft-opt = parse + pass + print in process, TF = run_pass_pipeline on the
same text); and whether TF's verifier accepts egraft's output.  ``--extra-models`` also
builds those Keras models with ../shared/tfmodels/make_graphs.py and imports them with its
mlir_peer.py, in a temporary copy of that folder (the shared one and the repository stay
untouched; ~1 min per model), and measures their weight-elided text the same way.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from egraft.passes.cli.main import main as egraft_opt

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
_ISLAND = re.compile(r"tf_executor\.island\b")
_EMPTY_FETCH_ISLAND = re.compile(r"= tf_executor\.island \{\s*tf_executor\.yield\s*\}")


def islands(text: str) -> int:
    return len(_ISLAND.findall(text)) - len(_EMPTY_FETCH_ISLAND.findall(text))


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def run_egraft(path: Path) -> str:
    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8")
    code = egraft_opt([str(path), "-tf-executor-island-coarsening"], stdout=out, stderr=io.StringIO())
    out.flush()
    assert code == 0, f"egraft-opt failed on {path}"
    return buf.getvalue().decode()


def extra_models(names: list[str], workdir: Path) -> Iterator[Path]:
    """Weight-elided tf_executor text of Keras models, built like the shipped ones.

    make_graphs.py and mlir_peer.py's ``convert`` (TF's import, then hex weights elided as
    in the shipped ``*.elided.mlir``) run in a copy of ../shared/tfmodels under ``workdir``.
    """
    copy = workdir / "tfmodels"
    shutil.copytree(SHARED / "tfmodels", copy, ignore=shutil.ignore_patterns("*.pb", "*.mlir", "results"))
    for script in ("make_graphs.py", "mlir_peer.py"):
        args = [*names] if script == "make_graphs.py" else ["convert", *names]
        subprocess.run([sys.executable, script, *args], cwd=copy, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for name in names:
        yield copy / "mlir" / f"{name}.elided.mlir"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--extra-models", default="", help="comma-separated make_graphs.py Keras models")
    args = ap.parse_args()
    files = args.files or sorted((SHARED / "tfmodels" / "mlir").glob("*.mlir"))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    run = tf.mlir.experimental.run_pass_pipeline
    print("| model | islands before | TF after | egraft after | TF time (s) | egraft-opt time (s) | TF verifies egraft |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="egraft-islands-bench-") as workdir:
        extra = [n for n in args.extra_models.split(",") if n]
        for path in [*files, *(extra_models(extra, Path(workdir)) if extra else ())]:
            measure(path, run, args.repeat)


def measure(path: Path, run, repeat: int) -> None:
    """One table row for the tf_executor text in ``path``."""
    if path.name.endswith(".tfg.mlir"):
        return
    text = path.read_text(encoding="utf-8")
    t_tf, tf_out = best(lambda: run(text, "func.func(tf-executor-island-coarsening)"), repeat)
    t_eg, eg_out = best(lambda: run_egraft(path), repeat)
    try:
        ok = bool(run(eg_out, ""))
    except Exception as e:  # noqa: BLE001  (TF raises plain exceptions for invalid IR)
        ok = f"no: {str(e).splitlines()[0][:60]}"
    print(f"| {path.stem} | {islands(text)} | {islands(tf_out)} | {islands(eg_out)} | "
          f"{t_tf:.3f} | {t_eg:.3f} | {ok} |", flush=True)

if __name__ == "__main__":
    main()
