"""Layer norm and RMS norm, written by the user from primitives as PyPTO's
examples do; eps is a compile-time scalar argument.

    tools/pypto-python examples/layer_norm.py --run_mode sim
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


def layer_norm(x, gamma, beta, eps):
    """A helper traced into the calling kernel (plain pypto.Tensor hints)."""
    n = x.shape[-1]
    mean = x.sum(dim=-1, keepdim=True) * (1.0 / n)
    centered = x - mean
    var = (centered * centered).sum(dim=-1, keepdim=True) * (1.0 / n)
    return centered * pypto.rsqrt(var + eps) * gamma + beta


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def layer_norm_kernel(x: pypto.Tensor([], pypto.DT_FP32),
                      gamma: pypto.Tensor([], pypto.DT_FP32),
                      beta: pypto.Tensor([], pypto.DT_FP32),
                      out: pypto.Tensor([], pypto.DT_FP32),
                      eps: float):
    pypto.set_vec_tile_shapes(8, 768)
    out[:] = layer_norm(x, gamma, beta, eps)


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def rms_norm_kernel(x: pypto.Tensor([], pypto.DT_FP32),
                    gamma: pypto.Tensor([], pypto.DT_FP32),
                    out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 256)
    out[:] = pypto.rms_norm(x, gamma, epsilon=1e-6)


def main():
    torch.manual_seed(0)
    x = torch.randn(100, 768) * 3 + 1
    gamma, beta = torch.randn(768), torch.randn(768)
    out = torch.empty_like(x)
    layer_norm_kernel(x, gamma, beta, out, 1e-5)
    expected = torch.nn.functional.layer_norm(x, (768,), gamma, beta, eps=1e-5)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)

    out2 = torch.empty_like(x)
    rms_norm_kernel(x, gamma, out2)
    expected2 = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * gamma
    torch.testing.assert_close(out2, expected2, rtol=1e-4, atol=1e-4)
    print("layer norm (from primitives, eps a scalar argument) and rms_norm match torch")


if __name__ == "__main__":
    main()
