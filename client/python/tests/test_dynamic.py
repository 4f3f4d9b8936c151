"""DYNAMIC dims: one trace and one compile serve every size."""

import numpy as np
import pytest
import torch

import pypto


def _softmax_kernel():
    @pypto.jit
    def softmax(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 256)
        out[:] = pypto.softmax(x, -1)
    return softmax


def test_softmax_over_a_dynamic_batch_compiles_once(native):
    softmax = _softmax_kernel()
    rng = np.random.default_rng(4)
    for bs in (1, 7, 64, 1000):
        x = rng.uniform(-5, 5, (bs, 256)).astype(np.float32)
        out = np.full_like(x, np.nan)
        softmax(x, out)
        want = torch.softmax(torch.from_numpy(x).double(), -1).numpy()
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-7)
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["traces"] == 1, stats


def test_layer_norm_over_a_dynamic_batch_compiles_once(native):
    @pypto.jit
    def layer_norm(x: pypto.Tensor(["rows", 96], pypto.DT_FP32),
                   gamma: pypto.Tensor([96], pypto.DT_FP32),
                   out: pypto.Tensor(["rows", 96], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 96)
        mean = pypto.sum(x, -1, keepdim=True) / 96
        d = x - mean
        var = pypto.sum(d * d, -1, keepdim=True) / 96
        out[:] = d / pypto.sqrt(var + 1e-5) * gamma

    rng = np.random.default_rng(5)
    gamma = rng.uniform(0.5, 1.5, (96,)).astype(np.float32)
    for rows in (1, 7, 64, 1000):
        x = rng.uniform(-2, 2, (rows, 96)).astype(np.float32)
        out = np.zeros_like(x)
        layer_norm(x, gamma, out)
        want = torch.nn.functional.layer_norm(
            torch.from_numpy(x).double(), (96,), torch.from_numpy(gamma).double(),
            eps=1e-5).numpy()
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["traces"] == 1, stats


def test_graph_has_symbols_and_shape_is_symbolic():
    seen = {}

    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 8)
        bs, n = x.shape
        seen["bs"], seen["n"] = repr(bs), n
        out[:] = x + 1

    g = k.trace(np.zeros((5, 8), np.float32), np.zeros((5, 8), np.float32))
    assert seen == {"bs": "x_d0", "n": 8}
    dims = [[d.WhichOneof("kind") for d in v.shape.dims] for v in g.values]
    assert all(d == ["symbol", "size"] for d in dims), dims
    assert {v.shape.dims[0].symbol for v in g.values} == {"x_d0"}


def test_a_named_dim_with_two_sizes_is_an_error():
    @pypto.jit
    def k(x: pypto.Tensor(["bs", 8], pypto.DT_FP32),
          out: pypto.Tensor(["bs", 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 8)
        out[:] = x + 1

    with pytest.raises(ValueError, match=r"argument 'out': dim 0 is 6, but dynamic dim bs "
                                         r"is 5 in argument 'x' dim 0"):
        k(np.zeros((5, 8), np.float32), np.zeros((6, 8), np.float32))
    with pytest.raises(ValueError, match=r"dim 0 name '1x' is not an identifier"):
        pypto.Tensor(["1x", 8], pypto.DT_FP32)


def test_unnamed_dims_of_different_sizes_bind_at_launch(native):
    softmax = _softmax_kernel()
    x = np.zeros((4, 256), np.float32)
    softmax(x, np.zeros_like(x))
    # Two unnamed dynamic dims of different sizes are different symbols: the
    # kernel traced with one symbol is not reused, and this graph does not
    # verify (the output's rows must be the input's).
    with pytest.raises(ValueError, match=r"the value has shape \(x_d0, 256\) but 'out' has "
                                         r"\(out_d0, 256\)"):
        softmax(np.zeros((4, 256), np.float32), np.zeros((5, 256), np.float32))


def test_ptod_compiles_once_for_every_size(ptod, private_cache):
    # Fresh functions have empty memory caches, so every call asks ptod; the
    # graph holds the symbol, not the size, so a new size is a hit.
    keys = []
    for i, bs in enumerate((5, 9, 1)):
        softmax = _softmax_kernel()
        x = np.random.default_rng(bs).uniform(-3, 3, (bs, 256)).astype(np.float32)
        out = np.zeros_like(x)
        softmax(x, out)
        want = torch.softmax(torch.from_numpy(x).double(), -1).numpy()
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-7)
        assert softmax.last_compile.source == ("ptod MISS" if i == 0 else "ptod HIT")
        keys.append(softmax.last_compile.key)
    assert len(set(keys)) == 1
    stats = pypto.compile_stats()
    assert stats["remote_misses"] == 1 and stats["remote_hits"] == 2


def test_a_dynamic_inner_dim_compiles_once(native):
    # Its GM strides are run-time args; tails along it run the generic
    # function. Sizes: 1, below, at, not a multiple of and far above the tile.
    @pypto.jit
    def inner(x: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32),
              y: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32),
              out: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = (x + y) * 2

    @pypto.jit
    def both(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP16),
             out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.exp(x) - x

    for n in (1, 3, 8, 13, 1000):
        x = torch.randn(4, n)
        y = torch.randn(4, n)
        out = torch.full_like(x, float("nan"))
        inner(x, y, out)
        torch.testing.assert_close(out, (x + y) * 2)
        for rows in (2, 7):  # never n: equal unnamed dims share a symbol
            h = torch.randn(rows, n).half()
            o = torch.full_like(h, float("nan"))
            both(h, o)
            torch.testing.assert_close(o, (torch.exp(h.float()) - h.float()).half(),
                                       rtol=1e-3, atol=1e-3)
    stats = pypto.compile_stats()
    assert stats["compiles"] == 2 and stats["traces"] == 2, stats


def test_reductions_over_a_dynamic_dim_compile_once(native):
    # Each tile along the dynamic dim folds into one accumulator slot, in
    # order; other dims stay parallel. Sizes: 1, below, not a multiple of
    # and far above the tile.
    @pypto.jit
    def softmax(x: pypto.Tensor([4, "n"], pypto.DT_FP32), out: pypto.Tensor([4, "n"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 64)
        out[:] = pypto.softmax(x, -1)

    @pypto.jit
    def sums(x: pypto.Tensor([3, "n"], pypto.DT_FP16), s: pypto.Tensor([3, 1], pypto.DT_FP16),
             m: pypto.Tensor([3], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(2, 32)
        s[:] = pypto.sum(x, dim=-1, keepdim=True)
        m[:] = pypto.amax(x, dim=-1)

    @pypto.jit
    def colmin(x: pypto.Tensor(["rows", "cols"], pypto.DT_FP32),
               out: pypto.Tensor([1, "cols"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.amin(x, 0, keepdim=True)

    for n in (1, 13, 64, 1000):
        x = torch.randn(4, n) * 3
        out = torch.full_like(x, float("nan"))
        softmax(x, out)
        torch.testing.assert_close(out, torch.softmax(x.double(), -1).float(), rtol=1e-5, atol=1e-6)
        h = torch.randn(3, n).half()
        s, m = torch.zeros(3, 1).half(), torch.zeros(3).half()
        sums(h, s, m)
        torch.testing.assert_close(s, h.float().sum(-1, keepdim=True).half(), rtol=2e-3, atol=2e-3)
        torch.testing.assert_close(m, h.amax(-1))
        for rows in (1, 9, 40):
            y = torch.randn(rows, n)
            c = torch.zeros(1, n)
            colmin(y, c)
            torch.testing.assert_close(c, y.amin(0, keepdim=True))
    stats = pypto.compile_stats()
    assert stats["compiles"] == 3 and stats["traces"] == 3, stats


def test_argmax_over_a_dynamic_dim_compiles_once(native):
    @pypto.jit
    def colarg(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32),
               out: pypto.Tensor([1, 8], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.argmax(x, 0, keepdim=True)

    @pypto.jit
    def rowarg(x: pypto.Tensor([3, "n"], pypto.DT_FP16), out: pypto.Tensor([3], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(2, 32)
        out[:] = pypto.argmin(x, -1)

    for n in (1, 9, 33, 1000):
        y = torch.randn(n, 8)
        s = torch.zeros(1, 8, dtype=torch.int64)
        colarg(y, s)
        torch.testing.assert_close(s, y.argmax(0, keepdim=True))
        h = torch.randint(-4, 4, (3, n)).half()  # ties: the first index wins
        r = torch.zeros(3, dtype=torch.int64)
        rowarg(h, r)
        torch.testing.assert_close(r, h.float().argmin(-1))
    stats = pypto.compile_stats()
    assert stats["compiles"] == 2, stats


def test_integer_extrema_over_a_dynamic_dim_compile_once(native):
    # INT32/INT64 data accumulates in int64, starting from INT64_MAX (amin)
    # or INT64_MIN (argmax): one compile serves every size, the dtype's
    # extremes included, and ties keep the first index, as torch does.
    @pypto.jit
    def colmin(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_INT32),
               out: pypto.Tensor([1, 8], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.amin(x, 0, keepdim=True)

    @pypto.jit
    def rowarg(x: pypto.Tensor([3, "n"], pypto.DT_INT64), out: pypto.Tensor([3], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(2, 16)
        out[:] = pypto.argmax(x, -1)

    i32, i64 = torch.iinfo(torch.int32), torch.iinfo(torch.int64)
    for n in (1, 3, 9, 40):
        y = torch.randint(-1000, 1000, (n, 8), dtype=torch.int32)
        y[:, 0] = i32.max
        y[-1, 1] = i32.min
        s = torch.zeros(1, 8, dtype=torch.int32)
        colmin(y, s)
        torch.testing.assert_close(s, y.amin(0, keepdim=True))
        h = torch.randint(-3, 3, (3, n), dtype=torch.int64)
        h[0, :] = i64.min  # every value equals the identity: index 0
        h[1, n // 2] = i64.max
        r = torch.full((3,), -7, dtype=torch.int64)
        rowarg(h, r)
        torch.testing.assert_close(r, h.argmax(-1))
    stats = pypto.compile_stats()
    assert stats["compiles"] == 2, stats  # one per kernel


def test_integer_extrema_over_a_tail_chunk_in_a_loop_body_compile_once(native):
    # Each chunk of 24 columns of a dynamic last dim, the last a tail
    # (min(24, n - c*24)): INT32 amax in the accumulating form, tiles of 16.
    @pypto.jit
    def chunks(x: pypto.Tensor([4, "n"], pypto.DT_INT32), out: pypto.Tensor([4, "m"], pypto.DT_INT32)):
        n = x.shape[1]
        pypto.set_vec_tile_shapes(4, 16)
        for c in pypto.loop(0, (n + 23) // 24, idx_name="c"):
            t = x[:, c * 24:c * 24 + pypto.min(24, n - c * 24)]
            out[:, c:c + 1] = pypto.amax(t, -1, keepdim=True)

    i32 = torch.iinfo(torch.int32)
    for n in (1, 16, 24, 50, 100):
        x = torch.randint(-5, 5, (4, n), dtype=torch.int32)
        x[0, :] = i32.min
        x[1, -1] = i32.max
        m = (n + 23) // 24
        out = torch.zeros(4, m, dtype=torch.int32)
        chunks(x, out)
        want = torch.cat([x[:, k:k + 24].amax(-1, keepdim=True) for k in range(0, n, 24)], dim=1)
        torch.testing.assert_close(out, want)
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1, stats


_SIZES = (1, 7, 64, 1000)


def test_views_of_a_dynamic_dim_outside_a_loop_compile_once(native):
    # Offsets and extents that are expressions of a dynamic size (x[:, 1:],
    # x[:, :n // 2], x[:, n - 4:]) are run-time offsets and extents, as in a
    # loop body: one compile for every size.
    @pypto.jit
    def cols(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
             out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = x[:, 64:128] * 2

    @pypto.jit
    def shift(x: pypto.Tensor([4, "n"], pypto.DT_FP32),
              out: pypto.Tensor([4, "n"], pypto.DT_FP32)):
        n = x.shape[1]
        pypto.set_vec_tile_shapes(4, 64)
        out[:, : n - 1] = x[:, 1:] * 2

    @pypto.jit
    def halves(x: pypto.Tensor([4, "n"], pypto.DT_FP32),
               out: pypto.Tensor([4, 1], pypto.DT_FP32)):
        n = x.shape[1]
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = pypto.sum(x[:, : n // 2], -1, keepdim=True) - \
            pypto.sum(x[:, n - n // 2:], -1, keepdim=True)

    for n in _SIZES:
        x = torch.randn(n, 256)
        out = torch.empty(n, 64)
        cols(x, out)
        torch.testing.assert_close(out, x[:, 64:128] * 2)
        x = torch.randn(4, n + 1)
        out = torch.zeros(4, n + 1)
        shift(x, out)
        want = torch.zeros(4, n + 1)
        want[:, :n] = x[:, 1:] * 2
        torch.testing.assert_close(out, want)
        x = torch.randn(4, 2 * n + 1)
        out = torch.empty(4, 1)
        halves(x, out)
        want = x[:, :n].sum(-1, keepdim=True) - x[:, n + 1:].sum(-1, keepdim=True)
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-4)
    assert pypto.compile_stats()["compiles"] == 3, pypto.compile_stats()


def test_a_view_of_a_dynamic_dim_out_of_range_is_an_error_at_launch(native):
    @pypto.jit
    def last4(x: pypto.Tensor([4, "n"], pypto.DT_FP32),
              out: pypto.Tensor([4, 4], pypto.DT_FP32)):
        n = x.shape[1]
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = x[:, n - 4:] + 1

    x = torch.randn(4, 9)
    out = torch.empty(4, 4)
    last4(x, out)
    torch.testing.assert_close(out, x[:, 5:] + 1)
    with pytest.raises(ValueError, match=r'op #0 "view": the region at offsets \[0,-1\] of '
                                         r'extent \[4,4\] leaves its tensor of shape \[4,3\] '
                                         r'in dim 1 .* at n=3'):
        last4(torch.randn(4, 3), out)
    assert pypto.compile_stats()["compiles"] == 1


def test_an_empty_tensor_is_an_error_saying_so(native):
    # Empty tensors are not supported (user guide, "Dynamic shapes"): a view
    # empty at the launch's sizes and an argument with a 0 dim say so.
    @pypto.jit
    def shift(x: pypto.Tensor([4, "n"], pypto.DT_FP32),
              out: pypto.Tensor([4, "n"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:, :x.shape[1] - 1] = x[:, 1:] * 2

    x, out = torch.randn(4, 5), torch.zeros(4, 5)
    shift(x, out)
    torch.testing.assert_close(out[:, :4], x[:, 1:] * 2)
    with pytest.raises(ValueError, match=r'"view": the region at offsets \[0,1\] of extent '
                                         r'\[4,0\] is empty in dim 1 at n=1 \(empty tensors '
                                         r'are not supported'):
        shift(torch.randn(4, 1), torch.zeros(4, 1))
    with pytest.raises(ValueError, match=r"argument 'x': shape \[4, 0\] has an empty dim "
                                         r"\(empty tensors are not supported"):
        shift(torch.randn(4, 0), torch.zeros(4, 0))
    assert pypto.compile_stats()["compiles"] == 1


def test_matmul_of_a_reshape_with_a_dynamic_inner_dim_compiles_once(native):
    # x: [B, S, H] with a DYNAMIC S, reshaped to [B*S, H] for the matmul: the
    # reshape reads x's contiguous data (run-time row strides where they
    # depend on S), one compile for every S.
    @pypto.jit
    def proj(x: pypto.Tensor([2, "s", 32], pypto.DT_FP32),
             w: pypto.Tensor([32, 16], pypto.DT_FP32),
             out: pypto.Tensor([2, "s", 16], pypto.DT_FP32)):
        b, s, h = x.shape
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        y = pypto.matmul(pypto.reshape(x, [b * s, h]), w)
        out[:] = pypto.reshape(y, [b, s, 16])

    @pypto.jit
    def split_rows(x: pypto.Tensor(["s", 32], pypto.DT_FP32),
                   w: pypto.Tensor([16, "m"], pypto.DT_FP32),
                   out: pypto.Tensor(["s", 2, "m"], pypto.DT_FP32)):
        s, m = x.shape[0], w.shape[1]
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        out[:] = pypto.reshape(pypto.matmul(pypto.reshape(x, [s * 2, 16]), w), [s, 2, m])

    for n in _SIZES:
        x = torch.randn(2, n, 32)
        w = torch.randn(32, 16)
        out = torch.empty(2, n, 16)
        proj(x, w, out)
        torch.testing.assert_close(out, (x.reshape(2 * n, 32) @ w).reshape(2, n, 16),
                                   rtol=1e-4, atol=1e-4)
        x = torch.randn(n, 32)
        w = torch.randn(16, 3 + n % 20)
        out = torch.empty(n, 2, w.shape[1])
        split_rows(x, w, out)
        torch.testing.assert_close(out, (x.reshape(2 * n, 16) @ w).reshape(n, 2, -1),
                                   rtol=1e-4, atol=1e-4)
    assert pypto.compile_stats()["compiles"] == 2, pypto.compile_stats()


def test_layout_ops_of_a_dynamic_dim_compile_once(native):
    # transpose, and reshapes that split or merge a dynamic dim.
    @pypto.jit
    def layouts(x: pypto.Tensor([4, "n"], pypto.DT_FP32),
                out: pypto.Tensor(["n", 4], pypto.DT_FP32),
                out2: pypto.Tensor([4, "n"], pypto.DT_FP32)):
        n = x.shape[1]
        pypto.set_vec_tile_shapes(16, 4)
        out[:] = x.transpose(0, 1) * 2
        pypto.set_vec_tile_shapes(2, 2, 16)
        out2[:] = pypto.reshape(pypto.reshape(x, [2, 2, n]) + 1, [4, n])

    for n in _SIZES:
        x = torch.randn(4, n)
        out, out2 = torch.empty(n, 4), torch.empty(4, n)
        layouts(x, out, out2)
        torch.testing.assert_close(out, x.t() * 2)
        torch.testing.assert_close(out2, x + 1)
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def test_concat_of_dynamic_batch_tensors_compiles_once(native):
    # concat along a static dim of [n, 8] tensors: the result is [n, 16].
    @pypto.jit
    def cat(x: pypto.Tensor(["n", 8], pypto.DT_FP32),
            y: pypto.Tensor(["n", 8], pypto.DT_FP32),
            out: pypto.Tensor(["n", 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.concat([x * 2, y + 1], dim=1)

    for n in (1, 7, 64):
        x, y = torch.randn(n, 8), torch.randn(n, 8)
        out = torch.full((n, 16), float("nan"))
        cat(x, y, out)
        torch.testing.assert_close(out, torch.cat([x * 2, y + 1], dim=1))
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def test_concat_along_a_dynamic_dim_compiles_once(native):
    # [4, 8] and [n, 8] along dim 0: the dynamic input last, so every offset
    # is static.
    @pypto.jit
    def cat(x: pypto.Tensor(["n", 8], pypto.DT_FP32),
            y: pypto.Tensor([4, 8], pypto.DT_FP32),
            out: pypto.Tensor(["m", 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:x.shape[0] + 4] = pypto.concat([y + 1, x * 2], dim=0)

    y = torch.randn(4, 8)
    for n in (1, 7, 64):
        x = torch.randn(n, 8)
        out = torch.full((n + 4, 8), float("nan"))
        cat(x, y, out)
        torch.testing.assert_close(out, torch.cat([y + 1, x * 2], dim=0))
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def test_concat_at_dynamic_offsets_compiles_once(native):
    # x ["n", 8] then y ["m", 8] (and x again) along dim 0: y starts at row n,
    # the second x at n + m, offsets known at launch (assembles at symbolic
    # offsets); a [4, "n"] input first along dim 1 puts the other at column n.
    @pypto.jit
    def rows(x: pypto.Tensor(["n", 8], pypto.DT_FP32),
             y: pypto.Tensor(["m", 8], pypto.DT_FP32),
             out: pypto.Tensor(["k", 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        n, m = x.shape[0], y.shape[0]
        out[:2 * n + m] = pypto.concat([x * 2, y + 1, x], dim=0)

    @pypto.jit
    def columns(x: pypto.Tensor([4, "n"], pypto.DT_FP32),
                y: pypto.Tensor([4, 8], pypto.DT_FP32),
                out: pypto.Tensor([4, "k"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:, :x.shape[1] + 8] = pypto.exp(pypto.concat([x, y], dim=1))

    for n, m in ((1, 1), (7, 3), (64, 33), (5, 40)):
        x, y = torch.randn(n, 8), torch.randn(m, 8)
        out = torch.full((2 * n + m, 8), float("nan"))
        rows(x, y, out)
        torch.testing.assert_close(out, torch.cat([x * 2, y + 1, x], dim=0))
        x, y = torch.randn(4, n), torch.randn(4, 8)
        out = torch.full((4, n + 8), float("nan"))
        columns(x, y, out)
        torch.testing.assert_close(out, torch.exp(torch.cat([x, y], dim=1)))
    assert pypto.compile_stats()["compiles"] == 2, pypto.compile_stats()


def test_softmax_over_a_concat_along_a_dynamic_last_dim_compiles_once(native):
    # The row n + 8 long: row groups up to the cap (4096), the accumulating
    # form above it; one compile.
    @pypto.jit
    def f(x: pypto.Tensor([4, "n"], pypto.DT_FP32),
          y: pypto.Tensor([4, 8], pypto.DT_FP32),
          out: pypto.Tensor([4, "k"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:, :x.shape[1] + 8] = pypto.softmax(pypto.concat([x, y], dim=1), -1)

    for n in (1, 7, 100, 5000):
        x, y = torch.randn(4, n), torch.randn(4, 8)
        out = torch.full((4, n + 8), float("nan"))
        f(x, y, out)
        torch.testing.assert_close(out, torch.softmax(torch.cat([x, y], dim=1), -1))
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def test_concat_of_dynamic_tensors_with_bad_sizes_is_a_clear_error(native):
    # Inputs whose other dims differ: refused while tracing, naming the input.
    @pypto.jit
    def mismatched(x: pypto.Tensor(["n", 8], pypto.DT_FP32),
                   y: pypto.Tensor(["m", 8], pypto.DT_FP32),
                   out: pypto.Tensor(["n", 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.concat([x, y], dim=1)

    with pytest.raises(ValueError, match=r"pypto.concat: tensors\[1\] \[m, 8\] and "
                                         r"tensors\[0\] \[n, 8\] differ outside dim 1"):
        mismatched(torch.randn(3, 8), torch.randn(3, 8), torch.empty(3, 16))

    # An output smaller than the concat at the launch's sizes: an error at
    # launch naming the op and the sizes, before any task writes.
    @pypto.jit
    def cat(x: pypto.Tensor(["n", 8], pypto.DT_FP32),
            y: pypto.Tensor(["m", 8], pypto.DT_FP32),
            out: pypto.Tensor(["k", 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:x.shape[0] + y.shape[0]] = pypto.concat([x, y], dim=0)

    out = torch.full((9, 8), float("nan"))
    with pytest.raises(ValueError, match=r'"assemble": the region at offsets \[0,0\] of '
                                         r'extent \[10,8\] leaves its tensor of shape '
                                         r'\[9,8\] in dim 0 .*k=9.*m=3.*n=7'):
        cat(torch.randn(7, 8), torch.randn(3, 8), out)
    assert torch.isnan(out).all()
    x, y = torch.randn(6, 8), torch.randn(3, 8)
    cat(x, y, out)
    torch.testing.assert_close(out, torch.cat([x, y], dim=0))
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


# pypto.from_torch(t, dynamic_axis=...): the caller marks the dims that vary --------


@pytest.mark.parametrize("shape", [[], (8, 256)], ids=["unspecified", "static"])
def test_from_torch_dynamic_axis_compiles_once_for_two_sizes(native, shape):
    @pypto.jit
    def softmax(x: pypto.Tensor(shape, pypto.DT_FP32),
                out: pypto.Tensor(shape, pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 256)
        out[:] = pypto.softmax(x, -1)

    for bs in (5, 40):
        t = torch.rand(bs, 256) * 10 - 5
        out = torch.full_like(t, float("nan"))
        softmax(pypto.from_torch(t, "x", dynamic_axis=0),
                pypto.from_torch(out, "out", dynamic_axis=[0]))
        torch.testing.assert_close(out, torch.softmax(t.double(), -1).float(),
                                   rtol=1e-5, atol=1e-7)
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["traces"] == 1, stats


def test_from_torch_without_dynamic_axis_compiles_per_size(native):
    @pypto.jit
    def double(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = x * 2

    for bs in (5, 40):
        t = torch.rand(bs, 64)
        out = torch.empty_like(t)
        double(pypto.from_torch(t), pypto.from_torch(out))
        torch.testing.assert_close(out, t * 2)
    assert pypto.compile_stats()["compiles"] == 2


def test_from_torch_dynamic_axis_keeps_the_annotations_dim_names(native):
    seen = {}

    @pypto.jit
    def double(x: pypto.Tensor(["rows", 64], pypto.DT_FP32),
               out: pypto.Tensor(["rows", 64], pypto.DT_FP32)):
        seen["dim"] = str(x.shape[0])
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = x * 2

    t = torch.rand(6, 64)
    out = torch.empty_like(t)
    double(pypto.from_torch(t, dynamic_axis=0), out)
    torch.testing.assert_close(out, t * 2)
    assert seen["dim"] == "rows"


def test_from_torch_dynamic_input_into_a_fixed_output_says_to_mark_it(native):
    @pypto.jit
    def double(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = x * 2

    t = torch.rand(6, 64)
    with pytest.raises(ValueError, match=r"dim 0 is dynamic in the value but fixed in 'out': "
                                         r"make it dynamic too .*dynamic_axis=0"):
        double(pypto.from_torch(t, dynamic_axis=0), torch.empty_like(t))


def test_matmul_with_dynamic_m_n_k_compiles_once(native):
    # A dynamic M, N or K (and inner dims: run-time leading dimensions) is
    # lowered symbolically: one compile per kernel for every size.
    @pypto.jit
    def mm(a: pypto.Tensor(["m", 64], pypto.DT_FP32), b: pypto.Tensor([64, "n"], pypto.DT_FP32),
           out: pypto.Tensor(["m", "n"], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
        out[:] = a @ b

    @pypto.jit
    def reduce_k(a: pypto.Tensor([4, "k"], pypto.DT_FP32), b: pypto.Tensor(["k", 32], pypto.DT_FP32),
                 out: pypto.Tensor([4, 32], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
        out[:] = a @ b

    @pypto.jit
    def mm_add(a: pypto.Tensor(["m", "k"], pypto.DT_FP16), b: pypto.Tensor(["k", "n"], pypto.DT_FP16),
               y: pypto.Tensor(["m", "n"], pypto.DT_FP16), out: pypto.Tensor(["m", "n"], pypto.DT_FP16)):
        pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = (a @ b) + y

    for m, n in ((1, 1), (5, 24), (37, 45)):
        a, b = torch.randn(m, 64), torch.randn(64, n)
        out = torch.zeros(m, n)
        mm(a, b, out)
        torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-5)
    for k in (1, 9, 50):
        a, b = torch.randn(4, k), torch.randn(k, 32)
        out = torch.zeros(4, 32)
        reduce_k(a, b, out)
        torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-5)
    for m, n, k in ((1, 1, 1), (5, 7, 9), (37, 45, 50)):
        a, b, y = (torch.randn(m, k).half(), torch.randn(k, n).half(), torch.randn(m, n).half())
        out = torch.zeros(m, n).half()
        mm_add(a, b, y, out)
        want = (a.float() @ b.float()).half().float() + y.float()
        torch.testing.assert_close(out.float(), want, rtol=2e-3, atol=2e-2)
    assert pypto.compile_stats()["compiles"] == 3


def test_a_dynamic_size_used_as_a_number_compiles_once(native):
    # rms_norm's 1/n over a dynamic last dim, and x * x.shape[-1]: the number
    # is an expression over the dim's symbol that the kernel reads at launch
    # (never the trace's placeholder), so one compile serves every size.
    @pypto.jit
    def rms(x: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32),
            out: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = pypto.rms_norm(x)

    @pypto.jit
    def scale(x: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32),
              out: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = x * x.shape[-1]

    rng = np.random.default_rng(11)
    for n in (1, 7, 64, 1000):
        x = rng.standard_normal((4, n)).astype(np.float32)
        out = np.full_like(x, np.nan)
        rms(x, out)
        t = torch.from_numpy(x).double()
        want = (t * torch.rsqrt((t * t).mean(-1, keepdim=True) + 1e-6)).numpy()
        np.testing.assert_allclose(out, want, rtol=2e-6, atol=1e-6)
        out = np.full_like(x, np.nan)
        scale(x, out)
        np.testing.assert_array_equal(out, (torch.from_numpy(x) * n).numpy())
    stats = pypto.compile_stats()
    assert stats["compiles"] == 2 and stats["traces"] == 2, stats


def test_dynamic_sizes_as_values_of_full_clip_and_where(native):
    # Every number operand may be a dynamic size: x / n, n - x, clip to
    # [-(n % 3), n // 2], where(x > 0, x, n) and full(n - 5).
    @pypto.jit
    def kernel(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        n = x.shape[0]
        y = pypto.clip(n - x / n, min=-(n % 3), max=n // 2)
        y = pypto.where(x > 0, y, n) + pypto.full([1, 8], n - 5, pypto.DT_FP32)
        out[:] = y

    rng = np.random.default_rng(12)
    for n in (1, 7, 64, 1000):
        x = torch.from_numpy(rng.standard_normal((n, 8)).astype(np.float32))
        out = torch.full_like(x, float("nan"))
        kernel(x, out)
        y = torch.clip(n - x / n, min=-(n % 3), max=n // 2)
        want = torch.where(x > 0, y, torch.tensor(float(n))) + torch.full((8,), float(n - 5))
        torch.testing.assert_close(out, want, rtol=1e-6, atol=1e-6)
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def test_a_loop_index_used_as_a_number(native):
    # x * i in a loop body: i is a dynamic arg of the body's tasks, set per
    # iteration; one compile for every batch size. Also as a written value.
    @pypto.jit
    def scaled_rows(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32),
                    out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8)
        n = x.shape[0]
        for i in pypto.loop(0, n, 1, name="L", idx_name="i"):
            out[i:i + 1, :] = (x[i:i + 1, :] * i - (n - i)) / (i + 1)

    @pypto.jit
    def index_rows(out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(0, out.shape[0], 1, name="L", idx_name="i"):
            out[i:i + 1, :] = i * 2

    for n in (1, 7, 64):
        x = torch.randn(n, 8)
        out = torch.full_like(x, float("nan"))
        scaled_rows(x, out)
        i = torch.arange(n, dtype=torch.float32)[:, None]
        torch.testing.assert_close(out, (x * i - (n - i)) / (i + 1), rtol=1e-6, atol=1e-6)
        out = torch.full_like(x, float("nan"))
        index_rows(out)
        torch.testing.assert_close(out, (i * 2).expand(n, 8).contiguous(), rtol=0, atol=0)
    assert pypto.compile_stats()["compiles"] == 2, pypto.compile_stats()


def test_arange_from_a_loop_index_compiles_once(native):
    # arange(i * 8, i * 8 + 8): a start over the index (read per iteration),
    # a static length; DT_INT32 by default (PyPTO's), FP32 when asked.
    @pypto.jit
    def positions(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32),
                  out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32),
                  ids: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_INT32)):
        for i in pypto.loop(0, x.shape[0], 1, name="L", idx_name="i"):
            pypto.set_vec_tile_shapes(8)
            pos = pypto.arange(i * 8 + 1, i * 8 + 9, dtype=pypto.DT_FP32)
            row = pypto.arange(i * 8, i * 8 + 8)
            pypto.set_vec_tile_shapes(1, 8)
            out[i:i + 1, :] = x[i:i + 1, :] * pos
            ids[i:i + 1, :] = row

    for n in (1, 7, 64):
        x = torch.randn(n, 8)
        out = torch.full_like(x, float("nan"))
        ids = torch.zeros(n, 8, dtype=torch.int32)
        positions(x, out, ids)
        want = torch.arange(n * 8, dtype=torch.int32).reshape(n, 8)
        torch.testing.assert_close(out, x * (want + 1).float())
        torch.testing.assert_close(ids, want)
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def test_a_loop_index_where_tracing_needs_its_value_is_a_clear_error(native):
    # An integer tensor's power unrolls into multiplications by the
    # exponent's bits: a loop index (symbolic at every size) cannot be one.
    @pypto.jit
    def powers(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_INT32),
               out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(0, x.shape[0], 1, name="L", idx_name="i"):
            out[i:i + 1, :] = x[i:i + 1, :] ** i

    x = np.ones((3, 8), np.int32)
    with pytest.raises(pypto.TraceError, match=r"exponent of a DT_INT32 tensor: i \(a size or "
                                              r"index known only at run time\)"):
        powers(x, np.zeros_like(x))


def test_a_dynamic_size_the_trace_needs_compiles_per_size(native):
    # An integer power unrolls into multiplications by the exponent's bits
    # and arange's length is a static shape: those still trace per size
    # (correct at each), where a scalar operand would not.
    @pypto.jit
    def power(x: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_INT32),
              out: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = x ** x.shape[0]

    @pypto.jit
    def ramp(out: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(16)
        out[:] = pypto.arange(out.shape[0])

    for n in (1, 2, 5):
        x = torch.randint(-3, 4, (n, 4), dtype=torch.int32)
        out = torch.zeros_like(x)
        power(x, out)
        torch.testing.assert_close(out, x ** n)
        out = torch.zeros(n, dtype=torch.int32)
        ramp(out)
        torch.testing.assert_close(out, torch.arange(n, dtype=torch.int32))
    assert pypto.compile_stats()["compiles"] == 6, pypto.compile_stats()


def test_a_dynamic_size_with_integer_tensors_compiles_once(native):
    # An integer tensor with a dynamic size keeps its dtype (torch's int *
    # int): the number is a one-element tensor filled at launch.
    @pypto.jit
    def affine(x: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_INT32),
               out: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 4)
        n = x.shape[0]
        out[:] = pypto.clip(x * n - n // 2, min=-n, max=n * 3)

    for n in (1, 7, 64, 1000):
        x = torch.randint(-9, 10, (n, 4), dtype=torch.int32)
        out = torch.zeros_like(x)
        affine(x, out)
        torch.testing.assert_close(out, torch.clip(x * n - n // 2, min=-n, max=n * 3))
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()
