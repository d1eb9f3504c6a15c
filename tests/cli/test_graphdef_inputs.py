"""GraphDefs the importer must refuse, and conversions that must never write invalid IR.

The reproducer: a `Switch` with one input crashed `--emit=tf_executor` (IndexError in
the printer) and, with `--mlir-print-op-generic`, wrote invalid IR with exit 0.  The
importer now checks each node's input count against its OpDef, as TensorFlow's graph
importer does, and every conversion verifies its result before it is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from egraft.ir import parse, verify

from .tool import assert_one_error_line, run

PLACEHOLDER = 'node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }\n'
ONE_INPUT_SWITCH = PLACEHOLDER + 'node { name: "s" op: "Switch" input: "p" attr { key: "T" value { type: DT_FLOAT } } }\n'
SWITCH_MESSAGE = ("INVALID_ARGUMENT: NodeDef expected inputs 'float, bool' do not match 1 inputs specified; "
                  "NodeDef: {{node s}}")


def write(tmp_path: Path, text: str, name: str = "g.pbtxt") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("flags", [(), ("--emit=tf_executor",), ("--emit=tf_executor", "--mlir-print-op-generic"),
                                   ("--mlir-print-op-generic",), ("-graphdef-to-mlir",)])
def test_one_input_switch_is_refused_with_tensorflows_message(tmp_path: Path, flags: tuple[str, ...]) -> None:
    src = write(tmp_path, ONE_INPUT_SWITCH)
    code, out, err = run(src, *flags)
    assert (code, out) == (1, "")
    assert_one_error_line(err, f"{src}: error: {SWITCH_MESSAGE}")


@pytest.mark.parametrize("node, expected", [
    ('node { name: "a" op: "AddN" input: "p" input: "p" attr { key: "N" value { i: 3 } } '
     'attr { key: "T" value { type: DT_FLOAT } } }', "'float, float, float' do not match 2 inputs"),
    ('node { name: "a" op: "Neg" input: "p" input: "p" input: "^p" attr { key: "T" value { type: DT_FLOAT } } }',
     "'float' do not match 2 inputs"),
    ('node { name: "a" op: "IdentityN" input: "p" attr { key: "T" value { list { type: DT_FLOAT type: DT_INT32 } } } }',
     "'float, int32' do not match 1 inputs"),
])
def test_input_counts_follow_the_opdef(tmp_path: Path, node: str, expected: str) -> None:
    code, _, err = run(write(tmp_path, PLACEHOLDER + node))
    assert code == 1 and f"NodeDef expected inputs {expected} specified" in err, err


def test_control_inputs_do_not_count(tmp_path: Path) -> None:
    text = PLACEHOLDER + 'node { name: "n" op: "Neg" input: "p" input: "^p" attr { key: "T" value { type: DT_FLOAT } } }'
    code, out, err = run(write(tmp_path, text), "--emit=tf_executor")
    assert code == 0, err
    verify(parse(out))


def test_conversion_that_cannot_be_expressed_is_an_error_not_invalid_ir(tmp_path: Path) -> None:
    """A float Switch predicate is a valid tfg node but no valid tf_executor.Switch."""
    src = write(tmp_path, PLACEHOLDER + 'node { name: "s" op: "Switch" input: "p" input: "p" '
                                       'attr { key: "T" value { type: DT_FLOAT } } }')
    assert run(src)[0] == 0  # tfg itself does not type its operands, as in TensorFlow
    code, out, err = run(src, "--emit=tf_executor")
    assert (code, out) == (1, "")
    assert "error: 'tf_executor.Switch' op operand #1 must be tensor of 1-bit signless integer values" in err
    assert f"{src}: note: in the tf_executor form converted from this input" in err


@pytest.mark.tf
def test_messages_match_tensorflows_importer(tmp_path: Path) -> None:
    """TensorFlow's own graph importer words the same problems the same way (its message
    goes on with a summary of the OpDef, which egraft leaves out)."""
    tf = pytest.importorskip("tensorflow")
    from google.protobuf import text_format

    cases = [ONE_INPUT_SWITCH,
             PLACEHOLDER + 'node { name: "a" op: "AddN" input: "p" input: "p" attr { key: "N" value { i: 3 } } '
                           'attr { key: "T" value { type: DT_FLOAT } } }']
    for text in cases:
        graph = tf.compat.v1.GraphDef()
        text_format.Parse(text, graph)
        with tf.Graph().as_default(), pytest.raises(ValueError) as raised:
            tf.compat.v1.import_graph_def(graph, name="")
        code, _, err = run(write(tmp_path, text))
        ours = err.split("INVALID_ARGUMENT: ", 1)[1].split("; NodeDef:")[0]
        assert code == 1 and str(raised.value).startswith(ours + "; Op<"), (str(raised.value), ours)
