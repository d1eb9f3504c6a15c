"""Builtin and dialect types.

Every type is uniqued (see `uniqued.py`), so `a is b` is type equality and
printing a type twice costs one cached string.  Dialect types that egraft has
no structure for (`!tf_type.resource<tensor<f32>>`, `!foo.bar<...>`) are kept
as `DialectType` with their body text verbatim, so unknown types round-trip.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from egraft.ir.core.uniqued import Uniqued

DYNAMIC = -1
"""The size of a dynamic dimension (`?`), as MLIR's ShapedType::kDynamic."""


class Type(Uniqued):
    """Base of all types."""

    __slots__ = ()


class IntegerType(Type):
    """`i32` (signless), `si8` (signed), `ui16` (unsigned)."""

    __slots__ = _fields = ("width", "signedness")
    _defaults = ("",)
    width: int
    signedness: str  # "" (signless), "s" or "u"

    def _render(self) -> str:
        return f"{self.signedness}i{self.width}"

    @property
    def is_signless(self) -> bool:
        return self.signedness == ""


class IndexType(Type):
    __slots__ = ()

    def _render(self) -> str:
        return "index"


class NoneType(Type):
    __slots__ = ()

    def _render(self) -> str:
        return "none"


FLOAT_WIDTHS = {
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f80": 80, "f128": 128, "tf32": 19,
    "f8E5M2": 8, "f8E4M3": 8, "f8E4M3FN": 8, "f8E5M2FNUZ": 8, "f8E4M3FNUZ": 8,
    "f8E4M3B11FNUZ": 8, "f8E3M4": 8, "f8E8M0FNU": 8, "f6E2M3FN": 6, "f6E3M2FN": 6,
    "f4E2M1FN": 4,
}


class FloatType(Type):
    """A floating-point type named by its MLIR keyword (`f32`, `bf16`, ...)."""

    __slots__ = ("name", "width")
    _fields = ("name",)

    def _derive(self) -> None:
        self.width = FLOAT_WIDTHS[self.name]

    def _render(self) -> str:
        return self.name


class ComplexType(Type):
    __slots__ = _fields = ("element_type",)

    def _render(self) -> str:
        return f"complex<{self.element_type}>"


class TupleType(Type):
    __slots__ = _fields = ("types",)

    def _render(self) -> str:
        return "tuple<" + ", ".join(map(str, self.types)) + ">"


def _result_list_text(results: Sequence[Type]) -> str:
    """MLIR prints a single non-function result bare and anything else in parens."""
    if len(results) == 1 and not isinstance(results[0], FunctionType):
        return str(results[0])
    return "(" + ", ".join(map(str, results)) + ")"


class FunctionType(Type):
    __slots__ = _fields = ("inputs", "results")

    def _render(self) -> str:
        return "(" + ", ".join(map(str, self.inputs)) + ") -> " + _result_list_text(self.results)


def _dims_text(shape: Iterable[int]) -> str:
    return "".join(("?" if d == DYNAMIC else str(d)) + "x" for d in shape)


class ShapedType(Type):
    """Common base of tensors, memrefs and vectors."""

    __slots__ = ()
    element_type: Type
    shape: tuple[int, ...] | None

    @property
    def has_rank(self) -> bool:
        return self.shape is not None

    @property
    def rank(self) -> int:
        if self.shape is None:
            raise ValueError(f"{self} has no rank")
        return len(self.shape)

    @property
    def has_static_shape(self) -> bool:
        return self.shape is not None and DYNAMIC not in self.shape

    @property
    def num_elements(self) -> int:
        if not self.has_static_shape:
            raise ValueError(f"{self} has no static shape")
        n = 1
        for d in self.shape:  # type: ignore[union-attr]
            n *= d
        return n


class RankedTensorType(ShapedType):
    __slots__ = _fields = ("shape", "element_type", "encoding")
    _defaults = (None,)

    def _render(self) -> str:
        enc = "" if self.encoding is None else f", {self.encoding}"
        return f"tensor<{_dims_text(self.shape)}{self.element_type}{enc}>"


class UnrankedTensorType(ShapedType):
    __slots__ = _fields = ("element_type",)
    shape = None

    def _render(self) -> str:
        return f"tensor<*x{self.element_type}>"


class MemRefType(ShapedType):
    """A ranked memref; `layout` is None for the identity layout."""

    __slots__ = _fields = ("shape", "element_type", "layout", "memory_space")
    _defaults = (None, None)

    def _render(self) -> str:
        text = f"memref<{_dims_text(self.shape)}{self.element_type}"
        if self.layout is not None:
            text += f", {self.layout}"
        if self.memory_space is not None:
            text += f", {_memory_space_text(self.memory_space)}"
        return text + ">"


def _memory_space_text(space: Uniqued) -> str:
    """MLIR elides the type of an i64 integer memory space (`memref<4xf32, 1>`).
    `space` is an attribute; types sit below attributes, so it is typed by their base."""
    if getattr(space, "type", None) is i64 and hasattr(space, "render_without_type"):
        return space.render_without_type()  # type: ignore[attr-defined]
    return str(space)


class UnrankedMemRefType(ShapedType):
    __slots__ = _fields = ("element_type", "memory_space")
    _defaults = (None,)
    shape = None

    def _render(self) -> str:
        space = "" if self.memory_space is None else f", {_memory_space_text(self.memory_space)}"
        return f"memref<*x{self.element_type}{space}>"


class VectorType(ShapedType):
    __slots__ = _fields = ("shape", "element_type", "scalable")
    _defaults = ((),)

    @classmethod
    def _normalize(cls, args: tuple) -> tuple:
        shape, element_type, scalable = args
        return (shape, element_type, scalable or (False,) * len(shape))

    def _render(self) -> str:
        dims = "".join((f"[{d}]" if s else str(d)) + "x" for d, s in zip(self.shape, self.scalable))
        return f"vector<{dims}{self.element_type}>"


_PRETTY_BODY = re.compile(r"[A-Za-z_][\w$.]*(?:<.*>)?\Z", re.S)

# TensorFlow's 2019 spellings of its types lived in the `tf` namespace, and the
# first TF Graph IR ones in `tfg` (`!tfg.control`); they are `tf_type` types
# today.  Keeping one spelling makes `!tf.string` and `!tf_type.string` the
# same (uniqued) type.
_DIALECT_RENAMES = {"tf": "tf_type", "tfg": "tf_type"}


class DialectType(Type):
    """A type of a dialect, kept as its body text (`!tf_type.resource<tensor<f32>>`).

    `dialect` is the namespace and `body` what follows `dialect.` in the
    pretty form (or the string in the opaque form `!dialect<"body">`).
    `mnemonic` is the leading identifier of the body, e.g. `resource`.
    """

    __slots__ = ("dialect", "body", "mnemonic")
    _fields = ("dialect", "body")

    def _derive(self) -> None:
        self.mnemonic = leading_identifier(self.body)

    def _render(self) -> str:
        if _PRETTY_BODY.match(self.body):
            return f"!{self.dialect}.{self.body}"
        escaped = self.body.replace("\\", "\\\\").replace('"', '\\"')
        return f'!{self.dialect}<"{escaped}">'

    @property
    def params(self) -> str:
        """The text between the outer `<` `>` of the body ('' if none)."""
        start = self.body.find("<")
        return self.body[start + 1:-1] if start >= 0 else ""


def leading_identifier(body: str) -> str:
    """The mnemonic of a dialect type or attribute body (`resource` of `resource<...>`)."""
    m = _IDENTIFIER.match(body)
    return m.group(0) if m else ""


_IDENTIFIER = re.compile(r"[A-Za-z_][\w$.]*")


def dialect_type(dialect: str, body: str) -> DialectType:
    """Build a dialect type, normalizing TensorFlow's historical spellings."""
    dialect = _DIALECT_RENAMES.get(dialect, dialect)
    return DialectType(dialect, body)


# Frequently used singletons.
i1 = IntegerType(1)
i8 = IntegerType(8)
i16 = IntegerType(16)
i32 = IntegerType(32)
i64 = IntegerType(64)
index = IndexType()
none = NoneType()
f16 = FloatType("f16")
bf16 = FloatType("bf16")
f32 = FloatType("f32")
f64 = FloatType("f64")


def element_type(t: Type) -> Type:
    """The element type of a shaped type, or the type itself."""
    return t.element_type if isinstance(t, ShapedType) else t


def is_float_like(t: Type) -> bool:
    return isinstance(element_type(t), FloatType)


def is_integer_like(t: Type) -> bool:
    return isinstance(element_type(t), (IntegerType, IndexType))
