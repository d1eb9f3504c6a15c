"""Textual pass pipelines: `builtin.module(func.func(cse,canonicalize{max-iterations=3}))`.

Grammar (MLIR's, plus its 2019 spellings):

    list     ::= element (`,` element)*
    element  ::= op-name `(` list? `)`       a nested pipeline on that op
               | pass-name options?
    options  ::= `{` (key (`=` value)?)* `}`  value: bare, "quoted" or {braced}

`func` and `module` name `func.func` and `builtin.module`, as in 2019's
`-pass-pipeline='func(canonicalize)'`; `any` anchors on every op.  A list
that is not a single `builtin.module(...)`/`any(...)` is the body of the
implicit module pipeline, so flat lists (`cse,symbol-dce`) work too.

Errors are diagnostics in a `<pipeline>` buffer, with the pipeline text and
a caret under the offending column, never a Python traceback.
"""

from __future__ import annotations

import re

import attrs

from egraft.ir import Diagnostic, DiagnosticError
from egraft.ir.core.location import SourceFile, SourcePos

from egraft.passes.manager.pass_manager import OpPipeline
from egraft.passes.manager.registry import PASSES, Pass, convert_option, options_of

ANCHOR_ALIASES = {"func": "func.func", "module": "builtin.module", "any": None}
#: 2019 anchors, which nested relative to the module in 2019's mlir-opt.
_LEGACY_ANCHORS = ("func",)
_NAME = re.compile(r"[A-Za-z0-9_][\w.\-]*")
_WS = re.compile(r"\s*")


@attrs.define
class _Element:
    """One parsed element: a nested pipeline (`nested` set) or a pass with options."""

    name: str
    pos: int
    nested: list["_Element"] | None = None
    options: list[tuple[str, str | None, int]] = attrs.field(factory=list)


class _PipelineParser:
    def __init__(self, text: str, source_name: str) -> None:
        self.text = text
        self.pos = 0
        self.source = SourceFile(source_name, text)

    def error(self, message: str, pos: int) -> DiagnosticError:
        return DiagnosticError(Diagnostic("error", message, SourcePos(self.source, pos)))

    def skip_ws(self) -> None:
        self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def parse_list(self, closing: str) -> list[_Element]:
        """Elements up to `closing` ('' for the end of the text)."""
        elements = []
        while True:
            elements.append(self.parse_element())
            c = self.peek()
            if c == ",":
                self.pos += 1
                continue
            if c == closing:
                return elements
            if c == ")":
                raise self.error("encountered extra closing ')' creating unbalanced parentheses "
                                 "while parsing pipeline", self.pos)
            if c == "":
                raise self.error("encountered unbalanced parentheses while parsing pipeline", self.pos)
            raise self.error("expected ',' after parsing pipeline", self.pos)

    def parse_element(self) -> _Element:
        self.skip_ws()
        start = self.pos
        m = _NAME.match(self.text, self.pos)
        name = m.group() if m else ""
        self.pos = m.end() if m else self.pos
        if self.peek() == "(":
            self.pos += 1
            nested = [] if self.peek() == ")" else self.parse_list(")")
            self.pos += 1
            return _Element(name, start, nested=nested)
        return _Element(name, start, options=self.parse_options() if self.peek() == "{" else [])

    def parse_options(self) -> list[tuple[str, str | None, int]]:
        """`{k=v k2 ...}` as (key, value or None, key position)."""
        open_pos = self.pos
        self.pos += 1
        out = []
        while self.peek() != "}":
            if self.peek() == "":
                raise self.error("missing '}' closing the pass options", open_pos)
            key_pos = self.pos
            m = re.compile(r"[^\s=}]+").match(self.text, self.pos)
            assert m is not None  # peek() saw a character other than '}' and whitespace
            self.pos = m.end()
            value = None
            if self.pos < len(self.text) and self.text[self.pos] == "=":
                self.pos += 1
                value = self.parse_option_value()
            out.append((m.group(), value, key_pos))
        self.pos += 1
        return out

    def parse_option_value(self) -> str:
        text, start = self.text, self.pos
        if start < len(text) and text[start] in "\"'":
            end = text.find(text[start], start + 1)
            if end < 0:
                raise self.error("unterminated quoted option value", start)
            self.pos = end + 1
            return text[start + 1:end]
        if start < len(text) and text[start] == "{":
            depth, i = 0, start
            while i < len(text):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                if depth == 0:
                    self.pos = i + 1
                    return text[start + 1:i]
                i += 1
            raise self.error("missing '}' closing the option value", start)
        m = re.compile(r"[^\s}]*").match(text, start)
        self.pos = m.end()  # type: ignore[union-attr]
        return m.group()  # type: ignore[union-attr]

    # ------------------------------------------------------------ building

    def build(self, anchor: str | None, elements: list[_Element]) -> OpPipeline:
        pipeline = OpPipeline(anchor)
        for e in elements:
            if e.nested is None:
                pipeline.add(self.make_pass(e.name, e.pos, e.options))
            else:
                pipeline.elements.append(self.build(self.anchor(e), e.nested))
        return pipeline

    def anchor(self, e: _Element) -> str | None:
        """The op name a nested pipeline element is anchored on (None: any op)."""
        if e.name in ANCHOR_ALIASES:
            return ANCHOR_ALIASES[e.name]
        if "." not in e.name:
            raise self.error(f"'{e.name}' does not refer to a registered operation name "
                             f"(nested pipelines are anchored on ops like 'func.func')", e.pos)
        return e.name

    def make_pass(self, name: str, pos: int, options: list[tuple[str, str | None, int]]) -> Pass:
        cls = PASSES.get(name)
        if cls is None:
            raise self.error(f"'{name}' does not refer to a registered pass or pass pipeline", pos)
        declared = {o.name: o for o in options_of(cls)}
        values = {}
        for key, value, key_pos in options:
            opt = declared.get(key)
            if opt is None:
                known = ", ".join(declared) or "none"
                raise self.error(f"no such option '{key}' for pass '{name}' (options: {known})", key_pos)
            try:
                values[opt.field] = convert_option(opt, value)
            except ValueError as e:
                raise self.error(str(e), key_pos) from None
        return cls(**values)


def parse_pipeline(text: str, source_name: str = "<pipeline>") -> OpPipeline:
    """The pipeline `text` describes, rooted at `builtin.module` (or `any`)."""
    p = _PipelineParser(text, source_name)
    if p.peek() == "":
        return OpPipeline("builtin.module", implicit=True)
    elements = p.parse_list("")
    top = elements[0]
    if len(elements) == 1 and top.nested is not None and top.name in ("builtin.module", "module", "any"):
        return p.build(ANCHOR_ALIASES.get(top.name, top.name), top.nested)
    root = p.build("builtin.module", elements)
    root.implicit = True
    return root


def parse_pipeline_option(text: str, source_name: str = "<pipeline>") -> OpPipeline:
    """What `--pass-pipeline=TEXT` means, as today's mlir-opt reads it: `op.name(...)` is
    the pass manager of the top-level op, anchored on that op, so running it on another op
    (`func.func(cse)` on a module) fails with MLIR's "can't run 'func.func' pass manager
    on 'builtin.module' op"; a list of such anchored pipelines is rejected with MLIR's
    message.  The 2019 spellings keep their 2019 meaning, relative to the module: `func(...)`
    nests on each function, a flat list of passes runs on the module (`parse_pipeline`).
    Other callers (Python code, tests) use `parse_pipeline`, which nests like MLIR's
    `parsePassPipeline(text, pm)` into an existing module pass manager."""
    p = _PipelineParser(text, source_name)
    if p.peek() == "":
        return parse_pipeline(text, source_name)
    elements = p.parse_list("")
    anchored = [e for e in elements if e.nested is not None and e.name not in _LEGACY_ANCHORS]
    if not anchored:
        return parse_pipeline(text, source_name)
    if len(elements) > 1:
        raise p.error("expected pass pipeline to be wrapped with the anchor operation type, "
                      "e.g. 'builtin.module(...)'", anchored[0].pos)
    top = elements[0]
    return p.build(p.anchor(top), top.nested or [])


def parse_pass_flag(name: str, options_text: str | None) -> OpPipeline:
    """The one-pass pipeline a command-line flag like `-canonicalize="max-iterations=3"` means."""
    text = name if options_text is None else f"{name}{{{options_text}}}"
    return parse_pipeline(text, f"<-{name}>")
