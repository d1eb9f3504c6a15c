"""TensorFlow's op registry without TensorFlow: the bundled ``op_registry.json`` snapshot.

The importer needs each op's output arity and types (an ``AddN`` with ``N = 3`` has
one result, a ``Split`` with ``num_split = 4`` four) and its attribute defaults; the
exporter and :func:`compare_graphdefs` need the defaults to strip them, as TF does.
The snapshot is generated from TF 2.21 by :mod:`.op_registry_gen`; entries are parsed
into ``OpDef`` messages on first use, so loading costs one ``json.load`` (~20 ms).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from google.protobuf import text_format

from egraft.ir.graphdef.messages import OpDef

SNAPSHOT = Path(__file__).with_name("op_registry.json")


@cache
def _entries() -> dict[str, dict]:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))["ops"]


def _fill_arg(arg, spec: dict) -> None:
    arg.name = spec["n"]
    arg.type = spec.get("t", 0)
    arg.type_attr = spec.get("ta", "")
    arg.number_attr = spec.get("na", "")
    arg.type_list_attr = spec.get("tla", "")
    arg.is_ref = bool(spec.get("r"))


@cache
def lookup_op(name: str) -> OpDef | None:
    """The OpDef of a registered TensorFlow op, or None (functions, unknown ops)."""
    entry = _entries().get(name)
    if entry is None:
        return None
    op = OpDef(name=name, is_stateful=bool(entry.get("s")))
    for spec in entry["i"]:
        _fill_arg(op.input_arg.add(), spec)
    for spec in entry["o"]:
        _fill_arg(op.output_arg.add(), spec)
    for attr_name, attr_type, *default in entry["a"]:
        attr = op.attr.add(name=attr_name, type=attr_type)
        if default:
            text_format.Parse(default[0], attr.default_value)
    return op
