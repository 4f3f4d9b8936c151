"""Reductions over one dim: sum, amax, amin, prod, argmax, argmin, with
keepdim, negative dims and a reduced dim spanning several tiles.

    tools/pypto-python examples/reductions.py --run_mode sim
"""

import argparse

import torch

import pypto

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--run_mode", choices=("sim", "npu"), default="sim")
args, _ = parser.parse_known_args()
mode = pypto.RunMode.SIM if args.run_mode == "sim" else pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def row_stats_kernel(x: pypto.Tensor([], pypto.DT_FP32),
                     row_sum: pypto.Tensor([], pypto.DT_FP32),
                     row_max: pypto.Tensor([], pypto.DT_FP32),
                     row_argmin: pypto.Tensor([], pypto.DT_INT64)):
    # 64-wide tiles over 1000 columns: each row is reduced per tile, then combined.
    pypto.set_vec_tile_shapes(8, 64)
    row_sum[:] = x.sum(dim=-1, keepdim=True)
    row_max[:] = pypto.amax(x, -1, keepdim=True)
    row_argmin[:] = x.argmin(dim=1)


@pypto.frontend.jit(runtime_options={"run_mode": mode})
def column_kernel(x: pypto.Tensor([], pypto.DT_FP32),
                  col_min: pypto.Tensor([], pypto.DT_FP32),
                  col_prod: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    col_min[:] = x.amin(0)
    col_prod[:] = pypto.prod(x, dim=0)


def main():
    torch.manual_seed(0)
    x = torch.randn(40, 1000)
    row_sum, row_max = torch.empty(40, 1), torch.empty(40, 1)
    row_argmin = torch.empty(40, dtype=torch.int64)
    row_stats_kernel(x, row_sum, row_max, row_argmin)
    torch.testing.assert_close(row_sum, x.sum(-1, keepdim=True), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(row_max, x.amax(-1, keepdim=True))
    assert torch.equal(row_argmin, x.argmin(1))

    y = torch.rand(40, 96) + 0.5
    col_min, col_prod = torch.empty(96), torch.empty(96)
    column_kernel(y, col_min, col_prod)
    torch.testing.assert_close(col_min, y.amin(0))
    torch.testing.assert_close(col_prod, y.prod(0), rtol=1e-4, atol=0)
    print("reductions: row sum/amax/argmin over 1000 columns, column amin/prod match torch")


if __name__ == "__main__":
    main()
