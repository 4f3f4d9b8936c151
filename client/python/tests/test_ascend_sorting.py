"""pypto.argsort compiled for the Ascend target (codegen_options["target"]:
ascend-a2a3, its PTO-ISA CPU simulation here: MSORT through TSORT32 and
TMRGSORT) and compared with torch's stable sort: ties, -0.0 and 0.0 in
input order, NaN above +inf, both ways, FP32 and FP16, INT32 (two sorts by
16-bit halves), rows from one TSORT32 block to several merges, columns
(dim 0, a rank-3 tensor's middle dim, dims before the second last) through
TTRANS, rows of a run-time length up to the target's capacity (a longer one
an error at launch); a sort the target does not map is a clear error naming
MSORT."""

import pytest
import torch

import pypto
from test_ascend_target import pto_isa, stored_target  # noqa: F401 (a fixture)
from test_sorting import long_rows, same_values, stable_topk

ANY = pypto.Tensor[...]
ASCEND = {"target": "ascend-a2a3"}
DTYPES = {torch.float16: pypto.DT_FP16, torch.int32: pypto.DT_INT32}


def argsorts():
    @pypto.jit(codegen_options=ASCEND)
    def k(x: ANY, down: ANY, up: ANY):
        pypto.set_vec_tile_shapes(4, 64)
        down[:] = pypto.argsort(x)
        up[:] = pypto.argsort(x, descending=False)

    return k


def rows(n, dtype, seed):
    """Six rows of n: random, all tied, NaN and +-inf among values, signed
    zeros, a few distinct values (ties), random again."""
    g = torch.Generator().manual_seed(seed)
    nan, inf = float("nan"), float("inf")
    x = torch.randn(6, n, generator=g)
    x[1, :] = 1.0
    special = torch.tensor([nan, inf, -inf, 1.0, -0.0, 0.0, nan, inf])
    x[2, :] = special[torch.randint(0, len(special), (n,), generator=g)]
    x[3, :] = torch.tensor([-0.0, 0.0]).repeat(n)[:n]
    x[4, :] = torch.randint(-2, 3, (n,), generator=g).float() / 2
    return x.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("n", [20, 300, 2100])
def test_argsort_on_the_ascend_cpu_simulation_is_torchs_stable_sort(native, pto_isa, dtype, n):
    k = argsorts()
    x = rows(n, dtype, seed=n)
    down = torch.zeros(x.shape, dtype=torch.int64)
    up = torch.zeros(x.shape, dtype=torch.int64)
    k(x, down, up)
    assert stored_target(k.last_compile.key) == "ascend-a2a3-cpusim"
    assert torch.equal(down, torch.sort(x, dim=-1, descending=True, stable=True).indices)
    assert torch.equal(up, torch.sort(x, dim=-1, descending=False, stable=True).indices)


@pytest.mark.parametrize("n", [40, 700])
def test_argsort_of_int32_values_is_torchs_stable_sort(native, pto_isa, n):
    """INT32 rows sort by their low and then their high 16 bits: values
    across the whole range, sharing a half, tied and at the range's edges."""
    k = argsorts()
    g = torch.Generator().manual_seed(n)
    lo, hi = -(2**31), 2**31 - 1
    x = torch.randint(lo, hi, (5, n), generator=g, dtype=torch.int64)
    x[1, :] = x[1, :] % 65536 + 65536 * torch.randint(-2, 2, (n,), generator=g)
    x[2, :] = 65536 * (x[2, :] // 65536) + torch.randint(0, 2, (n,), generator=g)
    x[3, :] = torch.randint(-3, 4, (n,), generator=g)
    edges = torch.tensor([lo, lo + 1, -65537, -65536, -1, 0, 1, 65535, 65536, hi - 1, hi])
    x[4, :] = edges[torch.randint(0, len(edges), (n,), generator=g)]
    x = x.to(torch.int32)
    down = torch.zeros(x.shape, dtype=torch.int64)
    up = torch.zeros(x.shape, dtype=torch.int64)
    k(x, down, up)
    assert stored_target(k.last_compile.key) == "ascend-a2a3-cpusim"
    assert torch.equal(down, torch.sort(x, dim=-1, descending=True, stable=True).indices)
    assert torch.equal(up, torch.sort(x, dim=-1, descending=False, stable=True).indices)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32],
                         ids=["fp32", "fp16", "int32"])
def test_argsort_along_dim_0_and_a_rank_3_middle_dim(native, pto_isa, dtype):
    """Columns sort through TTRANS: dim 0 of a matrix (a tail group of
    columns too) and dim 1 of a rank-3 tensor, ties and NaN among them."""

    @pypto.jit(codegen_options=ASCEND)
    def k(x: ANY, y: ANY, down: ANY, up: ANY, mid: ANY):
        pypto.set_vec_tile_shapes(4, 64)
        down[:] = pypto.argsort(x, dim=0)
        up[:] = pypto.argsort(x, dim=0, descending=False)
        pypto.set_vec_tile_shapes(2, 4, 8)
        mid[:] = pypto.argsort(y, dim=1)

    g = torch.Generator().manual_seed(5)
    x = torch.randint(-4, 5, (50, 21), generator=g).float() / 2
    x[7, :] = float("nan") if dtype != torch.int32 else 3
    x[:, 3] = torch.randn(50, generator=g)
    y = torch.randn(3, 40, 11, generator=g)
    x = x.to(dtype)
    y = (y * 1000).to(dtype)
    got = [torch.zeros(x.shape, dtype=torch.int64), torch.zeros(x.shape, dtype=torch.int64),
           torch.zeros(y.shape, dtype=torch.int64)]
    k(x, y, *got)
    assert stored_target(k.last_compile.key) == "ascend-a2a3-cpusim"
    want = [torch.sort(x, dim=0, descending=True, stable=True).indices,
            torch.sort(x, dim=0, descending=False, stable=True).indices,
            torch.sort(y, dim=1, descending=True, stable=True).indices]
    for g_, w in zip(got, want):
        assert torch.equal(g_, w)


def test_argsort_along_dims_before_the_second_last(native, pto_isa):
    """Dim 0 of a rank-3 tensor and dim 1 of a rank-4 one: column blocks
    whose rows step by the sorted dim's stride, ties and NaN among them."""

    @pypto.jit(codegen_options=ASCEND)
    def k(x: ANY, y: ANY, first: ANY, second: ANY):
        pypto.set_vec_tile_shapes(2, 4, 16)
        first[:] = pypto.argsort(x, dim=0, descending=False)
        pypto.set_vec_tile_shapes(1, 4, 2, 8)
        second[:] = pypto.argsort(y, dim=1)

    g = torch.Generator().manual_seed(7)
    x = torch.randint(-3, 4, (13, 3, 20), generator=g).float() / 2
    x[4, 1, :] = float("nan")
    y = torch.randn(2, 17, 3, 10, generator=g)
    y[:, 5] = y[:, 2]
    got = [torch.zeros(x.shape, dtype=torch.int64), torch.zeros(y.shape, dtype=torch.int64)]
    k(x, y, *got)
    assert stored_target(k.last_compile.key) == "ascend-a2a3-cpusim"
    assert torch.equal(got[0], torch.sort(x, dim=0, descending=False, stable=True).indices)
    assert torch.equal(got[1], torch.sort(y, dim=1, descending=True, stable=True).indices)


@pytest.mark.parametrize("descending", [True, False])
def test_argsort_over_a_run_time_row_length_compiles_once(native, pto_isa, descending):
    """Rows of a symbolic length sort padded to the target's capacity (8192
    FP32 values): every length up to it compiles once; one past it is an
    error at launch naming the length and the bound."""

    @pypto.jit(codegen_options=ASCEND)
    def k(x: pypto.Tensor([3, "n"], pypto.DT_FP32), out: pypto.Tensor([3, "n"], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(2, 1024)
        out[:] = pypto.argsort(x, descending=descending)

    for n in (1, 7, 8, 100, 1500, 8192):
        x = long_rows(3, n, seed=n)
        out = torch.full((3, n), -1, dtype=torch.int64)
        k(x, out)
        assert torch.equal(out, torch.sort(x, dim=-1, descending=descending, stable=True).indices), n
    assert pypto.compile_stats()["compiles"] == 1
    with pytest.raises(ValueError, match=r"sorts rows of up to 8192 values in the UB; its row "
                                         r"length n must be at most that.* at n=8193"):
        k(torch.zeros(3, 8193), torch.zeros(3, 8193, dtype=torch.int64))


@pytest.mark.parametrize("dtype", [torch.float16, torch.int32], ids=["fp16", "int32"])
def test_topk_over_a_run_time_row_length_with_k_at_the_edges(native, pto_isa, dtype):
    """topk of 1 and of 3 along a symbolic dim, k the whole row at n = 3,
    FP16 values (NaN, infinities, ties) and INT32 ones (many ties)."""

    @pypto.jit(codegen_options=ASCEND)
    def k(x: pypto.Tensor([4, "n"], DTYPES[dtype]), v: pypto.Tensor([4, 3], DTYPES[dtype]),
          i: pypto.Tensor([4, 3], pypto.DT_INT64), one: pypto.Tensor([4, 1], DTYPES[dtype]),
          at: pypto.Tensor([4, 1], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 3)
        one[:], at[:] = pypto.topk(x, 1, largest=False)

    for n in (3, 10, 100, 2000):
        x = long_rows(4, n, seed=n)
        x = x.to(dtype) if dtype != torch.int32 else (x.nan_to_num(5.0, 9.0, -9.0) * 2).int()
        got = [torch.zeros(4, 3, dtype=dtype), torch.zeros(4, 3, dtype=torch.int64),
               torch.zeros(4, 1, dtype=dtype), torch.zeros(4, 1, dtype=torch.int64)]
        k(x, *got)
        for g_, w in zip(got, [*stable_topk(x, 3), *stable_topk(x, 1, largest=False)]):
            same_values(g_, w)


@pytest.mark.parametrize("kernel,match", [
    ("columns", r"MSORT \(sort, topk, argsort\) along dim 0 over a run-time column length"),
    ("bf16", r"MSORT \(sort, topk, argsort\) of DT_BF16 values"),
])
def test_a_sort_the_target_does_not_map_names_msort(native, pto_isa, kernel, match):
    """Refused when compiling, naming MSORT and why: a sort along a dim of
    run-time length before the last, and one of BF16 values."""
    if kernel == "columns":
        @pypto.jit(codegen_options=ASCEND)
        def k(x: pypto.Tensor(["n", 8], pypto.DT_FP32), out: pypto.Tensor(["n", 8], pypto.DT_INT64)):
            pypto.set_vec_tile_shapes(4, 8)
            out[:] = pypto.argsort(x, dim=0)

        x = torch.randn(6, 8)
    else:
        @pypto.jit(codegen_options=ASCEND)
        def k(x: ANY, out: ANY):
            pypto.set_vec_tile_shapes(4, 64)
            out[:] = pypto.argsort(x)

        x = torch.randn(4, 40).bfloat16()
    with pytest.raises(Exception, match=match):
        k(x, torch.zeros(x.shape, dtype=torch.int64))
