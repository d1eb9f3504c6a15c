"""The exceptions of the GraphDef layer.

``GraphDefError`` is the one its callers see, formatted like a compiler diagnostic; the
importers raise ``ImportFailure`` and the exporters ``ExportFailure`` inside, and their entry
points (``import_graphdef``, ``export_graphdef``) turn them into a ``GraphDefError``.
"""

from __future__ import annotations


class GraphDefError(Exception):
    """A GraphDef could not be read or written.

    Carries the source (a path or ``<string>``) and, when protobuf's text parser knows
    it, the 1-based line and column, so the message reads
    ``model.pbtxt:3:5: error: ...`` followed by the offending line and a caret — the form
    egraft uses for every user-facing input error. Callers catch this one class instead
    of protobuf's several exception types.
    """

    def __init__(self, source: str, message: str, line: int | None = None,
                 column: int | None = None, source_line: str | None = None) -> None:
        self.source = source
        self.message = message
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.source
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: error: {self.message}"
        if self.source_line is not None:
            text += "\n" + self.source_line
            if self.column is not None:
                text += "\n" + " " * (self.column - 1) + "^"
        return text


class ImportFailure(Exception):
    """A semantic error in a GraphDef, worded as TF's status (``INVALID_ARGUMENT: ...``)."""

    def __init__(self, message: str, code: str = "INVALID_ARGUMENT") -> None:
        super().__init__(f"{code}: {message}")
        self.message = message
        self.code = code


class ExportFailure(Exception):
    """An op egraft cannot write as a NodeDef/FunctionDef."""
