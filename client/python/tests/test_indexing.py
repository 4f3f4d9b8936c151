"""The index ops (pypto.gather, index_select, scatter(_), scatter_update,
index_add(_), index_put_, gathermask, Tensor.__getitem__ with a tensor,
pypto.experimental.gather_in_ub/gather_in_l1) against torch: FP32, FP16,
BF16 and INT32 data, INT32 and INT64 indices, shapes that are not multiples
of the tile, repeated indices, and the errors (bad dims, dtypes, shapes,
indices out of range at launch)."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32]


def data(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype in (torch.int32, torch.int64):
        return torch.randint(-1000, 1000, shape, generator=g, dtype=dtype)
    return (torch.randn(shape, generator=g) * 4).to(dtype)


def indices(high, shape, dtype=torch.int64, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, high, shape, generator=g, dtype=dtype)


def kernel(fn, tile):
    """A kernel computing out[:] = fn(*inputs) with vector tile `tile`."""
    def body(a: ANY, b: ANY, out: ANY):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = fn(a, b)

    def body3(a: ANY, b: ANY, c: ANY, out: ANY):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = fn(a, b, c)
    return pypto.jit(body), pypto.jit(body3)


def run(fn, inputs, out_shape, out_dtype, tile=(4, 8)):
    k2, k3 = kernel(fn, tile)
    out = torch.zeros(out_shape, dtype=out_dtype)
    (k2 if len(inputs) == 2 else k3)(*inputs, out)
    return out


def assert_same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got, want), f"got {got}\nwant {want}"


# gather ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_matches_torch(native, dtype, dim):
    x = data((13, 21), dtype)
    ishape = (9, 17) if dim == 0 else (11, 30)
    idx = indices(x.shape[dim], ishape)
    got = run(lambda a, i: pypto.gather(a, dim, i), [x, idx], ishape, dtype)
    assert_same(got, torch.gather(x, dim, idx))


@pytest.mark.parametrize("idx_dtype", [torch.int32, torch.int64])
def test_gather_3d_middle_dim_and_method(native, idx_dtype):
    x = data((3, 10, 7), torch.float32)
    idx = indices(10, (3, 5, 7), idx_dtype)
    got = run(lambda a, i: a.gather(1, i), [x, idx], (3, 5, 7), torch.float32,
              tile=(2, 4, 4))
    assert_same(got, torch.gather(x, 1, idx.long()))


def test_gather_special_values_move_bit_exact(native):
    x = torch.tensor([[float("nan"), float("inf"), -0.0, -float("inf"), 1e-40, 3.0]])
    idx = torch.tensor([[5, 4, 3, 2, 1, 0, 2, 2]])
    got = run(lambda a, i: pypto.gather(a, 1, i), [x, idx], (1, 8), torch.float32)
    want = torch.gather(x, 1, idx)
    assert (got.view(torch.int32) == want.view(torch.int32)).all()


def test_gather_of_a_computed_tensor_and_into_more_math(native):
    x = data((8, 16), torch.float32)
    idx = indices(16, (8, 16))
    got = run(lambda a, i: pypto.gather(a * 2 + 1, 1, i).exp(), [x, idx], (8, 16),
              torch.float32)
    want = torch.gather(x * 2 + 1, 1, idx).exp()
    torch.testing.assert_close(got, want, rtol=1e-6, atol=0)


def test_gather_of_a_view(native):
    x = data((10, 12), torch.float32)
    idx = indices(6, (4, 6))
    got = run(lambda a, i: pypto.gather(a[2:6, 3:9], 1, i), [x, idx], (4, 6),
              torch.float32)
    assert_same(got, torch.gather(x[2:6, 3:9], 1, idx))


# index_select, x[t] ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_matches_torch(native, dtype, dim):
    x = data((19, 37), dtype)
    idx = indices(x.shape[dim], (11,), torch.int32)
    shape = list(x.shape)
    shape[dim] = 11
    got = run(lambda a, i: pypto.index_select(a, dim, i), [x, idx], shape, dtype)
    assert_same(got, torch.index_select(x, dim, idx))


def test_index_select_3d_each_dim(native):
    x = data((5, 6, 7), torch.float16)
    for dim in range(3):
        idx = indices(x.shape[dim], (4,), seed=dim)
        shape = list(x.shape)
        shape[dim] = 4
        got = run(lambda a, i: a.index_select(dim, i), [x, idx], shape, torch.float16,
                  tile=(2, 4, 8))
        assert_same(got, torch.index_select(x, dim, idx))


def test_getitem_with_a_tensor_gathers_rows(native):
    x = data((9, 5), torch.float32)
    idx = indices(9, (2, 3))
    got = run(lambda a, i: a[i], [x, idx], (2, 3, 5), torch.float32, tile=(2, 2, 8))
    assert_same(got, x[idx])


def test_gathermask_patterns(native):
    x = data((6, 19), torch.float32)
    for mode, (period, start) in {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2),
                                  6: (4, 3), 7: (1, 0)}.items():
        want = x[:, start::period]
        got = run(lambda a, _: pypto.gathermask(a, mode), [x, x], want.shape,
                  torch.float32)
        assert_same(got, want)


# scatter ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter_matches_torch(native, dtype, reduce):
    x = data((7, 13), dtype)
    # Distinct indices per row (a permutation's prefix): torch leaves the
    # winner of a repeated index unspecified for reduce=None.
    idx = torch.stack([torch.randperm(13, generator=torch.Generator().manual_seed(r))[:9]
                       for r in range(6)])
    src = data((6, 11), dtype, seed=2)
    if dtype == torch.int32 and reduce == "multiply":
        src = src % 7
    got = run(lambda a, i, s: pypto.scatter(a, 1, i, s, reduce=reduce), [x, idx, src],
              (7, 13), dtype)
    want = x.scatter(1, idx, src) if reduce is None else x.scatter(1, idx, src, reduce=reduce)
    assert_same(got, want)


def test_scatter_add_with_repeated_indices_accumulates(native):
    x = torch.zeros(5, 4)
    idx = torch.tensor([[0, 1, 2, 3], [0, 1, 2, 3], [4, 4, 4, 4], [0, 0, 0, 0]])
    src = data((4, 4), torch.float32)
    got = run(lambda a, i, s: pypto.scatter(a, 0, i, s, reduce=pypto.ScatterMode.ADD),
              [x, idx, src], (5, 4), torch.float32, tile=(2, 2))
    torch.testing.assert_close(got, x.scatter_add(0, idx, src), rtol=1e-6, atol=1e-6)


def test_scatter_scalar_src_and_element(native):
    x = data((4, 9), torch.float32)
    idx = indices(9, (4, 3))
    got = run(lambda a, i: pypto.scatter(a, 1, i, 2.5), [x, idx], (4, 9), torch.float32)
    assert_same(got, x.scatter(1, idx, 2.5))
    got = run(lambda a, i: a.scatter(1, i, pypto.Element(pypto.DT_FP32, -1.0)), [x, idx],
              (4, 9), torch.float32)
    assert_same(got, x.scatter(1, idx, -1.0))


def test_scatter_in_place_on_an_argument(native):
    @pypto.jit
    def k(x: ANY, i: ANY, s: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        x.scatter_(1, i, s, reduce="add")

    x = data((6, 10), torch.float32)
    want = x.clone()
    idx = indices(10, (6, 10))
    src = data((6, 10), torch.float32, seed=5)
    k(x, idx, src)
    torch.testing.assert_close(x, want.scatter_add(1, idx, src), rtol=1e-6, atol=1e-5)


def test_scatter_then_read_orders_the_tasks(native):
    # The scatter's result is read by an elementwise op: every task of the
    # scatter must finish first (its writes may land anywhere).
    x = torch.zeros(16, 32)
    idx = indices(16, (16, 32))
    src = data((16, 32), torch.float32)
    got = run(lambda a, i, s: pypto.scatter(a, 0, i, s, reduce="add") * 2, [x, idx, src],
              (16, 32), torch.float32, tile=(4, 8))
    torch.testing.assert_close(got, x.scatter_add(0, idx, src) * 2, rtol=1e-5, atol=1e-5)


# index_add, index_put_, scatter_update ----------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1])
def test_index_add_matches_torch(native, dtype, dim):
    x = data((9, 14), dtype)
    idx = torch.tensor([3, 0, 3, 8 if dim == 0 else 13, 1])  # 3 repeats
    sshape = list(x.shape)
    sshape[dim] = 5
    src = data(sshape, dtype, seed=3)
    alpha = 2 if dtype == torch.int32 else 0.5
    got = run(lambda a, i, s: pypto.index_add(a, dim, i, s, alpha=alpha), [x, idx, src],
              x.shape, dtype)
    want = x.index_add(dim, idx, src, alpha=alpha)
    if dtype in (torch.float16, torch.bfloat16):  # torch's order of the two adds may differ
        torch.testing.assert_close(got.float(), want.float(), rtol=1e-2, atol=1e-2)
    else:
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_index_add_in_place_and_ub_variants(native):
    @pypto.jit
    def k(x: ANY, i: ANY, s: ANY, y: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        x.index_add_(0, i, s)
        y[:] = pypto.index_add_ub(s, 0, pypto.arange(0, 3, dtype=pypto.DT_INT32), s)
        pypto.index_add__ub(y, 0, pypto.arange(0, 3, dtype=pypto.DT_INT32), s)

    x = data((5, 6), torch.float32)
    want = x.clone().index_add(0, torch.tensor([4, 0, 4]), data((3, 6), torch.float32, 7))
    s = data((3, 6), torch.float32, 7)
    y = torch.zeros(3, 6)
    k(x, torch.tensor([4, 0, 4], dtype=torch.int32), s, y)
    torch.testing.assert_close(x, want)
    torch.testing.assert_close(y, 3 * s)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_matches_torch(native, accumulate):
    @pypto.jit
    def k(x: ANY, i: ANY, v: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (i,), v, accumulate=accumulate)

    x = data((7, 5), torch.float32)
    idx = torch.tensor([6, 2, 0, 2] if accumulate else [6, 2, 0])
    v = data((len(idx), 5), torch.float32, seed=4)
    want = x.clone().index_put_((idx,), v, accumulate=accumulate)
    k(x, idx, v)
    torch.testing.assert_close(x, want)


def test_scatter_update_paged_cache(native):
    @pypto.jit
    def k(cache: ANY, i: ANY, kv: ANY):
        pypto.set_vec_tile_shapes(2, 4, 16)
        cache[:] = pypto.scatter_update(cache, -2, i, kv)

    blocks, block_size, h = 4, 8, 16
    cache = data((blocks, block_size, h), torch.float16)
    slots = torch.tensor([[3, 17], [30, 8]], dtype=torch.int32)
    kv = data((4, h), torch.float16, seed=9)
    want = cache.clone().reshape(blocks * block_size, h)
    want[slots.flatten().long()] = kv
    k(cache, slots, kv)
    assert_same(cache, want.reshape(blocks, block_size, h))


def test_gather_in_ub_and_l1_paged_rows(native):
    block_size, h = 4, 8
    param = data((6 * block_size, h), torch.float32)
    table = torch.tensor([[5, 2, 0]], dtype=torch.int32)
    pos = torch.tensor([[0, 5, 11, 3, 9]], dtype=torch.int32)
    p = pos.flatten().long()
    rows = table.flatten().long()[p // block_size] * block_size + p % block_size
    want = param[rows]

    @pypto.jit
    def ub(p: ANY, i: ANY, t: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.experimental.gather_in_ub(p, i, t, block_size, 0)

    @pypto.jit
    def l1(p: ANY, i: ANY, t: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.experimental.gather_in_l1(p, i, t, block_size, 3, False, True)

    out = torch.zeros(5, h)
    ub(param, pos, table, out)
    assert_same(out, want)
    out_t = torch.zeros(h, 3)
    l1(param, pos, table, out_t)
    assert_same(out_t, want[:3].T.contiguous())


# errors ----------------------------------------------------------------------------

def put_in_order(x, idx, values, accumulate):
    """x.index_put_(idx, values, accumulate) one position at a time in the
    indices' broadcast shape's row-major order (the last write wins)."""
    x = x.clone()
    idx = torch.broadcast_tensors(*[i.long() for i in idx])
    k = len(idx)
    values = torch.as_tensor(values, dtype=x.dtype).expand(*idx[0].shape, *x.shape[k:])
    for b in np.ndindex(*idx[0].shape):
        at = tuple(int(i[b]) for i in idx)
        if accumulate:
            x[at] += values[b]
        else:
            x[at] = values[b]
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_with_several_index_tensors_matches_torch(native, dtype, accumulate):
    # x[i[b], j[b], :] for b over the broadcast shape [3, 4] of i [3, 1]
    # (INT64) and j [4] (INT32), negative indices from the end; values
    # [3, 4, 5]. Distinct positions: torch's result.
    @pypto.jit
    def k(x: ANY, i: ANY, j: ANY, v: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (i, j), v, accumulate=accumulate)

    x = data((6, 7, 5), dtype)
    i = torch.tensor([[0], [-1], [3]])
    j = torch.tensor([1, -7, 6, 2], dtype=torch.int32)
    v = data((3, 4, 5), dtype, seed=4)
    want = x.clone().index_put_((i, j.long()), v, accumulate=accumulate)
    k(x, i, j, v)
    assert_same(x, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_repeated_positions_combine_in_order(native, dtype, accumulate):
    # Every dim indexed (k = rank: single elements), repeated positions: the
    # last write wins in the indices' row-major order, accumulate adds all
    # (torch's result where it is defined: accumulate, or one write each).
    @pypto.jit
    def k(x: ANY, i: ANY, j: ANY, v: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, [i, j], v, accumulate=accumulate)

    x = data((5, 9), dtype)
    i = torch.tensor([4, 0, 4, -1, 2, 0, 4], dtype=torch.int32)
    j = torch.tensor([8, 3, 8, -1, 0, 3, 8], dtype=torch.int32)
    v = data((7,), dtype, seed=5)
    want = put_in_order(x, (i, j), v, accumulate)
    if accumulate:
        torch.testing.assert_close(want, x.clone().index_put_((i.long(), j.long()), v,
                                                              accumulate=True))
    eager = x.clone()
    k(x, i, j, v)
    assert_same(x, want)
    with pypto.debug.eager():  # the reference, in the same order
        k(eager, i, j, v)
    assert_same(eager, want)


def test_index_put_broadcasts_values_and_leads_with_two_dim_indices(native):
    # Index tensors of rank 2 (B = [2, 3]) into the first two of three dims;
    # values a row of input.shape[2:], and a number accumulated.
    @pypto.jit
    def k(x: ANY, i: ANY, j: ANY, v: ANY, y: ANY):
        pypto.set_vec_tile_shapes(2, 4, 8)
        pypto.index_put_(x, (i, j), v)
        pypto.index_put_(y, (i, j), 0.25, accumulate=True)

    x, y = data((4, 3, 6), torch.float32), data((4, 3, 6), torch.float32, seed=2)
    i = torch.tensor([[3, 0, 1], [2, 2, 0]])
    j = torch.tensor([[0, 2, 1], [1, 0, 0]])
    v = torch.tensor([1.0, -0.0, float("nan"), float("inf"), 5.0, -2.0])
    want_x = x.clone().index_put_((i, j), v)
    want_y = y.clone().index_put_((i, j), torch.tensor(0.25), accumulate=True)
    k(x, i, j, v, y)
    assert (x.view(torch.int32) == want_x.view(torch.int32)).all()
    torch.testing.assert_close(y, want_y)


def test_index_put_indexes_every_dim_of_rank_1_and_rank_3_inputs(native):
    # k = rank: single elements; a rank-1 input indexed by a 2-D index
    # (accumulating repeats), a rank-3 one by three 2-D INT32 indices.
    @pypto.jit
    def k(x: ANY, i: ANY, y: ANY, j: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (i,), 3.0, accumulate=True)
        pypto.index_put_(y, (j, j, j), 5.0)

    x, y = data((10,), torch.float32), data((3, 3, 3), torch.float32, seed=2)
    i = torch.tensor([[1, -1], [1, 3]])
    j = torch.tensor([[0, 2], [-1, 1]], dtype=torch.int32)
    want_x = x.clone().index_put_((i,), torch.tensor(3.0), accumulate=True)
    want_y = y.clone().index_put_((j.long(),) * 3, torch.tensor(5.0))
    k(x, i, y, j)
    assert_same(x, want_x)
    assert_same(y, want_y)


def test_index_put_negative_index_wraps_and_out_of_range_is_an_index_error(native):
    @pypto.jit
    def k(x: ANY, i: ANY, j: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (i,), 1.0)
        pypto.index_put_(x, (i, j), 2.0)

    x = torch.zeros(4, 6)
    i, j = torch.tensor([-4, 2]), torch.tensor([-6, 5])
    want = torch.zeros(4, 6).index_put_((i,), torch.tensor(1.0))
    want.index_put_((i, j), torch.tensor(2.0))
    k(x, i, j)
    assert_same(x, want)
    for bad_i, bad_j, match in ((4, 0, r"index 4 at \[1\] of argument 'i'.*dim 0 with size 4"),
                                (-5, 0, r"index -5 at \[1\] of argument 'i'.*dim 0 with size 4"),
                                (0, 6, r"index 6 at \[1\] of argument 'j'.*dim 1 with size 6"),
                                (0, -7, r"index -7 at \[1\] of argument 'j'.*dim 1 with "
                                        r"size 6")):
        with pytest.raises(IndexError, match=match):
            k(torch.zeros(4, 6), torch.tensor([0, bad_i]), torch.tensor([0, bad_j]))


def test_index_put_computed_indices_out_of_range_write_nothing(native):
    # Indices the kernel computes are not checked at launch: a position with
    # any index outside [-size, size) writes nothing (it never lands on
    # another row through the linear position).
    @pypto.jit
    def k(x: ANY, i: ANY, j: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (i + 1, j * 2), 9.0)

    x = data((3, 4), torch.float32)
    i = torch.tensor([0, 2, -5, 1, -1])   # + 1: 1, 3 (out), -4 (out), 2, 0
    j = torch.tensor([1, 0, 0, -2, 2])    # * 2: 2, 0, 0, -4 (wraps to 0), 4 (out)
    want = x.clone()
    want[1, 2] = 9.0
    want[2, 0] = 9.0
    k(x, i, j)
    assert_same(x, want)


@pytest.mark.parametrize("indices_of,error,match", [
    (lambda i: (i, i, i), IndexError, "3 index tensors for a tensor of rank 2"),
    (lambda i: (), ValueError, "indices is empty"),
    (lambda i: i, TypeError, "must be a tuple or list"),
    (lambda i: (i, 1), TypeError, r"indices\[1\] must be a Tensor"),
    (lambda i: (i, i[:2]), ValueError, "do not broadcast"),
    (lambda i: (i > 0,), IndexError, r"the mask has shape \[3\]; it must match input's first 1 "
                                     r"dims \[4\]"),
    (lambda i: (i > 0, i), TypeError, "a DT_BOOL mask must be the only index tensor"),
])
def test_index_put_bad_indices_are_clear_errors(native, indices_of, error, match):
    @pypto.jit
    def k(x: ANY, i: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, indices_of(i), 1.0)

    with pytest.raises(error, match=match):
        k(torch.zeros(4, 6), torch.tensor([0, 1, 2]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_with_a_bool_mask_matches_torch(native, dtype, accumulate):
    # torch's x[mask] = v: a mask over the first dim (values a row of the
    # other dims, a [1, ...] row, or a number) and over both dims.
    @pypto.jit
    def k(x: ANY, y: ANY, z: ANY, m: ANY, m2: ANY, row: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (m,), row, accumulate=accumulate)
        pypto.index_put_(y, [m2], 3, accumulate=accumulate)
        pypto.index_put_(z, (m,), pypto.unsqueeze(row, 0), accumulate=accumulate)

    x, y, z = data((6, 10), dtype), data((6, 10), dtype, seed=2), data((6, 10), dtype, seed=3)
    m = torch.tensor([True, False, True, True, False, False])
    m2 = data((6, 10), torch.float32, seed=4) > 0
    row = data((10,), dtype, seed=5)
    want_x = x.clone().index_put_((m,), row, accumulate=accumulate)
    want_y = y.clone().index_put_((m2,), torch.tensor(3, dtype=dtype), accumulate=accumulate)
    want_z = z.clone().index_put_((m,), row[None], accumulate=accumulate)
    k(x, y, z, m, m2, row)
    assert_same(x, want_x)
    assert_same(y, want_y)
    assert_same(z, want_z)


def test_index_put_with_a_mask_and_one_value_per_true_element_is_a_clear_error(native):
    @pypto.jit
    def k(x: ANY, m: ANY, v: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (m,), v)

    with pytest.raises(ValueError, match="one value per True element depends on the data"):
        k(torch.zeros(4, 6), torch.tensor([True, False, True, False]), torch.zeros(2, 6))


def test_index_put_values_of_the_wrong_shape_is_a_clear_error(native):
    @pypto.jit
    def k(x: ANY, i: ANY, v: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (i, i), v)

    with pytest.raises(ValueError, match=r"pypto.index_put_: .*\[3, 4\]"):
        k(torch.zeros(4, 6, 5), torch.tensor([0, 1, 2]), torch.zeros(3, 4))


def test_out_of_range_index_argument_is_an_index_error_at_launch(native):
    x = data((4, 6), torch.float32)
    k, _ = kernel(lambda a, i: pypto.gather(a, 1, i), (4, 8))
    out = torch.zeros(4, 3)
    for bad in (6, -1):
        idx = torch.tensor([[0, 1, 2]] * 4)
        idx[2, 1] = bad
        with pytest.raises(IndexError, match=rf"index {bad} at \[2, 1\].*dim 1 with size 6"):
            k(x, idx, out)
    k(x, torch.tensor([[5, 0, 1]] * 4), out)  # in range: runs, on every later call too
    with pytest.raises(IndexError):
        k(x, torch.tensor([[6, 0, 1]] * 4), out)


def test_out_of_range_computed_index_reads_zero_and_writes_nothing(native):
    # An index the kernel computes is not checked at launch; the kernel's
    # guard keeps it inside the tensor: a gather reads 0, a scatter skips it.
    x = data((3, 5), torch.float32)
    idx = torch.tensor([[0, 4, 2]] * 3)
    got = run(lambda a, i: pypto.gather(a, 1, i + 3), [x, idx], (3, 3), torch.float32)
    want = torch.zeros(3, 3)
    want[:, 0] = x[:, 3]
    assert_same(got, want)
    got = run(lambda a, i: pypto.scatter(a, 1, i + 3, 7.0), [x, idx], (3, 5), torch.float32)
    want = x.clone()
    want[:, 3] = 7.0
    assert_same(got, want)


@pytest.mark.parametrize("call,error,match", [
    (lambda a, i: pypto.gather(a, 2, i), ValueError, "dim 2 is out of range"),
    (lambda a, i: pypto.gather(a, 1, a), TypeError, "DT_INT32 or DT_INT64"),
    (lambda a, i: pypto.index_select(a, 0, i), ValueError, "must have one dim"),
    (lambda a, i: pypto.scatter(a, 1, i, 1.0, reduce="max"), ValueError, "reduce must be"),
    (lambda a, i: pypto.gathermask(a, 8), ValueError, "pattern_mode must be 1..7"),
])
def test_bad_arguments_are_clear_errors(native, call, error, match):
    k, _ = kernel(call, (4, 8))
    with pytest.raises(error, match=match):
        k(data((4, 6), torch.float32), indices(6, (4, 3)), torch.zeros(4, 6))


def test_gather_index_larger_than_input_is_an_error(native):
    k, _ = kernel(lambda a, i: pypto.gather(a, 1, i), (4, 8))
    with pytest.raises(ValueError, match="index dim 0 is larger"):
        k(data((4, 6), torch.float32), indices(6, (5, 3)), torch.zeros(5, 3))


def test_index_ops_over_a_partial_valid_region(native):
    # A view with valid_shape [3, 8] of shape [4, 8]: each op's result is
    # valid where torch's on the valid rows is (out[:] writes only that);
    # index_put_ on such a view is refused by name.
    @pypto.jit
    def k(x: ANY, i: ANY, j: ANY, g: ANY, sel: ANY, sc: ANY, add: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        v = pypto.view(x, [4, 8], [0, 0], valid_shape=[3, 8])
        g[:] = pypto.gather(v, 1, i)
        sel[:] = pypto.index_select(v, 1, j)
        sc[:] = pypto.scatter(v, 1, i, -1.5)
        add[:] = pypto.index_add(v, 0, j[:2], v[:2, :] * 2)

    x = data((4, 8), torch.float32)
    i = indices(8, (4, 8))
    j = torch.tensor([2, 0, 7])
    outs = [torch.full((4, 8), 9.0), torch.full((4, 3), 9.0), torch.full((4, 8), 9.0),
            torch.full((4, 8), 9.0)]
    k(x, i, j, *outs)
    v = x[:3]
    wants = [torch.gather(v, 1, i[:3]), torch.index_select(v, 1, j),
             v.scatter(1, i[:3], -1.5), v.index_add(0, j[:2], v[:2] * 2)]
    for got, want in zip(outs, wants):
        assert_same(got[:3], want)
        assert (got[3] == 9.0).all()

    @pypto.jit
    def put(x: ANY, i: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(pypto.view(x, [4, 8], [0, 0], valid_shape=[3, 8]), (i,), 1.0)

    with pytest.raises(NotImplementedError,
                       match=r"pypto.index_put_ of 'input' with shape \[4, 8\] and valid "
                             r"shape \[3, 8\].*this op does not"):
        put(torch.zeros(4, 8), torch.zeros(2, dtype=torch.int64))


def test_eager_runs_the_index_ops_through_the_reference(native):
    @pypto.jit
    def k(x: ANY, i: ANY, j: ANY, s: ANY, g: ANY, y: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        g[:] = pypto.gather(x, 1, i)
        y[:] = pypto.index_add(pypto.scatter(x, 1, i, 1.5, reduce="multiply"), 0, j, s)

    x = data((5, 7), torch.float32)
    i = indices(7, (5, 3))
    j = torch.tensor([4, 1, 4], dtype=torch.int32)
    s = data((3, 7), torch.float32, seed=8)
    g, y = torch.zeros(5, 3), torch.zeros(5, 7)
    with pypto.debug.eager():
        k(x, i, j, s, g, y)
    assert_same(g, torch.gather(x, 1, i))
    want = x.scatter(1, i, 1.5, reduce="multiply").index_add(0, j.long(), s)
    torch.testing.assert_close(y, want)
    with pypto.debug.eager(), pytest.raises(Exception, match="out of bounds for dim 1"):
        k(x, i + 7, j, s, g, y)


def test_index_results_feed_concat_assemble_and_matmul(native):
    @pypto.jit
    def k(x: ANY, i: ANY, w: ANY, c: ANY, out: ANY, m: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.set_cube_tile_shapes([8, 8], [8, 8], [8, 8])
        g = pypto.gather(x, 1, i)
        c[:] = pypto.concat([g, pypto.index_select(x, 1, i[0])], 0)
        out[2:6, :] = g
        m[:] = pypto.matmul(g, w, pypto.DT_FP32)

    x = data((4, 9), torch.float32)
    i = indices(9, (4, 6))
    w = data((6, 5), torch.float32, seed=11)
    c, out, m = torch.zeros(8, 6), torch.ones(6, 6), torch.zeros(4, 5)
    k(x, i, w, c, out, m)
    g = torch.gather(x, 1, i)
    assert_same(c, torch.cat([g, torch.index_select(x, 1, i[0])], 0))
    want = torch.ones(6, 6)
    want[2:6] = g
    assert_same(out, want)
    torch.testing.assert_close(m, g @ w, rtol=1e-5, atol=1e-5)


def test_index_ops_in_a_loop_over_views_and_a_carried_tensor(native):
    @pypto.jit
    def k(x: ANY, i: ANY, j: ANY, s: ANY, out: ANY, acc: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        for b in pypto.loop(0, 3, 1):
            out[b:b + 1, :] = pypto.gather(x[b:b + 1, :], 1, i[b:b + 1, :])
            acc.index_add_(0, j[b], s[b])

    x = data((3, 9), torch.float32)
    i = indices(9, (3, 6))
    j = indices(5, (3, 4), seed=4)
    s = data((3, 4, 7), torch.float32, seed=6)
    out, acc = torch.zeros(3, 6), torch.zeros(5, 7)
    k(x, i, j, s, out, acc)
    assert_same(out, torch.gather(x, 1, i))
    want = torch.zeros(5, 7)
    for b in range(3):
        want.index_add_(0, j[b], s[b])
    torch.testing.assert_close(acc, want)


def test_index_put_broadcasts_a_row_and_a_number(native):
    @pypto.jit
    def k(x: ANY, i: ANY, v: ANY, y: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (i,), v)
        pypto.index_put_(y, [i], -2.5, accumulate=True)

    x, y = data((6, 5), torch.float32), data((6, 5), torch.float32, seed=3)
    i = torch.tensor([5, 0, 3])
    v = torch.tensor([1.0, -0.0, float("nan"), 4.0, 5.0])
    want_x = x.clone().index_put_((i,), v)
    want_y = y.clone().index_put_((i,), torch.tensor(-2.5), accumulate=True)
    k(x, i, v, y)
    assert (x.view(torch.int32) == want_x.view(torch.int32)).all()
    torch.testing.assert_close(y, want_y)
