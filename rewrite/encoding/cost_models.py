"""Cost models for lowered IR: what extraction minimises.

Every e-node that is not an operation (results, types, attributes, lists, regions,
effect tokens) costs 0, so only ops are paid for and "same type" or "same attribute"
never biases a choice. An op costs, in order of precedence: a user override by op
name, else its record's ``OpDef.cost``, else ``default`` (unregistered ops).
:class:`TFShapeCost` prices tf ops by the work their static shapes imply;
:class:`TFCalibratedCost` by their predicted µs on this machine (the calibrated model of
``egraft.ir.semantics.tf_cost``), and :func:`tf_op_cost` is the same price for one op of
the IR (a greedy rewrite's gate).

All models are vectorised per operator: one price per typed constructor, and one
per distinct op name among the generic nodes (their payload), never a Python call
per e-node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from egraft.ir import REGISTRY
from egraft.ir.syntax.parser import Parser
from egraft.ir.core.traits import Traits
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.types import Type
from egraft.ir.core.operation import Operation
from egraft.ir.records.opdef import SINGLE
from egraft.ir.semantics.tf_cost import (Calibration, cost_of_work, kernel_us, load_calibration, op_cost_us,
                                         ops_cost_us, work)
from egraft.ir.semantics.tf_shapes import Shapes, shape_of_type

from egraft.rewrite.encoding.schema import is_op_ctor, op_name_of
from egraft.rewrite.engine.export import EGraphArrays


def record_cost(name: str, default: float) -> float:
    opdef = REGISTRY.lookup(name)
    return opdef.cost if opdef is not None else default


@dataclass(frozen=True)
class IRCost:
    """Per-op-name costs: ``overrides`` first, then ``OpDef.cost``, then ``default``."""

    overrides: Mapping[str, float] = field(default_factory=dict)
    default: float = 1.0
    opaque: float = 1.0

    def op_cost(self, name: str) -> float:
        cost = self.overrides.get(name)
        return cost if cost is not None else record_cost(name, self.default)

    def node_costs(self, g: EGraphArrays) -> np.ndarray:
        per_ctor = np.zeros(max(len(g.op_names), 1))
        generic = []
        for code, ctor in enumerate(g.op_names):
            if ctor == "Opaque":
                per_ctor[code] = self.opaque
            elif ctor in ("Generic", "GenericPure"):
                generic.append(code)
            elif is_op_ctor(ctor):
                per_ctor[code] = self.op_cost(ctor)
        costs = per_ctor[g.node_op] if g.n_nodes else np.zeros(0)
        if generic:
            nodes = np.flatnonzero(np.isin(g.node_op, generic))
            names = [op_name_of(g.op_names[g.node_op[n]], g.payloads[n]) or "" for n in nodes]
            prices = {name: self.op_cost(name) for name in set(names)}
            costs[nodes] = [prices[name] for name in names]
        return costs


def canonical_cost() -> IRCost:
    """Op record costs, with constants cheaper than any op, so that among equal-cost
    programs extraction prefers the folded one (`x - x` and `0` are otherwise a tie),
    and tf's shape-generic zeros/ones cheaper than the arithmetic they replace. The cost
    model of canonicalizing passes (canonicalize, tf-grappler)."""
    overrides = {name: 0.5 for name, d in REGISTRY.ops.items() if d.has_trait(Traits.ConstantLike)}
    overrides.update({"tf.ZerosLike": 0.75, "tf.OnesLike": 0.75})
    return IRCost(overrides)


def _elements(t: Type) -> int | None:
    shape = getattr(t, "shape", None)
    if shape is None or any(d < 0 for d in shape):
        return None
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def _matmul_inner(types: list[Type]) -> int:
    shape = getattr(types[0], "shape", None) if types else None
    return int(shape[-1]) if shape and shape[-1] >= 0 else 1


@dataclass(frozen=True)
class TFShapeCost:
    """tf ops priced by static shapes: FLOPs plus bytes moved (``byte_weight`` per byte).

    An op's output element count comes from its result types (in the e-node's ``Types``
    child). MatMul/BatchMatMul cost 2·k per output element with k approximated by the
    result's last dimension, Conv2D/DepthwiseConv2dNative 2·9 (a 3×3 window: operand
    shapes are not read yet); everything else is elementwise (one FLOP per element).
    Unknown shapes fall back to :class:`IRCost`.
    Priced once per distinct (op, result types) pair, not per e-node.
    """

    fallback: IRCost = IRCost()
    byte_weight: float = 0.25
    bytes_per_element: int = 4

    def node_costs(self, g: EGraphArrays) -> np.ndarray:
        costs = self.fallback.node_costs(g)
        ptr, order = g.class_nodes()
        types_cache: dict[int, list[Type] | None] = {}

        def types_of(c: int) -> list[Type] | None:
            if c not in types_cache:
                nodes = order[ptr[c]:ptr[c + 1]]
                found = None
                for n in nodes:
                    name = g.op_names[g.node_op[n]]
                    if name == "Types":
                        kids = g.children[g.child_ptr[n]:g.child_ptr[n + 1]]
                        texts = [next((g.payloads[m] for m in order[ptr[k]:ptr[k + 1]]
                                       if g.op_names[g.node_op[m]] == "Ty"), None) for k in kids]
                        if None not in texts:
                            found = [Parser(str(t)).parse_type() for t in texts]
                        break
                types_cache[c] = found
            return types_cache[c]

        priced: dict[tuple, float | None] = {}
        for code, ctor in enumerate(g.op_names):
            if not ctor.startswith("tf."):
                continue
            shape = REGISTRY.lookup(ctor)
            n_groups = len(shape.operands) if shape is not None else 0
            for n in np.flatnonzero(g.node_op == code):
                kids = g.children[g.child_ptr[n]:g.child_ptr[n + 1]]
                key = (ctor, int(kids[n_groups]))
                if key not in priced:
                    priced[key] = self.price(ctor, types_of(int(kids[n_groups])))
                if priced[key] is not None:
                    costs[n] = priced[key]
        return costs

    def price(self, name: str, results: list[Type] | None) -> float | None:
        if not results:
            return None
        elements = [_elements(t) for t in results]
        if None in elements:
            return None
        out = float(sum(elements))  # type: ignore[arg-type]
        flops = out * (2 * _matmul_inner(results) if name in ("tf.MatMul", "tf.BatchMatMulV2") else
                       9 * 2 if name in ("tf.Conv2D", "tf.DepthwiseConv2dNative") else 1)
        return flops + self.byte_weight * self.bytes_per_element * out


# ----------------------------------------------------------------- calibrated tf costs (issue #13)

def tf_op_cost(op: Operation, shapes: Shapes | None = None) -> float:
    """Predicted µs of one tf op on this machine, from its static shapes (calibrated:
    ``egraft.ir.semantics.tf_cost``); 0 for ops that are not TensorFlow ops. Pass one
    :class:`Shapes` per rewrite run: shapes of ops a rule has just built are computed on
    demand from their operands. For gating a greedy rewrite: compare the sum over the ops
    it removes with the sum over the ops it builds."""
    return op_cost_us(op, shapes)


__all__ = ["IRCost", "TFCalibratedCost", "TFShapeCost", "canonical_cost", "kernel_us", "record_cost", "tf_op_cost",
           "tf_ops_cost"]


def tf_ops_cost(ops: Iterable[Operation], shapes: Shapes | None = None) -> float:
    """The summed :func:`tf_op_cost` of several ops (one Shapes shared)."""
    return ops_cost_us(ops, shapes)


def _parse_type(text: str) -> Type | None:
    try:
        return Parser(text).parse_type()
    except Exception:  # a type egraft cannot parse back: no shape known
        return None


@dataclass(frozen=True)
class TFCalibratedCost:
    """The extraction cost model of the calibrated predictor: a tf op e-node costs its
    predicted µs (``egraft.ir.semantics.tf_cost``) from its operands' and results' types in
    the e-graph (run ``tf-shape-inference`` first, or have rules give result types); every
    other e-node costs what ``fallback`` says (``canonical_cost()``'s op costs, scaled by
    ``fallback_scale`` µs). The attributes the work depends on (an Einsum's equation, a
    MatMul's transpose flag, a pool's window, a fused kernel's ops) are read from the
    e-node's dictionaries. Priced once per distinct (op, operand types, result types,
    those attributes)."""

    fallback: IRCost = field(default_factory=lambda: canonical_cost())
    fallback_scale: float = 0.2
    calibration: Calibration | None = None

    def node_costs(self, g: EGraphArrays) -> np.ndarray:
        costs = self.fallback.node_costs(g) * self.fallback_scale
        if not g.n_nodes:
            return costs
        ptr, order = g.class_nodes()
        names = g.op_names
        node_op, children, child_ptr, payloads = g.node_op, g.children, g.child_ptr, g.payloads

        def kids(n: int) -> np.ndarray:
            return children[child_ptr[n]:child_ptr[n + 1]]

        def nodes_of(c: int) -> np.ndarray:
            return order[ptr[c]:ptr[c + 1]]

        type_memo: dict[int, Type | None] = {}
        types_memo: dict[int, list[Type | None] | None] = {}
        val_memo: dict[int, Type | None] = {}
        vals_memo: dict[int, list[Type | None] | None] = {}

        def type_of_class(c: int) -> Type | None:
            if c not in type_memo:
                text = next((payloads[m] for m in nodes_of(c) if names[node_op[m]] == "Ty"), None)
                type_memo[c] = _parse_type(str(text)) if text is not None else None
            return type_memo[c]

        def flat_list(c: int, ctor: str, cat: str, item, memo: dict) -> list | None:
            """The items of a list class (``Types``/``Vals``/``Attrs``, or chunks under a ``*Cat``)."""
            if c not in memo:
                found = None
                for m in nodes_of(c):
                    name = names[node_op[m]]
                    if name == ctor:
                        found = [item(int(k)) for k in kids(m)]
                        break
                    if name == cat:
                        parts = [flat_list(int(k), ctor, cat, item, memo) for k in kids(m)]
                        found = None if any(p is None for p in parts) else [t for p in parts for t in p]  # type: ignore[union-attr]
                        break
                memo[c] = found
            return memo[c]

        def types_of_class(c: int) -> list[Type | None] | None:
            return flat_list(c, "Types", "TCat", type_of_class, types_memo)

        def op_types(op_class: int) -> list[Type | None] | None:
            for m in nodes_of(op_class):
                ctor = names[node_op[m]]
                if ctor in ("Generic", "GenericPure", "Opaque"):
                    return types_of_class(int(kids(m)[1]))
                if is_op_ctor(ctor):
                    opdef = REGISTRY.lookup(ctor)
                    if opdef is not None:
                        return types_of_class(int(kids(m)[len(opdef.operands)]))
            return None

        def val_type(c: int) -> Type | None:
            if c not in val_memo:
                val_memo[c] = None
                for m in nodes_of(c):
                    name = names[node_op[m]]
                    if name == "Res":
                        ts = op_types(int(kids(m)[0]))
                        i = int(payloads[m])  # type: ignore[arg-type]
                        val_memo[c] = ts[i] if ts is not None and 0 <= i < len(ts) else None
                        break
                    if name in ("BArg", "Fwd", "Ext"):
                        val_memo[c] = type_of_class(int(kids(m)[0]))
                        break
            return val_memo[c]

        def vals_types(c: int) -> list[Type | None] | None:
            return flat_list(c, "Vals", "VCat", val_type, vals_memo)

        attr_memo: dict[int, A.Attribute | None] = {}

        def attr_of_class(c: int) -> A.Attribute | None:
            """The attributes work() reads: strings, integers, arrays of them."""
            if c not in attr_memo:
                attr_memo[c] = None
                for m in nodes_of(c):
                    name = names[node_op[m]]
                    if name == "AStr":
                        attr_memo[c] = A.StringAttr(str(payloads[m]))
                    elif name == "AInt":
                        attr_memo[c] = A.IntegerAttr(int(payloads[m]), T.i64)  # type: ignore[arg-type]
                    elif name == "AArr":
                        items = [attr_of_class(int(k)) for k in attr_list(int(kids(m)[0]))]
                        attr_memo[c] = None if None in items else A.ArrayAttr(tuple(items))  # type: ignore[arg-type]
                    else:
                        continue
                    break
            return attr_memo[c]

        attrs_memo: dict[int, list | None] = {}

        def attr_list(c: int) -> list[int]:
            return flat_list(c, "Attrs", "ACat", int, attrs_memo) or []

        def dict_of(c: int, out: dict[str, int]) -> None:
            while True:
                cons = next((m for m in nodes_of(c) if names[node_op[m]] == "DCons"), None)
                if cons is None:
                    return
                k = kids(cons)
                out[str(payloads[cons])] = int(k[0])
                c = int(k[1])

        cal = self.calibration or load_calibration()
        priced: dict[tuple, float | None] = {}
        for code, ctor in enumerate(names):
            generic = ctor in ("Generic", "GenericPure")
            if not (ctor.startswith("tf.") or generic):
                continue
            opdef = None if generic else REGISTRY.lookup(ctor)
            groups = [True] if generic else [d.kind != SINGLE for d in opdef.operands] if opdef is not None else None
            if groups is None:
                continue
            for n in np.flatnonzero(node_op == code):
                name = op_name_of(ctor, payloads[n]) if generic else ctor
                if not name or not name.startswith("tf."):
                    continue
                ks = kids(n)
                operands: list[Type | None] = []
                for i, is_list in enumerate(groups):
                    got = vals_types(int(ks[i])) if is_list else [val_type(int(ks[i]))]
                    operands += got if got is not None else [None]
                results = types_of_class(int(ks[len(groups)])) or []
                dicts: dict[str, int] = {}
                for d in ks[len(groups) + 1:len(groups) + 3]:
                    dict_of(int(d), dicts)
                wanted = tuple(sorted((k, c) for k, c in dicts.items() if k in _WORK_ATTRS))
                key = (name, tuple(operands), tuple(results), wanted)
                if key not in priced:
                    priced[key] = self.price(name[3:], operands, results, cal,
                                             _Attrs({k: attr_of_class(c) for k, c in wanted}))
                if priced[key] is not None:
                    costs[n] = priced[key]
        return costs

    @staticmethod
    def price(kind: str, operands: list[Type | None], results: list[Type | None],
              calibration: Calibration | None = None, attrs: "_Attrs | None" = None) -> float | None:
        """µs of a tf op of kind ``kind`` with these operand and result types (and attributes)."""
        data_in = [t for t in operands if t is not None and "control" not in str(t)]
        data_out = [t for t in results if t is not None and "control" not in str(t)]
        w = work(kind, [shape_of_type(t) for t in data_in], [shape_of_type(t) for t in data_out],
                 attrs, data_in, data_out)  # type: ignore[arg-type]
        return cost_of_work(w, calibration)


#: The attributes `tf_cost.work` reads (an e-node's are looked up only for these).
_WORK_ATTRS = frozenset({"equation", "transpose_a", "adj_x", "ksize", "fused_ops"})


class _Attrs:
    """An op's attributes as `tf_cost.work` asks for them (``attr(name)``), from an e-node."""

    def __init__(self, attrs: dict[str, A.Attribute | None]) -> None:
        self.attrs = attrs

    def attr(self, name: str) -> A.Attribute | None:
        return self.attrs.get(name)
