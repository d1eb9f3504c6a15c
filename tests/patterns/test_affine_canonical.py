"""Affine canonicalization (`memref-affine-canonical`: its rules and its steps `affine-maps` and
`affine-loops`) checked against the reference interpreter on generated programs.

The program generator draws affine maps and integer sets (random expressions over dims, symbols
and constants, with mul/floordiv/ceildiv/mod by constants), chains of affine.apply/min/max over
function arguments, constants and earlier results, loops with constant or min-bounded trip counts
(zero, one and several iterations, some carrying a value), affine.if with decided and undecided
conditions (some yielding a value), and stores
of index values into a memref argument, so the final memory is compared as well as the results.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from egraft.ir import parse, print_ir
from egraft.ir.core import affine as AF
from egraft.ir.semantics.affine import eval_expr
from egraft.ir.semantics.compare import check_agreement
from egraft.ir.semantics.values import MemRef
from egraft.ir.verifier import verify
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness import assert_pass_sound
from egraft.patterns import rule_set
from egraft.patterns.affine_flatten import simplify_expr
from egraft.rewrite.greedy.driver import apply_rules_greedily
from egraft.rewrite.structural.affine_loops import simplify_affine_control
from egraft.rewrite.structural.affine_maps import canonicalize_affine_maps

SETTINGS = settings(max_examples=40, deadline=None, database=None,
                    suppress_health_check=(HealthCheck.too_slow, HealthCheck.filter_too_much))
N_ARGS = 3
MEM = "memref<16xindex>"


# ------------------------------------------------------------------ generators


@st.composite
def exprs(draw, nd: int, ns: int, depth: int = 2) -> AF.AffineExpr:
    """A random affine expression over `nd` dims and `ns` symbols."""
    leaves = [AF.Const(draw(st.integers(-4, 9)))]
    leaves += [AF.Dim(i) for i in range(nd)] + [AF.Symbol(i) for i in range(ns)]
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(leaves))
    kind = draw(st.sampled_from(["add", "add", "mul", "floordiv", "ceildiv", "mod"]))
    lhs = draw(exprs(nd, ns, depth - 1))
    if kind == "add":
        return lhs + draw(exprs(nd, ns, depth - 1))
    if kind == "mul":
        return lhs * draw(st.integers(-3, 4))
    return AF.simplify_div(lhs, AF.Const(draw(st.integers(1, 5))), kind)


@st.composite
def maps(draw, nd: int, ns: int, results: int) -> AF.AffineMap:
    return AF.AffineMap(nd, ns, [draw(exprs(nd, ns)) for _ in range(results)])


class Program:
    """MLIR text of one function under construction: index values in scope and body lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.top: list[str] = [f"%a{i}" for i in range(N_ARGS)]  # valid symbols everywhere
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"


@st.composite
def map_op(draw, prog: Program, pool: list[str], symbols: list[str], indent: str) -> tuple[str, str]:
    """An affine.apply/min/max over values of `pool` (dims) and `symbols` (symbols only)."""
    name = draw(st.sampled_from(["affine.apply", "affine.apply", "affine.min", "affine.max"]))
    nd, ns = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    results = 1 if name == "affine.apply" else draw(st.integers(1, 3))
    amap = draw(maps(nd, ns, results))
    dims = [draw(st.sampled_from(pool)) for _ in range(nd)]
    syms = [draw(st.sampled_from(symbols)) for _ in range(ns)]
    v = prog.fresh()
    prog.lines.append(f"{indent}{v} = {name} affine_map<{amap}>({', '.join(dims)})[{', '.join(syms)}]")
    return v, name


@st.composite
def store(draw, prog: Program, pool: list[str], indent: str) -> None:
    """`affine.store` of a value of `pool` at a drawn expression of another, mod 16 (in bounds)."""
    index = AF.render(draw(exprs(1, 0)), True, [draw(st.sampled_from(pool))])
    prog.lines.append(f"{indent}affine.store {draw(st.sampled_from(pool))}, %m[({index}) mod 16] : {MEM}")


@st.composite
def block(draw, prog: Program, pool: list[str], indent: str, depth: int) -> list[str]:
    """A few ops at one nesting level; returns the values defined (usable after it in this block)."""
    local = list(pool)
    at_top = depth == 0
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["map", "map", "const", "store", "for", "if", "carry"] if depth < 2 else
                                    ["map", "map", "const", "store"]))
        if kind == "const":
            v = prog.fresh()
            prog.lines.append(f"{indent}{v} = arith.constant {draw(st.integers(-3, 12))} : index")
            local.append(v)
            if at_top:
                prog.top.append(v)
        elif kind == "map":
            v, name = draw(map_op(prog, local, prog.top, indent))
            if at_top:
                prog.top.append(v)
            if at_top or name == "affine.apply":  # a min/max inside a loop is no valid dim
                local.append(v)
        elif kind == "store":
            draw(store(prog, local, indent))
        elif kind == "carry":  # a loop carrying a value, or an if yielding one
            v, init = prog.fresh(), draw(st.sampled_from(local))
            lb = draw(st.integers(-1, 3))
            if draw(st.booleans()):
                iv, acc = prog.fresh(), prog.fresh()
                prog.lines.append(f"{indent}{v} = affine.for {iv} = {lb} to {lb + draw(st.sampled_from([-1, 0, 1, 3]))}"
                                  f" iter_args({acc} = {init}) -> (index) {{")
                step = draw(map_op(prog, local + [iv], prog.top, indent + "  "))[0]
                prog.lines.append(f"{indent}  {prog.fresh()} = arith.addi {acc}, {step} : index")
                prog.lines.append(f"{indent}  affine.yield %v{prog.n} : index")
            else:
                cond = draw(exprs(1, 0))
                prog.lines.append(f"{indent}{v} = affine.if affine_set<(d0) : ({cond} >= 0)>({init}) -> index {{")
                prog.lines.append(f"{indent}  affine.yield {draw(st.sampled_from(local))} : index")
                prog.lines.append(f"{indent}}} else {{")
                prog.lines.append(f"{indent}  affine.yield {draw(st.sampled_from(local))} : index")
            prog.lines.append(f"{indent}}}")
            if at_top:  # a result defined at the top level is a valid symbol
                prog.top.append(v)
                local.append(v)
        elif kind == "for":
            lb = draw(st.integers(-1, 3))
            ub = draw(st.sampled_from([str(lb + d) for d in (-1, 0, 1, 1, 2, 4)] +
                                      [f"min affine_map<()[s0] -> (s0, {lb + 3})>()[{draw(st.sampled_from(prog.top))}]"]))
            step = draw(st.sampled_from(["", " step 2"]))
            iv = prog.fresh()
            prog.lines.append(f"{indent}affine.for {iv} = {lb} to {ub}{step} {{")
            prog.lines.append(f"{indent}  affine.store {iv}, %m[({iv} + {draw(st.integers(0, 15))}) mod 16] : {MEM}")
            draw(block(prog, local + [iv], indent + "  ", depth + 1))
            prog.lines.append(f"{indent}}}")
        else:
            iset = draw(maps(1, 1, draw(st.integers(1, 2))))
            cons = ", ".join(f"{e} {draw(st.sampled_from(['>=', '>=', '==']))} 0" for e in iset.results)
            d, s = draw(st.sampled_from(local)), draw(st.sampled_from(prog.top))
            prog.lines.append(f"{indent}affine.if affine_set<(d0)[s0] : ({cons})>({d})[{s}] {{")
            draw(block(prog, local, indent + "  ", depth + 1))
            if draw(st.booleans()):
                prog.lines.append(f"{indent}}} else {{")
                draw(block(prog, local, indent + "  ", depth + 1))
            prog.lines.append(f"{indent}}}")
    return local


@st.composite
def programs(draw) -> str:
    """A function of N_ARGS index arguments and a memref it stores into; returns its index values."""
    prog = Program()
    draw(block(prog, list(prog.top), "  ", 0))
    outs = prog.top[N_ARGS:] or prog.top[:1]
    args = ", ".join(f"%a{i}: index" for i in range(N_ARGS))
    return (f"func.func @f(%m: {MEM}, {args}) -> ({', '.join('index' for _ in outs)}) {{\n" + "\n".join(prog.lines)
            + f"\n  return {', '.join(outs)} : {', '.join('index' for _ in outs)}\n}}\n")


def _inputs(draw) -> list:
    ints = [np.asarray(draw(st.integers(-20, 40)), np.int64) for _ in range(N_ARGS)]
    return [MemRef(np.asarray(draw(st.lists(st.integers(0, 9), min_size=16, max_size=16)), np.int64)), *ints]


def _check(data, before_text: str, after) -> None:
    before = parse(before_text)
    note(f"before:\n{before_text}\nafter:\n{print_ir(after)}")
    verify(after)
    for _ in range(3):
        check_agreement(before, after, _inputs(data.draw), True, None)


# ------------------------------------------------------------------ the pass, both drivers


@pytest.mark.parametrize("driver", ["egraph", "greedy"])
def test_canonicalize_keeps_results_and_memory(driver: str) -> None:
    pipeline = parse_pipeline(f"func.func(canonicalize{{driver={driver} rules=memref-affine-canonical}})")

    @SETTINGS
    @given(st.data())
    def run(data) -> None:
        text = data.draw(programs(), label="program")
        verify(parse(text))
        after = parse(text)
        PassManager(pipeline).run(after)
        _check(data, text, after)

    run()


def test_steps_alone_keep_results_and_memory() -> None:
    """The two structural steps without the rules (what they do is not hidden by a rule)."""
    @SETTINGS
    @given(st.data())
    def run(data) -> None:
        text = data.draw(programs(), label="program")
        after = parse(text)
        simplify_affine_control(after)
        canonicalize_affine_maps(after)
        simplify_affine_control(after)
        _check(data, text, after)

    run()


# ------------------------------------------------------------------ each rule on its own


def _instance(draw, name: str) -> str:
    """A function whose body the rule `name` matches, with drawn maps and operand sources."""
    arity = [int(x) for x in re.findall(r"\d+", name)]
    args = [f"%a{i}" for i in range(N_ARGS)]
    lines: list[str] = []
    kind = name.split("-")[1]
    op = f"affine.{kind}"

    def operands(n: int, constant: bool) -> list[str]:
        out = []
        for i in range(n):
            if constant:
                lines.append(f"  %c{i} = arith.constant {draw(st.integers(-5, 12))} : index")
                out.append(f"%c{i}")
            else:
                out.append(draw(st.sampled_from(args)))
        return out

    def call(opname: str, vals: list[str], results: int, res: str) -> None:
        nd = draw(st.integers(0, len(vals)))
        amap = draw(maps(nd, len(vals) - nd, results))
        if "results" in name and draw(st.booleans()):  # duplicate and constant results to drop
            amap = AF.AffineMap(amap.num_dims, amap.num_symbols,
                                [*amap.results, amap.results[0], AF.Const(draw(st.integers(-3, 9))),
                                 AF.Const(draw(st.integers(-3, 9)))])
        lines.append(f"  {res} = {opname} affine_map<{amap}>({', '.join(vals[:nd])})[{', '.join(vals[nd:])}]")

    if "compose" in name:
        n, k, j = arity
        inner = operands(j, False)
        call("affine.apply", inner, 1, "%inner")
        outer = operands(n, False)
        outer[k] = "%inner"
        call(op, outer, 1, "%r")
    elif "constant-map" in name:
        lines.append(f"  %r = affine.apply affine_map<(d0) -> ({draw(st.integers(-5, 9))})>(%a0)")
    elif "const" in name:
        call(op, operands(arity[0], True), 1 if kind == "apply" else draw(st.integers(1, 3)), "%r")
    elif "identity" in name:
        lines.append(draw(st.sampled_from(["  %r = affine.apply affine_map<(d0) -> (d0)>(%a1)",
                                           "  %r = affine.apply affine_map<()[s0] -> (s0)>()[%a1]"])))
    else:  # single-result / results: over a whole operand group, of any length
        call(op, operands(draw(st.integers(0, 3)), False), 1 if "single" in name else draw(st.integers(1, 3)), "%r")
    sig = ", ".join(f"{a}: index" for a in args)
    return f"func.func @f(%m: {MEM}, {sig}) -> index {{\n" + "\n".join(lines) + "\n  return %r : index\n}\n"


#: The rules over affine.apply/min/max (the load/store composition rules are checked in
#: tests/canonicalize/test_soundness.py on accesses).
_PURE_RULES = [r for r in rule_set("memref-affine-canonical").rules
               if re.match(r"affine-(apply|min|max)-", r.name)]


@pytest.mark.parametrize("rule", _PURE_RULES, ids=[r.name for r in _PURE_RULES])
def test_rule_is_sound(rule) -> None:
    """Each e-graph rule alone, on instances of its pattern with drawn maps; it must apply."""
    applied = [0]

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=(HealthCheck.too_slow,))
    @given(st.data())
    def run(data) -> None:
        text = _instance(data.draw, rule.name)
        after = parse(text)
        report = apply_rules_greedily(after, [rule], fold=False)
        applied[0] += report.rewrites[rule.name] > 0
        _check(data, text, after)

    run()
    assert applied[0] > 0, f"{rule.name} never applied to its instances"


# ------------------------------------------------------------------ what the steps produce


def _canonical(text: str) -> str:
    module = parse(text)
    PassManager(parse_pipeline("func.func(canonicalize)")).run(module)
    return print_ir(module)


def test_zero_trip_loop_gives_its_inits_and_one_trip_loop_is_inlined() -> None:
    out = _canonical(f"""
func.func @f(%m: {MEM}, %x: index) -> (index, index) {{
  %r = affine.for %i = 3 to 3 iter_args(%s = %x) -> (index) {{
    %t = affine.apply affine_map<(d0)[s0] -> (d0 + s0)>(%i)[%s]
    affine.yield %t : index
  }}
  %q = affine.for %i = 4 to 6 step 2 iter_args(%s = %x) -> (index) {{
    %t = affine.apply affine_map<(d0)[s0] -> (d0 + s0)>(%i)[%s]
    affine.store %t, %m[%i] : {MEM}
    affine.yield %t : index
  }}
  return %r, %q : index, index
}}""")
    assert "affine.for" not in out
    assert "affine.store %0, %arg0[4]" in out and "return %arg1, %0" in out, out


def test_decided_if_and_empty_ops_go_undecided_stay() -> None:
    out = _canonical(f"""
func.func @f(%m: {MEM}, %n: index) {{
  %c3 = arith.constant 3 : index
  affine.if affine_set<(d0) : (d0 - 5 >= 0)>(%c3) {{
    affine.store %n, %m[0] : {MEM}
  }} else {{
    affine.store %n, %m[1] : {MEM}
  }}
  affine.for %i = 0 to %n {{
  }}
  affine.if affine_set<()[s0] : (s0 >= 0)>()[%n] {{
    affine.store %n, %m[2] : {MEM}
  }} else {{
  }}
  return
}}""")
    assert "%arg0[1]" in out and "%arg0[0]" not in out
    assert out.count("affine.if") == 1 and "else" not in out and "affine.for" not in out, out


def test_loop_bound_canonicalized_and_folded() -> None:
    """MLIR's canonicalize_bounds/constant_fold_bounds cases: constants folded into bounds,
    duplicates and unused operands dropped, a dim that is a valid symbol promoted."""
    out = _canonical(f"""
func.func @f(%m: {MEM}, %M: index, %N: index) {{
  %c1024 = arith.constant 1024 : index
  %c2 = arith.constant 2 : index
  %c3 = affine.apply affine_map<(d0) -> (d0 + 1)>(%c2)
  affine.for %i = 0 to min affine_map<(d0, d1, d2, d3) -> (d0, d1 + d2)>(%c1024, %M, %M, %N) {{
    affine.store %i, %m[%i mod 16] : {MEM}
  }}
  affine.for %j = max affine_map<(d0, d1) -> (0, d0 + d1)>(%c2, %c3) to 7 {{
    affine.store %j, %m[%j] : {MEM}
  }}
  return
}}""")
    assert "affine_map<()[s0] -> (1024, s0 * 2)>" in out and "affine.for %arg3 = 5 to 7" in out, out


def test_composition_stops_at_the_depth_bound() -> None:
    """A chain of applies each doubling its operand's expression is composed up to MAX_COMPOSED_DEPTH
    only: the work stays bounded on any input."""
    lines = ["  %v0 = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%x)"]
    for i in range(1, 80):
        lines.append(f"  %v{i} = affine.apply affine_map<(d0) -> ((d0 + 1) floordiv 2)>(%v{i - 1})")
    out = _canonical(f"func.func @f(%x: index) -> index {{\n" + "\n".join(lines) + "\n  return %v79 : index\n}")
    verify(parse(out))
    assert 1 < out.count("affine.apply") < 80


LIT = Path(__file__).parents[1] / "lit" / "affine_canonicalize.mlir"


@pytest.mark.parametrize("driver", ["egraph", "greedy"])
def test_lit_cases_are_sound(driver: str) -> None:
    """The lit cases whose loops have bounded trip counts on any input (the others loop to an
    argument: the interpreter would run up to 2^63 iterations), before and after the pass."""
    chunks = LIT.read_text().split("// -----")
    bounded = [c for c in chunks if re.search(r"func\.func @(compose|min_max|bounds|merge_min)\b", c)]
    assert len(bounded) == 4
    for chunk in bounded:
        assert_pass_sound(chunk, f"func.func(canonicalize{{driver={driver}}})", examples=15)


# ------------------------------------------------------------------ MLIR's simplified form


@SETTINGS
@given(st.data())
def test_simplified_expression_computes_the_same(data) -> None:
    """simplify_expr keeps the value of every drawn expression (dims, symbols, constant products,
    floordiv/ceildiv/mod by constants, semi-affine products left as they are)."""
    e = data.draw(exprs(2, 2, depth=4), label="expr")
    if data.draw(st.booleans()):  # a product of two inputs: not pure affine, left alone
        e = e + AF.Binary("mul", AF.Dim(0), AF.Symbol(1))
    simpler = simplify_expr(e)
    note(f"{e}  ->  {simpler}")
    assert simplify_expr(simpler) == simpler
    for _ in range(5):
        ins = [data.draw(st.integers(-50, 50)) for _ in range(4)]
        assert eval_expr(simpler, ins[:2], ins[2:]) == eval_expr(e, ins[:2], ins[2:])


@pytest.mark.parametrize("text, simplified", [
    ("(d0)[s0] -> ((s0 + d0 * 42 - 1) * 4)", "(d0)[s0] -> (d0 * 168 + s0 * 4 - 4)"),
    ("(d0, d1) -> ((d0 ceildiv 4) * 4 + d1 mod 4)", "(d0, d1) -> (d1 + (d0 ceildiv 4) * 4 - (d1 floordiv 4) * 4)"),
    ("(d0) -> ((d0 * 4 + 6) floordiv 8)", "(d0) -> ((d0 * 2 + 3) floordiv 4)"),
    ("(d0) -> ((d0 * 4 + 8) floordiv 4)", "(d0) -> (d0 + 2)"),
    ("()[s0, s1] -> (s1 + s0)", "()[s0, s1] -> (s0 + s1)"),
    ("(d0)[s0] -> (d0 floordiv (s0 + 1))", "(d0)[s0] -> (d0 floordiv (s0 + 1))"),
])
def test_simplified_form_is_mlirs(text: str, simplified: str) -> None:
    ops = parse(f"func.func @f() attributes {{m = affine_map<{text}>}} {{\n  return\n}}").walk()
    (attr,) = [op.attr("m") for op in ops if op.name == "func.func"]
    assert str(AF.AffineMap(attr.value.num_dims, attr.value.num_symbols,
                            [simplify_expr(r) for r in attr.value.results])) == simplified


@st.composite
def nested_min_max(draw) -> str:
    """A min (max) whose operands include, as a lone dim or symbol result, another min (max): the
    case MergeAffineMinMaxOp rewrites, with drawn maps on both sides."""
    kind = draw(st.sampled_from(["affine.min", "affine.max"]))
    inner = draw(maps(draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.integers(1, 3))))
    args = [f"%a{i}" for i in range(N_ARGS)]
    ins = [draw(st.sampled_from(args)) for _ in range(inner.num_dims + inner.num_symbols)]
    nd, ns = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    at = draw(st.integers(0, nd + ns))  # the inner result's position among the outer inputs
    as_dim = at <= nd
    total_d, total_s = nd + as_dim, ns + (not as_dim)
    lone = AF.Dim(at) if as_dim else AF.Symbol(at - nd - 1 if at > nd else 0)
    outer = draw(maps(total_d, total_s, draw(st.integers(0, 2))))
    outer = AF.AffineMap(total_d, total_s, [*outer.results, lone])
    outer_ins = [draw(st.sampled_from(args)) for _ in range(total_d + total_s)]
    outer_ins[lone.pos if as_dim else total_d + lone.pos] = "%in"
    return (f"func.func @f(%m: {MEM}, {', '.join(a + ': index' for a in args)}) -> index {{\n"
            f"  %in = {kind} affine_map<{inner}>({', '.join(ins[:inner.num_dims])})[{', '.join(ins[inner.num_dims:])}]\n"
            f"  %out = {kind} affine_map<{outer}>({', '.join(outer_ins[:total_d])})[{', '.join(outer_ins[total_d:])}]\n"
            f"  return %out : index\n}}\n")


@SETTINGS
@given(st.data())
def test_min_max_merge_keeps_the_value(data) -> None:
    text = data.draw(nested_min_max(), label="program")
    after = parse(text)
    canonicalize_affine_maps(after)
    _check(data, text, after)


def test_loop_with_only_a_yield() -> None:
    """Results known without running the body: an iter_arg yielded in its own place is its init
    (any trip count), a value from outside is itself once the loop runs (4 trips); a value from
    outside after an unknown trip count (0 to %n) stays a loop."""
    text = f"""
func.func @f(%m: {MEM}, %x: index, %y: index, %n: index) -> (index, index, index, index) {{
  %a = affine.for %i = 0 to 4 iter_args(%s = %x) -> (index) {{
    affine.yield %y : index
  }}
  %b = affine.for %i = 0 to %n iter_args(%s = %x) -> (index) {{
    affine.yield %y : index
  }}
  %c:2 = affine.for %i = 0 to %n iter_args(%s = %x, %t = %y) -> (index, index) {{
    affine.yield %s, %t : index, index
  }}
  return %a, %b, %c#0, %c#1 : index, index, index, index
}}"""
    out = _canonical(text)
    assert out.count("affine.for") == 1 and "return %arg2, %0, %arg1, %arg2" in out, out
    before, after = parse(text), parse(out)
    for n in (-2, 0, 3):
        ints = [np.asarray(v, np.int64) for v in (5, 7, n)]
        assert check_agreement(before, after, [MemRef(np.zeros(16, np.int64)), *ints], True, None)
