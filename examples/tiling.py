"""Tiling configurations: tile shapes change speed, never results.

One kernel is compiled under several vector tile shapes (set before the call,
or inside the kernel), a matmul under several cube tile shapes; every result
is bit-identical. Each tile shape in force
is part of the kernel's signature: a new one compiles once, a repeated one is
a cache hit.

    tools/pypto-python examples/tiling.py --run_mode sim
"""

import argparse
import time

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def scaled_exp_kernel(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
    # No set_vec_tile_shapes here: the caller's setting applies.
    out[:] = (x * 0.5).exp() - x


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def matmul_kernel(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
                  c: pypto.Tensor([], pypto.DT_FP32)):
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)    # the caller's cube tile applies


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def fixed_tile_kernel(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, 256)      # inside: this kernel's trace only
    out[:] = (x * 0.5).exp() - x


def main():
    torch.manual_seed(0)
    x = torch.randn(512, 1024)
    expected = torch.empty_like(x)
    fixed_tile_kernel(x, expected)
    torch.testing.assert_close(expected, (x * 0.5).exp() - x)
    for tile in [(8, 1024), (64, 128), (64, 256), (512, 32), (5, 100)]:
        pypto.set_vec_tile_shapes(*tile)
        assert pypto.get_vec_tile_shapes() == list(tile)
        out = torch.empty_like(x)
        scaled_exp_kernel(x, out)                     # compiles for this tile shape
        start = time.perf_counter()
        scaled_exp_kernel(x, out)                     # cache hit
        ms = (time.perf_counter() - start) * 1e3
        assert scaled_exp_kernel.last_compile.source == "memory"
        assert torch.equal(out, expected), tile       # bit-identical
        print(f"tile {str(list(tile)):12s} {ms:7.2f} ms  same bits")
    # Cube tiles ([L0, L1] per m, k, n) set how a matmul is split: into
    # [mL0 x nL0] output tiles, K in L1 blocks and L0 steps. Same bits again.
    a, b = torch.randn(256, 512), torch.randn(512, 192)
    reference = None
    for m, k, n in [([64, 64], [64, 256], [64, 64]), ([32, 128], [32, 256], [64, 128]),
                    ([128, 128], [128, 128], [64, 64]), ([16, 16], [16, 32], [16, 16])]:
        pypto.set_cube_tile_shapes(m, k, n)
        c = torch.empty(256, 192)
        matmul_kernel(a, b, c)
        start = time.perf_counter()
        matmul_kernel(a, b, c)
        ms = (time.perf_counter() - start) * 1e3
        reference = c.clone() if reference is None else reference
        assert torch.equal(c, reference), (m, k, n)
        print(f"cube tile m={m} k={k} n={n}: {ms:7.2f} ms  same bits")
    torch.testing.assert_close(reference, a @ b, rtol=1e-4, atol=1e-4)
    # Constraints are checked when set (x0 <= x1, x1 % x0 == 0), naming the one violated.
    try:
        pypto.set_cube_tile_shapes([64, 96], [64, 256], [64, 128])
    except ValueError as e:
        print(f"as expected: {e}")
    print("tiling: five vector tile shapes and four cube tile shapes, identical results")


if __name__ == "__main__":
    main()
