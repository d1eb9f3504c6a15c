"""A GraphDef's feeds and fetches, and the ``tf-mlir-translate`` flags that name them.

A GraphDef has no outputs of its own: whoever runs it says which tensors to fetch.
The tf_executor form needs them (``tf_executor.fetch``), or every pass may treat the
whole graph as dead.  The command line takes TensorFlow's own flags, spelled as
``tf-mlir-translate`` spells them (``tf_mlir_translate_cl.cc``):

- ``--tf-input-arrays=x,n``: feeds; each becomes an argument of ``@main``;
- ``--tf-input-data-types=DT_FLOAT,``: their types (``''`` keeps the graph's);
- ``--tf-input-shapes=1,224,224,3:``: their shapes, ``:`` between inputs, ``,``
  between sizes, ``-1`` an unknown size;
- ``--tf-output-arrays=y,z:1``: fetched tensors;
- ``--tf-control-output-arrays=init``: nodes that must run (control fetches).

Differences from TensorFlow, on purpose: an empty shape or type takes the feed's
``shape``/``dtype`` attribute from the graph (TensorFlow reads an empty shape as a
scalar and uses DT_FLOAT for an empty type); a type or shape that contradicts the
graph is an error rather than a silently mistyped argument.  Without any of the
output flags, :func:`egraft.passes.tf.tfg_to_executor.tfg_to_executor` fetches every
node nothing consumes (docs/graphdef.md explains why).
"""

from __future__ import annotations

from typing import Mapping

import attrs


@attrs.frozen
class Feed:
    """One fed tensor: node ``name``'s output ``port``, with optional type and shape overrides."""

    name: str
    port: int = 0
    dtype: int | None = None  # a DataType value; None: the graph's
    shape: tuple[int, ...] | None = None  # sizes, -1 unknown; None: the graph's

    @property
    def tensor(self) -> str:
        return self.name if self.port == 0 else f"{self.name}:{self.port}"


@attrs.frozen
class EntrySignature:
    """What ``@main`` takes and returns.  ``outputs``/``control_outputs`` None: not
    given (then nodes nothing consumes are fetched, unless the other one is given)."""

    inputs: tuple[Feed, ...] = ()
    outputs: tuple[str, ...] | None = None
    control_outputs: tuple[str, ...] | None = None


#: flag name -> (help text, metavar); every flag takes a value.
TF_IO_FLAGS: dict[str, tuple[str, str]] = {
    "tf-input-arrays": ("Feeds: input tensor names, separated by ',' (become @main's arguments)", "NAMES"),
    "tf-input-data-types": ("Feed types (DT_FLOAT,...), separated by ','; '' keeps the graph's", "TYPES"),
    "tf-input-shapes": ("Feed shapes: sizes separated by ',', inputs by ':'; -1 unknown, '' the graph's",
                        "SHAPES"),
    "tf-output-arrays": ("Fetched tensor names, separated by ','", "NAMES"),
    "tf-control-output-arrays": ("Control output node names (must run), separated by ','", "NAMES"),
}


def split_names(text: str) -> tuple[str, ...]:
    """``"a,b:1"`` -> ("a", "b:1"); empty entries are dropped, as TensorFlow drops them."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def parse_tensor(text: str) -> tuple[str, int]:
    """``"x:2"`` -> ("x", 2); ``"x"`` -> ("x", 0)."""
    node, sep, port = text.rpartition(":")
    if not sep:
        return text, 0
    if not port.isdigit() or not node:
        raise ValueError(f"'{text}' is not a tensor name (node or node:output)")
    return node, int(port)


def _dtype(text: str, flag: str) -> int | None:
    from egraft.ir.graphdef.messages import DataType  # protobuf loads only when a type flag is given

    text = text.strip()
    if not text:
        return None
    try:
        return DataType.Value(text)
    except ValueError:
        raise ValueError(f"--{flag}: unknown data type '{text}' (expected a DataType name such as DT_FLOAT)") \
            from None


def _shape(text: str) -> tuple[int, ...] | None:
    text = text.strip()
    if not text:
        return None
    try:
        dims = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise ValueError(f"--tf-input-shapes: '{text}' is not a list of sizes such as 1,224,224,3") from None
    if any(d < -1 for d in dims):
        raise ValueError(f"--tf-input-shapes: '{text}' has a size below -1")
    return dims


def _per_input(flag: str, text: object, separator: str, count: int) -> list[str]:
    if not isinstance(text, str):
        return [""] * count
    parts = text.split(separator)
    if count == 0:
        raise ValueError(f"--{flag} needs --tf-input-arrays")
    if len(parts) != count:
        raise ValueError(f"--{flag} has {len(parts)} entries for {count} input arrays")
    return parts


def entry_signature(flags: Mapping[str, object]) -> EntrySignature | None:
    """The signature the flags in ``flags`` (name -> value) describe, or None if none is
    given.  A malformed flag raises ValueError with a message naming it."""
    if not any(isinstance(flags.get(name), str) for name in TF_IO_FLAGS):
        return None
    names = split_names(str(flags.get("tf-input-arrays") or ""))
    dtypes = _per_input("tf-input-data-types", flags.get("tf-input-data-types"), ",", len(names))
    shapes = _per_input("tf-input-shapes", flags.get("tf-input-shapes"), ":", len(names))
    inputs = []
    for name, dtype, shape in zip(names, dtypes, shapes):
        node, port = parse_tensor(name)
        inputs.append(Feed(node, port, _dtype(dtype, "tf-input-data-types"), _shape(shape)))
    seen = set()
    for feed in inputs:
        if feed.tensor in seen:
            raise ValueError(f"--tf-input-arrays names '{feed.tensor}' twice")
        seen.add(feed.tensor)

    def listed(flag: str) -> tuple[str, ...] | None:
        value = flags.get(flag)
        if not isinstance(value, str):
            return None
        items = split_names(value)
        for item in items:
            parse_tensor(item)
        return items

    controls = listed("tf-control-output-arrays")
    if controls is not None and any(":" in c for c in controls):
        raise ValueError("--tf-control-output-arrays takes node names, not tensors (no ':')")
    return EntrySignature(tuple(inputs), listed("tf-output-arrays"), controls)


def signature_from_flags(flags: Mapping[str, object], emit: str | None,
                         read_by_pass: bool = False) -> EntrySignature | None:
    """:func:`entry_signature`, refusing flags that nothing would use: they configure
    the conversion to tf_executor, which ``--emit=tf_executor`` asks for, or which a pass
    of the pipeline does itself (``read_by_pass``: ``tf-grappler``)."""
    signature = entry_signature(flags)
    if signature is not None and emit != "tf_executor" and not read_by_pass:
        given = next(f"--{name}" for name in TF_IO_FLAGS if isinstance(flags.get(name), str))
        raise ValueError(f"{given} configures the GraphDef -> tf_executor conversion: add --emit=tf_executor "
                         f"(the tfg form has no fetches and keeps every node)")
    return signature
