"""tf_executor canonicalization (`rewrite/structural/executor.py`): values are preserved (interpreter),
and ops whose control output may carry deadness something observes are kept."""

from __future__ import annotations

import pytest

from egraft.ir import parse, print_ir
from egraft.passes.soundness import assert_pass_sound
from egraft.passes.manager.pass_manager import PassManager
from egraft.passes.manager.pipeline import parse_pipeline

PROGRAM = """
func.func @f(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:3 = tf_executor.graph {
    %1:2 = tf_executor.island {
      %2 = tf_executor.graph {
        %3:2 = tf_executor.island {
          %4 = "tf.AddV2"(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
          tf_executor.yield %4 : tensor<2xf32>
        }
        tf_executor.fetch %3#0 : tensor<2xf32>
      }
      %5 = "tf.Mul"(%2, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %5 : tensor<2xf32>
    }
    tf_executor.fetch %1#0, %x, %1#0 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  %6 = tf_executor.graph {
    tf_executor.fetch %y : tensor<2xf32>
  }
  return %0#0, %6, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %1 = tf_executor.island {
      tf_executor.yield
    }
    %2:2 = tf_executor.island(%1) {
      %3 = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %3 : tensor<2xf32>
    }
    %4:2 = tf_executor.island {
      tf_executor.yield %2#0 : tensor<2xf32>
    }
    %5 = tf_executor.ControlTrigger {}
    %6:2 = tf_executor.island(%5) {
      %7 = "tf.Sqrt"(%4#0) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %7 : tensor<2xf32>
    }
    tf_executor.fetch %6#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
"""

# Deadness: the empty island with data and a used control, the one with control operands
# and data, and the ControlTrigger with operands must stay.
KEPT = """
func.func @k(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %a:2 = tf_executor.island {
      %n = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %n : tensor<2xf32>
    }
    %b:2 = tf_executor.island {
      tf_executor.yield %a#0 : tensor<2xf32>
    }
    %c:2 = tf_executor.island(%a#1) {
      tf_executor.yield %x : tensor<2xf32>
    }
    %t = tf_executor.ControlTrigger %b#1 {}
    %d:2 = tf_executor.island(%t) {
      %s = "tf.AddV2"(%b#0, %c#0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %s : tensor<2xf32>
    }
    tf_executor.fetch %d#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
"""


@pytest.mark.parametrize("driver", ["egraph", "greedy"])
def test_executor_canonicalization_is_sound(driver: str) -> None:
    pipeline = f"func.func(canonicalize{{driver={driver}}})"
    assert_pass_sound(PROGRAM, pipeline, examples=30)
    module = parse(PROGRAM)
    PassManager(parse_pipeline(pipeline)).run(module)
    text = print_ir(module)
    assert "tf_executor.graph" not in text.split("func.func @g")[0]  # @f: every graph hoisted or empty
    g = text.split("func.func @g")[1]
    assert "ControlTrigger" not in g and g.count("tf_executor.island") == 2, g


@pytest.mark.parametrize("driver", ["egraph", "greedy"])
def test_deadness_carrying_ops_are_kept(driver: str) -> None:
    pipeline = f"func.func(canonicalize{{driver={driver}}})"
    assert_pass_sound(KEPT, pipeline, examples=20)
    module = parse(KEPT)
    PassManager(parse_pipeline(pipeline)).run(module)
    text = print_ir(module)
    assert text.count("tf_executor.island") == 4 and "ControlTrigger" in text, text


def test_disabled_by_name() -> None:
    module = parse(PROGRAM)
    PassManager(parse_pipeline("func.func(canonicalize{disable-patterns=tf-executor-canonical})")).run(module)
    assert "tf_executor.graph" in print_ir(module)


SINGLE_ISLAND = """
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tf_executor.graph {
    %1:2 = tf_executor.island {
      %2 = "tf.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      tf_executor.yield %2 : tensor<2xf32>
    }
    tf_executor.fetch %1#0 : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
"""


@pytest.mark.parametrize("driver", ["egraph", "greedy"])
def test_run_where_tf_canonical_declares_it_and_reported(driver: str) -> None:
    """The step is tf-canonical's (patterns/tf_rules.py declares it): a run of other sets leaves
    the graph alone, and the report counts its rewrites by the step's name."""
    remarks: list[str] = []
    module = parse(SINGLE_ISLAND)
    PassManager(parse_pipeline(f"func.func(canonicalize{{driver={driver} report=true}})"),
                emit=lambda d: remarks.append(d.message)).run(module)
    assert "tf_executor.graph" not in print_ir(module)
    assert any(r.splitlines()[0].endswith("; tf-executor-canonical: 1") for r in remarks), remarks  # rule lines follow
    module = parse(SINGLE_ISLAND)
    PassManager(parse_pipeline(f"func.func(canonicalize{{driver={driver} rules=arith-canonical}})")).run(module)
    assert "tf_executor.graph" in print_ir(module)
