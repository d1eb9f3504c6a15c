"""Regenerate ``fused_kernels.py``, the remapper's table of TensorFlow's fused kernels.

Run once per TensorFlow release (needs TensorFlow; the table then works without it)::

    python -m egraft.patterns.grappler.fused_kernels_gen

The remapper (``remapper.py``) may emit a fused op only where TensorFlow can run it, and
two facts decide that, both read from the TensorFlow importable here rather than guessed:

1. **Registered kernels**: for each fused op, the device types with a kernel and the
   element types its ``T`` constraint allows (``get_registered_kernels_for_op``). A
   ``tensorflow-cpu`` build registers CPU kernels only, so no fusion is emitted on a GPU
   placed node from its table: regenerate with a GPU build to allow them.
2. **What the CPU kernel computes**: a kernel is registered for every ``fused_ops`` list,
   but it checks the list when it runs, and the lists it accepts depend on whether oneDNN
   is on (``TF_ENABLE_ONEDNN_OPTS``, whose default depends on the machine): without it,
   ``_FusedDepthwiseConv2dNative`` and ``_FusedBatchNormEx`` produce no output at all. So
   each candidate list is run once on a tiny float32 input in a subprocess per setting,
   and the lists that produce an output are recorded per setting ("default": oneDNN off,
   "onednn": on).
"""

from __future__ import annotations

import json
import os
import pprint
import subprocess
import sys
from pathlib import Path

OUTPUT = Path(__file__).with_name("fused_kernels.py")
FUSED_OPS = ("_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul", "_FusedBatchNormEx")
ACTIVATIONS = ("Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid", "GeluApproximate", "GeluExact")


def _candidates(op: str) -> list[tuple[str, ...]]:
    """The fused_ops lists (for _FusedBatchNormEx: the activation_mode) probed per op."""
    if op == "_FusedBatchNormEx":
        return [("Identity",), *((a,) for a in ACTIVATIONS)]
    heads = ("BiasAdd", "FusedBatchNorm") if op != "_FusedMatMul" else ("BiasAdd",)
    return [(h,) for h in heads] + [(h, a) for h in heads for a in ACTIVATIONS]


def _registered() -> dict:
    """{op: {device type: sorted element type names}} from the kernel registry."""
    import tensorflow as tf
    from tensorflow.python.framework import kernels

    table: dict = {}
    for op in FUSED_OPS:
        devices: dict[str, set[str]] = {}
        for kernel in kernels.get_registered_kernels_for_op(op).kernel:
            types = next((c.allowed_values.list.type for c in kernel.constraint if c.name == "T"), ())
            devices.setdefault(kernel.device_type, set()).update(tf.as_dtype(t).name for t in types)
        table[op] = {d: tuple(sorted(t)) for d, t in sorted(devices.items())}
    return table


def _probe() -> dict:
    """{op: [fused_ops lists the CPU kernel computes]} in this process's oneDNN setting."""
    import numpy as np
    import tensorflow as tf
    from tensorflow.core.framework import attr_value_pb2, graph_pb2

    def attr(**kw) -> attr_value_pb2.AttrValue:
        return attr_value_pb2.AttrValue(**kw)

    def array(**kw) -> attr_value_pb2.AttrValue:
        return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(**kw))

    def runs(op: str, inputs: list, attrs: dict) -> bool:
        graph = graph_pb2.GraphDef()
        for i, value in enumerate(inputs):
            node = graph.node.add(name=f"in{i}", op="Const")
            node.attr["dtype"].type = tf.float32.as_datatype_enum
            node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))
        node = graph.node.add(name="out", op=op, input=[f"in{i}" for i in range(len(inputs))],
                              device="/device:CPU:0")
        for key, value in attrs.items():
            node.attr[key].CopyFrom(value)
        with tf.Graph().as_default() as g:
            tf.graph_util.import_graph_def(graph, name="")
            with tf.compat.v1.Session(graph=g) as session:
                try:
                    session.run("out:0")
                    return True
                except tf.errors.OpError:
                    return False

    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 4, 4, 4)).astype(np.float32)
    c4 = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    f32 = attr(type=tf.float32.as_datatype_enum)
    window = dict(T=f32, strides=array(i=[1, 1, 1, 1]), padding=attr(s=b"SAME"))
    found: dict = {}
    for op in FUSED_OPS:
        found[op] = []
        for fused in _candidates(op):
            n = 1 if fused[0] == "BiasAdd" else 4
            common = dict(num_args=attr(i=n), fused_ops=array(s=[f.encode() for f in fused]))
            if op == "_FusedConv2D":
                ok = runs(op, [x, rng.standard_normal((2, 2, 4, 4)).astype(np.float32)] + [c4] * n,
                          {**window, **common, "TArgs": array(type=[f32.type] * n)})
            elif op == "_FusedDepthwiseConv2dNative":
                ok = runs(op, [x, rng.standard_normal((2, 2, 4, 1)).astype(np.float32)] + [c4] * n,
                          {**window, **common})
            elif op == "_FusedMatMul":
                ok = runs(op, [x.reshape(4, 16), rng.standard_normal((16, 4)).astype(np.float32)] + [c4] * n,
                          {"T": f32, **common})
            else:
                ok = runs(op, [x, c4, c4, c4, c4], dict(T=f32, U=f32, activation_mode=attr(s=fused[0].encode()),
                                                        is_training=attr(b=False), num_side_inputs=attr(i=0)))
            if ok:
                found[op].append(fused)
    return found


def _probe_in(onednn: bool) -> dict:
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1" if onednn else "0", TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, "-m", __spec__.name if __spec__ else __file__, "--probe"], env=env,
                         check=True, capture_output=True, text=True).stdout
    return {op: tuple(tuple(f) for f in lists) for op, lists in json.loads(out.splitlines()[-1]).items()}


def write() -> None:
    import tensorflow as tf

    computes = {"default": _probe_in(False), "onednn": _probe_in(True)}
    text = (f'"""TensorFlow {tf.__version__}\'s fused kernels, for the remapper (patterns/grappler/remapper.py).\n\n'
            "Generated by fused_kernels_gen.py (python -m egraft.patterns.grappler.fused_kernels_gen); do not edit.\n"
            "KERNELS: {fused op: {device type: element types of T}} from the kernel registry.\n"
            "COMPUTES: {oneDNN setting: {fused op: fused_ops lists (_FusedBatchNormEx: activation_mode) the\n"
            'CPU kernel computes}}, probed by running each on a small float32 input.\n"""\n\n'
            f"TENSORFLOW = {tf.__version__!r}\n\n"
            f"KERNELS = {pprint.pformat(_registered(), width=110)}\n\n"
            f"COMPUTES = {pprint.pformat(computes, width=110)}\n")
    OUTPUT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        print(json.dumps(_probe()))
    else:
        write()
        print(f"wrote {OUTPUT}")
