"""Random affine loop nests over memrefs, verifier-valid by construction.

Affine passes (canonicalize, cse, scalrep, graybox elimination and hoisting, the inliner) must
keep memory contents; a handful of hand-written cases cannot show that, so this module draws
whole functions of the shapes those passes rewrite:

* loop nests of depth 1 to 5 whose bounds are constants, outer induction variables, symbols
  (``%n mod 4``, a ``memref.dim`` result) and ``min``/``max`` of several results, with steps 1-3,
  zero- and one-trip loops included, some carrying an ``iter_args`` accumulator;
* ``affine.load``/``affine.store`` with random affine subscripts of dims and ``symbol(...)``s
  (``floordiv``, ``mod``, negative coefficients), ``memref.load``/``memref.store`` on index values;
* a store followed by a load of the same place (store-to-load forwarding), sometimes with
  another store in between, through the same memref or an alias (a ``memref.cast``);
* ``affine.if`` on random integer sets, with and without ``else`` and results;
* ``affine.apply`` chains and ``affine.min``/``affine.max``;
* ``memref.cast`` static to dynamic (shape and strided layout) and back, ``memref.dim``,
  ``memref.subview`` (strides 1-2, of views too) and ``memref.reinterpret_cast`` aliasing the
  buffers in use, scratch ``memref.alloc`` (then ``memref.dealloc``) and ``memref.alloca``
  buffers, filled before they are read;
* ``affine.graybox`` at random depths, capturing a random subset of the memrefs in scope
  (region arguments replace them inside) and sometimes returning a value.

Validity is kept by construction, following the affine rules (graybox note §1.0 and §1.4):
each index value carries its *kind* (``dim``: an IV or an apply of one, valid only as a
dimension; ``sym``: a valid symbol of the current scope; ``plain``: neither, e.g. an
``affine.min`` inside a loop, used only by ``memref.load``/``store``); entering a graybox turns
every outer index value into a symbol (it dominates the graybox) and replaces the memrefs by
region arguments, since a memref may only come in as an operand. Every access is in bounds
(a subscript whose range is not known to fit is taken ``mod`` the size) and every read
element was written (arguments come initialised, scratch buffers are filled first), so the
function's behaviour is defined on every input: a pass that makes it undefined is caught.
Loop trip counts are bounded (their product per nest), so interpreting a drawn function is fast.

Two entry points share one builder, as in ``graph_shapes.py``: ``loop_nest_programs()``, a
hypothesis strategy whose choices are drawn one by one (a failure shrinks to fewer, shallower
statements), and ``generate()``, seeded and sized in ops for the benchmark (100k ops in
linear time: nests are emitted one after another, each of depth at most ``max_depth``).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence, TypeVar

from hypothesis import strategies as st

from tests.strategies.graph_shapes import Choices as SeededChoices  # seeded, uniform (benchmarks)

T = TypeVar("T")

ELEMS = ("i32", "f32")


# --------------------------------------------------------------------------- choices


class DrawnChoices:
    """Choices drawn from hypothesis one at a time, so shrinking simplifies the program:
    integers shrink to their low end, picks to the first entry, chances to False."""

    def __init__(self, draw: Callable) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def pick(self, seq: Sequence[T]) -> T:
        return seq[self.draw(st.integers(0, len(seq) - 1))]

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) >= 100 - percent


Choices = SeededChoices | DrawnChoices


# --------------------------------------------------------------------------- values


class Index(NamedTuple):
    """An index SSA value: its name, the range it is known to lie in (None: any index), and
    its affine kind in the current scope (``dim``, ``sym`` or ``plain``)."""

    name: str
    lo: int | None
    hi: int | None
    kind: str

    @property
    def bounded(self) -> bool:
        return self.lo is not None


class Buffer(NamedTuple):
    """A memref SSA value: the view's actual shape, the type's shape (None where ``?``), its
    element strides and offset in its allocation (None: row-major from 0, the identity
    layout), the layout its type spells (None: identity; `strided<[?, ?], offset: ?>` after a
    cast to a dynamic layout) and the allocation's element count."""

    name: str
    shape: tuple[int, ...]
    type_shape: tuple[int | None, ...]
    elem: str
    strides: tuple[int, ...] | None = None
    offset: int = 0
    layout: str | None = None
    alloc_elems: int = 0

    @property
    def type(self) -> str:
        dims = "".join(f"{'?' if d is None else d}x" for d in self.type_shape)
        return f"memref<{dims}{self.elem}{', ' + self.layout if self.layout else ''}>"

    @property
    def static_layout(self) -> str | None:
        """The layout that spells this view's strides and offset exactly."""
        if self.strides is None:
            return None
        return f"strided<[{', '.join(map(str, self.strides))}], offset: {self.offset}>"

    @property
    def element_strides(self) -> tuple[int, ...]:
        if self.strides is not None:
            return self.strides
        out, acc = [], 1
        for d in reversed(self.shape):
            out.append(acc)
            acc *= d
        return tuple(reversed(out))


def base_buffer(name: str, shape: tuple[int, ...], elem: str) -> Buffer:
    count = 1
    for d in shape:
        count *= d
    return Buffer(name, shape, shape, elem, alloc_elems=count)


class Expr(NamedTuple):
    """``(sum coef * index + const) [floordiv div] [mod mod]`` and the range it lies in."""

    terms: tuple[tuple[int, Index], ...]
    const: int
    div: int | None
    mod: int | None
    lo: int | None
    hi: int | None


def _linear_range(terms: Sequence[tuple[int, Index]], const: int) -> tuple[int | None, int | None]:
    lo = hi = const
    for coef, ix in terms:
        if not ix.bounded:
            return None, None
        a, b = coef * ix.lo, coef * ix.hi  # type: ignore[operator]
        lo, hi = lo + min(a, b), hi + max(a, b)
    return lo, hi


def make_expr(terms: Sequence[tuple[int, Index]], const: int = 0, div: int | None = None,
              mod: int | None = None) -> Expr:
    lo, hi = _linear_range(terms, const)
    if div is not None and lo is not None:
        lo, hi = lo // div, hi // div  # type: ignore[operator]
    if mod is not None:
        lo, hi = 0, mod - 1
    return Expr(tuple(terms), const, div, mod, lo, hi)


class Binder:
    """Assigns map positions to the index values of one map (dims first, then symbols)."""

    def __init__(self, c: Choices) -> None:
        self.c = c
        self.dims: list[str] = []
        self.syms: list[str] = []

    def ref(self, ix: Index) -> str:
        as_symbol = ix.kind == "sym" and (ix.name in self.syms or
                                          (ix.name not in self.dims and self.c.chance(80)))
        pool, letter = (self.syms, "s") if as_symbol else (self.dims, "d")
        if ix.name not in pool:
            pool.append(ix.name)
        return f"{letter}{pool.index(ix.name)}"

    def header(self) -> str:
        return f"({', '.join(f'd{i}' for i in range(len(self.dims)))})" + \
            (f"[{', '.join(f's{i}' for i in range(len(self.syms)))}]" if self.syms else "")

    def operands(self) -> str:
        return f"({', '.join(self.dims)})" + (f"[{', '.join(self.syms)}]" if self.syms else "")


def render(e: Expr, ref: Callable[[Index], str]) -> str:
    """The expression in map syntax (`ref` names each index value: `d0`, `s1`, `%i`, `symbol(%n)`)."""
    parts = []
    for coef, ix in e.terms:
        name = ref(ix)
        parts.append(name if coef == 1 else f"{name} * {coef}")
    if e.const or not parts:
        parts.append(str(e.const))
    text = " + ".join(parts).replace("+ -", "- ")
    if e.div is not None:
        text = f"({text}) floordiv {e.div}"
    if e.mod is not None:
        text = f"({text}) mod {e.mod}"
    return text


# --------------------------------------------------------------------------- the builder


class Frame:
    """What a block can use: index values, scalar values per element type, memrefs; and where
    it sits (loop depth, the product of enclosing trip counts, at a scope's top level?)."""

    def __init__(self, indices: list[Index], values: dict[str, list[str]], buffers: list[Buffer],
                 depth: int, trips: int, top_level: bool) -> None:
        self.indices = indices
        self.values = values
        self.buffers = buffers
        self.depth = depth
        self.trips = trips
        self.top_level = top_level
        self.to_free: list[Buffer] = []

    def nested(self, depth: int, trips: int) -> "Frame":
        return Frame(list(self.indices), {k: list(v) for k, v in self.values.items()}, list(self.buffers),
                     depth, trips, False)


class Program(NamedTuple):
    text: str
    ops: int


STATEMENTS = ("load", "store", "store_load", "arith", "apply", "for", "if", "graybox", "memref_access",
              "cast", "minmax", "scratch", "reduce", "call", "view")


class LoopNestBuilder:
    """Emits one function's text statement by statement.

    `max_depth` bounds loop nesting (grayboxes do not count: they are not loops), `max_trips`
    the product of trip counts of a nest, `budget` the number of ops."""

    def __init__(self, c: Choices, budget: int, max_depth: int = 5, max_trips: int = 64,
                 graybox_percent: int = 12, min_depth: int = 0, era2019: bool = False) -> None:
        self.c = c
        self.era2019 = era2019  # only what late-2019 MLIR could say: no iter_args, if results, views
        self.min_depth = min_depth
        self.budget = budget
        self.max_depth = max_depth
        self.max_trips = max_trips
        self.graybox_percent = graybox_percent
        self.callee: tuple[str, str] | None = None  # (name, its memref parameter's type)
        self.lines: list[str] = []
        self.ops = 0
        self.counter = 0
        self.indent = 1

    # ------------------------------------------------------------ text

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def emit(self, line: str, ops: int = 1) -> None:
        self.lines.append("  " * self.indent + line)
        self.ops += ops

    @property
    def exhausted(self) -> bool:
        return self.ops >= self.budget

    # ------------------------------------------------------------ the function

    def function(self, name: str = "f", arg_shapes: Sequence[tuple[int, ...]] | None = None,
                 until_budget: bool = False, private: bool = False) -> str:
        """The function's text; its top level has a few statements, or (`until_budget`) as
        many as the op budget allows."""
        c = self.c
        shapes = list(arg_shapes) if arg_shapes is not None else \
            [tuple(c.integer(1, 6) for _ in range(c.integer(1, 3))) for _ in range(c.integer(1, 3))]
        buffers = [base_buffer(f"%A{k}", s, "f32" if k == 2 else "i32") for k, s in enumerate(shapes)]
        indices = [Index(f"%n{k}", None, None, "sym") for k in range(2)]
        frame = Frame(indices, {"i32": ["%x0"], "f32": ["%y0"]}, buffers, 0, 1, True)
        args = [f"{b.name}: {b.type}" for b in buffers] + ["%n0: index", "%n1: index", "%x0: i32", "%y0: f32"]
        self.lines.append(f"func.func {'private ' if private else ''}@{name}({', '.join(args)}) -> i32 {{")
        for k in (0, 1, 2):
            self.emit(f"%c{k} = arith.constant {k} : index")
            frame.indices.append(Index(f"%c{k}", k, k, "sym"))
        if until_budget:
            while not self.exhausted:
                self.statement(frame)
        else:
            self.block(frame)
        self.close_block(frame)
        self.emit(f"return {c.pick(frame.values['i32'])} : i32")
        self.lines.append("}")
        return "\n".join(self.lines)

    def block(self, frame: Frame) -> None:
        """Statements until the budget runs out or, sometimes, earlier (short blocks)."""
        for _ in range(self.c.integer(1, 6)):
            if self.exhausted:
                break
            self.statement(frame)

    def close_block(self, frame: Frame) -> None:
        for b in frame.to_free:
            self.emit(f"memref.dealloc {b.name} : {b.type}")

    def statement(self, frame: Frame) -> None:
        if frame.depth < self.min_depth:
            return self._for(frame)
        kind = self.c.pick(STATEMENTS)
        if kind in ("for", "reduce") and (frame.depth >= self.max_depth or frame.trips * 2 > self.max_trips):
            kind = "load"
        if kind == "graybox" and not self.c.chance(self.graybox_percent * 4):
            kind = "store"
        if self.era2019 and kind in ("reduce", "view"):
            kind = "load"
        if self.callee is not None and self.c.chance(10):  # calls often enough to exercise inlining
            kind = "call"
        getattr(self, f"_{kind}")(frame)

    # ------------------------------------------------------------ subscripts

    def affine_indices(self, frame: Frame) -> list[Index]:
        return [ix for ix in frame.indices if ix.kind != "plain"]

    def subscript(self, frame: Frame, size: int) -> Expr:
        """An affine expression in [0, size)."""
        c = self.c
        pool = self.affine_indices(frame)
        terms = []
        for _ in range(c.integer(0, 2)):
            terms.append((c.pick((1, 1, 1, 2, -1, 3)), c.pick(pool)))
        div = c.pick((2, 3)) if c.chance(15) else None
        e = make_expr(terms, c.integer(-1, 2), div)
        if e.lo is None or e.lo < 0 or e.hi >= size or c.chance(20):  # type: ignore[operator]
            e = make_expr(terms, e.const, div, size)
        return e

    def access(self, frame: Frame, buf: Buffer) -> str:
        """`%m[e0, e1]` with expressions inline (symbols sometimes marked `symbol(...)`)."""
        def ref(ix: Index) -> str:
            return f"symbol({ix.name})" if ix.kind == "sym" and self.c.chance(30) else ix.name
        exprs = [render(self.subscript(frame, size), ref) for size in buf.shape]
        return f"{buf.name}[{', '.join(exprs)}]"

    def value_of(self, frame: Frame, elem: str) -> str:
        return self.c.pick(frame.values[elem])

    def pick_buffer(self, frame: Frame) -> Buffer | None:
        return self.c.pick(frame.buffers) if frame.buffers else None

    # ------------------------------------------------------------ statements

    def _load(self, frame: Frame) -> None:
        buf = self.pick_buffer(frame)
        if buf is None:
            return self._arith(frame)
        v = self.fresh("v")
        self.emit(f"{v} = affine.load {self.access(frame, buf)} : {buf.type}")
        frame.values[buf.elem].append(v)

    def _store(self, frame: Frame) -> None:
        buf = self.pick_buffer(frame)
        if buf is not None:
            self.emit(f"affine.store {self.value_of(frame, buf.elem)}, {self.access(frame, buf)} : {buf.type}")

    def _store_load(self, frame: Frame) -> None:
        """A store, maybe another store (same memref or an alias), then a load of the first place."""
        buf = self.pick_buffer(frame)
        if buf is None:
            return
        place = self.access(frame, buf)
        self.emit(f"affine.store {self.value_of(frame, buf.elem)}, {place} : {buf.type}")
        if self.c.chance(30):
            other = self.c.pick([b for b in frame.buffers if b.elem == buf.elem])
            self.emit(f"affine.store {self.value_of(frame, other.elem)}, {self.access(frame, other)} : {other.type}")
        v = self.fresh("v")
        self.emit(f"{v} = affine.load {place} : {buf.type}")
        frame.values[buf.elem].append(v)

    def _arith(self, frame: Frame) -> None:
        c = self.c
        elem = c.pick(ELEMS)
        a, b = self.value_of(frame, elem), self.value_of(frame, elem)
        v = self.fresh("v")
        if c.chance(25):
            k = self.fresh("k")
            literal = c.pick(("0", "1", "-1", "7")) if elem == "i32" else c.pick(("0.0", "1.0", "-0.0", "2.5"))
            self.emit(f"{k} = arith.constant {literal} : {elem}")
            frame.values[elem].append(k)
            b = k
        op = c.pick(("addi", "muli", "subi", "xori")) if elem == "i32" else c.pick(("addf", "mulf", "subf"))
        self.emit(f"{v} = arith.{op} {a}, {b} : {elem}")
        frame.values[elem].append(v)

    def _apply(self, frame: Frame) -> None:
        """An `affine.apply` (sometimes a chain of two), bounded by a `mod` when needed."""
        c = self.c
        for _ in range(c.integer(1, 2)):
            e = self.subscript(frame, c.integer(2, 8))
            binder = Binder(c)
            body = render(e, binder.ref)
            name = self.fresh("a")
            self.emit(f"{name} = affine.apply affine_map<{binder.header()} -> ({body})>{binder.operands()}")
            frame.indices.append(Index(name, e.lo, e.hi, self._kind_of(frame, binder)))

    def _kind_of(self, frame: Frame, binder: Binder) -> str:
        """An apply of symbols only (or at a scope's top level) is a symbol; else a dim."""
        if frame.top_level or all(self._lookup(frame, n).kind == "sym" for n in binder.dims):
            return "sym"
        return "dim"

    def _lookup(self, frame: Frame, name: str) -> Index:
        return next(ix for ix in frame.indices if ix.name == name)

    def _call(self, frame: Frame) -> None:
        """A call of the module's callee (same parameters as `@f`'s first memref, the index
        symbols and the scalars) on a memref in scope of its parameter's type (inlining)."""
        if self.callee is None:
            return self._arith(frame)
        name, param = self.callee
        fits = [b for b in frame.buffers if b.type == param]
        if not fits:
            return self._load(frame)
        c = self.c
        indices = [c.pick(frame.indices).name for _ in range(2)]
        r = self.fresh("call")
        self.emit(f"{r} = func.call @{name}({c.pick(fits).name}, {', '.join(indices)}, "
                  f"{self.value_of(frame, 'i32')}, {self.value_of(frame, 'f32')}) : "
                  f"({param}, index, index, i32, f32) -> i32")
        frame.values["i32"].append(r)

    def _minmax(self, frame: Frame) -> None:
        c = self.c
        which = c.pick(("min", "max"))
        exprs = [self.subscript(frame, c.integer(2, 6)) for _ in range(c.integer(1, 3))]
        binder = Binder(c)
        body = ", ".join(render(e, binder.ref) for e in exprs)
        name = self.fresh("m")
        self.emit(f"{name} = affine.{which} affine_map<{binder.header()} -> ({body})>{binder.operands()}")
        pick = min if which == "min" else max
        lo, hi = pick(e.lo for e in exprs), pick(e.hi for e in exprs)  # type: ignore[type-var]
        frame.indices.append(Index(name, lo, hi, "sym" if frame.top_level else "plain"))

    def _memref_access(self, frame: Frame) -> None:
        """`memref.load`/`memref.store` with index values known to be in bounds."""
        c = self.c
        buf = self.pick_buffer(frame)
        if buf is None:
            return
        idx = []
        for size in buf.shape:
            fits = [ix for ix in frame.indices if ix.bounded and ix.lo >= 0 and ix.hi < size]  # type: ignore[operator]
            if not fits:
                return self._load(frame)
            idx.append(c.pick(fits).name)
        where = f"{buf.name}[{', '.join(idx)}] : {buf.type}"
        if c.chance(50):
            self.emit(f"memref.store {self.value_of(frame, buf.elem)}, {where}")
        else:
            v = self.fresh("v")
            self.emit(f"{v} = memref.load {where}")
            frame.values[buf.elem].append(v)

    def _cast(self, frame: Frame) -> None:
        """A cast to a more dynamic type, or back to the static one; also `memref.dim` at a
        scope's top level (a symbol there)."""
        c = self.c
        buf = self.pick_buffer(frame)
        if buf is None:
            return
        if frame.top_level and c.chance(30):
            k = c.integer(0, min(2, len(buf.shape) - 1))
            d = self.fresh("d")
            self.emit(f"{d} = memref.dim {buf.name}, %c{k} : {buf.type}")
            frame.indices.append(Index(d, buf.shape[k], buf.shape[k], "sym"))
            return
        if None in buf.type_shape or buf.layout != buf.static_layout:
            new = buf._replace(name=self.fresh("r"), type_shape=buf.shape, layout=buf.static_layout)
        else:
            dynamic_layout = buf.strides is not None and c.chance(50)
            new = buf._replace(name=self.fresh("r"), type_shape=tuple(None if c.chance(50) else d for d in buf.shape),
                               layout=("strided<[" + ", ".join("?" for _ in buf.shape) + "], offset: ?>")
                               if dynamic_layout else buf.layout)
        self.emit(f"{new.name} = memref.cast {buf.name} : {buf.type} to {new.type}")
        frame.buffers.append(new)

    def _view(self, frame: Frame) -> None:
        """A `memref.subview` of a view with a static type (strides 1-2), or a
        `memref.reinterpret_cast` of a whole allocation: aliases of memory already in use."""
        c = self.c
        static = [b for b in frame.buffers if None not in b.type_shape and b.layout == b.static_layout]
        if not static:
            return self._cast(frame)
        buf = c.pick(static)
        if buf.strides is None and buf.alloc_elems and c.chance(30):
            return self._reinterpret(frame, buf)
        offsets, sizes, steps = [], [], []
        for extent in buf.shape:
            step = c.pick((1, 1, 2))
            o = c.integer(0, extent - 1)
            offsets.append(o)
            sizes.append(c.integer(1, (extent - 1 - o) // step + 1))
            steps.append(step)
        strides = tuple(s * k for s, k in zip(buf.element_strides, steps))
        offset = buf.offset + sum(o * s for o, s in zip(offsets, buf.element_strides))
        new = Buffer(self.fresh("sv"), tuple(sizes), tuple(sizes), buf.elem, strides, offset, None, buf.alloc_elems)
        new = new._replace(layout=new.static_layout)
        self.emit(f"{new.name} = memref.subview {buf.name}[{', '.join(map(str, offsets))}] "
                  f"[{', '.join(map(str, sizes))}] [{', '.join(map(str, steps))}] : {buf.type} to {new.type}")
        frame.buffers.append(new)

    def _reinterpret(self, frame: Frame, buf: Buffer) -> None:
        c = self.c
        total = buf.alloc_elems
        offset = c.integer(0, total - 1)
        room = total - offset
        if room >= 2 and c.chance(50):
            cols = c.integer(1, min(3, room))
            shape: tuple[int, ...] = (c.integer(1, room // cols), cols)
        else:
            shape = (c.integer(1, room),)
        strides = (shape[1], 1) if len(shape) == 2 else (1,)
        new = Buffer(self.fresh("rc"), shape, shape, buf.elem, strides, offset, None, total)
        new = new._replace(layout=new.static_layout)
        self.emit(f"{new.name} = memref.reinterpret_cast {buf.name} to offset: [{offset}], sizes: "
                  f"[{', '.join(map(str, shape))}], strides: [{', '.join(map(str, strides))}] : {buf.type} to {new.type}")
        frame.buffers.append(new)

    def _scratch(self, frame: Frame) -> None:
        """A local buffer (alloc, freed at the end of the block, or alloca), filled by a loop."""
        c = self.c
        size = c.integer(1, 4)
        elem = c.pick(ELEMS)
        kind = c.pick(("alloc", "alloca"))
        buf = base_buffer(self.fresh("t"), (size,), elem)
        self.emit(f"{buf.name} = memref.{kind}() : {buf.type}")
        q = self.fresh("q")
        self.emit(f"affine.for {q} = 0 to {size} {{")
        self.emit(f"  affine.store {self.value_of(frame, elem)}, {buf.name}[{q}] : {buf.type}", ops=2)
        self.emit("}", ops=0)
        frame.buffers.append(buf)
        if kind == "alloc":
            frame.to_free.append(buf)

    # ------------------------------------------------------------ regions

    def _bound(self, frame: Frame, lower: bool) -> tuple[str, int, int]:
        """A loop bound's text and the range of its value."""
        c = self.c
        form = c.integer(0, 3)
        if form == 0 or not self.affine_indices(frame):
            k = c.integer(0, 2) if lower else c.integer(0, 4)
            return str(k), k, k
        exprs = []
        for _ in range(1 if form < 3 else c.integer(2, 3)):
            ix = c.pick(self.affine_indices(frame))
            if ix.bounded and ix.lo >= 0 and ix.hi <= 5:  # type: ignore[operator]
                exprs.append(make_expr([(1, ix)], c.integer(0, 1)))
            else:
                exprs.append(make_expr([(1, ix)], 0, None, c.integer(2, 5)))
        binder = Binder(c)
        body = ", ".join(render(e, binder.ref) for e in exprs)
        keyword = ("max " if lower else "min ") if len(exprs) > 1 else ""
        pick = max if lower else min
        lo, hi = pick(e.lo for e in exprs), pick(e.hi for e in exprs)  # type: ignore[type-var]
        return f"{keyword}affine_map<{binder.header()} -> ({body})>{binder.operands()}", lo, hi  # type: ignore[return-value]

    def _for(self, frame: Frame, reduce: bool = False) -> None:
        c = self.c
        lb, lb_lo, lb_hi = self._bound(frame, True)
        ub, ub_lo, ub_hi = self._bound(frame, False)
        step = c.pick((1, 1, 1, 2, 3))
        trips = max(1, -(-(ub_hi - lb_lo) // step))
        if frame.trips * trips > self.max_trips:
            lb, ub, lb_lo, lb_hi, ub_hi, step, trips = "0", str(c.integer(0, 2)), 0, 0, 2, 1, 2
        iv = self.fresh("i")
        inner = frame.nested(frame.depth + 1, frame.trips * trips)
        inner.indices.append(Index(iv, lb_lo, max(lb_lo, ub_hi - 1), "dim"))
        step_text = f" step {step}" if step != 1 else ""
        if reduce:
            init = self.value_of(frame, "i32")
            acc, res = self.fresh("acc"), self.fresh("s")
            self.emit(f"{res} = affine.for {iv} = {lb} to {ub}{step_text} iter_args({acc} = {init}) -> (i32) {{")
            inner.values["i32"].append(acc)
        else:
            self.emit(f"affine.for {iv} = {lb} to {ub}{step_text} {{")
        self.indent += 1
        self.block(inner)
        if reduce:
            out = self.fresh("v")
            self.emit(f"{out} = arith.addi {acc}, {self.value_of(inner, 'i32')} : i32")
            self.close_block(inner)
            self.emit(f"affine.yield {out} : i32")
        else:
            self.close_block(inner)
        self.indent -= 1
        self.emit("}", ops=0)
        if reduce:
            frame.values["i32"].append(res)

    def _reduce(self, frame: Frame) -> None:
        self._for(frame, reduce=True)

    def _if(self, frame: Frame) -> None:
        c = self.c
        pool = self.affine_indices(frame)
        binder = Binder(c)
        constraints = []
        for _ in range(c.integer(1, 2)):
            e = make_expr([(c.pick((1, -1, 2)), c.pick(pool)) for _ in range(c.integer(1, 2))], c.integer(-3, 3))
            constraints.append(f"{render(e, binder.ref)} {c.pick(('>= 0', '>= 0', '== 0'))}")
        cond = f"affine_set<{binder.header()} : ({', '.join(constraints)})>{binder.operands()}"
        with_result = c.chance(30) and not self.era2019
        res = self.fresh("f") if with_result else None
        self.emit(f"{res + ' = ' if res else ''}affine.if {cond}{' -> i32' if res else ''} {{")
        for branch in (0, 1):
            if branch:
                if not (res or c.chance(50)):
                    break
                self.emit("} else {", ops=0)
            inner = frame.nested(frame.depth, frame.trips)
            self.indent += 1
            self.block(inner)
            self.close_block(inner)
            if res:
                self.emit(f"affine.yield {self.value_of(inner, 'i32')} : i32")
            self.indent -= 1
        self.emit("}", ops=0)
        if res:
            frame.values["i32"].append(res)

    def _graybox(self, frame: Frame) -> None:
        """A graybox capturing a random subset of the memrefs: inside, the region arguments
        replace them and every outer index value is a symbol."""
        c = self.c
        captured = [b for b in frame.buffers if c.chance(60)]
        args = [b._replace(name=self.fresh("g")) for b in captured]
        indices = [Index(ix.name, ix.lo, ix.hi, "sym") for ix in frame.indices]
        inner = Frame(indices, {k: list(v) for k, v in frame.values.items()}, args, frame.depth, frame.trips, True)
        with_result = c.chance(40)
        res = self.fresh("y") if with_result else None
        types = ", ".join(b.type for b in captured)
        self.emit(f"{res + ' = ' if res else ''}affine.graybox [{', '.join(a.name for a in args)}] = "
                  f"({', '.join(b.name for b in captured)}) : ({types}) -> ({'i32' if res else ''}) {{")
        self.indent += 1
        self.block(inner)
        self.close_block(inner)
        self.emit(f"return {self.value_of(inner, 'i32')} : i32" if res else "return")
        self.indent -= 1
        self.emit("}", ops=0)
        if res:
            frame.values["i32"].append(res)


# --------------------------------------------------------------------------- the 2019 spelling

_SPELLING_2019 = (
    (r"func\.func (private )?@", "func @"),
    (r"\barith\.constant ", "constant "),
    (r"\barith\.xori ", "xor "),
    (r"\barith\.(addi|muli|subi|addf|mulf|subf) ", r"\1 "),
    (r"affine_map<((?:->|[^<>])*)>", r"\1"),
    (r"affine_set<((?:>=|[^<>])*)>", r"\1"),
    (r"\bmemref\.dim (%\w+), %c(\d)", r"dim \1, \2"),
    (r"\bmemref\.cast ", "memref_cast "),
    (r"\bmemref\.(load|store|alloc|alloca|dealloc)\b", r"\1"),
    (r"\bfunc\.call ", "call "),
)


def spell_2019(text: str) -> str:
    """The late-2019 spelling of a program built with `era2019=True`: `func`, `constant`,
    `addi`/`xor`, bare affine maps and sets, `load`/`store`/`alloc`/`dealloc`, `memref_cast`,
    `dim %m, 0`, `call` (grayboxes keep the form the RFC settled on)."""
    import re

    for pattern, replacement in _SPELLING_2019:
        text = re.sub(pattern, replacement, text)
    return text


# --------------------------------------------------------------------------- entry points


@st.composite
def loop_nest_programs(draw: Callable, max_ops: int = 40, max_depth: int = 5, era2019: bool = False) -> Program:
    """A function `@f` of random loop nests (see the module docstring); it returns an i32 and
    takes 1-3 static memrefs (`%A0`..; `%A2` is f32), two index symbols and two scalars.
    `era2019` keeps to what late-2019 MLIR could say (spell it with `spell_2019`)."""
    budget = draw(st.integers(3, max_ops))
    depth = draw(st.integers(1, max_depth))
    b = LoopNestBuilder(DrawnChoices(draw), budget, depth, era2019=era2019)
    callee = ""
    if draw(st.booleans()):  # a private callee `@g` taking `@f`'s first memref's type
        shape = tuple(draw(st.integers(1, 6)) for _ in range(draw(st.integers(1, 3))))
        g = LoopNestBuilder(DrawnChoices(draw), draw(st.integers(1, max_ops // 2)), min(depth, 3), era2019=era2019)
        callee = g.function("g", [shape], private=True) + "\n"
        b.callee = ("g", base_buffer("", shape, "i32").type)
        text = b.function(arg_shapes=[shape] + [tuple(draw(st.integers(1, 6)) for _ in range(draw(st.integers(1, 3))))
                                                for _ in range(draw(st.integers(0, 2)))])
    else:
        text = b.function()
    return Program(callee + text, b.ops)


def generate(ops: int, seed: int = 0, min_depth: int = 3, max_depth: int = 5,
             graybox_percent: int = 12) -> Program:
    """A function `@nests` of about `ops` ops: loop nests of depth `min_depth`..`max_depth` one
    after another, grayboxes at random depths (benchmarks; not meant to be interpreted, so trip
    counts are not bounded)."""
    b = LoopNestBuilder(SeededChoices(seed), ops, max_depth, max_trips=10 ** 9,
                        graybox_percent=graybox_percent, min_depth=min_depth)
    text = b.function("nests", [(6, 5), (7,), (4, 3, 2)], until_budget=True)
    return Program(text + "\n", b.ops)
