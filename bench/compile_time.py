"""Cold compile time per target: the same kernels compiled for the host and
for the Ascend target's CPU simulation (ascend-a2a3-cpusim: PTO-ISA C++
built against the PTO-ISA library's CPU simulation), in process, no cache.

    bazel build //client/python:pypto/_native.so //proto:pto_v1_py
    PTO_ISA_ROOT=../shared/third_party/pto-isa tools/pypto-python bench/compile_time.py [--reps=3]

Rows: each kernel's median compile time over --reps compiles per target
(every compile a full one: _native.compile, never a cache), and of that the
native_compile stage (the C++ compiler) and the codegen stage (PTO -> C++).
The kernels: an elementwise chain, a row softmax, and an FP32 matmul. Host
compiles start from the precompiled headers in the user's directory (built by
the first compile that needs them); PTO_PCH_DIR=off measures without them.
"""

import argparse
import os
import statistics
import sys

import numpy as np

import pypto
from pypto import _native

F32 = pypto.DT_FP32
ANY = pypto.Tensor[...]
TARGETS = ("host", "ascend-a2a3-cpusim")


@pypto.jit
def chain(a: ANY, b: ANY, out: ANY):
    pypto.set_vec_tile_shapes(32, 128)
    out[:] = (a + b).exp() * 2 - a


@pypto.jit
def softmax(x: ANY, out: ANY):
    pypto.set_vec_tile_shapes(8, 256)
    out[:] = pypto.softmax(x, -1)


@pypto.jit
def matmul(a: ANY, b: ANY, out: ANY):
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    out[:] = pypto.matmul(a, b, F32)


def graphs():
    z = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    return [("elementwise chain 256x1000", chain.trace(z(256, 1000), z(256, 1000), z(256, 1000))),
            ("softmax rows 64x256", softmax.trace(z(64, 256), z(64, 256))),
            ("matmul 128x256x128 fp32", matmul.trace(z(128, 256), z(256, 128), z(128, 128)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    print("| kernel | target | compile (median) | native_compile | codegen |")
    print("|---|---|---|---|---|")
    for name, graph in graphs():
        data = graph.SerializeToString()
        for target in TARGETS:
            totals, native, codegen = [], [], []
            for _ in range(args.reps):
                _, _, stages = _native.compile(data, target, {})
                s = dict(stages)
                totals.append(sum(s.values()))
                native.append(s.get("native_compile", 0.0))
                codegen.append(s.get("codegen", 0.0))
            print(f"| {name} | {target} | {statistics.median(totals):.2f} s | "
                  f"{statistics.median(native):.2f} s | {statistics.median(codegen) * 1e3:.1f} ms |",
                  flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
