#!/usr/bin/env python3
"""FP16 composites and dynamic numbers: this session's forms against the old
ones, interleaved in one process.

    tools/pypto-python bench/half_ab.py [--rounds=21] [--calls=10] [--only=SUBSTR]

- softmax and rms_norm on FP16: "new" is pypto's (cast to FP32, the FP32
  expansion, one cast back: within 1 ulp of float64), "old" the per-op FP16
  expansion pypto recorded before (amax, sub, exp, sum, div; sum of squares,
  muls, adds, rsqrt, muls by gamma, each rounded to FP16).
- FP16 x * n with n a DYNAMIC size, n rounded to FP16 at launch: "new" is
  pypto's (a scalar operand the kernel rounds), "old" the one-element tensor
  of n that session 8 recorded instead (filled at launch by a small group of
  its own, then loaded broadcast).

Each round times --calls calls of each form in turn (the order alternating),
and prints per case the median and best of the rounds' medians and the
median of the per-round new/old ratios, with the load average.
"""

import argparse
import os
import time

import numpy as np

import pypto
from pypto import ops

T16 = pypto.Tensor([], pypto.DT_FP16)


def old_softmax(x):
    m = pypto.amax(x, -1, keepdim=True)
    e = pypto.exp(x - m)
    return e / pypto.sum(e, -1, keepdim=True)


def old_rms_norm(x, g):
    sq = pypto.sum(x * x, -1, keepdim=True)
    ms = ops._binary("mul", sq, 1.0 / x.shape[-1], exact_number=True)
    return x * pypto.rsqrt(ops._binary("add", ms, 1e-6, exact_number=True)) * g


def unary_kernel(fn, tile):
    @pypto.jit
    def k(a: T16, out: T16):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = fn(a)
    return k


def gamma_kernel(fn, tile):
    @pypto.jit
    def k(a: T16, g: T16, out: T16):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = fn(a, g)
    return k


def times_n_kernel(one_element_tensor, rows):
    D16 = pypto.Tensor([rows, pypto.DYNAMIC], pypto.DT_FP16)

    @pypto.jit
    def k(a: D16, out: D16):
        pypto.set_vec_tile_shapes(4, 1024)
        n = a.shape[-1]
        out[:] = a * pypto.full([1, 1], n, pypto.DT_FP16) if one_element_tensor else a * n
    return k


def cases():
    rng = np.random.default_rng(0)
    for shape, tile in (((4096, 1024), (4, 1024)), ((1024, 256), (32, 256))):
        x = rng.uniform(-5, 5, shape).astype(np.float16)
        g = rng.uniform(-2, 2, shape[-1:]).astype(np.float16)
        label = f"{shape[0]}x{shape[1]} in {tile[0]}x{tile[1]}"
        yield (f"softmax {label}", unary_kernel(old_softmax, tile),
               unary_kernel(lambda v: pypto.softmax(v, -1), tile), (x, np.empty_like(x)))
        yield (f"rms_norm {label}", gamma_kernel(old_rms_norm, tile),
               gamma_kernel(pypto.rms_norm, tile), (x, g, np.empty_like(x)))
    for rows, cols in ((16, 4096), (1024, 1024)):
        x = rng.uniform(-5, 5, (rows, cols)).astype(np.float16)
        yield (f"x * n {rows}x{cols}", times_n_kernel(True, rows), times_n_kernel(False, rows),
               (x, np.empty_like(x)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--only", default="", help="only the cases whose name contains this")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}")
    print("| case | old median (best) ms | new median (best) ms | new/old per round |")
    print("|---|---|---|---|")
    for name, old, new, arrays in cases():
        if args.only not in name:
            continue
        forms = [("old", old), ("new", new)]
        for _, k in forms:
            for _ in range(5):
                k(*arrays)
        t = {"old": [], "new": []}
        for r in range(args.rounds):
            for label, k in (forms if r % 2 else forms[::-1]):
                calls = []
                for _ in range(args.calls):
                    start = time.perf_counter()
                    k(*arrays)
                    calls.append(time.perf_counter() - start)
                t[label].append(np.median(calls))
        ratio = np.median(np.array(t["new"]) / np.array(t["old"]))
        cell = {k: f"{np.median(v) * 1e3:.3f} ({np.min(v) * 1e3:.3f})" for k, v in t.items()}
        print(f"| {name} | {cell['old']} | {cell['new']} | {ratio:.2f} |")
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
