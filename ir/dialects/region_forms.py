"""Assembly pieces shared by the ops with regions of `affine` and `scf`.

Both dialects write loop-carried values as `iter_args(%acc = %init) -> (types)`,
conditionals as `{ then } else { else }` with the else region optional, and
leave out a region's terminator when it yields nothing; each dialect passes its
own terminator record and wording.
"""

from __future__ import annotations

from typing import Callable, Sequence

from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation, Region, Value
from egraft.ir.core.traits import Traits
from egraft.ir.records.custom_form import FormParser, FormPrinter


def ensure_terminator(region: Region, build_yield: Callable[[], Operation]) -> None:
    """Add the implicit value-less terminator the custom form leaves out."""
    if not region.blocks:
        region.add_block()
    block = region.blocks[-1]
    last = block.last
    if last is None or last.opdef is None or not last.opdef.has_trait(Traits.Terminator):
        block.append(build_yield())


def parse_yield(p: FormParser, name: str) -> Operation:
    """`name %a, %b : t1, t2 {attrs}` or a bare `name`: a terminator handing values to its parent."""
    refs = p.parse_operand_ref_list()
    attrs = p.parse_optional_attr_dict()
    types = p.parse_colon_type_list() if refs else []
    return p.create_op(name, p.resolve_operands(refs, types), attributes=attrs)


def parse_iter_args(p: FormParser, mismatch: str) -> tuple[list[tuple], list[T.Type]]:
    """`iter_args(%a = %init, ...) -> (types)` if present: the (region arg, init) references
    and the result types; `mismatch` is the error when their counts differ."""
    pairs: list[tuple] = []
    if not p.parse_optional_keyword("iter_args"):
        return pairs, []
    p.parse_punct("(")
    if not p.parse_optional_punct(")"):
        while True:
            arg = p.parse_operand_ref()
            p.parse_punct("=")
            pairs.append((arg, p.parse_operand_ref()))
            if p.parse_optional_punct(")"):
                break
            p.parse_punct(",")
    p.parse_punct("->")
    result_types = p.parse_function_result_types()
    if len(pairs) != len(result_types):
        raise p.error(mismatch, p.op_start)
    return pairs, result_types


def print_iter_args(pr: FormPrinter, args: Sequence[Value], inits: Sequence[Value], types: Sequence[T.Type]) -> None:
    """` iter_args(%a = %init, ...) -> (types)`, or nothing without loop-carried values."""
    if not inits:
        return
    pr.write(" iter_args(" + ", ".join(f"{pr.value_name(a)} = {pr.value_name(v)}" for a, v in zip(args, inits)))
    pr.write(") -> (")
    pr.print_types(types)
    pr.write(")")


def parse_then_else(p: FormParser, build_yield: Callable[[], Operation]) -> list[Region]:
    """`{ ... } [else { ... }]`: the then region and the (possibly empty) else region."""
    then = p.parse_region()
    ensure_terminator(then, build_yield)
    other = Region()
    if p.parse_optional_keyword("else"):
        other = p.parse_region()
        ensure_terminator(other, build_yield)
    return [then, other]


def print_then_else(pr: FormPrinter, op: Operation) -> None:
    """` { ... } else { ... }`; terminators are printed only when they yield values."""
    pr.write(" ")
    with_terms = bool(op.results)
    pr.print_region(op.regions[0], print_entry_args=False, print_block_terminators=with_terms)
    if op.regions[1].blocks:
        pr.write(" else ")
        pr.print_region(op.regions[1], print_entry_args=False, print_block_terminators=with_terms)
