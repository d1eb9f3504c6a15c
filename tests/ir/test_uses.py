"""UseList behaves like the list of users it replaced (as a multiset: one entry per use)."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir.core.operation import Operation
from egraft.ir.core.uses import UseList

OPS = [Operation(f"test.op{i}") for i in range(4)]

# A program of edits: ("append", i), ("remove", i), ("clear", 0).
edits = st.lists(st.tuples(st.sampled_from(["append", "append", "remove", "clear"]),
                           st.integers(0, len(OPS) - 1)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(edits)
def test_use_list_matches_a_list_model(program: list[tuple[str, int]]) -> None:
    uses, model = UseList(), []
    for edit, i in program:
        op = OPS[i]
        if edit == "append":
            uses.append(op)
            model.append(op)
        elif edit == "remove":
            if op in model:
                uses.remove(op)
                model.remove(op)
            else:
                try:
                    uses.remove(op)
                except ValueError:
                    pass
                else:
                    raise AssertionError("removing a non-user must raise ValueError")
        else:
            uses.clear()
            model.clear()
        assert len(uses) == len(model) and bool(uses) == bool(model)
        assert Counter(uses) == Counter(model)
        # distinct users, each once (a user keeps its place while it has uses left)
        assert sorted(map(id, uses.users())) == sorted(map(id, set(model)))
        assert all(uses.count(o) == model.count(o) for o in OPS)
        if model:
            assert uses[0] in model and uses[0] is list(uses)[0]


def test_use_list_reads_like_a_list() -> None:
    a, b = OPS[0], OPS[1]
    uses = UseList([a, b, a])
    assert list(uses) == [a, a, b] and uses == [a, a, b] and len(uses) == 3
    assert uses.users() == [a, b] and uses[0] is a and uses[-1] is b and a in uses
    uses.remove(a)
    assert uses == [a, b]
    uses.remove(a)
    assert uses.users() == [b] and a not in uses
    uses.extend([a, a])
    assert uses == [b, a, a] and uses.count(a) == 2
