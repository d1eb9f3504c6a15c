"""Graph *shapes* for the rewrite engine: MLIR functions built from drawn motifs.

The engine once worked on the inputs it was tuned on and broke on others (issue #9):
deep chains crashed a recursive write-back, chain-shaped arith made reassociation
explode, shared nodes crashed extraction. Random *values* in a fixed shape find none of
that; this module varies the shape. A function is a sequence of motifs, each on a type
the family allows:

* ``chain``: every op's first operand is the previous result (deep def-use chains);
* ``fanout``: one value read by many ops (long use lists), sometimes summed back up;
* ``diamonds``: a ladder of diamonds (v -> a, b -> v'): the number of paths, and so
  any tree cost, doubles per rung;
* ``soup``: one commutative, associative op over leaves that repeat, combined as a
  left-deep chain, a balanced tree or at random;
* ``redexes``: ``x - x``, ``x + 0``, ``x * 1``, ``-(-x)``, ``(x - y) + y``, ...
  and traps that look like redexes but are not exact (``x + 0.0``, ``x * 0.0``);
* ``constants``: shared and duplicated constants combined (folding, CSE);
* ``casts``: extensions, truncations, index and float casts across i1/i8/i32/i64/index/f32;
* ``compare_select``: comparisons (reflexive ones too) feeding selects;
* ``affine``: ``affine.apply`` chains on index values;
* ``matmul`` (tf): MatMuls sharing their left operand (tf-multi's rule).

Families: ``arith`` (scalars of i1, i8, i32, i64, index and f32 in one block), ``tf``
(tf ops on static tensors of f32, i32 and i1 with broadcasting, 0-d tensors included),
``mixed`` (both in one function) and ``cfg`` (arith in a diamond-shaped CFG: ``cf.cond_br``,
``cf.br`` with block arguments, one or two returns). Every function returns several
values: in one block the last one computed and random others (repeats, arguments and
constants among them). The text is MLIR's generic form, which egraft, xDSL and MLIR read.

Two entry points share one builder: ``programs()``, a hypothesis strategy that draws the
shape (family, and per block the motifs with their types and sizes, so a failure shrinks to
fewer and smaller motifs) and a seed for the small choices inside motifs; and ``generate()``,
seeded random motifs up to a size, for benchmarks at 100k ops. The builder emits text op by
op, without recursion, in time linear in the number of ops.
"""

from __future__ import annotations

import random
import struct
from collections import Counter
from typing import Callable, NamedTuple, Sequence, TypeVar

import attrs
from hypothesis import strategies as st

T = TypeVar("T")

FAMILIES = ("arith", "tf", "mixed", "cfg")

# --------------------------------------------------------------------------- choices


class Choices:
    """The builder's small decisions (which operand, which op, which constant), from a seeded
    generator: uniform, so every op of a table is as likely as the first (hypothesis' own
    integers lean towards their lower bound, which made most drawn ops the first of each table)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def pick(self, seq: Sequence[T]) -> T:
        return seq[self.rng.randrange(len(seq))]

    def chance(self, percent: int) -> bool:
        """True `percent` times in a hundred."""
        return self.rng.randrange(100) < percent


# --------------------------------------------------------------------------- types


@attrs.frozen
class Ty:
    """A builtin scalar (`shape` None) or a static ranked tensor of `elem`."""

    elem: str  # i1 i8 i32 i64 index f32
    shape: tuple[int, ...] | None = None

    @property
    def text(self) -> str:
        if self.shape is None:
            return self.elem
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + self.elem + ">"

    @property
    def is_tensor(self) -> bool:
        return self.shape is not None

    @property
    def width(self) -> int:
        return {"i1": 1, "i8": 8, "i32": 32, "i64": 64, "index": 64, "f32": 32}[self.elem]


I1, I8, I32, I64, INDEX, F32 = (Ty(e) for e in ("i1", "i8", "i32", "i64", "index", "f32"))
INTS = (I8, I32, I64, INDEX)
SCALARS = (I1, I8, I32, I32, I32, I64, INDEX, F32, F32)  # i32 and f32 drawn more often
TENSOR_SHAPES = ((), (3,), (4,), (2, 3), (1, 3), (2, 1), (2, 4), (3, 4))
TENSOR_ELEMS = ("f32", "f32", "i32")


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy's (and TF's) broadcast of two static shapes, None if they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x, y = (a[-i] if i <= len(a) else 1), (b[-i] if i <= len(b) else 1)
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def _broadcasts_to(s: tuple[int, ...], target: tuple[int, ...]) -> bool:
    return broadcast(s, target) == target


class Value(NamedTuple):
    name: str
    ty: Ty


# --------------------------------------------------------------------------- literals


def _int_range(ty: Ty) -> tuple[int, int]:
    return -(2 ** (ty.width - 1)), 2 ** (ty.width - 1) - 1


def _float_text(x: float) -> str:
    """An f32 literal MLIR reads back to the same bits (hex for NaN and Inf)."""
    if x != x or x in (float("inf"), float("-inf")):
        return "0x%08X" % struct.unpack("<I", struct.pack("<f", x))[0]
    return f"{x:.9e}"


def _scalar_literal(ty: Ty, v: object) -> str:
    if ty.elem == "i1":
        return "true" if v else "false"
    if ty.elem == "f32":
        return _float_text(v)  # type: ignore[arg-type]
    return str(v)


FLOAT_CONSTANTS = (0.0, 0.0, -0.0, 1.0, 1.0, -1.0, 2.0, 0.5, 3.0, 1e30, float("inf"), float("nan"))


def _constant_value(c: Choices, ty: Ty) -> object:
    if ty.elem == "i1":
        return c.chance(50)
    if ty.elem == "f32":
        return c.pick(FLOAT_CONSTANTS)
    lo, hi = _int_range(ty)
    v = c.pick((0, 0, 1, 1, -1, 2, 3, 5, 7, 42, 1000, lo, hi))
    return (v - lo) % (hi - lo + 1) + lo  # wrapped to the width (1000 is -24 in i8)


# --------------------------------------------------------------------------- the builder


@attrs.define
class Program:
    """A generated module: its text, what made it and how many ops it has."""

    text: str
    family: str
    ops: int
    motifs: Counter

    def __repr__(self) -> str:  # hypothesis prints a failing program: show it as MLIR text
        return f"<{self.family} program, {self.ops} ops, motifs {dict(self.motifs)}>\n{self.text}"


class FunctionBuilder:
    """Emits one `func.func` in generic form; pools hold the values in scope by type."""

    def __init__(self, c: Choices, motif_cap: int) -> None:
        self.c = c
        self.motif_cap = motif_cap
        self.blocks: list[list[str]] = []
        self.lines: list[str] = []
        self.pool: dict[Ty, list[Value]] = {}
        self.consts: dict[Ty, list[Value]] = {}
        self.ops = 0
        self.fresh = 0
        self.motifs: Counter = Counter()
        self.args: dict[Ty, list[Value]] = {}  # the function's arguments (they dominate every block)
        self.motif_results: list[Value] = []  # each motif's last value (returned, so it is observable)

    # ---- values and scopes

    def new_name(self) -> str:
        self.fresh += 1
        return f"%v{self.fresh}"

    def add(self, v: Value) -> Value:
        self.pool.setdefault(v.ty, []).append(v)
        return v

    def mark(self) -> tuple[dict[Ty, int], dict[Ty, int]]:
        return {t: len(p) for t, p in self.pool.items()}, {t: len(p) for t, p in self.consts.items()}

    def restore(self, mark: tuple[dict[Ty, int], dict[Ty, int]]) -> None:
        """Forget the values defined since `mark` (they do not dominate what follows)."""
        for table, sizes in zip((self.pool, self.consts), mark):
            for t in list(table):
                del table[t][sizes.get(t, 0):]

    def operand(self, ty: Ty) -> Value:
        """A value of `ty`: mostly a recent one, sometimes any earlier one, a constant or an
        argument (which keeps computations alive: values made only of constants fold away)."""
        pool = self.pool.get(ty)
        r = self.c.integer(0, 99)
        if not pool or r < 10:
            return self.constant(ty)
        if r < 20 and self.args.get(ty):
            return self.c.pick(self.args[ty])
        if r < 75:
            return self.c.pick(pool[-32:])
        return self.c.pick(pool)

    def partner(self, ty: Ty) -> Value:
        """A second operand for a binary op on `ty`: the same type, or for tensors sometimes
        another shape that broadcasts with it."""
        if ty.is_tensor and self.c.chance(30):
            shapes = [s for s in TENSOR_SHAPES if broadcast(s, ty.shape) is not None]  # type: ignore[arg-type]
            return self.operand(Ty(ty.elem, self.c.pick(shapes)))
        return self.operand(ty)

    # ---- ops

    def emit(self, name: str, operands: Sequence[Value], result: Ty | None, props: str = "",
             attrs_: str = "", successors: str = "") -> Value | None:
        """One op in generic form; its result (if any) joins the pool."""
        self.ops += 1
        res = self.new_name() if result is not None else None
        text = (f"{res} = " if res else "") + f'"{name}"(' + ", ".join(v.name for v in operands) + ")"
        text += successors
        text += f" <{{{props}}}>" if props else ""
        text += f" {{{attrs_}}}" if attrs_ else ""
        text += " : (" + ", ".join(v.ty.text for v in operands) + ") -> " + (result.text if result else "()")
        self.lines.append(text)
        return self.add(Value(res, result)) if result is not None else None

    def constant(self, ty: Ty, value: object = None, share: bool = True) -> Value:
        """A constant of `ty` (`value` or a drawn one); often an existing one, shared."""
        shared = self.consts.get(ty)
        if value is None and share and shared and self.c.chance(50):
            return self.c.pick(shared)
        if value is None:
            value = _constant_value(self.c, ty)
        if ty.is_tensor:
            v = self.emit("tf.Const", [], ty, attrs_=f"value = {self.dense(ty, value)}")
        else:
            suffix = "" if ty.elem == "i1" else f" : {ty.text}"
            v = self.emit("arith.constant", [], ty, props=f"value = {_scalar_literal(ty, value)}{suffix}")
        assert v is not None
        self.consts.setdefault(ty, []).append(v)
        return v

    def dense(self, ty: Ty, value: object) -> str:
        """A splat of `value`, or (sometimes) distinct drawn elements."""
        shape = ty.shape or ()
        if self.c.chance(70) or not shape:
            return f"dense<{_scalar_literal(Ty(ty.elem), value)}> : {ty.text}"
        rows: list[str] = [_scalar_literal(Ty(ty.elem), _constant_value(self.c, Ty(ty.elem)))
                           for _ in range(_count(shape))]
        for d in reversed(shape):  # nest the flat elements dimension by dimension
            rows = ["[" + ", ".join(rows[i:i + d]) + "]" for i in range(0, len(rows), d)]
        return f"dense<{rows[0]}> : {ty.text}"

    def binary(self, name: str, a: Value, b: Value) -> Value:
        if name.startswith("tf."):
            result = Ty(a.ty.elem, broadcast(a.ty.shape, b.ty.shape))  # type: ignore[arg-type]
            if name in _TF_COMPARE:
                result = Ty("i1", result.shape)
            v = self.emit(name, [a, b], result)
        else:
            v = self.emit(name, [a, b], a.ty, props=self.flags(name))
        assert v is not None
        return v

    def unary(self, name: str, a: Value, result: Ty | None = None) -> Value:
        props = self.flags(name) if name == "arith.negf" else ""
        attrs_ = "Truncate = false" if name == "tf.Cast" else ""
        v = self.emit(name, [a], result or a.ty, props=props, attrs_=attrs_)
        assert v is not None
        return v

    def flags(self, name: str) -> str:
        """The op's default flags (spelled out, as xDSL wants them), rarely nsw or fast."""
        if name in _OVERFLOW_OPS:
            return "overflowFlags = #arith.overflow<" + ("nsw" if self.c.chance(5) else "none") + ">"
        if name in _FASTMATH_OPS:
            return "fastmath = #arith.fastmath<" + ("fast" if self.c.chance(5) else "none") + ">"
        return ""

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        if a.ty.is_tensor:
            shape = broadcast(broadcast(cond.ty.shape, a.ty.shape), b.ty.shape)  # type: ignore[arg-type]
            v = self.emit("tf.SelectV2", [cond, a, b], Ty(a.ty.elem, shape))
        else:
            v = self.emit("arith.select", [cond, a, b], a.ty)
        assert v is not None
        return v

    # ---- motifs (each returns its last value)

    def step(self, v: Value) -> Value:
        """One op continuing a chain from `v`: mostly a binary op, sometimes a redex or a unary op."""
        if self.c.chance(10):
            return self.redex(v)
        unaries = _unary_ops(v.ty)
        if unaries and self.c.chance(15):
            return self.unary(self.c.pick(unaries), v)
        name = self.c.pick(_binary_ops(v.ty))
        if name in _BY_CONSTANT:
            return self.binary(name, v, self.constant(v.ty, self.c.pick(_BY_CONSTANT[name](v.ty))))
        return self.binary(name, v, self.partner(v.ty))

    def chain(self, ty: Ty, n: int) -> Value:
        v = self.operand(ty)
        for _ in range(n):
            v = self.step(v)
        return v

    def fanout(self, ty: Ty, n: int) -> Value:
        x = self.operand(ty)
        outs = [self.binary(self.c.pick(_binary_ops(ty, shifts=False)), x, self.partner(ty)) for _ in range(n)]
        if self.c.chance(50):
            return self.combine(outs, self.c.pick(_assoc_ops(ty)), "left")
        return outs[-1]

    def diamonds(self, ty: Ty, n: int) -> Value:
        v = self.operand(ty)
        ops = _binary_ops(ty, shifts=False)
        for _ in range(max(1, n // 3)):
            a = self.binary(self.c.pick(ops), v, self.partner(v.ty))
            b = self.step(v)
            v = self.binary(self.c.pick(ops), a, b) if broadcast(_shape(a), _shape(b)) is not None else a
        return v

    def soup(self, ty: Ty, n: int) -> Value:
        name = self.c.pick(_assoc_ops(ty))
        leaves: list[Value] = []
        for _ in range(n + 1):
            if leaves and self.c.chance(30):
                leaves.append(self.c.pick(leaves))  # a repeated leaf
            elif ty.is_tensor and self.c.chance(30):  # a shape that broadcasts to ty's
                shapes = [s for s in TENSOR_SHAPES if _broadcasts_to(s, ty.shape)]  # type: ignore[arg-type]
                leaves.append(self.operand(Ty(ty.elem, self.c.pick(shapes))))
            else:
                leaves.append(self.operand(ty))
        return self.combine(leaves, name, self.c.pick(("left", "balanced", "random")))

    def combine(self, values: list[Value], name: str, how: str) -> Value:
        """Fold `values` with `name`: a left-deep chain, a balanced tree or random pairs."""
        work = list(values)
        if how == "left":
            acc = work[0]
            for v in work[1:]:  # (fan-out results of tensors may not broadcast together: skipped)
                acc = self.binary(name, acc, v) if broadcast(_shape(acc), _shape(v)) is not None else acc
            return acc
        while len(work) > 1:
            if how == "balanced":
                a, b = work.pop(0), work.pop(0)
            else:
                a = work.pop(self.c.integer(0, len(work) - 1))
                b = work.pop(self.c.integer(0, len(work) - 1))
            work.append(self.binary(name, a, b))
        return work[0]

    def redexes(self, ty: Ty, n: int) -> Value:
        v = self.operand(ty)
        for _ in range(max(1, n // 2)):
            v = self.redex(self.operand(ty))
        return v

    def redex(self, x: Value) -> Value:
        """An identity (or a trap that only looks like one) around `x`, of x's type; one time in
        six an annihilator (x - x, x * 0)."""
        kind = "tensor" if x.ty.is_tensor else x.ty.elem if x.ty.elem in ("i1", "f32") else "int"
        identities, annihilators = _REDEXES[kind]
        return self.c.pick(annihilators if self.c.chance(16) else identities)(self, x)

    def constants(self, ty: Ty, n: int) -> Value:
        vals = [self.constant(ty, share=self.c.chance(50)) for _ in range(max(2, n // 2))]
        ops = _binary_ops(ty, shifts=False)
        v = vals[0]
        for w in vals[1:]:
            v = self.binary(self.c.pick(ops), v, w)
        return v

    def casts(self, ty: Ty, n: int) -> Value:
        v = self.operand(ty)
        for _ in range(n):
            v = self.cast(v)
        return v

    def cast(self, v: Value) -> Value:
        """One cast from v's type to another scalar type (or a trunc-of-ext round trip)."""
        t = v.ty
        options: list[tuple[str, Ty]] = []
        if t.elem == "f32":
            options.append(("arith.bitcast", I32))
        elif t == INDEX:
            options += [("arith.index_cast", I32), ("arith.index_cast", I64), ("arith.index_castui", I64)]
        else:
            options += [(op, w) for w in (I8, I32, I64) if w.width > t.width for op in ("arith.extsi", "arith.extui")]
            options += [("arith.trunci", w) for w in (I1, I8, I32) if w.width < t.width]
            if t.elem in ("i32", "i64"):
                options += [("arith.index_cast", INDEX), ("arith.sitofp", F32), ("arith.uitofp", F32)]
            if t.elem == "i32":
                options.append(("arith.bitcast", F32))
        if t.elem in ("i8", "i32") and self.c.chance(25):  # trunc(ext x): a redex
            wide = I64 if t.elem == "i32" else I32
            return self.unary("arith.trunci", self.unary(self.c.pick(("arith.extsi", "arith.extui")), v, wide), t)
        name, to = self.c.pick(options)
        return self.unary(name, v, to)

    def compare_select(self, ty: Ty, n: int) -> Value:
        if ty.elem == "i1" and ty.is_tensor:
            ty = Ty("f32", ty.shape)  # tf compares numbers
        v = self.operand(ty)
        for _ in range(max(1, n // 2)):
            x = self.operand(ty)
            y = x if self.c.chance(20) else self.partner(ty)
            if ty.is_tensor:
                cond = self.binary(self.c.pick(_TF_COMPARE), x, y)
            elif ty.elem == "f32":
                cond = self.emit("arith.cmpf", [x, y], I1, props=f"predicate = {self.c.integer(0, 15)} : i64")
            else:
                cond = self.emit("arith.cmpi", [x, y], I1, props=f"predicate = {self.c.integer(0, 9)} : i64")
            assert cond is not None
            if self.c.chance(20):
                cond = self.constant(cond.ty)
            a, b = (x, y) if self.c.chance(50) else (y, x)
            v = self.select(cond, a, a if self.c.chance(20) else b)
        return v

    def affine(self, ty: Ty, n: int) -> Value:
        v = self.operand(INDEX)
        for _ in range(n):
            dims, syms, expr = self.c.pick(_AFFINE_MAPS)
            operands = [v] + [self.operand(INDEX) for _ in range(dims + syms - 1)]
            dim_names = ", ".join(f"d{i}" for i in range(dims))
            sym_text = "[" + ", ".join(f"s{i}" for i in range(syms)) + "]" if syms else ""
            out = self.emit("affine.apply", operands, INDEX, props=f"map = affine_map<({dim_names}){sym_text} -> ({expr})>")
            assert out is not None
            v = out
        return v

    def matmul(self, ty: Ty, n: int) -> Value:
        elem = ty.elem if ty.elem != "i1" else "f32"
        x = self.operand(Ty(elem, (2, 3)))
        v = x
        for _ in range(max(1, n // 2)):
            w = self.operand(Ty(elem, (3, 4)))
            v = self.emit("tf.MatMul", [x, w], Ty(elem, (2, 4)), attrs_="transpose_a = false, transpose_b = false")
            assert v is not None
        return v


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _shape(v: Value) -> tuple[int, ...]:
    return v.ty.shape or ()


# --------------------------------------------------------------------------- op tables

_OVERFLOW_OPS = frozenset({"arith.addi", "arith.subi", "arith.muli", "arith.shli"})
_FASTMATH_OPS = frozenset({"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf",
                           "arith.maximumf", "arith.minimumf"})
_TF_COMPARE = ("tf.Less", "tf.Greater", "tf.Equal", "tf.NotEqual")
#: ops whose right operand is a constant from a safe list (no division by zero, no over-wide shift)
_BY_CONSTANT: dict[str, Callable[[Ty], tuple[int, ...]]] = {
    "arith.divsi": lambda t: (1, 2, 3, -1, 7), "arith.divui": lambda t: (1, 2, 3, 7),
    "arith.remsi": lambda t: (1, 2, 3, -1, 7), "arith.remui": lambda t: (1, 2, 3, 7),
    "arith.shli": lambda t: (0, 1, t.width - 1), "arith.shrsi": lambda t: (0, 1, t.width - 1),
    "arith.shrui": lambda t: (0, 1, t.width - 1),
}
_INT_BINARY = ("arith.addi", "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
               "arith.maxsi", "arith.minui")


def _binary_ops(ty: Ty, shifts: bool = True) -> tuple[str, ...]:
    if ty.is_tensor:
        return ("tf.LogicalAnd", "tf.LogicalOr") if ty.elem == "i1" else \
            ("tf.AddV2", "tf.AddV2", "tf.Sub", "tf.Mul", "tf.Maximum", "tf.Add")
    if ty.elem == "i1":
        return ("arith.andi", "arith.ori", "arith.xori")
    if ty.elem == "f32":
        return ("arith.addf", "arith.addf", "arith.subf", "arith.mulf", "arith.maximumf", "arith.divf")
    return _INT_BINARY + (tuple(_BY_CONSTANT) if shifts else ())


def _assoc_ops(ty: Ty) -> tuple[str, ...]:
    if ty.is_tensor:
        return ("tf.LogicalAnd", "tf.LogicalOr") if ty.elem == "i1" else ("tf.AddV2", "tf.Mul")
    if ty.elem == "i1":
        return ("arith.andi", "arith.ori", "arith.xori")
    if ty.elem == "f32":
        return ("arith.addf", "arith.mulf")
    return ("arith.addi", "arith.addi", "arith.muli", "arith.andi", "arith.ori", "arith.xori", "arith.maxsi")


def _unary_ops(ty: Ty) -> tuple[str, ...]:
    if ty.is_tensor:
        return ("tf.LogicalNot", "tf.Identity") if ty.elem == "i1" else \
            ("tf.Neg", "tf.Identity", "tf.Relu", "tf.Square", "tf.Abs")
    return ("arith.negf",) if ty.elem == "f32" else ()


def _k(b: FunctionBuilder, x: Value, v: object) -> Value:
    return b.constant(x.ty, v)


def _op(name: str) -> Callable[[FunctionBuilder, Value, Value], Value]:
    return lambda b, x, y: b.binary(name, x, y)


_add, _sub, _mul = _op("arith.addi"), _op("arith.subi"), _op("arith.muli")
_and, _or, _xor = _op("arith.andi"), _op("arith.ori"), _op("arith.xori")


def _any_cond(b: FunctionBuilder) -> Value:
    return b.operand(I1)


Redex = Callable[[FunctionBuilder, Value], Value]

#: Identities keep their operand's value (x + 0, x * 1, (x - y) + y, ...); annihilators
#: replace it with a constant (x - x, x * 0) and so cut the chain they sit in: drawn
#: rarely, or every long chain folds to a constant and the function with it.
_INT_ANNIHILATORS: tuple[Redex, ...] = (
    lambda b, x: _sub(b, x, x),
    lambda b, x: _mul(b, x, _k(b, x, 0)),
    lambda b, x: _xor(b, x, x),
    lambda b, x: b.binary("arith.remui", x, _k(b, x, 1)),
)
_INT_IDENTITIES: tuple[Redex, ...] = (
    lambda b, x: _add(b, x, _k(b, x, 0)),
    lambda b, x: _add(b, _k(b, x, 0), x),
    lambda b, x: _mul(b, x, _k(b, x, 1)),
    lambda b, x: _mul(b, _k(b, x, 1), x),
    lambda b, x: _and(b, x, x),
    lambda b, x: _or(b, x, x),
    lambda b, x: _and(b, x, _k(b, x, -1)),
    lambda b, x: _or(b, x, _k(b, x, 0)),
    lambda b, x: _xor(b, _k(b, x, 0), x),
    lambda b, x: b.binary("arith.divsi", x, _k(b, x, 1)),
    lambda b, x: b.binary("arith.shli", x, _k(b, x, 0)),
    lambda b, x: b.binary("arith.maxsi", x, x),
    lambda b, x: b.select(_any_cond(b), x, x),
    lambda b, x: _add(b, _sub(b, x, y := b.operand(x.ty)), y),
    lambda b, x: _sub(b, _add(b, x, y := b.operand(x.ty)), y),
    lambda b, x: _sub(b, _add(b, y := b.operand(x.ty), x), y),
    lambda b, x: _xor(b, _xor(b, x, y := b.operand(x.ty)), y),
    lambda b, x: _add(b, _add(b, x, _k(b, x, 3)), _k(b, x, -3)),
    lambda b, x: _mul(b, _mul(b, x, _k(b, x, 2)), _k(b, x, 3)),
)
_I1_ANNIHILATORS: tuple[Redex, ...] = (lambda b, x: _xor(b, x, x),)
_I1_IDENTITIES: tuple[Redex, ...] = (
    lambda b, x: _and(b, x, x),
    lambda b, x: _or(b, x, x),
    lambda b, x: _and(b, x, _k(b, x, True)),
    lambda b, x: _or(b, x, _k(b, x, False)),
    lambda b, x: _xor(b, x, _k(b, x, False)),
    lambda b, x: b.select(x, _k(b, x, True), _k(b, x, False)),
    lambda b, x: b.select(_any_cond(b), x, x),
)
_F32_ANNIHILATORS: tuple[Redex, ...] = (
    lambda b, x: b.binary("arith.subf", x, x),  # not 0 without fast-math (Inf, NaN)
    lambda b, x: b.binary("arith.mulf", x, _k(b, x, 0.0)),  # not 0 (-0.0, Inf, NaN)
)
_F32_IDENTITIES: tuple[Redex, ...] = (
    lambda b, x: b.binary("arith.addf", x, _k(b, x, -0.0)),
    lambda b, x: b.binary("arith.mulf", x, _k(b, x, 1.0)),
    lambda b, x: b.binary("arith.subf", x, _k(b, x, 0.0)),
    lambda b, x: b.binary("arith.divf", x, _k(b, x, 1.0)),
    lambda b, x: b.unary("arith.negf", b.unary("arith.negf", x)),
    lambda b, x: b.binary("arith.addf", x, _k(b, x, 0.0)),  # not x when x is -0.0
    lambda b, x: b.select(_any_cond(b), x, x),
)


def _splat_like(b: FunctionBuilder, x: Value, value: float, broadcast_shape: bool) -> Value:
    """A splat constant of x's element type, of x's shape or of one that broadcasts with it."""
    shape = _shape(x)
    if broadcast_shape:
        shape = b.c.pick([s for s in TENSOR_SHAPES if broadcast(s, _shape(x)) is not None])
    return b.constant(Ty(x.ty.elem, shape), value if x.ty.elem == "f32" else int(value))


def _neg(b: FunctionBuilder, x: Value) -> Value:
    return b.unary("tf.Neg", x) if x.ty.elem != "i1" else b.unary("tf.LogicalNot", x)


_TENSOR_ANNIHILATORS: tuple[Redex, ...] = (
    lambda b, x: b.binary("tf.Sub", x, x) if x.ty.elem != "i1" else b.binary("tf.LogicalAnd", x, _neg(b, x)),
)
_TENSOR_IDENTITIES: tuple[Redex, ...] = (
    lambda b, x: _neg(b, _neg(b, x)),
    lambda b, x: b.unary("tf.Identity", x),
    lambda b, x: b.unary("tf.Cast", x),
    lambda b, x: b.binary("tf.Sub", x, b.unary("tf.Neg", b.partner(x.ty))) if x.ty.elem != "i1" else x,
    lambda b, x: b.binary("tf.AddV2", x, b.unary("tf.Neg", b.partner(x.ty))) if x.ty.elem != "i1" else x,
    lambda b, x: b.binary("tf.AddV2", b.unary("tf.Neg", x), b.partner(x.ty)) if x.ty.elem != "i1" else x,
    lambda b, x: b.binary("tf.Mul", x, _splat_like(b, x, 1.0, b.c.chance(40))) if x.ty.elem != "i1" else x,
    lambda b, x: b.binary("tf.AddV2", x, _splat_like(b, x, 0.0, b.c.chance(40))) if x.ty.elem != "i1" else x,
    lambda b, x: b.unary("tf.Square", b.binary("tf.Sub", x, b.partner(x.ty))) if x.ty.elem != "i1" else x,
)

_REDEXES: dict[str, tuple[tuple[Redex, ...], tuple[Redex, ...]]] = {
    "int": (_INT_IDENTITIES, _INT_ANNIHILATORS), "i1": (_I1_IDENTITIES, _I1_ANNIHILATORS),
    "f32": (_F32_IDENTITIES, _F32_ANNIHILATORS), "tensor": (_TENSOR_IDENTITIES, _TENSOR_ANNIHILATORS),
}

_AFFINE_MAPS = (  # (dims, symbols, expression)
    (1, 0, "d0"), (1, 0, "d0 + 1"), (1, 1, "d0 + s0 * 2"), (2, 0, "d0 * 3 + d1"), (1, 0, "d0 floordiv 2"),
    (1, 0, "d0 mod 4"), (1, 0, "d0 * 2 - 1"), (0, 1, "s0"), (2, 0, "d0 - d1"), (1, 0, "d0 ceildiv 3"),
)

# --------------------------------------------------------------------------- functions

_MOTIFS = {
    "arith": ("chain", "chain", "fanout", "diamonds", "soup", "soup", "redexes", "redexes", "constants", "casts",
              "compare_select", "affine"),
    "tf": ("chain", "chain", "fanout", "diamonds", "soup", "soup", "redexes", "redexes", "constants",
           "compare_select", "matmul"),
}
_MOTIF_TYPES: dict[str, Callable[[Choices], Ty]] = {
    "arith": lambda c: c.pick(SCALARS),
    "tf": lambda c: Ty(c.pick(TENSOR_ELEMS) if c.chance(90) else "i1", c.pick(TENSOR_SHAPES)),
}


def _arguments(c: Choices, family: str) -> list[Ty]:
    scalars = [I1, I8, I32, I32, I64, INDEX, F32, F32]
    tensors = [Ty(c.pick(TENSOR_ELEMS), c.pick(TENSOR_SHAPES)) for _ in range(c.integer(2, 4))]
    tensors.append(Ty("f32", (2, 3)))
    return {"arith": scalars, "cfg": scalars, "tf": tensors, "mixed": scalars + tensors}[family]


class Motif(NamedTuple):
    """One motif of a plan: which method of the builder, on which type, how large."""

    kind: str
    ty: Ty
    size: int


#: A block's contents: motifs to emit in order, or a number of ops to fill with random motifs.
Plan = Sequence[Motif] | int


def _kinds(family: str) -> tuple[str, ...]:
    return ("arith", "tf") if family == "mixed" else ("tf",) if family == "tf" else ("arith",)


def _emit(b: FunctionBuilder, family: str, plan: Plan) -> Value:
    """Emit a block's motifs (the planned ones, or random ones until `plan` more ops); the last value."""
    target = b.ops + plan if isinstance(plan, int) else 0
    todo = [] if isinstance(plan, int) else list(plan)
    last = None
    while todo or last is None or b.ops < target:
        if todo:
            motif = todo.pop(0)
        else:
            kind = b.c.pick(_kinds(family))
            motif = Motif(b.c.pick(_MOTIFS[kind]), _MOTIF_TYPES[kind](b.c),
                          b.c.integer(1, max(1, min(target - b.ops, b.motif_cap))))
        ty = I32 if motif.kind == "casts" and motif.ty.elem == "i1" else motif.ty
        b.motifs[motif.kind] += 1
        last = getattr(b, motif.kind)(ty, motif.size)
        b.motif_results.append(last)
    return last


def _function(name: str, args: list[Ty], results: list[Ty], blocks: list[list[str]], entry_args: list[str]) -> str:
    sig = f"({', '.join(t.text for t in args)}) -> ({', '.join(t.text for t in results)})"
    head = "^bb0(" + ", ".join(f"{n}: {t.text}" for n, t in zip(entry_args, args)) + "):"
    body = [head, *("    " + line for line in blocks[0])]
    for block in blocks[1:]:
        body += [block[0], *("    " + line for line in block[1:])]
    return (f'  "func.func"() <{{function_type = {sig}, sym_name = "{name}"}}> ({{\n  '
            + "\n  ".join(body) + "\n  }) : () -> ()")


def _returns(b: FunctionBuilder, last: Value) -> list[Value]:
    """The last value, the results of up to 8 other motifs (so that what most motifs compute
    reaches a result: a wrong rewrite in dead code is invisible) and up to three random
    others: recent, any, arguments, repeats."""
    out = [last] + [v for v in b.motif_results[-9:-1] if v != last]
    everything = [v for pool in b.pool.values() for v in pool]
    for _ in range(b.c.integer(0, 3)):
        out.append(b.c.pick(out) if b.c.chance(15) else b.c.pick(everything))
    return out


def _return(b: FunctionBuilder, values: Sequence[Value]) -> None:
    b.emit("func.return", values, None)


def build(c: Choices, family: str, plans: Sequence[Plan], motif_cap: int = 48, name: str = "shape") -> Program:
    """A module holding one function of `family`: one plan per block (the cfg family has four:
    entry, the two branches, the join)."""
    b = FunctionBuilder(c, motif_cap)
    arg_types = _arguments(c, family)
    entry_args = [b.new_name() for _ in arg_types]
    for n, t in zip(entry_args, arg_types):
        b.args.setdefault(t, []).append(b.add(Value(n, t)))
    b.blocks.append(b.lines)
    if family == "cfg":
        results = _cfg_body(b, plans)
    else:
        rets = _returns(b, _emit(b, family, plans[0]))
        _return(b, rets)
        results = [v.ty for v in rets]
    text = '"builtin.module"() ({\n' + _function(name, arg_types, results, b.blocks, entry_args) + "\n}) : () -> ()\n"
    return Program(text, family, b.ops, b.motifs)


def _cfg_body(b: FunctionBuilder, plans: Sequence[Plan]) -> list[Ty]:
    """entry -> cond_br -> (^bb1 | ^bb2) -> br ^bb3 -> return; ^bb2 sometimes returns itself."""
    results = [b.c.pick(SCALARS) for _ in range(b.c.integer(1, 4))]
    _emit(b, "arith", plans[0])
    cond = b.operand(I1) if b.c.chance(30) else b.emit(
        "arith.cmpi", [b.operand(I32), b.operand(I32)], I1, props=f"predicate = {b.c.integer(0, 9)} : i64")
    assert cond is not None
    edge_types = [[b.c.pick(SCALARS) for _ in range(b.c.integer(0, 3))] for _ in range(2)]
    edges = [[b.operand(t) for t in ts] for ts in edge_types]
    sizes = f"operandSegmentSizes = array<i32: 1, {len(edges[0])}, {len(edges[1])}>"
    b.emit("cf.cond_br", [cond, *edges[0], *edges[1]], None, props=sizes, successors=" [^bb1, ^bb2]")
    join_types = [b.c.pick(SCALARS) for _ in range(b.c.integer(0, 3))]
    early_return = b.c.chance(30)
    entry_scope = b.mark()
    for index, types in enumerate(edge_types, start=1):
        _block(b, f"^bb{index}", types)
        _emit(b, "arith", plans[index])
        if index == 2 and early_return:
            _return(b, [b.operand(t) for t in results])
        else:
            outs = [b.operand(t) for t in join_types]
            b.emit("cf.br", outs, None, successors=" [^bb3]")
        b.restore(entry_scope)
    _block(b, "^bb3", join_types)
    _emit(b, "arith", plans[3])
    _return(b, [b.operand(t) for t in results])
    return results


def _block(b: FunctionBuilder, label: str, arg_types: list[Ty]) -> None:
    """Start block `label` whose arguments join the pools."""
    names = [b.new_name() for _ in arg_types]
    b.lines = [f"{label}(" + ", ".join(f"{n}: {t.text}" for n, t in zip(names, arg_types)) + "):"]
    b.blocks.append(b.lines)
    for n, t in zip(names, arg_types):
        b.add(Value(n, t))


def _motif_strategy(family: str, cap: int) -> st.SearchStrategy[Motif]:
    types = {"arith": st.sampled_from(SCALARS),
             "tf": st.builds(Ty, st.sampled_from(TENSOR_ELEMS + ("i1",)), st.sampled_from(TENSOR_SHAPES))}
    return st.one_of(*(st.builds(Motif, st.sampled_from(_MOTIFS[k]), types[k], st.integers(1, cap))
                       for k in _kinds(family)))


@st.composite
def programs(draw: Callable, families: Sequence[str] = FAMILIES, max_ops: int = 200,
             motif_cap: int = 48) -> Program:
    """Hypothesis: a module of one function of a drawn family and shape, of about `max_ops` ops at most.

    Hypothesis draws the shape: the family and, per block, the list of motifs with their types
    and sizes, so that a failure shrinks to fewer, smaller motifs. The small choices inside a
    motif come from a drawn seed (see `Choices`)."""
    family = draw(st.sampled_from(list(families)), label="family")
    budget = max_ops
    plans = []
    for _ in range(4 if family == "cfg" else 1):
        plan = []
        for m in draw(st.lists(_motif_strategy(family, motif_cap), min_size=1, max_size=6), label="motifs"):
            if budget <= 0 and plan:
                break
            plan.append(m._replace(size=max(1, min(m.size, budget))))
            budget -= m.size
        plans.append(plan)
    seed = draw(st.integers(0, 2 ** 32 - 1), label="seed")
    return build(Choices(seed), family, plans, motif_cap)


def generate(family: str, ops: int, seed: int = 0, motif_cap: int | None = None) -> Program:
    """The seeded twin of `programs()` for benchmarks: one function of about `ops` ops, random
    motifs growing with the size (up to ops/20 ops each) unless `motif_cap` is given."""
    blocks = 4 if family == "cfg" else 1
    return build(Choices(seed), family, [max(1, ops // blocks)] * blocks, motif_cap or max(48, ops // 20))


__all__ = ["F32", "FAMILIES", "I32", "Choices", "Motif", "Program", "Ty", "broadcast", "build", "generate", "programs"]
