"""`egraft-opt`: mlir-opt's command line over egraft.

Flags are spelled as mlir-opt spells them, with one or two dashes, so that
upstream RUN lines work with only the tool name changed.  Every registered
pass is also a flag (`-cse`, `--symbol-dce`, `-canonicalize="max-iterations=3"`),
and pass flags and `--pass-pipeline` texts form the pipeline in command-line
order.  `tfg-translate`'s `-graphdef-to-mlir` and `-mlir-to-graphdef` are flags
too, so its RUN lines also run with only the tool name changed.

Exit status: 0 on success, 1 on any error, 130 on Ctrl-C; never a traceback.  The
output file (`passes/cli/output_file.py`) is opened before any work, as mlir-opt opens
it, and written only on success.  MLIR text is the only format loaded up front: the
GraphDef formats (protobuf, ~0.1 s to import) load when a flag or a file name asks
for something else, so a lit RUN line on `.mlir` files pays only for what it uses.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence, TextIO

import attrs

from egraft.ir import REGISTRY, DiagnosticError
from egraft.ir.core.deep import run_with_deep_stack

from egraft.passes.cli.driver import DEFAULT_SPLIT_MARKER, Driver, OptConfig
from egraft.passes.cli.formats import FORMATS, Format, PrintOptions, format_for
from egraft.passes.cli.output_file import OutputError, OutputFile
from egraft.passes.manager.pass_manager import OpPipeline, TimingNode
from egraft.passes.manager.pipeline import parse_pass_flag, parse_pipeline_option
from egraft.passes.manager.registry import PASSES, Pass, options_of
from egraft.passes.tf.tf_io_options import TF_IO_FLAGS, EntrySignature, signature_from_flags

if TYPE_CHECKING:
    from egraft.passes.cli.savedmodel_io import OutputDirectory

TOOL = "egraft-opt"


@attrs.frozen
class ToolOption:
    """A tool flag: `kind` is 'bool', 'str' (value required) or 'opt' (optional value)."""

    kind: str
    doc: str
    metavar: str = ""


TOOL_OPTIONS: dict[str, ToolOption] = {
    "o": ToolOption("str", "Output file (written only on success; default stdout)", "FILE"),
    "pass-pipeline": ToolOption("str", "A textual pass pipeline, e.g. 'builtin.module(func.func(cse))'", "PIPELINE"),
    "p": ToolOption("str", "Alias for --pass-pipeline", "PIPELINE"),
    "split-input-file": ToolOption("opt", "Process each chunk between '// -----' lines (or =SEP) on its own", "SEP"),
    "verify-diagnostics": ToolOption("bool", "Check diagnostics against expected-* comments"),
    "mlir-print-op-generic": ToolOption("bool", "Print ops in the generic form"),
    "mlir-print-debuginfo": ToolOption("bool", "Print locations"),
    "mlir-print-local-scope": ToolOption("bool", "Print locations inline rather than as aliases"),
    "allow-unregistered-dialect": ToolOption("bool", "Accept ops of unknown dialects"),
    "verify-each": ToolOption("bool", "Verify the IR after every pass (default true)"),
    "mlir-timing": ToolOption("bool", "Report wall time per pass on stderr"),
    "print-ir-after-all": ToolOption("bool", "Print the IR to stderr after every pass"),
    "dialect-doc": ToolOption("str", "Print the generated documentation of a dialect and exit", "NAME"),
    "no-implicit-module": ToolOption("bool", "Require a single top-level op instead of wrapping in a module"),
    "input-format": ToolOption("str", "Input format (mlir, pb, pbtxt); default from the extension", "FORMAT"),
    "output-format": ToolOption("str", "Output format (mlir, pb, pbtxt); default from the -o extension", "FORMAT"),
    "emit": ToolOption("str", "Output form: graphdef, tfg or tf_executor (converting as needed)", "FORM"),
    "graphdef-to-mlir": ToolOption("bool", "tfg-translate's translation: read the input as a GraphDef "
                                           "(text, else binary) and print tfg"),
    "mlir-to-graphdef": ToolOption("bool", "tfg-translate's translation: print the result as GraphDef text "
                                           "(--emit=graphdef)"),
    "load-rules": ToolOption("str", "Register the rule sets of a file: a Python module, a DRR .td, or a rule "
                                    "file (docs/rules.md); repeatable", "FILE"),
    "check-rules": ToolOption("str", "Check every rule of these sets (',' between) against the interpreter, "
                                     "print a counterexample for each wrong one, and exit (1 if any is wrong)",
                              "SETS"),
    "check-rules-examples": ToolOption("str", "Programs drawn per rule by --check-rules (default 100)", "N"),
    "mlir-disable-threading": ToolOption("bool", "Accepted for compatibility (egraft is single-threaded)"),
    "version": ToolOption("bool", "Print the version and exit"),
    "help": ToolOption("bool", "Show this help"),
    "h": ToolOption("bool", "Show this help"),
}
TOOL_OPTIONS.update({name: ToolOption("str", doc, metavar) for name, (doc, metavar) in TF_IO_FLAGS.items()})
TOOL_OPTIONS.update({
    "tf-savedmodel-signature": ToolOption("str", "SavedModel input: the signatures whose inputs are fed and outputs "
                                                 "fetched, ',' between; '*' every one (default serving_default)",
                                          "NAMES"),
    "tf-savedmodel-tags": ToolOption("str", "SavedModel input: the tag set of the MetaGraphDef, ',' between "
                                            "(default serve)", "TAGS"),
})


#: Flags given any number of times, each value kept in order.
_REPEATABLE = frozenset({"load-rules", "check-rules"})


class UsageError(Exception):
    """A bad command line; the message is printed after `egraft-opt: `."""


@attrs.define
class Invocation:
    """A parsed command line."""

    input: str = "-"
    output: str | None = None
    config: OptConfig = attrs.field(factory=OptConfig)
    dialect_doc: str | None = None
    help: bool = False
    version: bool = False
    input_format: str | None = None
    output_format: str | None = None
    emit: str | None = None
    tf_signature: EntrySignature | None = None  # --tf-input-arrays, --tf-output-arrays, ...
    savedmodel_signatures: str | None = None  # --tf-savedmodel-signature
    savedmodel_tags: str | None = None  # --tf-savedmodel-tags
    load_rules: list[str] = attrs.field(factory=list)  # --load-rules, in order
    check_rules: list[str] = attrs.field(factory=list)  # --check-rules set names
    check_examples: int = 100  # --check-rules-examples


def _bool_value(name: str, value: str | None) -> bool:
    if value is None or value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise UsageError(f"'{value}' is invalid value for boolean argument '{name}'! Try 0 or 1")


def parse_args(argv: Sequence[str]) -> Invocation:
    """Parse the command line; pipeline texts raise DiagnosticError, the rest UsageError."""
    inv = Invocation()
    config = inv.config
    pieces: list[OpPipeline] = []
    flags: dict[str, object] = {}
    positional: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        opt_value = value if eq else None
        opt = TOOL_OPTIONS.get(name)
        if opt is None:
            if name not in PASSES:
                raise UsageError(f"Unknown command line argument '{arg}'.  Try: '{TOOL} --help'")
            pieces.append(parse_pass_flag(name, opt_value))
            continue
        if opt.kind == "str" and opt_value is None:
            if i >= len(args):
                raise UsageError(f"Not enough positional command line arguments specified! ('{arg}' needs a value)")
            opt_value = args[i]
            i += 1
        if name in ("pass-pipeline", "p"):
            pieces.append(parse_pipeline_option(opt_value or ""))
        elif name in _REPEATABLE:
            flags.setdefault(name, []).append(opt_value)  # type: ignore[union-attr]
        else:
            flags[name] = opt_value if opt.kind != "bool" else _bool_value(name, opt_value)
    if len(positional) > 1:
        raise UsageError(f"Too many positional arguments specified! Can specify at most 1 (got {positional})")
    inv.input = positional[0] if positional else "-"
    inv.output = flags.get("o")  # type: ignore[assignment]
    inv.dialect_doc = flags.get("dialect-doc")  # type: ignore[assignment]
    inv.help = bool(flags.get("help") or flags.get("h"))
    inv.version = bool(flags.get("version"))
    inv.input_format = flags.get("input-format") or ("graphdef" if flags.get("graphdef-to-mlir") else None)  # type: ignore[assignment]
    inv.output_format = flags.get("output-format")  # type: ignore[assignment]
    inv.emit = flags.get("emit") or ("graphdef" if flags.get("mlir-to-graphdef") else None)  # type: ignore[assignment]
    if inv.emit is not None:
        from egraft.passes.cli.graphdef_io import EMIT_FORMS

        if inv.emit not in EMIT_FORMS:
            raise UsageError(f"--emit must be one of {', '.join(EMIT_FORMS)}, not '{inv.emit}'")
    inv.savedmodel_signatures = flags.get("tf-savedmodel-signature")  # type: ignore[assignment]
    inv.savedmodel_tags = flags.get("tf-savedmodel-tags")  # type: ignore[assignment]
    inv.load_rules = list(flags.get("load-rules", ()))  # type: ignore[call-overload]
    inv.check_rules = [n for value in flags.get("check-rules", ()) for n in value.split(",") if n]  # type: ignore[union-attr]
    examples = str(flags.get("check-rules-examples", "100"))
    if not examples.isdigit() or int(examples) < 1:
        raise UsageError(f"--check-rules-examples needs a positive integer, not '{examples}'")
    inv.check_examples = int(examples)
    readers = _signature_readers(pieces)
    try:
        inv.tf_signature = signature_from_flags(flags, inv.emit, read_by_pass=bool(readers))
    except ValueError as e:
        raise UsageError(str(e)) from None
    for reader in readers if inv.tf_signature is not None else ():
        reader.use_signature(inv.tf_signature)  # type: ignore[attr-defined]
    if "split-input-file" in flags:
        config.split_marker = flags["split-input-file"] or DEFAULT_SPLIT_MARKER  # type: ignore[assignment]
    config.verify_diagnostics = bool(flags.get("verify-diagnostics"))
    config.print_options = PrintOptions(generic=bool(flags.get("mlir-print-op-generic")),
                                        debuginfo=bool(flags.get("mlir-print-debuginfo")),
                                        local_scope=bool(flags.get("mlir-print-local-scope")))
    config.allow_unregistered = bool(flags.get("allow-unregistered-dialect"))
    config.verify_each = bool(flags.get("verify-each", True))
    config.print_ir_after_all = bool(flags.get("print-ir-after-all"))
    config.no_implicit_module = bool(flags.get("no-implicit-module"))
    config.timing = TimingNode("root") if flags.get("mlir-timing") else None
    config.pipeline = _combine(pieces)
    return inv


def _signature_readers(pieces: list[OpPipeline]) -> list[Pass]:
    """The passes that convert a GraphDef to tf_executor themselves (`tf-grappler`): they take
    the --tf-* flags' feeds and fetches (`use_signature`)."""
    found, work = [], list(pieces)
    while work:
        for element in work.pop().elements:
            if isinstance(element, OpPipeline):
                work.append(element)
            elif hasattr(element, "use_signature"):
                found.append(element)
    return found


def _combine(pieces: list[OpPipeline]) -> OpPipeline:
    """One root pipeline from the pipeline pieces, in order.  Pieces share the module's
    pass manager, so a `--pass-pipeline` anchored on another op cannot join them (mlir-opt
    refuses any mix of `--pass-pipeline` and pass flags; egraft runs them in order)."""
    if len(pieces) == 1:
        return pieces[0]
    for p in pieces:
        if not p.implicit and p.anchor != "builtin.module":
            raise UsageError(f"a pipeline anchored on '{p.anchor_name}' cannot be combined with other "
                             f"passes or pipelines (they run on the 'builtin.module' op)")
    root = OpPipeline("builtin.module", implicit=all(p.implicit for p in pieces))
    for piece in pieces:
        root.extend(piece)
    return root


def help_text() -> str:
    lines = [f"USAGE: {TOOL} [options] <input file>", "", "OPTIONS:"]
    for name, opt in TOOL_OPTIONS.items():
        flag = f"-{name}" if len(name) == 1 else f"--{name}"
        flag += f"=<{opt.metavar}>" if opt.metavar else ""
        lines.append(f"  {flag:<40} {opt.doc}")
    lines += ["", "PASSES (each is also a flag; options as -name=\"key=value ...\"):"]
    for name in sorted(PASSES):
        lines.append(f"  --{name:<38} {PASSES[name].SUMMARY}")
        for o in options_of(PASSES[name]):
            valid = f" (valid: {o.range_text()})" if o.range_text() else ""
            lines.append(f"      {o.name + '=<' + o.type.__name__ + '>':<36} {o.doc}{valid}")
    return "\n".join(lines) + "\n"


def run(inv: Invocation, stdin: Callable[[], bytes], stdout: TextIO, stderr: TextIO) -> int:
    """Execute a parsed invocation; the exit status."""
    if inv.help:
        stdout.write(help_text())
        return 0
    if inv.version:
        stdout.write(version_text())
        return 0
    if inv.load_rules:
        from egraft.passes.cli.load_rules import load_rule_files

        if not load_rule_files(inv.load_rules, stderr):
            return 1
    if inv.check_rules:
        from egraft.passes.cli.check_rules import check_rule_sets

        return check_rule_sets(inv.check_rules, stdout, stderr, inv.check_examples)
    if inv.dialect_doc is not None:
        dialect = REGISTRY.dialects.get(inv.dialect_doc)
        if dialect is None:
            stderr.write(f"{TOOL}: error: unknown dialect '{inv.dialect_doc}' "
                         f"(known: {', '.join(sorted(REGISTRY.dialects))})\n")
            return 1
        stdout.write(dialect.docs_markdown() + "\n")
        return 0
    if inv.input != "-" and Path(inv.input).is_dir():
        return _run_saved_model(inv, stdout, stderr)
    if inv.savedmodel_signatures is not None or inv.savedmodel_tags is not None or inv.output_format == "savedmodel":
        stderr.write(f"{TOOL}: error: --tf-savedmodel-signature, --tf-savedmodel-tags and --output-format=savedmodel "
                     f"apply to a SavedModel directory input, and '{inv.input}' is not a directory\n")
        return 1
    try:
        data = stdin() if inv.input == "-" else Path(inv.input).read_bytes()
    except OSError as e:
        stderr.write(f"{TOOL}: error: cannot open input file '{inv.input}': {e.strerror}\n")
        return 1
    filename = "<stdin>" if inv.input == "-" else inv.input
    try:
        in_fmt, out_fmt = _formats(inv, filename)
    except ValueError as e:
        stderr.write(f"{TOOL}: error: {e}\n")
        return 1
    output_file = OutputFile(inv.output) if inv.output not in (None, "-") else None
    return _execute(inv, data, filename, in_fmt, out_fmt, output_file, stdout, stderr)


def _run_saved_model(inv: Invocation, stdout: TextIO, stderr: TextIO) -> int:
    """A SavedModel directory in (passes/cli/savedmodel_io.py): its signature gives the feeds and
    fetches; out as a SavedModel directory, or as a file of another format."""
    from egraft.passes.cli.graphdef_io import emitting, format_named
    from egraft.passes.cli.savedmodel_io import OutputDirectory, open_saved_model, output_is_directory, split_list

    if inv.tf_signature is not None:
        stderr.write(f"{TOOL}: error: the --tf-* input/output flags name a GraphDef's feeds and fetches; a "
                     f"SavedModel's come from its signature (--tf-savedmodel-signature)\n")
        return 1
    try:
        saved = open_saved_model(inv.input, split_list(inv.savedmodel_tags), split_list(inv.savedmodel_signatures))
    except DiagnosticError as e:
        stderr.write(e.render() + "\n")
        return 1
    for reader in _signature_readers([inv.config.pipeline]):
        reader.use_signature(saved.signature)  # type: ignore[attr-defined]
    known = [ext for fmt in FORMATS.values() for ext in fmt.extensions]
    output_file: OutputFile | OutputDirectory | None = None
    try:
        if inv.output_format == "savedmodel" and inv.output in (None, "-"):
            raise ValueError("--output-format=savedmodel writes a directory: give it with -o DIR")
        if output_is_directory(inv.output, inv.output_format, known):
            out_fmt = saved.output_format
            if inv.emit not in (None, "graphdef"):
                raise ValueError(f"--emit={inv.emit} writes MLIR, not a SavedModel directory: give -o a .mlir name")
            assert inv.output is not None
            output_file = OutputDirectory(inv.output, inv.input, Path(saved.source).name)
            for warning in saved.warnings():
                stderr.write(warning + "\n")
        else:
            out_fmt = format_named(inv.output_format) if inv.output_format else format_for(inv.output)
            out_fmt = emitting(out_fmt, inv.emit, saved.signature, saved.source)
            output_file = OutputFile(inv.output) if inv.output not in (None, "-") else None
    except ValueError as e:
        stderr.write(f"{TOOL}: error: {e}\n")
        return 1
    return _execute(inv, b"", saved.source, saved.input_format, out_fmt, output_file, stdout, stderr)


def _execute(inv: Invocation, data: bytes, filename: str, in_fmt: Format, out_fmt: Format,
             output_file: "OutputFile | OutputDirectory | None", stdout: TextIO, stderr: TextIO) -> int:
    """Read, run and write one input whose formats are chosen; the exit status."""
    if out_fmt.write is None:
        stderr.write(f"{TOOL}: error: cannot write {out_fmt.name} files\n")
        return 1
    if in_fmt.read is None and not in_fmt.is_mlir_text:
        stderr.write(f"{TOOL}: error: cannot read {in_fmt.name} files\n")
        return 1
    try:
        if output_file is not None:
            output_file.open()  # before any work, as mlir-opt opens its output
        # Parsing, passes and printing recurse once per nesting level: they run on a thread
        # whose stack fits the deepest input the parser accepts (ir/core/deep.py).  The output
        # file stays with this thread, which Ctrl-C interrupts, so it is always cleaned up.
        ok, output = run_with_deep_stack(_process, inv, data, filename, in_fmt, out_fmt, stderr)
        if output_file is None:  # stdout shows the chunks that succeeded, as mlir-opt does
            _write_stdout(output, stdout)
        elif ok:
            output_file.commit(output)
        return 0 if ok else 1
    except OutputError as e:
        stderr.write(f"{TOOL}: error: {e}\n")
        return 1
    finally:  # failure, Ctrl-C or a crash: the temporary file goes, the old output stays
        if output_file is not None:
            output_file.discard()


def _formats(inv: Invocation, filename: str) -> tuple[Format, Format]:
    """(input format, output format); ValueError for an unknown format name."""
    if not _needs_graphdef(inv):
        return format_for(inv.input), format_for(inv.output)
    from egraft.passes.cli.graphdef_io import emitting, format_named  # registers the GraphDef formats

    in_fmt = format_named(inv.input_format) if inv.input_format else format_for(inv.input)
    out_fmt = format_named(inv.output_format) if inv.output_format else format_for(inv.output)
    return in_fmt, emitting(out_fmt, inv.emit, inv.tf_signature, filename)


def _needs_graphdef(inv: Invocation) -> bool:
    """Whether this run may read or write anything but MLIR text: a format or GraphDef
    flag, or a file name other than `*.mlir` (an unknown extension is MLIR text, but
    only the GraphDef formats can say it is not theirs)."""
    if inv.input_format or inv.output_format or inv.emit or inv.tf_signature is not None:
        return True
    return any(p not in (None, "-") and Path(p).suffix not in ("", ".mlir") for p in (inv.input, inv.output))


def _process(inv: Invocation, data: bytes, filename: str, in_fmt: Format, out_fmt: Format,
             stderr: TextIO) -> tuple[bool, bytes]:
    """Read, run the pipeline and write to bytes; (success, output)."""
    driver = Driver(inv.config, stderr)
    if in_fmt.is_mlir_text:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            stderr.write(f"{filename}: error: input is not valid UTF-8 (byte {e.start})\n")
            return False, b""
        result = driver.process_text(text, filename, out_fmt)
    else:
        read = in_fmt.read
        assert read is not None
        result = driver.process(lambda: (read(data, filename, inv.config.allow_unregistered), None), out_fmt)
    if inv.config.timing is not None:
        timing = inv.config.timing
        stderr.write(timing.report(sum(c.seconds for c in timing.children.values())))
    return result


def _write_stdout(output: bytes, stdout: TextIO) -> None:
    """Bytes to the stream (binary GraphDefs included); a text-only stream gets text."""
    buffer = getattr(stdout, "buffer", None)
    if buffer is not None:
        stdout.flush()
        buffer.write(output)
        buffer.flush()
    else:
        stdout.write(output.decode("utf-8", "replace"))
        stdout.flush()


def version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version  # ~20 ms: only for --version

    try:
        number = version("egraft")
    except PackageNotFoundError:  # run from a checkout that is not installed
        number = "unknown"
    return f"{TOOL} (egraft) version {number}\n"


def main(argv: Sequence[str] | None = None, stdin: Callable[[], bytes] | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Console entry point; also callable in-process (the test runner does)."""
    argv = sys.argv[1:] if argv is None else argv
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        inv = parse_args(argv)
    except UsageError as e:
        err.write(f"{TOOL}: {e}\n")
        return 1
    except DiagnosticError as e:
        err.write(e.render() + "\n")
        return 1
    try:
        return run(inv, stdin or sys.stdin.buffer.read, out, err)
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        err.write(f"{TOOL}: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
