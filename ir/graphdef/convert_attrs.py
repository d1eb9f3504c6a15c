"""``AttrValue`` <-> egraft attributes, as TF's importer and exporter map them.

| AttrValue | attribute |
|---|---|
| ``s`` / ``i`` / ``f`` / ``b`` | string / ``i64`` / ``f32`` / ``i1`` |
| ``type`` | type (``f32``, ``!tf_type.string``) |
| ``shape`` | ``#tf_type.shape<2x?>`` |
| ``tensor`` | dense elements (:mod:`.convert_tensor`) |
| ``list`` | array of the items of every kind |
| ``func`` | ``#tf_type.func<@name, {attrs}>`` |
| ``placeholder`` | ``#tf_type.placeholder<"T">`` |
| nothing set | unit |

The two directions are inverses on everything TF's importer produces, which is what
makes the GraphDef round trip exact.
"""

from __future__ import annotations

from egraft.ir.core import attributes as A
from egraft.ir.core import types as T
from egraft.ir.graphdef.convert_tensor import fill_tensor, tensor_attr
from egraft.ir.graphdef.convert_types import (ConversionError, dtype_to_type, fill_shape, shape_attr,
                                              shape_dims, type_to_dtype)
from egraft.ir.graphdef.messages import AttrValue, NameAttrList
from egraft.ir.syntax.lexer import unescape
from egraft.ir.syntax.parser import Parser


def string_attr(value: bytes) -> A.StringAttr:
    """Text when it is UTF-8 (as the printer shows it), else the raw bytes."""
    try:
        return A.StringAttr(value.decode("utf-8"))
    except UnicodeDecodeError:
        return A.StringAttr(value)


def func_attr(func: NameAttrList, in_list: bool = False) -> A.DialectAttr:
    """`#tf_type.func<@name, {attrs}>`.  TensorFlow rejects an empty function
    name only inside a list (a lone function attribute may name nothing), and
    an empty attribute name anywhere."""
    if in_list and not func.name:
        raise ConversionError("empty func_attr name")
    attrs = attr_dict(func.attr)
    return A.DialectAttr("tf_type", f"func<{A.symbol_text(func.name)}, {attrs}>")


def attr_dict(attrs, what: str = "attr") -> A.DictionaryAttr:
    """A map of AttrValues as a dictionary attribute (empty names are TF errors)."""
    entries = []
    for name, value in sorted(attrs.items()):  # TF converts (and fails) in name order
        if not name:
            raise ConversionError(f"empty {what} name")
        entries.append((name, attr_value_to_attr(value)))
    return A.DictionaryAttr(tuple(entries))


def attr_value_to_attr(value: AttrValue) -> A.Attribute:
    """The attribute TF's importer makes of one AttrValue."""
    kind = value.WhichOneof("value")
    if kind == "s":
        return string_attr(value.s)
    if kind == "i":
        return A.IntegerAttr(value.i, T.i64)
    if kind == "f":
        return A.float_attr(value.f, T.f32)
    if kind == "b":
        return A.BoolAttr(value.b)
    if kind == "type":
        return A.TypeAttr(dtype_to_type(value.type))
    if kind == "shape":
        return shape_attr(value.shape)
    if kind == "tensor":
        return tensor_attr(value.tensor)
    if kind == "func":
        return func_attr(value.func)
    if kind == "placeholder":
        return A.DialectAttr("tf_type", f"placeholder<{A.escape_string(value.placeholder)}>")
    if kind == "list":
        lst = value.list
        items: list[A.Attribute] = [string_attr(s) for s in lst.s]
        items += [A.IntegerAttr(i, T.i64) for i in lst.i]
        items += [A.float_attr(f, T.f32) for f in lst.f]
        items += [A.BoolAttr(b) for b in lst.b]
        items += [A.TypeAttr(dtype_to_type(t)) for t in lst.type]
        items += [shape_attr(s) for s in lst.shape]
        items += [tensor_attr(t) for t in lst.tensor]
        items += [func_attr(f, in_list=True) for f in lst.func]
        return A.ArrayAttr(tuple(items))
    return A.UNIT


# ------------------------------------------------------------------ export


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value


def parse_func_attr(attr: A.DialectAttr) -> tuple[str, A.DictionaryAttr]:
    """The callee name and attributes of ``#tf_type.func<@name, {attrs}>``."""
    p = Parser(attr.params)
    ref = p.parse_attribute()
    attrs: A.Attribute = A.DictionaryAttr(())
    if p.parse_optional_punct(","):
        attrs = p.parse_attribute()
    if not isinstance(ref, A.SymbolRefAttr) or not isinstance(attrs, A.DictionaryAttr):
        raise ConversionError(f"malformed func attribute {attr}")
    return ref.root, attrs


def fill_func(attr: A.DialectAttr, out: NameAttrList) -> None:
    name, attrs = parse_func_attr(attr)
    out.name = name
    for key, value in attrs.entries:
        attr_to_attr_value(value, out.attr[key])


def _placeholder_name(attr: A.DialectAttr) -> str:
    body = attr.params.strip()
    if not (body.startswith('"') and body.endswith('"')):
        raise ConversionError(f"malformed placeholder attribute {attr}")
    name = unescape(body[1:-1])
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else name


def attr_to_attr_value(attr: A.Attribute, out: AttrValue) -> None:
    """Write one attribute into ``out`` (the inverse of :func:`attr_value_to_attr`)."""
    if isinstance(attr, A.StringAttr):
        out.s = _as_bytes(attr.value)
    elif isinstance(attr, A.IntegerAttr):
        if attr.type is T.i1:
            out.b = bool(attr.value)
        else:
            out.i = attr.value
    elif isinstance(attr, A.FloatAttr):
        out.f = attr.value
    elif isinstance(attr, A.TypeAttr):
        out.type = type_to_dtype(attr.value)
    elif isinstance(attr, A.DenseElementsAttr):
        fill_tensor(attr, out.tensor)
    elif isinstance(attr, A.UnitAttr):
        out.Clear()
    elif isinstance(attr, A.ArrayAttr):
        _fill_list(attr, out)
    elif isinstance(attr, A.DialectAttr) and attr.dialect == "tf_type":
        kind = attr.mnemonic
        if kind == "shape":
            fill_shape(out.shape, shape_dims(attr))
        elif kind == "func":
            fill_func(attr, out.func)
        elif kind == "placeholder":
            out.placeholder = _placeholder_name(attr)
        elif kind == "tensor_proto":
            fill_tensor(attr, out.tensor)
        else:
            raise ConversionError(f"cannot export attribute {attr}")
    else:
        raise ConversionError(f"cannot export attribute {attr}")


def _fill_list(attr: A.ArrayAttr, out: AttrValue) -> None:
    lst = out.list
    out.list.SetInParent()
    for item in attr:
        if isinstance(item, A.StringAttr):
            lst.s.append(_as_bytes(item.value))
        elif isinstance(item, A.IntegerAttr):
            (lst.b if item.type is T.i1 else lst.i).append(item.value if item.type is not T.i1 else bool(item.value))
        elif isinstance(item, A.FloatAttr):
            lst.f.append(item.value)
        elif isinstance(item, A.TypeAttr):
            lst.type.append(type_to_dtype(item.value))
        elif isinstance(item, A.DenseElementsAttr):
            fill_tensor(item, lst.tensor.add())
        elif isinstance(item, A.DialectAttr) and item.mnemonic == "shape":
            fill_shape(lst.shape.add(), shape_dims(item))
        elif isinstance(item, A.DialectAttr) and item.mnemonic == "func":
            fill_func(item, lst.func.add())
        elif isinstance(item, A.DialectAttr) and item.mnemonic == "tensor_proto":
            fill_tensor(item, lst.tensor.add())
        else:
            raise ConversionError(f"cannot export list element {item}")
