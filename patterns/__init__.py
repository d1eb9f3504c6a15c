"""Rewrite rules as Python values (docs/rules.md).

    from egraft.patterns import op, vars_, rule, register_rule_set
    x, = vars_("x")
    register_rule_set("mine", [rule("neg-neg", op("tf.Neg", op("tf.Neg", x)), x)])

`rule.py` is the data model both engines run (the greedy driver and the
e-graph compiler); `dsl.py` builds it, `validate.py` checks it against the op
records, `checks.py` and `natives.py` are the libraries of named conditions
and result helpers, `rule_sets.py` the registry, `drr.py` the importer of
MLIR DRR text. `relational.py` is the other kind of rule declaration: relational rules
over facts, for analyses (`island_merging.py`).
"""

from .checks import (attr_is, attr_is_splat, broadcastable, element_type_is, float_element, has_one_use, has_rank,
                     integer_element, is_constant, is_splat, pred, same_element_type, same_type, static_shape, type_is)
from .dsl import _, const_of, either, native, op, ref, rule, type_of, var, vars_
from .natives import fold, one_of, splat_attr, zero_of
from .rule import (AllOf, AnyOf, Check, ConstOf, Either, Native, Not, OpPat, Origin, ResultOf, Rule, RuleError,
                   TypeOf, Var)
from .rule_sets import Declaration, RuleSet, declaration, register_rule_set, rule_set, rule_sets, rules_of
from .validate import source_kinds, validate_rule

__all__ = [
    "AllOf", "AnyOf", "Check", "ConstOf", "Declaration", "Either", "Native", "Not", "OpPat", "Origin", "ResultOf", "Rule",
    "RuleError", "RuleSet", "TypeOf", "Var", "_", "attr_is", "attr_is_splat", "broadcastable", "const_of", "declaration", "either",
    "element_type_is", "float_element", "fold", "has_one_use", "has_rank", "integer_element", "is_constant",
    "is_splat", "native", "one_of", "op", "pred", "ref", "register_rule_set", "rule", "rule_set", "rule_sets",
    "rules_of", "same_element_type", "same_type", "source_kinds", "splat_attr", "static_shape", "type_is", "type_of", "validate_rule",
    "var", "vars_", "zero_of",
]
