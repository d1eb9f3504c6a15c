"""``x * 1`` and ``MatMul + 0`` where the 1 or the 0 comes from outside the island (`tf-captured-neutral`).

In a v1 graph a constant reaches the ops of a loop body or a cond branch from another island:
a ``Const`` hung on the loop pivot by a control edge (``loop/mul/y``), or an ``Enter`` of a
root-frame constant (``loop/add/ReadVariableOp/Enter``, a bias of zeros). The rules see one
island's region at a time and take no value from another island (its deadness would be lost),
so ``Mul(x, 1)`` and ``AddV2(MatMul(..), zeros)`` stay in the loop and run every iteration,
where Grappler's constant folding drops them.

**Rewrites** (inside a ``tf_executor.island``; the constant from another island or made in it):

* ``Mul(x, c)`` (either order) -> ``x`` when ``c`` is a float32 scalar 1: exact (NaN, infinities
  and signed zeros stay), and a scalar never broadcasts ``x`` to another shape;
* ``AddV2(m, z)`` (either order) -> ``m`` when ``m`` is ``[rows, n]`` and ``z`` float32 zeros of
  shape ``[]``, ``[n]`` or ``[1, n]``, which broadcast into it without changing it. ``m``'s shape
  is known when ``m`` is ``MatMul(a, w)`` with ``w`` a constant ``[k, n]`` (``[n, k]`` with
  ``transpose_b``), followed back through island yields, Switch outputs and elementwise unary
  ops (``Tanh``, ``Relu``, ...: each has its input's shape): only the shape crosses islands.
  Tagged approximate as arithmetic's ``biasadd-zero`` (Grappler's rule): ``-0.0 + 0.0`` is
  ``+0.0``, equal as numbers, not bit for bit. ``z`` may also be a ``Const`` of the island itself
  (a cond branch's ``zeros_like``, which the rules leave: they see no shape for ``m``); nothing
  about deadness changes then, and the constant goes when nothing else reads it.

``c``, ``w`` and ``z`` are found by following island results to what the island yields and
``Enter`` ops (an ``Enter`` forwards its input's value into the frame) to their input, down to
a ``tf.Const``; a Switch output is never followed. Only the *value* is taken from there.
**Deadness and frame**, for a constant from outside the island: the op was dead when ``c``
(or ``z``) was, as it reached the island (an island result or an ``Enter`` result). After the rewrite the island gets that producer's
control token as a control operand: an island's or an ``Enter``'s token is dead exactly when
its results are and is in their frame, so the island is dead exactly when it was and stays in
its frame (the producer already fed the island: no cycle). The GraphDef export writes it as a
control edge on the island's nodes, so the constant's node stays as what they wait on (an edge
instead of a kernel run per iteration), as Grappler leaves ``^Enter`` on the op it forwards.
The producer must be an ``Enter`` or an island of one op: the export makes the waiters on an
island's token wait on each of its ops (cflow_v1's ``loop/mul/y`` sits in a 9-op island, so
``loop/mul`` stays: 9 control edges on each node of the reading island).
"""

from __future__ import annotations

import numpy as np

from egraft.ir import Operation, Value
from egraft.ir.core import attributes as A

from egraft.rewrite.structural.tf_switch_pins import source

_F32 = "f32"


def constant_value(value: Value, depth: int = 0) -> np.ndarray | None:
    """The constant ``value`` always has when it is live (through island yields and Enters), else None."""
    if depth > 64:
        return None
    value = source(value)
    owner = value.owner_op
    if owner is None:
        return None
    if owner.name == "tf_executor.Enter":
        return constant_value(owner.operands[0], depth + 1)
    if owner.name != "tf.Const":
        return None
    attr = owner.attr("value")
    if not isinstance(attr, A.DenseElementsAttr) or str(attr.element_type) != _F32:
        return None
    return np.asarray(attr.to_numpy())


def _token(captured: Value) -> Value | None:
    """The control token dead exactly when ``captured`` is: its island's or Enter's."""
    owner = captured.owner_op
    if owner is None or owner.name not in ("tf_executor.island", "tf_executor.Enter"):
        return None
    if owner.name == "tf_executor.island" and len(owner.regions[0].blocks[0].ops) > 2:
        return None  # the export would make the island's nodes wait on every op of that island
    return owner.results[-1]


def _is_f32(value: Value) -> bool:
    return _F32 in str(value.type)


#: Ops whose result has their first operand's shape (elementwise unary).
_SHAPE_KEEPING = frozenset({"tf.Tanh", "tf.Relu", "tf.Relu6", "tf.Sigmoid", "tf.Identity", "tf.Neg", "tf.Abs",
                            "tf.Exp", "tf.Elu", "tf.Selu", "tf.Softplus"})


def matmul_columns(m: Value, depth: int = 0) -> int | None:
    """``n`` when ``m`` is ``[rows, n]``: a ``MatMul`` by a constant, through island yields, Switch
    outputs and elementwise unary ops (each keeps its input's shape), else None."""
    if depth > 64:
        return None
    owner = source(m).owner_op
    if owner is None:
        return None
    if owner.name == "tf_executor.Switch" or owner.name in _SHAPE_KEEPING:
        return matmul_columns(owner.operands[0], depth + 1)
    if owner.name != "tf.MatMul":
        return None
    w = constant_value(owner.operands[1])
    if w is None or w.ndim != 2:
        return None
    transpose_b = owner.attr("transpose_b")
    return int(w.shape[0] if getattr(transpose_b, "value", False) else w.shape[1])


def _replacement(op: Operation, body) -> tuple[Value, Value, bool] | None:
    """(what replaces ``op``'s result, the neutral operand, whether it is made in the island) or None."""
    for keep, other in ((0, 1), (1, 0)):
        x, c = op.operands[keep], op.operands[other]
        inside = c.owner_op is not None and c.owner_op.parent is body
        if not (_is_f32(x) and str(x.type) == str(op.results[0].type)):
            continue
        value = constant_value(c)
        if value is None:
            continue
        if op.name == "tf.Mul" and value.ndim == 0 and value.dtype == np.float32 and value == 1.0:
            return x, c, inside
        if op.name == "tf.AddV2" and value.size and not np.any(value):
            n = matmul_columns(x)
            if n is not None and (value.shape in ((), (n,), (1, n))):
                return x, c, inside
    return None


def fold_captured_neutral(top: Operation) -> int:
    """Apply the two rewrites everywhere under ``top``; how many."""
    count = 0
    for island in [o for o in top.walk() if o.name == "tf_executor.island"]:
        body = island.regions[0].blocks[0]
        for op in list(body.ops):
            if op.name not in ("tf.Mul", "tf.AddV2") or len(op.operands) != 2:
                continue
            found = _replacement(op, body)
            if found is None:
                continue
            x, c, inside = found
            if not inside:
                token = _token(c)
                if token is None:
                    continue
                if not any(v is token for v in island.operands):
                    island.set_operands([*island.operands, token])
            op.results[0].replace_all_uses_with(x)
            op.drop_all_uses_of_operands()
            op.erase()
            if inside and c.owner_op is not None and c.owner_op.name == "tf.Const" and not c.uses:
                c.owner_op.erase()  # the island's own constant, read by nothing else now
            count += 1
    return count
