"""A reference semantics with deadness for small acyclic tf_executor graphs (tests only).

Values are ``(dead, payload)``.  An island runs only when every value it captures and every
control operand is live; otherwise all its results and its control token are dead.  A
Switch forwards its data to the port its predicate selects (the other is dead; all dead if
an input is); a Merge forwards its first live input (dead if none, or a control input is).
Body ops are a handful of int32 ops (wrapping, as TF's), enough for generated graphs to compute
something, and the ops the tf-grappler families rewrite them to.
"""

from __future__ import annotations

from egraft.ir import Operation, Value

DEAD = (True, None)

def _literal(text: str) -> int | bool:
    """A splat's element: an integer, or a boolean (a folded `Less`)."""
    return {"true": True, "false": False}[text] if text in ("true", "false") else int(text)


def _i32(v: int) -> int:
    """TF's int32 arithmetic wraps: so do these ops (rewrites that are exact in TF, such as a
    hoisted common factor, must be exact here too)."""
    return (v + 2**31) % 2**32 - 2**31


_OPS = {
    "tf.Const": lambda op, a: _literal(str(op.attr("value")).split("<")[1].split(">")[0]),
    "tf.Neg": lambda op, a: _i32(-a[0]),
    "tf.Identity": lambda op, a: a[0],
    "tf.AddV2": lambda op, a: _i32(a[0] + a[1]),
    "tf.Sub": lambda op, a: _i32(a[0] - a[1]),  # what rewrites make of x + -y
    "tf.AddN": lambda op, a: _i32(sum(a)),  # of an AddV2 chain
    "tf.Mul": lambda op, a: _i32(a[0] * a[1]),
    "tf.Less": lambda op, a: a[0] < a[1],
}


def run_graph(graph: Operation, feeds: dict[Value, object]) -> list[tuple[bool, object]]:
    """The fetched values of ``graph`` (one per fetch operand, controls included)."""
    env: dict[Value, tuple[bool, object]] = {v: (False, x) for v, x in feeds.items()}
    block = graph.regions[0].blocks[0]
    for op in block.ops[:-1]:
        _step(op, env)
    return [env[v] for v in block.last.operands]


def _captured(island: Operation) -> list[Value]:
    inner = set(island.walk())
    return [v for op in inner for v in op.operands if v.owner_op not in inner]


def _step(op: Operation, env: dict[Value, tuple[bool, object]]) -> None:
    if op.name == "tf_executor.island":
        if any(env[v][0] for v in _captured(op)):
            env.update({r: DEAD for r in op.results})
            return
        local = dict(env)
        body = op.regions[0].blocks[0].ops
        for inner in body[:-1]:
            args = [local[v][1] for v in inner.operands]
            for r in inner.results:
                local[r] = (False, _OPS[inner.name](inner, args))
        env.update({r: local[v] for r, v in zip(op.results, body[-1].operands)})
        env[op.results[-1]] = (False, None)
    elif op.name == "tf_executor.Switch":
        (dd, data), (pd, pred) = env[op.operands[0]], env[op.operands[1]]
        if dd or pd or any(env[v][0] for v in op.operands[2:]):
            env.update({r: DEAD for r in op.results})
            return
        env[op.results[0]] = DEAD if pred else (False, data)
        env[op.results[1]] = (False, data) if pred else DEAD
        env[op.results[2]] = (False, None)
    elif op.name == "tf_executor.Merge":
        data = [v for v in op.operands if "control" not in str(v.type)]
        controls = [v for v in op.operands if "control" in str(v.type)]
        live = [i for i, v in enumerate(data) if not env[v][0]]
        if not live or any(env[v][0] for v in controls):
            env.update({r: DEAD for r in op.results})
            return
        env[op.results[0]] = env[data[live[0]]]
        env[op.results[1]] = (False, live[0])
        env[op.results[2]] = (False, None)
    else:
        raise NotImplementedError(op.name)
