"""The builtin dialect: `builtin.module` and `unrealized_conversion_cast`."""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core.location import Location
from egraft.ir.core.operation import Block, Operation, Region
from egraft.ir.core.traits import Traits
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.records.registry import REGISTRY


def _parse_module(p: FormParser) -> Operation:
    name = p.parse_optional_symbol()
    attrs = {}
    if p.parse_optional_keyword("attributes"):
        attrs = p.parse_attr_dict()
    region = p.parse_region(isolated=True)
    if not region.blocks:
        region.add_block()
    # 2019 modules ended with an explicit `module_terminator`.
    block = region.blocks[0]
    last = block.last
    if last is not None and last.name == "builtin.module_terminator":
        last.erase()
    if name is not None:
        attrs["sym_name"] = A.StringAttr(name)
    return p.create_op("builtin.module", attributes=attrs, regions=[region])


def _print_module(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) if pr.default_dialects[-1] == "builtin" else "module")
    name = op.attr("sym_name")
    if name is not None:
        pr.write(" " + A.symbol_text(name.value))
    pr.print_op_attr_dict(op, elided=("sym_name",), with_keyword=True)
    pr.write(" ")
    pr.print_region(op.regions[0], print_entry_args=False)


MODULE = OpDef(
    "builtin.module",
    summary="A top level container operation",
    description="Holds a single graph-free block of ops (functions, graphs, globals). It is a symbol "
                "table, isolated from above, and needs no terminator.",
    attributes=[("sym_name", C.StrAttr, True), ("sym_visibility", C.StrAttr, True)],
    regions=[RegionDef("bodyRegion", single_block=True)],
    traits=(Traits.IsolatedFromAbove, Traits.SymbolTable, Traits.Symbol, Traits.NoTerminator,
            Traits.SingleBlock, Traits.AffineScope),
    assembly=CustomForm(_parse_module, _print_module),
)


def _parse_module_terminator(p: FormParser) -> Operation:
    return p.create_op("builtin.module_terminator")


MODULE_TERMINATOR = OpDef(
    "builtin.module_terminator",
    summary="2019's explicit end of a module body (dropped on parse)",
    traits=(Traits.Terminator,),
    assembly=CustomForm(_parse_module_terminator, lambda pr, op: pr.write("module_terminator")),
)

UNREALIZED_CAST = OpDef(
    "builtin.unrealized_conversion_cast",
    summary="An unrealized conversion from one set of types to another",
    operands=[("inputs", Variadic(C.AnyType))],
    results=[("outputs", Variadic(C.AnyType))],
    traits=(Traits.Pure,),
)

BUILTIN = REGISTRY.dialect("builtin", summary="Core structure: modules.")
BUILTIN.add(MODULE, MODULE_TERMINATOR, UNREALIZED_CAST)


def make_module(ops: Sequence[Operation] = (), loc: Location | None = None) -> Operation:
    """A `builtin.module` holding `ops`."""
    region = Region(blocks=[Block()])
    region.blocks[0].extend(ops)
    op = MODULE.cls("builtin.module", (), (), {}, {}, [region], ())
    if loc is not None:
        op.loc = loc
    return op
