"""What `egraft-opt` does with one input: split, parse, verify, run passes, print.

Each `--split-input-file` chunk is processed on its own, with its line
numbers continuing the whole file's, so diagnostics and `expected-*`
comments refer to the lines a reader sees.  A failing chunk prints nothing
and does not stop the others.  Under `--verify-diagnostics` a chunk succeeds
when its diagnostics match its expectations exactly; whether processing
itself failed does not matter.
"""

from __future__ import annotations

import gc

import re
import time
from typing import Callable, TextIO

import attrs

from egraft.ir import Diagnostic, DiagnosticError, Operation, print_ir, verify
from egraft.ir.core.location import SourceFile, SourcePos
from egraft.ir.dialects.std_era import ERA_2019_CHECKS
from egraft.ir.syntax.era import spell_2019
from egraft.ir.syntax.parser import Parser

from egraft.passes.cli.diag_verifier import DiagnosticVerifier
from egraft.passes.cli.formats import Format, PrintOptions
from egraft.passes.manager.pass_manager import OpPipeline, PassManager, TimingNode
from egraft.passes.manager.registry import Pass, PassFailure

DEFAULT_SPLIT_MARKER = "// -----"


@attrs.define
class OptConfig:
    """The settings of one `egraft-opt` run (the command-line flags, parsed)."""

    pipeline: OpPipeline = attrs.field(factory=lambda: OpPipeline("builtin.module", implicit=True))
    split_marker: str | None = None
    verify_diagnostics: bool = False
    print_options: PrintOptions = PrintOptions()
    allow_unregistered: bool = False
    verify_each: bool = True
    print_ir_after_all: bool = False
    no_implicit_module: bool = False
    timing: TimingNode | None = None


def split_chunks(text: str, marker: str) -> list[tuple[str, int]]:
    """(chunk text, number of lines before it) for each part between marker lines."""
    pattern = re.compile(r"^[ \t]*" + re.escape(marker) + r"[^\n]*(?:\n|\Z)", re.M)
    chunks, start, line = [], 0, 0
    for m in pattern.finditer(text):
        chunks.append((text[start:m.start()], line))
        line += text.count("\n", start, m.end())
        start = m.end()
    chunks.append((text[start:], line))
    return chunks


class Driver:
    """Runs the configured pipeline over inputs, reporting diagnostics to `err`."""

    def __init__(self, config: OptConfig, err: TextIO) -> None:
        self.config = config
        self.err = err

    def process_text(self, text: str, filename: str, out_format: Format) -> tuple[bool, bytes]:
        """Process a whole MLIR text buffer; (success, output bytes)."""
        marker = self.config.split_marker
        if marker is None:
            return self.process_chunk(text, filename, 0, out_format)
        ok, outputs = True, []
        for chunk, line_offset in split_chunks(text, marker):
            chunk_ok, output = self.process_chunk(chunk, filename, line_offset, out_format)
            ok &= chunk_ok
            outputs.append(output)
        return ok, (marker + "\n").encode().join(outputs)

    def process_chunk(self, text: str, filename: str, line_offset: int, out_format: Format) -> tuple[bool, bytes]:
        source = SourceFile(filename, text, line_offset)
        parser = Parser(text, filename, allow_unregistered=self.config.allow_unregistered, line_offset=line_offset)

        def load() -> tuple[Operation, str | None]:
            return self.parse(parser), parser.metadata_text

        def respell(d: Diagnostic) -> Diagnostic:
            # 2019-syntax text names ops as 2019 did (`'std.addf' op`; ir/syntax/era.py).
            if not parser.std_era:
                return d
            return Diagnostic(d.severity, spell_2019(d.message), d.loc, [respell(n) for n in d.notes])

        return self.process(load, out_format, DiagnosticVerifier(source) if self.config.verify_diagnostics else None,
                            respell)

    def process(self, load: Callable[[], tuple[Operation, str | None]], out_format: Format,
                verifier: DiagnosticVerifier | None = None,
                respell: Callable[[Diagnostic], Diagnostic] | None = None) -> tuple[bool, bytes]:
        """Load (parse or read) a top-level op, run the pipeline, write it; (success, output).
        `respell` rewrites each diagnostic before it is reported or checked."""
        emit: Callable[[Diagnostic], None] = verifier.process if verifier else self.report
        if respell is not None:
            emit = (lambda d, sink=emit: sink(respell(d)))  # type: ignore[misc]
        output: bytes | None = None
        try:
            top, metadata = self.timed("Parser", load)  # type: ignore[misc]
            self.run_pipeline(top, emit)
            output = self.timed("Output", lambda: out_format.write(top, self.config.print_options, metadata))  # type: ignore[misc]
        except (DiagnosticError, PassFailure) as e:
            for d in e.diagnostics:
                emit(d)
        if verifier is None:
            return output is not None, output or b""
        failures = verifier.finish()
        for d in failures:
            self.report(d)
        return not failures, output or b""

    def parse(self, parser: Parser) -> Operation:
        top = parser.parse_top_level()
        if self.config.no_implicit_module and parser.implicit_module:
            ops = list(top.regions[0].ops())
            if len(ops) != 1:
                raise DiagnosticError(Diagnostic(
                    "error", f"source must contain a single top-level operation, found: {len(ops)}",
                    SourcePos(parser.source, 0)))
            top = ops[0].detach()
        # 2019-syntax text is also held to 2019's `std` rules (ir/dialects/std_era.py).
        verify(top, ERA_2019_CHECKS if parser.std_era else None)
        # The module lives until the process ends: keep the collector from
        # rescanning its (cyclic, ~1M-object) graph after every few passes.
        gc.freeze()
        return top

    def run_pipeline(self, top: Operation, emit: Callable[[Diagnostic], None]) -> None:
        config = self.config
        print_after = self.print_after if config.print_ir_after_all else None
        pm = PassManager(config.pipeline, verify_each=config.verify_each, timing=config.timing,
                         print_after=print_after, emit=emit)
        pm.run(top)

    def print_after(self, p: Pass, op: Operation) -> None:
        scope = ""
        if op.parent is not None:
            name = op.attr("sym_name")
            scope = f" ('{op.name}' operation{': @' + name.value if name is not None else ''})"  # type: ignore[attr-defined]
        o = self.config.print_options
        self.err.write(f"// -----// IR Dump After {p.display_name} ({p.NAME}){scope} //----- //\n")
        self.err.write(print_ir(op, generic=o.generic, debuginfo=o.debuginfo, local_scope=o.local_scope))
        self.err.write("\n")

    def timed(self, name: str, step: Callable[[], object]) -> object:
        if self.config.timing is None:
            return step()
        start = time.perf_counter()
        result = step()
        self.config.timing.child(name, name).seconds += time.perf_counter() - start
        return result

    def report(self, d: Diagnostic) -> None:
        self.err.write(d.render() + "\n")
