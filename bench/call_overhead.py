"""Per-call overhead of a jit function: the launch rows of bench/kernels.py
alone (fast path on and off, kernel.run, torch, numpy), measured interleaved
in one run.

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/call_overhead.py [--reps=N]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (fixes thread counts before numpy and torch start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50, help="timed calls per row, x 20")
    parser.add_argument("--warmup", type=int, default=5)
    opts = parser.parse_args()
    print("| what | tasks | median time | notes |")
    print("|---|---|---|---|")
    for row in kernels.launch_rows(opts.reps, opts.warmup):
        print(row)


if __name__ == "__main__":
    main()
