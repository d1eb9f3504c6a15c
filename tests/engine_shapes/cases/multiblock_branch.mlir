func.func @f(%a: i32, %c: i1) -> i32 {
  %0 = arith.addi %a, %a : i32
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  return %0 : i32
^bb2:
  return %a : i32
}
