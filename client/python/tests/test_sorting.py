"""pypto.topk, Tensor.topk and pypto.argsort (sorting.py) run through
compiled kernels and compared with torch: values bit for bit, indices as
torch's stable sort gives them (ties in input order, NaN largest), through
the sort instruction (MSORT), rows of any length; kernels with dynamic dims
in test_sort_dynamic.py."""

import pytest
import torch

import many_outputs
import pypto

ANY = pypto.Tensor[...]


def run(fns, inputs, outs, tile=(4, 16)):
    return many_outputs.run_many(fns, inputs, outs, tile)


def stable_topk(x, k, dim=-1, largest=True):
    """torch's stable sort cut to k: torch.topk's values with ties in input
    order (torch.topk itself documents no order for ties)."""
    values, indices = torch.sort(x, dim=dim, descending=largest, stable=True)
    return values.narrow(dim, 0, k), indices.narrow(dim, 0, k)


def same_values(got, want):
    """Equal bit for bit (NaN where NaN, whatever its sign; -0.0 where -0.0)."""
    assert got.dtype == want.dtype
    if got.is_floating_point():
        nan = torch.isnan(want)
        assert torch.equal(torch.isnan(got), nan)
        assert torch.equal(torch.signbit(got) & ~nan, torch.signbit(want) & ~nan)
        got, want = got.nan_to_num(0.0), want.nan_to_num(0.0)
    assert torch.equal(got, want), (got, want)


def with_special_values(x):
    x = x.clone()
    x[0, 3] = float("nan")
    x[0, 5] = float("nan")
    x[1, 2] = x[1, 5] = x[1, 7] = 0.5     # ties
    x[2, :] = 1.0                          # a row of ties
    x[3, 0], x[3, 1] = float("inf"), float("-inf")
    x[4, 4], x[4, 6] = -0.0, 0.0
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_topk_and_argsort_match_torch_fp(native, dtype):
    @pypto.jit
    def k(x: ANY, v: ANY, i: ANY, sv: ANY, si: ANY, down: ANY, up: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = x.topk(4)
        sv[:], si[:] = pypto.topk(x, 3, largest=False)
        down[:] = pypto.argsort(x)
        up[:] = pypto.argsort(x, descending=False)

    x = with_special_values(torch.randn(5, 11, generator=torch.Generator().manual_seed(5)))
    x = x.to(dtype)
    i64 = torch.int64
    got = [torch.zeros(5, 4, dtype=dtype), torch.zeros(5, 4, dtype=i64),
           torch.zeros(5, 3, dtype=dtype), torch.zeros(5, 3, dtype=i64),
           torch.zeros(5, 11, dtype=i64), torch.zeros(5, 11, dtype=i64)]
    k(x, *got)
    want = [*stable_topk(x, 4), *stable_topk(x, 3, largest=False),
            torch.sort(x, descending=True, stable=True)[1], torch.argsort(x, stable=True)]
    for g, w in zip(got, want):
        same_values(g, w)
    # torch.topk's values in the same order (torch 1.13 has no FP16 topk on
    # CPU); its order of the tie -0.0, 0.0 is not fixed, so zeros' signs aside.
    if dtype != torch.float16:
        for g, w in ((got[0], torch.topk(x, 4).values),
                     (got[2], torch.topk(x, 3, largest=False).values)):
            assert torch.equal(torch.isnan(g), torch.isnan(w))
            assert torch.equal(g.nan_to_num(0.0), w.nan_to_num(0.0)), (g, w)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int8, torch.uint8])
def test_topk_and_argsort_integers(native, dtype):
    @pypto.jit
    def k(x: ANY, v: ANY, i: ANY, up: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 5)
        up[:] = pypto.argsort(x, descending=False)

    lo = 0 if dtype == torch.uint8 else -100
    x = torch.randint(lo, 100, (3, 13), dtype=dtype)
    x[1, 1] = x[1, 9] = x[1, 4]
    if dtype == torch.int64:
        x[2, 0], x[2, 1] = -2 ** 63, 2 ** 63 - 1
    got = [torch.zeros(3, 5, dtype=dtype), torch.zeros(3, 5, dtype=torch.int64),
           torch.zeros(3, 13, dtype=torch.int64)]
    k(x, *got)
    want = [*stable_topk(x, 5), torch.argsort(x, stable=True)]
    for g, w in zip(got, want):
        same_values(g, w)


def test_topk_and_argsort_along_another_dim_and_rank_3(native):
    @pypto.jit
    def k(x: ANY, v: ANY, i: ANY, a: ANY):
        pypto.set_vec_tile_shapes(2, 4, 8)
        v[:], i[:] = pypto.topk(x, 2, dim=0)
        a[:] = pypto.argsort(x, dim=1)

    x = torch.randn(6, 3, 5)
    x[2, 1, :] = x[4, 1, :]  # ties along dim 0
    got = [torch.zeros(2, 3, 5), torch.zeros(2, 3, 5, dtype=torch.int64),
           torch.zeros(6, 3, 5, dtype=torch.int64)]
    k(x, *got)
    want = [*stable_topk(x, 2, dim=0), torch.sort(x, dim=1, descending=True, stable=True)[1]]
    for g, w in zip(got, want):
        same_values(g, w)


def test_topk_of_a_long_row_and_a_single_element(native):
    x = torch.randn(2, 300)
    one = torch.randn(4, 1)

    @pypto.jit
    def k(x: ANY, one: ANY, v: ANY, i: ANY, v1: ANY, i1: ANY):
        pypto.set_vec_tile_shapes(2, 64)
        v[:], i[:] = pypto.topk(x, 17)
        v1[:], i1[:] = pypto.topk(one, 1)

    v, i = torch.zeros(2, 17), torch.zeros(2, 17, dtype=torch.int64)
    v1, i1 = torch.zeros(4, 1), torch.zeros(4, 1, dtype=torch.int64)
    k(x, one, v, i, v1, i1)
    same_values(v, torch.topk(x, 17).values)
    same_values(i, torch.topk(x, 17).indices)  # no ties in random data
    same_values(v1, one)
    assert torch.equal(i1, torch.zeros(4, 1, dtype=torch.int64))


def test_topk_over_a_dynamic_batch_dim(native):
    @pypto.jit
    def k(x: pypto.Tensor(["b", 9], pypto.DT_FP32), v: pypto.Tensor(["b", 3], pypto.DT_FP32),
          i: pypto.Tensor(["b", 3], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 3)

    pypto.reset_compile_stats()
    for b in (1, 7):
        x = torch.randn(b, 9)
        v, i = torch.zeros(b, 3), torch.zeros(b, 3, dtype=torch.int64)
        k(x, v, i)
        same_values(v, torch.topk(x, 3).values)
        same_values(i, torch.topk(x, 3).indices)
    assert pypto.compile_stats()["compiles"] == 1


def errors_of(fn, x):
    @pypto.jit
    def k(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = fn(x)
    return k


@pytest.mark.parametrize("fn, match", [
    (lambda t: pypto.topk(t, 0)[0], r"pypto.topk: k 0 is out of range \[1, 8\]"),
    (lambda t: pypto.topk(t, 9)[0], r"pypto.topk: k 9 is out of range"),
    (lambda t: pypto.topk(t, 2.0)[0], r"pypto.topk: k must be an int"),
    (lambda t: pypto.topk(t, 2, dim=2)[0], r"pypto.topk: dim 2 is out of range for rank 2"),
    (lambda t: pypto.topk(t, 2, algo="fast")[0], r"pypto.topk: algo must be a pypto.TopKAlgo"),
    (lambda t: pypto.argsort(t, descending=1), r"pypto.argsort: descending must be a bool"),
    (lambda t: pypto.argsort(t.cast(pypto.DT_BOOL)), r"pypto.argsort: argument 'input' has "
                                                     r"dtype DT_BOOL"),
])
def test_bad_arguments_are_clear_errors(fn, match):
    with pytest.raises((TypeError, ValueError), match=match):
        errors_of(fn, None)(torch.zeros(3, 8), torch.zeros(3, 8))


def test_topk_algo_is_accepted(native):
    x = torch.randn(3, 8)
    got = run([lambda t: pypto.topk(t, 2, algo=pypto.TopKAlgo.RADIX_SELECT)[0]], [x],
              [torch.zeros(3, 2)])
    same_values(got[0], torch.topk(x, 2).values)
    # Tensor.topk's keywords.
    got = run([lambda t: t.topk(2, dim=-1, largest=False)[1]], [x],
              [torch.zeros(3, 2, dtype=torch.int64)])
    same_values(got[0], torch.topk(x, 2, largest=False).indices)


def long_rows(rows, n, seed):
    """Random rows with every special value and many ties: NaN, inf, -inf,
    -0.0, 0.0 and values on a coarse grid beside distinct ones."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, n, generator=g)
    grid = torch.rand(rows, n, generator=g) < 0.3
    x[grid] = torch.round(x[grid] * 4) / 4          # ties
    pick = torch.randint(0, 40, (rows, n), generator=g)
    x[pick == 0] = float("nan")
    x[pick == 1] = float("inf")
    x[pick == 2] = float("-inf")
    x[pick == 3] = -0.0
    x[pick == 4] = 0.0
    return x


def test_sort_instruction_program():
    """Static shapes record one sort op (MSORT) and a gather, not the
    composed comparison."""
    @pypto.jit
    def k(x: ANY, v: ANY, i: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 3)

    graph = k.trace(torch.zeros(5, 9), torch.zeros(5, 3), torch.zeros(5, 3, dtype=torch.int64))
    kinds = [op.kind for op in graph.ops]
    assert kinds.count("sort") == 1 and "gather" in kinds and "eq" not in kinds, kinds


@pytest.mark.parametrize("descending", [True, False])
def test_long_rows_match_torch(native, descending):
    n = 10000
    x = long_rows(3, n, 21)

    @pypto.jit
    def k(x: ANY, v1: ANY, i1: ANY, vn: ANY, i_n: ANY, order: ANY):
        pypto.set_vec_tile_shapes(4, 64)
        v1[:], i1[:] = pypto.topk(x, 1, largest=descending)
        vn[:], i_n[:] = pypto.topk(x, n, largest=descending)
        order[:] = pypto.argsort(x, descending=descending)

    i64 = torch.int64
    got = [torch.zeros(3, 1), torch.zeros(3, 1, dtype=i64), torch.zeros(3, n),
           torch.zeros(3, n, dtype=i64), torch.zeros(3, n, dtype=i64)]
    k(x, *got)
    want = [*stable_topk(x, 1, largest=descending), *stable_topk(x, n, largest=descending),
            torch.sort(x, descending=descending, stable=True)[1]]
    for g, w in zip(got, want):
        same_values(g, w)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int32])
def test_long_rows_of_other_dtypes_with_ties(native, dtype):
    n = 5000
    if dtype == torch.int32:
        x = torch.randint(-300, 300, (2, n), dtype=dtype)   # many ties
        x[0, 7], x[1, 9] = -2 ** 31, 2 ** 31 - 1
    else:
        x = long_rows(2, n, 22).to(dtype)                   # rounding makes more ties

    @pypto.jit
    def k(x: ANY, v: ANY, i: ANY, down: ANY, up: ANY):
        pypto.set_vec_tile_shapes(2, 128)
        v[:], i[:] = x.topk(50)
        down[:] = pypto.argsort(x)
        up[:] = pypto.argsort(x, descending=False)

    i64 = torch.int64
    got = [torch.zeros(2, 50, dtype=dtype), torch.zeros(2, 50, dtype=i64),
           torch.zeros(2, n, dtype=i64), torch.zeros(2, n, dtype=i64)]
    k(x, *got)
    want = [*stable_topk(x, 50), torch.sort(x, descending=True, stable=True)[1],
            torch.argsort(x, stable=True)]
    for g, w in zip(got, want):
        same_values(g, w)


def test_a_row_of_65536_along_dim_0(native):
    x = long_rows(2, 65536, 23).T.contiguous()            # sorted along dim 0

    @pypto.jit
    def k(x: ANY, v: ANY, i: ANY, order: ANY):
        pypto.set_vec_tile_shapes(64, 2)
        v[:], i[:] = pypto.topk(x, 100, dim=0, largest=False)
        order[:] = pypto.argsort(x, dim=0)

    got = [torch.zeros(100, 2), torch.zeros(100, 2, dtype=torch.int64),
           torch.zeros(65536, 2, dtype=torch.int64)]
    k(x, *got)
    want = [*stable_topk(x, 100, dim=0, largest=False),
            torch.sort(x, dim=0, descending=True, stable=True)[1]]
    for g, w in zip(got, want):
        same_values(g, w)


def test_eager_runs_sort_the_same(native):
    @pypto.jit
    def k(x: ANY, v: ANY, i: ANY, a: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 3)
        a[:] = pypto.argsort(x, descending=False)

    x = with_special_values(torch.randn(5, 9))
    outs = [torch.zeros(5, 3), torch.zeros(5, 3, dtype=torch.int64),
            torch.zeros(5, 9, dtype=torch.int64)]
    with pypto.debug.eager():
        k(x, *outs)
    want = [*stable_topk(x, 3), torch.argsort(x, stable=True)]
    for g, w in zip(outs, want):
        same_values(g, w)
