"""docs/rules.md's five-minute tutorial, run as printed.

The tutorial's files (fenced blocks with a file name after the language, ```` ```text my_rules.rules ````)
are written to a temporary folder outside the repository, and each `console` block's `$ `
commands run there through a shell, with `egraft-opt` on PATH (this interpreter's). Their
output (stdout and stderr, as a terminal shows them) must be what the block prints after
the command: a line `...` stands for any lines, `...` inside a line for any text; `$ echo $?`
prints the exit status of the command before. So the tutorial cannot go stale.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .tool import REPO

DOC = REPO / "docs" / "rules.md"
FENCE = re.compile(r"^```(\w+)(?: ([^\s`]+))?\n(.*?)^```$", re.M | re.S)


def tutorial() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Five minutes")
    return text[start:text.index("\n## ", start + 1)]


def blocks(kind: str | None = None) -> list[tuple[str, str | None, str]]:
    return [(m.group(1), m.group(2), m.group(3)) for m in FENCE.finditer(tutorial())
            if kind is None or m.group(1) == kind]


def sessions() -> list[list[tuple[str, list[str]]]]:
    """Each console block as (command, expected output lines) steps."""
    found = []
    for _, _, body in blocks("console"):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                assert steps, f"output before any command in a console block:\n{body}"
                steps[-1][1].append(line)
        found.append(steps)
    return found


def expected_pattern(lines: list[str]) -> re.Pattern[str]:
    parts = []
    for line in lines:
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(r"[^\n]*".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the repository with the tutorial's files and an `egraft-opt` on PATH."""
    root = tmp_path_factory.mktemp("tutorial")
    assert REPO not in root.parents
    for _, name, body in blocks():
        if name is not None:
            (root / name).write_text(body, encoding="utf-8")
    tool = root / "bin" / "egraft-opt"
    tool.parent.mkdir()
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "import sys; from egraft.passes.cli.main import main; '
                    f'sys.exit(main())" "$@"\n')
    tool.chmod(0o755)
    return root


def test_the_tutorial_has_its_steps() -> None:
    names = {name for _, name, _ in blocks() if name}
    assert {"my_rules.rules", "example.mlir"} <= names
    commands = [command for steps in sessions() for command, _ in steps]
    assert any("--check-rules" in c for c in commands) and any("-eqsat" in c for c in commands)


@pytest.mark.parametrize("index", range(len(sessions())))
def test_session_prints_what_the_tutorial_shows(folder: Path, index: int) -> None:
    import os

    env = dict(os.environ, PATH=f"{folder / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    status = 0
    for command, lines in sessions()[index]:
        if command == "echo $?":
            output = f"{status}\n"
        else:
            done = subprocess.run(["/bin/sh", "-c", command], cwd=folder, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=600)
            status, output = done.returncode, done.stdout
        assert expected_pattern(lines).fullmatch(output), f"$ {command}\n--- got:\n{output}--- expected:\n" + \
            "\n".join(lines)
