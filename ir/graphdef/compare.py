"""Compare two GraphDefs the way TensorFlow's GraphDef <-> tfg round-trip test does.

``compare_graphdefs(expected, actual)`` normalizes both graphs (:mod:`.normalize`) and
lists every remaining difference under protobuf equivalence (:mod:`.equivalence`); an
empty list means TF's ``verify_roundtrip`` would accept the pair. Nodes and functions
are matched by name, so a report names the node rather than a position in a list.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from google.protobuf.message import Message

from egraft.ir.graphdef.equivalence import Options, diff_messages
from egraft.ir.graphdef.messages import GraphDef, coerce
from egraft.ir.graphdef.normalize import OpDefLookup, normalize_graphdef
from egraft.ir.graphdef.op_registry import lookup_op


def _by_name(items: Iterable[Message], name_of, what: str,
             out: list[str], side: str) -> dict[str, Message]:
    found: dict[str, Message] = {}
    for item in items:
        name = name_of(item)
        if name in found:
            out.append(f"{what} {name!r}: defined twice in {side}")
        found[name] = item
    return found


def _diff_named(expected: Sequence[Message], actual: Sequence[Message], name_of,
                what: str, options: Options) -> list[str]:
    out: list[str] = []
    left = _by_name(expected, name_of, what, out, "expected")
    right = _by_name(actual, name_of, what, out, "actual")
    for name in sorted(left.keys() - right.keys()):
        out.append(f"{what} {name!r}: only in expected")
    for name in sorted(right.keys() - left.keys()):
        out.append(f"{what} {name!r}: only in actual")
    for name in sorted(left.keys() & right.keys()):
        out += diff_messages(left[name], right[name], f"{what} {name!r}", options)
    return out


_BUNDLED = object()


def compare_graphdefs(expected: Message, actual: Message, *,
                      op_lookup: OpDefLookup | None | object = _BUNDLED,
                      compare_string_tensors: bool = False) -> list[str]:
    """Human-readable differences between two GraphDefs; ``[]`` when equivalent.

    ``op_lookup`` supplies OpDefs so attributes equal to their default are ignored, as
    TF does with its op registry: by default egraft's bundled snapshot of TF's registry
    (:mod:`.op_registry`), or e.g. :func:`egraft.ir.graphdef.opdefs.tensorflow_op_lookup`;
    ``None`` compares defaults literally. ``compare_string_tensors`` also compares
    DT_STRING tensor values, which TF's check blanks out. Either argument may be
    TensorFlow's own GraphDef class.
    """
    if op_lookup is _BUNDLED:
        op_lookup = lookup_op
    a = normalize_graphdef(coerce(expected, GraphDef), op_lookup)  # type: ignore[arg-type]
    b = normalize_graphdef(coerce(actual, GraphDef), op_lookup)  # type: ignore[arg-type]
    options = Options(compare_string_tensors=compare_string_tensors)
    out = _diff_named(a.node, b.node, lambda n: n.name, "node", options)
    out += diff_messages(a.versions, b.versions, "versions", options)
    out += _diff_named(a.library.function, b.library.function,
                       lambda f: f.signature.name, "function", options)
    out += diff_messages(a.library, b.library, "library", options, skip=frozenset({"function"}))
    return out
