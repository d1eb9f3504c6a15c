"""The DRR importer, on snippets written for these tests in DRR syntax (one per construct)."""

from __future__ import annotations

from egraft.ir import parse, print_ir
from egraft.ir.core import attributes as A
from egraft.ir.records import constraints as C
from egraft.ir.core import types as T
from egraft.patterns import Check, Either, Native, OpPat, ResultOf, Var
from egraft.patterns.drr import import_drr
from egraft.patterns.tablegen import parse_tablegen
from egraft.rewrite.greedy.driver import apply_rules_greedily


def _one(text: str, **kwargs):
    report = import_drr(text, "snippet.td", **kwargs)
    assert not report.skipped, report.summary()
    (rule,) = report.rules
    return rule


def test_pat_with_nested_source_and_result_and_origin() -> None:
    r = _one("""// a comment
def DoubleNeg : Pat<(TF_NegOp (TF_NegOp $v)),
                    (replaceWithValue $v)>;""")
    assert r.name == "DoubleNeg" and r.root == OpPat("tf.Neg", (OpPat("tf.Neg", (Var("v"),)),))
    assert r.results == ((Var("v"),),) and str(r.origin) == "snippet.td:2" and r.benefit == 2


def test_arith_and_std_prefixes_map_through_records() -> None:
    r = _one("def SubSelf : Pat<(Arith_SubIOp $a, $a, $ovf), (Std_MulIOp $a, $a, $ovf)>;")
    assert r.root.name == "arith.subi" and r.results[0][0].name == "arith.muli"
    assert r.root.attr("overflowFlags") == Var("ovf")  # the third positional argument is an attribute


def test_positional_attributes_from_the_tf_registry() -> None:
    r = _one("def NotEq : Pat<(TF_LogicalNotOp (TF_EqualOp $p, $q, $err)), (TF_NotEqualOp $p, $q, $err)>;")
    assert r.root.operands[0].attr("incompatible_shape_error") == Var("err")
    assert r.results[0][0].attr("incompatible_shape_error") == Var("err")


def test_bindings_wildcards_and_constraints() -> None:
    r = _one("""
def SameTy : Constraint<CPred<"$0.getType() == $1.getType()">>;
def CastAway : Pat<(TF_CastOp:$res TF_FloatTensor:$arg, $_), (replaceWithValue $arg), [(SameTy $res, $arg)]>;""")
    assert r.root.binding == "res" and r.root.operands[0].constraint.summary == "tensor of floating-point values"
    assert r.root.attrs == ()  # `$_` leaves Truncate unconstrained
    (check,) = r.where
    assert check.kind == "same_type"


def test_anonymous_constraint_and_attribute_constraint() -> None:
    r = _one("def A : Pat<(TF_MatMulOp F32Tensor, $b, BoolAttr:$ta, $tb), (TF_MatMulOp $b, $b, $ta, $tb)>;")
    anon = r.root.operands[0]
    assert anon.name.startswith("anon") and anon.constraint.summary == "tensor of f32 values"
    assert r.root.attr("transpose_a").constraint is C.BoolAttr


def test_type_def_with_rank_predicate() -> None:
    r = _one("""
def IsRank2 : Type<HasAnyRankOfPred<[2]>, "rank 2">;
def B : Pat<(TF_BatchMatMulV2Op $x, $y, $ax, $ay), (TF_MatMulOp $x, $y, $ax, $ay), [(IsRank2 $x)]>;""")
    (check,) = r.where
    assert check.kind == "type_constraint"
    assert check.fn(T.RankedTensorType((2, 3), T.f32)) and not check.fn(T.RankedTensorType((2,), T.f32))


def test_constant_attr_either_benefit_and_defvar() -> None:
    r = _one("""
defvar False = ConstantAttr<BoolAttr, "false">;
def E : Pat<(TF_MatMulOp (either $a, (TF_NegOp $b)), False, $tb),
            (TF_MatMulOp $a, $b, ConstantAttr<BoolAttr, "true">, $tb), [], [], (addBenefit 10)>;""")
    assert isinstance(r.root.operands[0], Either)
    assert r.root.attr("transpose_a") == A.BoolAttr(False)
    assert r.results[0][0].attr("transpose_a") == A.BoolAttr(True)
    assert r.benefit == 12


def test_native_code_call_missing_is_reported_then_supplied() -> None:
    text = """
def GetZero : NativeCodeCall<"$_builder.getZeroAttr($0.getType())">;
def Zero : Pat<(Arith_SubIOp $x, $x, $o), (Arith_ConstantOp (GetZero $x))>;
def Keep : Pat<(TF_NegOp (TF_NegOp $v)), (replaceWithValue $v)>;"""
    report = import_drr(text, "snippet.td")
    assert [r.name for r in report.rules] == ["Keep"]
    (skipped,) = report.skipped
    assert (skipped.name, str(skipped.origin), skipped.reasons) == ("Zero", "snippet.td:3", ("no Python for GetZero",))
    assert report.missing == {"GetZero": ["Zero"]}
    assert "imported 1 of 2 patterns" in report.summary() and "missing Python for GetZero" in report.summary()

    def zero_attr(value):
        return A.IntegerAttr(0, value.type)

    report = import_drr(text, "snippet.td", natives={"GetZero": zero_attr})
    assert not report.skipped
    zero = report.rules[0]
    (native,) = [v for _, v in zero.results[0][0].attrs]
    assert isinstance(native, Native) and native.kind == "attr"
    m = parse("func.func @f(%a: i32) -> i32 {\n %0 = arith.subi %a, %a : i32\n return %0 : i32\n}")
    assert apply_rules_greedily(m, [zero]).rewrites == {"Zero": 1}
    assert "arith.constant 0 : i32" in print_ir(m)


def test_unknown_cpred_needs_python_by_name() -> None:
    text = """
def Odd : Constraint<CPred<"isOdd($0)">, "odd">;
def R : Pat<(TF_NegOp:$n $v), (replaceWithValue $v), [(Odd $v)]>;"""
    report = import_drr(text, "snippet.td")
    assert report.missing == {"Odd": ["R"]}
    report = import_drr(text, "snippet.td", constraints={"Odd": lambda v: True})
    (check,) = report.rules[0].where
    assert isinstance(check, Check) and check.name == "Odd" and check.args == (Var("v"),)
    typed = import_drr(text, "snippet.td", constraints={"Odd": C.AnyTensor})
    assert typed.rules[0].where[0].kind == "type_constraint"


def test_multi_result_pattern_with_indexing() -> None:
    r = _one("""
def Swap : Pattern<(TF_SplitOp:$s $dim, $value), [(replaceWithValue $s__1), (replaceWithValue $s__0)]>;""")
    assert r.results == ((ResultOf("s", 1), ResultOf("s", 0)),)


def test_unsupported_features_are_reported_not_dropped() -> None:
    text = """
def Loc : Pat<(TF_NegOp $v), (TF_AbsOp $v, (location "here"))>;
def Inline : Pat<(TF_NegOp $v), (NativeCodeCall<"make($0)"> $v)>;
def NotOp : Pat<(TFL_NegOp $v), (replaceWithValue $v)>;
def Supp : Pat<(TF_NegOp $v), (replaceWithValue $v), [], [(Foo $v)]>;
class Helper<string s> : NativeCodeCall<s>;
def Other : SomethingElse<1>;"""
    report = import_drr(text, "snippet.td")
    assert not report.rules
    reasons = {s.name: s.reasons[0] for s in report.skipped}
    assert "location" in reasons["Loc"]
    assert 'NativeCodeCall<"make($0)">' in reasons["Inline"]
    assert "TFL_NegOp" in reasons["NotOp"]
    assert "supplemental" in reasons["Supp"]
    assert any("statement not read: class Helper" in n for n in report.notes)
    assert any("SomethingElse ignored" in n for n in report.notes)


def test_variadic_directive_and_groups() -> None:
    r = _one("def V : Pat<(TF_ConcatV2Op (variadic $a, $b), $axis), (TF_AddNOp $a)>;")
    assert r.root.operands[0] == (Var("a"), Var("b"))


def test_imported_rules_run() -> None:
    report = import_drr("""
def SqrtDiv : Pat<(TF_RealDivOp $n, (TF_SqrtOp $d)), (TF_MulOp $n, (TF_RsqrtOp $d))>;""", "snippet.td")
    m = parse("""
    func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = "tf.Sqrt"(%b) : (tensor<2xf32>) -> tensor<2xf32>
      %1 = "tf.RealDiv"(%a, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      return %1 : tensor<2xf32>
    }""")
    assert apply_rules_greedily(m, report.rules).rewrites == {"SqrtDiv": 1}
    assert '"tf.Rsqrt"' in print_ir(m) and '"tf.RealDiv"' not in print_ir(m)


def test_tablegen_reader_values() -> None:
    doc = parse_tablegen('include "x.td"\ndef : Pat<(A:$r $x, B<1, "s">:$y, [{ code }]), (C 0x10)>;')
    assert doc.includes == ["x.td"]
    (d,) = doc.defs
    assert d.name is None and d.cls == "Pat" and d.line == 2
    src = d.args[0]
    assert src.name == "r" and [a.name for a in src.args] == ["x", "y", None]
