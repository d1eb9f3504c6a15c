"""scf.for / scf.if / scf.yield, 2019's loop.* spellings, and their interpreter semantics."""

import io
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraft.ir import parse, print_ir, verify
from egraft.ir.semantics import dialects  # noqa: F401  (registers the evaluators)
from egraft.ir.semantics.interpreter import execute, run_function
from egraft.ir.semantics.values import MemRef
from egraft.passes.cli.main import main as egraft_opt


def run_opt(text: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = egraft_opt(["-"], stdin=lambda: textwrap.dedent(text).encode(), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


LOOP_2019 = """\
func @f(%N : index, %c: i1, %A: memref<10xf32>) {
  %c0 = constant 0 : index
  %c1 = constant 1 : index
  loop.for %i = %c0 to %N step %c1 {
    loop.if %c {
      %v = load %A[%i] : memref<10xf32>
      store %v, %A[%c0] : memref<10xf32>
    } else {
      "loop.terminator"() : () -> ()
    }
  }
  return
}
"""


def test_2019_loop_spellings_read_as_scf_and_round_trip():
    rc, out, err = run_opt(LOOP_2019)
    assert rc == 0, err
    assert "scf.for %arg3 = %c0 to %arg0 step %c1 {" in out and "scf.if %arg1 {" in out
    assert "loop." not in out and "scf.yield" not in out  # empty terminators stay implicit
    rc, again, err = run_opt(out)
    assert rc == 0 and again == out, err


def test_iter_args_results_and_integer_bounds_round_trip():
    text = """\
        func.func @f(%lb: i32, %ub: i32, %s: i32, %c: i1, %x: f32) -> f32 {
          %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %x) -> (f32) : i32 {
            %t = scf.if %c -> (f32) {
              %y = arith.addf %acc, %acc : f32
              scf.yield %y : f32
            } else {
              scf.yield %acc : f32
            }
            scf.yield %t : f32
          }
          return %r : f32
        }
        """
    rc, out, err = run_opt(text)
    assert rc == 0, err
    assert "iter_args(%arg6 = %arg4) -> (f32) : i32 {" in out and "%1 = scf.if %arg3 -> f32 {" in out
    rc, again, err = run_opt(out)
    assert rc == 0 and again == out, err


@pytest.mark.parametrize("body, message", [
    ("%c0 = arith.constant 0 : index\n  scf.for %i = %n to %n step %c0 {\n  }",
     "'scf.for' op constant step operand must be positive"),
    ("%r = scf.if %b -> (f32) {\n    scf.yield %x : f32\n  }",
     "'scf.if' op must have an else block if defining values"),
    ("scf.if %b {\n    scf.yield %x : f32\n  }",
     "'scf.if' op along control flow edge from Region #0 to parent results: source has 1 operands, "
     "but target successor needs 0"),
    ("%r = scf.for %i = %n to %n step %n iter_args(%a = %x) -> (f32) {\n    scf.yield %n : index\n  }",
     "'scf.for' op along control flow edge from Region #0 to parent results: source type #0 index should "
     "match input type #0 f32"),
    ('"scf.for"(%n, %n, %n) ({\n  ^bb0(%i: i32):\n    scf.yield\n  }) : (index, index, index) -> ()',
     "'scf.for' op expected induction variable to be same type as bounds and step"),
])
def test_verifier_rules(body, message):
    rc, _, err = run_opt(f"func.func @f(%n: index, %b: i1, %x: f32) {{\n  {body}\n  return\n}}\n")
    assert rc != 0 and message in err, err
    assert "<stdin>:" in err and "Traceback" not in err


def test_yield_belongs_to_a_loop_or_if():
    rc, _, err = run_opt("func.func @f() {\n  scf.yield\n}\n")
    assert rc != 0 and "<stdin>:2:3: error: 'scf.yield' op expects parent op to be one of" in err, err


@st.composite
def loops(draw):
    """A loop nest of depth 1-2 with random signed bounds and positive steps, summing a
    function of the induction variables through iter_args, with an scf.if on a comparison."""
    depth = draw(st.integers(1, 2))
    bounds = [(draw(st.integers(-6, 6)), draw(st.integers(-6, 8)), draw(st.integers(1, 4)))
              for _ in range(depth)]
    pivot = draw(st.integers(-6, 6))
    return bounds, pivot


def _loop_text(bounds, pivot) -> str:
    lines = ["func.func @f(%x: i64) -> i64 {", f"  %p = arith.constant {pivot} : i64"]
    for k, (lb, ub, step) in enumerate(bounds):
        lines += [f"  %lb{k} = arith.constant {lb} : i64", f"  %ub{k} = arith.constant {ub} : i64",
                  f"  %st{k} = arith.constant {step} : i64"]
    acc = "%x"
    for k in range(len(bounds)):
        lines.append(f"  %r{k} = scf.for %i{k} = %lb{k} to %ub{k} step %st{k} "
                     f"iter_args(%a{k} = {acc}) -> (i64) : i64 {{")
        acc = f"%a{k}"
    iv = f"%i{len(bounds) - 1}"
    lines += [f"  %lt = arith.cmpi slt, {iv}, %p : i64",
              "  %v = scf.if %lt -> (i64) {", f"    %m = arith.muli {iv}, {iv} : i64",
              "    scf.yield %m : i64",
              "  } else {", f"    scf.yield {iv} : i64", "  }",
              f"  %s = arith.addi {acc}, %v : i64"]
    result = "%s"
    for k in reversed(range(len(bounds))):
        lines += [f"  scf.yield {result} : i64", "  }"]
        result = f"%r{k}"
    lines += [f"  return {result} : i64", "}"]
    return "\n".join(lines) + "\n"


def _reference(bounds, pivot, x: int) -> int:
    def run(level: int, acc: int) -> int:
        lb, ub, step = bounds[level]
        for iv in range(lb, ub, step):
            acc = run(level + 1, acc) if level + 1 < len(bounds) else acc + (iv * iv if iv < pivot else iv)
        return acc
    return run(0, x)


@settings(max_examples=60, deadline=None)
@given(loops(), st.integers(-100, 100))
def test_loops_compute_what_python_ranges_compute(case, x):
    bounds, pivot = case
    top = parse(_loop_text(bounds, pivot))
    verify(top)
    for program in (top, parse(print_ir(top))):
        [out] = run_function(program, [np.asarray(x, np.int64)])
        assert int(out) == _reference(bounds, pivot, x)


def test_2019_loop_runs_in_the_interpreter():
    top = parse(LOOP_2019)
    verify(top)
    a = np.arange(10, dtype=np.float32)
    # the loop copies A[i] into A[0] for i < N when %c holds: A[0] ends as A[N - 1]
    memory = execute(top, [np.asarray(4, np.int64), np.asarray(True), MemRef(a.copy())]).memory
    assert memory[0].data[0] == 3.0
    memory = execute(top, [np.asarray(4, np.int64), np.asarray(False), MemRef(a.copy())]).memory
    assert memory[0].data[0] == 0.0
