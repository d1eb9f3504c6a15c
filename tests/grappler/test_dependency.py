"""Grappler's dependency optimizer (`grappler-dependency` rules + the `tf-dependency` step):
forwarding ops and NoOps go with their control edges rewired, redundant control edges go, and
what Grappler keeps is kept; every case is checked by the interpreter before/after."""

from __future__ import annotations

import pytest

from egraft.ir import parse, print_ir
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline
from egraft.passes.soundness import assert_pass_sound, assert_rule_sound
from egraft.patterns.grappler.dependency import RULES as DEPENDENCY_RULES

PIPELINE = "builtin.module(tf-grappler)"
#: The dependency optimizer on its own (one island per node, no other family): what its tests state.
DEPENDENCY = ("builtin.module(tf-grappler{coarsen=false common-subgraph-elimination=false constant-folding=false "
              "batchnorm=false})")

FORWARDING = """
func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = tf_executor.graph {
    %a:2 = tf_executor.island {
      %n = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %i:2 = tf_executor.island {
      %v = "tf.Identity"(%a#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %v : tensor<2xf32>
    }
    %s:2 = tf_executor.island {
      %v = "tf.Snapshot"(%i#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %v : tensor<2xf32>
    }
    %g:2 = tf_executor.island {
      %v = "tf.StopGradient"(%s#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %v : tensor<2xf32>
    }
    %m:3 = tf_executor.island {
      %v:2 = "tf.IdentityN"(%g#0, %x) : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      tf_executor.yield %v#0, %v#1 : tensor<2xf32>, tensor<2xf32>
    }
    %b:2 = tf_executor.island {
      %e = "tf.Exp"(%m#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %e : tensor<2xf32>
    }
    %c:2 = tf_executor.island {
      %e = "tf.AddV2"(%b#0, %m#1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %e : tensor<2xf32>
    }
    %d:2 = tf_executor.island {
      %v = "tf.Identity"(%c#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %v : tensor<2xf32>
    }
    tf_executor.fetch %d#0, %b#0 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}
"""

CONTROLS = """
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %a:2 = tf_executor.island {
      %n = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %b:2 = tf_executor.island {
      %n = "tf.Exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %noop = tf_executor.island(%a#1) {
      "tf.NoOp"() : () -> ()
      tf_executor.yield
    }
    %i:2 = tf_executor.island(%noop) {
      %v = "tf.Identity"(%b#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %v : tensor<2xf32>
    }
    %c:2 = tf_executor.island(%b#1, %b#1) {
      %e = "tf.AddV2"(%i#0, %b#0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %e : tensor<2xf32>
    }
    tf_executor.fetch %c#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
"""

KEPT = """
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %a:2 = tf_executor.island {
      %n = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %manual = tf_executor.island(%a#1) {
      "tf.NoOp"() {_has_manual_control_dependencies = true} : () -> ()
      tf_executor.yield
    }
    %c:2 = tf_executor.island(%manual, %a#1) {
      %e = "tf.Exp"(%a#0) {_has_manual_control_dependencies = true} : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %e : tensor<2xf32>
    }
    tf_executor.fetch %c#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
"""


def _run(text: str, pipeline: str = DEPENDENCY) -> str:
    module = parse(text)
    PassManager(parse_pipeline(pipeline)).run(module)
    return print_ir(module)


def test_forwarding_ops_removed() -> None:
    assert_pass_sound(FORWARDING, PIPELINE, examples=20)
    out = _run(FORWARDING)
    for name in ("Snapshot", "StopGradient", "IdentityN"):
        assert name not in out, out
    # the fetched Identity goes too: in tf_executor a fetch is a position, not a name (the
    # GraphDef export gives a fetched name back, test_pass.py checks it)
    assert '"tf.Identity"' not in out and out.count("tf_executor.island") == 3, out


def test_noop_and_identity_controls_rewired() -> None:
    """The NoOp's control input reaches the Identity's consumer, the Identity's control input
    with it; the repeated and data-implied control operands go."""
    assert_pass_sound(CONTROLS, PIPELINE, examples=20)
    out = _run(CONTROLS)
    assert "NoOp" not in out and '"tf.Identity"' not in out, out
    add = next(line for line in out.splitlines() if "tf_executor.island(" in line and "yield" not in line
               and line.strip().startswith("%") and "AddV2" in out)
    assert out.count("tf_executor.island") == 3, out
    # the AddV2 island waits on Neg's island (through the NoOp) and not on Exp's (data implies it)
    assert "tf_executor.island(%" in add, out


def test_manual_control_dependencies_respected() -> None:
    assert_pass_sound(KEPT, PIPELINE, examples=10)
    out = _run(KEPT)
    # the NoOp goes, but the Exp (marked) still waits on the Neg: through the NoOp's control
    # input, and its own control operand is not dropped although its data implies it
    assert '"tf.NoOp"' not in out and "tf_executor.island(%control)" in out, out


def test_fetched_noop_order_kept() -> None:
    """A NoOp fetched as a control output: the fetch still waits on what it waited on, through
    one token (the GraphDef export names the control outputs by their position among the fetch's
    control operands and gives a gone one's name back as a NoOp; test_pass.py)."""
    text = KEPT.replace("tf_executor.fetch %c#0 : tensor<2xf32>",
                        "%f = tf_executor.island(%a#1) {\n" '"tf.NoOp"() : () -> ()\n' "tf_executor.yield\n}\n"
                        "tf_executor.fetch %c#0, %f : tensor<2xf32>, !tf_executor.control")
    assert "tf_executor.fetch %outputs_0, %control :" in _run(text)
    # Named as a control output (tf.entry_function), the fetched token stays one token: an empty
    # island waiting on the Neg's, not forwarded.
    named = text.replace("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {",
                         'func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> attributes {tf.entry_function = '
                         '{control_outputs = "done", inputs = "x", outputs = "y"}} {')
    out = _run(named)
    assert "%control_2 = tf_executor.island(%control) {\n        tf_executor.yield\n      }" in out, out
    assert "tf_executor.fetch %outputs_0, %control_2 :" in out, out


def test_switched_off() -> None:
    module = parse(FORWARDING)
    # constant folding forwards trivial ops too (as Grappler's pruner does before it): both off
    PassManager(parse_pipeline("builtin.module(tf-grappler{dependency=false constant-folding=false})")).run(module)
    assert "Snapshot" in print_ir(module)


@pytest.mark.parametrize("driver", ["egraph", "greedy"])
def test_both_drivers_agree(driver: str) -> None:
    module = parse(CONTROLS)
    PassManager(parse_pipeline(DEPENDENCY.replace("{", f"{{driver={driver} "))).run(module)
    assert print_ir(module) == _run(CONTROLS)


# Deadness: generated graphs with Switch/Merge, Identity islands and control operands, run by
# the reference with deadness of tests/islands (the interpreter has none), on every feed.
from hypothesis import assume, given, settings  # noqa: E402

from tests.islands.gen import graphs  # noqa: E402
from tests.islands.test_coarsening import _outputs  # noqa: E402


@settings(max_examples=80, deadline=None)
@given(graphs())
def test_deadness_preserved(text: str) -> None:
    before = _outputs(parse(text))
    after = parse(_run(text, PIPELINE))
    # a graph left with one island is inlined by the executor canonicalization (its soundness
    # is tests/canonicalize/test_executor.py's); the reference runs graphs only
    assume(any(op.name == "tf_executor.graph" for op in after.walk()))
    assert _outputs(after) == before, text


CHAIN = """
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %a:2 = tf_executor.island {
      %n = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %i:2 = tf_executor.island(%a#1) {
      %v = "tf.Identity"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %v : tensor<2xf32>
    }
    %j:2 = tf_executor.island {
      %v = "tf.Identity"(%i#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %v : tensor<2xf32>
    }
    %c:2 = tf_executor.island {
      %e = "tf.Exp"(%j#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %e : tensor<2xf32>
    }
    tf_executor.fetch %c#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
"""


def test_control_carried_through_a_chain_of_removed_identities() -> None:
    """The first Identity's control input (the Neg) reaches the Exp through the second Identity."""
    assert_pass_sound(CHAIN, PIPELINE, examples=10)
    out = _run(CHAIN)
    assert '"tf.Identity"' not in out and "tf_executor.island(%control)" in out, out


@pytest.mark.parametrize("name", [r.name for r in DEPENDENCY_RULES])
def test_rule_is_sound(name: str) -> None:
    """Each rule of the set, through the soundness harness (random inputs, every driver)."""
    (found,) = [r for r in DEPENDENCY_RULES if r.name == name]
    assert_rule_sound(found, examples=30)
