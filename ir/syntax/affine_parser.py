"""Parsing affine expressions, maps and integer sets (`(d0)[s0] -> (d0 + s0)`).

Only tokens are needed, so the functions take the lexer; custom forms of the
affine ops reuse `parse_affine_expr` with their own name resolution (SSA
operands as dimensions and symbols).
"""

from __future__ import annotations

from typing import Callable

from egraft.ir.core.affine import AffineExpr, AffineMap, Const, Dim, IntegerSet, Symbol, simplify_div
from egraft.ir.core.deep import MAX_NESTING
from egraft.ir.syntax.lexer import Lexer

Resolver = Callable[[str, int], AffineExpr]


def parse_affine_expr(p: Lexer, resolve: Resolver) -> AffineExpr:
    """An affine expression; `resolve(name, offset)` maps identifiers
    (dimension and symbol names, or SSA names in custom forms) to exprs."""
    return _parse_sum(p, resolve)


def _check_depth(p: Lexer, expr: AffineExpr, pos: int) -> AffineExpr:
    """A long chain of operators (`d0 mod 2 mod 3 ...`) nests the expression
    tree as deeply as parentheses do: it counts against the same bound."""
    if expr.depth + p.depth > MAX_NESTING:
        p.enter(pos)  # reports the nesting, as for any other construct
    return expr


def _parse_sum(p: Lexer, resolve: Resolver) -> AffineExpr:
    expr = _parse_product(p, resolve)
    while True:
        p.skip_ws()
        pos = p.pos
        if p.parse_optional_punct("+"):
            expr = _check_depth(p, expr + _parse_product(p, resolve), pos)
        elif p.peek(2) != "->" and p.parse_optional_punct("-"):
            expr = _check_depth(p, expr - _parse_product(p, resolve), pos)
        else:
            return expr


def _parse_product(p: Lexer, resolve: Resolver) -> AffineExpr:
    expr = _parse_unary(p, resolve)
    while True:
        expr = _check_depth(p, expr, p.pos)
        if p.parse_optional_punct("*"):
            rhs = _parse_unary(p, resolve)
            if not (isinstance(rhs, Const) or isinstance(expr, Const) or rhs.is_symbolic_or_constant()
                    or expr.is_symbolic_or_constant()):
                raise p.error("non-affine expression: at least one of the multiply operands has to be either a constant or symbolic")
            expr = expr * rhs
        elif p.parse_optional_keyword("floordiv"):
            expr = _checked_div(p, expr, _parse_unary(p, resolve), "floordiv")
        elif p.parse_optional_keyword("ceildiv"):
            expr = _checked_div(p, expr, _parse_unary(p, resolve), "ceildiv")
        elif p.parse_optional_keyword("mod"):
            expr = _checked_div(p, expr, _parse_unary(p, resolve), "mod")
        else:
            return expr


def _checked_div(p: Lexer, lhs: AffineExpr, rhs: AffineExpr, kind: str) -> AffineExpr:
    if not rhs.is_symbolic_or_constant():
        raise p.error(f"non-affine expression: right operand of {kind} has to be either a constant or symbolic")
    return simplify_div(lhs, rhs, kind)


def _parse_unary(p: Lexer, resolve: Resolver) -> AffineExpr:
    p.skip_ws()
    start = p.pos
    if p.text.startswith(("-", "("), start):
        p.enter(start)
        try:
            p.pos += 1
            if p.text[start] == "-":
                return -_parse_unary(p, resolve)
            e = _parse_sum(p, resolve)
            p.parse_punct(")")
            return e
        finally:
            p.depth -= 1
    n = p.parse_optional_integer()
    if n is not None:
        return Const(n)
    pos = p.pos
    name = p.text[pos:pos + 1]
    if name in ("%",):
        ref = p.parse_operand_ref()
        return resolve("%" + ref[0] + (f"#{ref[1]}" if ref[1] >= 0 else ""), ref[2])
    ident = p.parse_optional_bare_id()
    if ident is None:
        raise p.error("expected affine expression")
    return resolve(ident, pos)


def parse_dim_and_symbol_lists(p: Lexer) -> tuple[dict[str, AffineExpr], int, int]:
    names: dict[str, AffineExpr] = {}
    p.parse_punct("(")
    nd = 0
    if not p.parse_optional_punct(")"):
        while True:
            pos = p.pos
            name = p.parse_bare_id("dimension identifier")
            if name in names:
                raise p.error(f"redefinition of identifier '{name}'", pos)
            names[name] = Dim(nd)
            nd += 1
            if p.parse_optional_punct(")"):
                break
            p.parse_punct(",")
    ns = 0
    if p.parse_optional_punct("["):
        if not p.parse_optional_punct("]"):
            while True:
                pos = p.pos
                name = p.parse_bare_id("symbol identifier")
                if name in names:
                    raise p.error(f"redefinition of identifier '{name}'", pos)
                names[name] = Symbol(ns)
                ns += 1
                if p.parse_optional_punct("]"):
                    break
                p.parse_punct(",")
    return names, nd, ns


def _parse_2019_zero_comparison(p: Lexer) -> bool:
    """`>= 0` (False) or `== 0` (True), with 2019's diagnostics for anything else."""
    for punct, is_eq in ((">=", False), ("==", True)):
        if p.parse_optional_punct(punct):
            n = p.parse_optional_integer()
            if n is None:
                break
            if n != 0:
                raise p.error(f"expected '0' after '{punct}'")
            return is_eq
    raise p.error("expected '== 0' or '>= 0' at end of affine constraint")


def parse_affine_map_or_set(p: Lexer, want_set: bool | None) -> AffineMap | IntegerSet:
    """`(d0)[s0] -> (...)` or `(d0)[s0] : (...)`; `want_set` None accepts either."""
    names, nd, ns = parse_dim_and_symbol_lists(p)

    def resolve(name: str, pos: int) -> AffineExpr:
        e = names.get(name)
        if e is None:
            raise p.error(f"use of undeclared identifier '{name}'", pos)
        return e

    if want_set is not True and p.parse_optional_punct("->"):
        p.parse_punct("(", "at start of affine map range")
        results: list[AffineExpr] = []
        if not p.parse_optional_punct(")"):
            while True:
                results.append(parse_affine_expr(p, resolve))
                if p.parse_optional_punct(")"):
                    break
                p.parse_punct(",")
        return AffineMap(nd, ns, results)
    p.parse_punct(":", "or '->' in affine map or integer set")
    p.parse_punct("(", "at start of integer set constraint list")
    constraints: list[tuple[AffineExpr, bool]] = []
    if p.parse_optional_punct(")"):  # no constraints: always true, `0 == 0`
        return IntegerSet(nd, ns, [(Const(0), True)])
    # A bare set (no `affine_set<>`) in 2019-syntax text: 2019 compared with zero only.
    era = want_set is None and getattr(p, "std_era", False)
    while True:
        lhs = parse_affine_expr(p, resolve)
        if era:
            constraints.append((lhs, _parse_2019_zero_comparison(p)))
        elif p.parse_optional_punct(">="):
            rhs = parse_affine_expr(p, resolve)
            constraints.append((lhs - rhs, False))
        elif p.parse_optional_punct("<="):
            rhs = parse_affine_expr(p, resolve)
            constraints.append((rhs - lhs, False))
        elif p.parse_optional_punct("=="):
            rhs = parse_affine_expr(p, resolve)
            constraints.append((lhs - rhs, True))
        else:
            raise p.error("expected '== affine-expr' or '>= affine-expr' at end of affine constraint")
        if p.parse_optional_punct(")"):
            break
        p.parse_punct(",")
    if len(constraints) == 1 and isinstance(constraints[0][0], Const) and constraints[0][0].value == 1 \
            and constraints[0][1]:
        constraints = []
    return IntegerSet(nd, ns, constraints)
