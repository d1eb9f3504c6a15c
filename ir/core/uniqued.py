"""Uniquing of immutable IR objects (types, small attributes).

MLIR uniques types and attributes in its context, so that equality is a
pointer comparison and `i32` is allocated once however often it is parsed.
We do the same: constructing a `Uniqued` subclass with arguments already seen
returns the existing instance.  Equality and hashing stay identity-based,
which is what makes `type_a is type_b` the cheap and correct test.
"""

from __future__ import annotations

import struct
from typing import Any, ClassVar

_INSTANCES: dict[tuple, Any] = {}
TEXT_CACHE_LIMIT = 4096
"""The longest printed text an instance keeps (see `Uniqued.__str__`)."""


class Uniqued:
    """Base of immutable, uniqued objects.

    A subclass declares its fields once: `__slots__ = _fields = ("width",
    "signedness")`, with `_defaults` for trailing fields that may be left out
    (so `IntegerType(32)` and `IntegerType(32, "")` are one instance).
    `_normalize` may canonicalize the arguments before they become the
    uniquing key, and `_derive` may compute extra slots from the fields.
    Field values must be hashable (tuples, never lists).  Instances cache
    their printed text (up to `TEXT_CACHE_LIMIT` characters) in `_text`,
    since printing happens far more often than construction.
    """

    __slots__ = ("_text",)
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[tuple] = ()

    def __new__(cls, *args: Any) -> Any:
        missing = len(cls._fields) - len(args)
        if missing:
            if missing < 0 or missing > len(cls._defaults):
                raise TypeError(f"{cls.__name__} takes the fields {cls._fields}, got {len(args)} values")
            args += cls._defaults[len(cls._defaults) - missing:]
        args = cls._normalize(args)
        key = (cls, exact(args))
        inst = _INSTANCES.get(key)
        if inst is None:
            inst = object.__new__(cls)
            inst._text = None
            for name, value in zip(cls._fields, args):
                setattr(inst, name, value)
            inst._derive()
            _INSTANCES[key] = inst
        return inst

    @classmethod
    def _normalize(cls, args: tuple) -> tuple:
        return args

    def _derive(self) -> None:
        pass

    def _args(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: dict) -> Any:
        return self

    def __reduce__(self):
        return (type(self), self._args())

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = self._render()
            # Long texts are rebuilt when asked again: a type nested n deep would
            # otherwise keep n texts of up to n levels each (quadratic memory),
            # and a weight's hex text would double its memory.
            if len(text) <= TEXT_CACHE_LIMIT:
                self._text = text
        return text

    def _render(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


def exact(value: Any) -> Any:
    """A uniquing key in which floats compare by their bits: Python equates
    -0.0 with 0.0 and no NaN with itself, but MLIR keeps them apart."""
    if type(value) in (float, bool):  # True == 1 and 1.0 == 1, but they are different elements
        return (type(value), struct.pack("<d", value))
    if type(value) is tuple and any(type(v) in (float, tuple) for v in value):
        return tuple(exact(v) for v in value)
    return value
