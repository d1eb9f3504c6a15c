"""Grappler's dependency optimizer on tf_executor graphs: the control-edge part (`tf-dependency`).

The `grappler-dependency` rules forward values (`Identity(x) -> x`); what is left is about
control edges, which are operand lists of islands and executor ops, not values a rule
replaces. So this step, run after the rules, does by hand:

0. **IdentityN among other ops** (a coarsened island, a function body): forwarded in place.
1. **Forwarding islands** (an island whose body only yields, with data results; the rules
   leave one where an `Identity` was, and `IdentityN` is one once forwarded here): its data
   users take the yielded values and wait on the island's control operands instead; its
   control users wait on those operands and on the islands that produce the yielded values.
   Sound under deadness: the island's results were dead exactly when a yielded value or a
   control operand was dead, and each user now sees both; an island yielding several values
   that may differ in deadness (`executor.may_be_dead`) is kept, as each result was dead
   when any of them was. Not done (as Grappler keeps such
   Identity nodes) when a data user is the graph's fetch (a fetched name must stay; the
   export gives it back anyway) or a `Merge` (a Merge fires on its first live input: added
   controls would change that), or when the island's control is used and a yielded value
   comes from an executor op (a `Switch`'s control is live when its output is dead).
2. **NoOp islands** (`island { tf.NoOp }` without data results): control users wait on
   the NoOp's control operands instead, and the island goes. Kept when fetched (a control
   output must run). Every ordering the NoOp imposed survives (its users wait on what it
   waited on), so a NoOp marked `_has_manual_control_dependencies` goes too: the drivers
   already erase a NoOp (it has no results and no effects) and the executor
   canonicalization forwards the empty island's controls the same way.
3. **Redundant control operands**: a control operand on an island that also consumes a
   data result of the same island of one op (data implies order, and an island's data results
   are dead exactly when its control is; not for a coarsened island, whose token stands for
   ops the value does not come from), and repeated control operands. Not on nodes marked
   `_has_manual_control_dependencies`.

Rewiring an island with `i` control operands to `o` users adds up to `i * o` edges; like
Grappler, a node is only removed when that is no more than the `i + o` edges it had (or
when `i` or `o` is at most one), so that the step never grows the graph quadratically.

Each step is one forward scan of each graph's block, no recursion; the removals' control
edges are rewired once at the end (`_Rewiring`), each node's operand list rebuilt once.
"""

from __future__ import annotations

from egraft.ir.core.operation import Operation, Value
from egraft.ir.erasure import erase_all
from egraft.ir.dialects.tf_types import is_control
from egraft.rewrite.structural.executor import forwards_each_value, may_be_dead

MANUAL = "_has_manual_control_dependencies"
_FORWARDERS = ("tf.IdentityN",)


def _body(op: Operation) -> list[Operation]:
    return op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []


def _controls(op: Operation) -> list[Value]:
    return [v for v in op.operands if is_control(v.type)]


def _node(user: Operation, graph: Operation) -> Operation:
    """The op of ``graph``'s block that holds ``user`` (itself, or the island around it)."""
    while user.parent_op is not graph:
        user = user.parent_op  # type: ignore[assignment]
    return user


def _manual(node: Operation) -> bool:
    return any(inner.attr(MANUAL) is not None and getattr(inner.attr(MANUAL), "value", True)
               for inner in _body(node))


def _cheap(ins: int, outs: int) -> bool:
    """Rewiring ``ins`` control inputs to ``outs`` users adds no more edges than it removes."""
    return ins <= 1 or outs <= 1 or ins * outs <= ins + outs


class _Rewiring:
    """The control edges of one graph's removed nodes, rewired once at the end: a node waiting
    on many removed nodes (a Keras model's NoOp waits on every weight's Identity) would
    otherwise have its operand list rebuilt once per removal, quadratic in its size."""

    def __init__(self) -> None:
        self.instead: dict[Value, list[Value]] = {}     # a removed node's control -> what to wait on
        self.added: dict[Operation, list[Value]] = {}   # node -> control operands it also waits on
        self.removed: list[Operation] = []

    def remove(self, island: Operation, waits: list[Value]) -> None:
        self.instead[island.results[-1]] = waits
        self.removed.append(island)

    def resolve(self, value: Value) -> list[Value]:
        """What waiting on ``value`` means once every removal is done (a removed node may wait
        on another removed node: followed with a stack, each token resolved once)."""
        memo = self._memo
        stack = [value]
        while stack:
            top = stack[-1]
            if top in memo or top not in self.instead:
                memo.setdefault(top, [top])
                stack.pop()
                continue
            pending = [w for w in self.instead[top] if w not in memo]
            if pending:
                stack.extend(pending)
                continue
            memo[top] = list(dict.fromkeys(x for w in self.instead[top] for x in memo[w]))
            stack.pop()
        return memo[value]

    def apply(self) -> None:
        self._memo: dict[Value, list[Value]] = {}
        gone = set(self.removed)
        users = dict.fromkeys(u for v in self.instead for u in v.uses if u not in gone)
        users.update((u, None) for u in self.added if u not in gone)
        for node in users:
            data = [v for v in node.operands if not is_control(v.type)]
            controls = [v for v in node.operands if is_control(v.type)] + self.added.get(node, [])
            node.set_operands(data + list(dict.fromkeys(x for c in controls for x in self.resolve(c))))
        erase_all(self.removed)


def _forward_identity_n(island: Operation) -> bool:
    """``island { %r = tf.IdentityN(%a...) ; yield %r }`` yields ``%a...`` directly."""
    body = _body(island)
    if len(body) != 2 or body[0].name not in _FORWARDERS or body[0].attr(MANUAL) is not None:
        return False
    inner, yield_op = body
    if any(v.uses != [yield_op] * len(v.uses) for v in inner.results):
        return False
    for r, a in zip(inner.results, inner.operands):
        r.replace_all_uses_with(a)
    inner.erase()
    return True


def _forwarding(island: Operation, graph: Operation, fetch: Operation, rewiring: _Rewiring,
                dead: set[Operation]) -> bool:
    body = _body(island)
    if len(body) != 1 or not island.results[:-1]:
        return False
    yielded = list(body[0].operands)
    if not forwards_each_value(yielded, dead, graph):
        return False
    controls = _controls(island) + rewiring.added.get(island, [])  # and what a removed producer left it
    data_users = {_node(u, graph) for r in island.results[:-1] for u in r.uses}
    control_users = island.results[-1].users
    if fetch in data_users or any(u.name == "tf_executor.Merge" for u in data_users):
        return False
    producers = [v.owner_op for v in yielded if v.owner_op is not None]
    if control_users and any(p.name != "tf_executor.island" for p in producers):
        return False
    if controls and not _cheap(len(controls), len(data_users) + len(control_users)):
        return False
    for user in data_users if controls else ():
        rewiring.added.setdefault(user, []).extend(controls)
    for r, v in zip(island.results[:-1], yielded):
        r.replace_all_uses_with(v)
    rewiring.added.pop(island, None)
    rewiring.remove(island, controls + [p.results[-1] for p in dict.fromkeys(producers)])
    return True


def _noop(island: Operation, fetch: Operation, rewiring: _Rewiring) -> bool:
    body = _body(island)
    if len(body) != 2 or body[0].name != "tf.NoOp" or island.results[:-1]:
        return False
    users = island.results[-1].users
    controls = _controls(island)
    if fetch in users or not _cheap(len(controls), len(users)):
        return False
    rewiring.remove(island, controls)
    return True


def _one_op(island: Operation) -> bool:
    """An island of one op yielding only its results: reading one of them waits on all the island
    does. (The export writes each op of a coarsened island as a node of its own: a value of one
    of them says nothing about the others, an assignment next to the variable's handle say.)"""
    body = _body(island)
    return len(body) == 2 and all(v.owner_op is body[0] for v in body[1].operands)


def _redundant_controls(node: Operation, graph: Operation) -> bool:
    controls = _controls(node)
    if not controls or _manual(node):
        return False
    sources = {v.owner_op for v in node.operands if not is_control(v.type)}
    for inner in node.walk():
        if inner is not node:
            sources.update(v.owner_op for v in inner.operands if v.owner_op is not None
                           and v.owner_op.parent_op is graph)
    keep = [c for c in dict.fromkeys(controls)
            if not (c.owner_op is not None and c.owner_op.name == "tf_executor.island" and c.owner_op in sources
                    and _one_op(c.owner_op))]
    if len(keep) == len(controls):
        return False
    node.set_operands([v for v in node.operands if not is_control(v.type)] + keep)
    return True


def _graph(graph: Operation) -> int:
    ops = _body(graph)
    if not ops or ops[-1].name != "tf_executor.fetch":
        return 0
    fetch = ops[-1]
    done = 0
    rewiring = _Rewiring()
    dead = may_be_dead(graph)
    for node in list(ops[:-1]):
        if node.name != "tf_executor.island":
            continue
        if _forward_identity_n(node):
            done += 1
        if _forwarding(node, graph, fetch, rewiring, dead) or _noop(node, fetch, rewiring):
            done += 1
    rewiring.apply()
    for node in list(_body(graph)[:-1]):
        done += _redundant_controls(node, graph)
    return done


def _forward_inner_identity_n(root: Operation) -> int:
    """``IdentityN`` among other ops of an island (after coarsening) or of a function body (a
    graph of one island, inlined): its users take its operands. The ops of one island run and
    are dead together, and the island keeps capturing what the IdentityN read (the pass pins
    captures), so nothing changes but the node."""
    found = [op for op in root.walk() if op.name in _FORWARDERS and op.attr(MANUAL) is None
             and op.parent is not None and not (op.parent_op is not None and op.parent_op.name == "tf_executor.island"
                                                and len(op.parent.ops) == 2)]
    for op in found:
        for r, a in zip(op.results, op.operands):
            r.replace_all_uses_with(a)
    erase_all(found)
    return len(found)


def optimize_dependencies(root: Operation) -> int:
    """Apply the rewrites above to every tf_executor graph under ``root``; how many applied."""
    return _forward_inner_identity_n(root) + sum(_graph(g) for g in [op for op in root.walk()
                                                                     if op.name == "tf_executor.graph"])
