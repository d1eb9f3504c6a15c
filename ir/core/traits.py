"""Op traits: the facts about an op that code asks by name (MLIR's traits).

A record (`egraft.ir.records.opdef.OpDef`) lists its op's traits; code asks
`op.has_trait(Traits.Pure)` or `opdef.has_trait(Traits.Pure)`.  Traits live in
the core because the core's own queries (symbol tables, walks) need some of them.
"""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Trait:
    """An op trait; `param` carries arguments (HasParent's op names, ...)."""

    kind: str
    param: Any = None

    def __call__(self, param: Any) -> "Trait":
        return Trait(self.kind, param)


class Traits:
    """The traits egraft understands (names as in MLIR)."""

    Pure = Trait("Pure")  # NoSideEffect in 2019's ODS
    Commutative = Trait("Commutative")
    Idempotent = Trait("Idempotent")
    Involution = Trait("Involution")
    Terminator = Trait("Terminator")
    ReturnLike = Trait("ReturnLike")
    IsolatedFromAbove = Trait("IsolatedFromAbove")
    SameOperandsAndResultType = Trait("SameOperandsAndResultType")
    SameOperandsAndResultElementType = Trait("SameOperandsAndResultElementType")
    SameTypeOperands = Trait("SameTypeOperands")
    AffineScope = Trait("AffineScope")
    SymbolTable = Trait("SymbolTable")
    Symbol = Trait("Symbol")
    NoTerminator = Trait("NoTerminator")
    SingleBlock = Trait("SingleBlock")
    ConstantLike = Trait("ConstantLike")
    AttrSizedOperandSegments = Trait("AttrSizedOperandSegments")
    AttrSizedResultSegments = Trait("AttrSizedResultSegments")
    FunctionLike = Trait("FunctionLike")
    RecursiveMemoryEffects = Trait("RecursiveMemoryEffects")
    # Parameterized: HasParent(("tf_executor.graph",)),
    # SingleBlockImplicitTerminator("tf_executor.fetch"), MemoryEffects(("read", "write")).
    HasParent = Trait("HasParent")
    ParentOneOf = Trait("ParentOneOf")
    SingleBlockImplicitTerminator = Trait("SingleBlockImplicitTerminator")
    MemoryEffects = Trait("MemoryEffects")
