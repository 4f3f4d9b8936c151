"""pypto.topk, Tensor.topk and pypto.argsort in kernels with dynamic dims
against torch: a dynamic batch of rows and a dynamic sorted dim each
compile once and run through the sort instruction (MSORT) for every size,
tails of the tiles and rows longer than a chunk of positions included.
Values bit for bit, indices as torch's stable sort gives them (ties in
input order, NaN largest, -0.0 tying 0.0); topk's k is checked against a
dynamic row's length at launch."""

import pytest
import torch

import pypto
from test_sorting import long_rows, same_values, stable_topk

D = pypto.DYNAMIC
F32, F16, BF16, I32, I64 = (pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32,
                            pypto.DT_INT64)
TORCH = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, I32: torch.int32}


def assert_compiled_once():
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["traces"] == 1, stats


def rows_of(dtype, rows, n, seed):
    """[rows, n] of `dtype`: long_rows' special values and ties for floats,
    small integers (many ties) with the extremes for DT_INT32."""
    if dtype == I32:
        g = torch.Generator().manual_seed(seed)
        x = torch.randint(-20, 20, (rows, n), generator=g, dtype=torch.int32)
        x.view(-1)[::7] = torch.iinfo(torch.int32).min
        x.view(-1)[3::11] = torch.iinfo(torch.int32).max
        return x
    return long_rows(rows, n, seed).to(TORCH[dtype])


@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_over_a_dynamic_batch_compiles_once(native, dtype, largest):
    @pypto.jit
    def k(x: pypto.Tensor([D, 37], dtype), v: pypto.Tensor([D, 5], dtype),
          i: pypto.Tensor([D, 5], I64)):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 5, largest=largest)

    for b in (1, 6, 13, 40):  # 6, 13: a tail of the 4-row tiles
        x = rows_of(dtype, b, 37, seed=b)
        v, i = torch.zeros(b, 5, dtype=TORCH[dtype]), torch.zeros(b, 5, dtype=torch.int64)
        k(x, v, i)
        want_v, want_i = stable_topk(x, 5, largest=largest)
        same_values(v, want_v)
        same_values(i, want_i)
        # The same elements as torch.topk's unsorted form, in sorted order.
        unsorted = torch.topk(x.float(), 5, largest=largest, sorted=False).values
        same_values(v.float(), unsorted.sort(dim=-1, descending=largest, stable=True).values)
    assert_compiled_once()


@pytest.mark.parametrize("descending", [True, False])
def test_argsort_along_a_dynamic_sorted_dim_compiles_once(native, descending):
    @pypto.jit
    def k(x: pypto.Tensor([3, "n"], F32), out: pypto.Tensor([3, "n"], I64)):
        pypto.set_vec_tile_shapes(2, 16)
        out[:] = pypto.argsort(x, descending=descending)

    # 1 and 3: shorter than a tile; 4097 and 9000: more than one chunk of
    # positions per row (a tail chunk too).
    for n in (1, 3, 40, 700, 4097, 9000):
        x = long_rows(3, n, seed=n)
        out = torch.full((3, n), -1, dtype=torch.int64)
        k(x, out)
        want = torch.sort(x, dim=-1, descending=descending, stable=True).indices
        assert torch.equal(out, want), n
    assert_compiled_once()


def test_topk_along_a_dynamic_sorted_dim_and_k_checked_at_launch(native):
    @pypto.jit
    def k(x: pypto.Tensor([4, "n"], F16), v: pypto.Tensor([4, 3], F16),
          i: pypto.Tensor([4, 3], I64)):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 3)

    for n in (3, 10, 100, 5000):  # 3: k is the whole row
        x = long_rows(4, n, seed=n).half()
        v, i = torch.zeros(4, 3, dtype=torch.float16), torch.zeros(4, 3, dtype=torch.int64)
        k(x, v, i)
        want_v, want_i = stable_topk(x, 3)
        same_values(v, want_v)
        same_values(i, want_i)
    with pytest.raises(ValueError, match=r"pypto.topk: k 3 is out of range \[1, 2\] for dim 1 "
                                         r"\(its size n is 2 at this launch\)"):
        k(torch.zeros(4, 2, dtype=torch.float16), torch.zeros(4, 3, dtype=torch.float16),
          torch.zeros(4, 3, dtype=torch.int64))
    assert_compiled_once()


def test_both_dims_dynamic_and_sorted_along_dim_0(native):
    @pypto.jit
    def k(x: pypto.Tensor(["b", "n"], F32), order: pypto.Tensor(["b", "n"], I64),
          cols: pypto.Tensor(["b", "n"], I64), v: pypto.Tensor(["b", 2], F32),
          i: pypto.Tensor(["b", 2], I64)):
        pypto.set_vec_tile_shapes(4, 8)
        order[:] = pypto.argsort(x, -1, descending=False)
        cols[:] = pypto.argsort(x, 0)
        v[:], i[:] = x.topk(2, largest=False)

    for b, n in ((1, 2), (5, 9), (9, 33), (17, 300)):
        x = long_rows(b, n, seed=b * n)
        order, cols = torch.zeros(b, n, dtype=torch.int64), torch.zeros(b, n, dtype=torch.int64)
        v, i = torch.zeros(b, 2), torch.zeros(b, 2, dtype=torch.int64)
        k(x, order, cols, v, i)
        assert torch.equal(order, torch.sort(x, dim=-1, stable=True).indices)
        assert torch.equal(cols, torch.sort(x, dim=0, descending=True, stable=True).indices)
        want_v, want_i = stable_topk(x, 2, largest=False)
        same_values(v, want_v)
        same_values(i, want_i)
    assert_compiled_once()


def test_ties_nan_and_signed_zeros_keep_torchs_stable_order(native):
    @pypto.jit
    def k(x: pypto.Tensor([D, 12], F32), out: pypto.Tensor([D, 12], I64)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.argsort(x)

    nan, inf = float("nan"), float("inf")
    x = torch.tensor([
        [1.0] * 12,                                                       # all tied
        [nan, 0.0, -0.0, nan, 1.0, -0.0, 0.0, -inf, inf, nan, 1.0, -1.0],
        [-0.0, 0.0] * 6,                                                  # -0.0 ties 0.0
        [nan] * 12,                                                       # NaNs tie
        [3.0, 1.0, 3.0, 2.0, 1.0, 3.0, nan, 2.0, -inf, -inf, 0.5, 0.5],
    ])
    for rows in (x, x[:3], torch.cat([x, x.flip(1)])):
        out = torch.zeros(rows.shape, dtype=torch.int64)
        k(rows, out)
        assert torch.equal(out, torch.sort(rows, dim=-1, descending=True, stable=True).indices)
    assert_compiled_once()


def test_the_sort_instruction_in_a_dynamic_kernel():
    """A kernel with dynamic dims records one sort op (MSORT) and a gather,
    no composed comparison."""
    @pypto.jit
    def k(x: pypto.Tensor(["b", "n"], F32), v: pypto.Tensor(["b", 3], F32),
          i: pypto.Tensor(["b", 3], I64), order: pypto.Tensor(["b", "n"], I64)):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 3)
        order[:] = pypto.argsort(x)

    graph = k.trace(torch.zeros(5, 9), torch.zeros(5, 3), torch.zeros(5, 3, dtype=torch.int64),
                    torch.zeros(5, 9, dtype=torch.int64))
    kinds = [op.kind for op in graph.ops]
    assert kinds.count("sort") == 2 and "gather" in kinds, kinds
    assert not {"eq", "lt", "gt", "where", "sum"} & set(kinds), kinds


def test_a_loop_over_a_dynamic_batch_in_clipped_views(native):
    """topk and argsort of fixed-size views of a dynamic batch, the last
    view clipped (its valid rows fewer than its 4): only the valid rows are
    sorted and written."""
    @pypto.jit
    def k(x: pypto.Tensor(["n", 16], F32), v: pypto.Tensor(["n", 3], F32),
          i: pypto.Tensor(["n", 3], I64), order: pypto.Tensor(["n", 16], I64)):
        pypto.set_vec_tile_shapes(4, 16)
        for b in pypto.loop(pypto.ceildiv(x.shape[0], 4)):
            t = pypto.view(x, [4, 16], [b * 4, 0])
            tv, ti = pypto.topk(t, 3, largest=False)
            v[b * 4:b * 4 + 4, :] = tv
            i[b * 4:b * 4 + 4, :] = ti
            order[b * 4:b * 4 + 4, :] = pypto.argsort(t)

    for n in (4, 7, 13):
        x = long_rows(n, 16, seed=n)
        v, i = torch.zeros(n, 3), torch.zeros(n, 3, dtype=torch.int64)
        order = torch.zeros(n, 16, dtype=torch.int64)
        k(x, v, i, order)
        want_v, want_i = stable_topk(x, 3, largest=False)
        same_values(v, want_v)
        same_values(i, want_i)
        assert torch.equal(order, torch.sort(x, dim=-1, descending=True, stable=True).indices)
    assert_compiled_once()


def test_a_view_with_a_valid_region(native):
    """Sorting a view whose valid_shape is smaller than its shape sorts the
    valid rows; the rows past them are not written."""
    @pypto.jit
    def k(x: pypto.Tensor([8, 16], F32), order: pypto.Tensor([8, 16], I64),
          v: pypto.Tensor([8, 3], F32), i: pypto.Tensor([8, 3], I64)):
        pypto.set_vec_tile_shapes(8, 16)
        t = pypto.view(x, [8, 16], [0, 0], valid_shape=[5, 16])
        order[:] = pypto.argsort(t, -1)
        v[:], i[:] = pypto.topk(t, 3)

    x = long_rows(8, 16, seed=3)
    order = torch.full((8, 16), -7, dtype=torch.int64)
    v, i = torch.full((8, 3), -7.0), torch.full((8, 3), -7, dtype=torch.int64)
    k(x, order, v, i)
    want = torch.sort(x, dim=-1, descending=True, stable=True)
    assert torch.equal(order[:5], want.indices[:5]) and bool((order[5:] == -7).all())
    same_values(v[:5], want.values[:5, :3])
    same_values(i[:5], want.indices[:5, :3])
    assert bool((v[5:] == -7).all()) and bool((i[5:] == -7).all())


def test_sorting_along_a_dim_clipped_by_a_loop_is_a_clear_error():
    @pypto.jit
    def k(x: pypto.Tensor([4, "n"], F32), out: pypto.Tensor([4, "n"], I64)):
        pypto.set_vec_tile_shapes(4, 16)
        for b in pypto.loop(pypto.ceildiv(x.shape[1], 16)):
            out[:, b * 16:b * 16 + 16] = pypto.argsort(pypto.view(x, [4, 16], [0, b * 16]))

    with pytest.raises(pypto.CompileError, match=r"\"sort\": a gather/sort along a dim whose "
                                                 r"extent depends on a loop index"):
        k(torch.zeros(4, 20), torch.zeros(4, 20, dtype=torch.int64))
