"""Records of the `tf` ops real graphs use (Const, Conv2D, MatMul, If, ...).

TensorFlow prints every `tf` op in generic form: inherent attributes (the
ones below) in `<{...}>`, everything else (`device`, `T`, `_output_shapes`,
derived dtype attributes) discardable.  The records carry TF's traits and
attribute constraints so that the generic verifier and the e-graph see the
same facts ODS declares; `tf.py` registers them in the open `tf` dialect.
"""

from __future__ import annotations

from typing import Sequence

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.core.operation import Operation
from egraft.ir.core.traits import Trait, Traits
from egraft.ir.dialects.tf_types import (BoolTensor, IndexTensor, ResourceTensor, TFTensor,
                                         drop_ref_and_subtypes)
from egraft.ir.records import constraints as C
from egraft.ir.records.custom_form import CustomForm, FormParser, FormPrinter
from egraft.ir.records.opdef import AttrDef, OpDef, RegionDef, Variadic
from egraft.ir.verifier import op_error

# ------------------------------------------------------------------ the 2019 custom form


def parse_legacy_form(p: FormParser) -> Operation:
    """2019's `tf.Add %a, %b {attrs} : tensor<*xf32>` (every operand and the
    single result share the type) or `... : (ins) -> outs`."""
    refs = p.parse_operand_ref_list()
    attrs = p.parse_optional_attr_dict()
    p.parse_punct(":")
    t = p.parse_type()
    if isinstance(t, T.FunctionType):
        operands, results = p.resolve_operands(refs, t.inputs), list(t.results)
    else:
        operands, results = p.resolve_operands(refs, [t] * len(refs)), [t] * max(1, p.op_result_count)
    return p.create_op(None, operands, results, attrs)


def print_generic(pr: FormPrinter, op: Operation) -> None:
    """TensorFlow prints its ops generically, whatever form they were read in."""
    pr.print_generic_op(op)


LEGACY_FORM = CustomForm(parse_legacy_form, print_generic)

# ------------------------------------------------------------------ attribute constraints

_PADDING = C.str_enum("SAME", "VALID", "EXPLICIT")
_PADDING_NO_EXPLICIT = C.str_enum("SAME", "VALID")
_CONV_FORMAT = C.str_enum("NHWC", "NCHW")
_POOL_FORMAT = C.str_enum("NHWC", "NCHW", "NCHW_VECT_C")
_ARRAY4 = C.Confined(C.I64ArrayAttr, [C.array_min_count(4)])
_FALSE = A.BoolAttr(False)
_TRUE = A.BoolAttr(True)
_EMPTY = A.ArrayAttr(())
_NHWC = A.StringAttr("NHWC")


def _i64s(*values: int) -> A.ArrayAttr:
    return A.ArrayAttr(tuple(A.IntegerAttr(v, T.i64) for v in values))


def _flag(name: str, default: A.Attribute = _FALSE) -> AttrDef:
    """A `DefaultValuedOptionalAttr<BoolAttr, ...>`."""
    return AttrDef(name, C.BoolAttr, default=default)


_FORMAT = AttrDef("data_format", _CONV_FORMAT, default=_NHWC)
_DILATIONS = AttrDef("dilations", C.I64ArrayAttr, default=_i64s(1, 1, 1, 1))
_EXPLICIT_PADDINGS = AttrDef("explicit_paddings", C.I64ArrayAttr, default=_EMPTY)

# ------------------------------------------------------------------ traits TF declares

# TF's SameOperandsAndResult*ResolveRef traits compare element types only
# (refs read as their value type) and leave shapes to shape inference.
_SAME_ELEMENT = Traits.SameOperandsAndResultElementType
_PURE = (Traits.Pure,)
_UNARY = (Traits.Pure, _SAME_ELEMENT)
_BINARY = (Traits.Pure, _SAME_ELEMENT)  # ResultsBroadcastableShape: operand shapes broadcast to the result
_COMMUTATIVE_BINARY = (Traits.Commutative, Traits.Pure, _SAME_ELEMENT)


def _verify_same_element_types(op: Operation) -> None:
    types = [drop_ref_and_subtypes(T.element_type(t)) for t in (*op.operand_types, *op.result_types)]
    if any(t is not types[0] for t in types[1:]):
        raise op_error(op, "requires compatible element types for all operands and results")


def _verify_bias_add(op: Operation) -> None:
    """TensorFlow's BiasAdd rules: the value has the rank its data format needs, the bias is a
    vector, and their channel sizes agree where both are known."""
    value, bias = (v.type for v in op.operands)
    fmt = op.attr("data_format")
    nchw = isinstance(fmt, A.StringAttr) and fmt.value == "NCHW"
    if isinstance(value, T.RankedTensorType) and len(value.shape) < (3 if nchw else 2):
        raise op_error(op, f"requires value operand to have rank at least {'three' if nchw else 'two'} with "
                           f"`{'NCHW' if nchw else 'NHWC'}` data format")
    if isinstance(bias, T.RankedTensorType) and len(bias.shape) != 1:
        raise op_error(op, "requires bias operand to have rank exactly one")
    if isinstance(value, T.RankedTensorType) and isinstance(bias, T.RankedTensorType):
        feature, length = value.shape[1 if nchw else -1], bias.shape[0]
        if feature >= 0 and length >= 0 and feature != length:
            raise op_error(op, "requires channel dimension and feature dimension to match; "
                               f"found {feature} and {length}, respectively")


def _op(name: str, summary: str, operands: Sequence = (), results: Sequence = (("output", TFTensor),),
        attributes: Sequence = (), traits: Sequence[Trait] = _PURE, description: str = "",
        **kwargs) -> OpDef:
    if _SAME_ELEMENT in traits:
        kwargs.setdefault("verify", _verify_same_element_types)
    return OpDef(f"tf.{name}", summary=summary, description=description, operands=operands,
                 results=results, attributes=attributes, traits=tuple(traits), assembly=LEGACY_FORM, **kwargs)


def _unary(name: str, summary: str, traits: Sequence[Trait] = _UNARY, operand: str = "x",
           result: str = "y") -> OpDef:
    return _op(name, summary, [(operand, TFTensor)], [(result, TFTensor)], traits=traits)


def _binary(name: str, summary: str, traits: Sequence[Trait] = _BINARY) -> OpDef:
    return _op(name, summary, [("x", TFTensor), ("y", TFTensor)], [("z", TFTensor)], traits=traits)


def _reduction(name: str, summary: str) -> OpDef:
    return _op(name, summary, [("input", TFTensor), ("reduction_indices", IndexTensor)],
               attributes=[_flag("keep_dims")], dims_operand=("reduction_indices", "axes"))


# ------------------------------------------------------------------ records

CONST = _op("Const", "Constant tensor", results=[("output", TFTensor)],
            attributes=[("value", C.ElementsAttr)], traits=(Traits.ConstantLike, Traits.Pure),
            description="Produces the tensor held by its `value` attribute.", result_names=("cst",))

ELEMENTWISE = [
    _unary("Identity", "Forwards its input unchanged", traits=_PURE, operand="input", result="output"),
    _unary("Neg", "Element-wise negation", traits=_UNARY + (Traits.Involution,)),
    _unary("Relu", "Element-wise max(x, 0)", operand="features", result="activations"),
    _unary("Relu6", "Element-wise min(max(x, 0), 6)", operand="features", result="activations"),
    _unary("Sigmoid", "Element-wise logistic function"),
    _unary("Rsqrt", "Element-wise reciprocal square root"),
    _unary("Sqrt", "Element-wise square root"),
    _unary("Square", "Element-wise x * x"),
    _unary("ZerosLike", "A tensor of zeros shaped like the input"),
    _unary("OnesLike", "A tensor of ones shaped like the input"),
    _unary("Softmax", "Softmax over the innermost dimension", operand="logits", result="softmax"),
    _binary("Add", "Element-wise x + y (also string concatenation)"),
    _binary("AddV2", "Element-wise x + y", traits=_COMMUTATIVE_BINARY),
    _binary("Sub", "Element-wise x - y"),
    _binary("Mul", "Element-wise x * y", traits=_COMMUTATIVE_BINARY),
    _binary("RealDiv", "Element-wise x / y for real types"),
    _binary("Maximum", "Element-wise max(x, y)", traits=_COMMUTATIVE_BINARY),
]

STRUCTURAL = [
    _op("IdentityN", "Forwards each input unchanged", [("input", Variadic(TFTensor))],
        [("output", Variadic(TFTensor))]),
    _op("AddN", "Sums all inputs element-wise", [("inputs", Variadic(TFTensor))], [("sum", TFTensor)],
        traits=_COMMUTATIVE_BINARY),
    _op("Placeholder", "A graph input fed at run time", traits=()),
    _op("NoOp", "Does nothing; anchors control dependencies", results=()),
    _op("Reshape", "Gives a tensor a new shape", [("tensor", TFTensor), ("shape", IndexTensor)],
        dims_operand=("shape", "shape")),
    _op("Squeeze", "Removes size-1 dimensions", [("input", TFTensor)],
        attributes=[AttrDef("squeeze_dims", C.I64ArrayAttr, default=_EMPTY)]),
    _op("ExpandDims", "Inserts a size-1 dimension", [("input", TFTensor), ("dim", IndexTensor)],
        dims_operand=("dim", "new_axis")),
    _op("Transpose", "Permutes dimensions", [("x", TFTensor), ("perm", IndexTensor)], [("y", TFTensor)],
        dims_operand=("perm", "permutation")),
    _op("ConcatV2", "Concatenates tensors along an axis",
        [("values", Variadic(TFTensor)), ("axis", IndexTensor)], dims_operand=("axis", "axis")),
    _op("Pad", "Pads a tensor with zeros", [("input", TFTensor), ("paddings", IndexTensor)],
        dims_operand=("paddings", "paddings")),
    _op("Fill", "A tensor of the given shape filled with a scalar", [("dims", IndexTensor), ("value", TFTensor)],
        dims_operand=("dims", "dims")),
    _op("Cast", "Converts element types", [("x", TFTensor)], [("y", TFTensor)], attributes=[_flag("Truncate")]),
    _reduction("Mean", "Mean over the given dimensions"),
    _reduction("Sum", "Sum over the given dimensions"),
]

LINALG = [
    _op("MatMul", "Matrix product a * b", [("a", TFTensor), ("b", TFTensor)], [("product", TFTensor)],
        attributes=[_flag("transpose_a"), _flag("transpose_b"), _flag("grad_a"), _flag("grad_b")]),
    _op("BatchMatMulV2", "Batched matrix product with broadcasting batch dimensions",
        [("x", TFTensor), ("y", TFTensor)],
        attributes=[_flag("adj_x"), _flag("adj_y"), _flag("grad_x"), _flag("grad_y")]),
    _op("Conv2D", "2-D convolution", [("input", TFTensor), ("filter", TFTensor)],
        attributes=[("strides", C.I64ArrayAttr), _flag("use_cudnn_on_gpu", _TRUE), ("padding", _PADDING),
                    _EXPLICIT_PADDINGS, _FORMAT, _DILATIONS]),
    _op("DepthwiseConv2dNative", "Depthwise 2-D convolution", [("input", TFTensor), ("filter", TFTensor)],
        attributes=[("strides", C.I64ArrayAttr), ("padding", _PADDING), _EXPLICIT_PADDINGS, _FORMAT,
                    _DILATIONS]),
    _op("BiasAdd", "Adds a 1-D bias along the channel dimension", [("value", TFTensor), ("bias", TFTensor)],
        attributes=[_FORMAT], verify=_verify_bias_add),
    _op("MaxPool", "Max pooling", [("input", TFTensor)],
        attributes=[("ksize", _ARRAY4), ("strides", _ARRAY4), ("padding", _PADDING), _EXPLICIT_PADDINGS,
                    AttrDef("data_format", _POOL_FORMAT, default=_NHWC)]),
    _op("AvgPool", "Average pooling", [("value", TFTensor)],
        attributes=[("ksize", _ARRAY4), ("strides", _ARRAY4), ("padding", _PADDING_NO_EXPLICIT), _FORMAT]),
]

_READ = Traits.MemoryEffects(("read",))
_WRITE = Traits.MemoryEffects(("write",))

VARIABLES = [
    _op("VarHandleOp", "Creates a handle to a resource variable", results=[("resource", ResourceTensor)],
        attributes=[AttrDef("container", C.StrAttr, default=A.StringAttr("")),
                    AttrDef("shared_name", C.StrAttr, default=A.StringAttr(""))],
        traits=(Traits.MemoryEffects(("allocate",)),)),
    _op("ReadVariableOp", "Reads the value of a resource variable", [("resource", ResourceTensor)],
        [("value", TFTensor)], traits=(_READ,)),
    _op("AssignVariableOp", "Writes a value into a resource variable",
        [("resource", ResourceTensor), ("value", TFTensor)], results=(),
        attributes=[_flag("validate_shape")], traits=(_WRITE,)),
]

_STATELESS = ("is_stateless", C.BoolAttr)
_PARALLEL = AttrDef("parallel_iterations", C.Confined(C.I64Attr, [C.int_min_value(1)]),
                    default=A.IntegerAttr(10, T.i64))

CONTROL_FLOW = [
    _op("If", "Calls one of two functions depending on a condition",
        [("cond", TFTensor), ("input", Variadic(TFTensor))], [("output", Variadic(TFTensor))],
        attributes=[("then_branch", C.FlatSymbolRefAttr), ("else_branch", C.FlatSymbolRefAttr), _STATELESS],
        traits=()),
    _op("While", "Calls a body function while a condition function returns true",
        [("input", Variadic(TFTensor))], [("output", Variadic(TFTensor))],
        attributes=[("cond", C.FlatSymbolRefAttr), ("body", C.FlatSymbolRefAttr), _PARALLEL, _STATELESS,
                    AttrDef("shape_invariant", C.UnitAttr, optional=True)],
        traits=()),
    _op("IfRegion", "Runs one of two regions depending on a condition", [("cond", BoolTensor)],
        [("output", Variadic(TFTensor))],
        attributes=[_STATELESS, AttrDef("_then_func_name", C.StrAttr, optional=True),
                    AttrDef("_else_func_name", C.StrAttr, optional=True)],
        regions=[RegionDef("then_branch", single_block=True), RegionDef("else_branch", single_block=True)],
        traits=(Traits.SingleBlockImplicitTerminator("tf.Yield"), Traits.RecursiveMemoryEffects)),
    _op("WhileRegion", "Runs a body region while a condition region yields true",
        [("input", Variadic(TFTensor))], [("output", Variadic(TFTensor))],
        attributes=[_PARALLEL, _STATELESS, AttrDef("shape_invariant", C.UnitAttr, optional=True)],
        regions=[RegionDef("cond", single_block=True), RegionDef("body", single_block=True)],
        traits=(Traits.RecursiveMemoryEffects,)),
    _op("Yield", "Returns values from the regions of IfRegion/WhileRegion",
        [("operands", Variadic(C.AnyType))], results=(),
        traits=(Traits.Pure, Traits.Terminator, Traits.ReturnLike,
                Traits.ParentOneOf(("tf.IfRegion", "tf.WhileRegion", "tf.CaseRegion")))),
]


def _compare(name: str, summary: str, traits: Sequence[Trait] = _PURE, attributes: Sequence = ()) -> OpDef:
    """A comparison: bool result, operands of one element type (not checked: the result differs)."""
    return _op(name, summary, [("x", TFTensor), ("y", TFTensor)], [("z", TFTensor)], traits=traits,
               attributes=attributes, result_element=T.i1)


_SHAPE_ERROR = _flag("incompatible_shape_error", _TRUE)

# Ops the tf-canonical rules build (patterns/tf_rules.py), with just enough of TF's record to
# validate the rules and infer their result types.
CANONICALIZE = [
    _compare("Equal", "Element-wise x == y", (Traits.Commutative, Traits.Pure), [_SHAPE_ERROR]),
    _compare("NotEqual", "Element-wise x != y", (Traits.Commutative, Traits.Pure), [_SHAPE_ERROR]),
    _compare("Greater", "Element-wise x > y"),
    _compare("GreaterEqual", "Element-wise x >= y"),
    _compare("Less", "Element-wise x < y"),
    _compare("LessEqual", "Element-wise x <= y"),
    _binary("SquaredDifference", "Element-wise (x - y) * conj(x - y)", traits=_COMMUTATIVE_BINARY),
    _binary("MulNoNan", "Element-wise x * y, 0 where y is 0 (even if x is NaN or Inf)"),
    _op("LogSoftmax", "Log of the softmax over the innermost dimension", [("logits", TFTensor)],
        [("logsoftmax", TFTensor)], traits=_UNARY),
    _op("Bitcast", "Reinterprets the bytes of a tensor as another element type", [("input", TFTensor)],
        traits=_PURE),
]

TF_OPS = [CONST, *ELEMENTWISE, *STRUCTURAL, *LINALG, *VARIABLES, *CONTROL_FLOW, *CANONICALIZE]
