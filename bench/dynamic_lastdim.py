"""Softmax over a DYNAMIC last dim (a fused row group when the row
fits its cap, else the accumulating form) against static kernels at the same
size.

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/dynamic_lastdim.py [--rows=1024] [--cols=1024] [--reps=N]

Rows (median of --reps calls, kernels interleaved; compiles before timing):
  - dyn_cols: [rows, DYNAMIC] softmax, tile [4, 256] (compiled once for
    every size): up to 1024 columns (the cap for tiles of 4 rows with a
    192 KiB UB) one fused row group, one task per 4 rows running the row
    code with the length from its args; longer rows the accumulating form (max, exp and sum groups of
    their own, each reduction folding its tiles along the row in order);
  - static_t256: the same kernel and tile compiled for this size (partial +
    combine reductions: the static form of the same tiling);
  - static_row: the static kernel with tile [4, cols] (fused rows: the fast
    static form, one pass per row);
  - dyn_rows: [DYNAMIC, cols] softmax, tile [4, cols] (a dynamic batch: full
    tiles run the static block function, tails the generic one);
  - torch: torch.softmax(x, -1).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (fixes thread counts before numpy and torch start)

import torch  # noqa: E402

import pypto  # noqa: E402

F32 = pypto.DT_FP32


def make(shape, tile):
    @pypto.jit
    def softmax(x: pypto.Tensor(shape, F32), out: pypto.Tensor(shape, F32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.softmax(x, -1)
    return softmax


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--cols", type=int, default=1024)
    opts = parser.parse_args()
    r, c = opts.rows, opts.cols
    fns = {
        "dyn_cols": make([r, pypto.DYNAMIC], (4, 256)),
        "static_t256": make([r, c], (4, 256)),
        "static_row": make([r, c], (4, c)),
        "dyn_rows": make([pypto.DYNAMIC, c], (4, c)),
        "torch": lambda x, out: torch.softmax(x, -1, out=out),
    }
    x = torch.randn(r, c) * 3
    want = torch.softmax(x.double(), -1).float()
    for name, fn in fns.items():
        out = torch.empty_like(x)
        fn(x, out)  # compile and expand
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-6)
    out = torch.empty_like(x)
    t = kernels.median_times(fns, (x, out), opts.reps, opts.warmup)
    print(f"softmax {r}x{c}, load {os.getloadavg()[0]:.1f}")
    print("| kernel | median time | vs static_t256 | vs static_row | vs torch |")
    print("|---|---|---|---|---|")
    for name in fns:
        print(f"| {name} | {t[name] * 1e3:.3f} ms | {t[name] / t['static_t256']:.2f}x | "
              f"{t[name] / t['static_row']:.2f}x | {t[name] / t['torch']:.2f}x |")
    print(f"\ncompiles: {pypto.compile_stats()['compiles']}")


if __name__ == "__main__":
    main()
