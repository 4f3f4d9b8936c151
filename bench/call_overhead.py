"""Per-call overhead of a jit function: the launch rows of bench/kernels.py
alone (fast path on and off, kernel.run, torch, numpy), and the cost of
PyPTO's way of passing tensors, pypto.from_torch, measured interleaved in
one run.

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/call_overhead.py [--reps=N]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (fixes thread counts before numpy and torch start)

import pypto  # noqa: E402
import torch  # noqa: E402


def from_torch_rows(reps, warmup):
    """One 8x8 add called with torch tensors, with from_torch wrappers made
    once, and with wrappers made in every call (as PyPTO examples do), and
    from_torch alone."""
    x, y = kernels.rand((8, 8), seed=13), kernels.rand((8, 8), seed=14)
    tx, ty, to = torch.from_numpy(x), torch.from_numpy(y), torch.empty(8, 8)
    k = kernels.k_add((8, 8))
    fx, fy, fo = pypto.from_torch(tx), pypto.from_torch(ty), pypto.from_torch(to)
    k(tx, ty, to)
    k(fx, fy, fo)
    wrap = pypto.from_torch
    t_torch, t_pre, t_each, t_wrap = kernels.interleaved_medians(
        [lambda: k(tx, ty, to), lambda: k(fx, fy, fo),
         lambda: k(wrap(tx), wrap(ty), wrap(to)), lambda: wrap(tx)], reps * 20, warmup)
    us = kernels.fmt_us
    return [
        f"| launch: add 8x8, torch tensors | 1 | {us(t_torch)} | |",
        f"| launch: add 8x8, from_torch wrappers made once | 1 | {us(t_pre)} | "
        f"{us(t_pre - t_torch)} over torch tensors (same fast path) |",
        f"| launch: add 8x8, from_torch(t) x3 in each call | 1 | {us(t_each)} | "
        f"from_torch alone {us(t_wrap)} |",
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50, help="timed calls per row, x 20")
    parser.add_argument("--warmup", type=int, default=5)
    opts = parser.parse_args()
    print("| what | tasks | median time | notes |")
    print("|---|---|---|---|")
    for row in kernels.launch_rows(opts.reps, opts.warmup) + from_torch_rows(opts.reps,
                                                                             opts.warmup):
        print(row)


if __name__ == "__main__":
    main()
