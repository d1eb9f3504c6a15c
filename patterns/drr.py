"""Importing MLIR DRR (`Pat<>`/`Pattern<>` in TableGen) as egraft rules.

    report = import_drr(text, "canonicalize.td", natives={"GetZeroAttr": fn})
    register_rule_set("tf-canonicalize-td", report.rules)
    print(report.summary())

Every `def X : Pat<...>` becomes a `Rule` named X whose origin is the `.td`
file and line.  Ops are mapped through the records (`TF_AddOp` -> `tf.Add`,
`Arith_AddIOp`/`Std_AddIOp` -> `arith.addi`), positional arguments are split
into operands and attributes by the op's signature (`drr_names.signature`),
ODS constraints become `ir.constraints`, and C++ the importer cannot run
(a `NativeCodeCall`, a `CPred` it does not recognize) is looked up by name in
the Python implementations the caller supplies.  A rule needing something
missing is skipped and listed in the report with the names it needs; nothing
is dropped silently.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import attrs

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.records.constraints import Constraint

from . import checks
from .drr_names import (ATTR_CONSTRAINTS, CONSTANT_ATTR_TYPES, TYPE_CONSTRAINTS, TYPE_PREDICATES, known_cpred,
                        op_name, signature)
from .dsl import _, rule
from .rule import Check, Either, Native, OpPat, Origin, ResultOf, Rule, RuleError, Var
from .tablegen import Arg, Code, Dag, Def, Ident, Inst, parse_tablegen

_CONSTRAINT_CLASSES = {"Constraint", "Type", "TypeConstraint", "AttrConstraint", "TypeOrAttrConstraint"}
_NATIVE_CLASSES = {"NativeCodeCall", "NativeCodeCallVoid"}


class _Missing(Exception):
    """A C++ construct with no Python counterpart (reported by name; the user may supply one)."""

    def __init__(self, name: str, what: str) -> None:
        self.name, self.what = name, what
        super().__init__(f"{what} '{name}' has no Python implementation")


class _Unsupported(Exception):
    """A DRR feature the importer does not translate."""


@attrs.frozen
class Skipped:
    """A DRR pattern that did not become a rule, and why."""

    name: str
    origin: Origin
    reasons: tuple[str, ...]


@attrs.define
class DrrReport:
    """The outcome of an import: the rules, the skipped patterns, what C++ is missing."""

    rules: list[Rule] = attrs.field(factory=list)
    skipped: list[Skipped] = attrs.field(factory=list)
    missing: dict[str, list[str]] = attrs.field(factory=dict)  # C++ name -> patterns needing it
    notes: list[str] = attrs.field(factory=list)

    @property
    def total(self) -> int:
        return len(self.rules) + len(self.skipped)

    def summary(self) -> str:
        lines = [f"imported {len(self.rules)} of {self.total} patterns"]
        for s in self.skipped:
            lines.append(f"  skipped {s.name} ({s.origin}): {'; '.join(s.reasons)}")
        for name, users in sorted(self.missing.items()):
            lines.append(f"  missing Python for {name}: needed by {', '.join(users)}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


class _Translator:
    """Translates the patterns of one parsed `.td` document."""

    def __init__(self, defs: dict[str, Def], defvars: dict[str, Any], filename: str,
                 constraints: dict[str, Any], natives: dict[str, Callable[..., Any]]) -> None:
        self.defs = defs
        self.defvars = defvars
        self.filename = filename
        self.constraints = constraints
        self.natives = natives

    # ------------------------------------------------------------ one pattern

    def pattern(self, d: Def) -> Rule:
        self.fresh = 0
        self.missing: list[_Missing] = []
        self.op_bindings: set[str] = set()
        name = d.name or f"anonymous_{d.line}"
        args = list(d.args)
        if len(args) < 2 or not isinstance(args[0], Dag):
            raise _Unsupported("expected a source dag and a result")
        source = self.source_op(args[0])
        results = args[1] if d.cls == "Pattern" and isinstance(args[1], list) else [args[1]]
        where = [self.check(c) for c in (args[2] if len(args) > 2 and isinstance(args[2], list) else [])]
        if len(args) > 3 and isinstance(args[3], list) and args[3]:
            raise _Unsupported("supplemental patterns (4th argument)")
        extra = 0
        if len(args) > 4 and isinstance(args[4], Dag) and _ident(args[4].op) == "addBenefit":
            extra = int(args[4].args[0].value)
        sig = signature(source.name)
        n = sig[2] if sig is not None and sig[2] is not None else len(results)
        built = [self.result(Arg(r, None)) for r in results]
        aux, values = built[:-n] if n else built, built[len(built) - n:] if n else []
        for a in aux:
            if not (isinstance(a, OpPat) and a.binding and _mentions(values, a.binding)):
                raise _Unsupported("an auxiliary result op that no replacement uses")
        if self.missing:
            raise self.missing[0]
        origin = Origin(self.filename, d.line)
        made = rule(name, source, tuple(values), where=where, origin=origin, doc=f"imported from {origin}")
        return attrs.evolve(made, benefit=made.benefit + extra) if extra else made

    # ------------------------------------------------------------ source side

    def source_op(self, dag: Dag) -> OpPat:
        name = self.op_of(dag)
        operands, attributes = self.split_args(name, dag.args, self.source_arg)
        if dag.name:
            self.op_bindings.add(dag.name)
        return OpPat(name, tuple(operands), tuple(sorted(attributes.items())), dag.name)

    def source_arg(self, arg: Arg, position: str) -> Any:
        value, name = arg.value, arg.name
        if value is None:
            return _ if name == "_" else Var(name)  # type: ignore[arg-type]
        if isinstance(value, Ident) and value.name in self.defvars:
            return self.source_arg(Arg(self.defvars[value.name], name), position)
        if isinstance(value, Dag):
            op = _ident(value.op)
            if op == "either":
                return Either(*(self.source_arg(a, "operand") for a in value.args))
            if op == "variadic":
                return tuple(self.source_arg(a, "operand") for a in value.args)
            pat = self.source_op(value if name is None else attrs.evolve(value, name=name))
            return pat
        if isinstance(value, Inst) and value.name == "ConstantAttr":
            return self.constant_attr(value)
        constraint = self.constraint(value, position)
        if name is None:
            self.fresh += 1
            name = f"anon{self.fresh}"
        return Var(name, constraint)

    def constraint(self, value: Any, position: str) -> Constraint:
        """An ODS type/attribute constraint by name (built-in table, the file's defs, or the caller's)."""
        cname = _ident(value) or (value.name if isinstance(value, Inst) else repr(value))
        supplied = self.constraints.get(cname)
        if isinstance(supplied, Constraint):
            return supplied
        table = ATTR_CONSTRAINTS if position == "attr" else TYPE_CONSTRAINTS
        if cname in table:
            return table[cname]
        d = self.defs.get(cname)
        if d is not None and d.cls in ("Type", "TypeConstraint") and d.args and isinstance(d.args[0], Inst):
            make = TYPE_PREDICATES.get(d.args[0].name)
            made = make(d.args[0].args) if make is not None else None
            if made is not None:
                return made
        self.missing.append(_Missing(cname, "constraint"))
        return Constraint(cname, lambda _: False)

    def constant_attr(self, value: Inst) -> A.Attribute:
        cls, text = _ident(value.args[0]), value.args[1] if len(value.args) > 1 else ""
        if cls == "StrAttr":
            return A.StringAttr(str(text))
        t = CONSTANT_ATTR_TYPES.get(cls or "")
        if t is None:
            raise _Unsupported(f"ConstantAttr<{cls}, ...>")
        if isinstance(t, T.FloatType):
            return A.float_attr(float(text), t)
        words = {"true": 1, "false": 0}
        try:
            return A.IntegerAttr(words[str(text)] if str(text) in words else int(str(text), 0), t)
        except ValueError:
            raise _Unsupported(f"ConstantAttr<{cls}, \"{text}\">") from None

    def op_of(self, dag: Dag) -> str:
        cls = _ident(dag.op)
        name = op_name(cls) if cls else None
        if name is None:
            raise _Unsupported(f"'{cls or dag.op}' is not an op class the importer knows")
        return name

    def split_args(self, name: str, args: tuple[Arg, ...], convert: Callable[[Arg, str], Any]
                   ) -> tuple[list[Any], dict[str, Any]]:
        """Positional DRR arguments -> operands (one per group) and attributes by name."""
        sig = signature(name)
        if sig is None:  # an op without a record or registry entry: arguments are operands
            return [convert(a, "operand") for a in args], {}
        kinds, attr_names = sig[0], sig[1]
        operands: list[Any] = []
        slots = 0
        i = 0
        while i < len(args) and slots < len(kinds):
            operand = convert(args[i], "operand")
            slots += 2 if isinstance(operand, Either) else 1
            operands.append(operand)
            i += 1
        rest = args[i:]
        if len(rest) > len(attr_names):
            raise _Unsupported(f"'{name}' takes {len(kinds)} operands and {len(attr_names)} attributes, "
                               f"the pattern gives {len(args)} arguments")
        attributes = {n: convert(a, "attr") for n, a in zip(attr_names, rest)}
        return operands, {k: v for k, v in attributes.items() if v is not _}

    # ------------------------------------------------------------ result side

    def result(self, arg: Arg, position: str = "operand") -> Any:
        value, name = arg.value, arg.name
        if value is None:
            m = re.fullmatch(r"(\w+?)__(\d+)", name or "")
            if m and m.group(1) in self.op_bindings:
                return ResultOf(m.group(1), int(m.group(2)))
            return Var(name)  # type: ignore[arg-type]
        if isinstance(value, Ident) and value.name in self.defvars:
            return self.result(Arg(self.defvars[value.name], name), position)
        if isinstance(value, Inst) and value.name == "ConstantAttr":
            return self.constant_attr(value)
        if not isinstance(value, Dag):
            raise _Unsupported(f"result value {_describe(value)}")
        op = _ident(value.op)
        if op == "replaceWithValue":
            return self.result(value.args[0], position)
        if op in ("location", "returnType"):
            raise _Unsupported(f"the '{op}' directive")
        if isinstance(value.op, Inst) and value.op.name in _NATIVE_CLASSES:
            code = value.op.args[0] if value.op.args else ""
            self.missing.append(_Missing(f"NativeCodeCall<\"{code}\">", "inline native call"))
            return Var("_native")
        d = self.defs.get(op or "")
        if d is not None and d.cls in _NATIVE_CLASSES:
            fn = self.natives.get(op)  # type: ignore[arg-type]
            if fn is None:
                self.missing.append(_Missing(op, "NativeCodeCall"))  # type: ignore[arg-type]
            args = tuple(self.result(a, "attr") for a in value.args)
            return Native(op, fn or _absent, args, "attr" if position == "attr" else "build")  # type: ignore[arg-type]
        for a in value.args:
            directive = _ident(a.value.op) if isinstance(a.value, Dag) else None
            if directive in ("location", "returnType"):
                raise _Unsupported(f"the '{directive}' directive")
        name_ = self.op_of(value)
        operands, attributes = self.split_args(name_, value.args, self.result)
        return OpPat(name_, tuple(operands), tuple(sorted(attributes.items())), value.name)

    # ------------------------------------------------------------ constraints

    def check(self, c: Any) -> Any:
        if not isinstance(c, Dag):
            raise _Unsupported(f"constraint {_describe(c)}")
        cname = _ident(c.op) or ""
        names = [a.name or "" for a in c.args]
        supplied = self.constraints.get(cname)
        if isinstance(supplied, Constraint):
            return checks.type_is(names[0], supplied)
        if supplied is not None:
            return Check(cname, supplied, tuple(Var(n) for n in names), "python")
        if cname in TYPE_CONSTRAINTS:
            return checks.type_is(names[0], TYPE_CONSTRAINTS[cname])
        d = self.defs.get(cname)
        if d is not None and d.cls in ("Type", "TypeConstraint"):
            return checks.type_is(names[0], self.constraint(Ident(cname), "operand"))
        if d is not None and d.cls == "Constraint" and d.args and isinstance(d.args[0], Inst) \
                and d.args[0].name == "CPred" and d.args[0].args:
            text = d.args[0].args[0]
            make = known_cpred(text.text if isinstance(text, Code) else str(text))
            if make is not None:
                return make(*names)
        self.missing.append(_Missing(cname, "constraint"))
        return Check(cname, _absent, ())


def _absent(*_: Any) -> None:
    raise AssertionError("a skipped rule never runs")


def _ident(v: Any) -> str | None:
    return v.name if isinstance(v, Ident) else None


def _describe(v: Any) -> str:
    return v.name if isinstance(v, (Ident, Inst)) else repr(v)[:60]


def _mentions(values: Any, binding: str) -> bool:
    """Whether result values refer to a built op binding."""
    if isinstance(values, (list, tuple)):
        return any(_mentions(v, binding) for v in values)
    if isinstance(values, Var):
        return values.name == binding
    if isinstance(values, ResultOf):
        return values.op == binding or (isinstance(values.op, OpPat) and _mentions(values.op, binding))
    if isinstance(values, OpPat):
        return any(_mentions(o, binding) for o in values.operands)
    if isinstance(values, Native):
        return any(_mentions(a, binding) for a in values.args)
    return False


def import_drr(text: str, filename: str = "<drr>", *, constraints: dict[str, Any] | None = None,
               natives: dict[str, Callable[..., Any]] | None = None) -> DrrReport:
    """Translate every `Pat`/`Pattern` def of DRR text into rules.

    `constraints` maps a DRR constraint name to an `ir.constraints.Constraint`
    (checked on a type or attribute) or to a Python predicate over the bound
    entities; `natives` maps a NativeCodeCall name to a Python function (its
    arguments are the bound entities; in an attribute position it returns an
    attribute, elsewhere it builds IR with a Builder as first argument)."""
    doc = parse_tablegen(text)
    defs = {d.name: d for d in doc.defs if d.name}
    tr = _Translator(defs, doc.defvars, filename, constraints or {}, natives or {})
    report = DrrReport()
    for line, words in doc.skipped:
        report.notes.append(f"{filename}:{line}: statement not read: {words} ...")
    for d in doc.defs:
        if d.cls not in ("Pat", "Pattern"):
            if d.cls not in _CONSTRAINT_CLASSES | _NATIVE_CLASSES:
                report.notes.append(f"{filename}:{d.line}: def of class {d.cls} ignored")
            continue
        origin = Origin(filename, d.line)
        name = d.name or f"anonymous_{d.line}"
        try:
            report.rules.append(tr.pattern(d))
        except _Missing as m:
            names = sorted({x.name for x in tr.missing} or {m.name})
            for n in names:
                report.missing.setdefault(n, []).append(name)
            report.skipped.append(Skipped(name, origin, tuple(f"no Python for {n}" for n in names)))
        except (_Unsupported, RuleError) as e:
            report.skipped.append(Skipped(name, origin, (str(e),)))
    return report


def import_drr_file(path: str | Path, **kwargs: Any) -> DrrReport:
    path = Path(path)
    return import_drr(path.read_text(encoding="utf-8"), str(path), **kwargs)
