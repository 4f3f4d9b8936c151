"""An FFN block as in LLaMA-style models: pre-norm (RMSNorm), SwiGLU
(silu(x Wg^T) * (x Wu^T)) Wd^T, residual. FP16 weights and activations on the
cube path with FP32 accumulation; norm and gating on the vector path.

    tools/pypto-python examples/ffn.py --run_mode sim
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def ffn_kernel(x: pypto.Tensor([], pypto.DT_FP32),          # [tokens, hidden]
               gamma: pypto.Tensor([], pypto.DT_FP32),      # [hidden]
               w_gate: pypto.Tensor([], pypto.DT_FP16),     # [inter, hidden]
               w_up: pypto.Tensor([], pypto.DT_FP16),       # [inter, hidden]
               w_down: pypto.Tensor([], pypto.DT_FP16),     # [hidden, inter]
               out: pypto.Tensor([], pypto.DT_FP32),
               eps: float):
    pypto.set_vec_tile_shapes(32, 256)
    xn = pypto.cast(pypto.rms_norm(x, gamma, epsilon=eps), pypto.DT_FP16)
    pypto.set_cube_tile_shapes([32, 32], [64, 256], [64, 64])
    gate = pypto.matmul(xn, w_gate, pypto.DT_FP32, b_trans=True)   # [tokens, inter]
    up = pypto.matmul(xn, w_up, pypto.DT_FP32, b_trans=True)
    pypto.set_vec_tile_shapes(32, 128)
    h = pypto.cast(gate * pypto.sigmoid(gate) * up, pypto.DT_FP16)  # SwiGLU
    down = pypto.matmul(h, w_down, pypto.DT_FP32, b_trans=True)    # [tokens, hidden]
    pypto.set_vec_tile_shapes(32, 256)
    out[:] = x + down


def reference(x, gamma, w_gate, w_up, w_down, eps):
    xn = (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gamma).half().float()
    gate, up = xn @ w_gate.float().t(), xn @ w_up.float().t()
    h = (torch.nn.functional.silu(gate) * up).half().float()
    return x + h @ w_down.float().t()


def main():
    torch.manual_seed(0)
    tokens, hidden, inter = 64, 256, 512
    x = torch.randn(tokens, hidden)
    gamma = torch.rand(hidden) + 0.5
    w_gate = (torch.randn(inter, hidden) / hidden ** 0.5).half()
    w_up = (torch.randn(inter, hidden) / hidden ** 0.5).half()
    w_down = (torch.randn(hidden, inter) / inter ** 0.5).half()
    out = torch.empty(tokens, hidden)
    ffn_kernel(x, gamma, w_gate, w_up, w_down, out, 1e-6)
    torch.testing.assert_close(out, reference(x, gamma, w_gate, w_up, w_down, 1e-6),
                               rtol=2e-3, atol=2e-3)
    print(f"ffn: RMSNorm + SwiGLU FFN + residual, {tokens}x{hidden} -> {inter} -> {hidden}, "
          f"fp16 weights, matches torch")


if __name__ == "__main__":
    main()
