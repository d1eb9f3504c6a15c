"""MLIR text: the parser and the printer.

Reads and writes the generic form and the custom forms the op records declare.
The parser is one class built in layers, one concern per module:

    lexer.py            tokens, literals, nesting depth, located errors
    type_parser.py      builtin and dialect types (cached by their text)
    attr_parser.py      attribute values and dictionaries
    affine_parser.py    affine expressions, maps and integer sets
    location_parser.py  `loc(...)` and location aliases
    value_scopes.py     SSA names by region scope, forward references
    parser.py           operations, regions, blocks, the top level; `parse()`

`printer.py` writes IR back.  Imports `egraft.ir.core` and `egraft.ir.records`
only; dialects plug in through their records' custom forms (`FormParser`,
`FormPrinter` in `egraft.ir.records.custom_form`), never the other way round.
"""
