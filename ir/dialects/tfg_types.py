"""Types and attributes the tfg dialect reasons about.

TensorFlow's graph types live in the `tf_type` namespace today (`!tf_type.control`,
`!tf_type.tensor`, `#tf_type.version<...>`, `#tf_type.func<@f, {}>`); the
README's older `!tfg.control` spelling is normalized to them when parsed.  They
stay `DialectType`/`DialectAttr` text, and this module gives the few structured
views the verifiers need: the control and opaque tensor types, TensorFlow's
cast compatibility of types, the symbol of a `#tf_type.func`, the parameters of
a `#tfg.region_attrs`, and the checks of a version attribute's syntax.
"""

from __future__ import annotations

import re
from typing import Sequence

import attrs

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Value
from egraft.ir.syntax.attr_parser import AttributeParser

CONTROL = T.dialect_type("tf_type", "control")
"""The control token every TensorFlow node returns last."""
OPAQUE_TENSOR = T.dialect_type("tf_type", "tensor")
"""The tensor type of generic (uninstantiated) function bodies."""


def is_control(t: T.Type) -> bool:
    return t is CONTROL


def split_data_control(values: Sequence[Value]) -> tuple[list[Value], list[Value]]:
    """Data values, then control tokens (control tokens come last in TensorFlow nodes)."""
    n = len(values)
    first_ctl = n
    while first_ctl > 0 and values[first_ctl - 1].type is CONTROL:
        first_ctl -= 1
    return list(values[:first_ctl]), list(values[first_ctl:])


def first_misplaced(types: Sequence[T.Type]) -> tuple[int, int] | None:
    """(position of a data type, position of an earlier control type), if a data
    type follows a control type; TensorFlow requires controls to come last."""
    ctl = -1
    for i, t in enumerate(types):
        if t is CONTROL:
            ctl = i
        elif ctl != -1:
            return i, ctl
    return None


# ------------------------------------------------------------------ compatibility

_SUBTYPED = ("resource", "variant")


def _split_params(params: str) -> list[str]:
    """Top-level comma-separated pieces of a type parameter list."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(params):
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(params[start:i].strip())
            start = i + 1
    tail = params[start:].strip()
    if tail:
        out.append(tail)
    return out


def _element_compatible(a: T.Type, b: T.Type) -> bool:
    if a is b:
        return True
    if not (isinstance(a, T.DialectType) and isinstance(b, T.DialectType)):
        return False
    if a.dialect != b.dialect or a.mnemonic != b.mnemonic or a.mnemonic not in _SUBTYPED:
        return False
    if a.mnemonic == "variant" or not a.params or not b.params:
        return True  # TensorFlow treats variants alike and a missing subtype as unknown
    pa, pb = _split_params(a.params), _split_params(b.params)
    if len(pa) != len(pb):
        return False
    return all(are_cast_compatible(AttributeParser(x).parse_type(), AttributeParser(y).parse_type())
               for x, y in zip(pa, pb))


def are_cast_compatible(a: T.Type, b: T.Type) -> bool:
    """Whether one runtime value may have both types (TensorFlow's
    HasCompatibleElementTypes): shapes agree where both are known and element
    types are equal up to unknown resource subtypes."""
    if a is b:
        return True
    a_tensor = isinstance(a, (T.RankedTensorType, T.UnrankedTensorType))
    b_tensor = isinstance(b, (T.RankedTensorType, T.UnrankedTensorType))
    if a_tensor != b_tensor:
        return False
    if not a_tensor:
        return _element_compatible(a, b)
    if a.shape is not None and b.shape is not None:  # type: ignore[union-attr]
        if len(a.shape) != len(b.shape):  # type: ignore[union-attr]
            return False
        for x, y in zip(a.shape, b.shape):  # type: ignore[union-attr]
            if x != y and x != T.DYNAMIC and y != T.DYNAMIC:
                return False
    return _element_compatible(a.element_type, b.element_type)  # type: ignore[union-attr]


# ------------------------------------------------------------------ attributes


def is_dialect_attr(attr: A.Attribute | None, mnemonic: str) -> bool:
    return isinstance(attr, A.DialectAttr) and attr.dialect in ("tf_type", "tfg") and attr.mnemonic == mnemonic


def func_attr_symbol(attr: A.Attribute | None) -> A.SymbolRefAttr | None:
    """The callee of `#tf_type.func<@name, {attrs}>` (None if not a func attribute)."""
    if not is_dialect_attr(attr, "func"):
        return None
    p = AttributeParser(attr.params)  # type: ignore[union-attr]
    ref = p.parse_attribute()
    return ref if isinstance(ref, A.SymbolRefAttr) else None


@attrs.frozen
class RegionAttrs:
    """`#tfg.region_attrs<{attrs} [arg attrs] [result attrs]>`: the function
    attributes a region op keeps from the functional form it came from."""

    attrs: A.DictionaryAttr
    arg_attrs: A.ArrayAttr
    res_attrs: A.ArrayAttr


def region_attrs(attr: A.Attribute | None) -> RegionAttrs | None:
    if not is_dialect_attr(attr, "region_attrs"):
        return None
    p = AttributeParser(attr.params)  # type: ignore[union-attr]
    parts = [p.parse_attribute() for _ in range(3)]
    if not (isinstance(parts[0], A.DictionaryAttr) and isinstance(parts[1], A.ArrayAttr)
            and isinstance(parts[2], A.ArrayAttr)):
        return None
    return RegionAttrs(*parts)  # type: ignore[arg-type]


_VERSION_FIELDS = (("producer", r"-?\d+"), ("min_consumer", r"-?\d+"),
                   ("bad_consumers", r"\[\s*(?:-?\d+\s*(?:,\s*-?\d+\s*)*)?\]"))


def version_syntax_error(attr: A.DialectAttr) -> str | None:
    """The message TensorFlow gives for a malformed `#tf_type.version<...>` body, or None."""
    text = attr.params
    pos = 0
    for i, (field, value) in enumerate(_VERSION_FIELDS):
        if i:
            m = re.compile(r"\s*,\s*").match(text, pos)
            if m is None:
                return None if i == 2 and not text[pos:].strip() else "expected ',' in tf_type version"
            pos = m.end()
        m = re.compile(rf"\s*{field}\s*=\s*({value})\s*").match(text, pos)
        if m is None:
            return f"expected '{field}' in tf_type version"
        pos = m.end()
    return None if not text[pos:].strip() else "expected '>' in tf_type version"
