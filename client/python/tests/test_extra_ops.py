"""pypto.expand_exp_dif, atomic_add, scaled_mm, quant_mx (extra_ops.py),
pypto.experimental.transposed_batchmatmul and the operation options, and
Tensor.id / get_cache_policy / set_cache_policy: run through compiled
kernels against torch, or checked for their documented errors."""

import pytest
import torch

import many_outputs
import pypto

ANY = pypto.Tensor[...]
TOL = {torch.float32: dict(rtol=1e-6, atol=1e-6), torch.float16: dict(rtol=1e-3, atol=1e-3),
       torch.bfloat16: dict(rtol=8e-3, atol=8e-3)}


# expand_exp_dif ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_expand_exp_dif_per_row_and_per_column(native, dtype):
    x = torch.randn(5, 19).to(dtype)
    row, col = x.amax(1, keepdim=True), torch.randn(1, 19).to(dtype)
    got = many_outputs.run_many(
        [lambda a, r, c: pypto.expand_exp_dif(a, r), lambda a, r, c: pypto.expand_exp_dif(a, c),
         lambda a, r, c: pypto.expand_exp_dif(a, a)],
        [x, row, col], [torch.zeros(5, 19, dtype=dtype) for _ in range(3)], (4, 16))
    for g, o in zip(got, (row, col, x)):
        want = torch.exp((x - o).float()).to(dtype)  # torch.exp(x - o)
        torch.testing.assert_close(g, want, **TOL[dtype])
    assert torch.equal(got[2], torch.ones(5, 19, dtype=dtype))


def test_expand_exp_dif_over_a_dynamic_dim(native):
    @pypto.jit
    def k(x: pypto.Tensor(["n", 8], pypto.DT_FP32), m: pypto.Tensor(["n", 1], pypto.DT_FP32),
          out: pypto.Tensor(["n", 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.expand_exp_dif(x, m)

    for n in (3, 9):
        x = torch.randn(n, 8)
        m = x.amax(1, keepdim=True)
        out = torch.zeros(n, 8)
        k(x, m, out)
        torch.testing.assert_close(out, torch.exp(x - m), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("other, match", [
    (torch.zeros(5, 19, dtype=torch.float16), r"'input' has dtype DT_FP32 and 'other' DT_FP16"),
    (torch.zeros(5, 19, dtype=torch.int32), r"argument 'other' has dtype DT_INT32"),
    (torch.zeros(2, 5, 1), r"'other' \[2, 5, 1\] must broadcast to 'input' \[5, 19\]"),
])
def test_expand_exp_dif_errors(other, match):
    @pypto.jit
    def k(x: ANY, o: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.expand_exp_dif(x, o)

    with pytest.raises((TypeError, ValueError), match=match):
        k(torch.zeros(5, 19), other, torch.zeros(5, 19))


# atomic_add --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_atomic_add_accumulates_into_regions_in_order(native, dtype):
    @pypto.jit
    def k(src: ANY, dst: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        for i in pypto.loop(3):
            pypto.atomic_add(src[i * 2:i * 2 + 2, :], [1, 2], dst)
        pypto.atomic_add(src[0:2, :], [0, 0], dst)   # overlaps the loop's region

    src = torch.randint(-5, 5, (6, 4)).to(dtype)
    dst0 = torch.randint(-5, 5, (4, 8)).to(dtype)
    dst = dst0.clone()
    k(src, dst)
    want = dst0.clone()
    for i in range(3):
        want[1:3, 2:6] += src[i * 2:i * 2 + 2]
    want[0:2, 0:4] += src[0:2]
    assert torch.equal(dst, want)


def test_atomic_add_errors():
    def kernel(offsets, src_dtype=pypto.DT_FP32):
        @pypto.jit
        def k(src: ANY, dst: ANY):
            pypto.set_vec_tile_shapes(4, 8)
            pypto.atomic_add(src, offsets, dst)
        return k

    with pytest.raises(ValueError, match=r"pypto.atomic_add: offsets \[0\] must be a sequence "
                                         r"of 2 ints"):
        kernel([0])(torch.zeros(2, 2), torch.zeros(4, 4))
    with pytest.raises(TypeError, match=r"'src' has dtype DT_FP16 and 'dst' DT_FP32"):
        kernel([0, 0])(torch.zeros(2, 2, dtype=torch.float16), torch.zeros(4, 4))


# scaled_mm, quant_mx -------------------------------------------------------------------

def test_scaled_mm_with_group_scales(native):
    m, k, n, g = 8, 64, 16, 32
    a, b = torch.randn(m, k), torch.randn(k, n)
    sa, sb = torch.rand(m, k // g) + 0.5, torch.rand(n, k // g) + 0.5
    sat = sa.t().contiguous()

    @pypto.jit
    def kern(a: ANY, b: ANY, sa: ANY, sb: ANY, sat: ANY, bt: ANY, out: ANY, out2: ANY):
        pypto.set_vec_tile_shapes(8, 32)
        pypto.set_cube_tile_shapes([8, 8], [32, 64], [16, 16])
        out[:] = pypto.scaled_mm(a, b, pypto.DT_FP32, sa, sb)
        out2[:] = pypto.scaled_mm(a, bt, pypto.DT_FP32, sat, sb, b_trans=True,
                                  scale_a_trans=True)

    out, out2 = torch.zeros(m, n), torch.zeros(m, n)
    kern(a, b, sa, sb, sat, b.t().contiguous(), out, out2)
    want = (a * sa.repeat_interleave(g, 1)) @ (b * sb.repeat_interleave(g, 1).t())
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(out2, want, rtol=1e-4, atol=1e-4)


def test_scaled_mm_errors():
    def kernel(sa_shape):
        @pypto.jit
        def k(a: ANY, b: ANY, sa: ANY, sb: ANY, out: ANY):
            pypto.set_vec_tile_shapes(8, 32)
            pypto.set_cube_tile_shapes([8, 8], [32, 64], [16, 16])
            out[:] = pypto.scaled_mm(a, b, pypto.DT_FP32, sa, sb)
        return k

    args = (torch.zeros(8, 64), torch.zeros(64, 16))
    with pytest.raises(ValueError, match=r"'scale_a' \[8, 3\] must be \[8, K / g\] with K = 64"):
        kernel((8, 3))(*args, torch.zeros(8, 3), torch.zeros(16, 2), torch.zeros(8, 16))


# pypto.experimental ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_transposed_batchmatmul_as_torch(native, dtype):
    m, batch, k, n = 8, 3, 16, 8
    a, b = torch.randn(m, batch, k).to(dtype), torch.randn(batch, k, n).to(dtype)

    @pypto.jit
    def kern(a: ANY, b: ANY, out: ANY):
        pypto.set_vec_tile_shapes(2, 8, 8)
        pypto.set_cube_tile_shapes([8, 8], [16, 16], [8, 8])
        out[:] = pypto.experimental.transposed_batchmatmul(a, b, pypto.DT_FP32)

    out = torch.zeros(m, batch, n)
    kern(a, b, out)
    want = torch.einsum("mbk,bkn->mbn", a.double(), b.double()).float()
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


def test_transposed_batchmatmul_errors():
    @pypto.jit
    def kern(a: ANY, b: ANY, out: ANY):
        out[:] = pypto.experimental.transposed_batchmatmul(a, b, pypto.DT_FP32)

    with pytest.raises(ValueError, match=r"b \[3, 8, 8\] must be \[B, K, N\] = \[3, 16, N\]"):
        kern(torch.zeros(8, 3, 16), torch.zeros(3, 8, 8), torch.zeros(8, 3, 8))


def test_operation_options_are_recorded_and_returned():
    saved = pypto.experimental.get_operation_options()
    try:
        assert saved == {"combine_axis": False}
        pypto.experimental.set_operation_options(combine_axis=True)
        assert pypto.experimental.get_operation_options() == {"combine_axis": True}
        pypto.experimental.set_operation_options()  # nothing given: nothing changes
        assert pypto.experimental.get_operation_options()["combine_axis"] is True
        with pytest.raises(TypeError, match=r"combine_axis must be a bool"):
            pypto.experimental.set_operation_options(combine_axis=1)
    finally:
        pypto.experimental.set_operation_options(combine_axis=saved["combine_axis"])


# Tensor.id, cache policies -------------------------------------------------------------

def test_tensor_id_and_cache_policy(native):
    seen = {}

    @pypto.jit
    def k(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8)
        y = x + 1
        seen["ids"] = (x.id, x.id, y.id, out.id)
        x.set_cache_policy(pypto.CachePolicy.PREFETCH, True)
        seen["policy"] = (x.get_cache_policy(pypto.CachePolicy.PREFETCH),
                          x.get_cache_policy(pypto.CachePolicy.NONE_CACHEABLE),
                          y.get_cache_policy(pypto.CachePolicy.PREFETCH))
        out[:] = y

    out = torch.zeros(8)
    k(torch.ones(8), out)
    assert torch.equal(out, torch.full((8,), 2.0))
    xid, again, yid, oid = seen["ids"]
    assert xid == again and len({xid, yid, oid}) == 3
    assert all(isinstance(i, int) and i > 0 for i in (xid, yid, oid))
    assert seen["policy"] == (True, False, False)
    t = pypto.Tensor([4], pypto.DT_FP32)
    assert t.id != pypto.Tensor([4], pypto.DT_FP32).id
    with pytest.raises(TypeError, match=r"policy must be a pypto.CachePolicy"):
        t.get_cache_policy("PREFETCH")
    with pytest.raises(TypeError, match=r"value must be a bool"):
        t.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, 1)


# pack, unpack -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int16, torch.int8,
                                   torch.uint8, torch.bool])
def test_pack_and_unpack_round_trip_as_torch_views(native, dtype):
    if dtype == torch.bool:
        x = torch.rand(3, 5) > 0.5
    elif dtype == torch.uint8:
        x = torch.randint(0, 256, (3, 5), dtype=dtype)
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -1000), min(info.max, 1000), (3, 5), dtype=dtype)
        x[0, 0], x[0, 1] = info.min, info.max
    size = x.element_size()
    pdtype = {torch.int32: pypto.DT_INT32, torch.int64: pypto.DT_INT64,
              torch.int16: pypto.DT_INT16, torch.int8: pypto.DT_INT8,
              torch.uint8: pypto.DT_UINT8, torch.bool: pypto.DT_BOOL}[dtype]

    @pypto.jit
    def k(x: ANY, packed: ANY, back: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        p = pypto.pack(x)
        packed[:] = p
        back[:] = pypto.unpack(pypto.reshape(p, [3, 5 * size]), pdtype)

    packed, back = torch.zeros(15 * size, dtype=torch.uint8), torch.zeros(3, 5, dtype=dtype)
    k(x, packed, back)
    assert torch.equal(packed, x.flatten().view(torch.uint8))
    assert torch.equal(back, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_pack_and_unpack_of_floats_as_torch_views(native, dtype):
    x = torch.randn(3, 8).to(dtype)
    x[0, :6] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"),
                             -float("nan")], dtype=dtype)
    x[1, 0] = torch.finfo(dtype).tiny / 4  # a subnormal
    x[1, 1], x[1, 2] = torch.finfo(dtype).max, torch.finfo(dtype).min
    size = x.element_size()
    pdtype = pypto.dtypes.from_torch(dtype)

    @pypto.jit
    def k(x: ANY, packed: ANY, back: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        p = pypto.pack(x)
        packed[:] = p
        back[:] = pypto.unpack(pypto.reshape(p, [3, 8 * size]), pdtype)

    packed, back = torch.zeros(24 * size, dtype=torch.uint8), torch.zeros(3, 8, dtype=dtype)
    k(x, packed, back)
    # torch's NaNs here are the quiet NaNs of their signs, which keep their bits.
    assert torch.equal(packed, x.flatten().view(torch.uint8))
    assert torch.equal(back.view(torch.uint8), x.view(torch.uint8))


def test_unpack_of_random_bytes_to_floats_as_torch(native):
    raw = torch.randint(0, 256, (2, 16), dtype=torch.uint8)
    raw[0, 2:4] = torch.tensor([0x80, 0x7F], dtype=torch.uint8)  # BF16 NaN, FP16 inf/NaN range

    @pypto.jit
    def k(b: ANY, f32: ANY, f16: ANY, bf16: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        f32[:] = pypto.unpack(b, pypto.DT_FP32)
        f16[:] = pypto.unpack(b, pypto.DT_FP16)
        bf16[:] = pypto.unpack(b, pypto.DT_BF16)

    f32, f16 = torch.zeros(2, 4), torch.zeros(2, 8, dtype=torch.float16)
    bf16 = torch.zeros(2, 8, dtype=torch.bfloat16)
    k(raw, f32, f16, bf16)
    # Equal bits, but for NaNs: FP16/BF16 tiles hold FP32, so an FP16 NaN
    # comes out as the quiet NaN of its sign and a BF16 NaN quieted.
    for got, dtype in ((f32, torch.float32), (f16, torch.float16), (bf16, torch.bfloat16)):
        want = raw.view(dtype)
        assert torch.equal(got.isnan(), want.isnan())
        ok = ~want.isnan()
        assert torch.equal(got[ok].view(torch.uint8), want[ok].view(torch.uint8))
        assert torch.equal(got.signbit(), want.signbit())


def test_unpack_of_bytes_as_torch(native):
    raw = torch.randint(0, 256, (2, 16), dtype=torch.uint8)

    @pypto.jit
    def k(b: ANY, i32: ANY, i16: ANY, i64: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        i32[:] = pypto.unpack(b, pypto.DT_INT32)
        i16[:] = pypto.unpack(b, pypto.DT_INT16)
        i64[:] = pypto.unpack(b, pypto.DT_INT64)

    i32, i16 = torch.zeros(2, 4, dtype=torch.int32), torch.zeros(2, 8, dtype=torch.int16)
    i64 = torch.zeros(2, 2, dtype=torch.int64)
    k(raw, i32, i16, i64)
    assert torch.equal(i32, raw.view(torch.int32))
    assert torch.equal(i16, raw.view(torch.int16))
    assert torch.equal(i64, raw.view(torch.int64))


def _bytes_sample(dtype, shape, g):
    """Values of every kind `dtype` has: its extremes, and for a float type
    zeros of both signs, infinities, NaNs and a subnormal."""
    if dtype == torch.bool:
        return torch.rand(*shape, generator=g) > 0.5
    if dtype.is_floating_point:
        x = torch.randn(*shape, generator=g).to(dtype)
        info = torch.finfo(dtype)
        special = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"),
                                -float("nan"), info.tiny / 4, info.max, info.min], dtype=dtype)
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -1000), min(info.max, 1000), shape, generator=g,
                          dtype=dtype)
        special = torch.tensor([info.min, info.max], dtype=dtype)
    flat = x.view(-1)
    flat[:min(flat.numel(), special.numel())] = special[:flat.numel()]
    return x


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int16, torch.int8,
                                   torch.uint8, torch.bool, torch.float32, torch.float16,
                                   torch.bfloat16, torch.float64])
def test_pack_and_unpack_over_a_dynamic_batch_compile_once(native, dtype):
    # x ["n", 5]: pack gives n * 5 * size bytes (a symbolic length), unpack of
    # them reshaped to ["n", 5 * size] gives x back; one compile for every n.
    pdtype = pypto.dtypes.from_torch(dtype)
    size = torch.empty(0, dtype=dtype).element_size()

    @pypto.jit
    def k(x: pypto.Tensor(["n", 5], pdtype), packed: pypto.Tensor(["p"], pypto.DT_UINT8),
          back: pypto.Tensor(["n", 5], pdtype)):
        pypto.set_vec_tile_shapes(4, 8)
        n = x.shape[0]
        p = pypto.pack(x)
        packed[:n * 5 * size] = p
        back[:] = pypto.unpack(pypto.reshape(p, [n, 5 * size]), pdtype)

    g = torch.Generator().manual_seed(7)
    for n in (1, 3, 9, 700):
        x = _bytes_sample(dtype, (n, 5), g)
        packed, back = torch.zeros(n * 5 * size, dtype=torch.uint8), torch.zeros(n, 5, dtype=dtype)
        k(x, packed, back)
        # torch's NaNs here are the quiet NaNs of their signs, which keep their bits.
        assert torch.equal(packed, x.flatten().view(torch.uint8)), n
        assert torch.equal(back.view(torch.uint8), x.view(torch.uint8)), n
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def test_pack_of_a_dynamic_1d_tensor_compiles_once(native):
    @pypto.jit
    def k(x: pypto.Tensor(["n"], pypto.DT_INT32), packed: pypto.Tensor(["p"], pypto.DT_UINT8)):
        pypto.set_vec_tile_shapes(16)
        packed[:x.shape[0] * 4] = pypto.pack(x)

    g = torch.Generator().manual_seed(8)
    for n in (1, 6, 2500):
        x = _bytes_sample(torch.int32, (n,), g)
        packed = torch.zeros(4 * n, dtype=torch.uint8)
        k(x, packed)
        assert torch.equal(packed, x.view(torch.uint8)), n
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int16, torch.bfloat16])
def test_unpack_of_a_dynamic_last_dim_compiles_once(native, dtype):
    # b [2, "L"] of bytes: L // size values per row, one compile for every L.
    pdtype = pypto.dtypes.from_torch(dtype)
    size = torch.empty(0, dtype=dtype).element_size()

    @pypto.jit
    def k(b: pypto.Tensor([2, "L"], pypto.DT_UINT8), out: pypto.Tensor([2, "m"], pdtype)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:, :b.shape[1] // size] = pypto.unpack(b, pdtype)

    g = torch.Generator().manual_seed(9)
    for length in (8, 16, 40, 4104):
        raw = torch.randint(0, 256, (2, length), dtype=torch.uint8, generator=g)
        if dtype.is_floating_point:  # (NaN bit patterns are covered above)
            raw = _bytes_sample(dtype, (2, length // size), g).view(torch.uint8)
        out = torch.zeros(2, length // size, dtype=dtype)
        k(raw, out)
        assert torch.equal(out.view(torch.uint8), raw.view(dtype).view(torch.uint8)), length
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()


def test_unpack_of_a_dynamic_last_dim_that_does_not_divide_is_an_error_at_launch(native):
    @pypto.jit
    def k(b: pypto.Tensor([2, "L"], pypto.DT_UINT8), out: pypto.Tensor([2, "m"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:, :b.shape[1] // 4] = pypto.unpack(b, pypto.DT_FP32)

    raw = torch.randint(0, 256, (2, 12), dtype=torch.uint8)
    out = torch.zeros(2, 3)
    k(raw, out)
    assert torch.equal(out, raw.view(torch.float32))
    out = torch.full((2, 2), 5.0)
    with pytest.raises(ValueError, match=r'"view": the region at offsets \[0,0\] of extent '
                                         r'\[2,12\] leaves its tensor of shape \[2,10\] in '
                                         r'dim 1 .* at L=10(?s:.*)pypto.unpack\(b, '
                                         r'pypto.DT_FP32\)'):
        k(torch.zeros(2, 10, dtype=torch.uint8), out)
    assert torch.equal(out, torch.full((2, 2), 5.0))
    assert pypto.compile_stats()["compiles"] == 1, pypto.compile_stats()

    # The same dynamic L unpacked to types of two sizes in one kernel: L // 2
    # and L // 4 are not told apart by one compile's probes.
    @pypto.jit
    def two(b: pypto.Tensor([2, "L"], pypto.DT_UINT8),
            f32: pypto.Tensor([2, "m"], pypto.DT_FP32),
            i16: pypto.Tensor([2, "h"], pypto.DT_INT16)):
        pypto.set_vec_tile_shapes(4, 8)
        f32[:, :b.shape[1] // 4] = pypto.unpack(b, pypto.DT_FP32)
        i16[:, :b.shape[1] // 2] = pypto.unpack(b, pypto.DT_INT16)

    with pytest.raises(pypto.CompileError, match=r"not told apart by two probe sizes"):
        two(raw, torch.zeros(2, 3), torch.zeros(2, 6, dtype=torch.int16))


def test_pack_unpack_errors():
    def kernel(fn):
        @pypto.jit
        def k(x: ANY, out: ANY):
            pypto.set_vec_tile_shapes(4, 8)
            out[:] = fn(x)
        return k

    with pytest.raises(ValueError, match=r"the last dim of 'input' \[6\] must be a multiple of "
                                         r"4 \(the size of DT_FP32\)"):
        kernel(lambda b: pypto.unpack(b, pypto.DT_FP32))(torch.zeros(6, dtype=torch.uint8),
                                                         torch.zeros(1))
    with pytest.raises(TypeError, match=r"pypto.unpack: argument 'input' has dtype DT_INT32"):
        kernel(lambda b: pypto.unpack(b, pypto.DT_INT8))(torch.zeros(8, dtype=torch.int32),
                                                         torch.zeros(8, dtype=torch.int8))
    with pytest.raises(ValueError, match=r"pypto.pack: 'input' has a valid region \[2, 8\] "
                                         r"smaller than its shape \[4, 8\]"):
        kernel(lambda x: pypto.pack(pypto.view(x, [4, 8], [0, 0], valid_shape=[2, 8])))(
            torch.zeros(4, 8, dtype=torch.int32), torch.zeros(128, dtype=torch.uint8))
    with pytest.raises(ValueError, match=r"the last dim of 'input' \[6\] must be a multiple of 4"):
        kernel(lambda b: pypto.unpack(b, pypto.DT_INT32))(torch.zeros(6, dtype=torch.uint8),
                                                          torch.zeros(1, dtype=torch.int32))
