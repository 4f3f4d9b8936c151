"""examples/heads_loop.py's attention over a [seq, heads * head_dim] layout,
one head per iteration: as pypto.loop (the body compiled once, the heads run
by the runtime) against the same kernel unrolled in Python (one copy of the
body per head in the graph), and torch.

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/heads_loop.py [--reps=N] [--heads=8] [--seqs=256,1024]

Rows, per sequence length:
  - compile: the first call of each kernel with the disk cache off (trace,
    compile, load, run once): what a loop saves in compile time;
  - run: median of --reps calls, the kernels interleaved so load hits them
    alike; torch: the same attention as torch ops on the same threads.
"""

import argparse
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402,F401  (fixes thread counts before numpy and torch start)

import torch  # noqa: E402

os.environ["PYPTO_DISK_CACHE"] = "0"  # compile times are the point
import pypto  # noqa: E402

F32 = pypto.DT_FP32
HEAD_DIM = 64


def make(heads, use_loop):
    @pypto.jit
    def mha(q: pypto.Tensor([], F32), k: pypto.Tensor([], F32), v: pypto.Tensor([], F32),
            out: pypto.Tensor([], F32)):
        seq = q.shape[0]
        pypto.set_cube_tile_shapes([64, 128], [64, 128], [64, 128])
        rng = pypto.loop(heads, name="HEADS", idx_name="h") if use_loop else range(heads)
        for h in rng:
            cols = slice(h * HEAD_DIM, (h + 1) * HEAD_DIM)
            pypto.set_vec_tile_shapes(16, HEAD_DIM)
            s = pypto.matmul(q[:, cols], k[:, cols], F32, b_trans=True)
            pypto.set_vec_tile_shapes(16, seq)
            p = pypto.softmax(s * (1 / math.sqrt(HEAD_DIM)), dim=-1)
            out[:, cols] = pypto.matmul(p, v[:, cols], F32)
    return mha


def torch_mha(q, k, v, heads):
    seq = q.shape[0]
    split = lambda t: t.reshape(seq, heads, HEAD_DIM).transpose(0, 1)  # noqa: E731
    p = torch.softmax(split(q) @ split(k).transpose(1, 2) / math.sqrt(HEAD_DIM), dim=-1)
    return (p @ split(v)).transpose(0, 1).reshape(seq, heads * HEAD_DIM)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--seqs", default="256,1024")
    args = parser.parse_args()
    print(f"| seq | heads | compile loop (s) | compile unrolled (s) | run loop (ms) | "
          f"run unrolled (ms) | loop/unrolled | torch (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    for seq in (int(s) for s in args.seqs.split(",")):
        torch.manual_seed(seq)
        q, k, v = (torch.randn(seq, args.heads * HEAD_DIM) for _ in range(3))
        fns = {"loop": make(args.heads, True), "unrolled": make(args.heads, False)}
        compile_s, outs = {}, {}
        for name, fn in fns.items():
            outs[name] = torch.empty(seq, args.heads * HEAD_DIM)
            t = time.perf_counter()
            fn(q, k, v, outs[name])
            compile_s[name] = time.perf_counter() - t
        want = torch_mha(q, k, v, args.heads)
        for name in fns:
            torch.testing.assert_close(outs[name], want, rtol=1e-4, atol=1e-4)
        times = {name: [] for name in list(fns) + ["torch"]}
        for _ in range(args.reps):
            for name, fn in fns.items():
                t = time.perf_counter()
                fn(q, k, v, outs[name])
                times[name].append(time.perf_counter() - t)
            t = time.perf_counter()
            torch_mha(q, k, v, args.heads)
            times["torch"].append(time.perf_counter() - t)
        ms = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
        print(f"| {seq} | {args.heads} | {compile_s['loop']:.2f} | {compile_s['unrolled']:.2f} | "
              f"{ms['loop']:.2f} | {ms['unrolled']:.2f} | {ms['loop'] / ms['unrolled']:.2f} | "
              f"{ms['torch']:.2f} |")


if __name__ == "__main__":
    main()
