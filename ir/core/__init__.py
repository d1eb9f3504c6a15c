"""The IR's core: values, operations, blocks, regions, types, attributes, locations.

Everything here stands on its own: it imports nothing from the rest of `egraft.ir`
(op records, registry, syntax, verifier, dialects), so a newcomer can read the IR's
data structures without the machinery built on them.  Facts that belong to op
records reach the core only through the small `OpRecord` protocol an op class
carries and the record lookup the registry installs (`operation.py`).
"""
