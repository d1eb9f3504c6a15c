"""egglog identifiers for schema names.

Operator names such as ``tf.AddV2`` or ``arith.constant`` are not safe egglog
identifiers, and a variadic operator needs one egglog constructor per arity. The
mapping below is injective (alphanumerics kept, every other character written as
``_<hex>_``) and carries a kind prefix, so constructor, relation, sort and ruleset
names can never collide with each other or with egglog's own names, and the
e-graph export can map a constructor back to ``(operator, arity)``.
"""

from __future__ import annotations

import re

_SAFE = re.compile(r"[A-Za-z0-9]")
_CTOR = re.compile(r"^C(?:(\d+)v)?_(.*)$")


def _escape(name: str) -> str:
    return "".join(ch if _SAFE.match(ch) else f"_{ord(ch):x}_" for ch in name)


def _unescape(text: str) -> str:
    return re.sub(r"_([0-9a-f]+)_", lambda m: chr(int(m.group(1), 16)), text)


def sort_name(sort: str) -> str:
    return "S_" + _escape(sort)


def id_ctor(sort: str) -> str:
    """The unextractable ``(Id i)`` constructor that names term-table node ``i`` of ``sort``."""
    return "Id_" + _escape(sort)


def ctor(op: str, arity: int | None) -> str:
    """Constructor for ``op``; ``arity`` is given only for variadic ops (one constructor each)."""
    return ("C_" if arity is None else f"C{arity}v_") + _escape(op)


def relation(op: str, arity: int | None) -> str:
    """The load relation that feeds ``ctor(op, arity)`` from a TSV file."""
    return "R" + ctor(op, arity)


def ruleset(name: str) -> str:
    return "RS_" + _escape(name)


def var(name: str) -> str:
    return "?" + _escape(name)


def parse_ctor(egglog_name: str) -> str | None:
    """Operator name of an egglog constructor made by :func:`ctor`, or None for other tables."""
    m = _CTOR.match(egglog_name)
    return None if m is None else _unescape(m.group(2))
