"""SavedModel directories in ``egraft-opt``: ``egraft-opt model_dir/ -tf-grappler -o out_dir/``.

The input directory's ``saved_model.pb`` is read (:mod:`egraft.ir.graphdef.savedmodel`), the
MetaGraphDef of ``--tf-savedmodel-tags`` (default ``serve``) chosen, its graph and library
imported as tfg with the functions the SavedModel names marked public, and the feeds and
fetches of ``--tf-savedmodel-signature`` (default ``serving_default``; ``*`` every signature;
``a,b`` several) handed to the passes that convert to tf_executor themselves (``tf-grappler``),
as the ``--tf-*`` flags are for a GraphDef.  The output is a SavedModel directory unless ``-o``
names an ``.mlir``/``.pb``/``.pbtxt`` file (then the graph alone, to look at) or is absent (MLIR
text on stdout).

The output directory (:class:`OutputDirectory`) is built beside the target under a hidden name
and renamed into place only on success, so no reader sees a half-written SavedModel and a failed
run leaves the old one: ``saved_model.pb`` is the optimized MetaGraphDef (everything else of it
kept: object graph, saver, signatures, assets, collections; signatures not chosen are dropped
with a warning, their graph nodes may be gone), and every other file and folder of the input
(``variables/``, ``assets/``, ``assets.extra/``) is copied byte for byte: variables stay
variables.  ``fingerprint.pb`` is not copied: it hashes the original ``saved_model.pb``, so it
would be false (TensorFlow loads a SavedModel without one).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path
from typing import Sequence

import attrs
from google.protobuf.message import Message

from egraft.ir import Operation
from egraft.ir.graphdef import GraphDefError
from egraft.ir.graphdef.export_graphdef import export_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.ir.graphdef import savedmodel as sm

from egraft.passes.cli.formats import Format, PrintOptions
from egraft.passes.cli.graphdef_io import as_tfg, diagnostic_error, located
from egraft.passes.cli.output_file import OutputError
from egraft.passes.tf.tf_io_options import EntrySignature, Feed, parse_tensor

DEFAULT_SIGNATURE = "serving_default"
DEFAULT_TAGS = ("serve",)
ALL_SIGNATURES = "*"


@attrs.define
class SavedModelInput:
    """An opened SavedModel: the message, the chosen MetaGraphDef and signatures, and what
    the graph feeds and fetches for them."""

    directory: str
    source: str  # the saved_model.pb path, for diagnostics
    saved: Message
    index: int
    signatures: tuple[str, ...]
    io: sm.GraphIO
    dropped: tuple[str, ...]  # signatures of the MetaGraphDef not chosen

    @property
    def meta_graph(self) -> sm.MetaGraphDef:
        return self.saved.meta_graphs[self.index]

    @property
    def signature(self) -> EntrySignature:
        return EntrySignature(tuple(Feed(*parse_tensor(t)) for t in self.io.feeds), self.io.fetches, ())

    def read(self, _data: bytes, _filename: str, _allow_unregistered: bool) -> Operation:
        """The MetaGraphDef's graph as a tfg module, the SavedModel's functions marked public."""
        try:
            module = import_graphdef(self.meta_graph.graph_def, self.source)
        except GraphDefError as err:
            raise diagnostic_error(err, self.source) from None
        sm.mark_public(module, sm.public_functions(self.meta_graph))
        return located(module, self.source)

    def write(self, top: Operation, _options: PrintOptions, _metadata: str | None) -> bytes:
        """``saved_model.pb``'s bytes with the optimized graph."""
        try:
            graph = export_graphdef(as_tfg(top, self.source))
            out = sm.with_graph(self.saved, self.index, graph, self.signatures, self.io)
            return sm.serialize(out, self.source, text=self.source.endswith(".pbtxt"))
        except GraphDefError as err:
            raise diagnostic_error(err, "<output>") from None

    @property
    def input_format(self) -> Format:
        return Format("savedmodel", (), self.read, None)

    @property
    def output_format(self) -> Format:
        return Format("savedmodel", (), None, self.write)

    def warnings(self) -> list[str]:
        return [f"{self.source}: warning: signature '{key}' is not in the output (its outputs were not "
                f"fetched, so the optimizer may have removed them); --tf-savedmodel-signature={ALL_SIGNATURES} "
                f"keeps every signature" for key in self.dropped]


def split_list(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    return tuple(part.strip() for part in text.split(",") if part.strip())


def open_saved_model(directory: str, tags: Sequence[str] | None, signatures: Sequence[str] | None) -> SavedModelInput:
    """Read ``directory``'s SavedModel and choose the MetaGraphDef and signatures; DiagnosticError if
    it is not one, or has no such tags or signature."""
    try:
        saved, path = sm.load_saved_model(directory)
        source = str(path)
        index = sm.select_meta_graph(saved, DEFAULT_TAGS if tags is None else tags, source)
        meta_graph = saved.meta_graphs[index]
        if signatures is None:
            signatures = (DEFAULT_SIGNATURE,)
        if ALL_SIGNATURES in signatures:
            signatures = tuple(sm.user_signatures(meta_graph))
        if not signatures:
            raise GraphDefError(source, f"no signature to take the feeds and fetches from (the MetaGraphDef with "
                                        f"tags '{sm.tag_text(meta_graph.meta_info_def.tags)}' has "
                                        f"{len(sm.user_signatures(meta_graph))} signatures)")
        io = sm.graph_io(meta_graph, signatures, source)
    except GraphDefError as err:
        raise diagnostic_error(err, err.source) from None
    dropped = tuple(k for k in sm.user_signatures(meta_graph) if k not in signatures)
    return SavedModelInput(directory, source, saved, index, tuple(signatures), io, dropped)


_TEMP_PREFIX = ".egraft-opt-"


class OutputDirectory:
    """``-o DIR`` for a SavedModel: built in a hidden directory beside ``DIR`` and renamed over it
    on success (an existing ``DIR`` must be a SavedModel directory or empty: anything else is
    refused, never overwritten). ``commit(data)`` writes ``data`` as the SavedModel file and copies
    the rest of ``source``; ``discard()`` removes whatever was built."""

    def __init__(self, path: str, source: str, model_file: str) -> None:
        self.path = path
        self.source = source
        self.model_file = model_file  # saved_model.pb or saved_model.pbtxt
        self._target = os.path.realpath(path.rstrip("/") or path)
        self._temp: str | None = None

    def open(self) -> None:
        try:
            self._open()
        except OSError as e:
            raise OutputError(f"cannot open output directory '{self.path}': {e.strerror or e}") from None

    def _open(self) -> None:
        target = Path(self._target)
        if target.exists() or target.is_symlink():
            if not target.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "it exists and is not a directory")
            if any(target.iterdir()) and not sm.is_saved_model_dir(target):
                raise FileExistsError(errno.EEXIST, "it exists and is neither empty nor a SavedModel directory")
        parent = target.parent
        for _ in range(100):
            temp = parent / f"{_TEMP_PREFIX}{target.name}.{os.urandom(4).hex()}"
            try:
                os.mkdir(temp)
            except FileExistsError:
                continue
            self._temp = str(temp)
            return
        raise FileExistsError(errno.EEXIST, "no unused temporary directory name")

    def commit(self, data: bytes) -> None:
        assert self._temp is not None, "output directory not open"
        try:
            self._fill(Path(self._temp), data)
            self._swap()
        except OSError as e:
            self.discard()
            raise OutputError(f"cannot write output directory '{self.path}': {e.strerror or e}") from None

    def _fill(self, temp: Path, data: bytes) -> None:
        skip = {sm.SAVED_MODEL_PB, sm.SAVED_MODEL_PBTXT, sm.FINGERPRINT}
        for entry in sorted(Path(self.source).iterdir()):
            if entry.name in skip:
                continue
            if entry.is_dir():
                shutil.copytree(entry, temp / entry.name, symlinks=True)
            else:
                shutil.copy2(entry, temp / entry.name, follow_symlinks=False)
        (temp / self.model_file).write_bytes(data)

    def _swap(self) -> None:
        """The built directory takes the target's place (an existing target keeps its mode and is
        removed only once the new one is in place; an interruption between the two renames puts
        it back)."""
        assert self._temp is not None
        target = self._target
        old = None
        if os.path.lexists(target):
            os.chmod(self._temp, stat.S_IMODE(os.stat(target).st_mode))
            old = f"{self._temp}.old"
            os.rename(target, old)
        try:
            os.rename(self._temp, target)
        except BaseException:  # OSError, or Ctrl-C between the renames
            if old is not None and not os.path.lexists(target):
                os.rename(old, target)
            raise
        self._temp = None
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def discard(self) -> None:
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None


def output_is_directory(output: str | None, output_format: str | None, known_suffixes: Sequence[str]) -> bool:
    """Whether ``-o`` names a SavedModel directory: ``--output-format=savedmodel``, or a path
    without one of the file formats' extensions (``out_dir``, ``out_dir/``, ``model.v2``)."""
    if output in (None, "-"):
        return False
    if output_format is not None:
        return output_format == "savedmodel"
    assert output is not None
    return output.endswith("/") or not any(output.endswith(ext) for ext in known_suffixes)

