"""Declarative op records, the Python counterpart of ODS's `def X : Op<...>`.

One `OpDef` holds every fact about an op: summary and description, operands,
attributes, results, regions, successors, traits, custom assembly form and
extra verification.  From it come the verifier (`ir/verifier.py`), the op
class with named accessors, a builder, Markdown docs (`docs_markdown`) and
the signature the e-graph lowering uses (`signature`).
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Sequence

import attrs

from egraft.ir.core import attributes as A
from egraft.ir.core.location import UNKNOWN, Location
from egraft.ir.core.operation import Block, Operation, Region, Value
from egraft.ir.core.traits import Trait, Traits
from egraft.ir.core.types import Type, i32
from egraft.ir.records.constraints import AnyAttr, AnyType, Constraint
from egraft.ir.records.custom_form import CustomForm

# ------------------------------------------------------------------ arguments


SINGLE, VARIADIC, OPTIONAL = "single", "variadic", "optional"


@attrs.frozen
class OperandDef:
    name: str
    constraint: Constraint = AnyType
    kind: str = SINGLE


@attrs.frozen
class ResultDef:
    name: str
    constraint: Constraint = AnyType
    kind: str = SINGLE


@attrs.frozen
class AttrDef:
    name: str
    constraint: Constraint = AnyAttr
    optional: bool = False
    default: A.Attribute | None = None


@attrs.frozen
class RegionDef:
    name: str
    kind: str = SINGLE  # or VARIADIC
    single_block: bool = False


@attrs.frozen
class SuccessorDef:
    name: str
    kind: str = SINGLE


def Variadic(constraint: Constraint) -> tuple[str, Constraint]:
    return (VARIADIC, constraint)


def Optional(constraint: Constraint) -> tuple[str, Constraint]:
    return (OPTIONAL, constraint)


def _operand_defs(spec: Sequence[Any], cls: type) -> tuple:
    """Accept `("x", Constraint)`, `("x", Variadic(C))` or ready-made defs."""
    out = []
    for item in spec:
        if isinstance(item, cls):
            out.append(item)
            continue
        name, c = item
        if isinstance(c, tuple):
            out.append(cls(name, c[1], c[0]))
        else:
            out.append(cls(name, c))
    return tuple(out)


# ------------------------------------------------------------------ signature


@attrs.frozen
class OpSignature:
    """What the e-graph lowering needs to know about an op, derived from its record."""

    name: str
    operands: tuple[tuple[str, str], ...]  # (name, kind)
    results: tuple[tuple[str, str], ...]
    attributes: tuple[str, ...]
    num_regions: int
    pure: bool
    commutative: bool
    terminator: bool
    effects: tuple[str, ...]


# ------------------------------------------------------------------ the record


_RESERVED = set(dir(Operation)) | set(Operation.__slots__)


# What a `dims_operand` holds, relative to the op's first operand of shape s: "shape" (a
# shape with as many elements as s), "permutation" (of range(rank s)), "axes" (distinct axes
# of s), "axis" (one axis of s), "new_axis" (where to insert one, -rank-1 .. rank),
# "paddings" ([before, after] per axis of s), "dims" (a shape of its own, s unused).
DimsKind = Literal["shape", "permutation", "axes", "axis", "new_axis", "paddings", "dims"]


@attrs.define(eq=False)
class OpDef:
    """The record of one op."""

    name: str
    summary: str = ""
    description: str = ""
    operands: tuple[OperandDef, ...] = attrs.field(default=(), converter=lambda s: _operand_defs(s, OperandDef))
    attributes: tuple[AttrDef, ...] = attrs.field(default=(), converter=lambda s: tuple(
        a if isinstance(a, AttrDef) else AttrDef(*a) for a in s))
    results: tuple[ResultDef, ...] = attrs.field(default=(), converter=lambda s: _operand_defs(s, ResultDef))
    regions: tuple[RegionDef, ...] = attrs.field(default=(), converter=lambda s: tuple(
        r if isinstance(r, RegionDef) else RegionDef(r) for r in s))
    successors: tuple[SuccessorDef, ...] = attrs.field(default=(), converter=lambda s: tuple(
        r if isinstance(r, SuccessorDef) else SuccessorDef(r) for r in s))
    traits: tuple[Trait, ...] = ()
    assembly: CustomForm | None = None
    verify: Callable[[Operation], None] | None = None
    # Printer name hints for results (MLIR's getAsmResultNames), e.g. ("outputs", "control").
    result_names: Callable[[Operation], Sequence[str | None]] | Sequence[str] | None = None
    # Printer name hints for block arguments: (op, region, block index) -> names.
    block_arg_names: Callable[[Operation, Region, int], Sequence[str | None]] | None = None
    # The dialect whose prefix may be omitted for ops nested in this op's regions.
    default_dialect: str | None = None
    # Regions are graph regions (no dominance, unordered), like tfg.graph.
    graph_regions: bool = False
    # Relative cost for extraction when no better cost model applies.
    cost: float = 1.0
    # An operand that holds dimensions of the first operand rather than data, and what kind
    # (tf.Transpose: ("perm", "permutation")); read by whoever must make a valid one.
    dims_operand: tuple[str, DimsKind] | None = None
    # The element type of every result when the op fixes it (tf comparisons: i1).
    result_element: Type | None = None

    cls: type = attrs.field(init=False)
    attr_names: frozenset[str] = attrs.field(init=False)
    trait_kinds: frozenset[str] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.trait_kinds = frozenset(t.kind for t in self.traits)
        # Segment sizes are inherent (properties) wherever the trait asks for them.
        segments = {"operandSegmentSizes"} if self.has_trait(Traits.AttrSizedOperandSegments) else set()
        self.attr_names = frozenset(a.name for a in self.attributes) | segments
        self.cls = _make_op_class(self)

    # ------------------------------------------------------------ queries

    def has_trait(self, trait: Trait) -> bool:
        return trait.kind in self.trait_kinds

    def trait(self, trait: Trait) -> Trait | None:
        for t in self.traits:
            if t.kind == trait.kind:
                return t
        return None

    @property
    def is_pure(self) -> bool:
        return self.has_trait(Traits.Pure)

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def mnemonic(self) -> str:
        return self.name.split(".", 1)[1]

    def split_attributes(self, attributes: dict[str, A.Attribute],
                         properties: dict[str, A.Attribute] | None) -> tuple[dict, dict]:
        """Move inherent attributes out of a discardable dict into properties,
        as MLIR does when it reads an old-style generic op."""
        props = dict(properties) if properties else {}
        rest = {}
        names = self.attr_names
        for k, v in attributes.items():
            if k in names:
                props[k] = v
            else:
                rest[k] = v
        return rest, props

    def segment(self, op: Operation, defs: Sequence[OperandDef | ResultDef], values: Sequence[Any],
                sizes_attr: str) -> dict[str, Any]:
        """Split operands (or results) into named groups by the record's kinds."""
        kinds = [d.kind for d in defs]
        groups: dict[str, Any] = {}
        if all(k == SINGLE for k in kinds):
            for d, v in zip(defs, values):
                groups[d.name] = v
            return groups
        sizes_a = op.properties.get(sizes_attr) or op.attributes.get(sizes_attr)
        if isinstance(sizes_a, A.DenseArrayAttr):
            sizes = list(sizes_a.values)
        else:
            n_var = sum(1 for k in kinds if k != SINGLE)
            spare = len(values) - sum(1 for k in kinds if k == SINGLE)
            each = spare // n_var if n_var else 0
            sizes = [1 if k == SINGLE else each for k in kinds]
        pos = 0
        for d, size in zip(defs, sizes):
            chunk = list(values[pos:pos + size])
            pos += size
            groups[d.name] = chunk[0] if d.kind == SINGLE else (chunk[0] if chunk else None) \
                if d.kind == OPTIONAL else chunk
        return groups

    def operand_groups(self, op: Operation) -> dict[str, Any]:
        return self.segment(op, self.operands, op.operands, "operandSegmentSizes")

    def result_groups(self, op: Operation) -> dict[str, Any]:
        return self.segment(op, self.results, op.results, "resultSegmentSizes")

    # ------------------------------------------------------------ building

    def build(self, *operands: Value | Sequence[Value], result_types: Sequence[Type] | None = None,
              regions: int | Sequence[Region] | None = None, successors: Sequence[Block] = (),
              loc: Location = UNKNOWN, attributes: dict[str, A.Attribute] | None = None,
              **attrs_by_name: A.Attribute) -> Operation:
        """Build an op from operands in declared order (a list for each
        variadic), attributes by name, and result types (inferred for
        SameOperandsAndResultType ops when omitted)."""
        if len(operands) != len(self.operands):
            raise TypeError(f"{self.name} takes {len(self.operands)} operand groups, got {len(operands)}")
        flat: list[Value] = []
        sizes: list[int] = []
        for d, group in zip(self.operands, operands):
            if d.kind == SINGLE:
                flat.append(group)  # type: ignore[arg-type]
                sizes.append(1)
            else:
                vals = [] if group is None else ([group] if isinstance(group, Value) else list(group))
                flat.extend(vals)
                sizes.append(len(vals))
        props: dict[str, A.Attribute] = {}
        for a in self.attributes:
            if a.name in attrs_by_name:
                props[a.name] = attrs_by_name.pop(a.name)
            elif a.default is not None:
                props[a.name] = a.default
        if attrs_by_name:
            raise TypeError(f"{self.name} has no attributes {sorted(attrs_by_name)}")
        if self.has_trait(Traits.AttrSizedOperandSegments):
            props["operandSegmentSizes"] = A.DenseArrayAttr(i32, tuple(sizes))
        if result_types is None:
            if self.has_trait(Traits.SameOperandsAndResultType) and flat:
                result_types = [flat[0].type] * len(self.results)
            elif not self.results:
                result_types = []
            else:
                raise TypeError(f"{self.name}: result types needed")
        if regions is None:
            regions = len(self.regions)
        return self.cls(self.name, flat, result_types, dict(attributes or {}), props, regions, successors, loc)

    # ------------------------------------------------------------ views

    def signature(self) -> OpSignature:
        effects = self.trait(Traits.MemoryEffects)
        return OpSignature(
            name=self.name,
            operands=tuple((d.name, d.kind) for d in self.operands),
            results=tuple((d.name, d.kind) for d in self.results),
            attributes=tuple(a.name for a in self.attributes),
            num_regions=len(self.regions),
            pure=self.is_pure,
            commutative=self.has_trait(Traits.Commutative),
            terminator=self.has_trait(Traits.Terminator),
            effects=tuple(effects.param) if effects is not None else (),
        )

    def docs_markdown(self) -> str:
        """The op's section of the generated dialect documentation."""
        lines = [f"### `{self.name}`", ""]
        if self.summary:
            lines += [f"_{self.summary}_", ""]
        if self.description:
            lines += [self.description.strip(), ""]
        traits = ", ".join(t.kind if t.param is None else f"{t.kind}<{_param_text(t.param)}>" for t in self.traits)
        if traits:
            lines += [f"Traits: {traits}", ""]
        for title, items in (("Operands", self.operands), ("Results", self.results)):
            if items:
                lines += [f"#### {title}", "", "| name | constraint |", "| --- | --- |"]
                lines += [f"| `{d.name}` | {'variadic of ' if d.kind == VARIADIC else 'optional ' if d.kind == OPTIONAL else ''}"
                          f"{d.constraint.summary} |" for d in items]
                lines.append("")
        if self.attributes:
            lines += ["#### Attributes", "", "| name | constraint |", "| --- | --- |"]
            for a in self.attributes:
                extra = " (optional)" if a.optional else f" (default `{a.default}`)" if a.default is not None else ""
                lines.append(f"| `{a.name}` | {a.constraint.summary}{extra} |")
            lines.append("")
        if self.regions:
            lines += ["Regions: " + ", ".join(f"`{r.name}`" for r in self.regions), ""]
        if self.successors:
            lines += ["Successors: " + ", ".join(f"`{s.name}`" for s in self.successors), ""]
        return "\n".join(lines)


def _param_text(param: Any) -> str:
    if isinstance(param, (tuple, list)):
        return ", ".join(map(str, param))
    return str(param)


def _accessor_name(name: str) -> str:
    return name + "_" if name in _RESERVED else name


def _make_op_class(opdef: OpDef) -> type:
    """An Operation subclass with a property per operand, result, attribute,
    region and successor of the record (MLIR's generated op class)."""
    namespace: dict[str, Any] = {"__slots__": (), "opdef": opdef, "__doc__": opdef.summary}

    def operand_getter(n: str) -> property:
        return property(lambda op: opdef.operand_groups(op)[n], doc=f"operand group `{n}`")

    def result_getter(n: str) -> property:
        return property(lambda op: opdef.result_groups(op)[n], doc=f"result group `{n}`")

    def attr_getter(n: str) -> property:
        return property(lambda op: op.attr(n), doc=f"attribute `{n}`")

    simple_operands = all(d.kind == SINGLE for d in opdef.operands)
    for i, d in enumerate(opdef.operands):
        namespace[_accessor_name(d.name)] = (property(lambda op, i=i: op.operands[i])
                                             if simple_operands else operand_getter(d.name))
    simple_results = all(d.kind == SINGLE for d in opdef.results)
    for i, d in enumerate(opdef.results):
        namespace[_accessor_name(d.name)] = (property(lambda op, i=i: op.results[i])
                                             if simple_results else result_getter(d.name))
    for a in opdef.attributes:
        namespace.setdefault(_accessor_name(a.name), attr_getter(a.name))
    for i, r in enumerate(opdef.regions):
        if r.kind == SINGLE:
            namespace.setdefault(_accessor_name(r.name), property(lambda op, i=i: op.regions[i]))
    for i, s in enumerate(opdef.successors):
        if s.kind == SINGLE:
            namespace.setdefault(_accessor_name(s.name), property(lambda op, i=i: op.successors[i]))
    class_name = "".join(p[:1].upper() + p[1:] for p in opdef.name.replace(".", "_").split("_")) + "Op"
    return type(class_name, (Operation,), namespace)
