"""The index ops in kernels with dynamic dims against torch: one trace and
one compile serve every run-time size (a dynamic batch, a dynamic number
of indices or rows), tails of the tiles included, and an index argument
is checked at launch against the size of that launch."""

import pytest
import torch

import pypto
from test_indexing import data, indices

D = pypto.DYNAMIC
F32, F16, I32, I64 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_INT32, pypto.DT_INT64


def assert_compiled_once():
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["traces"] == 1, stats


def test_index_select_over_a_dynamic_batch_compiles_once(native):
    @pypto.jit
    def k(x: pypto.Tensor([D, 24], F32), i: pypto.Tensor(["m"], I32),
          out: pypto.Tensor(["m", 24], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.index_select(x, 0, i)

    for n, m in ((5, 3), (9, 13), (33, 1), (1000, 40)):  # 1000: above the compile's probes
        x = data((n, 24), torch.float32, seed=n)
        i = indices(n, (m,), torch.int32, seed=m)
        out = torch.full((m, 24), float("nan"))
        k(x, i, out)
        assert torch.equal(out, torch.index_select(x, 0, i))
    assert_compiled_once()


def test_index_select_along_a_static_dim_of_a_dynamic_batch(native):
    @pypto.jit
    def k(x: pypto.Tensor([D, 19], F16), i: pypto.Tensor([7], I64),
          out: pypto.Tensor([D, 7], F16)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x.index_select(1, i)

    i = indices(19, (7,))
    for n in (1, 6, 21):
        x = data((n, 19), torch.float16, seed=n)
        out = torch.zeros(n, 7, dtype=torch.float16)
        k(x, i, out)
        assert torch.equal(out, torch.index_select(x, 1, i))
    assert_compiled_once()


def test_index_ops_along_a_dynamic_inner_dim(native):
    @pypto.jit
    def k(x: pypto.Tensor([6, "n"], F32), i: pypto.Tensor(["m"], I32),
          rows: pypto.Tensor([6, "m"], F32), out: pypto.Tensor([6, "n"], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        r = pypto.index_select(x, 1, i)
        rows[:] = r
        out[:] = pypto.index_add(x, 1, i, r * 2)

    for n, m in ((3, 7), (20, 9), (700, 30)):
        x = data((6, n), torch.float32, seed=n)
        i = indices(n, (m,), torch.int32, seed=m)
        rows, out = torch.zeros(6, m), torch.zeros(6, n)
        k(x, i, rows, out)
        assert torch.equal(rows, x[:, i.long()])
        torch.testing.assert_close(out, x.index_add(1, i, x[:, i.long()] * 2), rtol=1e-6,
                                   atol=1e-5)
    assert_compiled_once()


@pytest.mark.parametrize("dim", [0, 1])
def test_gather_over_a_dynamic_batch_compiles_once(native, dim):
    @pypto.jit
    def k(x: pypto.Tensor([D, 12], F32), i: pypto.Tensor([D, 5], I64),
          out: pypto.Tensor([D, 5], F32)):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = pypto.gather(x, dim, i)

    for n in (3, 10, 17):
        x = data((n, 12), torch.float32, seed=n)
        i = indices(n if dim == 0 else 12, (n, 5), seed=n + 1)
        out = torch.zeros(n, 5)
        k(x, i, out)
        assert torch.equal(out, torch.gather(x, dim, i))
    assert_compiled_once()


def test_scatter_update_into_a_paged_cache_with_a_dynamic_token_count(native):
    blocks, block_size, h = 6, 8, 16

    @pypto.jit
    def k(cache: pypto.Tensor([blocks, block_size, h], F16),
          slots: pypto.Tensor(["tokens"], I32), kv: pypto.Tensor(["tokens", h], F16)):
        pypto.set_vec_tile_shapes(2, 4, 16)
        cache[:] = pypto.scatter_update(cache, -2, slots, kv)

    for tokens in (1, 5, 13, 30):
        cache = data((blocks, block_size, h), torch.float16)
        g = torch.Generator().manual_seed(tokens)
        slots = torch.randperm(blocks * block_size, generator=g)[:tokens].to(torch.int32)
        kv = data((tokens, h), torch.float16, seed=tokens)
        want = cache.clone().reshape(blocks * block_size, h)
        want[slots.long()] = kv
        k(cache, slots, kv)
        assert torch.equal(cache, want.reshape(blocks, block_size, h))
    assert_compiled_once()


def test_scatter_update_into_a_cache_with_a_dynamic_number_of_blocks(native):
    block_size, h = 4, 8

    @pypto.jit
    def k(cache: pypto.Tensor(["blocks", block_size, h], F32),
          slots: pypto.Tensor(["tokens"], I64), kv: pypto.Tensor(["tokens", h], F32),
          out: pypto.Tensor(["blocks", block_size, h], F32)):
        pypto.set_vec_tile_shapes(2, 4, 8)
        out[:] = pypto.scatter_update(cache, -2, slots, kv)

    for blocks, tokens in ((2, 3), (5, 11), (300, 20)):
        cache = data((blocks, block_size, h), torch.float32, seed=blocks)
        g = torch.Generator().manual_seed(tokens)
        slots = torch.randperm(blocks * block_size, generator=g)[:tokens]
        kv = data((tokens, h), torch.float32, seed=tokens)
        want = cache.clone().reshape(blocks * block_size, h)
        want[slots] = kv
        out = torch.zeros_like(cache)
        k(cache, slots, kv, out)
        assert torch.equal(out, want.reshape(blocks, block_size, h))
    assert_compiled_once()


def test_index_add_with_a_dynamic_number_of_rows(native):
    @pypto.jit
    def k(x: pypto.Tensor([9, 20], F32), i: pypto.Tensor(["rows"], I64),
          src: pypto.Tensor(["rows", 20], F32), out: pypto.Tensor([9, 20], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.index_add(x, 0, i, src, alpha=2)

    x = data((9, 20), torch.float32)
    for rows in (1, 6, 23):
        i = indices(9, (rows,), seed=rows)  # repeated indices accumulate
        src = data((rows, 20), torch.float32, seed=rows + 1)
        out = torch.zeros(9, 20)
        k(x, i, src, out)
        torch.testing.assert_close(out, x.index_add(0, i, src, alpha=2), rtol=1e-6,
                                   atol=1e-5)
    assert_compiled_once()


def test_index_add_in_place_into_a_dynamic_tensor(native):
    @pypto.jit
    def k(x: pypto.Tensor([D, 8], I32), i: pypto.Tensor([5], I32),
          src: pypto.Tensor([D, 5], I32)):
        pypto.set_vec_tile_shapes(4, 4)
        x.index_add_(1, i, src)

    i = torch.tensor([7, 0, 7, 3, 1], dtype=torch.int32)
    for n in (2, 7, 12):
        x = data((n, 8), torch.int32, seed=n)
        src = data((n, 5), torch.int32, seed=n + 1)
        want = x.index_add(1, i, src)
        k(x, i, src)
        assert torch.equal(x, want)
    assert_compiled_once()


@pytest.mark.parametrize("reduce", [None, "add"])
def test_scatter_over_a_dynamic_batch(native, reduce):
    @pypto.jit
    def k(x: pypto.Tensor([D, 10], F32), i: pypto.Tensor([D, 3], I64),
          src: pypto.Tensor([D, 3], F32), out: pypto.Tensor([D, 10], F32)):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = pypto.scatter(x, 1, i, src, reduce=reduce)

    for n in (1, 5, 14):
        x = data((n, 10), torch.float32, seed=n)
        # distinct per row: torch leaves the winner of a repeated index open
        i = torch.stack([torch.randperm(10, generator=torch.Generator().manual_seed(r))[:3]
                         for r in range(n)])
        src = data((n, 3), torch.float32, seed=n + 2)
        out = torch.zeros(n, 10)
        k(x, i, src, out)
        want = x.scatter(1, i, src) if reduce is None else x.scatter(1, i, src, reduce="add")
        assert torch.equal(out, want)
    assert_compiled_once()


def test_scatter_in_place_over_a_dynamic_batch(native):
    @pypto.jit
    def k(x: pypto.Tensor([D, 6], F16), i: pypto.Tensor([D, 2], I32)):
        pypto.set_vec_tile_shapes(4, 4)
        x.scatter_(1, i, 2.5, reduce="multiply")

    for n in (2, 9):
        x = data((n, 6), torch.float16, seed=n)
        i = torch.stack([torch.randperm(6, generator=torch.Generator().manual_seed(r))[:2]
                         for r in range(n)]).to(torch.int32)
        want = x.scatter(1, i.long(), 2.5, reduce="multiply")
        k(x, i)
        assert torch.equal(x, want)
    assert_compiled_once()


def test_getitem_index_put_and_gathermask_with_dynamic_dims(native):
    @pypto.jit
    def k(x: pypto.Tensor([D, 12], F32), i: pypto.Tensor(["m"], I64),
          rows: pypto.Tensor(["m", 12], F32), odd: pypto.Tensor([D, 6], F32),
          y: pypto.Tensor([D, 12], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        rows[:] = x[i]
        odd[:] = pypto.gathermask(x, 2)
        y[:] = x * 1
        pypto.index_put_(y, (i,), 0.5, accumulate=True)

    for n, m in ((3, 2), (11, 7)):
        x = data((n, 12), torch.float32, seed=n)
        i = indices(n, (m,), seed=m)
        rows, odd, y = torch.zeros(m, 12), torch.zeros(n, 6), torch.zeros(n, 12)
        k(x, i, rows, odd, y)
        assert torch.equal(rows, x[i])
        assert torch.equal(odd, x[:, 1::2])
        torch.testing.assert_close(y, x.clone().index_put_((i,), torch.tensor(0.5),
                                                           accumulate=True))
    assert_compiled_once()


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_with_two_index_tensors_and_dynamic_dims(native, accumulate):
    # x[i[b], j[b], :] over a dynamic batch and a dynamic number of
    # positions; negative indices wrap with the launch's size; an index
    # outside [-size, size) of that launch is an IndexError.
    @pypto.jit
    def k(x: pypto.Tensor([D, 12, 5], F32), i: pypto.Tensor(["m"], I64),
          j: pypto.Tensor(["m"], I32), v: pypto.Tensor(["m", 5], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(x, (i, j), v, accumulate=accumulate)

    for n, m in ((3, 2), (11, 7), (40, 50)):
        x = data((n, 12, 5), torch.float32, seed=n)
        g = torch.Generator().manual_seed(m)
        flat = torch.randperm(n * 12, generator=g)[:m]  # distinct positions
        i, j = flat // 12 - n * (flat % 2), (flat % 12).int()  # odd ones from the end
        v = data((m, 5), torch.float32, seed=m + 1)
        want = x.clone().index_put_((i, j.long()), v, accumulate=accumulate)
        k(x, i, j, v)
        assert torch.equal(x, want)
    with pytest.raises(IndexError, match=r"index 3 at \[0\] of argument 'i'.*size 3"):
        k(torch.zeros(3, 12, 5), torch.tensor([3]), torch.tensor([0], dtype=torch.int32),
          torch.zeros(1, 5))
    assert_compiled_once()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_index_ops_over_clipped_views_of_a_dynamic_batch(native, dtype):
    # A loop over a dynamic batch in fixed-size views of 4 rows, the last
    # view clipped to the rows left: gather/index_select/scatter/index_add
    # along the columns and along the clipped rows (indices within each
    # view's rows), and index_add_ into a carried tensor from clipped index
    # and source views. Results on the valid region only; one compile (and
    # the same results run eagerly through the reference).
    pdtype = {torch.float32: F32, torch.float16: F16, torch.int32: I32}[dtype]

    @pypto.jit
    def k(x: pypto.Tensor([D, 8], pdtype), rows: pypto.Tensor([D, 8], I64),
          perm: pypto.Tensor([D, 8], I64), e: pypto.Tensor([D], I32), cols: pypto.Tensor([3], I32),
          s: pypto.Tensor([D, 3], pdtype), acc: pypto.Tensor([5, 8], pdtype),
          g0: pypto.Tensor([D, 8], pdtype), g1: pypto.Tensor([D, 8], pdtype),
          sel: pypto.Tensor([D, 3], pdtype), sc0: pypto.Tensor([D, 8], pdtype),
          sc1: pypto.Tensor([D, 8], pdtype), add1: pypto.Tensor([D, 8], pdtype)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(4, 8)
        for b in pypto.loop(pypto.ceildiv(n, 4)):
            t = pypto.view(x, [4, 8], [b * 4, 0])
            rv = pypto.view(rows, [4, 8], [b * 4, 0])
            pv = pypto.view(perm, [4, 8], [b * 4, 0])
            sv = pypto.view(s, [4, 3], [b * 4, 0])
            g0[b * 4:, :] = pypto.gather(t, 0, rv)
            g1[b * 4:, :] = pypto.gather(t, 1, pv)
            sel[b * 4:, :] = pypto.index_select(t, 1, cols)
            sc0[b * 4:, :] = pypto.scatter(t, 0, rv, t * 2, reduce="add")
            sc1[b * 4:, :] = pypto.scatter(t, 1, pv, t)
            add1[b * 4:, :] = pypto.index_add(t, 1, cols, sv)
            acc.index_add_(0, pypto.view(e, [4], [b * 4]), t)

    cols = torch.tensor([7, 0, 7], dtype=torch.int32)
    for n, eager in ((4, False), (6, False), (9, False), (13, False), (1, False), (6, True)):
        x = data((n, 8), dtype, seed=n)
        # indices within each view's rows (gather/scatter along dim 0) and
        # distinct along each row (scatter along dim 1: no repeated writes)
        rows = torch.cat([torch.randint(0, min(4, n - b), (min(4, n - b), 8),
                                        generator=torch.Generator().manual_seed(b))
                          for b in range(0, n, 4)])
        perm = torch.stack([torch.randperm(8, generator=torch.Generator().manual_seed(r))
                            for r in range(n)])
        e = indices(5, (n,), torch.int32, seed=n)
        s = data((n, 3), dtype, seed=n + 1)
        acc = data((5, 8), dtype, seed=99)
        outs = [torch.zeros(n, 8, dtype=dtype) for _ in range(2)]
        outs += [torch.zeros(n, 3, dtype=dtype)]
        outs += [torch.zeros(n, 8, dtype=dtype) for _ in range(3)]
        want_acc = acc.clone().index_add_(0, e.long(), x)
        if eager:
            with pypto.debug.eager():
                k(x, rows, perm, e, cols, s, acc, *outs)
        else:
            k(x, rows, perm, e, cols, s, acc, *outs)
        views = [(x[b:b + 4], rows[b:b + 4], perm[b:b + 4], s[b:b + 4])
                 for b in range(0, n, 4)]
        wants = [torch.cat([t.gather(0, r) for t, r, _, _ in views]),
                 torch.cat([t.gather(1, p) for t, _, p, _ in views]),
                 x.index_select(1, cols.long()),
                 torch.cat([t.scatter(0, r, t * 2, reduce="add") for t, r, _, _ in views]),
                 torch.cat([t.scatter(1, p, t) for t, _, p, _ in views]),
                 torch.cat([t.index_add(1, cols.long(), sv) for t, _, _, sv in views])]
        for name, got, want in zip(["g0", "g1", "sel", "sc0", "sc1", "add1"], outs, wants):
            if dtype == torch.float16 and name in ("sc0", "add1"):
                torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3, msg=name)
            else:
                assert torch.equal(got, want), (n, name, got, want)
        torch.testing.assert_close(acc.float(), want_acc.float(), rtol=1e-3, atol=1e-3)
    assert_compiled_once()


def test_gather_in_ub_and_l1_with_a_dynamic_number_of_positions(native):
    block_size, h = 4, 8

    @pypto.jit
    def k(p: pypto.Tensor([6 * block_size, h], F32), i: pypto.Tensor(["n"], I32),
          t: pypto.Tensor([3], I32), out: pypto.Tensor(["n", h], F32),
          first: pypto.Tensor([h, 1], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.experimental.gather_in_ub(p, i, t, block_size, 0)
        first[:] = pypto.experimental.gather_in_l1(p, i, t, block_size, 1, is_trans=True)

    param = data((6 * block_size, h), torch.float32)
    table = torch.tensor([5, 2, 0], dtype=torch.int32)
    for n in (1, 5, 12):
        pos = indices(3 * block_size, (n,), torch.int32, seed=n)
        p = pos.long()
        want = param[table.long()[p // block_size] * block_size + p % block_size]
        out, first = torch.zeros(n, h), torch.zeros(h, 1)
        k(param, pos, table, out, first)
        assert torch.equal(out, want)
        assert torch.equal(first, want[:1].T)
    with pytest.raises(IndexError, match="out of bounds for dim 0 with size 12"):
        k(param, torch.tensor([3, 12], dtype=torch.int32), table, torch.zeros(2, h),
          torch.zeros(h, 1))
    assert_compiled_once()


def test_index_arguments_are_checked_against_the_size_of_each_launch(native):
    @pypto.jit
    def k(x: pypto.Tensor([D, 8], F32), i: pypto.Tensor([4], I64),
          out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.index_select(x, 0, i)

    i = torch.tensor([0, 5, 2, 5])
    out = torch.zeros(4, 8)
    x = data((6, 8), torch.float32)
    k(x, i, out)
    assert torch.equal(out, x[i])
    with pytest.raises(IndexError, match=r"pypto.index_select: index 5 at \[1\] of argument "
                                         r"'i' is out of bounds for dim 0 with size 5"):
        k(data((5, 8), torch.float32), i, out)
    with pytest.raises(IndexError, match="out of bounds for dim 0 with size 3"):
        k(data((3, 8), torch.float32), i, out)
    assert_compiled_once()


def test_scatter_update_slots_are_checked_against_the_cache_rows_of_the_launch(native):
    @pypto.jit
    def k(cache: pypto.Tensor(["blocks", 2, 4], F32), slots: pypto.Tensor([2], I32),
          kv: pypto.Tensor([2, 4], F32), out: pypto.Tensor(["blocks", 2, 4], F32)):
        pypto.set_vec_tile_shapes(2, 2, 4)
        out[:] = pypto.scatter_update(cache, -2, slots, kv)

    slots = torch.tensor([1, 6], dtype=torch.int32)
    kv = data((2, 4), torch.float32)
    out = torch.zeros(4, 2, 4)
    k(torch.zeros(4, 2, 4), slots, kv, out)
    with pytest.raises(IndexError, match=r"index 6 at \[1\] of argument 'slots' is out of "
                                         r"bounds for dim 0 with size 6"):
        k(torch.zeros(3, 2, 4), slots, kv, torch.zeros(3, 2, 4))
