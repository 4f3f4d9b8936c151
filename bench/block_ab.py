#!/usr/bin/env python3
"""Interleaved A/B timing of generated block code on one thread.

    g++ -O2 -std=c++17 -o /tmp/block_harness bench/block_harness.cc -ldl
    bench/block_ab.py --harness=/tmp/block_harness --rounds=10 \\
        --shape="4096 1024 4 1024 4 2 10" before/softmax.so after/softmax.so

    bench/block_ab.py --harness=/tmp/block_harness --shape="..." [--target=host] a.cc b.cc

Each round runs bench/block_harness.cc once per payload, in turn (so a load
spike hits every variant alike); --shape is the harness's arguments after the
payload (ROWS COLS TILE_ROWS TILE_COLS ELEM_BYTES BUFFERS REPS). Prints, per
payload, the best time over all rounds, the median of the rounds' medians and
every round's best. Payloads are kernels the host target generated (ptoc
--print=cpp) or hand edits of them: shared objects built already, or C++
sources (.cc), which this builds first as the compiler builds them for
--target (bench/host_build.py: default "host" as the compiler resolves it,
PTO_HOST_TARGET too; its -march and extensions from bench/host_flags, -O2,
-ffp-contract=off -fno-math-errno -shared -fPIC -lmvec).
bench/block_bitcmp.cc checks that two give the same bits. This is how
docs/bench/kernels-2026-12-01-s4.md's one-thread numbers were taken.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import host_build


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harness", required=True, help="the built bench/block_harness.cc")
    parser.add_argument("--shape", required=True, help="harness arguments after the payload")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--target", default="host",
                        help="what .cc payloads are built for (default: host, as the compiler "
                             "resolves it: PTO_HOST_TARGET overrides)")
    parser.add_argument("--host-flags", default=host_build.HOST_FLAGS,
                        help="bench/host_flags (bazel build //bench:host_flags)")
    parser.add_argument("payloads", nargs="+", help="shared objects, or .cc sources to build")
    opts = parser.parse_args()
    work = tempfile.mkdtemp(prefix="pto-block-ab-")
    try:
        built = build_sources(opts, parser, work)
        return time_payloads(opts, built)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_sources(opts, parser, work):
    """{payload as given: shared object to load}, building the .cc ones."""
    sources = [p for p in opts.payloads if p.endswith(".cc")]
    built = {p: p for p in opts.payloads}
    if not sources:
        return built
    try:
        target, isa = host_build.target_flags(opts.target, opts.host_flags)
    except RuntimeError as e:
        parser.error(str(e))
    flags = [host_build.OPT_LEVEL] + isa
    print(f"building {len(sources)} source(s) for {target}: {' '.join(flags)}", file=sys.stderr)
    for i, p in enumerate(sources):
        with open(p) as f:
            built[p] = host_build.build(f.read(), os.path.join(work, str(i)), flags)
    return built


def time_payloads(opts, built):
    times = {p: [] for p in opts.payloads}
    for _ in range(opts.rounds):
        for p in opts.payloads:
            so = built[p]
            path = so if os.sep in so else os.path.join(".", so)  # dlopen needs a path
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
