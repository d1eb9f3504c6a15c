func.func @f(%a: i32) -> i32 {
  %0 = arith.subi %a, %a : i32
  %1 = arith.addi %0, %a : i32
  return %1 : i32
}
