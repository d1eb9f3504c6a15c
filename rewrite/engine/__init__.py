"""The IR-agnostic e-graph engine: term tables in, equality saturation in egglog, term DAGs out.

Nothing here knows egraft's IR: a :class:`Schema` declares the sorts and constructors, a
:class:`TermTable` is the input, an :class:`Extraction` the output. It imports only egglog and
numpy (and scipy for the exact ILP extraction that measures the heuristic's gap).

Typical use (see docs/engine.md)::

    eg = EGraph(schema); add_rules(eg, rules)
    loaded = load_table(eg, table)
    report = saturate(eg, phased("simplify", "expand"), Budget(max_enodes=10**6))
    g = export(eg)
    result = extract(g, schema, root_classes(g, [loaded.base + r for r in table.roots]), OpCost({}))
"""


from egraft.rewrite.engine.egglog_rules import Bind, Guard, P, Prim, Rule, RuleError, V, add_rules
from egraft.rewrite.engine.egraph import EGraph
from egraft.rewrite.engine.export import EGraphArrays, export
from egraft.rewrite.engine.extract import CostModel, Extraction, FnCost, OpCost, dag_cost, extract, root_classes
from egraft.rewrite.engine.load import Loaded, load_table
from egraft.rewrite.engine.saturate import Budget, Phase, SaturationReport, Schedule, phased, saturate
from egraft.rewrite.engine.termtable import OpSig, Schema, TermTable, structural_ids

__all__ = [
    "Bind", "Budget", "CostModel", "EGraph", "EGraphArrays", "Extraction", "FnCost", "Guard",
    "Loaded", "OpCost", "OpSig", "P", "Phase", "Prim", "Rule", "RuleError", "SaturationReport",
    "Schedule", "Schema", "TermTable", "V", "add_rules", "dag_cost", "export", "extract",
    "load_table", "phased", "root_classes", "saturate", "structural_ids",
]
