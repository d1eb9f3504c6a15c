"""Op records and the registry: what each op is, declared once.

`opdef.py` holds the `OpDef` record (operands, attributes, results, regions,
traits, custom form, extra verification), `constraints.py` the type and
attribute constraints a record uses, `custom_form.py` what an op's custom
assembly form is and what its hooks may call on the parser and printer, and
`registry.py` the dialects and the process-wide registry.  Imports only
`egraft.ir.core`.
"""
