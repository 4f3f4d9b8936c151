"""The loop softmax (examples/loop_softmax.py) at batch 4096 x (32, 1, 256) against torch, and the
launch overhead of a dynamic kernel with a loop.

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/loop_softmax.py [--reps=N] [--batch=4096]

Rows (median of --reps calls, the kernels interleaved so load hits them
alike; compiles happen before timing):
  - loop: the example's kernel, pypto.loop over a DYNAMIC batch, one view and
    one assembled softmax per index (compiled once for every batch size);
  - whole: the same softmax as one op over the whole DYNAMIC batch (no
    loop; what the loop form should approach);
  - static: the whole-batch softmax compiled for this batch size only;
  - torch: torch.softmax(x, -1) on the same thread budget.
At batch 1 the run time is the launch overhead (call to first task and back):
the loop kernel's against the static kernel's, as a ratio.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (fixes thread counts before numpy and torch start)

import torch  # noqa: E402

import pypto  # noqa: E402

F32 = pypto.DT_FP32


@pypto.frontend.jit
def loop_softmax(inp: pypto.Tensor([pypto.DYNAMIC, ...], F32),
                 out: pypto.Tensor([pypto.DYNAMIC, ...], F32)):
    bs, seqlen, head, dim = inp.shape
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    for idx in pypto.loop(0, bs, 1, name="LOOP_B", idx_name="idx"):
        x = inp[idx:idx + 1, :seqlen, :head, :dim]
        m = pypto.amax(x, dim=-1, keepdim=True)
        e = pypto.exp(x - m)
        out[idx:, ...] = e / pypto.sum(e, dim=-1, keepdim=True)


@pypto.frontend.jit
def whole_softmax(inp: pypto.Tensor([pypto.DYNAMIC, ...], F32),
                  out: pypto.Tensor([pypto.DYNAMIC, ...], F32)):
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    m = pypto.amax(inp, dim=-1, keepdim=True)
    e = pypto.exp(inp - m)
    out[:] = e / pypto.sum(e, dim=-1, keepdim=True)


@pypto.frontend.jit
def static_softmax(inp: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    m = pypto.amax(inp, dim=-1, keepdim=True)
    e = pypto.exp(inp - m)
    out[:] = e / pypto.sum(e, dim=-1, keepdim=True)


def torch_softmax(inp, out):
    torch.softmax(inp, -1, out=out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4096)
    opts = parser.parse_args()
    fns = {"loop": loop_softmax, "whole": whole_softmax, "static": static_softmax,
           "torch": torch_softmax}
    small = torch.randn(3, 32, 1, 256)
    for fn in fns.values():  # compile (the static kernel: for this size only)
        fn(small, torch.empty_like(small))
    print("| batch | kernel | first call at this size | median time | vs torch | vs static |")
    print("|---|---|---|---|---|---|")
    for bs in (opts.batch, 1):
        x = torch.randn(bs, 32, 1, 256)
        want = torch.softmax(x, -1)
        first = {}
        for name, fn in fns.items():
            out = torch.empty_like(x)
            start = time.perf_counter()
            fn(x, out)  # loop/whole: binds bs, expands the plan (no compile)
            first[name] = time.perf_counter() - start
            torch.testing.assert_close(out, want)
        out = torch.empty_like(x)
        t = kernels.median_times(fns, (x, out), opts.reps, opts.warmup)
        for name in fns:
            f = "compile + run" if name == "static" else f"{first[name] * 1e3:.2f} ms"
            print(f"| {bs} | {name} | {f} | {t[name] * 1e3:.3f} ms | "
                  f"{t[name] / t['torch']:.2f}x | {t[name] / t['static']:.2f}x |")
    print(f"\ncompiles: {pypto.compile_stats()}")


if __name__ == "__main__":
    main()
