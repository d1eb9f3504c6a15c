"""Printer for MLIR text (custom or generic form, optional debug locations).

SSA names follow MLIR's printer: a pre-pass numbers values region by region;
nested regions continue from the counters their parent region ended with,
sibling regions restart from the same point, result name hints from op
records (`%outputs`, `%control`, `%c0`) are uniqued with one shared
`_N` counter, and entry block arguments are `%argN`.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.gc_pause import gc_paused
from egraft.ir.core.location import Location
from egraft.ir.core.operation import Block, Operation, Region, Value
from egraft.ir.records.registry import REGISTRY

# Attributes MLIR prints through `#alias = ...` definitions at the top.
_ALIAS_PREFIX = {A.AffineMapAttr: "map", A.IntegerSetAttr: "set"}


class _Names:
    """The value and block names of one printing (MLIR's SSANameState):
    `value_names` holds each value's operand text (`%0`, `%1#2`, `%outputs`),
    `result_headers` each op's `%a, %b:2 = ` prefix."""

    def __init__(self) -> None:
        self.value_names: dict[Value, str] = {}
        self.result_headers: dict[Operation, str] = {}
        self.block_names: dict[Block, str] = {}


_MISSING = object()


class Printer:
    def __init__(self, *, generic: bool = False, debuginfo: bool = False, local_scope: bool = True,
                 allow_aliases: bool = True) -> None:
        self.generic = generic
        self.debuginfo = debuginfo
        self.local_scope = local_scope
        self.out: list[str] = []
        self.indent = ""
        self.names = _Names()
        self.default_dialects: list[str | None] = [None]
        self.attr_aliases: dict[A.Attribute, str] = {}
        self._alias_counts: dict[str, int] = {}
        self.allow_aliases = allow_aliases
        self.loc_aliases: dict[str, str] = {}
        self._forms: dict[str, object] = {}
        self._short_names: dict[tuple[str, str], str] = {}

    # ================================================================ entry

    def print_top(self, op: Operation, metadata: str | None = None) -> str:
        self._number(op)
        self.print_op(op)
        self.out.append("\n")
        # Aliases are named in order of first use while printing, as MLIR's
        # alias pass names what its dry-run print meets; definitions go first.
        self.out[:0] = [f"#{name} = {attr}\n" for attr, name in self.attr_aliases.items()]
        if self.debuginfo and not self.local_scope:
            for text, name in self.loc_aliases.items():
                self.out.append(f"#{name} = loc({text})\n")
        if metadata:
            self.out.append("\n" + metadata + "\n")
        return "".join(self.out)

    # ================================================================ naming

    def _number(self, top: Operation) -> None:
        refs = self.names.value_names
        headers = self.names.result_headers
        blocks = self.names.block_names
        # Regions still to number, (region, next value id, next arg id, next
        # conflict id), and, below each one's nested regions, the list of the
        # names it took, released once they are all numbered.
        work: list[tuple[Region, int, int, int] | list[str]] = []
        state = [0, 0, 0]  # value id, argument id, conflict id
        hint_hooks: dict[str, object] = {}
        # Names taken by the region being numbered and the regions enclosing it
        # (one set, updated on entering and leaving a region, so that a lookup
        # costs the same at any depth).
        used: set[str] = set()

        def unique(name: str, taken: list[str]) -> str:
            if not name.isdigit() and name not in used:
                used.add(name)
                taken.append(name)
                return name
            while True:
                candidate = f"{name}_{state[2]}"
                state[2] += 1
                if candidate not in used:
                    used.add(candidate)
                    taken.append(candidate)
                    return candidate

        def number_op(op: Operation, taken: list[str]) -> None:
            results = op.results
            if not results:
                return
            hook = hint_hooks.get(op.name, _MISSING)
            if hook is _MISSING:
                hook = hint_hooks[op.name] = _result_name_hook(op)
            hints = _hints(op, hook) if hook is not None else None
            if hints is None:
                name = "%" + str(state[0])
                state[0] += 1
                if len(results) == 1:
                    refs[results[0]] = name
                    headers[op] = name + " = "
                else:
                    for i, r in enumerate(results):
                        refs[r] = f"{name}#{i}"
                    headers[op] = f"{name}:{len(results)} = "
                return
            # Each hinted result starts a group; unhinted ones join the group before.
            groups: list[tuple[str, list[Value]]] = []
            for r, hint in zip(results, hints):
                if hint is not None:
                    groups.append(("%" + unique(hint, taken), [r]))
                elif not groups:
                    groups.append(("%" + str(state[0]), [r]))
                    state[0] += 1
                else:
                    groups[-1][1].append(r)
            parts = []
            for name, members in groups:
                if len(members) == 1:
                    refs[members[0]] = name
                    parts.append(name)
                else:
                    for i, r in enumerate(members):
                        refs[r] = f"{name}#{i}"
                    parts.append(f"{name}:{len(members)}")
            headers[op] = ", ".join(parts) + " = "

        def number_region(region: Region, taken: list[str]) -> None:
            for bi, block in enumerate(region.blocks):
                blocks[block] = f"bb{bi}"
                arg_hints = _block_arg_hints(region, bi)
                for ai, arg in enumerate(block.args):
                    hint = arg_hints[ai] if arg_hints is not None and ai < len(arg_hints) else None
                    if hint is not None:
                        refs[arg] = "%" + unique(hint, taken)
                    elif bi == 0:
                        refs[arg] = f"%arg{state[1]}"
                        state[1] += 1
                    else:
                        refs[arg] = f"%{state[0]}"
                        state[0] += 1
                for op in block:
                    number_op(op, taken)

        number_op(top, [])
        for region in reversed(top.regions):
            work.append((region, state[0], state[1], state[2]))
        while work:
            item = work.pop()
            if isinstance(item, list):  # a region's nested regions are done
                used.difference_update(item)
                continue
            region, state[0], state[1], state[2] = item
            taken: list[str] = []
            number_region(region, taken)
            work.append(taken)
            pending = []
            for op in region.ops():
                for nested in op.regions:
                    pending.append((nested, state[0], state[1], state[2]))
            work.extend(reversed(pending))

    @property
    def value_names(self) -> dict[Value, str]:
        """Every numbered value's name (`%0`, `%arg1`, ...)."""
        return self.names.value_names

    def value_name(self, v: Value) -> str:
        return self.names.value_names.get(v) or "%<<UNKNOWN SSA VALUE>>"

    # ================================================================ aliases

    def attr_text(self, attr: A.Attribute) -> str:
        """An attribute's text; affine maps and sets print as `#map`/`#set`
        aliases (named on first use), also inside arrays."""
        if not self.allow_aliases:
            return str(attr)
        prefix = _ALIAS_PREFIX.get(type(attr))
        if prefix is not None:
            alias = self.attr_aliases.get(attr)
            if alias is None:
                n = self._alias_counts.get(prefix, 0)
                self._alias_counts[prefix] = n + 1
                alias = self.attr_aliases[attr] = prefix if n == 0 else f"{prefix}{n}"
            return "#" + alias
        if isinstance(attr, A.ArrayAttr):
            return "[" + ", ".join(A.element_text(a) if type(a) in (A.IntegerAttr, A.FloatAttr)
                                   else self.attr_text(a) for a in attr) + "]"
        return str(attr)

    # ================================================================ pieces for custom forms

    def write(self, text: str) -> None:
        self.out.append(text)

    def print_operand(self, v: Value) -> None:
        self.out.append(self.value_name(v))

    def print_operands(self, values: Iterable[Value], sep: str = ", ") -> None:
        self.out.append(sep.join(self.value_name(v) for v in values))

    def print_type(self, t: T.Type) -> None:
        self.out.append(str(t))

    def print_types(self, types: Iterable[T.Type]) -> None:
        self.out.append(", ".join(map(str, types)))

    def print_attribute(self, attr: A.Attribute) -> None:
        self.out.append(self.attr_text(attr))

    def print_successor(self, block: Block) -> None:
        self.out.append("^" + self.names.block_names.get(block, "<<UNKNOWN BLOCK>>"))

    def print_successor_with_operands(self, block: Block, values: Sequence[Value]) -> None:
        self.print_successor(block)
        if values:
            self.out.append("(")
            self.print_operands(values)
            self.out.append(" : ")
            self.print_types(v.type for v in values)
            self.out.append(")")

    def print_attr_dict(self, attrs: dict[str, A.Attribute], elided: Iterable[str] = (),
                        with_keyword: bool = False) -> None:
        """` {a = 1, b}` (nothing if empty after eliding), sorted by name."""
        elided = set(elided)
        items = sorted((k, v) for k, v in attrs.items() if k not in elided)
        if not items:
            return
        if with_keyword:
            self.out.append(" attributes")
        self.out.append(" {" + self.dict_entries_text(items) + "}")

    def print_op_attr_dict(self, op: Operation, elided: Iterable[str] = (), with_keyword: bool = False) -> None:
        """The custom form's attribute dictionary: properties and attributes merged."""
        props, attrs = op.properties, op.attributes
        if not attrs and (not props or all(k in elided for k in props)):
            return  # the common case: nothing left to print
        self.print_attr_dict(op.all_attributes(), elided, with_keyword)

    def dict_entries_text(self, items: Sequence[tuple[str, A.Attribute]]) -> str:
        parts = []
        for k, v in items:
            key = A._key_text(k)
            parts.append(key if v is A.UNIT else f"{key} = {self.attr_text(v)}")
        return ", ".join(parts)

    def print_function_type(self, inputs: Sequence[T.Type], results: Sequence[T.Type]) -> None:
        self.out.append(str(T.FunctionType(tuple(inputs), tuple(results))))

    def print_arrow_types(self, results: Sequence[T.Type]) -> None:
        """` -> type` or ` -> (a, b)`; nothing for no results."""
        if results:
            self.out.append(" -> " + T._result_list_text(results))

    def print_region(self, region: Region, *, print_entry_args: bool = True,
                     print_empty_block: bool = False, default_dialect: str | None = None,
                     arg_formatter: Callable[[int], str] | None = None,
                     print_block_terminators: bool = True) -> None:
        """`{ ... }` with one op per line at the next indentation level
        (without each block's terminator if `print_block_terminators` is
        False, for ops whose terminator is implicit, like affine.for's)."""
        self.default_dialects.append(default_dialect)
        out = self.out
        out.append("{\n")
        old_indent = self.indent
        self.indent = old_indent + "  "
        for bi, block in enumerate(region.blocks):
            if bi > 0 or (print_entry_args and block.args) or \
                    (print_empty_block and block.is_empty and bi == 0):
                self._print_block_header(block, old_indent)
            indent = self.indent
            last = block.last
            op = block.first
            while op is not None:
                if not print_block_terminators and op is last:
                    break
                self.print_op(op, indent)
                out.append("\n")
                op = op.next
        self.indent = old_indent
        out.append(old_indent + "}")
        self.default_dialects.pop()

    def _print_block_header(self, block: Block, indent: str) -> None:
        text = indent + "^" + self.names.block_names.get(block, "bb?")
        if block.args:
            text += "(" + self._block_args_text(block) + ")"
        self.out.append(text + ":\n")

    def _block_args_text(self, block: Block) -> str:
        """`%arg0: i32, %arg1: f32`, each with its location under debug info."""
        if self.debuginfo:
            return ", ".join(f"{self.value_name(a)}: {a.type} {self.loc_text(a.loc)}" for a in block.args)
        return ", ".join(f"{self.value_name(a)}: {a.type}" for a in block.args)

    def print_block_args_signature(self, block: Block) -> None:
        """`%arg0: i32, %arg1: f32` (with locations under debug info)."""
        self.out.append(self._block_args_text(block))

    def loc_text(self, loc: Location) -> str:
        text = str(loc.resolved())
        if self.local_scope:
            return f"loc({text})"
        alias = self.loc_aliases.get(text)
        if alias is None:
            n = len(self.loc_aliases)
            alias = self.loc_aliases[text] = "loc" if n == 0 else f"loc{n}"
        return f"loc(#{alias})"

    def op_name_text(self, op: Operation) -> str:
        """The op name in custom form, without the enclosing default dialect."""
        dd = self.default_dialects[-1]
        if dd is None:
            return op.name
        key = (dd, op.name)
        text = self._short_names.get(key)
        if text is None:
            name = op.name
            text = name[len(dd) + 1:] if name.startswith(dd) and name[len(dd):len(dd) + 1] == "." else name
            self._short_names[key] = text
        return text

    # ================================================================ operations

    def print_results(self, op: Operation) -> None:
        header = self.names.result_headers.get(op)
        if header is not None:
            self.out.append(header)

    def print_op(self, op: Operation, indent: str = "") -> None:
        """One op (without a newline), after `indent`."""
        header = self.names.result_headers.get(op)
        self.out.append(indent if header is None else indent + header)
        form = None
        if not self.generic:
            form = self._forms.get(op.name, _MISSING)
            if form is _MISSING:
                form = self._forms[op.name] = _custom_form(op)
        if form is not None:
            form.print(self, op)
        else:
            self.print_generic_op(op)
        if self.debuginfo:
            self.out.append(" " + self.loc_text(op.loc))

    def print_generic_op(self, op: Operation) -> None:
        out = self.out
        refs = self.names.value_names
        out.append(f'"{op.name}"(' + ", ".join([refs[v] for v in op.operands]) + ")")
        if op.successors:
            out.append("[" + ", ".join("^" + self.names.block_names.get(b, "?") for b in op.successors) + "]")
        if op.properties:
            out.append(" <{" + self.dict_entries_text(sorted(op.properties.items())) + "}>")
        if op.regions:
            out.append(" (")
            for i, region in enumerate(op.regions):
                if i:
                    out.append(", ")
                self.print_region(region, print_empty_block=True, default_dialect=None)
            out.append(")")
        if op.attributes:
            out.append(" {" + self.dict_entries_text(sorted(op.attributes.items())) + "}")
        out.append(" : " + fn_type_text(op))


_FN_TEXT: dict[tuple, str] = {}


def fn_type_text(op: Operation) -> str:
    """`(operand types) -> result types` of an op, cached by the type tuple."""
    key = (tuple([v.type for v in op.operands]), tuple([r.type for r in op.results]))
    text = _FN_TEXT.get(key)
    if text is None:
        text = _FN_TEXT[key] = str(T.FunctionType(*key))
    return text


def _custom_form(op: Operation) -> object:
    """The custom form printing an op: its record's, or its dialect's
    fallback form for unregistered ops (None: generic form)."""
    if op.opdef is not None:
        return op.opdef.assembly
    d = REGISTRY.dialect_of(op.name)
    return d.fallback_form if d is not None else None


def _result_name_hook(op: Operation) -> object:
    """The result-name hint hook of an op: its record's, or its dialect's for
    unregistered ops (None when there is none)."""
    opdef = op.opdef
    if opdef is not None:
        return opdef.result_names
    d = REGISTRY.dialect_of(op.name)
    return getattr(d, "result_names", None) if d is not None else None


def _hints(op: Operation, hook: object) -> Sequence[str | None] | None:
    hints = hook(op) if callable(hook) else hook
    if hints is None or all(h is None for h in hints):
        return None
    return list(hints) + [None] * (len(op.results) - len(hints))


def _block_arg_hints(region: Region, block_index: int) -> Sequence[str | None] | None:
    op = region.parent
    if op is None or op.opdef is None:
        return None
    hook = getattr(op.opdef, "block_arg_names", None)
    if hook is None:
        return None
    return hook(op, region, block_index)


def print_ir(op: Operation, *, generic: bool = False, debuginfo: bool = False, local_scope: bool = True,
             metadata: str | None = None) -> str:
    """Print an op (usually a module) as MLIR text."""
    with gc_paused():
        return Printer(generic=generic, debuginfo=debuginfo, local_scope=local_scope).print_top(op, metadata)
