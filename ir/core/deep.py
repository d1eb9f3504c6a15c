"""Deeply nested input: the bound on its depth and the stack it needs.

Everything that reads or writes nested IR recurses once per level: the
parser (regions, attributes, types, locations, affine expressions are
recursive-descent grammars, and custom op forms call back into
`parse_region`), the printer (custom forms call `print_region`, types print
their element types), and the passes and the e-graph lowering (which visit a
region's ops, then the regions of each).  Two things bound that recursion:

* `MAX_NESTING`: the parser counts how deeply those constructs nest at the
  current position and reports input nested deeper with a located error
  (`file:line:col: error: nesting too deep ...`), so that no IR deeper than
  this is ever built from text.  MLIR itself has no such check and overflows
  its 8 MB stack somewhere in the thousands of levels; TensorFlow graphs nest
  a handful of levels and loop nests a few dozen.
* `run_with_deep_stack`: runs a function on a thread whose stack and
  recursion limit fit `MAX_NESTING` levels of every algorithm with a wide
  margin.  `egraft-opt` runs its whole invocation there.  The costliest
  level measured (CPython 3.11, with every pass of a pipeline and both
  printers): about 1.1 KB of C stack per level, where a type's text
  includes its element type's (`str` re-enters the interpreter); pure Python
  calls use no C stack on 3.11, only the recursion limit.  10,000 levels
  thus need some 11 MB of a 512 MB stack, which is reserved address space,
  not memory, until touched.
"""

from __future__ import annotations

import gc
import sys
import threading
import traceback
from typing import Any, Callable, TypeVar

MAX_NESTING = 10_000
"""The deepest nesting of regions, attributes, types, locations and affine
expressions the parser accepts (one count over all of them: a type nested in
an attribute nested in a region adds up)."""

STACK_BYTES = 512 << 20
"""The stack of the thread `run_with_deep_stack` starts (smaller sizes are
tried if the system refuses it)."""

RECURSION_LIMIT = 1_000_000
"""The interpreter's recursion limit while a deep-stack run is active: a
nesting level takes up to a few dozen Python frames (parser, custom form,
printer, pass), which cost heap, not C stack, on CPython 3.11."""

_T = TypeVar("_T")
_local = threading.local()
_lock = threading.Lock()
_active = 0
_saved_limit = 0


def on_deep_stack() -> bool:
    """True on a thread started by `run_with_deep_stack`."""
    return getattr(_local, "deep", False)


def run_with_deep_stack(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """`fn(*args, **kwargs)` on a thread with a `STACK_BYTES` stack and the
    recursion limit raised to `RECURSION_LIMIT`; its result or exception is
    the caller's.  Called on such a thread already, it just calls `fn`.

    The caller waits in `join`, where Ctrl-C still interrupts it (the
    worker is a daemon thread, so an interrupted run does not keep the
    process alive)."""
    if on_deep_stack():
        return fn(*args, **kwargs)
    outcome: list[Any] = []

    def work() -> None:
        _local.deep = True
        try:
            outcome.append((True, fn(*args, **kwargs)))
        except BaseException as exc:  # handed to the caller, re-raised there
            _release_frames(exc)
            outcome.append((False, exc))
        finally:
            if "egglog.bindings" in sys.modules:
                # egglog's e-graphs may only be freed on the thread that made
                # them (PyO3 'unsendable'): free the ones left in reference
                # cycles here, not at some later collection on another thread.
                gc.collect()

    _raise_limit()  # before the thread starts recursing
    try:
        thread = _start(work)
        if thread is not None:
            thread.join()
    finally:
        _restore_limit()
    if thread is None:  # no big stack to be had: run here, within the usual limit
        return fn(*args, **kwargs)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _release_frames(exc: BaseException | None) -> None:
    """Drop the local variables of the frames an exception (and those it
    chains) holds, so that what they reference is freed on this thread."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__


def _start(work: Callable[[], None]) -> threading.Thread | None:
    """Start `work` on a daemon thread with the largest stack the system
    grants of `STACK_BYTES`, a quarter and a sixteenth of it."""
    with _lock:
        for size in (STACK_BYTES, STACK_BYTES >> 2, STACK_BYTES >> 4):
            try:
                previous = threading.stack_size(size)
            except (ValueError, RuntimeError):
                continue
            try:
                thread = threading.Thread(target=work, name="egraft-deep-stack", daemon=True)
                thread.start()
                return thread
            except RuntimeError:  # the stack could not be allocated
                continue
            finally:
                threading.stack_size(previous)
    return None


def _raise_limit() -> None:
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _active += 1


def _restore_limit() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)
