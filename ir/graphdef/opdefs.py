"""OpDefs from TensorFlow's op registry, for the optional default-attribute handling.

The core never imports TensorFlow; this lookup is for callers (differential tests,
``compare_graphdefs(op_lookup=...)``) that have it installed.
"""

from __future__ import annotations

from functools import cache

from egraft.ir.graphdef.messages import OpDef, coerce
from egraft.ir.graphdef.normalize import OpDefLookup


def tensorflow_op_lookup() -> OpDefLookup:
    """A lookup backed by TensorFlow's global registry; needs ``pip install egraft[tf]``."""
    try:
        from tensorflow.python.framework import op_def_registry
    except ImportError as err:
        raise ImportError("tensorflow_op_lookup needs TensorFlow: pip install 'egraft[tf]'") from err

    @cache
    def lookup(op: str) -> OpDef | None:
        found = op_def_registry.get(op)
        return coerce(found, OpDef) if found is not None else None

    return lookup
