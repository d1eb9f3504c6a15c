// RUN: not egraft-opt %s -pass-pipeline='builtin.module(func.func(cse)' 2>&1 | filecheck %s --check-prefix=UNBALANCED
// RUN: not egraft-opt %s -pass-pipeline='builtin.module(nope)' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not egraft-opt %s -no-such-flag 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not egraft-opt %s -pass-pipeline='func.func(cse)' 2>&1 | filecheck %s --check-prefix=ANCHOR
// RUN: not egraft-opt %s -pass-pipeline='func.func(cse),symbol-dce' 2>&1 | filecheck %s --check-prefix=WRAP
// RUN: egraft-opt %s -pass-pipeline='func(cse),symbol-dce' | filecheck %s --check-prefix=LEGACY
// RUN: not egraft-opt %s -pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=-5}))' 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not egraft-opt %s -canonicalize='driver=egrahp' 2>&1 | filecheck %s --check-prefix=CHOICE
// RUN: not egraft-opt %s -eqsat='timeout=nan' 2>&1 | filecheck %s --check-prefix=NAN
// RUN: egraft-opt --version | filecheck %s --check-prefix=VERSION

// UNBALANCED: <pipeline>:1:30: error: encountered unbalanced parentheses while parsing pipeline
// UNBALANCED-NEXT: builtin.module(func.func(cse)
// UNBALANCED-NEXT: {{^}}                             ^
// UNKNOWN: <pipeline>:1:16: error: 'nope' does not refer to a registered pass or pass pipeline
// FLAG: egraft-opt: Unknown command line argument '-no-such-flag'

// Today's mlir-opt: `op(...)` is the pass manager of the top-level op, anchored on it.
// ANCHOR: error: can't run 'func.func' pass manager on 'builtin.module' op
// WRAP: <pipeline>:1:1: error: expected pass pipeline to be wrapped with the anchor operation type, e.g. 'builtin.module(...)'
// The 2019 spelling keeps its 2019 meaning (nested in the module).
// LEGACY: func.func @f()

// Options declare their valid values.
// RANGE: <pipeline>:1:39: error: '-5' value invalid for integer argument 'max-iterations' (valid: >= 1)
// CHOICE: <-canonicalize>:1:14: error: for the 'driver' option: Cannot find option named 'egrahp'! (valid: egraph, greedy)
// NAN: error: 'nan' value invalid for floating point argument 'timeout' (valid: >= 0)
// VERSION: egraft-opt (egraft) version {{[0-9]+\.[0-9]+}}

func.func @f() {
  return
}
