"""pypto.cumsum and pypto.cumprod compiled for the Ascend target
(codegen_options["target"]: ascend-a2a3, its PTO-ISA CPU simulation here:
TCUMSUM/TCUMPROD along the last dim, ascend_scan.h) against torch: FP16 and
BF16 bit for bit (an f32 running value, one element at a time, on both),
FP32 within the bound docs/pto-isa.md states (f32 partial sums where torch
keeps a double); rows spanning several tiles with NaN, infinities and
signed zeros. A scan the target does not map is a clear error."""

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
            [torch.zeros(x.shape, dtype=x.dtype) for _ in range(2)], TILE)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_half_scans_are_torchs_bit_for_bit(native, pto_isa, dtype):
    x = specials((6, 300), seed=3)
    x[1] = -x[1]
    x = x.to(dtype)
    got_sum, got_prod = scans(x)
    for got, kind in ((got_sum, "cumsum"), (got_prod, "cumprod")):
        want = torch_scan(x, kind, -1)
        assert torch.equal(got.isnan(), want.isnan()), kind
        real = ~want.isnan()
        assert torch.equal(got[real], want[real]), kind
        assert torch.equal(got[real].signbit(), want[real].signbit()), kind


def test_fp32_scans_are_within_the_stated_bound(native, pto_isa):
    g = torch.Generator().manual_seed(5)
    x = (torch.rand(5, 300, generator=g) + 0.5) * torch.where(
        torch.rand(5, 300, generator=g) < 0.5, -1.0, 1.0)
    x[2, 100] = 0.0
    x[3, 7] = -0.0
    got_sum, got_prod = scans(x)
    n = torch.arange(1, 301, dtype=torch.float64) + 1
    bound_sum = n * 2.0 ** -24 * x.double().abs().cumsum(-1)
    bound_prod = n * 2.0 ** -24 * x.double().abs().cumprod(-1)
    assert bool(((got_sum.double() - x.cumsum(-1).double()).abs() <= bound_sum).all())
    assert bool(((got_prod.double() - x.cumprod(-1).double()).abs() <= bound_prod).all())
    assert torch.equal(got_prod.signbit(), x.cumprod(-1).signbit())


@pytest.mark.parametrize("what,dtype,dim", [("DT_INT64", torch.int32, -1),
                                            ("along the last dim", torch.float32, 0)])
def test_a_scan_the_target_leaves_out_says_why(native, pto_isa, what, dtype, dim):
    x = torch.ones(6, 40, dtype=dtype)
    with pytest.raises(pypto.CompileError, match=rf"ascend target: .*{what}"):
        with pypto.options(codegen_options=ASCEND):
            many_outputs.run_many([lambda t: pypto.cumsum(t, dim)], [x],
                                  [torch.zeros(6, 40, dtype=torch.int64 if dtype == torch.int32
                                               else dtype)], TILE)
