"""`--verify-diagnostics`: check emitted diagnostics against `expected-*` comments.

A comment `expected-error {{text}}` expects an error on its own line whose
message contains `text`; `@+N`/`@-N` shift the line, `@above`/`@below` name
the nearest line that is not itself a designator, `@unknown` matches a
diagnostic without a file location.  With `expected-error-re`, the `{{...}}`
groups inside the text are regular expressions and the rest is literal.
Severities are `error`, `warning`, `note` and `remark`.  Notes are checked
like any other diagnostic.

A diagnostic nobody expected is reported as `unexpected error: ...` at its
own location; one that matches an expectation of another severity as a near
miss; an expectation nothing matched as `expected error "text" was not
produced` at the comment.  These are the messages mlir-opt prints.
"""

from __future__ import annotations

import re

import attrs

from egraft.ir import Diagnostic
from egraft.ir.core.location import SourceFile, SourcePos

_DESIGNATOR = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$")


@attrs.define
class Expectation:
    severity: str
    line: int
    pos: SourcePos
    text: str
    regex: re.Pattern[str] | None = None
    unknown_loc: bool = False
    matched: bool = False

    def match(self, message: str) -> bool:
        return self.regex.search(message) is not None if self.regex else self.text in message


class DiagnosticVerifier:
    """Collects the expectations of one buffer and checks diagnostics against them."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.expectations: list[Expectation] = []
        self.failures: list[Diagnostic] = []
        self._scan()

    def _scan(self) -> None:
        offset, last_plain, below = 0, 0, []
        lines = self.source.text.split("\n")
        for idx, text in enumerate(lines):
            line = idx + 1 + self.source.line_offset
            m = _DESIGNATOR.search(text.rstrip())
            if m is None:
                for e in below:
                    e.line = line
                below, last_plain = [], line
                offset += len(text) + 1
                continue
            severity, is_re, designator, body = m.group(1), m.group(2), m.group(4), m.group(5)
            e = Expectation(severity, line, SourcePos(self.source, offset + m.start()), body)
            offset += len(text) + 1
            if is_re and not self._compile(e):
                continue
            if designator is None or designator[0] in "+-":
                e.line += int(designator or 0)
            elif designator == "unknown":
                e.unknown_loc = True
            elif designator == "above":
                e.line = last_plain
            else:
                below.append(e)
                e.line = len(lines) + self.source.line_offset
            self.expectations.append(e)

    def _compile(self, e: Expectation) -> bool:
        parts, rest = [], e.text
        while rest:
            start = rest.find("{{")
            if start < 0:
                parts.append(re.escape(rest))
                break
            parts.append(re.escape(rest[:start]))
            end = rest.find("}}", start + 2)
            if end < 0:
                self.failures.append(Diagnostic("error", "found start of regex with no end '}}'", e.pos))
                return False
            try:
                re.compile(rest[start + 2:end])
            except re.error as err:
                self.failures.append(Diagnostic("error", f"invalid regex: {err}", e.pos))
                return False
            parts.append("(" + rest[start + 2:end] + ")")
            rest = rest[end + 2:]
        e.regex = re.compile("".join(parts))
        return True

    def process(self, diag: Diagnostic) -> None:
        """Check one diagnostic and each of its notes."""
        for d in (diag, *diag.notes):
            self._process_one(d)

    def _process_one(self, d: Diagnostic) -> None:
        pos = d.position()
        near_miss = None
        for e in self.expectations:
            if pos is None:
                if not e.unknown_loc:
                    continue
            elif e.unknown_loc or pos.filename != self.source.name or pos.line != e.line:
                continue
            if e.match(d.message):
                if e.severity == d.severity:
                    e.matched = True
                    return
                near_miss = e
        if near_miss is not None:
            self.failures.append(Diagnostic(
                "error", f"'{d.severity}' diagnostic emitted when expecting a '{near_miss.severity}'",
                near_miss.pos))
        else:
            self.failures.append(Diagnostic("error", f"unexpected {d.severity}: {d.message}", d.loc))

    def finish(self) -> list[Diagnostic]:
        """Every failure: near misses, unexpected diagnostics, unmatched expectations."""
        out = list(self.failures)
        out += [Diagnostic("error", f'expected {e.severity} "{e.text}" was not produced', e.pos)
                for e in self.expectations if not e.matched]
        return out
