"""Row groups over a DYNAMIC last dim: softmax and a layer norm over
[rows, n] compile once; rows within the cap (4096 values for tiles of 4 rows)
run as one fused row group with the row length from the task's args, longer
rows the accumulating form, picked at launch."""

import torch

import pypto


def test_softmax_and_layer_norm_over_a_dynamic_last_dim_compile_once(native):
    @pypto.jit
    def softmax(x: pypto.Tensor([6, "n"], pypto.DT_FP32), out: pypto.Tensor([6, "n"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 256)
        out[:] = pypto.softmax(x, -1)

    # 1/n as a tensor: a dynamic size used as a number compiles per size.
    @pypto.jit
    def layer_norm(x: pypto.Tensor([6, "n"], pypto.DT_FP32), gamma: pypto.Tensor(["n"], pypto.DT_FP32),
                   inv_n: pypto.Tensor([1], pypto.DT_FP32), out: pypto.Tensor([6, "n"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 256)
        d = x - pypto.sum(x, dim=-1, keepdim=True) * inv_n
        var = pypto.sum(d * d, dim=-1, keepdim=True) * inv_n
        out[:] = d * pypto.rsqrt(var + 1e-5) * gamma

    for n in (1, 7, 64, 1000, 5000):  # 5000: past the cap
        x = torch.randn(6, n) * 3
        out = torch.full_like(x, float("nan"))
        softmax(x, out)
        torch.testing.assert_close(out, torch.softmax(x.double(), -1).float(), rtol=1e-5, atol=1e-6)
        gamma = torch.randn(n)
        inv_n = torch.tensor([1.0 / n])
        out = torch.full_like(x, float("nan"))
        layer_norm(x, gamma, inv_n, out)
        want = torch.nn.functional.layer_norm(x.double(), (n,), eps=1e-5) * gamma.double()
        torch.testing.assert_close(out, want.float(), rtol=1e-4, atol=1e-4)
    stats = pypto.compile_stats()
    assert stats["compiles"] == 2 and stats["traces"] == 2, stats
