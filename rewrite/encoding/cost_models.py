"""Cost models for lowered IR: what extraction minimises.

Every e-node that is not an operation (results, types, attributes, lists, regions,
effect tokens) costs 0, so only ops are paid for and "same type" or "same attribute"
never biases a choice. An op costs, in order of precedence: a user override by op
name, else its record's ``OpDef.cost``, else ``default`` (unregistered ops).
:class:`TFShapeCost` prices tf ops by the work their static shapes imply.

All models are vectorised per operator: one price per typed constructor, and one
per distinct op name among the generic nodes (their payload), never a Python call
per e-node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from egraft.ir import REGISTRY
from egraft.ir.syntax.parser import Parser
from egraft.ir.core.traits import Traits
from egraft.ir.core.types import Type

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
