"""Static shapes (`egraft.ir.semantics.tf_shapes`, `-tf-shape-inference`) against TensorFlow's own.

TensorFlow's importer runs its shape functions on every node; egraft's must never disagree
with a dim TF knows, and must know every dim TF knows for the ops it has shape functions
for. Checked on generated graphs (hypothesis draws each op's shapes and attributes) and on
real models (the shipped example and the Keras zoo).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from egraft.ir import parse
from egraft.ir.graphdef import load_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.ir.semantics.tf_shapes import SHAPE_FNS, Shapes, broadcast, kind_of, refine_types
from egraft.ir.verifier import verify

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.pb"


# ----------------------------------------------------------------- without TensorFlow

def test_broadcast_of_partial_shapes():
    assert broadcast((2, 1, 3), (4, 1)) == (2, 4, 3)
    assert broadcast((-1, 3), (5, 1)) == (5, 3)
    assert broadcast((-1,), (1,)) == (-1,)
    assert broadcast((2,), (3,)) is None  # TF would fail: nothing to say
    assert broadcast((2,), None) is None


def test_shape_arithmetic_reaches_a_reshape():
    """Shape -> StridedSlice -> Pack -> Reshape: the constant shape is followed through."""
    module = parse('''
func.func @f(%x: tensor<4x6x8xf32>) -> tensor<*xf32> {
  %s = "tf.Shape"(%x) : (tensor<4x6x8xf32>) -> tensor<*xi32>
  %b = "tf.Const"() <{value = dense<[0]> : tensor<1xi32>}> : () -> tensor<*xi32>
  %e = "tf.Const"() <{value = dense<[1]> : tensor<1xi32>}> : () -> tensor<*xi32>
  %n = "tf.StridedSlice"(%s, %b, %e, %e) {shrink_axis_mask = 1 : i64} : (tensor<*xi32>, tensor<*xi32>, tensor<*xi32>, tensor<*xi32>) -> tensor<*xi32>
  %m = "tf.Const"() <{value = dense<-1> : tensor<i32>}> : () -> tensor<*xi32>
  %p = "tf.Pack"(%n, %m) {axis = 0 : i64} : (tensor<*xi32>, tensor<*xi32>) -> tensor<*xi32>
  %r = "tf.Reshape"(%x, %p) : (tensor<4x6x8xf32>, tensor<*xi32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}''')
    shapes = Shapes()
    ops = {op.name: op for op in module.walk()}
    assert shapes.shape(ops["tf.Reshape"].results[0]) == (4, 48)
    assert refine_types(module) > 0
    verify(module)
    assert str(ops["func.func"].attr("function_type").value) == "(tensor<4x6x8xf32>) -> tensor<4x48xf32>"


def test_unknown_stays_unknown():
    """A Reshape to a fed shape, an op without a shape function: rank or dims unknown, not guessed."""
    module = parse('''
func.func @f(%x: tensor<4x6xf32>, %s: tensor<2xi32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %r = "tf.Reshape"(%x, %s) : (tensor<4x6xf32>, tensor<2xi32>) -> tensor<*xf32>
  %u = "tf.SomethingNew"(%x) : (tensor<4x6xf32>) -> tensor<*xf32>
  return %r, %u : tensor<*xf32>, tensor<*xf32>
}''')
    shapes = Shapes()
    ops = {op.name: op for op in module.walk()}
    assert shapes.shape(ops["tf.Reshape"].results[0]) == (-1, -1)
    assert shapes.shape(ops["tf.SomethingNew"].results[0]) is None


def test_the_pass_on_the_executor_form_keeps_the_module_valid():
    from egraft.passes.cli.main import main

    # the example through egraft-opt: GraphDef -> tf_executor, then the pass
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        assert main([str(EXAMPLE), "--tf-input-arrays=image", "--tf-output-arrays=Identity", "--emit=tf_executor"]) == 0
    module = parse(out.getvalue())
    assert refine_types(module) > 0
    verify(module)
    func = next(op for op in module.walk() if op.name == "func.func")
    assert str(func.attr("function_type").value) == "(tensor<1x16x16x3xf32>) -> tensor<1x10xf32>"
    convs = [op for op in module.walk() if op.name == "tf.Conv2D"]
    assert convs and str(convs[0].results[0].type) == "tensor<1x16x16x8xf32>"


# ----------------------------------------------------------------- against TensorFlow

def _compare(graph_def_bytes: bytes, tf_graph) -> tuple[int, list, list]:
    """(tensors compared, disagreements, tensors of shaped ops where TF knows more)."""
    from egraft.ir.graphdef.proto import parse_pb

    theirs = {}
    for op in tf_graph.get_operations():
        for i, t in enumerate(op.outputs):
            theirs[(op.name, i)] = None if t.shape.rank is None else \
                tuple(-1 if d is None else d for d in t.shape.as_list())
    module = import_graphdef(parse_pb(graph_def_bytes, "g.pb"), "g.pb")
    shapes = Shapes()
    compared, wrong, weaker = 0, [], []
    for op in module.walk():
        kind = kind_of(op)
        name = getattr(op.attr("_mlir_name"), "value", None)
        if kind is None or name is None or op.parent_op is None or op.parent_op.name != "tfg.graph":
            continue  # (a function body's nodes are not in TF's graph, whatever their names)
        data = [r for r in op.results if "control" not in str(r.type)]
        for i, r in enumerate(data):
            if (name, i) not in theirs:
                continue
            compared += 1
            ours, tf_shape = shapes.shape(r), theirs[(name, i)]
            if ours is not None and tf_shape is not None and (
                    len(ours) != len(tf_shape) or any(a >= 0 and b >= 0 and a != b for a, b in zip(ours, tf_shape))):
                wrong.append((kind, name, ours, tf_shape))
            if kind in SHAPE_FNS and _known(ours) < _known(tf_shape):
                weaker.append((kind, name, ours, tf_shape))
    return compared, wrong, weaker


def _known(s) -> int:
    return 0 if s is None else 1 + sum(d >= 0 for d in s)


dims = st.integers(1, 6)


def _shape(draw, rank_lo=1, rank_hi=4):
    return tuple(draw(st.lists(dims, min_size=rank_lo, max_size=rank_hi)))


def _maybe_unknown(draw, shape):
    """Some dims unknown (None), as a fed batch size is."""
    return [None if draw(st.booleans()) and draw(st.booleans()) else d for d in shape]


KINDS = ["binary", "matmul", "batch_matmul", "einsum", "conv", "depthwise", "pool", "reshape", "transpose",
         "concat", "split", "splitv", "pack", "unpack", "squeeze", "expand", "reduce", "argmax", "pad", "tile",
         "slice", "strided", "gather", "onehot", "fbn", "bias", "shape_chain", "softmax", "select", "range"]


def _build(draw, tf, kind):
    """One op of the catalogue, with drawn shapes and attributes, on placeholders."""
    v1 = tf.compat.v1
    f32 = tf.float32
    ph = lambda shape, dtype=f32: v1.placeholder(dtype, _maybe_unknown(draw, shape))  # noqa: E731
    if kind == "binary":
        a = _shape(draw, 0, 4)
        b = tuple(draw(st.sampled_from([1, d])) for d in a[draw(st.integers(0, len(a))):])
        op = draw(st.sampled_from([tf.raw_ops.AddV2, tf.raw_ops.Mul, tf.raw_ops.Maximum, tf.raw_ops.SquaredDifference]))
        x, y = ph(a), ph(b)
        op(x=x, y=y) if draw(st.booleans()) else op(x=y, y=x)
    elif kind == "matmul":
        m, k, n = draw(dims), draw(dims), draw(dims)
        ta, tb = draw(st.booleans()), draw(st.booleans())
        tf.raw_ops.MatMul(a=ph((k, m) if ta else (m, k)), b=ph((n, k) if tb else (k, n)), transpose_a=ta, transpose_b=tb)
    elif kind == "batch_matmul":
        batch = _shape(draw, 0, 2)
        other = tuple(draw(st.sampled_from([1, d])) for d in batch)
        m, k, n = draw(dims), draw(dims), draw(dims)
        ax, ay = draw(st.booleans()), draw(st.booleans())
        tf.raw_ops.BatchMatMulV2(x=ph(batch + ((k, m) if ax else (m, k))), y=ph(other + ((n, k) if ay else (k, n))),
                                 adj_x=ax, adj_y=ay)
    elif kind == "einsum":
        eq, shapes = draw(st.sampled_from([
            ("abc,cd->abd", [(2, 3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
            ("...ij,jk->...ik", [(2, 3, 3, 4), (4, 5)]), ("bfnh,bfmh->bnfm", [(1, 3, 2, 4), (1, 3, 5, 4)]),
            ("ab->ba", [(3, 4)]), ("abc->ac", [(2, 3, 4)])]))
        tf.raw_ops.Einsum(inputs=[ph(s) for s in shapes], equation=eq)
    elif kind in ("conv", "depthwise", "pool"):
        n, h, w, c = draw(dims), draw(st.integers(3, 12)), draw(st.integers(3, 12)), draw(dims)
        kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        s = [1, draw(st.integers(1, 3)), draw(st.integers(1, 3)), 1]
        d = [1, draw(st.integers(1, 2)), draw(st.integers(1, 2)), 1] if kind != "pool" and s == [1, 1, 1, 1] else [1] * 4
        padding = draw(st.sampled_from(["SAME", "VALID"] + (["EXPLICIT"] if kind == "conv" else [])))
        nchw = kind == "conv" and draw(st.booleans())
        xs = (n, c, h, w) if nchw else (n, h, w, c)
        if nchw:
            s = [s[0], s[3], s[1], s[2]]
            d = [d[0], d[3], d[1], d[2]]
        x = ph(xs)
        if kind == "conv":
            pads = [0, 0, 0, 0, draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 2)),
                    draw(st.integers(0, 2))] if padding == "EXPLICIT" else []
            if nchw and pads:
                pads = [0, 0, 0, 0] + pads[4:]
            tf.raw_ops.Conv2D(input=x, filter=ph((kh, kw, c, draw(dims))), strides=s, padding=padding,
                              explicit_paddings=pads, dilations=d, data_format="NCHW" if nchw else "NHWC")
        elif kind == "depthwise":
            tf.raw_ops.DepthwiseConv2dNative(input=x, filter=ph((kh, kw, c, draw(dims))), strides=s,
                                             padding=padding, dilations=d)
        else:
            pool = draw(st.sampled_from([tf.raw_ops.MaxPool, tf.raw_ops.AvgPool]))
            pool(value=x, ksize=[1, kh, kw, 1], strides=s, padding=padding) if pool is tf.raw_ops.AvgPool else \
                pool(input=x, ksize=[1, kh, kw, 1], strides=s, padding=padding)
    elif kind == "reshape":
        a = _shape(draw)
        total = int(np.prod(a))
        target = [total] if draw(st.booleans()) else [a[0], -1]
        tf.reshape(ph(a), target)
    elif kind == "transpose":
        a = _shape(draw)
        perm = draw(st.permutations(list(range(len(a)))))
        tf.transpose(ph(a), perm)
    elif kind == "concat":
        a = _shape(draw)
        axis = draw(st.integers(-len(a), len(a) - 1))
        parts = [tuple(draw(dims) if i == axis % len(a) else d for i, d in enumerate(a)) for _ in range(draw(st.integers(1, 3)))]
        tf.concat([ph(p) for p in parts], axis)
    elif kind in ("split", "splitv"):
        a = list(_shape(draw))
        axis = draw(st.integers(0, len(a) - 1))
        k = draw(st.integers(1, 3))
        if kind == "split":
            a[axis] *= k
            tf.split(ph(tuple(a)), k, axis=axis)
        else:
            sizes = [draw(dims) for _ in range(k)]
            a[axis] = sum(sizes)
            if draw(st.booleans()):
                sizes[draw(st.integers(0, k - 1))] = -1
            tf.raw_ops.SplitV(value=ph(tuple(a)), size_splits=sizes, axis=axis, num_split=k)
    elif kind == "pack":
        a = _shape(draw, 0, 3)
        tf.stack([ph(a) for _ in range(draw(st.integers(1, 3)))], axis=draw(st.integers(-len(a) - 1, len(a))))
    elif kind == "unpack":
        a = _shape(draw)
        axis = draw(st.integers(0, len(a) - 1))
        tf.unstack(v1.placeholder(f32, a), axis=axis)
    elif kind == "squeeze":
        a = tuple(draw(st.sampled_from([1, d])) for d in _shape(draw))
        ones = [i for i, d in enumerate(a) if d == 1]
        axes = draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
        tf.squeeze(v1.placeholder(f32, a) if not axes else ph(a), axes or None)
    elif kind == "expand":
        a = _shape(draw, 0, 3)
        tf.expand_dims(ph(a), draw(st.integers(-len(a) - 1, len(a))))
    elif kind == "reduce":
        a = _shape(draw)
        axes = draw(st.lists(st.integers(-len(a), len(a) - 1), unique_by=lambda x: x % len(a), max_size=len(a)))
        op = draw(st.sampled_from([tf.raw_ops.Sum, tf.raw_ops.Mean, tf.raw_ops.Max, tf.raw_ops.Prod]))
        op(input=ph(a), axis=axes, keep_dims=draw(st.booleans()))
    elif kind == "argmax":
        a = _shape(draw)
        tf.raw_ops.ArgMax(input=ph(a), dimension=draw(st.integers(-len(a), len(a) - 1)))
    elif kind == "pad":
        a = _shape(draw)
        pads = [[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in a]
        tf.pad(ph(a), pads)
    elif kind == "tile":
        a = _shape(draw)
        tf.tile(ph(a), [draw(st.integers(1, 3)) for _ in a])
    elif kind == "slice":
        a = _shape(draw)
        begin = [draw(st.integers(0, d - 1)) for d in a]
        size = [draw(st.sampled_from([-1, d - b])) for d, b in zip(a, begin)]
        tf.slice(v1.placeholder(f32, a), begin, size)
    elif kind == "strided":
        a = _shape(draw, 1, 4)
        x = v1.placeholder(f32, a)
        index = []
        for d in a[:draw(st.integers(1, len(a)))]:
            choice = draw(st.sampled_from(["int", "range", "full", "step", "newaxis", "neg"]))
            index.append({"int": draw(st.integers(0, d - 1)), "range": slice(0, draw(st.integers(1, d))),
                          "full": slice(None), "step": slice(None, None, draw(st.integers(1, 2))),
                          "newaxis": tf.newaxis, "neg": slice(None, None, -1)}[choice])
        if draw(st.booleans()):
            index.insert(draw(st.integers(0, len(index))), Ellipsis)
        x[tuple(index)]
    elif kind == "gather":
        p, i = _shape(draw, 1, 3), _shape(draw, 0, 2)
        axis = draw(st.integers(0, len(p) - 1))
        tf.gather(ph(p), v1.placeholder(tf.int32, i), axis=axis)
    elif kind == "onehot":
        tf.one_hot(ph(_shape(draw, 0, 2), tf.int32), draw(dims), axis=draw(st.sampled_from([-1, 0])))
    elif kind == "fbn":
        n, h, w, c = draw(dims), draw(dims), draw(dims), draw(dims)
        vec = lambda: v1.placeholder(f32, (c,))  # noqa: E731
        tf.raw_ops.FusedBatchNormV3(x=ph((n, h, w, c)), scale=vec(), offset=vec(), mean=vec(), variance=vec(),
                                     is_training=False)
    elif kind == "bias":
        a = _shape(draw, 2, 4)
        tf.raw_ops.BiasAdd(value=ph(a), bias=v1.placeholder(f32, (a[-1],)))
    elif kind == "shape_chain":
        a = _shape(draw, 2, 4)
        x = v1.placeholder(f32, a)
        s = tf.shape(x)
        tf.reshape(x, tf.stack([s[0], -1]))
    elif kind == "softmax":
        tf.nn.softmax(ph(_shape(draw, 1, 3)))
    elif kind == "select":
        a = _shape(draw)
        tf.raw_ops.SelectV2(condition=ph(a, tf.bool), t=ph(a), e=ph((1,) * len(a)))
    elif kind == "range":
        tf.range(draw(st.integers(0, 5)), draw(st.integers(5, 20)), draw(st.integers(1, 4)))


@pytest.mark.tf
@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_graphs_agree_with_tensorflow(kind, data):
    tf = pytest.importorskip("tensorflow")
    graph = tf.Graph()
    with graph.as_default():
        try:
            _build(data.draw, tf, kind)
        except (ValueError, tf.errors.InvalidArgumentError):  # TF rejects the drawn op: nothing to compare
            event("rejected by TensorFlow")
            return
    event("compared")
    compared, wrong, weaker = _compare(graph.as_graph_def().SerializeToString(), graph)
    assert compared > 0
    assert not wrong, (kind, wrong)
    assert not weaker, (kind, weaker)


def _models() -> list[Path]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "keras_apps"))
    import zoo  # noqa: E402

    names = ("MobileNetV3Small", "bert_l2_h128_s64", "lstm_u64_s32") + tuple(getattr(zoo, "FUNCTIONAL", ()))
    return [files.pb for files in zoo.ensure(names).values()]


@pytest.mark.tf
def test_real_models_agree_with_tensorflow():
    """The shipped example and zoo models (a CNN, a BERT encoder, an LSTM with v1 loops, and
    the function-library ones: functional If/While, a function called twice): no
    disagreement anywhere, and everything TF knows known, except on v1 loops' back edges
    (egraft does not assume a loop keeps its shapes) and TensorList ops (no shape function)."""
    tf = pytest.importorskip("tensorflow")
    for pb in [EXAMPLE] + _models():
        data = pb.read_bytes()
        graph_def = tf.compat.v1.GraphDef()
        graph_def.ParseFromString(data)
        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
        compared, wrong, weaker = _compare(data, graph)
        assert compared > 10 and not wrong, (pb.name, wrong[:5])
        if "lstm" not in pb.name:
            assert not weaker, (pb.name, weaker[:5])
        else:  # the loop's body and what reads the TensorList it fills: egraft knows less there
            assert all("while" in name or "lstm_1/strided_slice" in name or "head_1" in name or name == "Identity"
                       for kind, name, _, _ in weaker), weaker


def test_load_graphdef_is_shaped_without_tensorflow():
    """The example's logits are shaped from the GraphDef alone (the feed's Placeholder shape)."""
    module = import_graphdef(load_graphdef(EXAMPLE), str(EXAMPLE))
    shapes = Shapes()
    softmax = next(op for op in module.walk() if op.name == "tfg.Softmax")
    assert shapes.shape(softmax.results[0]) == (1, 10)


@pytest.mark.tf
def test_the_pass_through_egraft_opt_keeps_what_tensorflow_computes(tmp_path):
    """GraphDef -> -tf-shape-inference -> GraphDef: TensorFlow runs the result and computes
    what the original computes (3 seeds; the refined types are not written, the graph is)."""
    tf = pytest.importorskip("tensorflow")
    from egraft.passes.cli.main import main

    out = tmp_path / "refined.pb"
    assert main([str(EXAMPLE), "-tf-shape-inference", "-o", str(out)]) == 0

    def run(pb: Path, x: np.ndarray) -> np.ndarray:
        graph_def = tf.compat.v1.GraphDef()
        graph_def.ParseFromString(pb.read_bytes())
        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run("Identity:0", {"image:0": x})

    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((1, 16, 16, 3)).astype(np.float32)
        np.testing.assert_allclose(run(out, x), run(EXAMPLE, x), rtol=1e-4, atol=1e-6)


# ----------------------------------------------------------------- against the interpreter (no TensorFlow)

def _ints(values) -> str:
    values = list(values)
    return f"dense<{values}> : tensor<{len(values)}xi32>" if values else "dense<> : tensor<0xi32>"


def _chain_step(draw, shape: tuple, x: str, i: int, X: str) -> tuple[list[str], tuple] | None:
    """One op on `x` (of type `X`, value of static `shape`; the result unranked in the IR):
    its lines, and None (the interpreter says what shape it has)."""
    rank = len(shape)
    T = "tensor<*xf32>"
    c = f"%c{i}"
    kind = draw(st.sampled_from(["transpose", "reshape", "expand", "squeeze", "reduce", "concat", "pack", "slice",
                                 "pad", "bias", "matmul", "bmm", "add", "split", "softmax", "shape_reshape"]))
    if kind == "transpose":
        perm = draw(st.permutations(list(range(rank))))
        return [f'{c} = "tf.Const"() <{{value = {_ints(perm)}}}> : () -> tensor<{rank}xi32>',
                f'%v{i} = "tf.Transpose"({x}, {c}) : ({X}, tensor<{rank}xi32>) -> {T}'], None
    if kind == "reshape":
        total = int(np.prod(shape))
        divisors = [d for d in range(1, total + 1) if total % d == 0]
        d = draw(st.sampled_from(divisors))
        target = [d, -1] if draw(st.booleans()) else [-1, d]
        return [f'{c} = "tf.Const"() <{{value = {_ints(target)}}}> : () -> tensor<2xi32>',
                f'%v{i} = "tf.Reshape"({x}, {c}) : ({X}, tensor<2xi32>) -> {T}'], None
    if kind == "expand" and rank < 4:
        axis = draw(st.integers(-rank - 1, rank))
        return [f'{c} = "tf.Const"() <{{value = dense<{axis}> : tensor<i32>}}> : () -> tensor<i32>',
                f'%v{i} = "tf.ExpandDims"({x}, {c}) : ({X}, tensor<i32>) -> {T}'], None
    if kind == "squeeze" and 1 in shape:
        ones = [j for j, s in enumerate(shape) if s == 1]
        dims = draw(st.lists(st.sampled_from(ones), unique=True, min_size=1))
        return [f'%v{i} = "tf.Squeeze"({x}) {{squeeze_dims = {sorted(dims)}}} : ({X}) -> {T}'], None
    if kind == "reduce" and rank:
        axes = draw(st.lists(st.integers(0, rank - 1), unique=True, min_size=1))
        op = draw(st.sampled_from(["Sum", "Mean", "Max"]))
        keep = draw(st.booleans())
        return [f'{c} = "tf.Const"() <{{value = {_ints(axes)}}}> : () -> tensor<{len(axes)}xi32>',
                f'%v{i} = "tf.{op}"({x}, {c}) {{keep_dims = {str(keep).lower()}}} : ({X}, tensor<{len(axes)}xi32>) -> {T}'], None
    if kind == "concat" and rank:
        axis = draw(st.integers(-rank, rank - 1))
        return [f'{c} = "tf.Const"() <{{value = dense<{axis}> : tensor<i32>}}> : () -> tensor<i32>',
                f'%v{i} = "tf.ConcatV2"({x}, {x}, {c}) : ({X}, {X}, tensor<i32>) -> {T}'], None
    if kind == "pack" and rank < 4:
        axis = draw(st.integers(-rank - 1, rank))
        return [f'%v{i} = "tf.Pack"({x}, {x}, {x}) {{axis = {axis} : i64}} : ({X}, {X}, {X}) -> {T}'], None
    if kind == "slice" and rank:
        begin, end, strides = [], [], []
        for d in shape:
            b = draw(st.integers(-d, d))
            begin.append(b)
            end.append(draw(st.integers(-d, d)))
            strides.append(draw(st.sampled_from([1, 2, -1])))
        masks = {m: draw(st.integers(0, 2 ** rank - 1)) for m in ("begin_mask", "end_mask")}
        lines = [f'{c}b = "tf.Const"() <{{value = {_ints(begin)}}}> : () -> tensor<{rank}xi32>',
                 f'{c}e = "tf.Const"() <{{value = {_ints(end)}}}> : () -> tensor<{rank}xi32>',
                 f'{c}s = "tf.Const"() <{{value = {_ints(strides)}}}> : () -> tensor<{rank}xi32>',
                 f'%v{i} = "tf.StridedSlice"({x}, {c}b, {c}e, {c}s) {{begin_mask = {masks["begin_mask"]} : i64, '
                 f'end_mask = {masks["end_mask"]} : i64}} : ({X}, tensor<{rank}xi32>, tensor<{rank}xi32>, '
                 f'tensor<{rank}xi32>) -> {T}']
        return lines, None
    if kind == "pad" and rank:
        pads = [draw(st.integers(0, 2)) for _ in range(2 * rank)]
        return [f'{c} = "tf.Const"() <{{value = dense<{[pads[2 * j:2 * j + 2] for j in range(rank)]}> : tensor<{rank}x2xi32>}}> : () -> tensor<{rank}x2xi32>',
                f'%v{i} = "tf.Pad"({x}, {c}) : ({X}, tensor<{rank}x2xi32>) -> {T}'], None
    if kind == "bias" and rank >= 2:
        return [f'{c} = "tf.Const"() <{{value = dense<0.5> : tensor<{shape[-1]}xf32>}}> : () -> tensor<{shape[-1]}xf32>',
                f'%v{i} = "tf.BiasAdd"({x}, {c}) : ({X}, tensor<{shape[-1]}xf32>) -> {T}'], None
    if kind == "matmul" and rank == 2:
        n = draw(st.integers(1, 5))
        ta = draw(st.booleans())
        k = shape[0] if ta else shape[1]
        return [f'{c} = "tf.Const"() <{{value = dense<0.5> : tensor<{k}x{n}xf32>}}> : () -> tensor<{k}x{n}xf32>',
                f'%v{i} = "tf.MatMul"({x}, {c}) {{transpose_a = {str(ta).lower()}, transpose_b = false}} : ({X}, tensor<{k}x{n}xf32>) -> {T}'], None
    if kind == "bmm" and rank >= 2:
        n = draw(st.integers(1, 5))
        return [f'{c} = "tf.Const"() <{{value = dense<0.5> : tensor<{shape[-1]}x{n}xf32>}}> : () -> tensor<{shape[-1]}x{n}xf32>',
                f'%v{i} = "tf.BatchMatMulV2"({x}, {c}) : ({X}, tensor<{shape[-1]}x{n}xf32>) -> {T}'], None
    if kind == "add":
        other = tuple(draw(st.sampled_from([1, d])) for d in shape[draw(st.integers(0, rank)):])
        extra = tuple(draw(st.lists(st.integers(1, 3), max_size=max(0, 3 - rank))))
        other = extra + other if len(extra) + len(other) <= 4 else other
        t = f"tensor<{'x'.join(map(str, other))}{'x' if other else ''}f32>"
        return [f'{c} = "tf.Const"() <{{value = dense<1.5> : {t}}}> : () -> {t}',
                f'%v{i} = "tf.AddV2"({x}, {c}) : ({X}, {t}) -> {T}'], None
    if kind == "split" and rank:
        axis = draw(st.integers(0, rank - 1))
        k = draw(st.sampled_from([d for d in range(1, shape[axis] + 1) if shape[axis] % d == 0]))
        outs = ", ".join([T] * k)
        return [f'{c} = "tf.Const"() <{{value = dense<{axis}> : tensor<i32>}}> : () -> tensor<i32>',
                f'%v{i}:{k} = "tf.Split"({c}, {x}) {{num_split = {k} : i64}} : (tensor<i32>, {X}) -> ({outs})'
                if k > 1 else f'%v{i} = "tf.Split"({c}, {x}) {{num_split = 1 : i64}} : (tensor<i32>, {X}) -> {T}'], None
    if kind == "softmax" and rank:
        return [f'%v{i} = "tf.Softmax"({x}) : ({X}) -> {T}'], None
    if kind == "shape_reshape" and rank >= 2:
        return [f'{c}s = "tf.Shape"({x}) : ({X}) -> tensor<*xi32>',
                f'{c}b = "tf.Const"() <{{value = dense<[0]> : tensor<1xi32>}}> : () -> tensor<1xi32>',
                f'{c}e = "tf.Const"() <{{value = dense<[1]> : tensor<1xi32>}}> : () -> tensor<1xi32>',
                f'{c}n = "tf.StridedSlice"({c}s, {c}b, {c}e, {c}e) {{shrink_axis_mask = 1 : i64}} : (tensor<*xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<*xi32>',
                f'{c}m = "tf.Const"() <{{value = dense<-1> : tensor<i32>}}> : () -> tensor<i32>',
                f'{c}p = "tf.Pack"({c}n, {c}m) {{axis = 0 : i64}} : (tensor<*xi32>, tensor<i32>) -> tensor<*xi32>',
                f'%v{i} = "tf.Reshape"({x}, {c}p) : ({X}, tensor<*xi32>) -> {T}'], None
    return None


def _chain_module(arg_shape: tuple, lines: list[str], values: list[str]):
    t = f"tensor<{'x'.join(map(str, arg_shape))}{'x' if arg_shape else ''}f32>"
    results = ", ".join(["tensor<*xf32>"] * len(values))
    body = "\n  ".join(lines)
    return parse(f"func.func @f(%arg: {t}) -> ({results}) {{\n  {body}\n  return {', '.join(values)} : {results}\n}}")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_generated_chains_agree_with_the_interpreter(data):
    """Chains of shape-changing tf ops with unranked result types: every dim the analysis
    claims is the dim the reference interpreter's result has (no TensorFlow needed)."""
    from egraft.ir.semantics import Undefined, Unsupported, run_function

    arg_shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    arg_type = f"tensor<{'x'.join(map(str, arg_shape))}xf32>"
    shape, x = arg_shape, "%arg"
    lines: list[str] = []
    values: list[str] = []
    for i in range(data.draw(st.integers(1, 4))):
        step = _chain_step(data.draw, shape, x, i, arg_type if x == "%arg" else "tensor<*xf32>")
        if step is None:
            continue
        body, _ = step
        head = body[-1].split("=")[0]
        x = f"%v{i}#0" if ":" in head else f"%v{i}"
        try:  # the next step is drawn for this value's actual shape
            outs = run_function(_chain_module(arg_shape, lines + body, values + [x]), [np.ones(arg_shape, np.float32)])
        except (Undefined, Unsupported):
            break  # TF would reject it (e.g. an empty slice's shape arithmetic): stop the chain here
        lines += body
        values.append(x)
        shape = tuple(np.asarray(outs[-1]).shape)
        if np.asarray(outs[-1]).size > 4096 or 0 in shape:
            break
    event(f"{len(values)} ops in the chain")
    if not values:
        return
    module = _chain_module(arg_shape, lines, values)
    outs = run_function(module, [np.ones(arg_shape, np.float32)])
    ret = next(op for op in module.walk() if op.name == "func.return")
    shapes = Shapes()
    for v, out in zip(ret.operands, outs):
        ours, actual = shapes.shape(v), np.asarray(out).shape
        assert ours is not None, (lines, v)  # every op of these chains has a shape function and static inputs
        assert len(ours) == len(actual) and all(a == b for a, b in zip(ours, actual) if a >= 0), (lines, ours, actual)
