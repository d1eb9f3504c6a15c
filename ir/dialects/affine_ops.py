"""The affine dialect: loops, conditionals, accesses and index arithmetic
whose bounds and subscripts are affine maps of dimension and symbol values.

(`ir/core/affine.py` holds the expressions, maps and sets themselves; this module
holds the ops.)  Custom forms print maps the way MLIR does: loop bounds as a
constant or a lone SSA symbol when the map is that trivial, else `#map(...)[...]`
with a `max`/`min` prefix for several results; subscripts inline over SSA
names (`%A[%i + 1, symbol(%n)]`).  Verifiers apply the dim/symbol rules of
`affine_rules` with MLIR's wording.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.records import constraints as C
from egraft.ir.core import types as T
from egraft.ir.core.affine import AffineMap, Const, Dim, Symbol, render
from egraft.ir.syntax.affine_parser import parse_affine_expr
from egraft.ir.core.operation import Operation, Region, Value
from egraft.ir.records.opdef import OpDef, RegionDef, Variadic
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.core.traits import Traits
from egraft.ir.records.registry import REGISTRY
from egraft.ir.verifier import op_error
from egraft.ir.dialects.affine_dims import get_affine_scope, is_valid_affine_index_operand, is_valid_dim, is_valid_symbol
from egraft.ir.dialects.func import print_return_like

_SYMBOL_IDENTITY = A.AffineMapAttr(AffineMap(0, 1, [Symbol(0)]))


# ------------------------------------------------------------------ shared assembly pieces


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


class _SSAExprParser:
    """Parses affine expressions over SSA names: `%i` becomes a dimension,
    `symbol(%n)` a symbol; each distinct name gets one position."""

    def __init__(self, p) -> None:
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


def ensure_terminator(region: Region) -> None:
    """Add the implicit `affine.yield` the custom form leaves out."""
    if not region.blocks:
        region.add_block()
    block = region.blocks[-1]
    last = block.last
    if last is None or last.opdef is None or not last.opdef.has_trait(Traits.Terminator):
        block.append(YIELD.build([]))


# ------------------------------------------------------------------ affine.apply / min / max


def _parse_map_op(p: FormParser) -> Operation:
    pos = p.pos
    attr = p.parse_attribute()
    if not isinstance(attr, A.AffineMapAttr):
        raise p.error("expected affine map", pos)
    dims, syms = parse_dim_and_symbol_list(p)
    if p.op_name == "affine.apply" and (len(dims) != attr.value.num_dims or len(syms) != attr.value.num_symbols):
        raise p.error("dimension or symbol index mismatch", pos)
    attrs = p.parse_optional_attr_dict()
    attrs["map"] = attr
    return p.create_op(operands=resolve_indices(p, dims + syms), result_types=[T.index], attributes=attrs)


def _print_map_op(pr: FormPrinter, op: Operation) -> None:
    amap = op.attr("map")
    pr.write(pr.op_name_text(op) + " ")
    pr.print_attribute(amap)
    print_dim_and_symbol_list(pr, op.operands, amap.value.num_dims)
    pr.print_op_attr_dict(op, elided=("map",))


def _verify_map_op(op: Operation) -> None:
    amap = op.attr("map").value
    if len(op.operands) != amap.num_dims + amap.num_symbols:
        raise op_error(op, "operand count and affine map dimension and symbol count must match")
    if op.name == "affine.apply" and len(amap.results) != 1:
        raise op_error(op, "mapping must produce one value")
    if op.name != "affine.apply":
        verify_dims_and_symbols(op, op.operands, amap.num_dims)


def _map_op(name: str, summary: str) -> OpDef:
    return OpDef(f"affine.{name}", summary=summary, operands=[("mapOperands", Variadic(C.Index))],
                 attributes=[("map", C.AffineMapAttr)], results=[("result", C.Index)], traits=(Traits.Pure,),
                 assembly=CustomForm(_parse_map_op, _print_map_op), verify=_verify_map_op)


APPLY = _map_op("apply", "affine apply operation")
MIN = _map_op("min", "min operation")
MAX = _map_op("max", "max operation")


# ------------------------------------------------------------------ affine.yield


def _parse_yield(p: FormParser) -> Operation:
    refs = p.parse_operand_ref_list()
    attrs = p.parse_optional_attr_dict()
    types = p.parse_colon_type_list() if refs else []
    return p.create_op("affine.yield", p.resolve_operands(refs, types), attributes=attrs)


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


# ------------------------------------------------------------------ affine.for


def _parse_bound(p: FormParser, lower: bool) -> tuple[A.AffineMapAttr, list]:
    """A loop bound: `%s`, a constant, or `[max|min] #map(dims)[syms]`."""
    prefix = "max" if lower else "min"
    has_prefix = p.parse_optional_keyword(prefix)
    ref = p.parse_optional_operand_ref()
    if ref is not None:
        return _SYMBOL_IDENTITY, [ref]
    p.skip_ws()
    pos = p.pos
    attr = p.parse_attribute()
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
    result_types: list[T.Type] = []
    if p.parse_optional_keyword("iter_args"):
        pairs = []
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
            raise p.error("'affine.for' op mismatch between the number of loop-carried values and results",
                          p.op_start)
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
    if inits:
        pr.write(" iter_args(" + ", ".join(f"{pr.value_name(a)} = {pr.value_name(v)}"
                                          for a, v in zip(body.args[1:], inits)) + ")")
        pr.write(" -> (")
        pr.print_types(op.result_types)
        pr.write(")")
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
    sp = _SSAExprParser(p)
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


# ------------------------------------------------------------------ affine.if


def _parse_if(p: FormParser) -> Operation:
    pos = p.pos
    attr = p.parse_attribute()
    if not isinstance(attr, A.IntegerSetAttr):
        raise p.error("expected integer set attribute", pos)
    dims, syms = parse_dim_and_symbol_list(p)
    if len(dims) != attr.value.num_dims:
        raise p.error("dim operand count and integer set dim count must match", pos)
    if len(syms) != attr.value.num_symbols:
        raise p.error("symbol operand count and integer set symbol count must match", pos)
    result_types = p.parse_function_result_types() if p.parse_optional_punct("->") else []
    then = p.parse_region()
    ensure_terminator(then)
    other = Region()
    if p.parse_optional_keyword("else"):
        other = p.parse_region()
        ensure_terminator(other)
    attrs = p.parse_optional_attr_dict()
    attrs["condition"] = attr
    return p.create_op("affine.if", resolve_indices(p, dims + syms), result_types, attrs, regions=[then, other])


def _print_if(pr: FormPrinter, op: Operation) -> None:
    cond = op.attr("condition")
    pr.write(pr.op_name_text(op) + " ")
    pr.print_attribute(cond)
    print_dim_and_symbol_list(pr, op.operands, cond.value.num_dims)
    pr.print_arrow_types(op.result_types)
    pr.write(" ")
    with_terms = bool(op.results)
    pr.print_region(op.regions[0], print_entry_args=False, print_block_terminators=with_terms)
    if op.regions[1].blocks:
        pr.write(" else ")
        pr.print_region(op.regions[1], print_entry_args=False, print_block_terminators=with_terms)
    pr.print_op_attr_dict(op, elided=("condition",))


def _verify_if(op: Operation) -> None:
    cond = op.attr("condition").value
    if len(op.operands) != cond.num_dims + cond.num_symbols:
        raise op_error(op, "operand count and condition integer set dimension and symbol count must match")
    for i, region in enumerate(op.regions):
        if region.blocks and region.blocks[0].args:
            raise op_error(op, f"region #{i} should have no arguments")
    verify_dims_and_symbols(op, op.operands, cond.num_dims)


IF = OpDef(
    "affine.if",
    summary="if-then-else operation",
    operands=[("operands", Variadic(C.AnyType))],
    attributes=[("condition", C.IntegerSetAttr)],
    results=[("results", Variadic(C.AnyType))],
    regions=[RegionDef("thenRegion", single_block=True), RegionDef("elseRegion", single_block=True)],
    traits=(Traits.RecursiveMemoryEffects, Traits.SingleBlockImplicitTerminator("affine.yield")),
    assembly=CustomForm(_parse_if, _print_if),
    verify=_verify_if,
)


# ------------------------------------------------------------------ affine.delinearize_index


def _parse_delinearize(p: FormParser) -> Operation:
    index = p.parse_operand_ref()
    p.parse_keyword("into")
    basis = p.parse_operand_ref_list("()")
    attrs = p.parse_optional_attr_dict()
    result_types = p.parse_colon_type_list()
    return p.create_op(operands=resolve_indices(p, [index, *basis]), result_types=result_types, attributes=attrs)


def _print_delinearize(pr: FormPrinter, op: Operation) -> None:
    pr.write(f"{pr.op_name_text(op)} ")
    pr.print_operand(op.operands[0])
    pr.write(" into (")
    pr.print_operands(op.operands[1:])
    pr.write(")")
    pr.print_op_attr_dict(op)
    pr.write(" : ")
    pr.print_types(op.result_types)


def _verify_delinearize(op: Operation) -> None:
    basis = op.operands[1:]
    if not basis:
        raise op_error(op, "basis should not be empty")
    if len(op.results) != len(basis):
        raise op_error(op, "should return an index for each basis element")


DELINEARIZE_INDEX = OpDef(
    "affine.delinearize_index",
    summary="delinearize an index",
    description="Splits a linear index into one index per basis element (the sizes of a row-major "
                "iteration space), as the operands of the basis give them.",
    operands=[("linear_index", C.Index), ("basis", Variadic(C.Index))],
    results=[("multi_index", Variadic(C.Index))],
    traits=(Traits.Pure,),
    assembly=CustomForm(_parse_delinearize, _print_delinearize),
    verify=_verify_delinearize,
)


# ------------------------------------------------------------------ loads and stores


def _parse_access(p: FormParser):
    """`%A[exprs] {attrs} : memref<...>[, vector<...>]` of a load or store."""
    ref = p.parse_operand_ref()
    sp = _SSAExprParser(p)
    exprs = sp.expr_list("[", "]")
    amap, idx_refs = sp.map_and_refs(exprs)
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = p.parse_type()
    if not isinstance(t, T.MemRefType):
        raise p.error("expected memref type")
    vector = None
    if p.op_name.startswith("affine.vector_"):
        p.parse_punct(",")
        vector = p.parse_type()
    attrs["map"] = A.AffineMapAttr(amap)
    return p.resolve_operand(ref, t), resolve_indices(p, idx_refs), attrs, t, vector


def _print_access(pr: FormPrinter, op, memref: Value, indices: Sequence[Value], vector: T.Type | None) -> None:
    pr.print_operand(memref)
    pr.write("[")
    print_affine_exprs_of_ssa_ids(pr, op.attr("map").value, indices)
    pr.write("]")
    pr.print_op_attr_dict(op, elided=("map",))
    pr.write(f" : {memref.type}")
    if vector is not None:
        pr.write(f", {vector}")


def _parse_load(p: FormParser) -> Operation:
    memref, idx, attrs, t, vector = _parse_access(p)
    return p.create_op(operands=[memref, *idx], result_types=[vector or t.element_type], attributes=attrs)


def _print_load(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    vector = op.results[0].type if op.name == "affine.vector_load" else None
    _print_access(pr, op, op.operands[0], op.operands[1:], vector)


def _parse_store(p: FormParser) -> Operation:
    vref = p.parse_operand_ref()
    p.parse_punct(",")
    memref, idx, attrs, t, vector = _parse_access(p)
    value = p.resolve_operand(vref, vector or t.element_type)
    return p.create_op(operands=[value, memref, *idx], attributes=attrs)


def _print_store(pr: FormPrinter, op: Operation) -> None:
    pr.write(pr.op_name_text(op) + " ")
    pr.print_operand(op.operands[0])
    pr.write(", ")
    vector = op.operands[0].type if op.name == "affine.vector_store" else None
    _print_access(pr, op, op.operands[1], op.operands[2:], vector)


def _verify_indexing(op: Operation, memref: Value, indices: Sequence[Value]) -> None:
    amap = op.attr("map").value
    t = memref.type
    if len(amap.results) != len(t.shape):
        raise op_error(op, "affine map num results must equal memref rank")
    if amap.num_dims + amap.num_symbols != len(indices):
        raise op_error(op, "expects as many subscripts as affine map inputs")
    scope = get_affine_scope(op)
    for v in indices:
        if v.type is not T.index:
            raise op_error(op, "index to load must have 'index' type")
        if not is_valid_affine_index_operand(v, scope):
            raise op_error(op, "index must be a dimension or symbol identifier")


def _verify_vector_type(op: Operation, memref: Value, vector: T.Type) -> None:
    if not isinstance(vector, T.VectorType) or memref.type.element_type is not vector.element_type:
        raise op_error(op, "requires memref and vector types of the same elemental type")


def _verify_load(op: Operation) -> None:
    memref = op.operands[0]
    if op.name == "affine.vector_load":
        _verify_vector_type(op, memref, op.results[0].type)
    elif op.results[0].type is not memref.type.element_type:
        raise op_error(op, "result type must match element type of memref")
    _verify_indexing(op, memref, op.operands[1:])


def _verify_store(op: Operation) -> None:
    value, memref = op.operands[0], op.operands[1]
    if op.name == "affine.vector_store":
        _verify_vector_type(op, memref, value.type)
    elif value.type is not memref.type.element_type:
        raise op_error(op, "value to store must have the same type as memref element type")
    _verify_indexing(op, memref, op.operands[2:])


def _load(name: str, summary: str) -> OpDef:
    return OpDef(f"affine.{name}", summary=summary,
                 operands=[("memref", C.AnyRankedMemRef), ("indices", Variadic(C.Index))],
                 attributes=[("map", C.AffineMapAttr)], results=[("result", C.AnyType)],
                 traits=(Traits.MemoryEffects(("read",)),), assembly=CustomForm(_parse_load, _print_load),
                 verify=_verify_load)


def _store(name: str, summary: str) -> OpDef:
    return OpDef(f"affine.{name}", summary=summary,
                 operands=[("value", C.AnyType), ("memref", C.AnyRankedMemRef), ("indices", Variadic(C.Index))],
                 attributes=[("map", C.AffineMapAttr)], traits=(Traits.MemoryEffects(("write",)),),
                 assembly=CustomForm(_parse_store, _print_store), verify=_verify_store)


LOAD = _load("load", "affine load operation")
STORE = _store("store", "affine store operation")
VECTOR_LOAD = _load("vector_load", "affine vector load operation")
VECTOR_STORE = _store("vector_store", "affine vector store operation")


AFFINE = REGISTRY.dialect("affine", summary="Affine loops, conditionals and accesses with dim/symbol rules.")
AFFINE.add(APPLY, MIN, MAX, YIELD, FOR, PARALLEL, IF, DELINEARIZE_INDEX, LOAD, STORE, VECTOR_LOAD, VECTOR_STORE)
