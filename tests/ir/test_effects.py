"""ir/effects.py: the one definition of side effects and trivial deadness."""

from __future__ import annotations

from egraft.ir import parse
from egraft.ir.effects import has_side_effects, is_memory_effect_free, is_trivially_dead, would_be_trivially_dead

LOOPS = """
func.func @f(%m: memref<4xf32>, %x: f32) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 4 {
      %y = arith.addf %x, %x : f32
    }
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 4 {
      affine.store %x, %m[%i] : memref<4xf32>
    }
  }
  return
}
"""


def ops(text: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for op in parse(text, allow_unregistered=True).walk():
        found.setdefault(op.name, []).append(op)
    return found


def test_recursive_effects_look_into_every_level() -> None:
    loops = ops(LOOPS)["affine.for"]  # pre-order: pure outer, pure inner, storing outer, storing inner
    assert [is_memory_effect_free(op) for op in loops] == [True, True, False, False]
    assert is_trivially_dead(loops[0]) and not is_trivially_dead(loops[2])
    assert all(has_side_effects(op) for op in loops)  # the encoding's answer is per name: ordered


def test_terminators_symbols_and_used_results_are_not_dead() -> None:
    found = ops(LOOPS)
    assert not would_be_trivially_dead(found["func.return"][0])
    assert not would_be_trivially_dead(found["func.func"][0])
    assert is_trivially_dead(found["arith.addf"][0])
    used = ops("func.func @g(%x: i32) -> i32 {\n %y = arith.addi %x, %x : i32\n return %y : i32\n}")
    assert would_be_trivially_dead(used["arith.addi"][0]) and not is_trivially_dead(used["arith.addi"][0])


def test_tf_ops_without_records_follow_tensorflows_registry() -> None:
    text = """
    func.func @h(%a: tensor<4xf32>, %c: tensor<4xi1>) {
      %0 = "tf.Abs"(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "tf.SelectV2"(%c, %a, %a) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %2 = "tf.Print"(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %3 = "tf.Assign"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %4 = "tf.PartitionedCall"(%a) {f = @h} : (tensor<4xf32>) -> tensor<4xf32>
      %5 = "tf.NotAnOpOfTensorFlow"(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %6 = "mydialect.op"(%a) : (tensor<4xf32>) -> tensor<4xf32>
      return
    }
    """
    found = ops(text)
    effects = {name: has_side_effects(found[name][0]) for name in found if name.startswith(("tf.", "mydialect."))}
    assert effects == {"tf.Abs": False, "tf.SelectV2": False, "tf.Print": True, "tf.Assign": True,
                       "tf.PartitionedCall": True, "tf.NotAnOpOfTensorFlow": True, "mydialect.op": True}
    assert all(found[n][0].opdef is None for n in effects), "a test op got a record: pick another"
