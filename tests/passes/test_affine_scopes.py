"""Per-affine-scope anchoring (`Pass.AFFINE_SCOPED`) and the enclosing-graybox lookup."""

from __future__ import annotations

from typing import ClassVar

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import Operation, parse
from egraft.ir.core import attributes as A
from egraft.ir.dialects.affine_dims import get_affine_scope, get_enclosing_affine_graybox, walk_affine
from egraft.passes import Pass, PassContext, PassFailure, parse_pipeline, register_pass
from egraft.passes.manager.affine_scopes import affine_scopes
from egraft.passes.manager.pass_manager import PassManager


@register_pass
@attrs.define
class _ScopeRecorder(Pass):
    """Records, per run, the scope op and the ops walk_affine shows it (tests only)."""

    NAME = "test-record-affine-scopes"
    SUMMARY = "Record the affine scopes a scoped pass is run on (tests only)"
    ANCHOR = "func.func"
    AFFINE_SCOPED = True
    runs: ClassVar[list[tuple[Operation, list[Operation]]]] = []

    def run(self, op: Operation, ctx: PassContext) -> None:
        type(self).runs.append((op, list(walk_affine(op))))


@register_pass
@attrs.define
class _TagInnermostStores(Pass):
    """Tags each store with the nesting depth of the scope that saw it first (tests only):
    a scope run after its nested scopes finds their stores tagged already."""

    NAME = "test-tag-affine-scopes"
    SUMMARY = "Tag stores with the scope that saw them first (tests only)"
    ANCHOR = "func.func"
    AFFINE_SCOPED = True

    def run(self, op: Operation, ctx: PassContext) -> None:
        for inner in walk_affine(op):
            if inner.name == "affine.store" and inner.attr("seen_by") is None:
                inner.set_attr("seen_by", A.StringAttr(op.name))
            if inner is not op and inner.name == "affine.graybox":
                assert all(o.attr("seen_by") is not None for o in inner.walk() if o.name == "affine.store")


NESTED = """
func.func @f(%A: memref<8xf32>, %n: index) {
  affine.for %i = 0 to 8 {
    affine.graybox [%rA] = (%A) : (memref<8xf32>) -> () {
      %v = affine.load %rA[%i] : memref<8xf32>
      affine.graybox [%rB] = (%rA) : (memref<8xf32>) -> () {
        affine.store %v, %rB[%i] : memref<8xf32>
        return
      }
      return
    }
  }
  affine.graybox [%rC] = (%A) : (memref<8xf32>) -> () {
    %c = arith.constant 1.0 : f32
    affine.store %c, %rC[0] : memref<8xf32>
    return
  }
  return
}
"""


def _grayboxes(module: Operation) -> list[Operation]:
    return [o for o in module.walk() if o.name == "affine.graybox"]


def test_scoped_pass_runs_innermost_first_then_the_function() -> None:
    module = parse(NESTED)
    outer, inner, sibling = _grayboxes(module)
    func = next(o for o in module.walk() if o.name == "func.func")
    _ScopeRecorder.runs.clear()
    PassManager(parse_pipeline("test-record-affine-scopes")).run(module)
    assert [scope for scope, _ in _ScopeRecorder.runs] == [inner, outer, sibling, func]
    seen = dict((scope, ops) for scope, ops in _ScopeRecorder.runs)
    # Each run sees its own scope through walk_affine: nested grayboxes opaque.
    assert inner in seen[outer] and not any(o.name == "affine.store" for o in seen[outer])
    assert outer in seen[func] and sibling in seen[func] and inner not in seen[func]
    assert [o.name for o in seen[inner]] == ["affine.graybox", "affine.store", "func.return"]


def test_scoped_pass_sees_nested_scopes_finished() -> None:
    module = parse(NESTED)
    PassManager(parse_pipeline("test-tag-affine-scopes")).run(module)
    stores = [o for o in module.walk() if o.name == "affine.store"]
    assert [s.attr("seen_by").value for s in stores] == ["affine.graybox", "affine.graybox"]


@register_pass
@attrs.define
class _UnscopedRecorder(_ScopeRecorder):
    NAME = "test-record-unscoped"
    AFFINE_SCOPED = False


def test_unscoped_pass_runs_once_on_its_anchor() -> None:
    _ScopeRecorder.runs.clear()
    PassManager(parse_pipeline("test-record-unscoped")).run(parse(NESTED))
    assert [scope.name for scope, _ in _ScopeRecorder.runs] == ["func.func"]


def test_scoped_pass_that_breaks_a_graybox_is_named() -> None:
    @register_pass
    @attrs.define
    class _DropGrayboxArg(Pass):
        NAME = "test-break-graybox"
        SUMMARY = "Break a graybox's argument list (tests only)"
        ANCHOR = "func.func"
        AFFINE_SCOPED = True

        def run(self, op: Operation, ctx: PassContext) -> None:
            if op.name == "affine.graybox" and op.regions[0].blocks[0].args:
                op.set_operands([])

    with pytest.raises(PassFailure) as info:
        PassManager(parse_pipeline("test-break-graybox")).run(parse(NESTED))
    text = str(info.value.diagnostics[0].notes[0].message) if info.value.diagnostics[0].notes else ""
    assert "region argument count does not match operand count" in str(info.value)
    assert "test-break-graybox" in text


# ------------------------------------------------------------------ generated nestings

@st.composite
def _nestings(draw: st.DrawFn, depth: int = 0) -> str:
    """A body: a random mix of loops, ifs and grayboxes, nested up to depth 4."""
    parts = []
    for _ in range(draw(st.integers(0 if depth else 1, 3))):
        kind = draw(st.sampled_from(["store", "for", "graybox"] if depth < 4 else ["store"]))
        if kind == "store":
            parts.append("affine.store %c, %M[0] : memref<4xf32>")
        elif kind == "for":
            parts.append(f"affine.for %i{depth}_{len(parts)} = 0 to 2 {{\n{draw(_nestings(depth + 1))}\n}}")
        else:
            parts.append(f"affine.graybox [%M] : (memref<4xf32>) {{\n{draw(_nestings(depth + 1))}\nreturn\n}}")
    return "\n".join(parts)


@settings(max_examples=60, deadline=None)
@given(_nestings())
def test_every_scope_runs_once_after_the_scopes_inside_it(body: str) -> None:
    module = parse(f"func.func @g(%M: memref<4xf32>) {{\n%c = arith.constant 0.0 : f32\n{body}\nreturn\n}}")
    func = next(o for o in module.walk() if o.name == "func.func")
    scopes = affine_scopes(func)
    assert scopes[-1] is func
    assert sorted(map(id, scopes[:-1])) == sorted(map(id, _grayboxes(module)))
    position = {s: i for i, s in enumerate(scopes)}
    for g in scopes[:-1]:
        assert position[get_enclosing_affine_graybox(g) or func] > position[g]


# ------------------------------------------------------------------ getEnclosingAffineGrayBox

def test_enclosing_graybox_is_the_closest_and_stops_at_a_function() -> None:
    module = parse(NESTED)
    outer, inner, sibling = _grayboxes(module)
    store_inner = next(o for o in inner.walk() if o.name == "affine.store")
    load = next(o for o in outer.walk() if o.name == "affine.load")
    loop = next(o for o in module.walk() if o.name == "affine.for")
    assert get_enclosing_affine_graybox(store_inner) is inner
    assert get_enclosing_affine_graybox(inner) is outer
    assert get_enclosing_affine_graybox(load) is outer
    assert get_enclosing_affine_graybox(outer) is None  # in a loop, in a function
    assert get_enclosing_affine_graybox(loop) is None
    assert get_affine_scope(load) is outer.regions[0]
    assert get_affine_scope(outer) is loop.parent_region


def test_enclosing_graybox_lookup_stops_at_a_function_inside_a_graybox() -> None:
    # Not valid IR (a function inside a graybox), but the lookup must not look past the
    # function: the function, not the graybox, bounds what its ops see.
    module = parse(NESTED)
    sibling = _grayboxes(module)[2]
    inner_func = Operation.create("func.func", regions=1)
    sibling.regions[0].blocks[0].prepend(inner_func)
    body = inner_func.regions[0].add_block()
    ret = body.append(Operation.create("func.return"))
    assert get_enclosing_affine_graybox(ret) is None
    assert get_enclosing_affine_graybox(inner_func) is sibling


@register_pass
@attrs.define
class _AnyScopeRecorder(_ScopeRecorder):
    NAME = "test-record-any-scopes"
    ANCHOR = None


def test_scoped_pass_on_a_module_runs_per_function_and_graybox() -> None:
    module = parse(NESTED + "func.func @h() {\n  return\n}\n")
    outer, inner, sibling = _grayboxes(module)
    f, h = [o for o in module.walk() if o.name == "func.func"]
    _ScopeRecorder.runs.clear()
    PassManager(parse_pipeline("test-record-any-scopes")).run(module)
    assert [scope for scope, _ in _ScopeRecorder.runs] == [inner, outer, sibling, f, h, module]
