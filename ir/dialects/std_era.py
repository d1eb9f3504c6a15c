"""2019 spellings of ops that kept their meaning but changed their name.

The parser consults `REGISTRY.legacy_names` for a name it does not know (custom
and generic forms alike); the op is built, verified and printed under today's
name.  Spellings that moved with a dialect live with that dialect (`arith.py`:
`addi`, `constant`, `cmpi "slt"`; `memref.py`: `alloc`, `load`, `memref_cast`,
`dim`; `cf.py`: `br`, `cond_br`; `func.py`: `func`, `return`, `call`); this
module holds the rest, which belong to no single dialect module:

| 2019 | today |
| --- | --- |
| `tf_executor.SwitchN %d, %i of N` | `tf_executor._SwitchN` (renamed in 2020; same form) |
| `tf_executor.island` etc. | unchanged (their 2019 forms are parsed by their own records) |
| `std.br`/`std.cond_br`, `std.dim`, ... | see the dialect modules above |

Ops of 2019 with no counterpart in egraft (`loop.for`, `std.exp`, `absf`,
`tensor_load`, `extract_element`, `dma_start`, `prefetch`, `constant @f`, the
`_tf` control dialect) are not aliased.  In a 2019-syntax file
(`ir/syntax/era.py`) those of a dialect egraft lacks (`loop`, `_tf`) read as
unregistered ops in the generic form; `std.*` ones are refused, as 2019's
closed `std` dialect refused ops it did not know.
"""

from __future__ import annotations

from egraft.ir.dialects import tf_executor  # noqa: F401  (registers tf_executor._SwitchN first)
from egraft.ir.records.registry import REGISTRY

STD_ERA_NAMES = {
    "tf_executor.SwitchN": "tf_executor._SwitchN",
}

for _old, _new in STD_ERA_NAMES.items():
    assert _new in REGISTRY.ops, _new
    REGISTRY.legacy_names[_old] = _new
