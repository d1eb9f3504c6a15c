"""`inline`: MLIR's inliner for `func.call`, with the graybox RFC's wrapping inside affine code.

Every `func.call` whose callee is a `func.func` with a body, resolved through the
symbol tables (so in the same module), is replaced by the callee's body, as MLIR's
inliner does; private functions that have no use afterwards are erased (as MLIR erases
dead call-graph nodes).
What the body becomes depends on where the call is:

* **At the top level of an affine scope** (directly in a function's or a graybox's
  blocks): the body is spliced in place (one block: its ops before the call, the
  `return` operands replacing the call's results; several blocks: the caller's block
  is split after the call and the callee's blocks go in between, each `return`
  becoming a branch to the continuation block whose arguments are the results).
  The callee's top-level values land at the top level of the caller's scope, where
  they are symbols as they were in the callee, so nothing affine is lost.
* **Nested in affine code** (an `affine.for`/`affine.if`/`affine.parallel` of the
  call's scope), or nested in any op with a callee that has affine ops: a symbol of
  the callee (its arguments, its top-level values) could stop being one (loop-local
  values are not symbols of the function's scope).  As the RFC proposes ("the inliner can simply inline functions
  by putting the callee inside an affine graybox"), the body is wrapped in an
  `affine.graybox` instead (the note's §1.4 rule): the call's memref operands,
  deduplicated, become the graybox's operands and its region's arguments replace the
  callee's memref parameters; other parameters are replaced by the call's operands
  directly (a graybox captures non-memrefs implicitly, and values from above are
  symbols inside it); `return` stays the terminator and the graybox's results
  replace the call's.  Memrefs the callee allocates stay inside.  Multi-block
  callees are fine (a graybox may hold a CFG).  The wrapper is valid IR, as the note
  says, because the callee's symbols are either at the graybox's top level or dominate
  it — once a `memref.dim` operand is rebuilt inside (below), a case the note misses.
  Graybox elimination then removes the wrappers whose bodies are affine-valid in
  the caller's scope (see "Wrappers" below), which is upstream's
  `remainsLegalAfterInline` check with a fallback instead of a refusal.
* **Nested elsewhere** (outside affine code, e.g. in a `tf_executor.island`), callee
  without affine ops: spliced in place when it has one block (nothing affine can
  break); a multi-block callee is not inlined there, as MLIR refuses to inline a CFG
  into a single-block region.

Refused, as in MLIR: calls into the caller's own call-graph SCC (recursion, direct
or mutual), calls marked `no_inline`, calls to declarations, calls whose operand or
result types differ from the callee's signature.  One value quirk needs care: a call
operand bound to an index parameter may be no symbol at the inlined body's place
although it dominates it (mirroring MLIR's `isValidSymbol`, a `memref.dim` of a
loop-local memref is not a symbol inside a graybox), and the callee may use the
parameter as a symbol.  In a wrapper, such a `dim` is rebuilt at the graybox's top
level from its captured memref (a symbol there: the note's "always verifier-legal"
holds); any other such operand, or one at a scope's top level, refuses the call.

Order: functions are processed callees first (the SCCs of the call graph in
reverse topological order, Tarjan's algorithm, iterative), each once, and only the
calls a function had when its turn came are inlined: a callee has already received
its own inlinable callees, and a call copied in from a callee (one into a recursive
SCC) is not inlined again, so inlining terminates.  Work is linear in the size of
the module plus the size of the inlined copies: symbol tables are built once, one walk
gives every call its symbol table and scope facts (no climb to the ancestors per call),
a function's calls are inlined last first (a block split moves only the ops up to the
next, already inlined, call), and the replaced calls are erased together.

Wrappers: graybox elimination (`rewrite/structural/graybox.py`, the note's E1/E2 with
symbol-to-dim demotion) runs on the wrappers each function received, right after that
function's calls are inlined and before it is itself inlined elsewhere, so callers copy
the simpler body; only wrappers whose bodies would break the caller's affine rules stay
(`keep-wrappers` keeps them all, to see what the inliner made).
`default-pipeline` names passes run on each function once its calls are inlined (and its
wrappers eliminated), before it is copied into its callers, as MLIR's inliner optimizes
each call-graph SCC.  Departures from MLIR: that pipeline is empty by default (MLIR's is
`canonicalize`), so `-inline` only inlines unless asked; it runs after inlining rather than
also before; and there is no cost model (every eligible call is inlined).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs

from egraft.ir import Operation
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Block, Region, Value
from egraft.ir.core.symbols import SymbolTable
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.affine_dims import GRAYBOX, is_valid_symbol
from egraft.ir.erasure import erase_all
from egraft.rewrite.structural.graybox import Deferred, eliminate_graybox

from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.manager.registry import Pass, PassContext, option, register_pass
from egraft.passes.transforms.symbol_dce import is_private, symbol_refs

_CFG_SCOPES = ("func.func", GRAYBOX)  # scope ops whose region may hold a CFG
_AFFINE_CONTROL = ("affine.for", "affine.if", "affine.parallel")


def _is_memref(t: T.Type) -> bool:
    return isinstance(t, (T.MemRefType, T.UnrankedMemRefType))


class _Symbols:
    """Symbol resolution with each symbol table built once (MLIR's SymbolTableCollection)."""

    def __init__(self) -> None:
        self._tables: dict[Operation, SymbolTable] = {}

    def resolve(self, table_op: Operation | None, ref: A.SymbolRefAttr) -> Operation | None:
        """`ref` seen from inside `table_op` (the user's nearest symbol table), then outwards."""
        while table_op is not None:
            found = self._table(table_op).lookup(ref.root)
            if found is not None:
                for name in ref.nested:
                    found = self._table(found).lookup(name) if found is not None else None
                return found
            table_op = SymbolTable.nearest_symbol_table(table_op)
        return None

    def _table(self, op: Operation) -> SymbolTable:
        table = self._tables.get(op)
        if table is None:
            table = self._tables[op] = SymbolTable(op)
        return table


def _body(func: Operation) -> Region | None:
    region = func.regions[0] if func.regions else None
    return region if region is not None and region.blocks else None


@attrs.frozen
class _Site:
    """Where an op stands, as the inliner needs it: its nearest symbol table, whether it is
    directly in the blocks of a function or graybox (the top level of its affine scope),
    and whether an affine loop or conditional of its scope encloses it."""

    table: Operation | None
    func: Operation | None  # the innermost enclosing function
    scope_top: bool
    affine_code: bool


def _sites(top: Operation) -> Iterator[tuple[Operation, _Site]]:
    """Every op nested in `top` with its site, found in one walk: no climb to the
    ancestors per op, which would be quadratic in the nesting depth."""
    stack = [(top, SymbolTable.nearest_symbol_table(top), None, False)]
    while stack:
        op, table, func, affine = stack.pop()
        if op.has_trait(Traits.SymbolTable):
            table = op
        if op.name == "func.func":
            func = op
        scope = op.has_trait(Traits.AffineScope)
        inner = _Site(table, func, scope and op.name in _CFG_SCOPES,
                      not scope and (affine or op.name in _AFFINE_CONTROL))
        nested = []
        for region in op.regions:
            for child in region.ops():
                yield child, inner
                if child.regions:
                    nested.append((child, table, func, inner.affine_code))
        stack.extend(reversed(nested))


def _sccs(funcs: list[Operation], callees: dict[Operation, list[Operation]]) -> dict[Operation, int]:
    """Each function's SCC number; numbers follow Tarjan's order: an SCC is numbered
    after every SCC it calls into (iterative, so deep call chains do not recurse)."""
    index: dict[Operation, int] = {}
    low: dict[Operation, int] = {}
    on_stack: set[Operation] = set()
    stack: list[Operation] = []
    scc: dict[Operation, int] = {}
    count = 0
    for root in funcs:
        if root in index:
            continue
        work = [(root, iter(callees[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            f, it = work[-1]
            g = next(it, None)
            if g is not None:
                if g not in index:
                    index[g] = low[g] = len(index)
                    stack.append(g)
                    on_stack.add(g)
                    work.append((g, iter(callees[g])))
                elif g in on_stack:
                    low[f] = min(low[f], index[g])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[f])
            if low[f] == index[f]:
                while True:
                    h = stack.pop()
                    on_stack.discard(h)
                    scc[h] = count
                    if h is f:
                        break
                count += 1
    return scc


class _Inliner:
    """One run of the pass over a module."""

    def __init__(self, module: Operation, eliminate: bool,
                 optimize: Callable[[Operation], None] | None = None) -> None:
        self.module = module
        self.eliminate = eliminate
        self.optimize = optimize
        self.symbols = _Symbols()
        self.functions: list[Operation] = []  # those with bodies
        # Replaced calls and returns, detached and erased together (`erase_all`): one by one,
        # each erasure would scan the use list of a value every call reads (quadratic).
        self.dead: list[Operation] = []
        self._has_affine: dict[Operation, bool] = {}

    def callee(self, call: Operation, site: _Site) -> Operation | None:
        ref = call.attr("callee")
        target = self.symbols.resolve(site.table, ref) if isinstance(ref, A.SymbolRefAttr) else None
        return target if target is not None and target.name == "func.func" and _body(target) else None

    def run(self) -> list[Operation]:
        """Inline every eligible call; returns the graybox wrappers made."""
        funcs = self.functions = [op for op in self.module.walk() if op.name == "func.func" and _body(op)]
        # A function changes only while its own calls are inlined, so its sites stay true.
        calls = {f: [(op, site) for op, site in _sites(f) if op.name == "func.call"] for f in funcs}
        callees = {f: list(dict.fromkeys(g for c, site in calls[f] if (g := self.callee(c, site)) is not None))
                   for f in funcs}
        scc = _sccs(funcs, callees)
        wrappers: list[Operation] = []
        for f in sorted(funcs, key=scc.__getitem__):
            made: list[Operation] = []
            # Last call first: a block split then moves only the ops up to the next call
            # (already inlined), not the rest of the block each time.
            for call, site in reversed(calls[f]):
                g = self.callee(call, site)
                if g is None or scc[g] == scc[f] or not _signature_matches(call, g):
                    continue
                how = self.how(g, site)
                if how is None:
                    continue
                done = self.inline(call, g, how)
                if isinstance(done, Operation):
                    made.append(done)
            erase_all(self.dead)
            self.dead.clear()
            # Before f is inlined anywhere, so its callers copy the simpler body.
            if self.eliminate:
                deferred = Deferred()
                made = [w for w in made if not eliminate_graybox(w, deferred)]
                deferred.flush()
            wrappers += made
            if self.optimize is not None:
                self.optimize(f)
        self.erase_dead_callees()
        return wrappers

    # ------------------------------------------------------------ one call

    def has_affine_ops(self, func: Operation) -> bool:
        """Does the callee bind values to affine dims or symbols (any affine op)?
        Asked after the callee itself was processed, so its inlined callees count."""
        known = self._has_affine.get(func)
        if known is None:
            known = self._has_affine[func] = any(op.name.startswith("affine.") for op in func.walk())
        return known

    def how(self, callee: Operation, site: _Site) -> str | None:
        """'splice', 'cfg' (split the caller's block), 'wrap' (graybox) or None (refused)."""
        single = len(_body(callee).blocks) == 1  # type: ignore[union-attr]
        if site.scope_top:
            return "splice" if single else "cfg"
        if self.has_affine_ops(callee) or site.affine_code:
            return "wrap"
        return "splice" if single else None

    def inline(self, call: Operation, callee: Operation, how: str) -> Operation | bool | None:
        """Replace `call` by `callee`'s body as `how` says: the graybox made, True, or
        None when a call operand is no symbol where the callee needs one."""
        affine = self.has_affine_ops(callee)
        if how == "wrap":
            return _wrap(call, callee, affine, self.dead)
        if affine and not _symbols_ok(call, callee, call.parent_region):  # type: ignore[arg-type]
            return None
        if how == "cfg":
            _splice_cfg(call, callee, self.dead)
        else:
            _splice_block(call, callee, self.dead)
        return True

    # ------------------------------------------------------------ callees left unused

    def erase_dead_callees(self) -> None:
        """Erase the private functions (with bodies) nothing refers to any more, also
        through other dead ones, as MLIR's inliner erases its dead call-graph nodes
        (a function's references to itself do not keep it)."""
        uses: dict[Operation, int] = {}
        refs_in: dict[Operation, list[Operation]] = {}
        for op, site in _sites(self.module):
            owner = site.func
            for ref in symbol_refs(op):
                table = op if op.has_trait(Traits.SymbolTable) else site.table
                target = self.symbols.resolve(table, ref)
                if target is None or target is owner:
                    continue
                uses[target] = uses.get(target, 0) + 1
                if owner is not None:
                    refs_in.setdefault(owner, []).append(target)
        candidates = {f for f in self.functions if is_private(f)}
        dead = [f for f in candidates if uses.get(f, 0) == 0]
        erased = set(dead)
        while dead:
            f = dead.pop()
            for target in refs_in.get(f, ()):
                uses[target] -= 1
                if uses[target] == 0 and target in candidates and target not in erased:
                    erased.add(target)
                    dead.append(target)
        erase_all(erased)


def _signature_matches(call: Operation, callee: Operation) -> bool:
    """Not `no_inline`, and the call's operand and result types are the callee's."""
    if call.attr("no_inline") is not None:
        return False
    ftype = callee.attr("function_type")
    inputs = [a.type for a in _body(callee).blocks[0].args]  # type: ignore[union-attr]
    results = list(ftype.value.results) if ftype is not None else []  # type: ignore[attr-defined]
    return inputs == call.operand_types and results == call.result_types


def _symbols_ok(call: Operation, callee: Operation, region: Region) -> bool:
    """Does every call operand bound to a used index parameter stay a symbol in `region`?"""
    entry = _body(callee).blocks[0]  # type: ignore[union-attr]
    return all(is_valid_symbol(v, region) for a, v in zip(entry.args, call.operands)
               if a.type is T.index and a.uses)


def _clone_body(callee: Operation, dest: Region) -> Block:
    """Clone the callee's blocks into `dest`; returns the cloned entry block."""
    src = _body(callee)
    first = len(dest.blocks)
    src.clone_into(dest, {})  # type: ignore[union-attr]
    return dest.blocks[first]


def _bind_entry_args(entry: Block, values: list[Value]) -> None:
    """Replace the uses of the cloned entry block's arguments by `values`, then drop them."""
    for arg, value in zip(entry.args, values):
        arg.replace_all_uses_with(value)
    for _ in range(len(values)):
        entry.erase_argument(0)


def _splice_block(call: Operation, callee: Operation, dead: list[Operation]) -> None:
    mapping: dict[Value, Value] = dict(zip(_body(callee).blocks[0].args, call.operands))  # type: ignore[union-attr]
    block = call.parent
    ret = None
    for op in _body(callee).blocks[0]:  # type: ignore[union-attr]
        if op.name == "func.return":
            ret = op
            continue
        block.insert_before(call, op.clone(mapping))  # type: ignore[union-attr]
    results = [mapping.get(v, v) for v in ret.operands] if ret is not None else []
    call.replace_all_uses_with(results)
    dead.append(call.detach())


def _splice_cfg(call: Operation, callee: Operation, dead: list[Operation]) -> None:
    """Split the caller's block after the call and put the callee's blocks in between."""
    block: Block = call.parent  # type: ignore[assignment]
    region: Region = block.parent  # type: ignore[assignment]
    cont = Block(call.result_types)
    rest = call.next
    while rest is not None:
        nxt = rest.next
        cont.append(rest.detach())
        rest = nxt
    scratch = Region()
    entry = _clone_body(callee, scratch)
    _bind_entry_args(entry, list(call.operands))
    for b in scratch.blocks:
        term = b.last
        if term is not None and term.name == "func.return":
            b.insert_before(term, Operation.create("cf.br", list(term.operands), successors=[cont], loc=term.loc))
            dead.append(term.detach())
    at = region.blocks.index(block) + 1
    new_blocks = [*scratch.blocks, cont]
    for b in new_blocks:
        b.parent = region
    region.blocks[at:at] = new_blocks
    call.replace_all_uses_with(list(cont.args))
    block.insert_before(call, Operation.create("cf.br", successors=[entry], loc=call.loc))
    dead.append(call.detach())


def _wrap(call: Operation, callee: Operation, has_affine: bool, dead: list[Operation]) -> Operation | None:
    """Replace the call by an `affine.graybox` holding the callee's body (None: refused)."""
    # Placed before its operands are set, so that a refusal erases it without touching
    # use lists.
    graybox = Operation.create(GRAYBOX, [], call.result_types, regions=1, loc=call.loc)
    call.parent.insert_before(call, graybox)  # type: ignore[union-attr]
    region = graybox.regions[0]
    dims = _dims_to_rebuild(call, callee, region) if has_affine else {}
    if dims is None:
        graybox.erase()
        return None
    memrefs = list(dict.fromkeys([*(v for v in call.operands if _is_memref(v.type)),
                                  *(dim.operands[0] for dim in dims.values())]))
    graybox.set_operands(memrefs)
    entry = _clone_body(callee, region)
    inside: dict[Value, Value] = {m: entry.add_argument(m.type, call.loc) for m in memrefs}
    for value, dim in dims.items():
        rebuilt = Operation.create("memref.dim", [inside[dim.operands[0]], dim.operands[1]], [T.index],
                                   loc=dim.loc)
        entry.prepend(rebuilt)
        inside[value] = rebuilt.results[0]
    _bind_entry_args(entry, [inside.get(v, v) for v in call.operands])
    call.replace_all_uses_with(graybox)
    dead.append(call.detach())
    return graybox


def _dims_to_rebuild(call: Operation, callee: Operation, region: Region) -> dict[Value, Operation] | None:
    """The call operands bound to used index parameters that are no symbol inside the
    graybox `region`, each a `memref.dim` to rebuild at the graybox's top level (its memref
    then captured too, so the rebuilt dim is a symbol there); None when one is another
    kind of value (refused).  MLIR's `isValidSymbol` takes a `dim` for a symbol only when
    its memref is a top-level value or sized by symbols: a `dim` of a loop-local memref
    (a call's result) dominates the graybox but is no symbol in it."""
    entry = _body(callee).blocks[0]  # type: ignore[union-attr]
    dims: dict[Value, Operation] = {}
    for a, v in zip(entry.args, call.operands):
        if a.type is not T.index or not a.uses or is_valid_symbol(v, region):
            continue
        definer = v.owner_op
        if definer is None or definer.name != "memref.dim" or not is_valid_symbol(definer.operands[1], region):
            return None
        dims[v] = definer
    return dims


@register_pass
@attrs.define
class Inline(Pass):
    """MLIR's inliner for `func.call` of functions with bodies in the module, callees first
    (recursive SCCs refused); inside affine code the callee is wrapped in an `affine.graybox`
    (the graybox RFC) and graybox elimination removes the wrapper where the body is
    affine-valid in the caller; private functions left without uses are erased."""

    NAME = "inline"
    SUMMARY = "Inline function calls"
    ANCHOR = "builtin.module"
    keep_wrappers: bool = option(False, "Keep every graybox wrapper (no graybox elimination on them)")
    default_pipeline: str = option("", "Pipeline run on each function once its calls are inlined, before "
                                   "it is inlined elsewhere (MLIR's default is 'canonicalize'; empty: none)")

    def run(self, op: Operation, ctx: PassContext) -> None:
        optimize = None
        if self.default_pipeline:
            # Parsed here, so a bad pipeline is a located error before anything is inlined.
            pipeline = parse_pipeline(f"func.func({self.default_pipeline})", "<inline default-pipeline>")
            optimize = PassManager(pipeline.elements[0], emit=ctx.emit).run  # type: ignore[arg-type]
        _Inliner(op, eliminate=not self.keep_wrappers, optimize=optimize).run()
