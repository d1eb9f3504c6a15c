"""egraft's IR: MLIR's structure, types, attributes, op records, parser and printer.

`parse(text)` reads MLIR text (generic or custom forms, today's syntax or
2019's) into a module; `print_ir(op)` prints it back; `verify(op)` checks it.

Layers, each importing only those below it (pyproject.toml's import-linter
contract `ir` enforces it, imports inside functions included):

    effects.py             side-effect queries (TF's op registry for tf ops without a record)
    graphdef | semantics   GraphDef I/O, the reference interpreter
    dialects/              the op records of each dialect, with their custom forms
    verifier.py            record-driven verification (erasure.py, region_kinds.py beside it)
    syntax/                lexer, type/attribute/location parsers, SSA scopes, parser, printer
    records/               OpDef, constraints, the custom-form hook protocols, the registry
    core/                  values, ops, blocks, regions, types, attributes, locations, traits

Importing this package registers every dialect, so `parse` knows them all.
"""

from egraft.ir import dialects  # noqa: F401  (registers the dialects)
from egraft.ir.core.builder import Builder
from egraft.ir.core.diagnostics import Diagnostic, DiagnosticError
from egraft.ir.core.operation import Block, BlockArgument, IRError, Operation, OpResult, Region, Value
from egraft.ir.core.symbols import SymbolTable
from egraft.ir.records.registry import REGISTRY
from egraft.ir.syntax.parser import Parser, parse
from egraft.ir.syntax.printer import Printer, print_ir
from egraft.ir.verifier import verify

__all__ = [
    "Block", "BlockArgument", "Builder", "Diagnostic", "DiagnosticError", "IRError", "Operation",
    "OpResult", "Parser", "Printer", "REGISTRY", "Region", "SymbolTable", "Value", "parse", "print_ir",
    "verify",
]
