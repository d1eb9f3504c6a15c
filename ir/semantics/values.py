"""Runtime values of the reference interpreter and how they map to IR types.

Every SSA value is a numpy array (0-d for scalars) whose dtype is the
*storage* dtype of its IR type: signless and signed integers are stored in
two's complement (the signed numpy dtype of the next standard width), `ui*`
in the unsigned dtype, `i1` as bool, `index` as int64 (the interpreter fixes
index at 64 bits, as MLIR's default data layout does), floats in their own
IEEE dtype (bf16 and the 8-bit floats through `ml_dtypes`, which TF ships).
A memref is a `MemRef` (a buffer plus an initialisation mask) shared by
reference, so stores through one SSA name are seen through its casts.

Undefined behaviour (division by zero, poison, out-of-bounds access, reading
uninitialised memory, a TF op failing at run time) raises `Undefined`, so
that soundness tests can exclude those inputs instead of comparing garbage.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T

try:  # bf16 / 8-bit floats: optional (TensorFlow depends on ml_dtypes)
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None


class Undefined(Exception):
    """The program has undefined behaviour (or fails at run time) on this input."""


class Unsupported(Exception):
    """The interpreter has no semantics for this op, type or attribute."""


class Control:
    """The value of a control token (`!tf_executor.control`): carries no data."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "CONTROL"


CONTROL = Control()

_FLOAT_DTYPES: dict[str, Any] = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
if ml_dtypes is not None:
    _FLOAT_DTYPES.update({"bf16": ml_dtypes.bfloat16, "f8E5M2": ml_dtypes.float8_e5m2,
                          "f8E4M3FN": ml_dtypes.float8_e4m3fn})

# tf_type element types (`!tf_type.string` and friends) are not numbers; only
# the numeric builtin element types have storage.


def storage_dtype(et: T.Type) -> np.dtype:
    """The numpy dtype storing elements of the IR element type `et`."""
    if isinstance(et, T.IndexType):
        return np.dtype(np.int64)
    if isinstance(et, T.IntegerType):
        if et.width == 1:
            return np.dtype(np.bool_)
        if et.width > 64:
            return np.dtype(object)
        bits = next(b for b in (8, 16, 32, 64) if b >= et.width)
        return np.dtype(f"{'u' if et.signedness == 'u' else ''}int{bits}")
    if isinstance(et, T.FloatType) and et.name in _FLOAT_DTYPES:
        return np.dtype(_FLOAT_DTYPES[et.name])
    raise Unsupported(f"no storage for element type {et}")


def int_width(et: T.Type) -> int:
    """The bit width integer arithmetic wraps at (index: 64)."""
    return 64 if isinstance(et, T.IndexType) else et.width  # type: ignore[attr-defined]


def to_ints(x: np.ndarray) -> np.ndarray:
    """The elements as Python ints (an object array): exact arithmetic, then `wrap`."""
    return np.asarray(x).astype(object) if x.dtype != np.bool_ else np.asarray(x).astype(np.int64).astype(object)


def as_unsigned(x: np.ndarray, width: int) -> np.ndarray:
    """Python ints of the two's-complement bit patterns read as unsigned."""
    mask = (1 << width) - 1
    return np.vectorize(lambda v: int(v) & mask, otypes=[object])(x) if x.size else x.astype(object)


def as_signed(x: np.ndarray, width: int) -> np.ndarray:
    """Python ints of the bit patterns read as signed (two's complement)."""
    mask, sign = (1 << width) - 1, 1 << (width - 1)

    def one(v: Any) -> int:
        v = int(v) & mask
        return v - (1 << width) if v & sign else v
    return np.vectorize(one, otypes=[object])(x) if x.size else x.astype(object)


def wrap(x: Any, et: T.Type) -> np.ndarray:
    """Python ints reduced modulo 2**width into the storage of `et` (wrap-around)."""
    width = int_width(et)
    arr = np.asarray(x, dtype=object)
    if isinstance(et, T.IntegerType) and et.signedness == "u":
        out = as_unsigned(arr, width)
    elif width == 1:
        return np.asarray(as_unsigned(arr, 1) != 0, np.bool_) if arr.size else np.zeros(arr.shape, np.bool_)
    else:
        out = as_signed(arr, width)
    return np.asarray(out, storage_dtype(et)) if out.size else np.zeros(arr.shape, storage_dtype(et))


def element_type_of_dtype(dtype: np.dtype) -> T.Type:
    """The IR element type TensorFlow uses for a numpy dtype (tf ops' results)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return T.i1
    if dt.kind == "f" and dt.itemsize in (2, 4, 8):
        return {2: T.f16, 4: T.f32, 8: T.f64}[dt.itemsize]
    if dt.kind == "i":
        return T.IntegerType(dt.itemsize * 8)
    if dt.kind == "u":
        return T.IntegerType(dt.itemsize * 8, "u")
    if ml_dtypes is not None and dt == np.dtype(ml_dtypes.bfloat16):
        return T.bf16
    raise Unsupported(f"no element type for dtype {dt}")


class Allocation:
    """The bytes one allocation owns (a function argument's buffer, an `alloc`, an `alloca`),
    which bytes were ever written, and whether it was freed. Every view of it (casts,
    subviews, `view`, `reinterpret_cast`) shares this, so a write through one is seen through
    the others and a `dealloc` through any frees them all."""

    __slots__ = ("raw", "written", "freed")

    def __init__(self, size: int) -> None:
        self.raw = np.zeros(size, np.uint8)
        self.written = np.zeros(size, np.bool_)
        self.freed = False


class MemRef:
    """A memref value: a strided view (byte offset, shape, byte strides, element dtype) of an
    `Allocation`, as MLIR's descriptor is an aligned pointer, an offset, sizes and strides.

    `data` is a numpy view of the bytes (writable; stores go through it) and `init` says which
    elements were written (an element is written when all its bytes are). Loads of unwritten
    elements are undefined (MLIR leaves `memref.alloc`'s contents unspecified), so are accesses
    out of bounds or after `dealloc`. Memrefs of integers wider than 64 bits have no byte
    storage here (`Unsupported`)."""

    __slots__ = ("alloc", "offset", "strides", "data", "_written")

    def __init__(self, data: np.ndarray, init: bool | np.ndarray = True) -> None:
        data = np.asarray(data)
        if data.dtype == object:
            raise Unsupported("memrefs of integers wider than 64 bits")
        alloc = Allocation(data.size * data.dtype.itemsize)
        contiguous = tuple(int(s) for s in np.empty(data.shape, data.dtype).strides)
        self._bind(alloc, data.dtype, 0, data.shape, contiguous)
        self.data[...] = data
        self._written[...] = np.asarray(init, np.bool_)[..., None] if not isinstance(init, bool) else init

    def _bind(self, alloc: Allocation, dtype: np.dtype, offset: int, shape: tuple[int, ...],
              strides: tuple[int, ...]) -> None:
        self.alloc, self.offset, self.strides = alloc, offset, strides
        self.data = np.ndarray(shape, dtype, buffer=alloc.raw, offset=offset, strides=strides)
        item = np.dtype(dtype).itemsize
        self._written = np.ndarray((*shape, item), np.bool_, buffer=alloc.written, offset=offset,
                                   strides=(*strides, 1))

    @classmethod
    def view_of(cls, base: "MemRef", dtype: np.dtype, offset: int, shape: tuple[int, ...],
                strides: tuple[int, ...]) -> "MemRef":
        """Another view of `base`'s allocation (byte offset from the allocation's start, byte
        strides); undefined unless every element it can address lies inside the allocation."""
        item = np.dtype(dtype).itemsize
        if any(d < 0 for d in shape):
            raise Undefined(f"view of negative size {list(shape)}")
        if 0 not in shape:
            lo = offset + sum(min(0, s) * (d - 1) for s, d in zip(strides, shape))
            hi = offset + sum(max(0, s) * (d - 1) for s, d in zip(strides, shape)) + item
            if lo < 0 or hi > base.alloc.raw.size:
                raise Undefined(f"view of {list(shape)} elements at byte offset {offset} with byte strides "
                                f"{list(strides)} exceeds its {base.alloc.raw.size}-byte allocation")
        elif offset < 0 or offset > base.alloc.raw.size:
            raise Undefined(f"view at byte offset {offset} outside its allocation")
        view = cls.__new__(cls)
        view._bind(base.alloc, dtype, offset, tuple(shape), tuple(strides))
        return view

    @classmethod
    def uninitialized(cls, shape: tuple[int, ...], et: T.Type) -> "MemRef":
        return cls(np.zeros(shape, storage_dtype(et)), False)

    @property
    def init(self) -> np.ndarray:
        """Which elements were written (a copy: mark writes with `store` or `mark_written`)."""
        return self._written.all(axis=-1)

    @property
    def freed(self) -> bool:
        return self.alloc.freed

    @freed.setter
    def freed(self, value: bool) -> None:
        self.alloc.freed = value

    def _check(self, index: tuple[int, ...]) -> None:
        if self.alloc.freed:
            raise Undefined("access to a deallocated memref")
        if len(index) != self.data.ndim or any(not 0 <= i < d for i, d in zip(index, self.data.shape)):
            raise Undefined(f"index {list(index)} out of bounds of memref of shape {list(self.data.shape)}")

    def load(self, index: tuple[int, ...]) -> np.ndarray:
        self._check(index)
        if not self._written[index].all():
            raise Undefined(f"load of uninitialized element {list(index)}")
        return np.array(self.data[index])

    def store(self, index: tuple[int, ...], value: np.ndarray) -> None:
        self._check(index)
        self.data[index] = value
        self._written[index] = True

    def _block(self, start: tuple[int, ...], shape: tuple[int, ...]) -> tuple:
        """The slices of the block of `shape` (over the trailing dimensions) at `start`."""
        if self.alloc.freed:
            raise Undefined("access to a deallocated memref")
        lead = len(start) - len(shape)
        if lead < 0 or len(start) != self.data.ndim:
            raise Undefined(f"a {list(shape)} block does not fit a rank-{self.data.ndim} memref")
        extents = (1,) * lead + tuple(shape)
        if any(not (0 <= i and i + n <= d) for i, n, d in zip(start, extents, self.data.shape)):
            raise Undefined(f"block {list(shape)} at {list(start)} out of bounds of shape {list(self.data.shape)}")
        return tuple(start[:lead]) + tuple(slice(i, i + n) for i, n in zip(start[lead:], shape))

    def load_block(self, start: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
        """A vector load: the `shape` block over the trailing dimensions at `start`."""
        where = self._block(start, shape)
        if not self._written[where].all():
            raise Undefined(f"vector load of uninitialized elements at {list(start)}")
        return np.array(self.data[where])

    def store_block(self, start: tuple[int, ...], value: np.ndarray) -> None:
        where = self._block(start, value.shape)
        self.data[where] = value
        self._written[where] = True

    def mark_written(self) -> None:
        """Every element of this view is now written (a whole-view copy)."""
        self._written[...] = True

    def snapshot(self) -> "MemRef":
        """A deep copy of this view's elements (a run's inputs must not be mutated by the run)."""
        copy = MemRef(np.array(self.data), self.init)
        copy.freed = self.freed
        return copy

    def __repr__(self) -> str:
        return f"MemRef({self.data!r})"


def check_value(value: Any, t: T.Type) -> None:
    """Raise if `value` does not have the storage the type `t` promises (an evaluator bug)."""
    if isinstance(t, (T.MemRefType, T.UnrankedMemRefType)):
        ok = isinstance(value, MemRef)
    elif isinstance(t, T.DialectType) and t.mnemonic == "control":
        ok = value is CONTROL
    elif isinstance(t, T.DialectType) or not isinstance(value, np.ndarray):
        ok = not isinstance(t, (T.IntegerType, T.IndexType, T.FloatType, T.ShapedType)) or \
            isinstance(value, np.ndarray)
    else:
        et = T.element_type(t)
        ok = _dtype_ok(value.dtype, et) and _shape_ok(value.shape, t)
    if not ok:
        raise TypeError(f"value {value!r} does not match its type {t}")


def _dtype_ok(dtype: np.dtype, et: T.Type) -> bool:
    try:
        return dtype == storage_dtype(et)
    except Unsupported:
        return True  # strings, resources: not checked


def _shape_ok(shape: tuple[int, ...], t: T.Type) -> bool:
    if not isinstance(t, T.ShapedType):
        return shape == ()
    if t.shape is None:
        return True
    return len(shape) == len(t.shape) and all(d == T.DYNAMIC or d == s for d, s in zip(t.shape, shape))


def attribute_value(attr: Any, t: T.Type) -> np.ndarray:
    """The runtime value of a constant attribute (`arith.constant`, `tf.Const`) of type `t`."""
    et = T.element_type(t)
    if isinstance(attr, A.IntegerAttr):
        return wrap(attr.value, et)
    if isinstance(attr, A.FloatAttr):
        return np.asarray(attr.value).astype(storage_dtype(et))
    if isinstance(attr, A.DenseElementsAttr):
        if not isinstance(attr.type, T.ShapedType) or not attr.type.has_static_shape:
            raise Unsupported(f"dense attribute of non-static type {attr.type}")
        if attr.is_splat and not isinstance(attr.data, (int, float, bool)):
            raise Unsupported(f"constant of element type {et}")
        arr = np.asarray(attr.to_numpy())
        if isinstance(et, (T.IntegerType, T.IndexType)):
            return wrap(to_ints(arr), et)
        return arr.astype(storage_dtype(et))
    raise Unsupported(f"constant attribute {attr}")
