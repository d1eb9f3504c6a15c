"""GraphDef protobuf layer: load/save ``.pb``/``.pbtxt``, TF's round-trip equivalence,
and GraphDef <-> tfg import/export; works without TensorFlow installed.
"""

from egraft.ir.graphdef.compare import compare_graphdefs
from egraft.ir.graphdef.errors import GraphDefError
from egraft.ir.graphdef.export_graphdef import export_graphdef
from egraft.ir.graphdef.import_graphdef import import_graphdef
from egraft.ir.graphdef.messages import GraphDef, coerce
from egraft.ir.graphdef.normalize import OpDefLookup, normalize_graphdef
from egraft.ir.graphdef.op_registry import lookup_op
from egraft.ir.graphdef.proto import format_pbtxt, load_graphdef, parse_pb, parse_pbtxt, save_graphdef

__all__ = [
    "GraphDef", "GraphDefError", "OpDefLookup", "coerce", "compare_graphdefs", "export_graphdef",
    "format_pbtxt", "import_graphdef", "lookup_op", "load_graphdef", "normalize_graphdef", "parse_pb", "parse_pbtxt",
    "save_graphdef",
]
