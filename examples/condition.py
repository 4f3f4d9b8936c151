"""Conditions on symbolic scalars: `if pypto.cond(...)` inside pypto.loop.

    tools/pypto-python examples/condition.py --run_mode sim

pypto.jit rewrites each `if pypto.cond(expr): ... else: ...` of the kernel
so that both branches are traced once into an `if` op of the graph; the
condition is resolved when the kernel runs, per loop iteration when it
depends on the loop index. Here every row is scaled, the first and last
rows of the batch differently from the others (PyPTO's is_loop_begin /
is_loop_end pattern), and a second kernel picks a whole computation by
the batch size. A third is PyPTO's condition example: a tile rebound in a
branch (t = t + 1) flows out of the if, with pypto.is_loop_begin and
pypto.is_loop_end as the conditions.
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU

HIDDEN = 128


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def edge_rows_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    bs = x.shape[0]
    pypto.set_vec_tile_shapes(1, HIDDEN)
    for i in pypto.loop(0, bs, 1, name="LOOP_ROWS", idx_name="i"):
        row = x[i:i + 1, :]
        if pypto.cond(i == 0):
            out[i:, :] = row * 2.0
        elif pypto.cond(i == bs - 1):
            out[i:, :] = row * 3.0
        else:
            out[i:, :] = pypto.exp(row)


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def by_size_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, HIDDEN)
    if pypto.cond(x.shape[0] > 16):
        out[:] = pypto.softmax(x, dim=-1)
    else:
        out[:] = pypto.sigmoid(x)


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def tile_edges_kernel(a: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                      b: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, HIDDEN)
    for idx in pypto.loop(a.shape[0] // 16, name="LOOP_TILES", idx_name="idx"):
        tile = a[idx * 16:(idx + 1) * 16, :]
        if pypto.cond(pypto.is_loop_begin(idx)):
            tile = tile + 1
        elif pypto.cond(pypto.is_loop_end(idx)):
            tile = tile + 2
        b[idx * 16:, 0:] = tile + 1


def main():
    torch.manual_seed(0)
    for bs in (1, 5, 40):
        x = torch.randn(bs, HIDDEN)
        out = torch.empty_like(x)
        edge_rows_kernel(x, out)
        want = x.exp()
        want[-1] = x[-1] * 3.0
        want[0] = x[0] * 2.0
        torch.testing.assert_close(out, want)
        out = torch.empty_like(x)
        by_size_kernel(x, out)
        torch.testing.assert_close(out, torch.softmax(x, -1) if bs > 16 else torch.sigmoid(x))
    for rows in (16, 48, 64):
        a = torch.randn(rows, HIDDEN)
        b = torch.empty_like(a)
        tile_edges_kernel(a, b)
        want = a + 1
        want[-16:] += 2
        want[:16] = a[:16] + 2
        torch.testing.assert_close(b, want)
    print("conditions on the loop index and on the batch size match torch")


if __name__ == "__main__":
    main()
