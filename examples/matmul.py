"""Matmul on the cube path: 2-D, transposed operands, batched with broadcast,
FP16/BF16 inputs accumulating in FP32, and a matmul feeding vector ops.

    tools/pypto-python examples/matmul.py --run_mode sim
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def matmul_kernel(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
                  c: pypto.Tensor([], pypto.DT_FP32)):
    # [mL0, mL1], [kL0, kL1], [nL0, nL1]: one cube task per 64x64 output tile.
    pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def linear_relu_kernel(x: pypto.Tensor([], pypto.DT_FP16), w: pypto.Tensor([], pypto.DT_FP16),
                       bias: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
    # y = relu(x @ w^T + bias), w stored [out_features, in_features] as in torch.nn.Linear.
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [64, 64])
    pypto.set_vec_tile_shapes(32, 64)
    y = pypto.matmul(x, w, pypto.DT_FP32, b_trans=True)   # FP16 in, FP32 accumulate and out
    out[:] = pypto.relu(y + bias)


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def batched_kernel(a: pypto.Tensor([], pypto.DT_BF16), b: pypto.Tensor([], pypto.DT_BF16),
                   c: pypto.Tensor([], pypto.DT_FP32)):
    # [4, 48, 80]^T-per-batch @ [80, 40] shared by every batch (broadcast).
    pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
    c[:] = a.matmul(b, pypto.DT_FP32, a_trans=True)


def main():
    torch.manual_seed(0)
    a, b = torch.randn(200, 300), torch.randn(300, 150)
    c = torch.empty(200, 150)
    matmul_kernel(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)

    x = torch.randn(96, 256, dtype=torch.float16)
    w = torch.randn(128, 256, dtype=torch.float16) * 0.1
    bias = torch.randn(128)
    out = torch.empty(96, 128)
    linear_relu_kernel(x, w, bias, out)
    torch.testing.assert_close(out, torch.relu(x.float() @ w.float().t() + bias),
                               rtol=1e-3, atol=1e-3)

    ab = torch.randn(4, 80, 48).bfloat16()
    bb = torch.randn(80, 40).bfloat16()
    cb = torch.empty(4, 48, 40)
    batched_kernel(ab, bb, cb)
    torch.testing.assert_close(cb, ab.float().transpose(1, 2) @ bb.float(), rtol=1e-3, atol=1e-3)
    print("matmul: fp32 2-D, fp16 linear+bias+relu (b_trans), batched bf16 (a_trans, broadcast b) match torch")


if __name__ == "__main__":
    main()
