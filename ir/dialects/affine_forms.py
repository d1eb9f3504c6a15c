"""Assembly pieces the affine ops share: maps over SSA names and the dim/symbol checks.

Custom forms write affine expressions over SSA values (`%A[%i + 1, symbol(%n)]`)
and operand lists as `(%d0, %d1)[%s0]`; the verifiers check those values
against MLIR's dim and symbol rules (`affine_dims`), with MLIR's wording.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.affine import AffineMap, Dim, Symbol, render
from egraft.ir.core.operation import Operation, Value
from egraft.ir.dialects.affine_dims import get_affine_scope, is_valid_dim, is_valid_symbol
from egraft.ir.records.custom_form import FormParser, FormPrinter
from egraft.ir.syntax.affine_parser import parse_affine_expr
from egraft.ir.verifier import op_error


SYMBOL_IDENTITY = A.AffineMapAttr(AffineMap(0, 1, [Symbol(0)]))


def parse_dim_and_symbol_list(p: FormParser) -> tuple[list, list]:
    """`(%d0, %d1)[%s0]` (the symbol list is optional)."""
    dims = p.parse_operand_ref_list("()")
    syms = p.parse_operand_ref_list("[]") if p.peek() == "[" else []
    return dims, syms


def print_dim_and_symbol_list(pr: FormPrinter, operands: Sequence[Value], num_dims: int) -> None:
    pr.write("(")
    pr.print_operands(operands[:num_dims])
    pr.write(")")
    if len(operands) > num_dims:
        pr.write("[")
        pr.print_operands(operands[num_dims:])
        pr.write("]")


def resolve_indices(p: FormParser, refs: Sequence) -> list[Value]:
    return p.resolve_operands(refs, [T.index] * len(refs))


class SSAExprParser:
    """Parses affine expressions over SSA names: `%i` becomes a dimension,
    `symbol(%n)` a symbol; each distinct name gets one position."""

    def __init__(self, p: FormParser) -> None:
        self.p = p
        self.dims: dict[str, tuple] = {}
        self.syms: dict[str, tuple] = {}

    def _resolve(self, name: str, pos: int):
        p = self.p
        if name == "symbol" and p.peek() == "(":
            p.parse_punct("(")
            ref = p.parse_operand_ref()
            p.parse_punct(")")
            key = ref[0] if ref[1] < 0 else f"{ref[0]}#{ref[1]}"
            if key not in self.syms:
                self.syms[key] = ref
            return Symbol(list(self.syms).index(key))
        if not name.startswith("%"):
            raise p.error("expected ssa identifier", pos)
        key = name[1:]
        if key not in self.dims:
            ssa, _, idx = key.partition("#")
            self.dims[key] = (ssa, int(idx) if idx else -1, pos)
        return Dim(list(self.dims).index(key))

    def expr(self):
        return parse_affine_expr(self.p, self._resolve)

    def expr_list(self, open_: str, close: str) -> list:
        p = self.p
        p.parse_punct(open_)
        exprs = []
        if not p.parse_optional_punct(close):
            while True:
                exprs.append(self.expr())
                if p.parse_optional_punct(close):
                    break
                p.parse_punct(",")
        return exprs

    def map_and_refs(self, exprs: Sequence) -> tuple[AffineMap, list]:
        return AffineMap(len(self.dims), len(self.syms), exprs), list(self.dims.values()) + list(self.syms.values())


def ssa_names(pr: FormPrinter, operands: Sequence[Value], num_dims: int) -> tuple[list[str], list[str]]:
    names = [pr.value_name(v) for v in operands]
    return names[:num_dims], [f"symbol({n})" for n in names[num_dims:]]


def print_affine_exprs_of_ssa_ids(pr: FormPrinter, amap: AffineMap, operands: Sequence[Value]) -> None:
    dims, syms = ssa_names(pr, operands, amap.num_dims)
    pr.write(", ".join(render(e, True, dims, syms) for e in amap.results))


def verify_dims_and_symbols(op: Operation, operands: Sequence[Value], num_dims: int) -> None:
    if not operands:  # finding the scope climbs every enclosing op: n nested loops made it O(n^2)
        return
    scope = get_affine_scope(op)
    for i, v in enumerate(operands):
        if i < num_dims:
            if not is_valid_dim(v, scope):
                raise op_error(op, "operand cannot be used as a dimension id")
        elif not is_valid_symbol(v, scope):
            raise op_error(op, "operand cannot be used as a symbol")
