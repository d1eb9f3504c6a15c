"""The shipped MLIR examples do what their header comments say.

`examples/affine_loops.mlir` names the command to run on it in its header; the test runs
that command as printed (so the example, the README line and the tool cannot drift apart),
checks the rewrites the header promises, and checks with the interpreter that the
optimized program computes what the original does.
"""

from __future__ import annotations

import shlex

from egraft.passes.soundness.harness import assert_pass_sound

from .tool import REPO, run

AFFINE = REPO / "examples" / "affine_loops.mlir"


def header_command(path) -> list[str]:
    """The `egraft-opt ...` line of the example's header comment, as arguments."""
    line = next(l for l in path.read_text().splitlines() if l.lstrip("/ ").startswith("egraft-opt "))
    argv = shlex.split(line.lstrip("/ "))
    return [str(REPO / a) if a.startswith("examples/") else a for a in argv[1:]]


def test_affine_example_inlines_folds_and_forwards() -> None:
    argv = header_command(AFFINE)
    code, out, err = run(*argv)
    assert code == 0, err
    assert "func.call" not in out and "@axpy" not in out  # inlined, the private callee erased
    assert "affine.graybox" not in out  # the wrapper was eliminated: %i is a dimension outside too
    assert "memref.cast" not in out  # folded into the accesses
    assert "affine.apply" not in out  # composed into the access maps
    assert out.count("affine.load %arg1") == 1  # y[2i] read once: the reload after the store is forwarded


def test_affine_example_pipeline_is_sound() -> None:
    passes = [a.lstrip("-") for a in header_command(AFFINE)[1:]]
    assert passes[0] == "inline"
    pipeline = f"builtin.module(inline,func.func({','.join(passes[1:])}))"
    assert_pass_sound(AFFINE.read_text(), pipeline)
