"""The affine loops, `affine.for` and `affine.parallel`, and `affine.yield`, which
ends their regions (and `affine.if`'s).

Bounds print as MLIR prints them: a constant or a lone SSA symbol when the map
is that trivial, else `#map(...)[...]` with a `max`/`min` prefix for several
results.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.affine import AffineMap, Const, Symbol, render
from egraft.ir.core.operation import Operation, Region, Value
from egraft.ir.core.traits import Traits
from egraft.ir.dialects.affine_forms import (SYMBOL_IDENTITY, SSAExprParser, parse_dim_and_symbol_list,
                                             print_dim_and_symbol_list, resolve_indices, ssa_names,
                                             verify_dims_and_symbols)
from egraft.ir.dialects.func import print_return_like
from egraft.ir.dialects.region_forms import ensure_terminator as add_terminator
from egraft.ir.dialects.region_forms import parse_iter_args, parse_yield, print_iter_args
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.verifier import op_error


# ------------------------------------------------------------------ affine.yield


def _parse_yield(p: FormParser) -> Operation:
    return parse_yield(p, "affine.yield")


def _verify_yield(op: Operation) -> None:
    parent = op.parent_op
    if parent is None:
        return
    results = parent.results
    if len(results) != len(op.operands):
        raise op_error(op, "parent of yield must have same number of results as the yield operands")
    for r, v in zip(results, op.operands):
        if r.type is not v.type:
            raise op_error(op, "types mismatch between yield op and its parent")


YIELD = OpDef(
    "affine.yield",
    summary="Yield values to parent operation",
    operands=[("operands", Variadic(C.AnyType))],
    traits=(Traits.Pure, Traits.Terminator, Traits.ReturnLike,
            Traits.ParentOneOf(("affine.for", "affine.if", "affine.parallel"))),
    assembly=CustomForm(_parse_yield, print_return_like),
    verify=_verify_yield,
)


def build_yield() -> Operation:
    """An operand-less `affine.yield` (the terminator the custom forms leave out)."""
    return YIELD.build([])


def ensure_terminator(region: Region) -> None:
    """Add the implicit `affine.yield` the custom form leaves out."""
    add_terminator(region, build_yield)


# ------------------------------------------------------------------ affine.for


def _parse_bound(p: FormParser, lower: bool) -> tuple[A.AffineMapAttr, list]:
    """A loop bound: `%s`, a constant, or `[max|min] #map(dims)[syms]`."""
    prefix = "max" if lower else "min"
    has_prefix = p.parse_optional_keyword(prefix)
    ref = p.parse_optional_operand_ref()
    if ref is not None:
        return SYMBOL_IDENTITY, [ref]
    p.skip_ws()
    pos = p.pos
    attr = p.parse_attribute(T.index)  # a constant bound is an index: past i64 is out of range, not wrapped
    if isinstance(attr, A.IntegerAttr) and not has_prefix:
        return A.AffineMapAttr(AffineMap(0, 0, [Const(attr.value)])), []
    if not isinstance(attr, A.AffineMapAttr):
        raise p.error("expected valid affine map representation for loop bounds", pos)
    amap = attr.value
    dims, syms = parse_dim_and_symbol_list(p)
    if len(dims) != amap.num_dims:
        raise p.error("dim operand count and affine map dim count must match", pos)
    if len(syms) != amap.num_symbols:
        raise p.error("symbol operand count and affine map symbol count must match", pos)
    if len(amap.results) > 1 and not has_prefix:
        raise p.error(f"{'lower' if lower else 'upper'} loop bound affine map with multiple results requires "
                      f"'{prefix}' prefix", pos)
    return attr, dims + syms


def _print_bound(pr: FormPrinter, attr: A.AffineMapAttr, operands: Sequence[Value], prefix: str) -> None:
    amap = attr.value
    if len(amap.results) == 1:
        e = amap.results[0]
        if amap.num_dims == 0 and amap.num_symbols == 0 and isinstance(e, Const):
            pr.write(str(e.value))
            return
        if amap.num_dims == 0 and amap.num_symbols == 1 and isinstance(e, Symbol):
            pr.print_operand(operands[0])
            return
    else:
        pr.write(prefix + " ")
    pr.print_attribute(attr)
    print_dim_and_symbol_list(pr, operands, amap.num_dims)


def _parse_for(p: FormParser) -> Operation:
    iv = p.parse_operand_ref()
    if iv[1] >= 0:
        raise p.error("result number not allowed", iv[2])
    p.parse_punct("=")
    lb, lb_refs = _parse_bound(p, True)
    p.parse_keyword("to", "between bounds")
    ub, ub_refs = _parse_bound(p, False)
    attrs: dict[str, A.Attribute] = {"lowerBoundMap": lb, "upperBoundMap": ub}
    step = 1
    if p.parse_optional_keyword("step"):
        p.skip_ws()
        pos = p.pos
        step_attr = p.parse_attribute(T.index)
        if not isinstance(step_attr, A.IntegerAttr) or step_attr.value <= 0:
            raise p.error("expected step to be representable as a positive signed integer", pos)
        step = step_attr.value
    attrs["step"] = A.IntegerAttr(step, T.index)
    entry = [(iv, T.index, None)]
    init_refs: list = []
    pairs, result_types = parse_iter_args(
        p, "'affine.for' op mismatch between the number of loop-carried values and results")
    for (arg, init), t in zip(pairs, result_types):
        entry.append((arg, t, None))
        init_refs.append((init, t))
    operands = resolve_indices(p, lb_refs + ub_refs) + [p.resolve_operand(r, t) for r, t in init_refs]
    region = p.parse_region(entry)
    ensure_terminator(region)
    attrs.update(p.parse_optional_attr_dict())
    attrs["operandSegmentSizes"] = A.DenseArrayAttr(T.i32, (len(lb_refs), len(ub_refs), len(init_refs)))
    return p.create_op("affine.for", operands, result_types, attrs, regions=[region])


def _print_for(pr: FormPrinter, op: Operation) -> None:
    groups = op.opdef.operand_groups(op)
    body = op.regions[0].blocks[0]
    pr.write(f"{pr.op_name_text(op)} {pr.value_name(body.args[0])} = ")
    _print_bound(pr, op.attr("lowerBoundMap"), groups["lowerBoundOperands"], "max")
    pr.write(" to ")
    _print_bound(pr, op.attr("upperBoundMap"), groups["upperBoundOperands"], "min")
    step = op.attr("step").value
    if step != 1:
        pr.write(f" step {step}")
    inits = groups["inits"]
    print_iter_args(pr, body.args[1:], inits, op.result_types)
    pr.write(" ")
    pr.print_region(op.regions[0], print_entry_args=False, print_block_terminators=bool(inits))
    pr.print_op_attr_dict(op, elided=("lowerBoundMap", "upperBoundMap", "step", "operandSegmentSizes"))


def _verify_for(op: Operation) -> None:
    groups = op.opdef.operand_groups(op)
    if len(groups["inits"]) != len(op.results):
        raise op_error(op, "mismatch between the number of loop-carried values and results")
    body = op.regions[0].blocks[0] if op.regions[0].blocks else None
    if body is None or len(body.args) != 1 + len(op.results) or body.args[0].type is not T.index:
        raise op_error(op, "expected body to have a single index argument for the induction variable")
    if op.attr("step").value <= 0:
        raise op_error(op, "expected step to be representable as a positive signed integer")
    for key, operands in (("lowerBoundMap", groups["lowerBoundOperands"]),
                          ("upperBoundMap", groups["upperBoundOperands"])):
        amap = op.attr(key).value
        if amap.num_dims + amap.num_symbols != len(operands):
            raise op_error(op, f"{'lower' if key[0] == 'l' else 'upper'} bound operand count does not equal "
                               "affine map dimension and symbol count")
        verify_dims_and_symbols(op, operands, amap.num_dims)


FOR = OpDef(
    "affine.for",
    summary="for operation",
    description="A loop from a lower to an upper bound (each the max/min of an affine map of dims and "
                "symbols) by a positive constant step, optionally carrying `iter_args` values.",
    operands=[("lowerBoundOperands", Variadic(C.Index)), ("upperBoundOperands", Variadic(C.Index)),
              ("inits", Variadic(C.AnyType))],
    attributes=[("lowerBoundMap", C.AffineMapAttr), ("upperBoundMap", C.AffineMapAttr), ("step", C.IndexAttr)],
    results=[("results", Variadic(C.AnyType))],
    regions=[RegionDef("region", single_block=True)],
    traits=(Traits.AttrSizedOperandSegments, Traits.RecursiveMemoryEffects,
            Traits.SingleBlockImplicitTerminator("affine.yield")),
    assembly=CustomForm(_parse_for, _print_for),
    verify=_verify_for,
)


# ------------------------------------------------------------------ affine.parallel

# arith's AtomicRMWKind: the enum values MLIR stores in `reductions`, each with
# the element kind it reduces (None: any type).  Index = enum value.
_REDUCTIONS: tuple[tuple[str, str | None], ...] = (
    ("addf", "float"), ("addi", "int"), ("assign", None), ("maximumf", "float"), ("maxs", "int"),
    ("maxu", "int"), ("minimumf", "float"), ("mins", "int"), ("minu", "int"), ("mulf", "float"),
    ("muli", "int"), ("ori", "int"), ("andi", "int"), ("maxnumf", "float"), ("minnumf", "float"),
)
_REDUCTION_CODES = {name: i for i, (name, _) in enumerate(_REDUCTIONS)}
#: The reduction names by enum value (the interpreter's affine.parallel reads them).
REDUCTION_KINDS: tuple[str, ...] = tuple(name for name, _ in _REDUCTIONS)
# Spellings MLIR used before `maximumf`/`minimumf` (upstream tests up to 2023 still write them).
_REDUCTION_CODES.update(maxf=_REDUCTION_CODES["maximumf"], minf=_REDUCTION_CODES["minimumf"])


def _group_sizes(attr: A.Attribute | None) -> list[int]:
    """The per-induction-variable result counts of a bounds map (an i32 elements attribute)."""
    if not isinstance(attr, A.DenseElementsAttr):
        return []
    return [int(x) for x in attr.to_numpy().ravel()]


def _groups_attr(sizes: Sequence[int]) -> A.DenseElementsAttr:
    return A.DenseElementsAttr(T.RankedTensorType((len(sizes),), T.i32, None), tuple(sizes))


def _parse_parallel_bounds(p: FormParser, keyword: str) -> tuple[AffineMap, list[int], list]:
    """`(e, max(e, e), ...)`: one group of map results per induction variable;
    all groups share one map whose dims and symbols are the SSA names in
    order of appearance."""
    sp = SSAExprParser(p)
    exprs: list = []
    sizes: list[int] = []
    p.parse_punct("(")
    if not p.parse_optional_punct(")"):
        while True:
            group = sp.expr_list("(", ")") if p.parse_optional_keyword(keyword) else [sp.expr()]
            exprs += group
            sizes.append(len(group))
            if p.parse_optional_punct(")"):
                break
            p.parse_punct(",")
    amap, refs = sp.map_and_refs(exprs)
    return amap, sizes, refs


def _parse_int_list(p: FormParser) -> list[int]:
    p.parse_punct("(")
    values: list[int] = []
    if not p.parse_optional_punct(")"):
        while True:
            values.append(p.parse_integer())
            if p.parse_optional_punct(")"):
                break
            p.parse_punct(",")
    return values


def _parse_reductions(p: FormParser) -> list[A.IntegerAttr]:
    p.parse_punct("(")
    codes: list[A.IntegerAttr] = []
    if not p.parse_optional_punct(")"):
        while True:
            p.skip_ws()
            pos = p.pos
            attr = p.parse_attribute()
            code = _REDUCTION_CODES.get(attr.value) if isinstance(attr, A.StringAttr) else None
            if code is None:
                raise p.error(f"invalid reduction value: {attr}", pos)
            codes.append(A.IntegerAttr(code, T.i64))
            if p.parse_optional_punct(")"):
                break
            p.parse_punct(",")
    return codes


def _parse_parallel(p: FormParser) -> Operation:
    ivs = p.parse_operand_ref_list("()")
    p.parse_punct("=")
    lb, lb_sizes, lb_refs = _parse_parallel_bounds(p, "max")
    p.parse_keyword("to", "between bounds")
    ub, ub_sizes, ub_refs = _parse_parallel_bounds(p, "min")
    steps = _parse_int_list(p) if p.parse_optional_keyword("step") else [1] * len(ivs)
    reductions = _parse_reductions(p) if p.parse_optional_keyword("reduce") else []
    result_types = p.parse_function_result_types() if p.parse_optional_punct("->") else []
    operands = resolve_indices(p, lb_refs + ub_refs)
    region = p.parse_region([(iv, T.index, None) for iv in ivs])
    ensure_terminator(region)
    attrs = p.parse_optional_attr_dict()
    attrs.update(reductions=A.ArrayAttr(tuple(reductions)),
                 lowerBoundsMap=A.AffineMapAttr(lb), lowerBoundsGroups=_groups_attr(lb_sizes),
                 upperBoundsMap=A.AffineMapAttr(ub), upperBoundsGroups=_groups_attr(ub_sizes),
                 steps=A.ArrayAttr(tuple(A.IntegerAttr(s, T.i64) for s in steps)))
    return p.create_op("affine.parallel", operands, result_types, attrs, regions=[region])


def _print_parallel_bounds(pr: FormPrinter, amap: AffineMap, sizes: Sequence[int], operands: Sequence[Value],
                           keyword: str) -> None:
    dims, syms = ssa_names(pr, operands, amap.num_dims)
    texts = [render(e, True, dims, syms) for e in amap.results]
    groups, start = [], 0
    for size in sizes:
        part = ", ".join(texts[start:start + size])
        groups.append(part if size == 1 else f"{keyword}({part})")
        start += size
    pr.write("(" + ", ".join(groups) + ")")


def _parallel_operands(op: Operation) -> tuple[list[Value], list[Value]]:
    """The lower- and upper-bound operands: one operand list split by the lower map's inputs."""
    lb = op.attr("lowerBoundsMap").value
    n = lb.num_dims + lb.num_symbols
    return list(op.operands[:n]), list(op.operands[n:])


def _print_parallel(pr: FormPrinter, op: Operation) -> None:
    body = op.regions[0].blocks[0]
    lb_ops, ub_ops = _parallel_operands(op)
    pr.write(f"{pr.op_name_text(op)} (" + ", ".join(pr.value_name(a) for a in body.args) + ") = ")
    _print_parallel_bounds(pr, op.attr("lowerBoundsMap").value, _group_sizes(op.attr("lowerBoundsGroups")),
                           lb_ops, "max")
    pr.write(" to ")
    _print_parallel_bounds(pr, op.attr("upperBoundsMap").value, _group_sizes(op.attr("upperBoundsGroups")),
                           ub_ops, "min")
    steps = [s.value for s in op.attr("steps")]
    if any(s != 1 for s in steps):
        pr.write(" step (" + ", ".join(map(str, steps)) + ")")
    if op.results:
        pr.write(" reduce (" + ", ".join(f'"{_REDUCTIONS[r.value][0]}"' for r in op.attr("reductions")) + ")")
        pr.write(" -> (")
        pr.print_types(op.result_types)
        pr.write(")")
    pr.write(" ")
    pr.print_region(op.regions[0], print_entry_args=False, print_block_terminators=bool(op.results))
    pr.print_op_attr_dict(op, elided=("reductions", "lowerBoundsMap", "lowerBoundsGroups", "upperBoundsMap",
                                      "upperBoundsGroups", "steps"))


def _reduction_fits(kind: str | None, t: T.Type) -> bool:
    if kind == "float":
        return isinstance(t, T.FloatType)
    if kind == "int":
        return isinstance(t, T.IntegerType)
    return True


def _verify_parallel(op: Operation) -> None:
    body = op.regions[0].blocks[0] if op.regions[0].blocks else None
    n_args = len(body.args) if body is not None else 0
    lb_sizes, ub_sizes = _group_sizes(op.attr("lowerBoundsGroups")), _group_sizes(op.attr("upperBoundsGroups"))
    n_steps = len(op.attr("steps"))
    if not n_args == len(lb_sizes) == len(ub_sizes) == n_steps:
        raise op_error(op, f"the number of region arguments ({n_args}) and the number of map groups for lower "
                           f"({len(lb_sizes)}) and upper bound ({len(ub_sizes)}), and the number of steps "
                           f"({n_steps}) must all match")
    for which, sizes in (("lower", lb_sizes), ("upper", ub_sizes)):
        amap = op.attr(f"{which}BoundsMap").value
        if sum(sizes) != len(amap.results):
            raise op_error(op, f"expected {which} bounds map to have {sum(sizes)} results")
    reductions = op.attr("reductions")
    if len(reductions) != len(op.results):
        raise op_error(op, "a reduction must be specified for each output")
    for r, result in zip(reductions, op.results):
        if not isinstance(r, A.IntegerAttr) or not 0 <= r.value < len(_REDUCTIONS):
            raise op_error(op, "invalid reduction attribute")
        if not _reduction_fits(_REDUCTIONS[r.value][1], result.type):
            raise op_error(op, "result type cannot match reduction attribute")
    for key, operands in zip(("lowerBoundsMap", "upperBoundsMap"), _parallel_operands(op)):
        verify_dims_and_symbols(op, operands, op.attr(key).value.num_dims)


PARALLEL = OpDef(
    "affine.parallel",
    summary="multi-index parallel band operation",
    description="A band of parallel loops, one induction variable each, with max/min groups of affine "
                "bounds and constant steps; results are reductions of the yielded values.",
    operands=[("mapOperands", Variadic(C.Index))],
    attributes=[("reductions", C.ArrayAttr), ("lowerBoundsMap", C.AffineMapAttr),
                ("lowerBoundsGroups", C.ElementsAttr), ("upperBoundsMap", C.AffineMapAttr),
                ("upperBoundsGroups", C.ElementsAttr), ("steps", C.I64ArrayAttr)],
    results=[("results", Variadic(C.AnyType))],
    regions=[RegionDef("region", single_block=True)],
    traits=(Traits.RecursiveMemoryEffects, Traits.SingleBlockImplicitTerminator("affine.yield")),
    assembly=CustomForm(_parse_parallel, _print_parallel),
    verify=_verify_parallel,
)


