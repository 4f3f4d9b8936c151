"""pypto.cumsum and pypto.cumprod (scans.py: the compiler's scan ops,
TCUMSUM/TCUMPROD) and their Tensor methods, run through compiled kernels
and compared with torch bit for bit: torch's order and accumulator (DOUBLE
for FP32, FP32 for FP16/BF16, INT64 for integers and BOOL)."""

import numpy as np
import pytest
import torch

import many_outputs
import pypto

ANY = pypto.Tensor[...]

HALF = (torch.float16, torch.bfloat16)


def torch_scan(x, kind, dim):
    """torch's x.cumsum(dim) / x.cumprod(dim). torch 1.13 scans BF16 on the
    CPU in its accumulator, FP32, but has no FP16 scan there; torch's rule
    for FP16 (at::acc_type, FP32, as later versions run it) is numpy's
    sequential FP32 accumulate, rounded once per element."""
    if x.dtype != torch.float16:
        return getattr(x, kind)(dim)
    ufunc = np.add if kind == "cumsum" else np.multiply
    xs = x.float().numpy()
    dim %= xs.ndim
    # torch's loop starts from the identity (0 + -0.0 is 0.0); numpy's
    # accumulate from the first element.
    start = np.full(xs.shape[:dim] + (1,) + xs.shape[dim + 1:], 0.0 if kind == "cumsum" else 1.0,
                    np.float32)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, overflow: as torch
        wide = ufunc.accumulate(np.concatenate([start, xs], axis=dim), axis=dim,
                                dtype=np.float32)
    return torch.from_numpy(np.delete(wide, 0, axis=dim)).half()


def run(fns, inputs, out_shapes, out_dtype, tile=(4, 8, 16)):
    outs = [torch.zeros(s, dtype=out_dtype) for s in out_shapes]
    return many_outputs.run_many(fns, inputs, outs, tile)


def specials(shape, seed):
    """Values in [0.5, 1.5) with NaN, inf, -inf, -0.0 and 0.0 sprinkled in."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(shape, generator=g) + 0.5
    pick = torch.randint(0, 60, shape, generator=g)
    x[pick == 0] = float("nan")
    x[pick == 1] = float("inf")
    x[pick == 2] = float("-inf")
    x[pick == 3] = -0.0
    x[pick == 4] = 0.0
    return x


def test_records_one_scan_op():
    @pypto.jit
    def k(x: ANY, s: ANY, p: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        s[:] = pypto.cumsum(x, 1)
        p[:] = x.cumprod(0)

    graph = k.trace(torch.zeros(5, 9), torch.zeros(5, 9), torch.zeros(5, 9))
    kinds = [op.kind for op in graph.ops]
    assert kinds.count("cumsum") == 1 and kinds.count("cumprod") == 1, kinds
    assert "loop" not in kinds, kinds


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod_fp32(native, dim):
    x = torch.rand(5, 13) + 0.5
    outs = run([lambda t: pypto.cumsum(t, dim), lambda t: t.cumsum(dim),
                lambda t: pypto.cumprod(t, dim), lambda t: t.cumprod(dim)],
               [x], [(5, 13)] * 4, torch.float32, tile=(8, 16))
    # torch's running value (a double for FP32), in torch's order: equal bits.
    for got, want in zip(outs, [x.cumsum(dim), x.cumsum(dim), x.cumprod(dim), x.cumprod(dim)]):
        assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_many_tiles_along_both_dims_with_tails_and_special_values(native, dtype):
    # [37, 300] in (8, 64) tiles: five tiles along each dim, the last ones
    # shorter; each tile along the scanned dim starts from the one before.
    x = specials((37, 300), 7).to(dtype)
    outs = run([lambda t: pypto.cumsum(t, 1), lambda t: pypto.cumsum(t, 0),
                lambda t: pypto.cumprod(t, 1), lambda t: pypto.cumprod(t, 0)],
               [x], [(37, 300)] * 4, dtype, tile=(8, 64))
    for got, want in zip(outs, [torch_scan(x, "cumsum", 1), torch_scan(x, "cumsum", 0),
                                torch_scan(x, "cumprod", 1), torch_scan(x, "cumprod", 0)]):
        # NaN where torch has NaN (its sign and payload are the C++
        # compiler's choice of operand order); elsewhere the same bits, the
        # sign of a zero included.
        nan = want.isnan()
        assert torch.equal(got.isnan(), nan)
        assert torch.equal(got[~nan], want[~nan])
        assert torch.equal(got[~nan].signbit(), want[~nan].signbit())


def test_results_do_not_depend_on_the_tile(native):
    x = torch.randn(19, 70)
    for tile in ((1, 8), (4, 16), (32, 128)):
        outs = run([lambda t: pypto.cumsum(t, 1), lambda t: pypto.cumsum(t, 0)], [x],
                   [(19, 70)] * 2, torch.float32, tile=tile)
        assert torch.equal(outs[0], x.cumsum(1)), tile
        assert torch.equal(outs[1], x.cumsum(0)), tile


def test_rank_3_along_the_middle_dim(native):
    x = torch.randn(3, 21, 5, dtype=torch.float64)
    outs = run([lambda t: pypto.cumsum(t, 1), lambda t: t.cumprod(-2)], [x], [(3, 21, 5)] * 2,
               torch.float64, tile=(2, 8, 4))
    assert torch.equal(outs[0], x.cumsum(1)) and torch.equal(outs[1], x.cumprod(1))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int8, torch.bool])
def test_cumsum_cumprod_integers_exact_in_int64(native, dtype):
    if dtype == torch.bool:
        x = torch.rand(3, 17) > 0.3
    else:
        x = torch.randint(-9, 10, (3, 17)).to(dtype)
    if dtype == torch.int64:
        x[0, 0] = 2 ** 62  # wraps in the running sum and product, as torch's
    outs = run([lambda t: pypto.cumsum(t, 1), lambda t: pypto.cumprod(t, 1),
                lambda t: pypto.cumsum(t, 0)], [x], [(3, 17)] * 3, torch.int64, tile=(4, 8))
    for got, want in zip(outs, [x.cumsum(1), x.cumprod(1), x.cumsum(0)]):
        assert got.dtype == want.dtype == torch.int64
        assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", HALF)
def test_cumsum_half_types_accumulate_in_fp32(native, dtype):
    # Rows of 1000 values in [0, 1): FP32 running sums round (a DOUBLE one,
    # rounded to FP32 and then to the dtype, differs in places), 19 rows so
    # that the 8-row blocks and a tail of rows both run.
    x = torch.rand(19, 1000, generator=torch.Generator().manual_seed(3)).to(dtype)
    outs = run([lambda t: pypto.cumsum(t, 1), lambda t: pypto.cumprod(t + 0.5, 1)], [x],
               [(19, 1000)] * 2, dtype, tile=(16, 1024))
    # torch's FP32 running value (its CPU accumulator for both types),
    # rounded per element: equal bits.
    assert torch.equal(outs[0], torch_scan(x, "cumsum", 1))
    assert torch.equal(outs[1], torch_scan(x + 0.5, "cumprod", 1))


def test_cumsum_of_length_1_and_non_power_of_two(native):
    x = torch.randint(-5, 5, (1, 7), dtype=torch.int32)
    outs = run([lambda t: pypto.cumsum(t, 0), lambda t: pypto.cumsum(t, 1)], [x],
               [(1, 7)] * 2, torch.int64, tile=(1, 8))
    assert torch.equal(outs[0], x.cumsum(0)) and torch.equal(outs[1], x.cumsum(1))


def test_cumsum_cumprod_of_double(native):
    x = torch.rand(4, 9, dtype=torch.float64) + 0.5
    outs = run([lambda t: pypto.cumsum(t, 1), lambda t: pypto.cumprod(t, 0)], [x],
               [(4, 9)] * 2, torch.float64, tile=(4, 16))
    assert torch.equal(outs[0], x.cumsum(1)) and torch.equal(outs[1], x.cumprod(0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32,
                                   torch.int64])
def test_cumsum_cumprod_over_dynamic_dims_compile_once(native, dtype):
    out_dtype = torch.int64 if dtype == torch.int32 else dtype

    @pypto.jit
    def k(x: pypto.Tensor(["m", "n"], pypto.dtypes.from_torch(dtype)),
          along_n: pypto.Tensor(["m", "n"], pypto.dtypes.from_torch(out_dtype)),
          along_m: pypto.Tensor(["m", "n"], pypto.dtypes.from_torch(out_dtype)),
          prod_n: pypto.Tensor(["m", "n"], pypto.dtypes.from_torch(out_dtype))):
        pypto.set_vec_tile_shapes(4, 16)
        along_n[:] = pypto.cumsum(x, 1)
        along_m[:] = x.cumsum(0)
        prod_n[:] = x.cumprod(-1)

    # One tile, several tiles along each dim, tails.
    for m, n in ((1, 1), (3, 7), (6, 37), (13, 100)):
        if dtype.is_floating_point:
            x = (torch.rand(m, n) + 0.5).to(dtype)
        else:
            x = torch.randint(-4, 5, (m, n), dtype=dtype)
        outs = [torch.zeros(m, n, dtype=out_dtype) for _ in range(3)]
        k(x, *outs)
        for got, want in zip(outs, [torch_scan(x, "cumsum", 1), torch_scan(x, "cumsum", 0),
                                    torch_scan(x, "cumprod", -1)]):
            assert torch.equal(got, want.to(out_dtype)), (m, n)
    assert pypto.compile_stats()["compiles"] == 1


def test_bad_arguments_name_the_op():
    @pypto.jit
    def rank0(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4)
        out.move(pypto.cumsum(pypto.sum(x, 0), 0))

    with pytest.raises(ValueError, match="pypto.cumsum: the input is a rank-0 tensor"):
        rank0.trace(torch.zeros(4), torch.zeros(()))

    @pypto.jit
    def bad_dim(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = pypto.cumprod(x, 2)

    with pytest.raises(ValueError, match="pypto.cumprod: dim 2 is out of range for rank 2"):
        bad_dim.trace(torch.zeros(4, 4), torch.zeros(4, 4))

    @pypto.jit
    def float_dim(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = x.cumsum(1.0)

    with pytest.raises(TypeError, match="pypto.cumsum: dim must be an int"):
        float_dim.trace(torch.zeros(4, 4), torch.zeros(4, 4))


def test_eager_runs_match_torch_bit_for_bit(native):
    # An eager run computes each op in the reference evaluator: torch's
    # arithmetic too.
    @pypto.jit
    def k(x: ANY, s: ANY, p: ANY, i: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        s[:] = pypto.cumsum(x, 1)
        p[:] = x.cumprod(0)
        i[:] = pypto.cumsum(x > 1, 1)

    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x = (torch.rand(7, 50) + 0.5).to(dtype)
        s, p = torch.zeros(7, 50, dtype=dtype), torch.zeros(7, 50, dtype=dtype)
        i = torch.zeros(7, 50, dtype=torch.int64)
        with pypto.debug.eager():
            k(x, s, p, i)
        assert torch.equal(s, torch_scan(x, "cumsum", 1)), dtype
        assert torch.equal(p, torch_scan(x, "cumprod", 0)), dtype
        assert torch.equal(i, (x > 1).cumsum(1)), dtype


def test_fixed_size_views_over_a_dynamic_batch_with_a_clipped_last_view(native):
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
          rows: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
          columns: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 32)
        for i in pypto.loop(pypto.ceildiv(n, 16)):
            t = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[pypto.min(16, n - i * 16), 64])
            pypto.assemble(pypto.cumsum(t, 1), [i * 16, 0], rows)
            pypto.assemble(t.cumsum(0), [i * 16, 0], columns)

    for n in (40, 7, 16):
        x = torch.randn(n, 64)
        rows, columns = torch.zeros(n, 64), torch.zeros(n, 64)
        k(x, rows, columns)
        assert torch.equal(rows, x.cumsum(1)), n
        assert torch.equal(columns, torch.cat([v.cumsum(0) for v in x.split(16)])), n
    assert pypto.compile_stats()["compiles"] == 1
