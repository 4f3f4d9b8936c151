#!/usr/bin/env python3
"""Interleaved A/B timing of generated block code on one thread.

    g++ -O2 -std=c++17 -o /tmp/block_harness bench/block_harness.cc -ldl
    bench/block_ab.py --harness=/tmp/block_harness --rounds=10 \\
        --shape="4096 1024 4 1024 4 2 10" before/softmax.so after/softmax.so

Each round runs bench/block_harness.cc once per payload, in turn (so a load
spike hits every variant alike); --shape is the harness's arguments after the
payload (ROWS COLS TILE_ROWS TILE_COLS ELEM_BYTES BUFFERS REPS). Prints, per
payload, the best time over all rounds, the median of the rounds' medians and
every round's best. Payloads are kernels the host target generated (ptoc
--print=cpp, built as compiler/targets/host builds them: g++ -O2
-march=x86-64-v3 -ffp-contract=off -fno-math-errno -shared -fPIC -lmvec) or
hand edits of them; bench/block_bitcmp.cc checks that two give the same bits.
This is how docs/bench/kernels-2026-12-01-s4.md's one-thread numbers were taken.
"""

import argparse
import os
import statistics
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harness", required=True, help="the built bench/block_harness.cc")
    parser.add_argument("--shape", required=True, help="harness arguments after the payload")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("payloads", nargs="+")
    opts = parser.parse_args()
    times = {p: [] for p in opts.payloads}
    for _ in range(opts.rounds):
        for p in opts.payloads:
            path = p if os.sep in p else os.path.join(".", p)  # dlopen needs a path
            out = subprocess.run([opts.harness, path] + opts.shape.split(), capture_output=True,
                                 text=True, check=True).stdout.split()
            times[p].append((float(out[0]), float(out[1])))
    for p in opts.payloads:
        bests = [t[0] for t in times[p]]
        print(f"{p}: best {min(bests):.3f} ms, median of medians "
              f"{statistics.median(t[1] for t in times[p]):.3f} ms, rounds' best "
              + " ".join(f"{b:.2f}" for b in bests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
