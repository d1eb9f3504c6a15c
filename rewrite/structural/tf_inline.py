"""Function inlining on the tf_executor form, as Grappler's function optimizer does it.

A GraphDef's library functions are ``func.func private`` with executor bodies
(``passes/tf/tfg_to_executor.py``). :func:`inline_calls` replaces a call by the callee's
body, then writes the constant operands of the If/Case/While that stay into their functions
where they fold (:func:`push_constants`); :func:`remove_unused_functions` then drops the
private functions nothing refers to.

**What is a call.** ``tf.PartitionedCall`` / ``tf.StatefulPartitionedCall`` (``f = @g``),
a node whose op is a library function (``tf.g``), and a functional ``tf.If`` /
``tf.StatelessIf`` / ``tf.Case`` / ``tf.StatelessCase`` whose predicate or branch index is
a ``tf.Const`` (directly or through an island's yield), or whose branches are all one
function: it is a call to the branch taken (TensorFlow issue #47256). An If takes its then branch when the predicate is true: a
boolean, a nonzero number, or a non-scalar tensor with elements (TF's rule); a Case index
outside ``[0, n)`` takes the last branch (the default), as TF's Case kernel does.

**When a call is inlined** (Grappler's ``InlineFunctionCalls`` and its validations, as
stated here; TF's code was read, not copied):

* the callee is a function of the module with a body (a call whose ``f`` carries attributes
  of its own is an instantiation of a generic function: kept);
* it is not recursive: the callee does not reach itself through the symbols its body
  refers to;
* neither the callee (``tf._noinline``) nor the call (``_noinline``) says ``_noinline``, and
  neither is marked for XLA (``_XlaMustCompile``, ``_tpu_replicate``, ``_xla_compile_id``);
* the callee's graph has no v1 control flow (Switch, Merge, loop frames): such a body may
  produce dead outputs, which Grappler refuses too;
* a callee with side effects (a ``tf`` op that is not effect-free, but for variable reads
  and the legacy random ops that Grappler exempts too, or a call into such a function) is inlined only when the call's control token has users, as Grappler's
  ``ValidateSideEffectsExecution`` demands (otherwise nothing observes the effects and the
  pruner would drop them), and every stateful op of its graph reaches what it returns
  (data or control results);
* a public function (a SavedModel's; it is kept whatever happens) is inlined into the
  graph (``@main``) only: a copy in another function, such as a signature wrapper that
  calls it, would only duplicate a body that stays (a Keras SavedModel's model body existed
  three times);
* the graph holding the call has no v1 control flow either: an inlined constant without
  operands would otherwise leave the loop frame the call ran in (Grappler adds a
  frame-forwarding edge; egraft keeps such calls).

**How.** Two forms, both sound under the executor's semantics:

* *splice*: when the callee has no effects, or its body has no control edges (no island
  with control operands, no control results; or no graph at all, the canonicalization
  having inlined its one island), its ops are cloned into the call's island (or function
  body) right before the call, arguments mapped to the call's operands. Ops of one island
  have no order among them but data; in a body without v1 control flow (nothing dead) and
  without effects, control edges order nothing observable.
* *islands*: otherwise the callee's islands are cloned into the caller's graph before the
  call's island, each also waiting on the call island's control operands (Grappler's
  ``input_control_node``); the call island waits on the callee's control results and on the
  islands of its data results, so whoever waited on the call's control token still waits
  for all the call did (Grappler's ``output_control_node`` waits on the control results
  only; waiting on more is sound). The call's operands must then be produced
  outside its island (they are after a GraphDef import).

A folded If/Case keeps the dependence on its predicate: the island producing it becomes a
control operand of the call's island (the predicate could be dead), unless it is the same
island. Inlined ops are named ``<call node>/<callee node>``, made unique in the function.
Results whose types differ from the call's go through a ``tf.Identity`` of the call's type.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from egraft.ir import Operation, Value
from egraft.ir.core import attributes as A
from egraft.ir.dialects.tf_types import is_control
from egraft.ir.effects import has_side_effects
from egraft.ir.graphdef.convert_attrs import parse_func_attr
from egraft.ir.graphdef.convert_types import ConversionError

CALLS = ("tf.PartitionedCall", "tf.StatefulPartitionedCall")
IFS = ("tf.If", "tf.StatelessIf")
CASES = ("tf.Case", "tf.StatelessCase")
#: Ops whose effects are those of the functions they call.
_CALL_LIKE = (*CALLS, *IFS, *CASES, "tf.While", "tf.StatelessWhile")
#: Attributes that keep a call or a function from being inlined when set (true or present).
NOINLINE = ("_noinline", "_XlaMustCompile")
XLA_MARKS = ("_tpu_replicate", "_xla_compile_id")
#: Stateful ops Grappler does not require to run after inlining (its
#: IsExemptFromSideEffectsExecutionValidation): reads of variables and the legacy random ops,
#: which have no observable effect to lose. Everything else stateful counts as an effect.
EXEMPT = frozenset({"tf.ReadVariableOp", "tf.RandomUniform", "tf.RandomUniformInt", "tf.RandomStandardNormal",
                    "tf.ParameterizedTruncatedNormal", "tf.TruncatedNormal", "tf.RandomShuffle", "tf.Multinomial",
                    "tf.RandomGamma", "tf.RandomPoisson", "tf.RandomPoissonV2"})
#: Executor ops that are not v1 control flow.
_PLAIN = ("tf_executor.island", "tf_executor.fetch", "tf_executor.ControlTrigger")
#: Ops of the executor form that have no effect of their own (structure).
_STRUCTURE = ("tf_executor.graph", "tf_executor.island", "tf_executor.yield", "tf_executor.fetch", "func.return")


def symbol_name(attr: A.Attribute | None) -> str | None:
    """The function an attribute names: ``@g``, or ``#tf_type.func<@g, {}>`` without attributes."""
    if isinstance(attr, A.SymbolRefAttr) and not attr.nested:
        return attr.root
    if isinstance(attr, A.DialectAttr) and attr.dialect == "tf_type" and attr.mnemonic == "func":
        try:
            name, attrs = parse_func_attr(attr)
        except ConversionError:
            return None
        return name if not attrs.entries else None
    return None


def referenced(attr: A.Attribute) -> Iterator[str]:
    """Every function name ``attr`` refers to, attributes of a ``#tf_type.func`` included."""
    if isinstance(attr, A.SymbolRefAttr):
        yield attr.root
    elif isinstance(attr, A.ArrayAttr):
        for a in attr:
            yield from referenced(a)
    elif isinstance(attr, A.DictionaryAttr):
        for _, a in attr.entries:
            yield from referenced(a)
    elif isinstance(attr, A.DialectAttr) and attr.dialect == "tf_type" and attr.mnemonic == "func":
        try:
            name, attrs = parse_func_attr(attr)
        except ConversionError:
            return
        yield name
        yield from referenced(attrs)


def functions(top: Operation) -> dict[str, Operation]:
    """The module's functions by name."""
    out = {}
    for op in top.regions[0].blocks[0]:
        name = op.attr("sym_name")
        if op.name == "func.func" and isinstance(name, A.StringAttr):
            out[name.value] = op
    return out


def _refs_of(func: Operation, funcs: dict[str, Operation]) -> set[str]:
    """Functions of ``funcs`` that ``func`` refers to: in its ops' attributes, its own
    attributes (a gradient) and ops named after a function (direct calls)."""
    found: set[str] = set()
    for key, value in func.all_attributes().items():
        if key != "sym_name":
            found.update(referenced(value))
    for op in func.walk():
        if op is func:
            continue
        if op.name.startswith("tf.") and op.name[3:] in funcs:
            found.add(op.name[3:])
        for value in op.all_attributes().values():
            found.update(referenced(value))
    return found & funcs.keys()


def is_public(func: Operation) -> bool:
    """Whether ``func`` must keep its name and signature: not private, or exported by a
    SavedModel (``tf_saved_model.exported_names``, set by the SavedModel reader)."""
    visibility = func.attr("sym_visibility")
    return not (isinstance(visibility, A.StringAttr) and visibility.value == "private") \
        or func.attr("tf_saved_model.exported_names") is not None


def remove_unused_functions(top: Operation) -> int:
    """Erase the private functions no public function reaches; returns how many."""
    funcs = functions(top)
    if len(funcs) < 2:
        return 0
    refs = {name: _refs_of(f, funcs) for name, f in funcs.items()}
    live = [n for n, f in funcs.items() if is_public(f)]
    seen = set(live)
    while live:
        for n in refs[live.pop()] - seen:
            seen.add(n)
            live.append(n)
    dead = [f for n, f in funcs.items() if n not in seen]
    for f in dead:
        f.erase()
    return len(dead)


def _marked(op: Operation, prefix: str = "") -> bool:
    for key in NOINLINE:
        attr = op.attr(prefix + key)
        if attr is not None and _attr_true(attr):
            return True
    return any(op.attr(prefix + key) is not None for key in XLA_MARKS)


def _attr_true(attr: A.Attribute) -> bool:
    value = getattr(attr, "value", True)
    return bool(value)


def _constant(v: Value) -> tuple[object, Operation | None] | None:
    """The numpy value of ``v`` when a ``tf.Const`` makes it (through an island's yield),
    and the island it comes out of (None when read inside the same region)."""
    owner = v.owner_op
    via = None
    if owner is not None and owner.name == "tf_executor.island":
        index = owner.results.index(v)
        block = owner.regions[0].blocks[0]
        if block.last is None or index >= len(block.last.operands):
            return None
        via, v = owner, block.last.operands[index]
        owner = v.owner_op
    if owner is None or owner.name != "tf.Const":
        return None
    value = owner.attr("value")
    if not isinstance(value, A.DenseElementsAttr):
        return None
    try:
        return value.to_numpy(), via
    except Exception:  # noqa: BLE001 - a payload numpy cannot read (strings): not folded
        return None


def branch_taken(op: Operation) -> tuple[str, Operation | None] | None:
    """For an If/Case whose predicate (index) is constant, or whose branches are all one
    function: the branch taken and the island the predicate comes out of (None if inside the
    same region)."""
    if not op.operands:
        return None
    found = _constant(op.operands[0])
    if found is None:
        same = {symbol_name(b) for b in _branches(op)}
        owner = op.operands[0].owner_op
        via = owner if owner is not None and owner.name == "tf_executor.island" else None
        return (same.pop(), via) if len(same) == 1 and None not in same else None
    value, via = found
    if op.name in IFS:
        if value.dtype.kind not in "biuf":  # type: ignore[attr-defined]
            return None
        taken = bool(value.reshape(())) if value.ndim == 0 else value.size > 0  # type: ignore[attr-defined]
        name = symbol_name(op.attr("then_branch" if taken else "else_branch"))
    else:
        branches = op.attr("branches")
        if not isinstance(branches, A.ArrayAttr) or not len(branches) or value.ndim != 0 \
                or value.dtype.kind not in "iu":  # type: ignore[attr-defined]
            return None
        index = int(value.reshape(()))  # type: ignore[attr-defined]
        chosen = list(branches)[index if 0 <= index < len(branches) else -1]
        name = symbol_name(chosen)
    return (name, via) if name is not None else None


def _branches(op: Operation) -> list[A.Attribute]:
    if op.name in IFS:
        return [a for a in (op.attr("then_branch"), op.attr("else_branch")) if a is not None]
    branches = op.attr("branches")
    return list(branches) if isinstance(branches, A.ArrayAttr) else []


class Inliner:
    """Inlines the calls of one module (see the module docstring for when and how)."""

    def __init__(self, top: Operation) -> None:
        self.top = top
        self.funcs = functions(top)
        self.refs = {name: _refs_of(f, self.funcs) for name, f in self.funcs.items()}
        self._pure: dict[str, bool] = {}
        self._names: dict[Operation, set[str]] = {}  # node names per graph (or function body)
        self.inlined = 0
        self.folded = 0

    # ---------------------------------------------------------------- analyses

    def recursive(self, name: str) -> bool:
        stack, seen = list(self.refs.get(name, ())), set()
        while stack:
            n = stack.pop()
            if n == name:
                return True
            if n not in seen:
                seen.add(n)
                stack.extend(self.refs.get(n, ()))
        return False

    def pure(self, name: str, visiting: frozenset[str] = frozenset()) -> bool:
        """Whether function ``name`` has no side effects (calls into pure functions allowed)."""
        if name in self._pure:
            return self._pure[name]
        func = self.funcs.get(name)
        if func is None or name in visiting:
            return False
        result = all(not self._effectful(op, visiting | {name}) for op in func.walk() if op is not func)
        self._pure[name] = result
        return result

    def _effectful(self, op: Operation, visiting: frozenset[str]) -> bool:
        """Whether ``op`` has effects: a call (If, Case, While) has its callees' effects."""
        if op.name in _STRUCTURE or op.name.startswith("tf_executor.") or op.name in EXEMPT:
            return False
        if op.name in _CALL_LIKE or op.name[3:] in self.funcs:
            called = [n for v in op.all_attributes().values() for n in referenced(v)]
            if op.name[3:] in self.funcs:
                called.append(op.name[3:])
            return not all(self.pure(n, visiting) for n in called)
        return has_side_effects(op)

    def callee(self, op: Operation) -> tuple[str, Operation | None] | None:
        """The function ``op`` calls (a constant If/Case: the branch taken) and the island its
        predicate comes out of."""
        if op.name in CALLS:
            name = symbol_name(op.attr("f"))
            return (name, None) if name is not None else None
        if op.name in IFS or op.name in CASES:
            return branch_taken(op)
        if op.name.startswith("tf.") and op.name[3:] in self.funcs:
            return op.name[3:], None
        return None

    # ---------------------------------------------------------------- driver

    def run(self, rounds: int = 16) -> int:
        """Inline until no call is left that may be, callees first (a round may expose calls
        nested in folded branches)."""
        for _ in range(rounds):
            changed = False
            for func in self._callees_first():
                if func.parent is None:
                    continue
                for op in [o for o in func.walk() if o.name.startswith("tf.") and o is not func]:
                    if op.parent is not None and self.try_inline(op):
                        changed = True
            if not changed:
                break
        return self.inlined

    def _callees_first(self) -> list[Operation]:
        """The functions, each after those it refers to (cycles broken anywhere): a body is
        inlined once its own calls are."""
        order: list[Operation] = []
        seen: set[str] = set()
        for root in self.funcs:
            stack = [(root, iter(sorted(self.refs.get(root, ()))))]
            seen.add(root)
            while stack:
                name, children = stack[-1]
                child = next(children, None)
                if child is None:
                    stack.pop()
                    order.append(self.funcs[name])
                elif child not in seen:
                    seen.add(child)
                    stack.append((child, iter(sorted(self.refs.get(child, ())))))
        return order

    def try_inline(self, call: Operation) -> bool:
        found = self.callee(call)
        if found is None:
            return False
        name, via = found
        func = self.funcs.get(name)
        if func is None or not func.regions or not func.regions[0].blocks:
            return False
        if _marked(call) or _marked(func, "tf.") or self.recursive(name):
            return False
        if is_public(func) and not _is_graph(_enclosing_function(call)):
            return False  # it stays anyway: a copy in another function only duplicates it
        body = func.regions[0].blocks[0]
        graphs = [o for o in body if o.name == "tf_executor.graph"]
        inner = graphs[0].regions[0].blocks[0].ops if graphs else []
        if any(o.name not in _PLAIN for o in inner):
            return False  # v1 control flow inside: may produce dead outputs
        parent = call.parent_op
        island = parent if parent is not None and parent.name == "tf_executor.island" else None
        graph = island.parent_op if island is not None else None
        if island is None and (parent is None or parent.name != "func.func"):
            return False
        if graph is not None and any(o.name not in _PLAIN for o in graph.regions[0].blocks[0]):
            return False  # the call may run in a loop frame
        pure = self.pure(name)
        if not pure and (island is None or not island.results[-1].uses or not _effects_returned(inner)):
            return False
        splice = not graphs or pure or (not any(_controls(o) for o in inner)
                                and not _controls(inner[-1]) and not any(o.name == "tf_executor.ControlTrigger"
                                                                         for o in inner))
        args = list(call.operands[1:] if call.name in IFS or call.name in CASES else call.operands)
        if len(args) != len(body.args):
            return False
        if not splice:
            if island is None or any(_inside(v, island) for v in args):
                return False
        if via is not None and island is not None and via is not island:
            _add_controls(island, [via.results[-1]])
        scope = parent if island is None else graph
        if scope not in self._names:
            self._names[scope] = _names_in(scope)  # type: ignore[arg-type]
        names = self._names[scope]  # type: ignore[index]
        prefix = _name(call) or name
        if splice:
            results = self._splice(call, func, args, names, prefix)
        else:
            results = self._islands(call, island, graph, func, args, names, prefix)  # type: ignore[arg-type]
        self._replace(call, results)
        if call.name in IFS or call.name in CASES:
            self.folded += 1
        self.inlined += 1
        return True

    # ---------------------------------------------------------------- rewriting

    def _splice(self, call: Operation, func: Operation, args: list[Value], names: set[str],
                prefix: str) -> list[Value]:
        body = func.regions[0].blocks[0]
        mapping: dict[Value, Value] = dict(zip(body.args, args))
        block = call.parent
        assert block is not None
        graphs = [o for o in body if o.name == "tf_executor.graph"]
        if not graphs:
            for op in body.ops[:-1]:
                block.insert_before(call, self._copy(op, mapping, names, prefix, call))
            return [mapping.get(v, v) for v in body.last.operands]  # type: ignore[union-attr]
        graph = graphs[0]
        inner = graph.regions[0].blocks[0].ops
        for island in inner[:-1]:
            if island.name != "tf_executor.island":
                continue  # a ControlTrigger: only orders, and a spliced body keeps no order
            ops = island.regions[0].blocks[0].ops
            for op in ops[:-1]:
                block.insert_before(call, self._copy(op, mapping, names, prefix, call))
            for r, v in zip(island.results, ops[-1].operands):
                mapping[r] = mapping.get(v, v)
        fetched = {r: mapping.get(v, v) for r, v in zip(graph.results, inner[-1].operands)}
        return [fetched.get(v, mapping.get(v, v)) for v in body.last.operands]  # type: ignore[union-attr]

    def _islands(self, call: Operation, island: Operation, graph: Operation, func: Operation,
                 args: list[Value], names: set[str], prefix: str) -> list[Value]:
        body = func.regions[0].blocks[0]
        mapping: dict[Value, Value] = dict(zip(body.args, args))
        block = island.parent
        assert block is not None
        waits = _controls(island)
        callee_graph = next(o for o in body if o.name == "tf_executor.graph")
        inner = callee_graph.regions[0].blocks[0].ops
        for op in inner[:-1]:
            new = op.clone(mapping)
            for nested in new.walk():
                if nested is not new and nested.name.startswith("tf."):
                    _rename(nested, names, prefix, call)
            block.insert_before(island, new)
            _add_controls(new, waits)
        fetch = inner[-1]
        returned = [mapping.get(v, v) for v in fetch.operands]
        _add_controls(island, [v if is_control(v.type) else v.owner_op.results[-1] for v in returned
                               if is_control(v.type) or (v.owner_op is not None and v.owner_op.parent is block)])
        fetched = {r: mapping.get(v, v) for r, v in
                   zip(callee_graph.results, [v for v in fetch.operands if not is_control(v.type)])}
        return [fetched.get(v, mapping.get(v, v)) for v in body.last.operands]  # type: ignore[union-attr]

    def _copy(self, op: Operation, mapping: dict[Value, Value], names: set[str], prefix: str,
              call: Operation) -> Operation:
        new = op.clone(mapping)
        for nested in new.walk():
            if nested.name.startswith("tf."):
                _rename(nested, names, prefix, call)
        return new

    def _replace(self, call: Operation, results: list[Value]) -> None:
        block = call.parent
        assert block is not None
        for old, new in zip(call.results, results):
            if new.type != old.type:
                identity = Operation.create("tf.Identity", [new], [old.type],
                                            {"T": A.TypeAttr(_element(old.type)), "device": _device(call)})
                block.insert_before(call, identity)
                new = identity.results[0]
            old.replace_all_uses_with(new)
        call.erase()


def _enclosing_function(op: Operation) -> Operation | None:
    parent = op.parent_op
    while parent is not None and parent.name != "func.func":
        parent = parent.parent_op
    return parent


def _is_graph(func: Operation | None) -> bool:
    """Whether ``func`` is the GraphDef's graph (``@main``, with its feeds and fetches)."""
    return func is not None and (func.attr("tf.entry_function") is not None
                                 or func.attr("sym_name") == A.StringAttr("main"))


def _element(t: object) -> object:
    return getattr(t, "element_type", t)


def _device(call: Operation) -> A.Attribute:
    device = call.attr("device")
    return device if device is not None else A.StringAttr("")


def _name(op: Operation) -> str | None:
    name = op.attr("_mlir_name")
    return name.value if isinstance(name, A.StringAttr) and isinstance(name.value, str) else None


def _names_in(scope: Operation) -> set[str]:
    return {n for op in scope.walk() if (n := _name(op)) is not None}


def _rename(op: Operation, names: set[str], prefix: str, call: Operation) -> None:
    """``op`` (a clone) named ``<prefix>/<its name>``, unique among ``names``; an empty
    device takes the call's."""
    base = f"{prefix}/{_name(op) or op.name[3:]}"
    name, k = base, 0
    while name in names:
        k += 1
        name = f"{base}_{k}"
    names.add(name)
    op.set_attr("_mlir_name", A.StringAttr(name))
    device = op.attr("device")
    if (device is None or (isinstance(device, A.StringAttr) and not device.value)) and call.attr("device") is not None:
        op.set_attr("device", _device(call))


def _controls(op: Operation) -> list[Value]:
    return [v for v in op.operands if is_control(v.type)]


def _add_controls(op: Operation, extra: Iterable[Value]) -> None:
    operands = list(op.operands)
    for v in extra:
        if v not in operands:
            operands.append(v)
    op.set_operands(operands)


def _inside(v: Value, island: Operation) -> bool:
    owner = v.owner_op
    return owner is not None and owner is not island and island.is_ancestor(owner)


def _effects_returned(inner: list[Operation]) -> bool:
    """Whether every effectful op of the callee's graph reaches its fetch (data or control)."""
    if not inner:
        return True
    reached: set[Operation] = set()
    stack = [inner[-1]]
    while stack:
        op = stack.pop()
        for nested in op.walk():
            for v in nested.operands:
                owner = v.owner_op
                while owner is not None and owner.parent_op is not None and owner.parent_op.name != "tf_executor.graph":
                    owner = owner.parent_op
                if owner is not None and owner not in reached:
                    reached.add(owner)
                    stack.append(owner)
    return all(o in reached for o in inner[:-1]
               if any(n.name.startswith("tf.") and n.name not in EXEMPT and has_side_effects(n) for n in o.walk()))


def inline_calls(top: Operation) -> tuple[int, int]:
    """Inline what may be in module ``top``; returns (calls inlined, of which folded If/Case)."""
    if len(functions(top)) < 2:
        return 0, 0  # nothing to call (a GraphDef without a library): no walk
    inliner = Inliner(top)
    inliner.run()
    push_constants(top)
    return inliner.inlined, inliner.folded




#: The largest constant pushed into a branch or loop body when the caller keeps using it too.
PUSH_ELEMENTS = 4096


def push_constants(top: Operation) -> int:
    """Grappler's function specialization, its constant part: a constant operand of an
    If/Case (or a While's loop-invariant one: the body returns that argument unchanged) is
    written into each branch (body and cond) in place of the argument, so the families fold
    with it. Only into private functions referenced once in the module (one caller: the
    function is the caller's own), in graphs without v1 control flow, and only where an op
    of the function then computes from constants alone (it will fold); the signature stays
    (the argument becomes unused). A constant the caller also uses elsewhere is copied only
    up to :data:`PUSH_ELEMENTS` elements. Returns how many arguments were replaced."""
    funcs = functions(top)
    if len(funcs) < 2:
        return 0
    uses: dict[str, int] = {}
    for op in top.walk():
        for key, value in op.all_attributes().items():
            if op.name == "func.func" and key == "sym_name":
                continue  # its own name; another function's attribute (a gradient) is a use
            for name in referenced(value):
                uses[name] = uses.get(name, 0) + 1
        if op.name.startswith("tf.") and op.name[3:] in funcs:
            uses[op.name[3:]] = uses.get(op.name[3:], 0) + 1
    done = 0
    for op in list(top.walk()):
        if op.name in IFS or op.name in CASES:
            callees, first, invariant = [symbol_name(a) for a in _branches(op)], 1, None
        elif op.name in ("tf.While", "tf.StatelessWhile"):
            callees, first = [symbol_name(op.attr("cond")), symbol_name(op.attr("body"))], 0
            invariant = callees[1]
        else:
            continue
        graph = op.parent_op.parent_op if op.parent_op is not None and op.parent_op.name == "tf_executor.island" \
            else None
        if graph is not None and any(o.name not in _PLAIN for o in graph.regions[0].blocks[0]):
            continue
        targets = [funcs.get(n) for n in callees if n is not None]
        if len(targets) != len(callees) or len(set(callees)) != len(callees) or any(
                f is None or is_public(f) or uses.get(n, 0) != 1 or not f.regions[0].blocks
                for f, n in zip(targets, callees)):
            continue
        pushable = {}
        for index, value in enumerate(op.operands[first:]):
            const = _const_op(value)
            if const is None or (len(value.uses) > 1 and _elements(const) > PUSH_ELEMENTS):
                continue
            if invariant is not None and not _returns_argument(funcs[invariant], index):
                continue
            pushable[index] = const
        for func in targets:
            args = func.regions[0].blocks[0].args  # type: ignore[union-attr]
            known = {args[i] for i in pushable if i < len(args)}
            for index, const in pushable.items():
                if index < len(args) and any(_folds_with(u, known) for u in args[index].uses):
                    done += _replace_argument(func, index, const)  # type: ignore[arg-type]
    return done


def _folds_with(user: Operation, known: set[Value]) -> bool:
    """Whether ``user`` (a tf op) computes from constants only once the arguments ``known``
    are: only then does a pushed constant pay (a copy that folds nothing is only a bigger
    GraphDef: a MatMul's weight, say)."""
    if not user.name.startswith("tf.") or user.name in _CALL_LIKE or has_side_effects(user):
        return False
    if not all(v in known or _const_op(v) is not None for v in user.operands if not is_control(v.type)):
        return False
    if user.name in _FORWARDING:  # folds to its operand: it pays only if what reads it folds
        results = set(user.results)
        return any(_folds_with(u, known | results) for r in user.results for u in _readers(r) if u is not user)
    return True


#: Ops that forward their operand: a constant through them is still the same constant.
_FORWARDING = ("tf.Identity", "tf.IdentityN", "tf.Snapshot", "tf.StopGradient")


def _readers(v: Value) -> list[Operation]:
    """The ops reading ``v``, through the yield of the island it is computed in."""
    out = []
    for u in v.uses:
        if u.name == "tf_executor.yield" and u.parent_op is not None:
            island = u.parent_op
            out += [w for i, y in enumerate(u.operands) if y is v for w in island.results[i].uses]
        else:
            out.append(u)
    return out


def _const_op(v: Value) -> Operation | None:
    owner = v.owner_op
    if owner is not None and owner.name == "tf_executor.island":
        if owner.operands:  # waits on something: the constant could be dead, or in a frame
            return None
        v = owner.regions[0].blocks[0].last.operands[owner.results.index(v)]  # type: ignore[union-attr]
        owner = v.owner_op
    return owner if owner is not None and owner.name == "tf.Const" and not owner.operands else None


def _elements(const: Operation) -> int:
    value = const.attr("value")
    shape = getattr(getattr(value, "type", None), "shape", None)  # the payload's: results are often unranked
    if shape is None:
        return PUSH_ELEMENTS + 1
    n = 1
    for d in shape:
        n *= max(d, 0)
    return n


def _returns_argument(func: Operation, index: int) -> bool:
    """Whether ``func`` returns its argument ``index`` unchanged at position ``index``."""
    body = func.regions[0].blocks[0]
    if index >= len(body.args):
        return False
    out = list(body.last.operands)  # type: ignore[union-attr]
    graphs = [o for o in body if o.name == "tf_executor.graph"]
    if graphs:
        fetch = graphs[0].regions[0].blocks[0].last
        out = [dict(zip(graphs[0].results, fetch.operands)).get(v, v) for v in out]  # type: ignore[union-attr]
    return index < len(out) and out[index] is body.args[index]


def _replace_argument(func: Operation, index: int, const: Operation) -> int:
    """Uses of ``func``'s argument ``index`` by ops (not by yields, fetches and returns, which
    keep the argument's type) read a copy of ``const`` instead; 1 if any did."""
    from egraft.ir import Block, Region

    body = func.regions[0].blocks[0]
    if index >= len(body.args):
        return 0
    arg = body.args[index]
    users = [u for u in arg.uses if u.name not in ("tf_executor.yield", "tf_executor.fetch", "func.return")
             and not u.name.startswith("tf_executor.")]
    if not users:
        return 0
    copy = const.clone()
    copy.set_attr("_mlir_name", A.StringAttr(f"{_name(const) or 'Const'}/pushed_{index}"))
    graphs = [o for o in body if o.name == "tf_executor.graph"]
    if graphs:
        block = Block()
        block.append(copy)
        block.append(Operation.create("tf_executor.yield", copy.results))
        island = Operation.create("tf_executor.island", (), [copy.results[0].type, _control_type()],
                                  regions=[Region(blocks=[block])])
        graphs[0].regions[0].blocks[0].prepend(island)
        new = island.results[0]
    else:
        body.prepend(copy)
        new = copy.results[0]
    arg.replace_uses_where(new, lambda user: user not in users)
    return 1


def _control_type():
    from egraft.ir.dialects.tf_types import CONTROL

    return CONTROL
