"""Elementwise ops: arithmetic with broadcasting and scalars, math functions,
comparisons and where, clip, casts, FP16 and BF16.

    tools/pypto-python examples/elementwise.py --run_mode sim
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def gelu_tanh_kernel(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
    # GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    pypto.set_vec_tile_shapes(16, 128)
    inner = (x + x * x * x * 0.044715) * 0.7978845608028654
    out[:] = x * 0.5 * (inner.tanh() + 1)


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def bias_select_kernel(x: pypto.Tensor([], pypto.DT_FP16),
                       bias: pypto.Tensor([], pypto.DT_FP16),
                       out: pypto.Tensor([], pypto.DT_FP16),
                       mask: pypto.Tensor([], pypto.DT_BOOL)):
    pypto.set_vec_tile_shapes(16, 128)
    y = x + bias                      # bias [cols] broadcasts over rows
    mask[:] = y > 0
    out[:] = pypto.where(y > 0, y, pypto.exp(y) - 1).clip(-0.5, 4.0)   # ELU, clipped


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def bf16_kernel(x: pypto.Tensor([], pypto.DT_BF16), out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 128)
    out[:] = pypto.cast(pypto.sigmoid(x) * x, pypto.DT_FP32)   # SiLU in BF16, widened


def main():
    torch.manual_seed(0)
    x = torch.randn(48, 300)
    out = torch.empty_like(x)
    gelu_tanh_kernel(x, out)
    torch.testing.assert_close(out, torch.nn.functional.gelu(x, approximate="tanh"))

    x16 = torch.randn(48, 300, dtype=torch.float16)
    bias = torch.randn(300, dtype=torch.float16)
    out16 = torch.empty_like(x16)
    mask = torch.empty(48, 300, dtype=torch.bool)
    bias_select_kernel(x16, bias, out16, mask)
    y = x16 + bias
    elu = torch.where(y > 0, y, y.float().exp().half() - 1)   # torch has no CPU fp16 exp
    torch.testing.assert_close(out16, elu.float().clamp(-0.5, 4.0).half())
    assert torch.equal(mask, y > 0)

    xb = torch.randn(48, 300, dtype=torch.bfloat16)
    outb = torch.empty(48, 300)
    bf16_kernel(xb, outb)
    torch.testing.assert_close(outb, (torch.sigmoid(xb) * xb).float())
    print("elementwise: gelu (fp32), biased clipped elu (fp16, bool mask), silu (bf16) match torch")


if __name__ == "__main__":
    main()
