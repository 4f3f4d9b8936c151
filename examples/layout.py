"""Layout ops: views by slicing, assembling into regions of an output,
transpose and concat — rotary position embedding (RoPE) as LLM kernels write it.

    tools/pypto-python examples/layout.py --run_mode sim

rotate_half(x) = concat(-x[..., half:], x[..., :half]); out = x * cos + rotate_half(x) * sin.
Views read the input in place (no copies); `out[:, :half] = ...` writes a region.
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU

HALF = 64


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def rope_kernel(x: pypto.Tensor([], pypto.DT_FP32),
                cos: pypto.Tensor([], pypto.DT_FP32),
                sin: pypto.Tensor([], pypto.DT_FP32),
                out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, HALF)
    x1, x2 = x[:, :HALF], x[:, HALF:]                   # views: no copy
    c1, c2 = cos[:, :HALF], cos[:, HALF:]
    s1, s2 = sin[:, :HALF], sin[:, HALF:]
    out[:, :HALF] = x1 * c1 - x2 * s1                   # assemble into the left half
    out[:, HALF:] = x2 * c2 + x1 * s2                   # and the right half


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def rope_concat_kernel(x: pypto.Tensor([], pypto.DT_FP32),
                       cos: pypto.Tensor([], pypto.DT_FP32),
                       sin: pypto.Tensor([], pypto.DT_FP32),
                       out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 2 * HALF)
    rotated = pypto.concat([-x[:, HALF:], x[:, :HALF]], 1)   # rotate_half
    out[:] = x * cos + rotated * sin


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def transpose_add_kernel(x: pypto.Tensor([], pypto.DT_FP32),
                         b: pypto.Tensor([], pypto.DT_FP32),
                         out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 32)
    out[:] = x.transpose(0, 1) + b                      # a strided load, fused


def rotate_half(x):
    return torch.cat([-x[:, HALF:], x[:, :HALF]], dim=1)


def main():
    torch.manual_seed(0)
    tokens = 96
    x = torch.randn(tokens, 2 * HALF)
    pos = torch.arange(tokens, dtype=torch.float32)[:, None]
    inv_freq = 1.0 / (10000 ** (torch.arange(HALF, dtype=torch.float32) / HALF))
    angles = torch.cat([pos * inv_freq, pos * inv_freq], dim=1)
    cos, sin = angles.cos(), angles.sin()
    expected = x * cos + rotate_half(x) * sin

    out = torch.empty_like(x)
    rope_kernel(x, cos, sin, out)
    torch.testing.assert_close(out, expected)
    out2 = torch.empty_like(x)
    rope_concat_kernel(x, cos, sin, out2)
    torch.testing.assert_close(out2, expected)

    y, b = torch.randn(64, 80), torch.randn(80, 64)
    out3 = torch.empty(80, 64)
    transpose_add_kernel(y, b, out3)
    torch.testing.assert_close(out3, y.t() + b)
    print("layout: RoPE by views + assembled halves and by concat, transpose + add match torch")


if __name__ == "__main__":
    main()
