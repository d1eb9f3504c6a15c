"""Passes and their registry: a pass is a small attrs class whose fields are its options.

A pass declares its command-line name, a one-line summary and (optionally)
the op it must be anchored on, right beside its options:

    @register_pass
    @attrs.define
    class Canonicalize(Pass):
        NAME = "canonicalize"
        SUMMARY = "Apply canonicalization patterns"
        max_iterations: int = option(10, "Iterations of the greedy driver")

        def run(self, op: Operation, ctx: PassContext) -> None: ...

Field `max_iterations` is spelled `max-iterations` in pipelines and on the
command line, as MLIR spells its options.  Keeping the option declarations
on the class (rather than in a parallel table) means `--help`, the pipeline
parser and the docs cannot disagree about what a pass accepts.

The registry (`PASSES`) finds a built-in pass's module in the generated index
(`pass_index.py`) and imports it on first use: nothing lists the pass modules
by hand, and a run imports only the passes it names.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any, Callable, ClassVar, TypeVar

import attrs

from egraft.ir import Diagnostic, Operation
from egraft.passes.manager.pass_index import PASS_MODULES


class PassFailure(Exception):
    """Raised by a pass to signal failure; the diagnostics (if any) say why."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic | None = None) -> None:
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])
        super().__init__("; ".join(d.message for d in self.diagnostics) or "pass failed")


class PassContext:
    """What a running pass may use besides its op: a sink for warnings and remarks
    that do not fail the pass (errors are raised as `PassFailure`)."""

    def __init__(self, emit: Callable[[Diagnostic], None]) -> None:
        self.emit = emit
        # The running pass's row of the --mlir-timing report (a pass_manager.TimingNode), None untimed.
        self.timing: Any = None

    def time_phases(self, seconds: Mapping[str, float]) -> None:
        """Add wall times of the running pass's phases (the e-graph round trip's lower, load,
        saturate, ...) under its row of the --mlir-timing report, summed over its runs."""
        if self.timing is not None:
            for name, value in seconds.items():
                self.timing.child(name, name).seconds += value


class Pass:
    """Base of all passes.  Subclasses set NAME and SUMMARY and implement `run`."""

    NAME: ClassVar[str] = ""
    SUMMARY: ClassVar[str] = ""
    # The op name this pass must run on (None: any op).  A pass with an anchor
    # added to a pipeline anchored elsewhere is nested implicitly, as mlir-opt does.
    ANCHOR: ClassVar[str | None] = None
    # True: an affine pass in the graybox RFC's sense; the manager runs it on every
    # affine scope (`affine.graybox`) inside its anchor op, innermost first, and then
    # on the anchor op itself (`passes/manager/affine_scopes.py`).
    AFFINE_SCOPED: ClassVar[bool] = False

    def run(self, op: Operation, ctx: PassContext) -> None:
        raise NotImplementedError

    @property
    def display_name(self) -> str:
        """The name MLIR's reports use: the class name (`CSE`, `SymbolDCE`)."""
        return type(self).__name__

    def options_text(self) -> str:
        """`{key=value ...}` for options that differ from their defaults ('' if none)."""
        parts = [f"{o.name}={format_option_value(getattr(self, o.field))}"
                 for o in options_of(type(self)) if getattr(self, o.field) != o.default]
        return "{" + " ".join(parts) + "}" if parts else ""


@attrs.frozen
class PassOption:
    """One declared option: its spelling, Python field, type, default, doc line and,
    for numbers, the valid range (None: unbounded on that side)."""

    name: str
    field: str
    type: type
    default: Any
    doc: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()  # a string option's allowed values (empty: any)
    bare: str | None = None  # a string option's value when given as a bare flag (None: it needs one)

    def range_text(self) -> str:
        """`>= 1`, `0 to 10`, `egraph, greedy` or '' (unbounded)."""
        if self.choices:
            return ", ".join(self.choices)
        if self.min is not None and self.max is not None:
            return f"{self.min} to {self.max}"
        if self.min is not None:
            return f">= {self.min}"
        return f"<= {self.max}" if self.max is not None else ""


def option(default: Any, doc: str, *, min: float | None = None, max: float | None = None,
           choices: tuple[str, ...] = (), bare: str | None = None) -> Any:
    """Declare a pass option (an attrs field with a doc line).  A number option states
    its valid range and a string option its allowed values, so that a value outside
    them (`max-iterations=-5`, `driver=egrahp`) is a command-line error instead of a
    pass quietly doing nothing."""
    metadata = {"doc": doc, "min": min, "max": max, "choices": choices, "bare": bare}
    if isinstance(default, list):
        return attrs.field(factory=lambda: list(default), metadata=metadata)
    return attrs.field(default=default, metadata=metadata)


def options_of(cls: type[Pass]) -> list[PassOption]:
    """The declared options of a pass class, in declaration order."""
    out = []
    for f in attrs.fields(cls):
        default = f.default.factory() if isinstance(f.default, attrs.Factory) else f.default  # type: ignore[union-attr]
        ftype = f.type if isinstance(f.type, type) else _TYPES.get(str(f.type), str)
        out.append(PassOption(f.name.replace("_", "-"), f.name, ftype, default, f.metadata.get("doc", ""),
                              f.metadata.get("min"), f.metadata.get("max"), f.metadata.get("choices", ()),
                              f.metadata.get("bare")))
    return out


_TYPES: dict[str, type] = {"int": int, "bool": bool, "str": str, "float": float, "list[str]": list}


def format_option_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def convert_option(opt: PassOption, text: str | None) -> Any:
    """The typed value of `text` for `opt`; ValueError with a message if it does not fit.
    A bare flag (`text` None) means true for booleans, as LLVM's options do."""
    if opt.type is bool:
        if text is None or text.lower() in ("true", "1"):
            return True
        if text.lower() in ("false", "0"):
            return False
        raise ValueError(f"'{text}' is invalid value for boolean argument '{opt.name}'! Try 0 or 1")
    if text is None and opt.bare is not None:
        return opt.bare
    if text is None:
        raise ValueError(f"option '{opt.name}' requires a value")
    if opt.type in (int, float):
        kind = "integer" if opt.type is int else "floating point"
        try:
            value = int(text, 0) if opt.type is int else float(text)
        except ValueError:
            raise ValueError(f"'{text}' value invalid for {kind} argument '{opt.name}'") from None
        # `not (a <= b)` also refuses a NaN float.
        if opt.min is not None and not opt.min <= value or opt.max is not None and not value <= opt.max:
            raise ValueError(f"'{text}' value invalid for {kind} argument '{opt.name}' "
                             f"(valid: {opt.range_text()})")
        return value
    if opt.type is list:
        return [t for t in text.split(",") if t]
    if opt.choices and text not in opt.choices:
        raise ValueError(f"for the '{opt.name}' option: Cannot find option named '{text}'! "
                         f"(valid: {opt.range_text()})")
    return text


class PassRegistry(Mapping[str, type[Pass]]):
    """The passes by name, each module imported when its pass is first asked for.

    A pass module registers its class when imported (`register_pass`).  Which module
    holds which built-in pass is read from the generated index (`pass_index.py`,
    written by `python -m egraft.passes.manager.regenerate`), so no list of imports is
    kept by hand and `egraft-opt -cse` imports only `cse.py`.  Looking a name up imports
    its module; iterating (`--help`, the docs) imports every indexed module first.
    Passes registered from elsewhere (tests) join the same mapping.
    """

    def __init__(self, index: Mapping[str, str]) -> None:
        self._index = dict(index)  # pass name -> module that registers it
        self._classes: dict[str, type[Pass]] = {}

    def add(self, cls: type[Pass]) -> None:
        """Register `cls` under its NAME; a name taken (or indexed for another module) is an error."""
        owner = self._index.get(cls.NAME, cls.__module__)
        if not cls.NAME or cls.NAME in self._classes or owner != cls.__module__:
            raise ValueError(f"pass {cls.__name__} needs a unique NAME (got {cls.NAME!r})")
        self._classes[cls.NAME] = cls

    def __getitem__(self, name: str) -> type[Pass]:
        cls = self._classes.get(name)
        if cls is None and name in self._index:
            importlib.import_module(self._index[name])
            cls = self._classes.get(name)
            if cls is None:
                raise LookupError(f"{self._index[name]} does not register pass '{name}': the pass index "
                                  f"is stale, run `python -m egraft.passes.manager.regenerate`")
        if cls is None:
            raise KeyError(name)
        return cls

    def __contains__(self, name: object) -> bool:
        return name in self._classes or name in self._index

    def registered(self) -> dict[str, type[Pass]]:
        """The passes registered so far, without importing any module."""
        return dict(self._classes)

    def _load_all(self) -> dict[str, type[Pass]]:
        for name in self._index:
            self[name]  # imports the module that registers it
        return self._classes

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._load_all()))

    def __len__(self) -> int:
        return len(self._load_all())


PASSES = PassRegistry(PASS_MODULES)

P = TypeVar("P", bound=type[Pass])


def register_pass(cls: P) -> P:
    """Class decorator: make a pass available by its NAME (pipelines and CLI flags)."""
    PASSES.add(cls)
    return cls
