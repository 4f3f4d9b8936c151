"""BF16 matmuls, pypto against torch, by process CPU time on one thread each.

    tools/pypto-python bench/matmul_cpu_time.py [--sizes=512,1024] [--blocks=21] [--wall]

On a machine other processes load, wall times measure the load; the CPU time
a call takes does not count the time others ran. pypto runs on one cube and
one vector worker (PTO_CUBE_WORKERS=1, PTO_VECTOR_WORKERS=1), torch and the
BLAS on one thread. A call with one cube worker still splits its tiles over
two threads, the caller and the worker (the executor's root claimers), so
pypto is timed twice: on one thread (the bench-only executor policy
kCallerRunsCubeRoots: the caller runs every tile) and as it runs by default
(caller and worker; their CPU time added, the worker's wake-up and spins in
it). Calls go in blocks of 5, the three in turn,
after warm-up calls; the process's CPU time is read around a block, each read
after a 3 ms sleep (an idle worker's CPU time is only accounted once it has
stopped). Per size: medians and best of the per-call times, GFLOP/s, torch's
time over pypto's, and each result's worst error over sum |a*b| against a
float64 product of the same bf16 inputs. --wall: two threads each and wall
time instead (indicative only where the machine is loaded). The kernel is
bench/kernels.py's BF16 matmul row (its cube tile); the BF16 dot-product peak
to compare with is bench/cube_probe_bf16's (one thread, CPU time) or
bench/ceilings' (threads, wall time).
"""

import argparse
import os
import sys

WALL = "--wall" in sys.argv
THREADS = 2 if WALL else 1
for _var in ("PTO_VECTOR_WORKERS", "PTO_CUBE_WORKERS", "OMP_NUM_THREADS",
             "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)

import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

import kernels  # noqa: E402  (bench/, beside this script)
from pypto import _native  # noqa: E402

CALLER_RUNS_CUBE_ROOTS = 64  # runtime/executor.h, Executor::kCallerRunsCubeRoots

BLOCK = 5  # calls per timed block


def sizes(text):
    try:
        values = [int(s) for s in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"--sizes: want positive integers, got {text!r}")
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=sizes, default=[512, 1024], help="M = K = N, comma separated")
    parser.add_argument("--blocks", type=int, default=21, help="timed blocks per side")
    parser.add_argument("--wall", action="store_true", help="two threads, wall time")
    opts = parser.parse_args()
    if opts.blocks < 1:
        parser.error(f"--blocks must be >= 1, got {opts.blocks}")
    torch.set_num_threads(THREADS)
    clock = time.perf_counter if opts.wall else time.process_time
    big_cube = ([128, 128], [64, 256], [128, 128])  # bench/kernels.py's
    print(f"bf16 matmul, {THREADS} thread(s) each, "
          f"{'wall' if opts.wall else 'process CPU'} time, {opts.blocks} blocks of {BLOCK} calls")
    for n in opts.sizes:
        kern = kernels.k_matmul(kernels.BF16, big_cube)
        a32, b32 = kernels.rand((n, n), seed=9), kernels.rand((n, n), seed=10)
        ta, tb = torch.from_numpy(a32).to(torch.bfloat16), torch.from_numpy(b32).to(torch.bfloat16)
        out = torch.empty((n, n), dtype=torch.bfloat16)
        t_out = torch.empty((n, n), dtype=torch.bfloat16)
        for _ in range(3):
            kern(ta, tb, out)
            torch.matmul(ta, tb, out=t_out)
        ref = ta.double() @ tb.double()
        scale = ta.double().abs() @ tb.double().abs()

        def err(x):
            return ((x.double() - ref).abs() / scale).max().item()

        def block(fn):
            time.sleep(0.003)
            t0 = clock()
            for _ in range(BLOCK):
                fn()
            if not opts.wall:
                time.sleep(0.003)
            return (clock() - t0) / BLOCK

        default_policy = _native.executor_policy()
        one_policy = default_policy | CALLER_RUNS_CUBE_ROOTS

        def pypto_on(policy):
            _native.set_executor_policy(policy)
            try:
                return block(lambda: kern(ta, tb, out))
            finally:
                _native.set_executor_policy(default_policy)

        tp, ts, tt = [], [], []
        for _ in range(opts.blocks):
            if not opts.wall:
                tp.append(pypto_on(one_policy))
            ts.append(pypto_on(default_policy))
            tt.append(block(lambda: torch.matmul(ta, tb, out=t_out)))
        flops = 2.0 * n ** 3
        mt = statistics.median(tt)
        rows = [("pypto, default split", ts)]
        if not opts.wall:
            rows.insert(0, ("pypto, one thread", tp))
        for name, t in rows:
            m = statistics.median(t)
            print(f"  {n}^3 {name}: {m * 1e6:.0f} us, {flops / m / 1e9:.1f} GFLOP/s "
                  f"(best {flops / min(t) / 1e9:.1f}); torch/pypto {mt / m:.2f}x "
                  f"(best/best {min(tt) / min(t):.2f}x)")
        print(f"  {n}^3 torch: {mt * 1e6:.0f} us, {flops / mt / 1e9:.1f} GFLOP/s "
              f"(best {flops / min(tt) / 1e9:.1f}); "
              f"worst error / sum |a*b|: pypto {err(out):.1e}, torch {err(t_out):.1e}")


if __name__ == "__main__":
    main()
