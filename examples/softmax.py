"""Softmax over the last dim, written from primitives and with pypto.softmax.

    tools/pypto-python examples/softmax.py --run_mode sim
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def softmax_kernel(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 1024)      # whole rows of 1024: one tile per 4 rows
    row_max = pypto.amax(x, dim=-1, keepdim=True)
    e = pypto.exp(pypto.sub(x, row_max))    # broadcast [rows, 1] over the row
    out[:] = pypto.div(e, pypto.sum(e, dim=-1, keepdim=True))


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def scaled_softmax_kernel(x: pypto.Tensor([], pypto.DT_FP16), out: pypto.Tensor([], pypto.DT_FP16),
                          scale: float):
    # FP16 in and out, FP32 inside; `scale` is a compile-time constant.
    pypto.set_vec_tile_shapes(8, 256)       # rows span 4 tiles: partial max/sum, then combined
    x32 = pypto.cast(x, pypto.DT_FP32) * scale
    out[:] = pypto.cast(pypto.softmax(x32, dim=-1), pypto.DT_FP16)


def main():
    torch.manual_seed(0)
    x = torch.randn(64, 1024) * 4
    out = torch.empty_like(x)
    softmax_kernel(x, out)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1))

    x16 = torch.randn(64, 1024, dtype=torch.float16)
    out16 = torch.empty_like(x16)
    scaled_softmax_kernel(x16, out16, 0.125)
    torch.testing.assert_close(out16, torch.softmax(x16.float() * 0.125, dim=-1).half())
    print("softmax: fp32 from primitives and fp16 scaled pypto.softmax match torch")


if __name__ == "__main__":
    main()
