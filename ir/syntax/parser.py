"""Parser for MLIR text: generic and custom forms, today's syntax and 2019's.

The parser is a scanner over the source string: each step matches a
precompiled regular expression at the current offset, with no token objects
in between.  Types, function signatures and small attribute dictionaries are
cached by their source text, since a large module repeats the same few
hundred spellings.  Custom op forms (`ir/dialects/*`) call the same methods
(`parse_operand_ref`, `parse_type`, `parse_region`, ...) through the
`FormParser` protocol (`ir/records/custom_form.py`), as MLIR's OpAsmParser
interface offers them.

The parser is built in layers, one concern each: `lexer.py` (tokens),
`type_parser.py`, `attr_parser.py`, `location_parser.py`, `value_scopes.py`
(SSA names), and here the structure: operations (generic and custom forms),
regions, blocks and the top level with its aliases.

Errors raise `DiagnosticError` located at file:line:col.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.core.gc_pause import gc_paused
from egraft.ir.core.location import UNKNOWN, Location, SourcePos
from egraft.ir.core.operation import Block, Operation, Region, Value
from egraft.ir.core.traits import Traits
from egraft.ir.records.custom_form import CustomForm
from egraft.ir.records.registry import REGISTRY
from egraft.ir.syntax.attr_parser import FLAT_CACHE_LIMIT, FLAT_DICT_TEXT
from egraft.ir.syntax.era import is_std_era
from egraft.ir.syntax.lexer import STRING, WS
from egraft.ir.syntax.type_parser import FLAT_FN_TEXT
from egraft.ir.syntax.value_scopes import ValueScopes

_OP_NAME = re.compile(r"[A-Za-z_][\w$.]*(?:\.[A-Za-z_][\w$.]*)*")
_RESULT_ID = re.compile(r"%([\w$.\-]+)(?::(\d+))?")
_BLOCK_ID = re.compile(r"\^([\w$.\-]+)")
# The whole of a region-free, successor-free generic op after its results:
# name, operand list, properties, attributes and a flat function type.  Ops
# matching it (nearly all of a large module) skip the general path.
_GENERIC_FAST = re.compile(
    r'"([^"\\\n]+)"\((?:[ \t]*)((?:%[\w$.\-]+(?:#\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?:#\d+)?)*+)?)[ \t]*\)'
    r'(?:[ \t]*<(' + FLAT_DICT_TEXT + r')>)?'
    r'(?:[ \t]*(' + FLAT_DICT_TEXT + r'))?'
    r'[ \t]*:[ \t]*(' + FLAT_FN_TEXT + r')')
_SINGLE_RESULT = re.compile(r"%([\w$.\-]+)[ \t]*=[ \t]*")


class Parser(ValueScopes):
    """Parses one buffer.  Use `parse()` for the common case."""

    def __init__(self, text: str, filename: str = "<stdin>", *, allow_unregistered: bool = False,
                 line_offset: int = 0) -> None:
        super().__init__(text, filename, line_offset)
        self.allow_unregistered = allow_unregistered
        self.default_dialects: list[str | None] = []
        self.metadata_text: str | None = None
        # Set by parse_top_level: the module was made up around the parsed ops.
        self.implicit_module = False
        # The op being parsed by a custom form: its name and bound result count.
        self.op_name = ""
        self.op_result_count = 0
        self.op_start = 0
        # Ops a custom form creates to go right before the op it parses
        # (2019's `dim %m, 0` needs an index constant today).
        self.materialized: list[Operation] = []

    # ================================================================ regions and blocks

    def parse_region(self, entry_args: Sequence[tuple[tuple[str, int, int], T.Type, Location | str | None]] | None = None,
                     *, isolated: bool = False, default_dialect: str | None = None,
                     enable_name_shadowing: bool = False) -> Region:
        """`{ ... }`.  `entry_args` are (ref, type, loc) bound in the entry block
        (custom forms such as func.func declare them in the op's signature);
        with `enable_name_shadowing` they may reuse names visible outside, which
        they then hide inside the region."""
        self.parse_punct("{", "to begin a region")
        self.enter(self.pos - 1)
        if entry_args is not None and not entry_args and self.peek() == "^":
            # No entry arguments to declare: the entry block may have a label
            # (MLIR refuses one only when the op declared arguments; 2019's
            # `func @f() {\n^bb0: ...}`).
            entry_args = None
        region = Region()
        self.push_scope(isolated)
        self.default_dialects.append(default_dialect)
        try:
            if entry_args is not None:
                block = region.add_block()
                for ref, type, loc in entry_args:
                    if not enable_name_shadowing:
                        self._check_entry_arg_unused(ref)
                    arg = block.add_argument(type, loc if isinstance(loc, Location) else SourcePos(self.source, ref[2]))
                    if isinstance(loc, str):
                        self.pending_loc_aliases.append((arg, loc, ref[2]))
                    self.define_values(ref[0], [arg], ref[2])
                if self.peek() == "^":
                    raise self.error("invalid block name in region with named arguments")
                self._parse_block_body(block)
            if self.peek() == "^":
                while not self.parse_optional_punct("}"):
                    self._parse_labeled_block(region)
            elif entry_args is None:
                if not self.parse_optional_punct("}"):
                    block = region.add_block()
                    self._parse_block_body(block)
                    while not self.parse_optional_punct("}"):
                        self._parse_labeled_block(region)
            else:
                self.parse_punct("}")
        finally:
            self.default_dialects.pop()
            self.depth -= 1
        self.pop_scope()
        return region

    def _check_entry_arg_unused(self, ref: tuple[str, int, int]) -> None:
        """A region's named entry argument may not reuse a name already
        defined or forward-referenced where the region is."""
        name = ref[0]
        fwd = self.forward_refs[-1].get(name) if self.forward_refs else None
        prior = None
        if fwd is not None:
            prior = SourcePos(self.source, fwd[1])
        elif len(self.scopes) > 1 and not self.scopes[-1].isolated:
            # Visible from the enclosing scope: skip what the new region defined.
            entry = self._visible.get(name)
            top = len(self.scopes) - 1
            while entry is not None and entry[0] == top:
                entry = entry[2]
            vals = entry[1] if entry is not None and entry[0] >= self._floor else None
            if vals:
                prior = getattr(vals[0], "loc", None) or getattr(vals[0].owner_op, "loc", None)
        if prior is not None:
            err = Diagnostic("error", f"region entry argument '%{name}' is already in use", self.loc_at(ref[2]))
            err.attach_note("previously referenced here", prior)
            raise DiagnosticError(err)

    def _parse_block_name(self) -> tuple[str, int]:
        """`^name` as (name, offset)."""
        self.skip_ws()
        pos = self.pos
        m = _BLOCK_ID.match(self.text, self.pos)
        if m is None:
            raise self.error("expected block name")
        self.pos = m.end()
        return m.group(1), pos

    def _parse_labeled_block(self, region: Region) -> None:
        name, pos = self._parse_block_name()
        scope = self.scopes[-1]
        if name in scope.blocks:
            raise self.error(f"redefinition of block '^{name}'", pos)
        fwd = scope.forward_blocks.pop(name, None)
        block = fwd[0] if fwd is not None else Block()
        scope.blocks[name] = block
        region.add_block(block)
        if self.parse_optional_punct("("):
            if not self.parse_optional_punct(")"):
                while True:
                    ref = self.parse_operand_ref()
                    self.parse_punct(":", "and type for SSA operand")
                    type = self.parse_type()
                    arg = block.add_argument(type, SourcePos(self.source, ref[2]))
                    self.set_location(arg, self.parse_optional_trailing_location(), ref[2])
                    self.define_values(ref[0], [arg], ref[2])
                    if self.parse_optional_punct(")"):
                        break
                    if not self.parse_optional_punct(","):
                        raise self.error("expected ')' to end argument list", self._missing_token_pos())
        self.parse_punct(":", "after block name")
        self._parse_block_body(block)

    def _parse_block_body(self, block: Block) -> None:
        ops = []
        text = self.text
        parse_op = self.parse_operation
        while True:
            self.pos = WS.match(text, self.pos).end()
            c = text[self.pos:self.pos + 1]
            if c == "}" or c == "^" or c == "":
                break
            op = parse_op()
            if self.materialized:
                ops.extend(self.materialized)
                self.materialized.clear()
            ops.append(op)
        block.extend(ops)

    def parse_successor(self) -> Block:
        name, pos = self._parse_block_name()
        scope = self.scopes[-1]
        block = scope.blocks.get(name)
        if block is None:
            fwd = scope.forward_blocks.get(name)
            if fwd is None:
                fwd = scope.forward_blocks[name] = (Block(), pos)
            block = fwd[0]
        return block

    @staticmethod
    def _with_successor_operands(opdef: Any, operands: list[Value], forwarded: list[list[Value]],
                                 attributes: dict) -> tuple[list[Value], dict]:
        """2019's generic form kept each successor's operands in the successor list; today they
        follow the op's own operands, in one operand group per successor when the record
        declares segment sizes (`cf.cond_br`: condition, true operands, false operands)."""
        if (opdef is not None and opdef.has_trait(Traits.AttrSizedOperandSegments)
                and "operandSegmentSizes" not in attributes and len(opdef.operands) == 1 + len(forwarded)):
            sizes = (len(operands), *(len(values) for values in forwarded))
            attributes = {**attributes, "operandSegmentSizes": A.DenseArrayAttr(T.i32, sizes)}
        return [*operands, *(v for values in forwarded for v in values)], attributes

    def parse_successor_with_operands(self) -> tuple[Block, list[Value]]:
        """`^bb1(%a, %b : i32, i32)` or `^bb1` (the 2019 and current forms)."""
        block = self.parse_successor()
        values: list[Value] = []
        if self.parse_optional_punct("("):
            refs = self.parse_operand_ref_list()
            self.parse_punct(":")
            types = self.parse_type_list()
            self.parse_punct(")")
            values = self.resolve_operands(refs, types)
        return block, values

    # ================================================================ operations

    def parse_operation(self) -> Operation:
        text = self.text
        start = self.pos
        groups: list[tuple[str, int, int]] = []
        single = _SINGLE_RESULT.match(text, start) if text.startswith("%", start) else None
        if single is not None:
            groups.append((single.group(1), 1, start))
            self.pos = single.end()
        elif text.startswith("%", start):
            while True:
                self.pos = WS.match(text, self.pos).end()
                m = _RESULT_ID.match(text, self.pos)
                if m is None:
                    raise self.error("expected valid ssa identifier")
                count = int(m.group(2)) if m.group(2) else 1
                if m.group(2) is not None and count < 1:
                    raise self.error("expected named operation to have at least 1 result", m.start())
                groups.append((m.group(1), count, m.start()))
                self.pos = m.end()
                if not self.parse_optional_punct(","):
                    break
            self.parse_punct("=", "after SSA name")
            self.pos = WS.match(text, self.pos).end()
        num_results = sum(g[1] for g in groups)
        if text.startswith('"', self.pos):
            op = self.parse_generic_operation(start)
        else:
            op = self._parse_custom_operation(start, num_results)
        if groups:
            results = op.results
            if not results:
                raise self.error("cannot name an operation with no results", start)
            if num_results != len(results):
                raise self.error(f"operation defines {len(results)} results but was provided "
                                 f"{num_results} to bind", start)
            i = 0
            for name, count, pos in groups:
                self.define_values(name, results[i:i + count], pos)
                i += count
        return op

    def parse_generic_operation(self, start: int | None = None) -> Operation:
        text = self.text
        name_pos = self.pos
        m = _GENERIC_FAST.match(text, name_pos)
        if m is not None:
            op = self._generic_fast(m)
            if op is not None:
                return op
            self.pos = name_pos
        m = STRING.match(text, self.pos)
        if m is None:
            raise self.error("expected operation name in quotes")
        name = m.group(1)
        if not name:
            raise self.error("empty operation name is invalid")
        self.pos = m.end()
        opdef = REGISTRY.ops.get(name)
        if opdef is None:
            legacy = REGISTRY.legacy_names.get(name)
            if legacy is not None:
                name, opdef = legacy, REGISTRY.ops.get(legacy)
            else:
                self._check_unregistered(name, name_pos)
        # Operands.
        refs = self.parse_operand_ref_list("()")
        successors: list[Block] = []
        forwarded: list[list[Value]] = []  # 2019: `[^bb1(%a : i1), ^bb2]` (operands per successor)
        if self.parse_optional_punct("["):
            while True:
                block, values = self.parse_successor_with_operands()
                successors.append(block)
                forwarded.append(values)
                if not self.parse_optional_punct(","):
                    break
            self.parse_punct("]")
        properties = None
        if self.parse_optional_punct("<"):
            self.skip_ws()
            if not text.startswith("{", self.pos):
                raise self.error("expected '{' in properties")
            properties = self.parse_optional_attr_dict()
            self.parse_punct(">")
        regions: list[Region] = []
        self.skip_ws()
        if text.startswith("(", self.pos) and text.startswith("{", WS.match(text, self.pos + 1).end()):
            self.pos += 1
            isolated = opdef is not None and opdef.has_trait(Traits.IsolatedFromAbove)
            dd = opdef.default_dialect if opdef is not None else None
            while True:
                regions.append(self.parse_region(isolated=isolated, default_dialect=dd))
                if not self.parse_optional_punct(","):
                    break
            self.parse_punct(")")
        attributes = self.parse_optional_attr_dict()
        self.pos = WS.match(text, self.pos).end()
        if not text.startswith(":", self.pos):
            raise self.error("expected ':' followed by operation type")
        self.pos += 1
        type_pos = WS.match(text, self.pos).end()
        fn = self.parse_type()
        if not isinstance(fn, T.FunctionType):
            raise self.error("expected function type", type_pos)
        if len(fn.inputs) != len(refs):  # MLIR's wording for the generic form
            raise self.error(f"expected {len(refs)} operand type{'' if len(refs) == 1 else 's'} but had "
                             f"{len(fn.inputs)}", type_pos)
        operands = self.resolve_operands(refs, fn.inputs, type_pos)
        if any(forwarded):
            operands, attributes = self._with_successor_operands(opdef, operands, forwarded, attributes)
        if opdef is not None:
            if attributes and opdef.attr_names:
                attributes, properties = opdef.split_attributes(attributes, properties)
            op = opdef.cls(name, operands, fn.results, attributes, properties, regions, successors,
                           SourcePos(self.source, name_pos))
        else:
            op = Operation(name, operands, fn.results, attributes, properties, regions, successors,
                           SourcePos(self.source, name_pos))
        self.pos = WS.match(text, self.pos).end()
        if text.startswith("loc(", self.pos):
            self.set_location(op, self.parse_optional_trailing_location(), self.pos)
        return op

    def _generic_fast(self, m: "re.Match[str]") -> Operation | None:
        """Build the op of a `_GENERIC_FAST` match, or None to take the general
        path (which also produces the errors: forward references, type
        mismatches and unknown names all fall back)."""
        name, operand_text, fn_text = m.group(1, 2, 5)
        opdef = REGISTRY.ops.get(name)
        if opdef is None and (not self.allow_unregistered or name in REGISTRY.legacy_names
                              or REGISTRY.dialect_of(name) is not None):
            return None
        fn = self._fn_cache.get(fn_text)
        if fn is None:
            return None
        operands: list[Value] = []
        if operand_text:
            lookup = self.lookup_value
            inputs = fn.inputs
            refs = operand_text.split(",")
            if len(refs) != len(inputs):
                return None
            for ref, type in zip(refs, inputs):
                ref = ref.strip()
                hash_at = ref.find("#")
                if hash_at < 0:
                    vals = lookup(ref[1:])
                    if vals is None or len(vals) != 1:
                        return None
                    v = vals[0]
                else:
                    vals = lookup(ref[1:hash_at])
                    idx = int(ref[hash_at + 1:])
                    if vals is None or idx >= len(vals):
                        return None
                    v = vals[idx]
                if v.type is not type:
                    return None
                operands.append(v)
        elif fn.inputs:
            return None
        properties = attributes = None
        if m.start(3) >= 0:
            properties = self._cached_dict(m, 3)
        if m.start(4) >= 0:
            attributes = self._cached_dict(m, 4)
        loc = SourcePos(self.source, m.start())  # MLIR locates an op at its name
        if opdef is not None:
            if attributes and opdef.attr_names:
                attributes, properties = opdef.split_attributes(attributes, properties)
            op = opdef.cls(name, operands, fn.results, attributes, properties, (), (), loc)
        else:
            op = Operation(name, operands, fn.results, attributes, properties, (), (), loc)
        self.pos = m.end()
        text = self.text
        self.pos = WS.match(text, self.pos).end()
        if text.startswith("loc(", self.pos):
            self.set_location(op, self.parse_optional_trailing_location(), self.pos)
        return op

    def _cached_dict(self, m: "re.Match[str]", group: int) -> dict[str, A.Attribute]:
        """The dictionary of a `_GENERIC_FAST` group, from the cache if short
        (a long one, a weight's hex literal, is parsed in place, never copied)."""
        start, end = m.span(group)
        key = m.group(group) if end - start <= FLAT_CACHE_LIMIT else None
        cached = self._dict_cache.get(key) if key is not None else None
        if cached is None:
            save = self.pos
            self.pos = start
            cached = self._parse_attr_dict_body()
            if key is not None:
                self._dict_cache[key] = cached
            self.pos = save
        return dict(cached)

    def _check_unregistered(self, name: str, pos: int) -> None:
        dialect = REGISTRY.dialect_of(name)
        if dialect is None and self.std_era and name.startswith("std."):
            # 2019's `std` dialect was closed (its ops are today's arith/func/memref/cf).
            raise self.error(f"unregistered operation '{name}' found in dialect ('std') "
                             f"that does not allow unknown operations", pos)
        if dialect is not None:
            if not dialect.open and "." in name:
                raise self.error(f"unregistered operation '{name}' found in dialect ('{dialect.name}') "
                                 f"that does not allow unknown operations", pos)
            return
        if not self.allow_unregistered:
            raise self.error(f"operation being parsed with an unregistered dialect. If this is "
                             f"intended, please use -allow-unregistered-dialect with the MLIR tool used", pos)

    def resolve_op_name(self, name: str, pos: int) -> tuple[str, CustomForm]:
        """The full name and custom form of a custom-form op name, trying the
        enclosing op's default dialect as MLIR does."""
        opdef = REGISTRY.ops.get(name)
        if opdef is not None and opdef.assembly is not None:
            return name, opdef.assembly
        default = self.default_dialects[-1] if self.default_dialects else None
        if default:
            full = f"{default}.{name}"
            opdef2 = REGISTRY.ops.get(full)
            if opdef2 is not None and opdef2.assembly is not None:
                return full, opdef2.assembly
            if "." not in name or REGISTRY.dialect_of(name) is None:
                d = REGISTRY.dialects.get(default)
                if d is not None and d.fallback_form is not None and opdef is None:
                    return full, d.fallback_form
        for candidate in (REGISTRY.legacy_names.get(name), f"builtin.{name}"):
            opdef3 = REGISTRY.ops.get(candidate) if candidate else None
            if opdef3 is not None and opdef3.assembly is not None:
                return candidate, opdef3.assembly  # type: ignore[return-value]
        dialect = REGISTRY.dialect_of(name)
        if opdef is None and dialect is not None and dialect.fallback_form is not None:
            return name, dialect.fallback_form
        tried = f" (tried '{default}.{name}' as well)" if default else ""
        raise self.error(f"custom op '{name}' is unknown{tried}", pos)

    def _parse_custom_operation(self, start: int, num_results: int) -> Operation:
        self.skip_ws()
        name_pos = self.pos
        m = _OP_NAME.match(self.text, self.pos)
        if m is None:
            raise self.error("expected operation name")
        self.pos = m.end()
        name, form = self.resolve_op_name(m.group(), name_pos)
        saved = (self.op_name, self.op_result_count, self.op_start)
        self.op_name, self.op_result_count, self.op_start = name, num_results, start
        try:
            op = form.parse(self)
        finally:
            self.op_name, self.op_result_count, self.op_start = saved
        if op.loc is UNKNOWN:  # a form may locate the op itself (island `wraps`)
            op.loc = SourcePos(self.source, name_pos)  # MLIR locates an op at its name
        self.set_location(op, self.parse_optional_trailing_location(), self.pos)
        return op

    def create_op(self, name: str | None = None, operands: Sequence[Value] = (),
                  result_types: Sequence[T.Type] = (), attributes: dict[str, A.Attribute] | None = None,
                  properties: dict[str, A.Attribute] | None = None, regions: Sequence[Region] = (),
                  successors: Sequence[Block] = ()) -> Operation:
        """Make the op a custom form has parsed (name defaults to the current one)."""
        return Operation.create(name or self.op_name, operands, result_types, attributes, properties,
                                regions, successors)

    # ================================================================ top level

    def parse_top_level(self) -> Operation:
        """The whole buffer: aliases, ops and the trailing metadata section.
        A single top-level `builtin.module` is returned as is; other ops are
        wrapped in an implicit module, as mlir-opt does.  A leading UTF-8
        byte order mark is skipped."""
        if self.text.startswith("\ufeff"):
            self.pos = 1
        with gc_paused():
            try:
                return self._parse_top_level()
            except RecursionError:
                # The stack of this thread ran out before `MAX_NESTING` (a
                # caller outside `run_with_deep_stack`): still a located error.
                raise self.error("nesting too deep for the stack of this thread", self.pos) from None

    def _parse_top_level(self) -> Operation:
        if is_std_era(self.text):
            self.std_era = True
            # 2019's MLIR accepted unknown ops without a flag (`ir/syntax/era.py`).
            self.allow_unregistered = True
        self.push_scope(isolated=True)
        self.default_dialects.append(None)
        ops: list[Operation] = []
        text = self.text
        while True:
            self.skip_ws()
            if self.pos >= len(text):
                break
            c = text[self.pos]
            if c == "#" or (c == "!" and re.match(r"![\w$.]+\s*=", text[self.pos:self.pos + 200])):
                self._parse_alias_definition()
            elif text.startswith("{-#", self.pos):
                end = text.find("#-}", self.pos)
                if end < 0:
                    raise self.error("unterminated file metadata dictionary")
                self.metadata_text = text[self.pos:end + 3]
                self.pos = end + 3
            else:
                op = self.parse_operation()
                ops.extend(self.materialized)
                self.materialized.clear()
                ops.append(op)
        self.default_dialects.pop()
        self.pop_scope()
        self.resolve_pending_locations()
        if len(ops) == 1 and ops[0].name == "builtin.module" and not ops[0].attr("sym_name") or \
                (len(ops) == 1 and ops[0].name == "builtin.module"):
            return ops[0]
        self.implicit_module = True
        region = Region(blocks=[Block()])
        region.blocks[0].extend(ops)
        return Operation.create("builtin.module", regions=[region], loc=SourcePos(self.source, 0))

    def _parse_alias_definition(self) -> None:
        start = self.pos
        is_type = self.text[self.pos] == "!"
        self.pos += 1
        m = re.compile(r"[\w$.]+").match(self.text, self.pos)
        if m is None:
            raise self.error("expected alias name", start)
        name = m.group()
        self.pos = m.end()
        self.parse_punct("=")
        if is_type:
            if name in self.type_aliases:
                raise self.error(f"redefinition of type alias id '{name}'", start)
            self.type_aliases[name] = self.parse_type()
            return
        if name in self.attr_aliases or name in self.loc_aliases:
            raise self.error(f"redefinition of attribute alias id '{name}'", start)
        self.skip_ws()
        if self.text.startswith("loc(", self.pos):
            self.pos += 4
            self.loc_aliases[name] = self.parse_location_body()
            self.parse_punct(")")
        else:
            self.attr_aliases[name] = self.parse_attribute()


def parse(text: str, filename: str = "<stdin>", *, allow_unregistered: bool = False,
          line_offset: int = 0) -> Operation:
    """Parse MLIR text into a top-level op (a `builtin.module`)."""
    parser = Parser(text, filename, allow_unregistered=allow_unregistered, line_offset=line_offset)
    return parser.parse_top_level()


def parse_with_parser(text: str, filename: str = "<stdin>", **kwargs: Any) -> tuple[Operation, Parser]:
    """Like `parse`, also returning the parser (for its aliases and metadata)."""
    parser = Parser(text, filename, **kwargs)
    return parser.parse_top_level(), parser
