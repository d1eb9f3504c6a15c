"""Rule files: the plain-text rule syntax for the common case (docs/rules.md, "Rule files").

One rule per line, Tensat's `name: lhs => rhs [if checks]` with MLIR's spellings:

    // x * 1.0 is x, NaN and Inf included          <- comment lines right above a rule: its doc
    mulf-one: arith.mulf(x, c) => x if splat(c, 1.0)
    addf-comm: arith.addf(x, y) <=> arith.addf(y, x)
    [tf-mine]                                      <- the rules below go to the set `tf-mine`
    sub-self: tf.Sub(x, x) => tf.ZerosLike(x)
    mul-two: tf.Mul(x, c) => tf.AddV2(x, x) if splat(c, 2), same_type(x, c)
    one: arith.divf(x, x) => arith.constant {value = one_of(x)}

* Terms: an op is its full name (`arith.mulf`, with the dot) and its operands in
  parentheses (no operands: parentheses optional); a name without a dot is a variable
  (the same name twice is the same value), `_` matches anything.  Attributes follow in
  MLIR's `{name = value, ...}`: an MLIR attribute (`#arith.fastmath<fast>`, `1.0 : f32`,
  `true`, `f32`), a variable (a bare name other than `true`, `false`, `unit` and builtin
  type names: binds the attribute in a pattern, copies it in a result) or, in a result,
  `zero_of(x)`, `one_of(x)`, `splat_of(x, 2.0)` (a constant of x's type).  A pattern op may be named with `as r` (then `r` is its result); a result op
  may give its result type after a colon (`: f32`, or `: type(x)`).
* Tags in brackets after the name (`assoc [approx]: ...`): `approx` for a rule that holds
  only within rounding (the soundness check then compares with a tolerance), `expand` for
  one that grows the e-graph (its expanding phase runs it).
* `=>` rewrites left to right; `<=>` declares the rule and its reverse (`name-reverse`).
* Checks after `if`, ',' between (all must hold), composed with `and`, `or`, `not` and
  parentheses: `splat(c, V)` (a float literal compares bit for bit, -0.0 is not 0.0; an
  integer literal compares by value), `constant(c)`, `same_type(a, b)`,
  `same_element_type(a, b)`, `float(x)`, `integer(x)`, `static_shape(x)`, `ranked(x)`,
  `rank(x, N)`, `type(x, T)`, `element_type(x, T)`, `broadcastable(a, b)`, `one_use(x)`.
* A continuation line is indented; `//` starts a comment anywhere.  Terms and checks nest
  at most `MAX_NESTING` deep, as MLIR text does (ir/core/deep.py); callers parse on a deep
  stack (`run_with_deep_stack`), as `egraft-opt` does.

Rules go to the set named after the file (`my_rules.rules` -> `my_rules`) until a
`[set-name]` line.  Every mistake is a `DiagnosticError` at its line and column, the rule
validation of `dsl.rule` included (an unknown op, a wrong operand count, a variable the
pattern does not bind), so `egraft-opt` reports it as it reports bad MLIR.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from egraft.ir.core.diagnostics import DiagnosticError
from egraft.ir.syntax.parser import Parser

from . import checks as C
from .canon_fold import float_splat_bits
from .dsl import _, rule
from .natives import one_of, splat_attr, zero_of
from .rule import CheckLike, Native, OpPat, Origin, Rule, RuleError, TypeOf, Var

_RULE_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_NAME = re.compile(r"[A-Za-z_][\w$]*")
_OP_NAME = re.compile(r"[A-Za-z_][\w$]*\.[\w$.]+")
_NUMBER = re.compile(r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")
_SECTION = re.compile(r"\[\s*([A-Za-z_][\w.\-]*)\s*\]\s*(?://.*)?$")
#: Bare words that are MLIR attributes in an attribute position, not variables.
_ATTRIBUTE_WORDS = re.compile(r"(?:true|false|unit|index|none|[su]?i\d+|f(?:16|32|64|80|128)|f8\w*|bf16|tf32)$")


def _splat(var: str, value: tuple[str, float | int]) -> CheckLike:
    text, number = value
    is_float = any(ch in text for ch in ".eEn")  # 1.0, 1e3, nan, inf
    return float_splat_bits(var, float(number)) if is_float else C.is_splat(var, number)


#: The checks a rule file may name: name -> (argument kinds, factory).
#: Kinds: "var" a bound variable, "number" a literal (kept with its spelling), "int", "type".
CHECKS: dict[str, tuple[tuple[str, ...], Callable[..., CheckLike]]] = {
    "splat": (("var", "number"), _splat),
    "constant": (("var",), C.is_constant),
    "same_type": (("var", "var"), C.same_type),
    "same_element_type": (("var", "var"), C.same_element_type),
    "float": (("var",), C.float_element),
    "integer": (("var",), C.integer_element),
    "static_shape": (("var",), C.static_shape),
    "ranked": (("var",), C.has_rank),
    "rank": (("var", "int"), C.has_rank),
    "type": (("var", "type"), C.type_is),
    "element_type": (("var", "type"), C.element_type_is),
    "broadcastable": (("var", "var"), C.broadcastable),
    "one_use": (("var",), C.has_one_use),
}

#: Attribute values a result may compute: name -> (argument kinds, factory).
NATIVES: dict[str, tuple[tuple[str, ...], Callable[..., Native]]] = {
    "zero_of": (("var",), zero_of),
    "one_of": (("var",), one_of),
    "splat_of": (("var", "number"), lambda v, value: Native(
        f"splat_of({value[0]})", lambda t, n=value[1]: splat_attr(t, n), (TypeOf(v),))),
}


def parse_rule_file(text: str, filename: str, default_set: str | None = None) -> dict[str, list[Rule]]:
    """The rules of a rule file by set name, in file order (each set in order of first
    appearance).  `default_set` (else the file's stem) names the rules before any
    `[set]` line.  Raises `DiagnosticError` at the first mistake."""
    current = default_set or Path(filename).stem
    sets: dict[str, list[Rule]] = {}
    names: dict[tuple[str, str], Rule] = {}  # (set, rule name) -> the rule
    doc: list[str] = []
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped:
            doc = []
        elif stripped.startswith("//"):
            doc.append(stripped[2:].strip())
        elif lines[i][0] in " \t":
            raise _error_at(text, filename, starts[i] + len(lines[i]) - len(lines[i].lstrip()),
                            "an indented line continues a rule, and no rule comes before it")
        elif stripped.startswith("["):
            found = _SECTION.match(stripped)
            if found is None:
                raise _error_at(text, filename, starts[i], "expected a set name in brackets, like [my-set]")
            current, doc = found.group(1), []
        else:
            end = i + 1
            while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip():
                end += 1
            chunk = "\n".join(lines[i:end])
            made = _RuleParser(chunk, filename, i, " ".join(doc)).parse()
            for r in made:
                taken = names.setdefault((current, r.name), r)
                if taken is not r:
                    raise _error_at(text, filename, starts[i], f"rule '{r.name}' is already in set '{current}' "
                                                               f"(line {taken.origin.line})")
                sets.setdefault(current, []).append(r)
            doc = []
            i = end
            continue
        i += 1
    return sets


def parse_rule_file_path(path: str | Path, default_set: str | None = None) -> dict[str, list[Rule]]:
    path = Path(path)
    return parse_rule_file(path.read_text(encoding="utf-8"), str(path), default_set)


def _error_at(text: str, filename: str, offset: int, message: str) -> DiagnosticError:
    return Parser(text, filename).error(message, offset)


class _RuleParser:
    """Parses one rule (its line and continuation lines) with the MLIR parser's lexer, so
    types and attributes are MLIR's and every error has its line and column."""

    def __init__(self, chunk: str, filename: str, line_index: int, doc: str) -> None:
        self.p = Parser(chunk, filename, line_offset=line_index)
        self.origin = Origin(filename, line_index + 1)
        self.doc = doc
        self.bound: set[str] = set()  # variables and op names the pattern binds
        self.positions: dict[str, int] = {}  # op name -> first offset, to place validation errors

    # ------------------------------------------------------------ tokens

    def match(self, pattern: re.Pattern[str]) -> str | None:
        self.p.skip_ws()
        found = pattern.match(self.p.text, self.p.pos)
        if found is None:
            return None
        self.p.pos = found.end()
        return found.group()

    def expect(self, pattern: re.Pattern[str], what: str) -> str:
        found = self.match(pattern)
        if found is None:
            raise self.p.error(f"expected {what}")
        return found

    def keyword(self, word: str) -> bool:
        self.p.skip_ws()
        found = _NAME.match(self.p.text, self.p.pos)
        if found is not None and found.group() == word:
            self.p.pos = found.end()
            return True
        return False

    def here(self) -> int:
        """The offset of the next token."""
        self.p.skip_ws()
        return self.p.pos

    def at(self, punct: str) -> bool:
        return self.p.peek(len(punct)) == punct

    # ------------------------------------------------------------ the rule

    def parse(self) -> list[Rule]:
        p = self.p
        name_at = self.here()
        name = self.expect(_RULE_NAME, "a rule name")
        tags: list[str] = []
        if p.parse_optional_punct("["):
            tags.append(self.expect(_NAME, "a tag, like approx or expand"))
            while p.parse_optional_punct(","):
                tags.append(self.expect(_NAME, "a tag"))
            p.parse_punct("]", "after the tags")
        p.parse_punct(":", "after the rule name")
        lhs_at = self.here()
        lhs = self.term(source=True)
        if not isinstance(lhs, OpPat):
            raise p.error("the left-hand side must be an op, like arith.addf(x, y)", lhs_at)
        if p.parse_optional_punct("<=>"):
            both = True
        elif p.parse_optional_punct("=>"):
            both = False
        else:
            raise p.error("expected '=>' or '<=>'")
        rhs_at = self.here()
        rhs = self.term(source=both)
        where: list[CheckLike] = []
        if self.keyword("if"):
            where.append(self.check())
            while p.parse_optional_punct(","):
                where.append(self.check())
        if not p.at_end():
            raise p.error("expected 'if', ',' or the end of the rule")
        self.tags = tuple(tags)
        made = [self.declare(name, lhs, rhs, where, name_at)]
        if both:
            if not isinstance(rhs, OpPat):
                raise p.error("'<=>' needs an op on both sides", rhs_at)
            made.append(self.declare(f"{name}-reverse", rhs, lhs, where, name_at))
        return made

    def declare(self, name: str, lhs: OpPat, rhs: Any, where: list[CheckLike], name_at: int) -> Rule:
        try:
            return rule(name, lhs, rhs, where=where, doc=self.doc, origin=self.origin, tags=self.tags)
        except RuleError as e:
            message = str(e).removeprefix(f"{self.origin}: ")
            at = next((self.positions[op] for op in self.positions if f"'{op}'" in message), name_at)
            raise self.p.error(message, at) from None

    # ------------------------------------------------------------ terms

    def term(self, source: bool) -> Any:
        p = self.p
        at = self.here()
        if p.parse_optional_punct("["):
            p.enter(at)
            group = [] if p.parse_optional_punct("]") else self.term_list("]", source)
            p.depth -= 1
            return group
        op_name = self.match(_OP_NAME)
        if op_name is not None:
            p.enter(at)  # nesting is bounded as in MLIR text (ir/core/deep.py)
            made = self.op(op_name, at, source)
            p.depth -= 1
            return made
        name = self.match(_NAME)
        if name is None:
            raise p.error("expected an op (like arith.addf(x, y)) or a variable")
        if self.at("("):
            raise p.error(f"'{name}' is not an op name: op names have a dialect prefix (arith.addf, tf.Mul)", at)
        if name == "_":
            if not source:
                raise p.error("'_' matches anything: it belongs in a pattern, not in a result", at)
            return _
        return self.variable(name, at, source)

    def variable(self, name: str, at: int, source: bool) -> Var:
        if source:
            self.bound.add(name)
        elif name not in self.bound:
            raise self.p.error(f"'{name}' is not bound by the left-hand side", at)
        return Var(name)

    def term_list(self, close: str, source: bool) -> list[Any]:
        items = [self.term(source)]
        while self.p.parse_optional_punct(","):
            items.append(self.term(source))
        self.p.parse_punct(close, "after the operands")
        return items

    def op(self, name: str, at: int, source: bool) -> OpPat:
        p = self.p
        self.positions.setdefault(name, at)
        operands: list[Any] = []
        if p.parse_optional_punct("("):
            if not p.parse_optional_punct(")"):
                operands = self.term_list(")", source)
        attrs = self.attributes(source) if self.at("{") else {}
        result_types = None
        if not source and p.parse_optional_punct(":"):
            result_types = [self.result_type()]
        made = OpPat(name, tuple(tuple(o) if isinstance(o, list) else o for o in operands),
                     tuple(sorted(attrs.items())), None, None if result_types is None else tuple(result_types))
        if source and self.keyword("as"):
            binding = self.expect(_NAME, "a name after 'as'")
            self.bound.add(binding)
            made = made.bind(binding)
        return made

    def result_type(self) -> Any:
        p = self.p
        if self.keyword("type"):
            p.parse_punct("(", "after 'type'")
            at = self.here()
            var = self.variable(self.expect(_NAME, "a variable"), at, False)
            p.parse_punct(")", "after the variable")
            return TypeOf(var.name)
        return p.parse_type()

    def attributes(self, source: bool) -> dict[str, Any]:
        p = self.p
        p.parse_punct("{")
        found: dict[str, Any] = {}
        if p.parse_optional_punct("}"):
            return found
        while True:
            at = self.here()
            key = p.parse_optional_string()
            key = key if isinstance(key, str) else self.expect(_NAME, "an attribute name")
            if key in found:
                raise p.error(f"attribute '{key}' given twice", at)
            p.parse_punct("=", "after the attribute name")
            found[key] = self.attribute_value(source)
            if p.parse_optional_punct("}"):
                return found
            p.parse_punct(",", "or '}' between attributes")

    def attribute_value(self, source: bool) -> Any:
        p = self.p
        at = self.here()
        word = _NAME.match(p.text, at)
        if word is None or _ATTRIBUTE_WORDS.match(word.group()) or p.text.startswith("<", word.end()):
            return p.parse_attribute()
        p.pos = word.end()
        if not self.at("("):
            return self.variable(word.group(), at, source)
        if source or word.group() not in NATIVES:
            where = "in a result" if not source else "in a pattern (natives compute result attributes)"
            raise p.error(f"'{word.group()}' is not a known attribute function {where}: "
                          f"known are {', '.join(NATIVES)}", at)
        kinds, factory = NATIVES[word.group()]
        return factory(*self.arguments(word.group(), kinds))

    # ------------------------------------------------------------ checks

    def check(self) -> CheckLike:
        left = self.check_and()
        while self.keyword("or"):
            left = left | self.check_and()
        return left

    def check_and(self) -> CheckLike:
        left = self.check_atom()
        while self.keyword("and"):
            left = left & self.check_atom()
        return left

    def check_atom(self) -> CheckLike:
        p = self.p
        at = self.here()
        if self.keyword("not"):
            p.enter(at)
            inner = ~self.check_atom()
        elif p.parse_optional_punct("("):
            p.enter(at)
            inner = self.check()
            p.parse_punct(")", "to close the check")
        else:
            return self.call_check(at)
        p.depth -= 1
        return inner

    def call_check(self, at: int) -> CheckLike:
        p = self.p
        name = self.expect(_NAME, "a check, like splat(c, 0) or same_type(x, y)")
        if name not in CHECKS:
            raise p.error(f"unknown check '{name}' (known: {', '.join(CHECKS)})", at)
        kinds, factory = CHECKS[name]
        return factory(*self.arguments(name, kinds))

    def arguments(self, name: str, kinds: tuple[str, ...]) -> list[Any]:
        p = self.p
        p.parse_punct("(", f"after '{name}'")
        values: list[Any] = []
        for i, kind in enumerate(kinds):
            if i:
                p.parse_punct(",", f"'{name}' takes {len(kinds)} arguments")
            values.append(self.argument(kind))
        p.parse_punct(")", f"'{name}' takes {len(kinds)} argument{'s' if len(kinds) > 1 else ''}")
        return values

    def argument(self, kind: str) -> Any:
        p = self.p
        at = self.here()
        if kind == "type":
            return p.parse_type()
        if kind == "var":
            return self.variable(self.expect(_NAME, "a variable"), at, False).name
        text = self.expect(_NUMBER, "an integer" if kind == "int" else "a number")
        if kind == "int":
            if not text.lstrip("+-").isdigit():
                raise p.error("expected an integer", at)
            return int(text)
        number: float | int = int(text) if text.lstrip("+-").isdigit() else float(text)
        return (text, number)


__all__ = ["CHECKS", "NATIVES", "parse_rule_file", "parse_rule_file_path"]
