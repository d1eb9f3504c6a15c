// RUN: egraft-opt %s -split-input-file -verify-diagnostics \
// RUN:   -pass-pipeline='builtin.module(func.func(canonicalize{report=true egraph-iterations=2 test-convergence=true}))'

// Nothing to rewrite: saturation ends at once, within the budget, and the report says so.
// expected-remark-re @below {{canonicalize (egraph): 2 ops, {{.*}}stop=saturated}}
func.func @canonical(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  return %0 : i32
}

// -----

// Reassociating four additions of 1 keeps finding new sums (x + 2, x + 3, (x + 1) + 2,
// ...) for more than two iterations: the budget stops saturation, which test-convergence
// turns into an error (after the report).
// expected-remark-re @below {{stop=iterations (budget egraph-iterations=2)}}
// expected-error-re @below {{canonicalize did not converge: {{.*}}stop=iterations (budget egraph-iterations=2)}}
func.func @chain(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %a, %c1 : i32
  %1 = arith.addi %0, %c1 : i32
  %2 = arith.addi %1, %c1 : i32
  %3 = arith.addi %2, %c1 : i32
  return %3 : i32
}
