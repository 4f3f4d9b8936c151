"""pypto.cumsum and pypto.cumprod compiled for the Ascend target
(codegen_options["target"]: ascend-a2a3, its PTO-ISA CPU simulation here:
TCUMSUM/TCUMPROD along the last dim and down the columns of a flattened tile,
ascend_scan.h) against torch: FP16 and BF16 bit for bit (an f32 running
value, one element at a time, on both), FP32 within the bound
docs/pto-isa.md states (f32 partial sums where torch keeps a double); lines
spanning several tiles with NaN, infinities and signed zeros. A scan the
target does not map is a clear error."""

import pytest
import torch

import many_outputs
import pypto
from test_ascend_target import pto_isa  # noqa: F401 (a fixture)
from test_scans import specials, torch_scan

ASCEND = {"target": "ascend-a2a3"}
TILE = (4, 64)


def scans(x, dim=-1):
    with pypto.options(codegen_options=ASCEND, host_options={"compile_timeout": 600}):
        return many_outputs.run_many(
            [lambda t: pypto.cumsum(t, dim), lambda t: t.cumprod(dim)], [x],
            [torch.zeros(x.shape, dtype=x.dtype) for _ in range(2)],
            TILE if dim == -1 else TILE[::-1])


@pytest.mark.parametrize("dim", [-1, 0], ids=["rows", "columns"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_half_scans_are_torchs_bit_for_bit(native, pto_isa, dtype, dim):
    x = specials((6, 300), seed=3)
    x[1] = -x[1]
    x = x.to(dtype)
    if dim == 0:
        x = x.t().contiguous()
    got_sum, got_prod = scans(x, dim)
    for got, kind in ((got_sum, "cumsum"), (got_prod, "cumprod")):
        want = torch_scan(x, kind, dim)
        assert torch.equal(got.isnan(), want.isnan()), kind
        real = ~want.isnan()
        assert torch.equal(got[real], want[real]), kind
        assert torch.equal(got[real].signbit(), want[real].signbit()), kind


@pytest.mark.parametrize("dim", [-1, 0], ids=["rows", "columns"])
def test_fp32_scans_are_within_the_stated_bound(native, pto_isa, dim):
    g = torch.Generator().manual_seed(5)
    x = (torch.rand(5, 300, generator=g) + 0.5) * torch.where(
        torch.rand(5, 300, generator=g) < 0.5, -1.0, 1.0)
    x[2, 100] = 0.0
    x[3, 7] = -0.0
    if dim == 0:
        x = x.t().contiguous()
    got_sum, got_prod = scans(x, dim)
    n = (torch.arange(1, 301, dtype=torch.float64) + 1).reshape((300, 1) if dim == 0 else (300,))
    bound_sum = n * 2.0 ** -24 * x.double().abs().cumsum(dim)
    bound_prod = n * 2.0 ** -24 * x.double().abs().cumprod(dim)
    assert bool(((got_sum.double() - x.cumsum(dim).double()).abs() <= bound_sum).all())
    assert bool(((got_prod.double() - x.cumprod(dim).double()).abs() <= bound_prod).all())
    assert torch.equal(got_prod.signbit(), x.cumprod(dim).signbit())


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=["fp16", "fp32"])
def test_rank3_scans_along_a_dim_whose_tile_has_one_row_block(native, pto_isa, dtype):
    # Tiles [1, 64, 4] of a [2, 300, 5] tensor scanned along dim 1: down the
    # columns of each [64, 4] block, the carry one row.
    x = specials((2, 300, 5), seed=4)
    x[1] = -x[1]
    x = x.to(dtype)
    with pypto.options(codegen_options=ASCEND, host_options={"compile_timeout": 600}):
        got_sum, got_prod = many_outputs.run_many(
            [lambda t: pypto.cumsum(t, 1), lambda t: t.cumprod(1)], [x],
            [torch.zeros(x.shape, dtype=x.dtype) for _ in range(2)], (1, 64, 4))
    for got, kind in ((got_sum, "cumsum"), (got_prod, "cumprod")):
        want = torch_scan(x, kind, 1)
        assert torch.equal(got.isnan(), want.isnan()), kind
        real = ~want.isnan()
        if dtype == torch.float16:
            assert torch.equal(got[real], want[real]), kind
        else:
            n = (torch.arange(1, 301, dtype=torch.float64) + 1).reshape(300, 1)
            scale = getattr(x.double().abs().nan_to_num(0.0, 0.0, 0.0), kind)(1)
            finite = real & want.isfinite()
            err = (got.double() - want.double()).abs()
            assert bool((err[finite] <= (n * 2.0 ** -24 * scale)[finite]).all()), kind
            assert torch.equal(got[~finite & real], want[~finite & real]), kind
        assert torch.equal(got[real].signbit(), want[real].signbit()), kind


@pytest.mark.parametrize("what,dtype,dim", [("DT_INT64", torch.int32, -1),
                                            ("along the last dim", torch.float32, 0)])
def test_a_scan_the_target_leaves_out_says_why(native, pto_isa, what, dtype, dim):
    x = torch.ones(2, 6, 40, dtype=dtype)
    with pytest.raises(pypto.CompileError, match=rf"ascend target: .*{what}"):
        with pypto.options(codegen_options=ASCEND):
            many_outputs.run_many([lambda t: pypto.cumsum(t, dim)], [x],
                                  [torch.zeros(2, 6, 40, dtype=torch.int64 if dtype == torch.int32
                                               else dtype)], (2,) + TILE)
