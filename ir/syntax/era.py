"""Is this text in late-2019 MLIR syntax?  (Then unregistered ops need no flag.)

Until `mlir-opt` grew `-allow-unregistered-dialect` (early 2020), MLIR accepted
ops of unknown dialects everywhere, and the test files of the time (`"foo"() :
() -> ()` in loop nests, TensorFlow's `"tf.Foo"` examples) rely on it.  egraft
accepts them without the flag when the text is in that era's syntax, decided
once per buffer (per `// -----` chunk under `--split-input-file`) by a textual
test, before any op is read, so the answer never depends on how far parsing got:

* a function spelled `func @name` at the start of a line: today's MLIR spells
  it `func.func` and refuses the bare word (the bare spelling lasted until
  2022; files of 2020-21 also use it, and for them accepting unknown ops is
  merely lenient: it only drops the "unregistered dialect" error), or
* an attribute alias bound to a bare affine map or set (`#map0 = (d0) -> (d0)`,
  `#set0 = (d0) : (d0 >= 0)`), which today's syntax writes `affine_map<...>`.

Neither is valid today, so no input in today's syntax changes meaning.
"""

from __future__ import annotations

import re

_MARKERS = re.compile(
    r"^[ \t]*func[ \t]+@"                       # 2019's bare `func @f`
    r"|^#[\w$.]+[ \t]*=[ \t]*\([\w$, \t]*\)",   # `#map0 = (d0, d1) ...`: a bare map or set alias
    re.M,
)


def is_std_era(text: str) -> bool:
    """True when `text` is written in the syntax of late-2019 MLIR (see above)."""
    return _MARKERS.search(text) is not None
