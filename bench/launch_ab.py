"""A jit call's launch overhead, before/after: two builds of pypto in
alternating processes, each timing repeat calls of the same kernels through
the jit function and through kernel.run beside them.

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    tools/pypto-python bench/launch_ab.py --tree=before=DIR1 --tree=after=DIR2 [--rounds=6]

A tree is a directory holding client/python/pypto (the package sources) and
bazel-bin/client/python/pypto/_native.so, as a checkout built by Bazel does
(a copy of one is enough); the protobuf modules come from this checkout.
Each round runs one process per tree, in turn (the order alternating per
round), so slow stretches of a shared machine hit both; per tree and row the
table gives the median over rounds of each process's median, and of each
process's jit median less its kernel.run median (the wrapper's cost: on a
loaded machine the kernel's own time moves more than the wrapper's).

Rows: an 8x8 add (one task: the call is nearly all overhead) and softmax
(32,32,1,256) (issue 3's row: 1 MiB in, 1 MiB out) called with numpy arrays
and with torch tensors through the jit function, and kernel.run on the same
arrays (no Python wrapper: the kernel's own time). Two timings per row:
"tight", back-to-back calls (the wrapper's cost alone), and "paused", calls
in blocks of 5 after a 30 ms pause, as bench/kernels.py times its rows.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def child(calls):
    sys.path.insert(0, HERE)
    import kernels  # noqa: E402  (fixes thread counts before numpy and torch start)
    import numpy as np
    import torch

    def rows_for(name, kernel, shape):
        x = kernels.rand(shape, seed=5)
        y = kernels.rand(shape, seed=6)
        out = np.empty_like(x)
        tx, ty, t_out = torch.from_numpy(x.copy()), torch.from_numpy(y), torch.empty(shape)
        binary = name.startswith("add")
        np_args = (x, y, out) if binary else (x, out)
        t_args = (tx, ty, t_out) if binary else (tx, t_out)
        for _ in range(3):
            kernel(*np_args)
            kernel(*t_args)
        run = next(iter(kernel._cache.values())).compiled.kernel.run
        arrays = list(np_args)
        return {f"{name}, jit, numpy": lambda: kernel(*np_args),
                f"{name}, jit, torch": lambda: kernel(*t_args),
                f"{name}, kernel.run": lambda: run(arrays)}

    impls = {}
    impls.update(rows_for("add 8x8", kernels.k_add((8, 8)), (8, 8)))
    impls.update(rows_for("softmax 32x32x1x256", kernels.k_softmax((4, 8, 1, 256)),
                          (32, 32, 1, 256)))
    fns = list(impls.values())
    # Tight: blocks of 100 back-to-back calls per row, rows taking turns.
    tight = [[] for _ in fns]
    for _ in range(max(1, calls // 100)):
        for i, f in enumerate(fns):
            for _ in range(100):
                start = time.perf_counter_ns()
                f()
                tight[i].append(time.perf_counter_ns() - start)
    paused = kernels.interleaved_medians(fns, max(5, calls // 20), 3)
    print(json.dumps({name: [statistics.median(t) / 1e3, p * 1e6]
                      for name, t, p in zip(impls, tight, paused)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[],
                        help="NAME=DIR (two or more, in the table's order)")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=2000,
                        help="tight calls per row and process (paused: calls / 20)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        child(opts.calls)
        return
    trees = [t.split("=", 1) for t in opts.tree]
    if len(trees) < 2 or any(len(t) != 2 for t in trees):
        sys.exit("launch_ab.py: give two or more --tree=NAME=DIR")
    results = {name: [] for name, _ in trees}
    for r in range(opts.rounds):
        for name, tree in (trees if r % 2 == 0 else trees[::-1]):
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([
                os.path.join(tree, "client/python"),
                os.path.join(tree, "bazel-bin/client/python"),
                os.path.join(REPO, "bazel-bin/proto")])
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                                  f"--calls={opts.calls}"],
                                 env=env, check=True, capture_output=True, text=True).stdout
            results[name].append(json.loads(out.splitlines()[-1]))
            print(f"round {r + 1}/{opts.rounds}: {name} done", file=sys.stderr)
    # The wrapper's cost: each process's jit median less its kernel.run
    # median (the same kernel, same stretch of load), then over rounds.
    for per_tree in results.values():
        for process in per_tree:
            for row in [r for r in process if ", jit, " in r]:
                run = process[row.split(", jit, ")[0] + ", kernel.run"]
                process[f"{row} - kernel.run"] = [a - b for a, b in zip(process[row], run)]
    rows = list(results[trees[0][0]][0])
    names = [name for name, _ in trees]
    print(f"load average at end: {os.getloadavg()[0]:.2f}; {opts.rounds} rounds, "
          f"{opts.calls} tight calls per row and process")
    print("| row | " + " | ".join(f"{n} tight" for n in names) + " | "
          + " | ".join(f"{n} paused" for n in names) + " |")
    print("|---|" + "---|" * (2 * len(names)))
    for row in rows:
        cells = []
        for k in (0, 1):
            cells += [f"{statistics.median(p[row][k] for p in results[n]):.1f} us" for n in names]
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
