"""Dense multi-head attention: softmax(q k^T * scale + causal mask) v with
[batch, heads, seq, head_dim] tensors — batched matmuls on the cube path,
mask, scale and softmax on the vector path, all in one kernel.

    tools/pypto-python examples/attention.py --run_mode sim
"""

import argparse
import math

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def attention_kernel(q: pypto.Tensor([], pypto.DT_FP32),      # [B, H, S, D]
                     k: pypto.Tensor([], pypto.DT_FP32),
                     v: pypto.Tensor([], pypto.DT_FP32),
                     causal: pypto.Tensor([], pypto.DT_BOOL),  # [S, S], True = may attend
                     out: pypto.Tensor([], pypto.DT_FP32),
                     scale: float):
    pypto.set_cube_tile_shapes([32, 64], [32, 64], [32, 64])
    scores = pypto.matmul(q, k, pypto.DT_FP32, b_trans=True)   # [B, H, S, S]
    seq = scores.shape[-1]
    pypto.set_vec_tile_shapes(1, 1, 16, seq)                   # whole rows: one pass softmax
    scores = pypto.where(causal, scores * scale, float("-inf"))
    probs = pypto.softmax(scores, dim=-1)
    out[:] = pypto.matmul(probs, v, pypto.DT_FP32)             # [B, H, S, D]


def main():
    torch.manual_seed(0)
    b, h, s, d = 2, 4, 128, 64
    q, k, v = (torch.randn(b, h, s, d) for _ in range(3))
    causal = torch.ones(s, s, dtype=torch.bool).tril()
    out = torch.empty(b, h, s, d)
    scale = 1.0 / math.sqrt(d)
    attention_kernel(q, k, v, causal, out, scale)
    scores = (q @ k.transpose(-1, -2) * scale).masked_fill(~causal, float("-inf"))
    expected = torch.softmax(scores, dim=-1) @ v
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    print(f"attention: causal multi-head attention [{b}, {h}, {s}, {d}] matches torch")


if __name__ == "__main__":
    main()
