"""Loading a user's rules from a file into the rule-set registry (`egraft-opt --load-rules FILE`).

Three kinds of file, told apart by the extension:

* `.py`: a Python module that declares rules and registers sets with `register_rule_set`; it
  runs once, as a script would (its folder first on `sys.path` while it runs, so it may
  import its neighbours).  What it registered is what it loaded.
* `.td`: MLIR DRR, through the importer (`drr.py`): its patterns become one set named after
  the file (`my_patterns.td` -> `my_patterns`); each pattern it cannot map is a warning
  naming the pattern and why (the C++ it needs, the DRR feature it does not read).
* anything else: a rule file (`rule_file.py`): sets named after the file or its `[set]`
  lines.

A file loaded once is not loaded again in the same process (same path and content: a
no-op, as a second import is); any other file that registers a set name already taken (a
built-in set's, another file's) is an error.  Mistakes are located as in every other input.  A rule file or `.td` file raises
`DiagnosticError`.  A Python module that raises gives `RuleLoadError`, whose text is
`file:line:col: error: <exception>` at the deepest frame of the user's code, then the
traceback clipped to the user's frames (those in the module's folder: egraft's own frames,
importlib's and libraries' say nothing about the user's mistake); a `RuleError` from `rule()` is reported at the
`rule(...)` call that declared it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import sys
import traceback
from pathlib import Path

import attrs

from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.core.location import FileLineColLoc

from .rule import RuleError
from .rule_file import parse_rule_file
from .rule_sets import register_rule_set, rule_sets

#: egraft's own folders (its four packages, siblings of this one in a checkout and installed).
_EGRAFT_ROOTS = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name)
                      for name in ("ir", "patterns", "rewrite", "passes"))
_MODULE_NAMES = itertools.count()
#: Files loaded in this process, by (absolute path, content): loading one again is a no-op,
#: as importing a module twice is (egraft-opt's `main` may run many times in one process).
_LOADED: dict[tuple[str, bytes], "LoadedRules"] = {}


class RuleLoadError(Exception):
    """A Python rule module that raised; `str()` is the located error and clipped traceback."""


@attrs.frozen
class LoadedRules:
    """What one file registered: its set names (in order) and warnings (rendered diagnostics)."""

    path: str
    kind: str  # "python", "drr" or "rule file"
    sets: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def load_rules(path: str | os.PathLike[str]) -> LoadedRules:
    """Load the rules of one file (by its extension, above) and register their sets."""
    path = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise DiagnosticError(Diagnostic("error", f"cannot open rule file: {e.strerror}",
                                         FileLineColLoc(path, 1, 1))) from None
    key = (os.path.abspath(path), hashlib.sha256(data).digest())
    if key not in _LOADED:
        _LOADED[key] = _load(path, data)
    return _LOADED[key]


def _load(path: str, data: bytes) -> LoadedRules:
    suffix = Path(path).suffix
    if suffix == ".py":
        return _load_python(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DiagnosticError(Diagnostic("error", f"rule file is not valid UTF-8 (byte {e.start})",
                                         FileLineColLoc(path, 1, 1))) from None
    if suffix == ".td":
        return _load_drr(path, text)
    sets = parse_rule_file(text, path)
    for name, rules in sets.items():
        _register(path, name, rules, f"rules of {Path(path).name}")
    return LoadedRules(path, "rule file", tuple(sets))


def _register(path: str, name: str, rules: list, doc: str) -> None:
    if name in rule_sets():
        line = rules[0].origin.line if rules else 1
        raise DiagnosticError(Diagnostic("error", f"rule set '{name}' is already registered (rename the file "
                                                  f"or start the rules with a [new-name] line)",
                                         FileLineColLoc(path, line, 1)))
    register_rule_set(name, rules, doc)


def _load_drr(path: str, text: str) -> LoadedRules:
    from .drr import import_drr
    from .tablegen import TableGenError

    try:
        report = import_drr(text, path)
    except TableGenError as e:
        raise DiagnosticError(Diagnostic("error", str(e).removeprefix(f"line {e.line}: "),
                                         FileLineColLoc(path, e.line, 1))) from None
    name = Path(path).stem
    _register(path, name, report.rules, f"DRR patterns of {Path(path).name}")
    warnings = tuple(Diagnostic("warning", f"pattern '{s.name}' not imported: {'; '.join(s.reasons)}",
                                FileLineColLoc(s.origin.file, s.origin.line, 1)).render()
                     for s in report.skipped)
    return LoadedRules(path, "drr", (name,), warnings)


def _load_python(path: str) -> LoadedRules:
    before = set(rule_sets())
    name = f"egraft_user_rules_{next(_MODULE_NAMES)}_{Path(path).stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DiagnosticError(Diagnostic("error", "not a loadable Python module", FileLineColLoc(path, 1, 1)))
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:
        sys.modules.pop(name, None)
        raise RuleLoadError(clipped_report(e, path)) from None
    finally:
        if sys.path and sys.path[0] == folder:
            del sys.path[0]
    added = tuple(n for n in rule_sets() if n not in before)
    warnings = () if added else (Diagnostic("warning", "the module registered no rule set "
                                            "(call register_rule_set(\"my-set\", [...]))",
                                            FileLineColLoc(path, 1, 1)).render(),)
    return LoadedRules(path, "python", added, warnings)


def _is_users(filename: str, folder: str) -> bool:
    """A frame in the user's module or its neighbours (not egraft's, the import system's or
    a library's)."""
    if filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>
        return False
    full = os.path.abspath(filename)
    return full.startswith(folder + os.sep) and not any(full.startswith(root + os.sep) for root in _EGRAFT_ROOTS)


def clipped_report(error: BaseException, path: str) -> str:
    """`file:line:col: error: Kind: message` at the deepest user frame, the source line and a
    caret, then the traceback of the user's frames only."""
    kind = type(error).__name__
    message = str(error)
    if isinstance(error, SyntaxError):
        where = FileLineColLoc(error.filename or path, error.lineno or 1, error.offset or 1)
        return _located(where, f"{kind}: {error.msg}", path)
    folder = os.path.dirname(os.path.abspath(path))
    frames = [f for f in traceback.extract_tb(error.__traceback__) if _is_users(f.filename, folder)]
    if isinstance(error, RuleError) and error.origin is not None:
        message = message.removeprefix(f"{error.origin}: ")
    if not frames:
        return _located(FileLineColLoc(path, 1, 1), f"{kind}: {message}", path)
    last = frames[-1]
    head = _located(FileLineColLoc(last.filename, last.lineno or 1, (last.colno or 0) + 1), f"{kind}: {message}",
                    path)
    lines = [head, f"Traceback (most recent call last), {Path(path).name}'s frames only:"]
    lines += [line.rstrip("\n") for line in traceback.format_list(frames)]
    return "\n".join(lines)


def _located(where: FileLineColLoc, message: str, path: str) -> str:
    """The error line (the file named as the user named it) with its source line and caret."""
    shown = path if os.path.abspath(where.filename) == os.path.abspath(path) else where.filename
    text = f"{shown}:{where.line}:{where.col}: error: {message}"
    try:
        source = Path(where.filename).read_text(encoding="utf-8").split("\n")[where.line - 1]
    except (OSError, UnicodeDecodeError, IndexError):
        return text
    return f"{text}\n{source}\n{' ' * (where.col - 1)}^"


__all__ = ["LoadedRules", "RuleLoadError", "clipped_report", "load_rules"]
