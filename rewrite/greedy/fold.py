"""Folding hooks for the greedy driver: a folder registry and constant materializers.

MLIR ops fold through a `fold` method their ODS record asks for; egraft's
records may gain one later, so folders live in a registry keyed by op name
(`register_folder`).  A folder gets the op and, per operand, the attribute of
the constant producing it (or None) and returns one value or attribute per
result, or None when it does not fold.  Attributes become constant ops
through the dialect's materializer (`register_materializer`), as MLIR's
`materializeConstant` hook does; without one the fold is skipped.
"""

from __future__ import annotations

from typing import Callable, Sequence

from egraft.ir import Operation, Value
from egraft.ir.core.attributes import Attribute, DenseElementsAttr
from egraft.ir.core.location import Location
from egraft.ir.core.types import Type

from egraft.rewrite.greedy.match import constant_attr

Folder = Callable[[Operation, list[Attribute | None]], Sequence[Value | Attribute] | None]
Materializer = Callable[[Attribute, Type, Location], Operation | None]

FOLDERS: dict[str, Folder] = {}
MATERIALIZERS: dict[str, Materializer] = {}


def register_folder(op_name: str, folder: Folder, replace: bool = False) -> None:
    if op_name in FOLDERS and not replace:
        raise ValueError(f"a folder for '{op_name}' is already registered")
    FOLDERS[op_name] = folder


def register_materializer(dialect: str, materializer: Materializer, replace: bool = False) -> None:
    if dialect in MATERIALIZERS and not replace:
        raise ValueError(f"a constant materializer for '{dialect}' is already registered")
    MATERIALIZERS[dialect] = materializer


def _arith_constant(value: Attribute, type: Type, loc: Location) -> Operation | None:
    if getattr(value, "type", None) is not type:
        return None
    return Operation.create("arith.constant", (), [type], {"value": value}, loc=loc)


def _tf_const(value: Attribute, type: Type, loc: Location) -> Operation | None:
    if not isinstance(value, DenseElementsAttr) or value.type is not type:
        return None
    return Operation.create("tf.Const", (), [type], {"value": value}, loc=loc)


register_materializer("arith", _arith_constant)
register_materializer("tf", _tf_const)


def fold(op: Operation) -> tuple[list[Value], list[Operation]] | None:
    """Fold `op` if a folder applies: the replacement values and the constant ops made
    (detached, for the caller to insert), or None."""
    folder = FOLDERS.get(op.name)
    if folder is None:
        return None
    out = folder(op, [constant_attr(v) for v in op.operands])
    if out is None:
        return None
    if len(out) != len(op.results):
        raise ValueError(f"folder of '{op.name}' gave {len(out)} values for {len(op.results)} results")
    values: list[Value] = []
    made: list[Operation] = []
    materialize = MATERIALIZERS.get(op.dialect)
    for item, result in zip(out, op.results):
        if isinstance(item, Value):
            values.append(item)
            continue
        const = materialize(item, result.type, op.loc) if materialize is not None else None
        if const is None:
            for c in made:
                c.drop_all_uses_of_operands()
            return None
        made.append(const)
        values.append(const.results[0])
    if any(v is r for v, r in zip(values, op.results)):
        return None  # folding to itself: an in-place update MLIR allows, nothing to do here
    return values, made
