// A small function with common subexpressions: the `cse` startup case.  Only
// builtin/func/arith ops, so xdsl-opt reads it too.
func.func @f(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  %1 = arith.addi %a, %b : i32
  %2 = arith.muli %0, %1 : i32
  %3 = arith.muli %0, %1 : i32
  %4 = arith.subi %2, %3 : i32
  return %4 : i32
}
