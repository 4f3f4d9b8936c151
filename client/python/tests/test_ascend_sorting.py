"""pypto.argsort compiled for the Ascend target (codegen_options["target"]:
ascend-a2a3, its PTO-ISA CPU simulation here: MSORT through TSORT32 and
TMRGSORT) and compared with torch's stable sort: ties, -0.0 and 0.0 in
input order, NaN above +inf, both ways, FP32 and FP16, rows from one
TSORT32 block to several merges; a sort the target does not map is a clear
error naming MSORT."""

import pytest
import torch

import pypto
from test_ascend_target import pto_isa, stored_target  # noqa: F401 (a fixture)

ANY = pypto.Tensor[...]
ASCEND = {"target": "ascend-a2a3"}


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


def test_a_sort_the_target_does_not_map_names_msort(native, pto_isa):
    @pypto.jit(codegen_options=ASCEND)
    def k(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = pypto.argsort(x, dim=0)

    x = torch.randn(8, 16)
    with pytest.raises(Exception, match=r"MSORT \(sort, topk, argsort\) along dim 0"):
        k(x, torch.zeros(x.shape, dtype=torch.int64))


def test_a_dynamic_row_length_is_refused_naming_msort(native, pto_isa):
    @pypto.jit(codegen_options=ASCEND)
    def k(x: pypto.Tensor([4, "n"], pypto.DT_FP32), out: pypto.Tensor([4, "n"], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = pypto.argsort(x)

    x = torch.randn(4, 40)
    with pytest.raises(Exception, match=r"MSORT \(sort, topk, argsort\) over a run-time row length"):
        k(x, torch.zeros(x.shape, dtype=torch.int64))
