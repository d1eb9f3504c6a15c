"""Dialects and the registry of op records.

A dialect groups op records and says whether it is open (unknown ops of its
namespace are accepted, like `tf`) or closed (unknown ops are errors, like
`tf_executor`).  A dialect may also give a fallback custom form for its
unregistered ops: tfg prints every TensorFlow node in one shared form.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import attrs

from egraft.ir.core.operation import Operation, set_record_lookup
from egraft.ir.records.custom_form import CustomForm
from egraft.ir.records.opdef import OpDef


@attrs.define(eq=False)
class Dialect:
    name: str
    summary: str = ""
    description: str = ""
    open: bool = False
    fallback_form: CustomForm | None = None
    # Result name hints for the dialect's unregistered ops (tfg names them after the op).
    result_names: Callable[[Operation], Sequence[str | None]] | None = None
    # Checks the body of a `!dialect.body` type as it is parsed: an error message or None.
    # Checks a dialect type's body when it is parsed: an error message, several
    # (each becomes a diagnostic at the type), or None.
    verify_type: Callable[[str], str | list[str] | None] | None = None
    ops: dict[str, OpDef] = attrs.field(factory=dict)

    def add(self, *opdefs: OpDef) -> None:
        for opdef in opdefs:
            if opdef.dialect != self.name:
                raise ValueError(f"op {opdef.name} does not belong to dialect {self.name}")
            self.ops[opdef.name] = opdef
            REGISTRY.ops[opdef.name] = opdef

    def docs_markdown(self) -> str:
        """Generated documentation of the dialect (`egraft-opt --dialect-doc`)."""
        head = [f"# '{self.name}' dialect", ""]
        if self.summary:
            head += [self.summary, ""]
        if self.description:
            head += [self.description.strip(), ""]
        head += [f"This dialect is {'open: unregistered ops are accepted' if self.open else 'closed: unregistered ops are rejected'}.", "",
                 "## Operations", ""]
        return "\n".join(head + [self.ops[n].docs_markdown() for n in sorted(self.ops)])


class Registry:
    """All dialects and op records known to this process."""

    def __init__(self) -> None:
        self.dialects: dict[str, Dialect] = {}
        self.ops: dict[str, OpDef] = {}
        # 2019 spellings of ops that moved dialects (`addi` -> `arith.addi`,
        # `std.return` -> `func.return`), consulted by the parser only.
        self.legacy_names: dict[str, str] = {}
        # 2019 spellings of dialect types that became builtin types (`!tf.uint8` -> `ui8`),
        # keyed by `dialect.body` as written; consulted by the type parser only.
        self.legacy_types: dict[str, object] = {}

    def dialect(self, name: str, **kwargs: object) -> Dialect:
        """Get or create the dialect `name`."""
        d = self.dialects.get(name)
        if d is None:
            d = self.dialects[name] = Dialect(name, **kwargs)  # type: ignore[arg-type]
        return d

    def lookup(self, op_name: str) -> OpDef | None:
        return self.ops.get(op_name)

    def dialect_of(self, op_name: str) -> Dialect | None:
        return self.dialects.get(op_name.split(".", 1)[0])

    def names(self) -> Iterable[str]:
        return self.dialects.keys()


REGISTRY = Registry()
# `Operation.create` gives registered ops their record's class through this lookup.
set_record_lookup(REGISTRY.lookup)
