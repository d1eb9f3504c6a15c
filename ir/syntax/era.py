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

`spell_2019` gives a diagnostic about such text in 2019's op names (`'std.addf'
op` for the `arith.addf` the parser built from `addf`), as the file's own
`expected-error` lines spell them; `egraft-opt` applies it to 2019-syntax buffers.
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


# ------------------------------------------------------------------ diagnostics in 2019's op names

_QUOTED_NAME = re.compile(r"'([A-Za-z_][\w$.]*)'")
_spellings: dict[str, str] | None = None


def _spelling_table() -> dict[str, str]:
    """Today's op name -> its 2019 spelling (`arith.addf` -> `std.addf`), from
    the parser's table of 2019 names: a `std.` name when there is one, else a
    dotted one, else the bare word (`func.func` -> `func`); the shortest of
    those (`std.divis` over `std.divi_signed`, as late 2019 spelled it)."""
    global _spellings
    if _spellings is None:
        from egraft.ir.records.registry import REGISTRY

        best: dict[str, tuple[tuple[int, int], str]] = {}
        for old, new in REGISTRY.legacy_names.items():
            if new.startswith("std."):
                continue  # a 2019 op egraft keeps under its 2019 name (`std.view`)
            rank = (0 if old.startswith("std.") else 1 if "." in old else 2, len(old))
            if new not in best or rank < best[new][0]:
                best[new] = (rank, old)
        _spellings = {new: old for new, (_, old) in best.items()}
    return _spellings


# Today's wording -> 2019's, for checks that are the same rule in both (a
# rule 2019 applied differently is a check in ir/dialects/std_era.py instead).
_WORDING_2019 = [
    # ODS type-constraint summaries of 2019's std ops.
    (re.compile(r"must be signless integer or index-like, "), "must be integer-like, "),
    (re.compile(r"must be signless-integer-like, "), "must be integer-like, "),
    (re.compile(r"must be 1-bit signless integer-like, "), "must be bool-like, "),
    (re.compile(r"(operand #\d+ must be )variadic of "), r"\1"),  # later ODS added "variadic of"
    # 2019 did not name the function, nor the successor of a single-successor branch.
    (re.compile(r"but enclosing function \(@[^)]*\) returns"), "but enclosing function returns"),
    (re.compile(r"^('std\.br' op )?branch has (\d+) operands for successor #0, but"), r"\1branch has \2 operands, but"),
    (re.compile(r"^'affine\.apply' op requires attribute 'map'$"), "'affine.apply' op requires an affine map"),
    # A block with nothing in it, reported at the op that holds it.
    (re.compile(r"^'[^']*' op empty block: expect at least a terminator$"), "block with no terminator"),
    (re.compile(r"^elements literal must be a shaped type$"), "elements literal must be a ranked tensor or vector type"),
    (re.compile(r"^failed to verify 'elementType': VectorElementTypeInterface instance$"),
     "vector elements must be int or float type"),
    # TensorFlow's types lived in the `tf` dialect (`!tf.variant`) until the `tf_type` dialect of 2021.
    (re.compile(r"!tf_type\."), "!tf."),
    # TensorFlow's ODS summaries of 2019: integers had no signedness, data formats a name.
    (re.compile(r"(\d+(?:/\d+)*-bit) signed integer"), r"\1 integer"),
    (re.compile(r"string attribute whose value is NHWC, or NCHW"), "'NHWC' or 'NCHW' convnet data format"),
]


def spell_2019(message: str) -> str:
    """`message` with each quoted op name in its 2019 spelling, so that a
    2019 file's `expected-error {{'std.addf' op ...}}` matches what egraft
    reports about the `arith.addf` the parser built from `addf`; and where
    2019 stated the same rule in other words, in 2019's words."""
    table = _spelling_table()
    message = _QUOTED_NAME.sub(lambda m: f"'{table.get(m.group(1), m.group(1))}'", message)
    for pattern, replacement in _WORDING_2019:
        message = pattern.sub(replacement, message)
    return message
