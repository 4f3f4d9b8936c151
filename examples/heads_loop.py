"""A loop with views and assemble: multi-head attention over a [seq, heads *
head_dim] hidden layout, one head per iteration of pypto.loop (the body is
traced once and compiled once; the runtime runs the heads' iterations
concurrently): each head's q/k/v are views of the projections at offsets that
depend on the head index, which the matmuls read in place (no copies), and
each head's result is assembled into its columns of the output.

    tools/pypto-python examples/heads_loop.py --run_mode sim
"""

import argparse
import math

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU

HEADS, HEAD_DIM = 4, 32


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def mha_kernel(q: pypto.Tensor([], pypto.DT_FP32),      # [seq, HEADS * HEAD_DIM]
               k: pypto.Tensor([], pypto.DT_FP32),
               v: pypto.Tensor([], pypto.DT_FP32),
               out: pypto.Tensor([], pypto.DT_FP32)):
    seq = q.shape[0]
    scale = 1.0 / math.sqrt(HEAD_DIM)
    pypto.set_cube_tile_shapes([32, 64], [32, 64], [32, 64])
    for h in pypto.loop(HEADS, name="HEADS", idx_name="h"):
        cols = slice(h * HEAD_DIM, (h + 1) * HEAD_DIM)
        pypto.set_vec_tile_shapes(16, HEAD_DIM)
        # Views of this head's columns: the cube reads them in place.
        q_h, k_h, v_h = q[:, cols], k[:, cols], v[:, cols]
        scores = pypto.matmul(q_h, k_h, pypto.DT_FP32, b_trans=True)  # [seq, seq]
        pypto.set_vec_tile_shapes(16, seq)
        probs = pypto.softmax(scores * scale, dim=-1)
        out[:, cols] = pypto.matmul(probs, v_h, pypto.DT_FP32)       # assemble


def main():
    torch.manual_seed(0)
    seq = 64
    q, k, v = (torch.randn(seq, HEADS * HEAD_DIM) for _ in range(3))
    out = torch.empty(seq, HEADS * HEAD_DIM)
    mha_kernel(q, k, v, out)
    split = lambda t: t.reshape(seq, HEADS, HEAD_DIM).transpose(0, 1)  # noqa: E731
    probs = torch.softmax(split(q) @ split(k).transpose(1, 2) / math.sqrt(HEAD_DIM), dim=-1)
    expected = (probs @ split(v)).transpose(0, 1).reshape(seq, HEADS * HEAD_DIM)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    print(f"loop with views and assemble: {HEADS}-head attention over a [{seq}, "
          f"{HEADS * HEAD_DIM}] layout matches torch")


if __name__ == "__main__":
    main()
