"""A lit-style runner for `.mlir` tests: RUN lines, `-split-input-file` cases, FileCheck.

A test file's `// RUN:` lines (`# RUN:` in `.pbtxt` files) run through lit's own
shell parser (pipes, `&&`, redirections, `not`), with the peer tools renamed and
nothing else changed: `tf-opt`, `mlir-opt`, `tfg-opt-no-passes`,
`tfg-transforms-opt` and `tfg-translate` become `egraft-opt` (which takes
`tfg-translate`'s `-graphdef-to-mlir`/`-mlir-to-graphdef` as flags), `FileCheck`
becomes the `filecheck` package.  Both run in this process, which keeps a few
hundred cases to seconds.

When a RUN line uses `-split-input-file`, the file is cut at its `// -----`
lines and each case runs on its own: the case's text, preceded by as many
empty lines as came before it, is written as the `%s` file, so `@+1`
designators, `[[@LINE]]` and diagnostics keep the whole file's line numbers
and FileCheck sees only that case's CHECK lines.  A FileCheck whose prefixes
do not occur in the case checks nothing and passes (the other cases hold
them).  Every RUN line of such a file runs on every case, so a
`not tool -split-input-file` line (failure expected of the file as a whole)
would wrongly fail the cases that succeed; no in-scope upstream file has one.
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path
from typing import Iterator

import attrs
from lit.ShCommands import Command, Pipeline, Seq
from lit.ShUtil import ShParser

from egraft.passes.cli.main import main as egraft_opt_main

TOOL_RENAMES = {"tf-opt": "egraft-opt", "mlir-opt": "egraft-opt", "tfg-opt-no-passes": "egraft-opt",
                "tfg-transforms-opt": "egraft-opt", "tfg-translate": "egraft-opt", "FileCheck": "filecheck"}
_RUN = re.compile(r"(?://|#)\s*RUN:(.*)$")
_SPLIT = re.compile(r"^[ \t]*// -----[^\n]*(?:\n|\Z)", re.M)


@attrs.frozen
class Case:
    """One runnable unit: a whole file, or one `-split-input-file` chunk of it."""

    id: str
    path: Path
    text: str  # the case's text, padded with empty lines to its place in the file
    run_lines: tuple[str, ...]


@attrs.define
class Outcome:
    passed: bool
    log: str


def run_lines(text: str) -> list[str]:
    """The RUN commands of a file, with `\\` continuations joined."""
    out, pending = [], ""
    for line in text.splitlines():
        m = _RUN.search(line)
        if m is None:
            continue
        part = m.group(1).rstrip()
        if part.endswith("\\"):
            pending += part[:-1] + " "
            continue
        out.append((pending + part).strip())
        pending = ""
    return out


def cases(path: Path, label: str) -> list[Case]:
    """The cases of one file; ids are `label::caseN`, or `label::all` for a file run whole."""
    text = path.read_text(encoding="utf-8")
    runs = tuple(run_lines(text))
    if not any("split-input-file" in r for r in runs):
        return [Case(f"{label}::all", path, text, runs)]
    out, start, line = [], 0, 0
    bounds = [(m.start(), m.end()) for m in _SPLIT.finditer(text)] + [(len(text), len(text))]
    for i, (cut, after) in enumerate(bounds):
        out.append(Case(f"{label}::case{i}", path, "\n" * line + text[start:cut], runs))
        line += text.count("\n", start, after)
        start = after
    return out


def run_case(case: Case) -> Outcome:
    """Run every RUN line on the case; passed when each exits 0."""
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix="egraft-lit-") as tmp:
        src = Path(tmp) / case.path.name
        src.write_text(case.text, encoding="utf-8")
        subs = {"%s": str(src), "%S": tmp, "%t": str(Path(tmp) / "out.tmp"), "%T": tmp, "%p": tmp, "%%": "%"}
        for cmd in case.run_lines:
            expanded = re.sub(r"%[sStTp%]", lambda m: subs[m.group()], cmd)
            log.append(f"$ {expanded}")
            try:
                status = _Shell(Path(tmp), log).run(ShParser(expanded, False, True).parse())
            except _Unsupported as e:
                log.append(f"unsupported: {e}")
                return Outcome(False, "\n".join(log))
            if status != 0:
                log.append(f"exit status {status}")
                return Outcome(False, "\n".join(log))
    return Outcome(True, "\n".join(log))


class _Unsupported(Exception):
    """A RUN line needs a tool or shell feature the runner does not provide."""


class _Shell:
    """lit's internal shell semantics over in-process tools (pipefail on)."""

    def __init__(self, cwd: Path, log: list[str]) -> None:
        self.cwd = cwd
        self.log = log

    def run(self, node: Seq | Pipeline) -> int:
        if isinstance(node, Seq):
            lhs = self.run(node.lhs)
            if node.op == "&&" and lhs != 0 or node.op == "||" and lhs == 0:
                return lhs
            return self.run(node.rhs)
        data, status = b"", 0
        for cmd in node.commands:
            data, code = self.command(cmd, data)
            status = code or status
        if data:
            self.log.append(data.decode("utf-8", "replace").rstrip())
        if node.negate:
            status = 0 if status else 1
        return status

    def command(self, cmd: Command, stdin: bytes) -> tuple[bytes, int]:
        args = [str(a) for a in cmd.args]
        negate = 0
        while args and args[0] == "not":
            negate += 1
            args = args[1:]
        if not args:
            raise _Unsupported("empty command")
        merge_err, out_file, err_file = False, None, None
        for (op, *fd), target in cmd.redirects:
            if op == ">&" and fd == [2] and target == "1":
                merge_err = True
            elif op == "<":
                stdin = (self.cwd / target).read_bytes()
            elif op in (">", ">>") and not fd:
                out_file = self.cwd / target
            elif op in (">", ">>") and fd == [2]:
                err_file = self.cwd / target
            else:
                raise _Unsupported(f"redirection {op}{fd} {target}")
        tool = TOOL_RENAMES.get(args[0], args[0])
        if tool == "egraft-opt":
            out, err, code = _egraft_opt(args[1:], stdin)
        elif tool == "filecheck":
            out, err, code = _filecheck(args[1:], stdin)
        else:
            raise _Unsupported(f"tool '{args[0]}'")
        if err:
            self.log.append(err.decode("utf-8", "replace").rstrip())
        if err_file is not None:
            err_file.write_bytes(err)
        if merge_err:
            out = err + out
        if out_file is not None:
            out_file.write_bytes(out)
            out = b""
        for _ in range(negate):
            code = 0 if code else 1
        return out, code


def _egraft_opt(args: list[str], stdin: bytes) -> tuple[bytes, bytes, int]:
    out, err = io.StringIO(), io.StringIO()
    code = egraft_opt_main(args, stdin=lambda: stdin, stdout=out, stderr=err)
    return out.getvalue().encode(), err.getvalue().encode(), code


def _filecheck(args: list[str], stdin: bytes) -> tuple[bytes, bytes, int]:
    from filecheck.matcher import Matcher
    from filecheck.options import parse_argv_options

    try:
        opts = parse_argv_options(["filecheck", *args])
    except RuntimeError as e:
        return b"", f"filecheck: {e}".encode(), 2
    check_text = Path(opts.match_filename).read_text(encoding="utf-8")
    raw = opts.check_prefixes  # a list in filecheck's options; str() of it would match nothing
    prefixes = [p for item in (raw if isinstance(raw, list) else [raw])
                for p in re.split(r"[,\s]+", str(item)) if p]
    if not any(re.search(rf"(?<![\w-]){re.escape(p)}(?:-[\w-]+)?:", check_text) for p in prefixes):
        return b"", b"", 0  # this case holds none of the checks
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _swap_stdin(fake_stdin):
        try:
            code = Matcher.from_opts(opts).run()
        except SystemExit as e:
            code = int(e.code or 0)
    return out.getvalue().encode(), err.getvalue().encode(), code


@contextlib.contextmanager
def _swap_stdin(stream: io.TextIOWrapper) -> Iterator[None]:
    import sys

    saved = sys.stdin
    sys.stdin = stream
    try:
        yield
    finally:
        sys.stdin = saved

