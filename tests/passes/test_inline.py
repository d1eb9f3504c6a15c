"""The `inline` pass: generated call graphs checked against the interpreter, and its refusals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import Operation, parse, print_ir, verify
from egraft.ir.semantics.compare import check_agreement
from egraft.ir.semantics.inputs import argument_types, values_for_types
from egraft.passes import parse_pipeline
from egraft.passes.manager.pass_manager import PassManager

M = "memref<8xf32>"

# Callees, by name: (signature, body).  Index parameters are in [0, 8) (subscripts) or
# [0, 8] (loop bounds), which the generated callers guarantee.
CALLEES: dict[str, tuple[str, str]] = {
    # affine, with a parameter used as a loop bound (a symbol of the callee's scope)
    "scale_prefix": (f"(%A: {M}, %B: {M}, %n: index, %f: f32) -> f32", f"""
  affine.for %k = 0 to %n {{
    %v = affine.load %A[%k] : {M}
    %w = arith.mulf %v, %f : f32
    affine.store %w, %B[%k] : {M}
  }}
  %z = affine.load %B[0] : {M}
  return %z : f32"""),
    # affine, with a parameter used as a subscript
    "bump_at": (f"(%A: {M}, %i: index, %f: f32)", f"""
  %v = affine.load %A[%i] : {M}
  %w = arith.addf %v, %f : f32
  affine.store %w, %A[7 - %i] : {M}
  return"""),
    # affine, subscripting with any index (`mod 8` keeps it in bounds): called with a
    # loop-local product, which is a symbol only inside a graybox, its wrapper stays
    "rotate_at": (f"(%A: {M}, %x: index, %f: f32)", f"""
  %v = affine.load %A[%x mod 8] : {M}
  %w = arith.subf %v, %f : f32
  affine.store %w, %A[(%x + 3) mod 8] : {M}
  return"""),
    # scalar, one block
    "fma": ("(%x: f32, %y: f32) -> f32", """
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %p, %x : f32
  return %s : f32"""),
    # scalar, several blocks
    "relu": ("(%x: f32) -> f32", """
  %z = arith.constant 0.0 : f32
  %p = arith.cmpf olt, %x, %z : f32
  cf.cond_br %p, ^neg, ^pos
^neg:
  return %z : f32
^pos:
  return %x : f32"""),
    # calls other callees, and allocates a local memref
    "chain": (f"(%A: {M}, %i: index, %f: f32) -> f32", f"""
  %t = memref.alloc() : {M}
  %c3 = arith.constant 3 : index
  %x = func.call @fma(%f, %f) : (f32, f32) -> f32
  affine.store %x, %t[%i] : {M}
  %y = affine.load %t[%i] : {M}
  func.call @bump_at(%A, %i, %y) : ({M}, index, f32) -> ()
  %r = func.call @relu(%y) : (f32) -> f32
  memref.dealloc %t : {M}
  return %r : f32"""),
}


class _Names:
    def __init__(self) -> None:
        self.n = 0

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"%{stem}{self.n}"


@st.composite
def _call(draw: st.DrawFn, names: _Names, memrefs: list[str], subscripts: list[str], bounds: list[str],
          anywhere: list[str]) -> str:
    """One call of a random callee with random (valid) arguments; `anywhere` holds index
    values that are no affine dimension or symbol of the caller (loop-local products)."""
    callee = draw(st.sampled_from(sorted(CALLEES)))
    f = "%f"
    if callee == "scale_prefix":
        # Mostly distinct memrefs (a mix-up of parameters shows), sometimes one passed twice.
        a, b = draw(st.sampled_from([(memrefs[0], memrefs[-1]), (memrefs[-1], memrefs[0]), (memrefs[0],) * 2]))
        n = draw(st.sampled_from(bounds))
        return f"{names.fresh('r')} = func.call @scale_prefix({a}, {b}, {n}, {f}) : ({M}, {M}, index, f32) -> f32"
    if callee == "bump_at":
        a, i = draw(st.sampled_from(memrefs)), draw(st.sampled_from(subscripts))
        return f"func.call @bump_at({a}, {i}, {f}) : ({M}, index, f32) -> ()"
    if callee == "rotate_at":
        a, x = draw(st.sampled_from(memrefs)), draw(st.sampled_from(subscripts + anywhere))
        return f"func.call @rotate_at({a}, {x}, {f}) : ({M}, index, f32) -> ()"
    if callee == "fma":
        return f"{names.fresh('r')} = func.call @fma({f}, {f}) : (f32, f32) -> f32"
    if callee == "relu":
        return f"{names.fresh('r')} = func.call @relu({f}) : (f32) -> f32"
    a, i = draw(st.sampled_from(memrefs)), draw(st.sampled_from(subscripts))
    return f"{names.fresh('r')} = func.call @chain({a}, {i}, {f}) : ({M}, index, f32) -> f32"


@st.composite
def _body(draw: st.DrawFn, names: _Names, memrefs: list[str], subscripts: list[str], bounds: list[str],
          depth: int, anywhere: tuple[str, ...] = ()) -> str:
    """Statements: calls at this level, in affine loops and ifs, and in grayboxes."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["call", "for", "if", "graybox"] if depth < 3 else ["call"]))
        if kind == "call":
            lines.append(draw(_call(names, memrefs, subscripts, bounds, list(anywhere))))
        elif kind == "for":
            iv, square = names.fresh("i"), names.fresh("sq")
            inner = draw(_body(names, memrefs, subscripts + [iv], bounds + [iv], depth + 1, (*anywhere, square)))
            lines.append(f"affine.for {iv} = 0 to 8 {{\n{square} = arith.muli {iv}, {iv} : index\n{inner}\n}}")
        elif kind == "if":
            i = draw(st.sampled_from(subscripts))
            inner = draw(_body(names, memrefs, subscripts, bounds, depth + 1, anywhere))
            lines.append(f"affine.if affine_set<(d0) : (d0 - 3 >= 0)>({i}) {{\n{inner}\n}}")
        else:
            args = [names.fresh("g") for _ in memrefs]
            inner = draw(_body(names, args, subscripts, bounds, depth + 1, anywhere))
            types = ", ".join([M] * len(args))
            lines.append(f"affine.graybox [{', '.join(args)}] = ({', '.join(memrefs)}) : ({types}) -> () {{\n"
                         f"{inner}\nreturn\n}}")
    return "\n".join(lines)


@st.composite
def call_graphs(draw: st.DrawFn) -> tuple[str, set[str]]:
    """A module: the callees (each private or public) and one or two callers; returns the
    text and the names of the public callees."""
    public = {name for name in sorted(CALLEES) if draw(st.booleans())}
    parts = []
    for name, (signature, body) in CALLEES.items():
        visibility = "" if name in public else "private "
        parts.append(f"func.func {visibility}@{name}{signature} {{{body}\n}}")
    names = _Names()
    for k in range(draw(st.integers(1, 2))):
        body = draw(_body(names, ["%A", "%B"], ["%c0", "%c5"], ["%c0", "%c8"], 0))
        parts.append(f"func.func @caller{k}(%A: {M}, %B: {M}, %f: f32) {{\n"
                     "%c0 = arith.constant 0 : index\n%c5 = arith.constant 5 : index\n"
                     f"%c8 = arith.constant 8 : index\n{body}\nreturn\n}}")
    return "\n".join(parts), public


def _funcs(module: Operation) -> dict[str, Operation]:
    return {op.attr("sym_name").value: op for op in module.walk() if op.name == "func.func"}  # type: ignore[union-attr]


def _run(text: str, pipeline: str = "inline") -> Operation:
    module = parse(text)
    PassManager(parse_pipeline(pipeline)).run(module)  # verifies after the pass
    return module


@settings(max_examples=60, deadline=None)
@given(call_graphs(), st.sampled_from(["inline", "inline{keep-wrappers}",
                                       "inline{keep-wrappers},func.func(affine-graybox-hoist)"]), st.data())
def test_inlining_generated_call_graphs_keeps_results_and_memory(graph: tuple[str, set[str]], pipeline: str,
                                                                  data: st.DataObject) -> None:
    text, public = graph
    before = parse(text)
    verify(before)
    after = _run(text, pipeline)
    funcs = _funcs(after)
    # Every call is inlined (no recursion here); private callees go, public ones stay.
    assert not [op for f in funcs.values() for op in f.walk() if op.name == "func.call"], print_ir(after)
    assert {n for n in funcs if not n.startswith("caller")} == public
    for name in (n for n in funcs if n.startswith("caller")):
        for _ in range(2):
            inputs = data.draw(values_for_types(argument_types(before, name), True), label="inputs")
            check_agreement(before, after, inputs, True, None, name)


def test_wrappers_only_inside_affine_code() -> None:
    """A callee with affine ops is wrapped where the call is in a loop, spliced at the top
    level of a function and of a graybox; elimination then removes the wrapper (the loop's
    IV, a symbol inside the graybox, is a dimension outside it)."""
    name, (signature, body) = "bump_at", CALLEES["bump_at"]
    text = f"""func.func private @{name}{signature} {{{body}
}}
func.func @g(%A: {M}, %f: f32) {{
  %c2 = arith.constant 2 : index
  func.call @bump_at(%A, %c2, %f) : ({M}, index, f32) -> ()
  affine.graybox [%R] = (%A) : ({M}) -> () {{
    func.call @bump_at(%R, %c2, %f) : ({M}, index, f32) -> ()
    affine.for %i = 0 to 8 {{
      func.call @bump_at(%R, %i, %f) : ({M}, index, f32) -> ()
    }}
    return
  }}
  return
}}"""
    after = _run(text, "inline{keep-wrappers}")
    grayboxes = [op for op in after.walk() if op.name == "affine.graybox"]
    assert len(grayboxes) == 2  # the original one and the wrapper in its loop
    assert grayboxes[1].parent_op.name == "affine.for"  # type: ignore[union-attr]
    assert [op.parent_op.name for op in after.walk() if op.name == "affine.store"] == \
        ["func.func", "affine.graybox", "affine.graybox"]  # type: ignore[union-attr]
    eliminated = _run(text)
    assert [op.parent_op.name for op in eliminated.walk() if op.name == "affine.store"] == \
        ["func.func", "affine.graybox", "affine.for"]  # type: ignore[union-attr]


REFUSED = f"""
func.func private @even(%n: index) -> index {{
  %r = func.call @odd(%n) : (index) -> index
  return %r : index
}}
func.func private @odd(%n: index) -> index {{
  %r = func.call @even(%n) : (index) -> index
  return %r : index
}}
func.func private @ext(%x: f32) -> f32
func.func private @kept(%x: f32) -> f32 {{
  return %x : f32
}}
func.func @caller(%A: {M}, %x: f32, %n: index) -> f32 {{
  %e = func.call @even(%n) : (index) -> index
  %y = func.call @ext(%x) : (f32) -> f32
  %z = func.call @kept(%y) {{no_inline}} : (f32) -> f32
  return %z : f32
}}
"""


@pytest.mark.parametrize("callee,reason", [
    ("even", "mutual recursion: the caller's call is inlined once, the SCC's own calls stay"),
    ("ext", "a declaration has no body"),
    ("kept", "the call is marked no_inline"),
])
def test_refused_calls_stay(callee: str, reason: str) -> None:
    after = _run(REFUSED)
    calls = {op.attr("callee").root for op in after.walk() if op.name == "func.call"}  # type: ignore[union-attr]
    assert callee in calls, reason
    assert callee in _funcs(after)


DIM_OPERAND = f"""
func.func private @make(%n: index) -> memref<?xf32> {{
  %m = memref.alloc(%n) : memref<?xf32>
  return %m : memref<?xf32>
}}
func.func private @fill(%A: {M}, %n: index, %f: f32) {{
  affine.for %k = 0 to %n {{
    affine.store %f, %A[%k] : {M}
  }}
  return
}}
func.func @caller(%A: {M}, %f: f32) {{
  affine.for %i = 0 to 8 {{
    %L = func.call @make(%i) {{no_inline}} : (index) -> memref<?xf32>
    %c0 = arith.constant 0 : index
    %d = memref.dim %L, %c0 : memref<?xf32>
    func.call @fill(%A, %d, %f) : ({M}, index, f32) -> ()
    memref.dealloc %L : memref<?xf32>
  }}
  return
}}
"""


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_a_dim_operand_that_is_no_symbol_inside_is_rebuilt_in_the_wrapper(data: st.DataObject) -> None:
    """`memref.dim` of a loop-local memref (a call's result) dominates the graybox but is no
    symbol in it (MLIR's isValidSymbol, mirrored), and @fill uses it as a loop bound: the
    wrapper captures the memref and takes the dim of its region argument, at its top level."""
    before = parse(DIM_OPERAND)
    after = _run(DIM_OPERAND)
    graybox = next(op for op in after.walk() if op.name == "affine.graybox")
    first = graybox.regions[0].blocks[0].first
    assert len(graybox.operands) == 2 and first.name == "memref.dim"  # type: ignore[union-attr]
    assert first.operands[0] is graybox.regions[0].blocks[0].args[1]  # type: ignore[union-attr]
    assert "fill" not in _funcs(after)
    inputs = data.draw(values_for_types(argument_types(before, "caller"), True))
    assert check_agreement(before, after, inputs, True, None, "caller")


def test_mutual_recursion_is_inlined_at_most_once_per_original_call() -> None:
    after = _run(REFUSED)
    caller = _funcs(after)["caller"]
    inner = [op.attr("callee").root for op in caller.walk() if op.name == "func.call"]  # type: ignore[union-attr]
    assert inner.count("odd") == 1 and "even" not in inner


def test_nested_module_calls_resolve_through_their_symbol_table() -> None:
    text = """module {
  module @inner {
    func.func private @f(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32
      return %y : f32
    }
    func.func @g(%x: f32) -> f32 {
      %y = func.call @f(%x) : (f32) -> f32
      return %y : f32
    }
  }
}"""
    after = _run(text)
    funcs = _funcs(after)
    assert "f" not in funcs and not [op for op in funcs["g"].walk() if op.name == "func.call"]


def test_anchored_on_the_module() -> None:
    from egraft.passes import PassFailure
    with pytest.raises(PassFailure, match="can't run 'func.func' pass manager on 'builtin.module' op"):
        from egraft.passes.manager.pipeline import parse_pipeline_option
        PassManager(parse_pipeline_option("func.func(inline)")).run(parse(REFUSED))


ISLAND = """func.func private @twice(%x: tensor<f32>) -> tensor<f32> {
  %y = "tf.AddV2"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
func.func private @pick(%x: tensor<f32>) -> tensor<f32> {
  cf.br ^next
^next:
  return %x : tensor<f32>
}
func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = tf_executor.graph {
    %outputs, %control = tf_executor.island {
      %1 = func.call @twice(%arg0) : (tensor<f32>) -> tensor<f32>
      %2 = func.call @pick(%1) : (tensor<f32>) -> tensor<f32>
      tf_executor.yield %2 : tensor<f32>
    }
    tf_executor.fetch %outputs : tensor<f32>
  }
  return %0 : tensor<f32>
}
"""


def test_outside_affine_code_one_block_is_spliced_and_a_cfg_refused() -> None:
    """In a non-affine single-block region (a tf_executor island) a one-block callee is
    spliced, as MLIR does; a multi-block one cannot go there (MLIR refuses too), and no
    graybox is made outside affine code for a callee without affine ops."""
    after = _run(ISLAND)
    island = next(op for op in after.walk() if op.name == "tf_executor.island")
    assert [op.name for op in island.regions[0].blocks[0]] == ["tf.AddV2", "func.call", "tf_executor.yield"]
    assert set(_funcs(after)) == {"pick", "main"}
    assert not any(op.name == "affine.graybox" for op in after.walk())


def test_default_pipeline_runs_on_each_function_after_its_calls_are_inlined() -> None:
    text = """func.func private @one() -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}
func.func @two() -> f32 {
  %a = func.call @one() : () -> f32
  %b = func.call @one() : () -> f32
  %s = arith.addf %a, %b : f32
  return %s : f32
}"""
    plain = _funcs(_run(text))["two"]
    assert sum(op.name == "arith.constant" for op in plain.walk()) == 2
    optimized = _funcs(_run(text, "inline{default-pipeline=cse}"))["two"]
    assert sum(op.name == "arith.constant" for op in optimized.walk()) == 1


def test_a_bad_default_pipeline_is_a_located_error() -> None:
    from egraft.passes import PassFailure
    with pytest.raises(PassFailure, match="'cse2' does not refer to a registered pass"):
        _run(REFUSED, "inline{default-pipeline=cse2}")
