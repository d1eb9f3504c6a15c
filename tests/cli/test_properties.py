"""Whatever the input, egraft-opt answers with its output or with diagnostics, never a traceback.

Four families of hostile inputs go through the whole command line (in this process, so
an escaping exception fails the test with its traceback):

- GraphDef byte mutations: small `.pb` files built here, with bytes flipped, inserted,
  deleted or truncated, read with every output form;
- random nesting depths: regions, affine loops, arrays, dictionaries, tensor types,
  affine expressions and call-site locations nested 1 to 3,000 deep;
- long string and hex literals;
- literals out of their type's range, which MLIR rejects.

A run that exits 0 must have written valid output: MLIR text that parses and verifies,
or a GraphDef that reads back.  A run that exits 1 must say why in a diagnostic.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from egraft.ir import parse, verify
from egraft.ir.core.deep import run_with_deep_stack
from egraft.ir.graphdef import parse_pbtxt

from .tool import run

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: What a failing run prints first: `file:line:col: error:`, `file: error:` (a whole
#: GraphDef, or a position-less IR error) or `egraft-opt: error:`.
DIAGNOSTIC = re.compile(r"^(\S.*?: error: |loc\(unknown\): error: )")


def check_result(code: int, out: str, err: str, *, mlir_output: bool, allow_unregistered: bool = False) -> None:
    assert code in (0, 1), (code, err)
    assert "Traceback" not in err
    if code == 1:
        assert DIAGNOSTIC.match(err), err[:2000]
        return
    if mlir_output:  # read back as egraft-opt reads: on a stack fit for deep nesting
        run_with_deep_stack(lambda: verify(parse(out, "<output>", allow_unregistered=allow_unregistered)))


# ------------------------------------------------------------------ GraphDef byte mutations

_F = 'attr { key: "T" value { type: DT_FLOAT } }'
GRAPHS = [
    # v1 control flow, as in the reproducer: Switch / Merge around a predicate
    f'''node {{ name: "p" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
        node {{ name: "c" op: "Const" attr {{ key: "dtype" value {{ type: DT_BOOL }} }}
          attr {{ key: "value" value {{ tensor {{ dtype: DT_BOOL tensor_shape {{}} bool_val: true }} }} }} }}
        node {{ name: "s" op: "Switch" input: "p" input: "c" {_F} }}
        node {{ name: "n" op: "Neg" input: "s:1" {_F} }}
        node {{ name: "m" op: "Merge" input: "s" input: "n" {_F} attr {{ key: "N" value {{ i: 2 }} }} }}
        versions {{ producer: 27 }}''',
    # variadic inputs and outputs, control edges
    f'''node {{ name: "x" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
        node {{ name: "a" op: "AddN" input: "x" input: "x" input: "^x" attr {{ key: "N" value {{ i: 2 }} }} {_F} }}
        node {{ name: "i" op: "IdentityN" input: "a" input: "x"
          attr {{ key: "T" value {{ list {{ type: DT_FLOAT type: DT_FLOAT }} }} }} }}
        node {{ name: "r" op: "Relu" input: "i:1" {_F} }}''',
    # a function library and a call
    f'''node {{ name: "x" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
        node {{ name: "call" op: "f" input: "x" }}
        library {{ function {{ signature {{ name: "f" input_arg {{ name: "a" type: DT_FLOAT }}
                                            output_arg {{ name: "b" type: DT_FLOAT }} }}
                   node_def {{ name: "neg" op: "Neg" input: "a" {_F} }}
                   ret {{ key: "b" value: "neg:y:0" }} }} }}''',
]
PB_GRAPHS = [parse_pbtxt(text).SerializeToString() for text in GRAPHS]

mutation = st.one_of(
    st.tuples(st.just("set"), st.integers(0, 10_000), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10_000), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("delete"), st.integers(0, 10_000), st.integers(1, 8)),
    st.tuples(st.just("truncate"), st.integers(0, 10_000), st.just(0)),
)


def mutate(data: bytes, edits: list) -> bytes:
    buf = bytearray(data)
    for kind, where, what in edits:
        at = where % (len(buf) + 1)
        if kind == "set" and buf:
            buf[at % len(buf)] = what
        elif kind == "insert":
            buf[at:at] = what
        elif kind == "delete":
            del buf[at:at + what]
        elif kind == "truncate":
            del buf[at:]
    return bytes(buf)


@SETTINGS
@given(graph=st.sampled_from(PB_GRAPHS), edits=st.lists(mutation, min_size=1, max_size=4),
       form=st.sampled_from([(), ("--emit=tf_executor",), ("--emit=tf_executor", "--mlir-print-op-generic"),
                             ("--mlir-print-op-generic",), ("--output-format=pbtxt",)]))
def test_mutated_graphdefs(graph: bytes, edits: list, form: tuple[str, ...]) -> None:
    data = mutate(graph, edits)
    code, out, err = run("-", "--input-format=pb", *form, stdin=data)
    writes_graphdef = form == ("--output-format=pbtxt",)
    check_result(code, out, err, mlir_output=not writes_graphdef)
    if code == 0 and writes_graphdef:
        again = run("-", "--input-format=pbtxt", stdin=out.encode())
        assert again[0] == 0, again[2]


# ------------------------------------------------------------------ nesting depth

def nested(kind: str, depth: int) -> str:
    """A module nesting `kind` `depth` deep (valid MLIR unless the kind itself is not)."""
    if kind == "region":
        return '"t.op"() ({\n' * depth + '"t.leaf"() : () -> ()\n' + "}) : () -> ()\n" * depth
    if kind == "affine.for":
        loops = "".join(f"affine.for %i{k} = 0 to 2 {{\n" for k in range(depth))
        return f"func.func @f() {{\n{loops}{'}' * depth}\nreturn\n}}\n"
    if kind == "array":
        return f'"t.op"() {{a = {"[" * depth}1{"]" * depth}}} : () -> ()\n'
    if kind == "dictionary":
        return f'"t.op"() {{a = {"{b = " * depth}1{"}" * depth}}} : () -> ()\n'
    if kind == "tensor type":
        return f'"t.op"() : () -> {"tensor<" * depth}f32{">" * depth}\n'
    if kind == "affine expression":
        return f'"t.op"() {{m = affine_map<(d0) -> ({"(" * depth}d0{" + 1)" * depth})>}} : () -> ()\n'
    assert kind == "callsite location"
    inner = '"a"' + ' at "b")' * depth
    return f'"t.op"() : () -> () loc({"callsite(" * depth}{inner})\n'


NEST_KINDS = ["region", "affine.for", "array", "dictionary", "tensor type", "affine expression", "callsite location"]


@SETTINGS
@given(kind=st.sampled_from(NEST_KINDS), depth=st.integers(1, 3000), generic=st.booleans())
def test_any_nesting_depth(kind: str, depth: int, generic: bool) -> None:
    flags = ("--allow-unregistered-dialect", "--mlir-print-debuginfo") + (("--mlir-print-op-generic",) if generic else ())
    code, out, err = run("-", *flags, stdin=nested(kind, depth).encode())
    check_result(code, out, err, mlir_output=True, allow_unregistered=True)


# ------------------------------------------------------------------ long and out-of-range literals

@SETTINGS
@given(size=st.integers(0, 300_000), hex_digits=st.booleans(), element=st.sampled_from(["f32", "i8", "i64"]))
def test_long_literals(size: int, hex_digits: bool, element: str) -> None:
    if hex_digits:
        text = f'"t.op"() {{v = dense<"0x{"0" * (2 * size)}"> : tensor<{max(size // 4, 1)}x{element}>}} : () -> ()\n'
    else:
        text = f'"t.op"() {{s = "{"x" * size}"}} : () -> ()\n'
    code, out, err = run("-", "--allow-unregistered-dialect", stdin=text.encode())
    check_result(code, out, err, mlir_output=True, allow_unregistered=True)


def _beyond(width: int) -> st.SearchStrategy[int]:
    """Integers no `i<width>` holds: MLIR takes -2**(w-1) .. 2**w - 1 (either signedness)."""
    return st.one_of(st.integers(2**width, 2**80), st.integers(-(2**80), -(2 ** (width - 1)) - 1))


OUT_OF_RANGE = st.one_of(
    st.sampled_from([1, 8, 16]).flatmap(lambda w: _beyond(w).map(lambda v: f"%0 = arith.constant {v} : i{w}")),
    st.builds(lambda v: f"%0 = arith.constant {v} : i32", st.integers(2**32, 10**30)),
    st.builds(lambda d: f'%0 = "tf.Const"() {{value = dense<0.0> : tensor<{d}xf32>}} : () -> tensor<{d}xf32>',
              st.integers(2**63, 10**30)),
    st.builds(lambda w: f"%0 = arith.constant 0 : i{w}", st.integers(2**24, 10**12)),
    st.builds(lambda n, k: f'%0 = arith.constant dense<"0x{"00" * n}"> : tensor<{k}xf32>',
              st.integers(1, 64), st.integers(1, 16)),
)


@SETTINGS
@given(line=OUT_OF_RANGE)
def test_out_of_range_literals_are_rejected(line: str) -> None:
    """MLIR rejects each of these; egraft must too, with a located error."""
    if "dense<\"0x" in line:
        digits = len(line.split('"0x')[1].split('"')[0]) // 2
        count = int(line.split("tensor<")[1].split("x")[0])
        if digits in (4, 4 * count):  # a splat or exactly the data: valid
            return
    text = f"func.func @f() {{\n  {line}\n  return\n}}\n"
    code, out, err = run("-", stdin=text.encode())
    check_result(code, out, err, mlir_output=True)
    assert code == 1 and err.startswith("<stdin>:2:"), (line, err[:500])
