"""The function optimizer's step (rewrite/structural/tf_inline.py) on tf_executor modules:
generated modules of library functions, calls (PartitionedCall, StatefulPartitionedCall,
direct), If and Case on constant or fed predicates, control edges inside bodies and on calls,
compute the same through the interpreter after inlining and still verify (hypothesis); the
calls Grappler keeps are kept (recursive, _noinline, XLA-marked, effects nobody waits for,
calls in a v1 loop) and public functions stay."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import Operation, parse
from egraft.ir.semantics.interpreter import EVALUATORS, Interpreter, lookup_symbol, run_function
from egraft.ir.core import attributes as A
from egraft.ir.verifier import verify
from egraft.rewrite.structural.tf_inline import inline_calls, remove_unused_functions

I32 = "tensor<i32>"


# ------------------------------------------------------------------ call semantics for the interpreter


def _call(interp: Interpreter, op: Operation, args: list) -> list:
    return interp.call(lookup_symbol(op, op.attr("f")), args)


def _if(interp: Interpreter, op: Operation, args: list) -> list:
    """TensorFlow's If: a scalar predicate is true when nonzero, a tensor when it has elements."""
    pred = np.asarray(args[0])
    taken = bool(pred) if pred.ndim == 0 else pred.size > 0
    return interp.call(lookup_symbol(op, op.attr("then_branch" if taken else "else_branch")), args[1:])


def _case(interp: Interpreter, op: Operation, args: list) -> list:
    """TensorFlow's Case: an index outside [0, n) runs the last branch."""
    branches = list(op.attr("branches"))  # type: ignore[arg-type]
    index = int(np.asarray(args[0]))
    chosen = branches[index if 0 <= index < len(branches) else -1]
    return interp.call(lookup_symbol(op, chosen), args[1:])


def _while(interp: Interpreter, op: Operation, args: list) -> list:
    """TensorFlow's While: the body while the cond is true (a bound keeps a bad loop finite)."""
    cond, body = lookup_symbol(op, op.attr("cond")), lookup_symbol(op, op.attr("body"))
    for _ in range(100):
        if not bool(np.asarray(interp.call(cond, list(args))[0])):
            return list(args)
        args = interp.call(body, list(args))
    raise AssertionError("the loop did not end")


def _direct(name: str):
    def run(interp: Interpreter, op: Operation, args: list) -> list:
        return interp.call(lookup_symbol(op, A.SymbolRefAttr(name)), args)
    return run


@contextlib.contextmanager
def call_semantics(names: list[str]) -> Iterator[None]:
    """Evaluators for the call ops (and direct calls to ``names``) while the block runs; a
    graph's results are its fetched data values (ir/semantics/executor.py's evaluator also
    returns a token per fetched control, one value more than the graph has results)."""
    graph = EVALUATORS["tf_executor.graph"]

    def data_only(interp: Interpreter, op: Operation, args: list) -> list:
        return graph(interp, op, args)[:len(op.results)]

    added = {"tf.Print": lambda interp, op, args: [args[0]], "tf.PartitionedCall": _call, "tf.StatefulPartitionedCall": _call, "tf.StatelessIf": _if,
             "tf.If": _if, "tf.Case": _case, "tf.StatelessWhile": _while, **{f"tf.{n}": _direct(n) for n in names}}
    added = {k: v for k, v in added.items() if k not in EVALUATORS}
    EVALUATORS.update(added)
    EVALUATORS["tf_executor.graph"] = data_only
    try:
        yield
    finally:
        EVALUATORS["tf_executor.graph"] = graph
        for k in added:
            del EVALUATORS[k]


# ------------------------------------------------------------------ generated modules


@st.composite
def modules(draw) -> str:
    """Functions ``@f0..`` of (i32, i32) -> i32 whose graphs hold Const/AddV2/Sub/Neg/Print islands
    and ControlTriggers,
    calls to earlier functions, control operands between islands and control results; and
    ``@main(%arg0, %arg1)`` calling them through PartitionedCall, StatefulPartitionedCall, a
    direct call, StatelessIf on a constant or a fed predicate, Case on a constant index
    (sometimes out of range) or a fed one. Some functions say `_noinline`."""
    count = draw(st.integers(1, 3))
    texts = []

    def graph(callable_: list[str], main: bool) -> str:
        values, ctls, lines = ["%arg0", "%arg1"], [], []
        pick = lambda pool: pool[draw(st.integers(0, len(pool) - 1))]  # noqa: E731

        def island(text: str, result: str = I32) -> str:
            n = len(lines)
            ctl = draw(st.sampled_from([[]] * 3 + [[c] for c in ctls[-2:]]))
            lines.append(f"%v{n}, %c{n} = tf_executor.island{'(' + ctl[0] + ')' if ctl else ''} wraps {text}"
                         f" -> {result}")
            ctls.append(f"%c{n}")
            return f"%v{n}"

        kinds = ["const", "add", "sub", "neg"] + (["call"] * 3 if callable_ else []) + \
            ([] if main else ["print", "trigger"])
        if main and callable_:
            kinds += ["if", "if", "case", "case"]
        for _ in range(draw(st.integers(1, 6))):
            kind = draw(st.sampled_from(kinds))
            two = f"({pick(values)}, {pick(values)})"
            if kind == "const":
                values.append(island(f'"tf.Const"() {{value = dense<{draw(st.integers(-5, 5))}> : {I32}}} : ()'))
            elif kind in ("add", "sub"):
                values.append(island(f'"tf.{"AddV2" if kind == "add" else "Sub"}"{two} : ({I32}, {I32})'))
            elif kind == "trigger":  # a control join the body's islands may wait on
                if ctls:
                    lines.append(f"%t{len(lines)} = tf_executor.ControlTrigger {pick(ctls)}")
                    ctls.append(f"%t{len(lines) - 1}")
            elif kind == "print":  # an effect: the function is inlined only when its effects stay ordered
                values.append(island(f'"tf.Print"({pick(values)}) {{message = "p"}} : ({I32})'))
            elif kind == "neg":
                values.append(island(f'"tf.Neg"({pick(values)}) : ({I32})'))
            elif kind == "call":
                f = pick(callable_)
                how = draw(st.sampled_from(["tf.PartitionedCall", "tf.StatefulPartitionedCall", "direct"]))
                op = f'"tf.{f}"{two}' if how == "direct" else f'"{how}"{two} {{f = @{f}}}'
                values.append(island(f"{op} : ({I32}, {I32})"))
            elif kind == "if":
                if draw(st.booleans()):
                    pred = island(f'"tf.Const"() {{value = dense<{str(draw(st.booleans())).lower()}> : tensor<i1>}} : ()',
                                  "tensor<i1>")
                else:
                    pred = island(f'"tf.Less"{two} : ({I32}, {I32})', "tensor<i1>")
                a, b = pick(callable_), pick(callable_)
                values.append(island(f'"tf.StatelessIf"({pred}, {pick(values)}, {pick(values)}) '
                                     f'{{then_branch = @{a}, else_branch = @{b}, is_stateless = true}} '
                                     f': (tensor<i1>, {I32}, {I32})'))
            else:
                index = island(f'"tf.Const"() {{value = dense<{draw(st.integers(-1, 3))}> : {I32}}} : ()') \
                    if draw(st.booleans()) else pick(values)
                branches = ", ".join(f"@{pick(callable_)}" for _ in range(draw(st.integers(1, 3))))
                values.append(island(f'"tf.Case"({index}, {pick(values)}, {pick(values)}) '
                                     f'{{branches = [{branches}], is_stateless = true}} : ({I32}, {I32}, {I32})'))
        fetch_ctl = [pick(ctls)] if ctls and draw(st.booleans()) else []
        fetched = pick(values[2:] or values)
        types = ", ".join([I32] + ["!tf_executor.control"] * len(fetch_ctl))
        body = "\n    ".join(lines + [f"tf_executor.fetch {', '.join([fetched] + fetch_ctl)} : {types}"])
        return f"  %r:1 = tf_executor.graph {{\n    {body}\n  }}\n  func.return %r#0 : {I32}\n"

    for i in range(count):
        noinline = " attributes {tf._noinline = true}" if draw(st.integers(0, 4)) == 0 else ""
        texts.append(f"func.func private @f{i}(%arg0: {I32}, %arg1: {I32}) -> ({I32}){noinline} {{\n"
                     + graph([f"f{j}" for j in range(i)], False) + "}\n")
    main = f"func.func @main(%arg0: {I32}, %arg1: {I32}) -> ({I32}) {{\n" + \
        graph([f"f{j}" for j in range(count)], True) + "}\n"
    return main + "".join(texts)


def _outputs(module: Operation, names: list[str]) -> list:
    with call_semantics(names):
        return [tuple(int(np.asarray(v)) for v in run_function(module, [np.int32(a), np.int32(b)], "main"))
                for a in (-2, 0, 3) for b in (-1, 4)]


@settings(max_examples=150, deadline=None)
@given(modules())
def test_inlining_preserves_outputs(text: str) -> None:
    module = parse(text)
    verify(module)
    names = [f"f{i}" for i in range(4)]
    before = _outputs(module, names)
    inline_calls(module)
    remove_unused_functions(module)
    verify(module)
    assert _outputs(module, names) == before, text
    left = Counter(op.name for op in module.walk())
    # a call to a function without _noinline and effects is always inlined (no v1 control flow)
    if "_noinline" not in text and "tf.Print" not in text:
        assert not left["tf.PartitionedCall"] + left["tf.StatefulPartitionedCall"], text
        assert not any(n[3:] in names for n in left), text
        if not left["tf.StatelessIf"] + left["tf.Case"]:  # what is left are branches of fed predicates
            assert left["func.func"] == 1, text


# ------------------------------------------------------------------ calls that are kept

BODY = """
func.func private @g(%arg0: tensor<i32>) -> (tensor<i32>) ATTRS {
  %r:1 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.Neg"(%arg0) : (tensor<i32>) -> tensor<i32>
    tf_executor.fetch %v0 : tensor<i32>
  }
  func.return %r#0 : tensor<i32>
}
"""

MAIN = """
func.func @main(%arg0: tensor<i32>) -> (tensor<i32>) {
  %r:1 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.PartitionedCall"(%arg0) {f = @g CALL_ATTRS} : (tensor<i32>) -> tensor<i32>
    tf_executor.fetch %v0 : tensor<i32>
  }
  func.return %r#0 : tensor<i32>
}
"""


def _inline(text: str) -> tuple[Operation, int, int]:
    module = parse(text)
    inlined, _ = inline_calls(module)
    removed = remove_unused_functions(module)
    verify(module)
    return module, inlined, removed


def test_plain_call_is_inlined() -> None:
    module, inlined, removed = _inline(MAIN.replace(" CALL_ATTRS", "") + BODY.replace(" ATTRS", ""))
    assert (inlined, removed) == (1, 1)


def test_noinline_and_xla_calls_are_kept() -> None:
    for func_attrs, call_attrs in ((" attributes {tf._noinline = true}", ""), ("", ", _noinline = true"),
                                   ("", ", _XlaMustCompile = true"), (" attributes {tf._tpu_replicate = \"c\"}", "")):
        module, inlined, removed = _inline(MAIN.replace(" CALL_ATTRS", call_attrs) + BODY.replace(" ATTRS", func_attrs))
        assert (inlined, removed) == (0, 0), (func_attrs, call_attrs)
    module, inlined, _ = _inline(MAIN.replace(" CALL_ATTRS", ", _noinline = false") + BODY.replace(" ATTRS", ""))
    assert inlined == 1


def test_recursive_function_is_kept() -> None:
    body = BODY.replace(" ATTRS", "").replace('"tf.Neg"(%arg0)', '"tf.PartitionedCall"(%arg0) {f = @g}')
    module, inlined, removed = _inline(MAIN.replace(" CALL_ATTRS", "") + body)
    assert (inlined, removed) == (0, 0)


STATEFUL = """
func.func private @g(%arg0: tensor<i32>) -> (tensor<i32>) {
  %r:1 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.Neg"(%arg0) : (tensor<i32>) -> tensor<i32>
    %c1 = tf_executor.island wraps "tf.Print"(%arg0) : (tensor<i32>) -> ()
    tf_executor.fetch %v0, %c1 : tensor<i32>, !tf_executor.control
  }
  func.return %r#0 : tensor<i32>
}
"""


def test_effects_inlined_only_when_someone_waits() -> None:
    """Grappler's rule: a callee with side effects is inlined only when the call's control token
    is used (then it still waits for the effects); else nothing would keep them."""
    module, inlined, _ = _inline(MAIN.replace(" CALL_ATTRS", "") + STATEFUL)
    assert inlined == 0
    waited = MAIN.replace(" CALL_ATTRS", "").replace(
        "tf_executor.fetch %v0 : tensor<i32>",
        "%v1, %c1 = tf_executor.island(%c0) wraps \"tf.Const\"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>\n"
        "    tf_executor.fetch %v0, %c1 : tensor<i32>, !tf_executor.control")
    module, inlined, removed = _inline(waited + STATEFUL)
    assert (inlined, removed) == (1, 1)
    printer = next(op for op in module.walk() if op.name == "tf.Print")
    island = printer.parent_op
    waiting = next(op for op in module.walk() if op.name == "tf.Const").parent_op
    # the constant that waited on the call now waits (through the call's island) on the print
    call_island = waiting.operands[0].owner_op
    assert island.results[-1] in call_island.operands


def test_public_function_is_kept() -> None:
    body = BODY.replace(" ATTRS", ' attributes {tf_saved_model.exported_names = ["g"]}')
    module, inlined, removed = _inline(MAIN.replace(" CALL_ATTRS", "") + body)
    assert (inlined, removed) == (1, 0)
    assert any(op.attr("sym_name") == A.StringAttr("g") for op in module.walk())


LOOP = """
func.func @main(%arg0: tensor<i32>, %arg1: tensor<i1>) -> (tensor<i32>) {
  %r:1 = tf_executor.graph {
    %e, %ce = tf_executor.Enter %arg0 frame "loop" : tensor<i32>
    %v0, %c0 = tf_executor.island wraps "tf.PartitionedCall"(%e) {f = @g} : (tensor<i32>) -> tensor<i32>
    %x, %cx = tf_executor.Exit %v0 : tensor<i32>
    tf_executor.fetch %x : tensor<i32>
  }
  func.return %r#0 : tensor<i32>
}
"""


def test_call_in_v1_loop_frame_is_kept() -> None:
    module, inlined, _ = _inline(LOOP + BODY.replace(" ATTRS", ""))
    assert inlined == 0


CONTROL_OUTPUT = """
func.func @main(%arg0: tensor<i32>) -> (tensor<i32>) attributes {tf.entry_function = {control_outputs = "restore", inputs = "x", outputs = "y"}} {
  %r:1 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.StatefulPartitionedCall"(%arg0) {f = @g, _mlir_name = "restore", config = "", config_proto = "", executor_type = ""} : (tensor<i32>) -> tensor<i32>
    %v1, %c1 = tf_executor.island wraps "tf.Neg"(%arg0) {_mlir_name = "y"} : (tensor<i32>) -> tensor<i32>
    tf_executor.fetch %v1, %c0 : tensor<i32>, !tf_executor.control
  }
  func.return %r#0 : tensor<i32>
}
func.func private @g(%arg0: tensor<i32>) -> (tensor<i32>) {
  %r:1 = tf_executor.graph {
    %c0 = tf_executor.island wraps "tf.Print"(%arg0) {_mlir_name = "print", message = "hi"} : (tensor<i32>) -> ()
    %v1, %c1 = tf_executor.island(%c0) wraps "tf.Identity"(%arg0) {_mlir_name = "out"} : (tensor<i32>) -> tensor<i32>
    tf_executor.fetch %v1 : tensor<i32>
  }
  func.return %r#0 : tensor<i32>
}
"""


def test_inlined_control_output_still_runs_the_body(tmp_path) -> None:
    """A SavedModel's restore op is a call fetched as a control output (a target): once the call
    is inlined, the node left with its name must still wait on the body's effects (found by the
    benchmark on a Keras SavedModel: a v1 loader's restore ran nothing). After the families
    merge everything into one island, the graph must not be flattened into the function."""
    import io

    from egraft.passes.cli.main import main

    src = tmp_path / "in.mlir"
    src.write_text(CONTROL_OUTPUT)
    out, err = io.StringIO(), io.StringIO()
    assert main([str(src), "-tf-grappler", "--emit=graphdef"], stdin=lambda: b"", stdout=out, stderr=err) == 0, \
        err.getvalue()
    from egraft.ir.graphdef.messages import GraphDef
    from google.protobuf import text_format

    graph = text_format.Parse(out.getvalue(), GraphDef())
    (restore,) = [n for n in graph.node if n.name == "restore"]
    (printer,) = [n for n in graph.node if n.op == "Print"]
    assert f"^{printer.name}" in restore.input, restore


WRAPPER = """
func.func private @wrapper(%arg0: tensor<i32>) -> (tensor<i32>) attributes {tf_saved_model.exported_names = ["w"]} {
  %r:1 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.StatefulPartitionedCall"(%arg0) {f = @g} : (tensor<i32>) -> tensor<i32>
    tf_executor.fetch %v0 : tensor<i32>
  }
  func.return %r#0 : tensor<i32>
}
"""


def test_public_callee_is_inlined_into_the_graph_only() -> None:
    """A SavedModel's signature wrapper calling its public model function keeps the call (the
    body stays anyway; a copy would only duplicate it); @main's call to the wrapper is inlined,
    then the call it brought along too."""
    body = BODY.replace(" ATTRS", ' attributes {tf_saved_model.exported_names = ["g"]}')
    main = MAIN.replace(" CALL_ATTRS", "").replace("{f = @g}", "{f = @wrapper}")
    module, inlined, removed = _inline(main + WRAPPER + body)
    assert (inlined, removed) == (2, 0)
    funcs = {op.attr("sym_name").value: op for op in module.walk() if op.name == "func.func"}  # type: ignore[union-attr]
    assert set(funcs) == {"main", "wrapper", "g"}
    assert [op.name for op in funcs["wrapper"].walk()].count("tf.StatefulPartitionedCall") == 1
    assert "tf.Neg" in [op.name for op in funcs["main"].walk()]


STATEFUL_IF = """
func.func @main(%arg0: tensor<i1>, %arg1: tensor<i32>) -> (tensor<i32>, tensor<i32>) attributes {tf.entry_function = {control_outputs = "", inputs = "p,x", outputs = "a,b"}} {
  %r:2 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.If"(%arg0, %arg1) {then_branch = @g, else_branch = @g, is_stateless = true, _mlir_name = "a"} : (tensor<i1>, tensor<i32>) -> tensor<i32>
    %v1, %c1 = tf_executor.island wraps "tf.While"(%arg1) {cond = @c, body = @g, is_stateless = false, parallel_iterations = 10 : i64, _mlir_name = "b"} : (tensor<i32>) -> tensor<i32>
    tf_executor.fetch %v0, %v1 : tensor<i32>, tensor<i32>
  }
  func.return %r#0, %r#1 : tensor<i32>, tensor<i32>
}
func.func @c(%arg0: tensor<i32>) -> (tensor<i1>) {
  %r:1 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.Const"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
    tf_executor.fetch %v0 : tensor<i1>
  }
  func.return %r#0 : tensor<i1>
}
""" + BODY.replace(" ATTRS", "").replace("func.func private @g", "func.func @g")


def test_is_stateless_is_the_op_name_in_a_graphdef() -> None:
    """tf.If/tf.While carry `is_stateless` (TensorFlow's MLIR); a GraphDef names StatelessIf /
    StatelessWhile instead and has no such attribute (TensorFlow rejects a node with one); a
    GraphDef's stateful If/While come back with `is_stateless = false`, which the records demand."""
    from egraft.ir.graphdef import export_graphdef, import_graphdef
    from egraft.passes.tf.executor_to_tfg import executor_to_tfg
    from egraft.passes.tf.tfg_to_executor import tfg_to_executor

    graph = export_graphdef(executor_to_tfg(parse(STATEFUL_IF)))
    kinds = {n.name: n.op for n in graph.node}
    assert (kinds["a"], kinds["b"]) == ("StatelessIf", "While"), kinds
    assert not any("is_stateless" in n.attr for n in graph.node)
    back = tfg_to_executor(import_graphdef(graph), ["a", "b"], feeds=[])
    verify(back)
    flags = {op.name: op.attr("is_stateless") for op in back.walk() if op.name in ("tf.While", "tf.StatelessIf")}
    assert flags == {"tf.While": A.FALSE, "tf.StatelessIf": None}, flags


PUSH = """
func.func @main(%arg0: tensor<i1>, %arg1: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %r:2 = tf_executor.graph {
    %k, %ck = tf_executor.island wraps "tf.Const"() {value = dense<7> : tensor<i32>} : () -> tensor<i32>
    %z, %cz = tf_executor.island wraps "tf.Const"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %v0, %c0 = tf_executor.island wraps "tf.StatelessIf"(%arg0, %k, %arg1) {then_branch = @t, else_branch = @e, is_stateless = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %w:3, %cw = tf_executor.island wraps "tf.StatelessWhile"(%z, %k, %arg1) {cond = @c, body = @b} : (tensor<i32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>)
    tf_executor.fetch %v0, %w#2 : tensor<i32>, tensor<i32>
  }
  func.return %r#0, %r#1 : tensor<i32>, tensor<i32>
}
func.func private @t(%arg0: tensor<i32>, %arg1: tensor<i32>) -> (tensor<i32>) {
  %r:1 = tf_executor.graph {
    %sq, %csq = tf_executor.island wraps "tf.Mul"(%arg0, %arg0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v0, %c0 = tf_executor.island wraps "tf.AddV2"(%sq, %arg1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    tf_executor.fetch %v0 : tensor<i32>
  }
  func.return %r#0 : tensor<i32>
}
func.func private @e(%arg0: tensor<i32>, %arg1: tensor<i32>) -> (tensor<i32>) {
  %r:1 = tf_executor.graph {
    %v0, %c0 = tf_executor.island wraps "tf.Sub"(%arg1, %arg0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    tf_executor.fetch %v0 : tensor<i32>
  }
  func.return %r#0 : tensor<i32>
}
func.func private @c(%arg0: tensor<i32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> (tensor<i1>) {
  %r:1 = tf_executor.graph {
    %n, %cn = tf_executor.island wraps "tf.AddV2"(%arg1, %arg1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v0, %c0 = tf_executor.island wraps "tf.Less"(%arg0, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tf_executor.fetch %v0 : tensor<i1>
  }
  func.return %r#0 : tensor<i1>
}
func.func private @b(%arg0: tensor<i32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>) {
  %r:3 = tf_executor.graph {
    %one, %c1 = tf_executor.island wraps "tf.Const"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i, %ci = tf_executor.island wraps "tf.AddV2"(%arg0, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %sq, %csq = tf_executor.island wraps "tf.Mul"(%arg1, %arg1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %y, %cy = tf_executor.island wraps "tf.AddV2"(%arg2, %sq) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    tf_executor.fetch %i, %arg1, %y : tensor<i32>, tensor<i32>, tensor<i32>
  }
  func.return %r#0, %r#1, %r#2 : tensor<i32>, tensor<i32>, tensor<i32>
}
"""


def test_constants_pushed_into_branches_and_loop_bodies() -> None:
    """Grappler's specialization, its constant part: the If's constant operand is written into
    the branch where it folds (k * k; not into the other, where k - x folds nothing), the
    While's loop-invariant one (the body returns it unchanged) into cond (k + k) and body
    (k * k); outputs stay the same for both predicates."""
    module = parse(PUSH)
    runs = lambda m: [tuple(int(np.asarray(v)) for v in run_function(m, [np.bool_(p), np.int32(5)], "main"))  # noqa: E731
                      for p in (True, False)]
    with call_semantics([]):
        before = runs(module)
        inline_calls(module)
        verify(module)
        assert runs(module) == before == [(54, 691), (-2, 691)]
    funcs = {op.attr("sym_name").value: op for op in module.walk() if op.name == "func.func"}  # type: ignore[union-attr]
    assert [u.name for u in funcs["e"].regions[0].blocks[0].args[0].uses] == ["tf.Sub"]
    for name, index in (("t", 0), ("c", 1), ("b", 1)):
        body = funcs[name].regions[0].blocks[0]
        users = [u.name for u in body.args[index].uses]
        assert all(u in ("tf_executor.fetch", "tf_executor.yield") for u in users), (name, users)
        assert any(op.name == "tf.Const" and int(op.attr("value").to_numpy()) == 7  # type: ignore[union-attr]
                   for op in funcs[name].walk()), name
    assert [u.name for u in funcs["b"].regions[0].blocks[0].args[0].uses] == ["tf.AddV2"]
