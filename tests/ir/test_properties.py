"""Properties of the parser and printer on generated modules.

* print∘parse is a fixpoint: printing a module, parsing the text and
  printing again gives the same text (custom and generic forms).
* Any mutation of valid text gives a diagnostic or a valid module, never
  another exception.
"""

import math
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from egraft.ir import Block, DiagnosticError, Operation, Region, parse, print_ir, verify
from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.dialects.builtin import make_module

SCALARS = [T.i1, T.i8, T.i32, T.i64, T.index, T.f16, T.bf16, T.f32, T.f64, T.IntegerType(16, "u"),
           T.IntegerType(8, "s")]

scalar_types = st.sampled_from(SCALARS)
dims = st.lists(st.one_of(st.integers(0, 5), st.just(T.DYNAMIC)), max_size=3).map(tuple)
shaped_types = st.one_of(
    st.builds(T.RankedTensorType, dims, scalar_types),
    st.builds(T.UnrankedTensorType, scalar_types),
    st.builds(lambda d, e: T.MemRefType(tuple(x if x != T.DYNAMIC else 2 for x in d), e), dims, scalar_types),
    st.builds(lambda d, e: T.VectorType(tuple(max(x, 1) for x in d) or (1,), e), dims, scalar_types),
)
dialect_types = st.sampled_from([T.dialect_type("tf_type", "string"), T.dialect_type("tf_type", "resource<tensor<f32>>"),
                                 T.dialect_type("tf_executor", "control"), T.dialect_type("foo", "bar<\"x y\">")])
types = st.one_of(scalar_types, shaped_types, dialect_types,
                  st.builds(lambda ts: T.TupleType(tuple(ts)), st.lists(scalar_types, max_size=2)))

finite_or_special = st.one_of(st.floats(width=32), st.sampled_from([math.inf, -math.inf, math.nan, -0.0]))
keys = st.from_regex(r"[a-z_][a-z0-9_.]{0,6}", fullmatch=True) | st.text(min_size=1, max_size=4)


def _float_attr(value: float, t: T.FloatType) -> A.FloatAttr:
    return A.float_attr(value, t)


def _dense(values: list[int]) -> A.DenseElementsAttr:
    return A.DenseElementsAttr(T.RankedTensorType((len(values),), T.i32), tuple(values) if len(values) != 1 else values[0])


leaf_attrs = st.one_of(
    st.builds(A.IntegerAttr, st.integers(-2**31, 2**31 - 1), st.sampled_from([T.i32, T.i64, T.index])),
    st.builds(_float_attr, finite_or_special, st.sampled_from([T.f32, T.f64])),
    st.builds(A.StringAttr, st.text(max_size=6)),
    st.sampled_from([A.UNIT, A.TRUE, A.FALSE]),
    st.builds(A.TypeAttr, types),
    st.builds(A.SymbolRefAttr, st.from_regex(r"[a-z]\w{0,4}", fullmatch=True)),
    st.builds(_dense, st.lists(st.integers(-100, 100), min_size=1, max_size=4)),
    st.builds(lambda v: A.DenseArrayAttr(T.i64, tuple(v)), st.lists(st.integers(-5, 5), max_size=3)),
    st.builds(lambda n: A.dialect_attr("tf_type", f"shape<{n}x3>"), st.integers(1, 9)),
)
attrs = st.recursive(
    leaf_attrs,
    lambda inner: st.one_of(st.lists(inner, max_size=3).map(lambda xs: A.ArrayAttr(tuple(xs))),
                            st.dictionaries(keys, inner, max_size=3).map(
                                lambda d: A.DictionaryAttr(tuple(d.items())))),
    max_leaves=6,
)


@st.composite
def modules(draw) -> Operation:
    """A module of generic ops: operands drawn from values in scope, nested
    single-block regions with typed arguments."""
    counter = [0]

    def fill(block: Block, scope: list, depth: int) -> None:
        for _ in range(draw(st.integers(0, 4))):
            counter[0] += 1
            operands = draw(st.lists(st.sampled_from(scope), max_size=3)) if scope else []
            result_types = draw(st.lists(types, max_size=3))
            attributes = draw(st.dictionaries(keys, attrs, max_size=2))
            properties = draw(st.dictionaries(keys, attrs, max_size=1))
            regions = []
            if depth < 2 and draw(st.booleans()):
                region = Region(blocks=[Block(draw(st.lists(types, max_size=2)))])
                fill(region.blocks[0], scope + region.blocks[0].args, depth + 1)
                regions.append(region)
            op = Operation(f"test.op{counter[0] % 5}", operands, result_types, attributes, properties, regions)
            block.append(op)
            scope = scope + list(op.results)

    module = make_module()
    fill(module.regions[0].blocks[0], [], 0)
    return module


# EGRAFT_FUZZ_EXAMPLES raises the example count for a longer local fuzzing run.
FAST = settings(max_examples=int(os.environ.get("EGRAFT_FUZZ_EXAMPLES", 120)), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(modules())
def test_print_parse_is_a_fixpoint(module):
    for generic in (False, True):
        text = print_ir(module, generic=generic)
        again = print_ir(parse(text, allow_unregistered=True), generic=generic)
        assert again == text


MUTATIONS = st.sampled_from(["delete", "insert", "duplicate", "truncate"])
NOISE = st.sampled_from(list("%^#@!(){}[]<>:,=\"\\-x0 \n") + ["loc(", "dense<", "->", "//"])


@FAST
@given(modules(), st.lists(st.tuples(MUTATIONS, st.floats(0, 1), NOISE), min_size=1, max_size=3))
def test_mutated_text_gives_diagnostics_not_crashes(module, mutations):
    text = print_ir(module)
    for kind, where, noise in mutations:
        i = int(where * len(text))
        if kind == "delete":
            text = text[:i] + text[i + 1:]
        elif kind == "insert":
            text = text[:i] + noise + text[i:]
        elif kind == "duplicate":
            text = text[:i] + text[i:i + 7] + text[i:]
        else:
            text = text[:i]
    try:
        verify(parse(text, "mutated.mlir", allow_unregistered=True))
    except DiagnosticError as e:
        assert e.diagnostics and e.render()
