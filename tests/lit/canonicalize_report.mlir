// Reports and budgets of canonicalize's two drivers (report=true emits what the
// driver did as a remark on the op it ran on), and its errors.

// RUN: egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{report=true}))' 2>&1 \
// RUN:   | filecheck %s --check-prefix=SAT
// RUN: egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{report=true egraph-iterations=1}))' 2>&1 \
// RUN:   | filecheck %s --check-prefix=ITER
// RUN: egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{report=true max-enodes=5}))' 2>&1 \
// RUN:   | filecheck %s --check-prefix=ENODES
// RUN: egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{report=true timeout=0.000001}))' 2>&1 \
// RUN:   | filecheck %s --check-prefix=TIME
// RUN: egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{driver=greedy report=true}))' 2>&1 \
// RUN:   | filecheck %s --check-prefix=GREEDY
// RUN: egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{driver=greedy report=true max-iterations=1}))' 2>&1 \
// RUN:   | filecheck %s --check-prefix=GREEDY1
// RUN: not egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{egraph-iterations=1 test-convergence=true}))' 2>&1 \
// RUN:   | filecheck %s --check-prefix=CONV
// RUN: not egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{rules=arith-canonical,nope}))' 2>&1 \
// RUN:   | filecheck %s --check-prefix=UNKNOWN

// Saturated: ((x + 1) + 1) + 1) + 1 reassociates to x + 4, one addi and one constant
// left of the six ops.
// SAT:         [[# @LINE + 34]]:1: remark: canonicalize (egraph): 6 ops, {{[0-9]+}} e-nodes, stop=saturated,
// SAT:         func.func @chain(%arg0: i32)
// SAT-NEXT:      %[[C4:.*]] = arith.constant 4 : i32
// SAT-NEXT:      %[[R:.*]] = arith.addi %arg0, %[[C4]] : i32
// SAT-NEXT:      return %[[R]] : i32

// A budget that stops saturation is named by its option.
// ITER:        remark: canonicalize (egraph): 6 ops, {{.*}} stop=iterations (budget egraph-iterations=1), iterations=1,
// ITER:        func.func @chain(%arg0: i32)

// The e-graph of the input is over 5 e-nodes before any rule runs: nothing is
// rewritten, and every op is written back as it was.
// ENODES:      remark: canonicalize (egraph): 6 ops, {{.*}} stop=enodes (budget max-enodes=5), iterations=0, reused 6, new 0, dropped 0,
// ENODES-COUNT-4: arith.addi

// No step fits in a microsecond: the input stays as it was, and the report says so.
// TIME:        remark: canonicalize (egraph): {{.*}} stop=seconds (budget timeout=1e-06 s), nothing written back
// TIME-COUNT-4: arith.addi

// The greedy driver: three rewrites (each addi folds its constant into the next), and a
// second scan that changes nothing; with one scan allowed it cannot know it converged.
// GREEDY:      remark: converged (converged) after 2 iteration(s): 3 rewrite(s),
// GREEDY:        %[[C4:.*]] = arith.constant 4 : i32
// GREEDY-NEXT:   %[[R:.*]] = arith.addi %arg0, %[[C4]] : i32
// GREEDY-NEXT:   return %[[R]] : i32
// GREEDY1:     remark: did not converge (max-iterations) after 1 iteration(s):

// test-convergence turns a budget's stop into an error.
// CONV:        [[# @LINE + 6]]:1: error: canonicalize did not converge: canonicalize (egraph): {{.*}}stop=iterations (budget egraph-iterations=1)

// An unknown rule set is an error that lists the known ones.
// UNKNOWN:     [[# @LINE + 3]]:1: error: unknown rule set 'nope' (known: {{.*}}arith-canonical, {{.*}}tf-canonical
// UNKNOWN-NOT: module

func.func @chain(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %a, %c1 : i32
  %1 = arith.addi %0, %c1 : i32
  %2 = arith.addi %1, %c1 : i32
  %3 = arith.addi %2, %c1 : i32
  return %3 : i32
}
