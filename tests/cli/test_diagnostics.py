"""Diagnostics on very long lines show the source around the caret, not the whole line."""

from __future__ import annotations

from pathlib import Path

from egraft.ir import Diagnostic
from egraft.ir.core.diagnostics import CONTEXT, MAX_SOURCE_LINE
from egraft.ir.core.location import FileLineColLoc, SourceFile, SourcePos

from .tool import run


def test_caret_in_a_50mb_line_is_clipped() -> None:
    text = "a" * 25_000_000 + "X" + "b" * 25_000_000 + "\nnext line\n"
    d = Diagnostic("error", "here", SourcePos(SourceFile("big.mlir", text), 25_000_000))
    _, line, caret = d.render().split("\n")
    assert d.render().startswith("big.mlir:1:25000001: error: here\n")
    assert line == "..." + "a" * CONTEXT + "X" + "b" * (CONTEXT - 1) + "..."
    assert line[len(caret) - 1] == "X" and caret.strip() == "^"


def test_clipping_at_either_end_of_the_line() -> None:
    text = "X" + "b" * 5000
    _, line, caret = Diagnostic("error", "m", SourcePos(SourceFile("f", text), 0)).render().split("\n")
    assert line == "X" + "b" * (CONTEXT - 1) + "..." and caret == "^"
    text = "a" * 5000 + "X"
    _, line, caret = Diagnostic("error", "m", SourcePos(SourceFile("f", text), 5000)).render().split("\n")
    assert line == "..." + "a" * CONTEXT + "X" and line[len(caret) - 1] == "X"


def test_short_lines_are_shown_whole() -> None:
    text = "x" * (MAX_SOURCE_LINE - 1) + "Y"
    _, line, caret = Diagnostic("error", "m", SourcePos(SourceFile("f", text), MAX_SOURCE_LINE - 1)).render().split("\n")
    assert line == text and len(caret) == MAX_SOURCE_LINE


def test_line_and_column_locations_are_clipped_too() -> None:
    source = SourceFile("f.mlir", "first\n" + "z" * 10_000 + "\n")
    d = Diagnostic("error", "m", FileLineColLoc("f.mlir", 2, 5000))
    _, line, caret = d.render({"f.mlir": source}).split("\n")
    assert len(line) == 2 * CONTEXT + 6 and len(caret) == CONTEXT + 4


def test_cli_error_in_a_long_line(tmp_path: Path) -> None:
    attr = "x" * 300_000
    src = tmp_path / "long.mlir"
    src.write_text(f'func.func @f() -> i32 attributes {{a = "{attr}"}} {{ return %nope : i32 }}\n')
    code, _, err = run(str(src))
    assert code == 1
    assert len(err) < 1000, len(err)
    assert err.startswith(f"{src}:1:")
