func.func @f(%a: i32, %c: i1) -> i32 {
  %0 = arith.addi %a, %a : i32
  %z = arith.subi %a, %a : i32
  cf.cond_br %c, ^bb1(%z : i32), ^bb2
^bb1(%x: i32):
  %1 = arith.addi %0, %x : i32
  %2 = arith.subi %1, %1 : i32
  %3 = arith.addi %0, %2 : i32
  cf.br ^bb3(%3 : i32)
^bb2:
  %4 = arith.addi %a, %a : i32
  %5 = arith.muli %4, %0 : i32
  cf.br ^bb3(%5 : i32)
^bb3(%r: i32):
  return %r : i32
}
