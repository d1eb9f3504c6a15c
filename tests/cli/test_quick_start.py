"""The README's first quick-start command, as printed there, does what the README says.

The command is read from README.md (the line after `pip install -e . && `), so the test
breaks when the README and the tool drift apart. It runs as a real process from the
repository's root, its output file moved to a temporary folder.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from .tool import REPO, run_process

INSTALL = "pip install -e . && "


def quick_start_command() -> list[str]:
    """The first quick-start command's egraft-opt arguments."""
    line = next(l for l in (REPO / "README.md").read_text().splitlines() if l.startswith(INSTALL))
    argv = shlex.split(line[len(INSTALL):])
    assert argv[0] == "egraft-opt", line
    return argv[1:]


def run_quick_start(tmp_path: Path) -> tuple[str, Path]:
    """(stderr, the written file) of the command, its `-o` redirected into ``tmp_path``."""
    argv = quick_start_command()
    at = argv.index("-o")
    out = tmp_path / Path(argv[at + 1]).name
    argv[at + 1] = str(out)
    done = run_process(*argv, cwd=REPO)
    assert done.returncode == 0, done.stderr.decode()
    return done.stderr.decode(), out


def test_quick_start_prints_grapplers_report_and_shrinks_the_graph(tmp_path: Path) -> None:
    from egraft.ir.graphdef import load_graphdef

    err, out = run_quick_start(tmp_path)
    lines = err.splitlines()
    assert lines and all(": remark: " in l for l in lines), err
    labels = {re.search(r"remark: ([a-z ]+): Graph size after", l).group(1) for l in lines}
    assert {"model pruner", "constant folding", "batchnorm folding", "dependency optimizer"} <= labels
    before = load_graphdef(REPO / "examples" / "small_cnn.pb")
    after = load_graphdef(out)
    assert len(after.node) < len(before.node) / 2
    ops = {n.op for n in after.node}
    assert not ops & {"Rsqrt", "Sub", "Mul"}, ops  # the BatchNorms were folded into the weights
    assert "Identity" in {n.name for n in after.node}  # the fetch keeps its name


@pytest.mark.tf
def test_quick_start_output_computes_what_the_example_computes(tmp_path: Path) -> None:
    """TensorFlow runs both graphs on seeded images: the logits agree (rtol 1e-4), and
    the optimized graph has no more nodes than Grappler's default leaves."""
    np = pytest.importorskip("numpy")
    tf = pytest.importorskip("tensorflow")
    from tensorflow.python.grappler import cluster, tf_optimizer

    from egraft.ir.graphdef import load_graphdef

    _, out = run_quick_start(tmp_path)
    original = tf.compat.v1.GraphDef.FromString((REPO / "examples" / "small_cnn.pb").read_bytes())
    optimized = tf.compat.v1.GraphDef.FromString(out.read_bytes())

    def logits(graph_def, image):
        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run("Identity:0", {"image:0": image})

    for seed in range(3):
        image = np.random.default_rng(seed).standard_normal((1, 16, 16, 3)).astype(np.float32)
        expected, got = logits(original, image), logits(optimized, image)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
        assert np.ptp(expected) > 1e-3  # the logits depend on the image: the comparison means something

    meta = tf.compat.v1.MetaGraphDef()
    meta.graph_def.CopyFrom(original)
    for node in meta.graph_def.node:
        node.device = "/device:CPU:0"
    meta.collection_def["train_op"].node_list.value.append("Identity")
    grappler = tf_optimizer.OptimizeGraph(tf.compat.v1.ConfigProto(), meta, cluster=cluster.Cluster())
    assert len(load_graphdef(out).node) <= len(grappler.node)


def test_quick_start_needs_no_test_extra(tmp_path: Path) -> None:
    """`pip install -e .` has no hypothesis (a test extra): the command must not import it."""
    import subprocess
    import sys

    argv = quick_start_command()
    argv[argv.index("-o") + 1] = str(tmp_path / "out.pb")
    script = ("import sys; sys.modules['hypothesis'] = None; sys.modules['pytest'] = None\n"
              "from egraft.passes.cli.main import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", script, *argv], cwd=REPO, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
