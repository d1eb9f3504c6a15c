"""Instantiating a rule's source pattern as a small function (for the soundness harness).

Each root of the rule becomes an op of a fresh `func.func` whose arguments are
the pattern's value variables and whose results are the roots' results.  The
types are drawn (hypothesis): one base type per instance, which every
variable shares or (tf ops) broadcasts against, so most instances are well
typed.  Variables a `where` clause reads as constants (`is_splat(c, 0)`,
`is_constant(c)`) become constants (`arith.constant` / `tf.Const`), splats of
the value asked for or random otherwise; an operand the op's record declares
as holding dimensions (`OpDef.dims_operand`: `Reshape`'s shape, `Transpose`'s
perm, axes, paddings) becomes a constant valid for the operand it describes.
Result types come from the op's traits and record (`OpDef.result_element`:
comparisons give i1); tf result shapes from running the op on probe values
with the interpreter, so no per-op shape function is needed.  Anything
ill-typed is left to the verifier and the rule's own checks: the harness
`assume`s they pass.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Block, Operation, Value
from egraft.ir.dialects.arith import _i1_like
from egraft.ir.records.opdef import DimsKind
from egraft.ir.records.registry import REGISTRY
from egraft.ir.semantics.inputs import array_strategy, value_for_type
from egraft.ir.semantics.interpreter import Interpreter
from egraft.ir.semantics.values import storage_dtype
from egraft.ir.core.traits import Traits
from egraft.patterns.rule import (AllOf, AnyOf, Check, CheckLike, ConstOf, Either, Not, Operand, OpPat,
                                  ResultOf, Rule, Var)
from egraft.patterns.validate import source_kinds

from egraft.passes.soundness.memref_operands import (fixed_rank, identity_map, is_memref_rule, memref_results,
                                                     memref_types, operand_kind, reinterpret_statics)

ARITH_ELEMENTS = (T.i1, T.i8, T.i32, T.i64, T.index, T.IntegerType(3), T.f16, T.f32, T.f64)
TF_ELEMENTS = (T.f32, T.f64, T.f16, T.i32, T.i64, T.i8, T.i1)

# How to draw a valid value for an operand that holds dimensions (an op record's
# `dims_operand`, e.g. tf.Transpose's `perm`) from the shape of the op's first operand.
DimsDrawer = Callable[[Callable, tuple[int, ...]], Any]


def _reshape(draw: Callable, shape: tuple[int, ...]) -> list:
    size = int(np.prod(shape)) if shape else 1
    choices = [[size], [-1], [1, size], list(reversed(shape)), [*shape, 1]]
    return draw(st.sampled_from(choices))


def _perm(draw: Callable, shape: tuple[int, ...]) -> list:
    return draw(st.permutations(list(range(len(shape)))))


def _axes(draw: Callable, shape: tuple[int, ...]) -> list:
    r = len(shape)
    return draw(st.lists(st.integers(-r, r - 1), unique_by=lambda a: a % r, max_size=r)) if r else []


def _axis(draw: Callable, shape: tuple[int, ...]) -> int:
    return draw(st.integers(-len(shape), max(len(shape) - 1, 0)))


_DIMS_DRAWERS: dict[DimsKind, DimsDrawer] = {
    "shape": _reshape, "permutation": _perm, "axes": _axes, "axis": _axis,
    "new_axis": lambda d, s: d(st.integers(-len(s) - 1, len(s))),
    "paddings": lambda d, s: [[d(st.integers(0, 2)), d(st.integers(0, 2))] for _ in s],
    "dims": lambda d, s: d(st.lists(st.integers(0, 3), max_size=3)),
}
# arith's flag attributes, as a rule's attribute variable may bind them.
_FLAG_ATTRS = {
    "fastmath": ("fastmath<none>", "fastmath<nnan>", "fastmath<ninf>", "fastmath<nnan,ninf>", "fastmath<fast>",
                 "fastmath<nsz>", "fastmath<reassoc>"),
    "overflowFlags": ("overflow<none>", "overflow<nsw>", "overflow<nuw>", "overflow<nsw,nuw>"),
}


def const_vars(rule: Rule) -> dict[str, Any]:
    """Variables the `where` clause reads as constants -> the splat value asked for (None: any)."""
    found: dict[str, Any] = {}

    def visit(c: CheckLike) -> None:
        if isinstance(c, Check):
            for a in c.args:
                if isinstance(a, ConstOf):
                    found.setdefault(a.var, c.params[0] if c.kind == "splat" else None)
        elif isinstance(c, (AllOf, AnyOf)):
            for sub in c.checks:
                visit(sub)
        elif isinstance(c, Not):
            visit(c.check)
    for check in rule.where:
        visit(check)
    return found


class Instance:
    """Builds one function from a rule's roots; `draw` is hypothesis's."""

    def __init__(self, rule: Rule, draw: Callable, base: T.Type, tf: bool, memref: bool = False) -> None:
        self.rule = rule
        self.draw = draw
        self.base = base
        self.tf = tf
        self.memref = memref  # operands typed by what they hold (`memref_operands.py`)
        self.block = Block()
        self.vars: dict[str, Value | list[Value] | A.Attribute] = {}  # bound pattern names
        self.consts = const_vars(rule)
        self.probe = Interpreter(check_types=False)  # values for result shapes

    # ------------------------------------------------------------ types and leaves

    def var_type(self) -> T.Type:
        """The base type, or (tf) sometimes a shape that broadcasts against it."""
        base = self.base
        if not self.tf or not isinstance(base, T.RankedTensorType) or not self.draw(st.booleans()):
            return base
        shape = list(base.shape)
        keep = self.draw(st.integers(0, len(shape)))
        shape = [d if self.draw(st.booleans()) else 1 for d in shape[len(shape) - keep:]]
        return T.RankedTensorType(tuple(shape), base.element_type)

    def argument(self, t: T.Type) -> Value:
        arg = self.block.add_argument(t)
        self.probe.env[arg] = self.draw(value_for_type(t))
        return arg

    def constant(self, t: T.Type, value: np.ndarray | None = None, splat: Any = None) -> Value:
        """An `arith.constant` / `tf.Const` of type `t`: `value`, a splat, or random."""
        et = T.element_type(t)
        if value is None:
            shape = t.shape if isinstance(t, T.ShapedType) else ()
            if splat is None:
                value = self.draw(array_strategy(et, shape, True))
            else:
                value = np.full(shape, splat)
                assume(np.array_equal(value.astype(storage_dtype(et)), value))  # representable in `t`
        assume(not isinstance(t, T.ShapedType) or t.has_static_shape)
        attr = _attribute(np.asarray(value), t)
        name = "tf.Const" if self.tf else "arith.constant"
        op = self.block.append(Operation.create(name, (), [t], {"value": attr}))
        if self.tf:
            self.probe.eval_op(op)
        return op.results[0]

    # ------------------------------------------------------------ the pattern

    def value(self, pat: Operand, dims: DimsKind | None = None,
              first: Value | None = None) -> Value | list[Value]:
        """The IR value(s) standing for one operand pattern; `dims` says what the operand
        holds when it holds dimensions of `first`, the op's first operand (memref rules:
        `first` is the accessed memref, `dims` what the operand holds, `operand_kind`)."""
        if isinstance(pat, OpPat):
            return self.op(pat).results[0]
        if isinstance(pat, ResultOf) and isinstance(pat.op, OpPat):
            return self.op(pat.op).results[pat.index]
        if isinstance(pat, Either):
            return [self.value(pat.a, None, first), self.value(pat.b, None, first)]
        if isinstance(pat, tuple):
            kind = "index" if self.memref and dims == "indices" else None
            return [self.value(p, kind, first) for p in pat]  # type: ignore[arg-type]
        assert isinstance(pat, Var), pat
        if not pat.is_wildcard and pat.name in self.vars:
            return self.vars[pat.name]
        made = self.memref_leaf(dims, first) if self.memref else self.leaf(pat, dims, first)
        if not pat.is_wildcard:
            self.vars[pat.name] = made
        return made

    def leaf(self, pat: Var, dims: DimsKind | None, first: Value | None) -> Value | list[Value]:
        if self.tf and dims is not None and (first is not None or dims == "dims"):
            shape = first.type.shape if first is not None and isinstance(first.type, T.RankedTensorType) else ()
            data = np.asarray(_DIMS_DRAWERS[dims](self.draw, tuple(shape)), np.int32)
            return self.constant(T.RankedTensorType(data.shape, T.i32), data)
        if self.kinds().get(pat.name) == "values":
            return [self.argument(self.var_type()) for _ in range(self.draw(st.integers(1, 3)))]
        t = self.var_type()
        if pat.constraint is not None:
            assume(pat.constraint.predicate(t))
        if pat.name in self.consts:
            return self.constant(t, splat=self.consts[pat.name])
        return self.argument(t)

    def memref_leaf(self, kind: str, memref: Value | None) -> Value | list[Value]:
        """A leaf of a memref rule: index constants (one per dimension of `memref`, or a
        dimension number up to the rank, out of range included), a stored element, or a buffer."""
        rank = len(memref.type.shape) if memref is not None and isinstance(memref.type, T.MemRefType) else 0
        if kind == "index":
            return self.index_constant()
        if kind == "indices":
            return [self.index_constant() for _ in range(rank)]
        if kind == "dim":
            return self.constant(T.index, np.asarray(self.draw(st.integers(0, rank))))
        if kind == "none":
            return []
        if kind == "element":
            return self.argument(T.element_type(self.base))
        if self.base.has_static_shape and self.draw(st.booleans()):
            # A fresh allocation, at the top of the body (allocating is an effect: it must not
            # come between the ops of an `.after` chain); loads of unwritten elements are undefined.
            return self.block.prepend(Operation.create("memref.alloc", (), [self.base], {
                "operandSegmentSizes": A.DenseArrayAttr(T.i32, (0, 0))})).results[0]
        return self.argument(self.base)

    def index_constant(self) -> Value:
        """An index in 0-2: inside the drawn buffers' sizes (1-3) often enough to compare memory."""
        return self.constant(T.index, np.asarray(self.draw(st.integers(0, 2))))

    def kinds(self) -> dict[str, str]:
        return source_kinds(self.rule)

    def op(self, pat: OpPat) -> Operation:
        if pat.after_op is not None:  # the op whose effect the root's incoming token is: built first
            self.op(pat.after_op)
        opdef = REGISTRY.lookup(pat.name)
        operand_defs = opdef.operands if opdef is not None else ()
        dims_operand = opdef.dims_operand if opdef is not None else None
        operands: list[Value] = []
        groups = []
        position = 0  # in the op's declared operands (an `Either` spans two)
        for sub in pat.operands:
            name = operand_defs[position].name if position < len(operand_defs) else None
            dims = dims_operand[1] if dims_operand is not None and name == dims_operand[0] else None
            first = operands[0] if operands else None
            if self.memref:
                dims, first = operand_kind(pat.name, name), self.accessed(operands)  # type: ignore[assignment]
            position += 2 if isinstance(sub, Either) else 1
            v = self.value(sub, dims, first)
            vs = v if isinstance(v, list) else [v]
            operands.extend(vs)
            groups.append(len(vs))
        attrs = {name: self.attribute(pat.name, name, v) for name, v in pat.attrs}
        if self.memref and pat.name == "memref.reinterpret_cast":
            attrs.update(reinterpret_statics(self.accessed(operands).type))  # type: ignore[union-attr]
        if self.memref and "map" in attrs:  # an affine access: one index per dimension
            rank = len(operands) - (2 if pat.name == "affine.store" else 1)
            attrs["map"] = identity_map(rank)
        if opdef is not None and opdef.has_trait(Traits.AttrSizedOperandSegments):
            attrs["operandSegmentSizes"] = A.DenseArrayAttr(T.i32, tuple(groups))
        types = [t for t in pat.result_types or () if isinstance(t, T.Type)]
        if self.memref and not types:
            accessed = self.accessed(operands)
            results = memref_results(self.draw, pat.name, accessed.type if accessed is not None else self.base)
        else:
            results = types or self.result_types(pat.name, operands)
        op = Operation.create(pat.name, operands, results, attrs)
        self.block.append(op)
        self.infer_by_running(op, bool(types))
        return op

    @staticmethod
    def accessed(operands: list[Value]) -> Value | None:
        """The memref an op of a memref rule accesses: its first memref operand so far."""
        return next((v for v in operands if isinstance(v.type, T.MemRefType)), None)

    def attribute(self, op_name: str, name: str, v: Var | A.Attribute) -> A.Attribute:
        if not isinstance(v, Var):
            return v
        if v.name in self.vars:
            return self.vars[v.name]
        opdef = REGISTRY.lookup(op_name)
        default = next((a.default for a in opdef.attributes if a.name == name), None) if opdef else None
        if name in _FLAG_ATTRS:
            made = A.DialectAttr("arith", self.draw(st.sampled_from(_FLAG_ATTRS[name])))
        elif default is None or default in (A.TRUE, A.FALSE):
            made = A.BoolAttr(self.draw(st.booleans()))
        else:
            made = default
        if not v.is_wildcard:
            self.vars[v.name] = made
        return made

    def result_types(self, name: str, operands: list[Value]) -> list[T.Type]:
        opdef = REGISTRY.lookup(name)
        count = len(opdef.results) if opdef is not None else 1
        first = operands[0].type if operands else self.base
        if name in ("arith.cmpi", "arith.cmpf"):
            return [_i1_like(first)]
        if (opdef is not None and opdef.has_trait(Traits.SameOperandsAndResultType)) or name == "arith.select":
            return [operands[-1].type] * count
        if name.startswith("arith."):  # casts: a drawn element type of the operand's shape
            et = self.draw(st.sampled_from(ARITH_ELEMENTS))
            return [_with_element(first, et)]
        et = (opdef.result_element if opdef is not None else None) or T.element_type(first)
        if name == "tf.Cast":
            et = self.draw(st.sampled_from(TF_ELEMENTS))
        return [T.UnrankedTensorType(et)] * count  # ranked once the probe run shows the shape

    def infer_by_running(self, op: Operation, typed: bool) -> None:
        """Run the op on the probe values; unranked results get the shape it produced."""
        if not self.tf:
            return  # arith result types come from traits; the verifier judges the instance
        try:
            self.probe.eval_op(op)
        except Exception:  # undefined on the probe, or ill-typed: the verifier would reject it
            assume(False)
        if typed:
            return
        for r in op.results:
            if isinstance(r.type, T.UnrankedTensorType):
                out = self.probe.env[r]
                r.type = T.RankedTensorType(tuple(np.shape(out)), r.type.element_type)

    def function(self) -> Operation:
        """The function: each root's results are returned."""
        returned = [r for op in self.roots for r in op.results]
        self.block.append(Operation.create("func.return", returned))
        ftype = T.FunctionType(tuple(a.type for a in self.block.args), tuple(v.type for v in returned))
        func = Operation.create("func.func", (), (), {"sym_name": A.StringAttr("rule"),
                                                      "function_type": A.TypeAttr(ftype)}, regions=1)
        func.regions[0].add_block(self.block)
        module = Operation.create("builtin.module", regions=1)
        module.regions[0].add_block(Block()).append(func)
        return module

    def build(self) -> Operation:
        self.roots = [self.op(root) for root in self.rule.roots]
        return self.function()


def _with_element(t: T.Type, et: T.Type) -> T.Type:
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, et)
    if isinstance(t, T.VectorType):
        return T.VectorType(t.shape, et, t.scalable)
    return et


def _attribute(value: np.ndarray, t: T.Type) -> A.Attribute:
    et = T.element_type(t)
    if not isinstance(t, T.ShapedType):
        x = value.item()
        if isinstance(et, T.FloatType):
            return A.FloatAttr(float(x), et)
        return A.IntegerAttr(int(x), et)
    flat = tuple(v.item() if not isinstance(et, T.FloatType) else float(v) for v in value.reshape(-1))
    if et is T.i1:
        flat = tuple(bool(v) for v in flat)
    return A.DenseElementsAttr(t, flat[0] if len(flat) == 1 else flat)


@st.composite
def base_types(draw: Callable, tf: bool) -> T.Type:
    """A base type: scalars, vectors or tensors (arith); ranked static tensors (tf)."""
    if tf:
        et = draw(st.sampled_from(TF_ELEMENTS))
        shape = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
        return T.RankedTensorType(shape, et)
    et = draw(st.sampled_from(ARITH_ELEMENTS))
    kind = draw(st.sampled_from(("scalar", "scalar", "tensor", "vector")))
    if kind == "scalar":
        return et
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    return T.RankedTensorType(shape, et) if kind == "tensor" else T.VectorType(shape, et)


@st.composite
def rule_instances(draw: Callable, rule: Rule, types: st.SearchStrategy[T.Type] | None = None) -> Operation:
    """A module with one function `@rule` whose body is the rule's source pattern."""
    tf = any(op.name.startswith("tf.") for op in rule.source_ops())
    memref = is_memref_rule({op.name for op in rule.source_ops()})
    base = draw(types if types is not None else memref_types(fixed_rank(rule)) if memref else base_types(tf))
    return Instance(rule, draw, base, tf, memref).build()
