"""Softmax in a loop over a dynamic batch, as PyPTO
writes it (only the run mode is this file's): pypto.loop over the batch, a
view of one batch entry per iteration, its softmax assembled into out.

    tools/pypto-python examples/loop_softmax.py --run_mode sim

The loop body is traced once into a loop op of the graph (never unrolled in
Python), the batch dim is symbolic, so the kernel compiles once and runs for
every batch size: the runtime runs the body's tasks for each index, the
iterations concurrently (they touch different rows).
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def softmax_kernel(inp: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
    bs, seqlen, head, dim = inp.shape
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    for idx in pypto.loop(0, bs, 1, name="LOOP_B", idx_name="idx"):
        x = inp[idx:idx + 1, :seqlen, :head, :dim]
        m = pypto.amax(x, dim=-1, keepdim=True)
        e = pypto.exp(x - m)
        out[idx:, ...] = e / pypto.sum(e, dim=-1, keepdim=True)


def main():
    torch.manual_seed(0)
    for bs in (1, 7, 64):
        x = torch.randn(bs, 32, 1, 256) * 3
        out = torch.empty_like(x)
        softmax_kernel(x, out)
        torch.testing.assert_close(out, torch.softmax(x, dim=-1))
    stats = pypto.compile_stats()
    assert stats["compiles"] <= 1, stats  # 0 when the disk cache had it
    print(f"loop softmax over batch sizes 1, 7, 64 matches torch "
          f"({stats['traces']} trace, {stats['compiles']} compile)")


if __name__ == "__main__":
    main()
