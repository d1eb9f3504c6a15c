"""The IR-agnostic e-graph engine: term tables in, equality saturation in egglog, term DAGs out.

Nothing here knows egraft's IR: a :class:`Schema` declares the sorts and constructors, a
:class:`TermTable` is the input, an :class:`Extraction` the output. It imports only egglog and
numpy (and scipy for the exact ILP extraction that measures the heuristic's gap).

Rules arrive compiled, as egglog ``rule`` commands (:func:`rule_command`) in rulesets the
e-graph declares: the one rule model is the rule language's ``Rule`` (``egraft.patterns``),
compiled above this layer by ``egraft.rewrite.rules`` because its meaning depends on the IR
encoding (see ``egraph.py``).

Typical use (see docs/engine.md)::

    eg = EGraph(schema); compile_rules(eg, rules)     # egraft.rewrite.rules.compile
    loaded = load_table(eg, table)
    report = saturate(eg, phased("simplify", "expand"), Budget(max_enodes=10**6))
    g = export(eg)
    result = extract(g, schema, root_classes(g, [loaded.base + r for r in table.roots]), OpCost({}))
"""


from egraft.rewrite.engine.egraph import EGraph, rule_command
from egraft.rewrite.engine.export import EGraphArrays, export
from egraft.rewrite.engine.extract import CostModel, Extraction, FnCost, OpCost, dag_cost, extract, root_classes
from egraft.rewrite.engine.load import Loaded, load_table
from egraft.rewrite.engine.saturate import Budget, Phase, SaturationReport, Schedule, phased, saturate
from egraft.rewrite.engine.termtable import OpSig, Schema, TermTable, structural_ids

__all__ = [
    "Budget", "CostModel", "EGraph", "EGraphArrays", "Extraction", "FnCost", "Loaded", "OpCost", "OpSig",
    "Phase", "SaturationReport", "Schedule", "Schema", "TermTable", "dag_cost", "export", "extract",
    "load_table", "phased", "root_classes", "rule_command", "saturate", "structural_ids",
]
