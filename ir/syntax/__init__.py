"""MLIR text: the parser and the printer.

Reads and writes the generic form and the custom forms the op records declare.
Imports `egraft.ir.core` and `egraft.ir.records` only; dialects plug in through
their records' custom forms and never the other way round.
"""
