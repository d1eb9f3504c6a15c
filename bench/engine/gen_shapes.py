"""Generated chain-shaped functions for the e-graph write-back and depth stress tests of issue #9.

Two shapes, both in generic form (egraft, xDSL and MLIR parse them), both seeded so that one
``(shape, n, seed)`` always gives the same bytes:

* ``tf-chain``: a chain of ``tf.AddV2`` / ``tf.Mul`` / ``tf.Sub`` on ``tensor<4xf32>`` in which
  each op's first operand is the previous result (so the dependency depth is ~n), its second
  the argument, a recent value or a shared ``tf.Const``; a few ``tf.Const``, ``tf.Neg``,
  ``tf.Identity`` and ``tf.Relu`` mixed in. Nothing folds away wholesale, so the write-back
  materialises a value chain ~n deep: the input that made the recursive write-back overflow
  the Python stack at 2,000 ops.
* ``sub-chain``: an i32 chain where each op is ``addi``/``muli``/``subi`` of the previous value
  with itself, and about one op in ten is ``subi %x, %x``. Every ``x - x`` is 0, and everything
  after the first one is 0 too (``0 + 0``, ``0 * 0``), so ``canonicalize`` drops nearly every op
  without any constant reassociation to saturate: the input that measures what dropping n ops
  costs the write-back.

Run: python bench/engine/gen_shapes.py {tf-chain,sub-chain} N [--seed S] [-o PATH]
"""

from __future__ import annotations

import argparse
import random
import sys

_T = "tensor<4xf32>"
_TF_BIN = '    %{r} = "tf.{op}"(%{a}, %{b}) : ({t}, {t}) -> {t}'
_TF_UN = '    %{r} = "tf.{op}"(%{a}) : ({t}) -> {t}'
_TF_CONST = '    %{r} = "tf.Const"() <{{value = dense<{v}> : {t}}}> : () -> {t}'
_I32_BIN = '    %{r} = "arith.{op}"(%{a}, %{b}) <{{overflowFlags = #arith.overflow<none>}}> : (i32, i32) -> i32'


def _function(name: str, arg_type: str, body: list[str], rets: list[str], ret_type: str) -> str:
    types = ", ".join([ret_type] * len(rets))
    return ('"builtin.module"() ({\n  "func.func"() <{function_type = (' + arg_type + ") -> (" + types
            + '), sym_name = "' + name + '"}> ({\n  ^bb0(%arg: ' + arg_type + "):\n" + "\n".join(body)
            + '\n    "func.return"(' + ", ".join(f"%{v}" for v in rets) + ") : (" + types
            + ") -> ()\n  }) : () -> ()\n}) : () -> ()\n")


def tf_chain(n: int, seed: int = 0) -> str:
    """``n`` tf ops (constants included) in one function of ``tensor<4xf32>``, ~n deep."""
    rng = random.Random(seed)
    body = [_TF_CONST.format(r="c0", v="1.500000e+00", t=_T)]
    consts, values = ["c0"], ["arg"]
    for k in range(n - 1):
        r, prev, draw = f"v{k}", values[-1], rng.random()
        if draw < 0.04:
            body.append(_TF_CONST.format(r=r, v=f"{rng.randrange(1, 8)}.000000e+00", t=_T))
            consts.append(r)
            continue
        if draw < 0.12:
            body.append(_TF_UN.format(r=r, op=rng.choice(("Neg", "Identity", "Relu")), a=prev, t=_T))
        else:
            pick = rng.random()
            b = (rng.choice(consts) if pick < 0.4 else "arg" if pick < 0.5
                 else rng.choice(values[-16:]))
            body.append(_TF_BIN.format(r=r, op=rng.choice(("AddV2", "Mul", "Sub")), a=prev, b=b, t=_T))
        values.append(r)
    return _function("tf_chain", _T, body, [values[-1]], _T)


def sub_chain(n: int, seed: int = 0, every: int = 10) -> str:
    """``n`` i32 ops where ~1 in ``every`` is ``x - x``; all but the head folds to 0."""
    rng = random.Random(seed)
    body: list[str] = []
    values = ["arg"]
    for k in range(n):
        r, prev = f"v{k}", values[-1]
        op = "subi" if rng.randrange(every) == 0 else rng.choice(("addi", "muli"))
        body.append(_I32_BIN.format(r=r, op=op, a=prev, b=prev))
        values.append(r)
    return _function("sub_chain", "i32", body, [values[-1]], "i32")


SHAPES = {"tf-chain": tf_chain, "sub-chain": sub_chain}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", type=argparse.FileType("w", encoding="utf-8"), default=sys.stdout)
    args = ap.parse_args(argv)
    with args.output:
        args.output.write(SHAPES[args.shape](args.n, args.seed))


if __name__ == "__main__":
    main()
