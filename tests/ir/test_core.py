"""The IR structure: use lists, mutation, walking, cloning, building."""

import pytest

from egraft.ir import Block, Builder, IRError, Operation, Region, parse, print_ir
from egraft.ir.core import types as T

SRC = """
func.func @f(%a: i32, %b: i32) -> i32 {
  %0 = "test.add"(%a, %b) : (i32, i32) -> i32
  %1 = "test.mul"(%0, %0) : (i32, i32) -> i32
  %2 = "test.region"(%1) ({
  ^bb0(%x: i32):
    %3 = "test.neg"(%x) : (i32) -> i32
    "test.yield"(%3) : (i32) -> ()
  }) : (i32) -> i32
  return %2 : i32
}
"""


def body(module: Operation) -> Block:
    return module.regions[0].blocks[0].first.regions[0].blocks[0]


def test_use_lists_count_each_operand_slot():
    m = parse(SRC, allow_unregistered=True)
    add, mul, region_op, ret = body(m).ops
    assert mul.operands == [add.result, add.result]
    assert add.result.uses == [mul, mul]
    assert add.result.users == [mul]
    assert region_op.result.uses == [ret]


def test_replace_all_uses_and_erase():
    m = parse(SRC, allow_unregistered=True)
    block = body(m)
    add, mul, region_op, ret = block.ops
    mul.result.replace_all_uses_with(add.result)
    assert region_op.operands[0] is add.result
    assert not mul.result.uses
    mul.erase()
    assert [op.name for op in block] == ["test.add", "test.region", "func.return"]
    assert add.result.uses == [region_op]


def test_erase_with_uses_is_an_error():
    m = parse(SRC, allow_unregistered=True)
    add = body(m).first
    with pytest.raises(IRError):
        add.erase()


def test_dropping_users_of_a_long_use_list_keeps_the_others_in_order():
    """Erasing users found at either end, in the middle, and users reading the value twice."""
    import random

    a = Block([T.i32]).args[0]
    users = [Operation("test.use", [a, a] if i % 7 == 0 else [a]) for i in range(300)]
    expected = [u for u in users for v in u.operands]
    assert a.uses == expected
    rng = random.Random(0)
    order = users[:40] + users[-40:][::-1] + rng.sample(users[40:-40], 220)
    for u in order:
        u.drop_all_uses_of_operands()
        expected = [e for e in expected if e is not u]
        assert a.uses == expected
    assert a.uses == [] and all(not u.operands for u in users)


def test_move_and_insert_keep_the_list_consistent():
    m = parse(SRC, allow_unregistered=True)
    block = body(m)
    add, mul, region_op, ret = block.ops
    mul.move_before(add)
    assert [op.name for op in block] == ["test.mul", "test.add", "test.region", "func.return"]
    assert [op.name for op in reversed(block)] == ["func.return", "test.region", "test.add", "test.mul"]
    assert mul.is_before_in_block(add)
    new = Builder.before_op(ret).create("test.const", result_types=[T.i32])
    assert new.next is ret and new.prev is region_op


def test_walk_can_skip_chosen_ops():
    m = parse(SRC, allow_unregistered=True)
    names = [op.name for op in m.walk()]
    assert "test.neg" in names
    skipped = [op.name for op in m.walk(skip=lambda op: op.name == "test.region")]
    assert "test.region" in skipped and "test.neg" not in skipped
    post = [op.name for op in m.walk_post_order()]
    assert post.index("test.neg") < post.index("test.region") < post.index("func.func")


def test_clone_remaps_operands_and_nested_values():
    m = parse(SRC, allow_unregistered=True)
    region_op = body(m).ops[2]
    clone = region_op.clone()
    inner = clone.regions[0].blocks[0]
    neg = inner.first
    assert neg.operands[0] is inner.args[0]
    assert clone.operands[0] is region_op.operands[0]
    assert neg is not region_op.regions[0].blocks[0].first


def test_builder_creates_registered_ops_with_their_class():
    region = Region(blocks=[Block([T.i32])])
    block = region.blocks[0]
    b = Builder.at_end(block)
    ret = b.create("func.return", [block.args[0]])
    assert type(ret).__name__ == "FuncReturnOp"
    assert ret.parent is block


def test_print_parse_round_trip_is_stable():
    m = parse(SRC, allow_unregistered=True)
    once = print_ir(m)
    assert print_ir(parse(once, allow_unregistered=True)) == once
    generic = print_ir(m, generic=True)
    assert print_ir(parse(generic, allow_unregistered=True), generic=True) == generic
