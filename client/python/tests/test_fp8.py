"""The FP8 dtypes (DT_FP8E4M3, DT_FP8E5M2, DT_FP8E8M0) through kernels:
every code decodes as a numpy decoder written from the OCP FP8/MX spec
says, FP32 -> FP8 rounds to nearest even (ties, overflow, NaN, infinities,
subnormals) as a numpy encoder written the same way says, saturation, and
how FP8 tensors cross (uint8 bit patterns)."""

import numpy as np
import pytest
import torch

import pypto
from pypto import SaturationMode
from pypto._proto import graph_pb2

FP8 = [pypto.DT_FP8E4M3, pypto.DT_FP8E5M2, pypto.DT_FP8E8M0]


def decode(codes, dtype):
    """float64 values of uint8 `codes` of an FP8 `dtype`, from the spec."""
    c = np.asarray(codes, np.int64)
    if dtype == pypto.DT_FP8E8M0:
        return np.where(c == 0xFF, np.nan, np.ldexp(1.0, c - 127))
    mbits, bias = (3, 7) if dtype == pypto.DT_FP8E4M3 else (2, 15)
    sign = np.where(c & 0x80, -1.0, 1.0)
    e = (c & 0x7F) >> mbits
    m = c & ((1 << mbits) - 1)
    normal = np.ldexp(1.0 + m / (1 << mbits), e - bias)
    sub = np.ldexp(m.astype(np.float64), 1 - bias - mbits)
    v = sign * np.where(e == 0, sub, normal)
    if dtype == pypto.DT_FP8E4M3:  # "fn": no inf; S.1111.111 is NaN
        return np.where((c & 0x7F) == 0x7F, np.nan, v)
    emax = (1 << (7 - mbits)) - 1
    return np.where(e == emax, np.where(m == 0, sign * np.inf, np.nan), v)


def encode(x, dtype):
    """uint8 codes of float64 `x` rounded to nearest even (ties to the even
    code) among `dtype`'s finite magnitudes; the code past the largest
    (E4M3's NaN, E5M2's inf, E8M0's NaN) stands for overflow."""
    x = np.asarray(x, np.float64)
    if dtype == pypto.DT_FP8E8M0:
        codes = np.arange(256)
        mags = np.ldexp(1.0, codes - 127)  # 255: 2^128, overflow -> NaN code
        a, sign = np.abs(x), 0
    else:
        last = 0x7F if dtype == pypto.DT_FP8E4M3 else 0x7C
        codes = np.arange(last + 1)
        mags = decode(codes, dtype)
        mags[last] = 480.0 if dtype == pypto.DT_FP8E4M3 else 65536.0
        a, sign = np.abs(x), np.where(np.signbit(x), 0x80, 0)
    hi = np.clip(np.searchsorted(mags, a), 1, len(mags) - 1)
    lo = hi - 1
    dlo, dhi = a - mags[lo], mags[hi] - a
    pick = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    pick = np.where(a >= mags[-1], len(mags) - 1, pick)
    out = codes[pick] | sign
    nan = 0xFF if dtype == pypto.DT_FP8E8M0 else (0x7F if dtype == pypto.DT_FP8E4M3 else 0x7E)
    if dtype == pypto.DT_FP8E8M0:
        out = np.where(np.isnan(x) | np.isinf(x), 0xFF, out)
    else:
        out = np.where(np.isnan(x), nan | sign, out)
        inf = 0x7F if dtype == pypto.DT_FP8E4M3 else 0x7C
        out = np.where(np.isinf(x), inf | sign, out)
    return out.astype(np.uint8)


def same(got_codes, want_codes, dtype):
    """Equal codes, any NaN code matching any NaN code."""
    g, w = decode(got_codes, dtype), decode(want_codes, dtype)
    assert np.array_equal(np.isnan(g), np.isnan(w))
    ok = ~np.isnan(w)
    np.testing.assert_array_equal(np.asarray(got_codes)[ok], np.asarray(want_codes)[ok])


def kernel(src, dst, satmode=SaturationMode.OFF):
    @pypto.jit
    def k(x: pypto.Tensor([], src), out: pypto.Tensor([], dst)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = pypto.cast(x, dst, satmode=satmode)
    return k


def test_spec_decoder_knows_the_formats():
    assert decode([0x7E], pypto.DT_FP8E4M3)[0] == 448
    assert decode([0x01], pypto.DT_FP8E4M3)[0] == 2.0 ** -9
    assert decode([0x7B], pypto.DT_FP8E5M2)[0] == 57344
    assert decode([0x7C], pypto.DT_FP8E5M2)[0] == np.inf
    assert decode([0x01], pypto.DT_FP8E5M2)[0] == 2.0 ** -16
    assert decode([127], pypto.DT_FP8E8M0)[0] == 1.0
    # and the encoder inverts it on every finite code
    for dt in FP8:
        c = np.arange(256)
        v = decode(c, dt)
        fin = np.isfinite(v)
        np.testing.assert_array_equal(encode(v[fin], dt), c[fin])


@pytest.mark.parametrize("dtype", FP8, ids=lambda d: d.name)
def test_every_code_decodes_as_the_spec(native, dtype):
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).reshape(16, 16)
    out = torch.empty(16, 16)
    kernel(dtype, pypto.DT_FP32)(codes, out)
    want = decode(codes.numpy(), dtype).astype(np.float32)
    got = out.numpy()
    np.testing.assert_array_equal(got, want)  # NaN where the spec says NaN
    assert np.array_equal(np.signbit(got[got == 0]), np.signbit(want[got == 0]))


@pytest.mark.parametrize("dtype", FP8, ids=lambda d: d.name)
def test_every_code_round_trips_through_fp32(native, dtype):
    codes = np.arange(256, dtype=np.uint8).reshape(16, 16)

    @pypto.jit
    def k(x: pypto.Tensor([], dtype), out: pypto.Tensor([], dtype)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = pypto.cast(pypto.cast(x, pypto.DT_FP32), dtype)

    out = np.zeros((16, 16), np.uint8)
    k(codes, out)
    same(out, codes, dtype)


def _probes(dtype):
    """Every code's value, the midpoints between neighbours (ties) and the
    FP32 values either side of each, some past the largest value, 0, -0,
    inf, NaN, values below the smallest subnormal."""
    v = decode(np.arange(256), dtype)
    v = np.unique(v[np.isfinite(v)])
    mid = (v[:-1] + v[1:]) / 2
    f32 = lambda a: np.asarray(a, np.float32)  # noqa: E731
    xs = [f32(v), f32(mid), np.nextafter(f32(mid), np.float32(np.inf)),
          np.nextafter(f32(mid), np.float32(-np.inf)),
          f32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3e38, -3e38, 464, 465, -480,
               61440, 61439, 65536, 1e5, 2.0 ** -10, 3 * 2.0 ** -10, 2.0 ** -17, 1.5, 3.0, 6.0])]
    x = np.concatenate([a.ravel() for a in xs])
    n = -(-x.size // 256) * 256
    return np.resize(x, n).reshape(-1, 16).astype(np.float32)


@pytest.mark.parametrize("dtype", FP8, ids=lambda d: d.name)
def test_fp32_to_fp8_rounds_to_nearest_even(native, dtype):
    x = _probes(dtype)
    out = np.zeros(x.shape, np.uint8)
    kernel(pypto.DT_FP32, dtype)(x, out)
    same(out, encode(x, dtype), dtype)


@pytest.mark.parametrize("dtype", FP8, ids=lambda d: d.name)
def test_saturation_clamps_to_the_largest_finite_value(native, dtype):
    x = _probes(dtype)
    out = np.zeros(x.shape, np.uint8)
    kernel(pypto.DT_FP32, dtype, SaturationMode.ON)(x, out)
    big = {pypto.DT_FP8E4M3: 448.0, pypto.DT_FP8E5M2: 57344.0, pypto.DT_FP8E8M0: 2.0 ** 127}
    want = encode(np.clip(x.astype(np.float64), -big[dtype], big[dtype]), dtype)
    same(out, want, dtype)
    assert not np.isinf(decode(out, dtype)).any()


def test_overflow_without_saturation_and_special_values(native):
    x = np.array([[448, 464, 465, 1e4, np.inf, -np.inf, np.nan, 2.0 ** -10] * 2] * 16,
                 np.float32)
    out = np.zeros(x.shape, np.uint8)
    kernel(pypto.DT_FP32, pypto.DT_FP8E4M3)(x, out)
    assert list(out[0, :8]) == [0x7E, 0x7E, 0x7F, 0x7F, 0x7F, 0xFF, 0x7F, 0x00]
    kernel(pypto.DT_FP32, pypto.DT_FP8E5M2)(x, out)
    assert list(out[0, :6]) == [0x5F, 0x5F, 0x5F, 0x71, 0x7C, 0xFC]  # 464: nearer 448
    assert np.isnan(decode(out[0, 6:7], pypto.DT_FP8E5M2)).all()


def test_fp16_and_integers_convert_to_and_from_fp8(native):
    x = np.array([[-3, -1, 0, 1, 2, 5, 17, 100] * 2] * 16, np.int32)
    out = np.zeros(x.shape, np.uint8)
    kernel(pypto.DT_INT32, pypto.DT_FP8E4M3)(x, out)
    same(out, encode(x, pypto.DT_FP8E4M3), pypto.DT_FP8E4M3)
    back = np.zeros(x.shape, np.int32)
    kernel(pypto.DT_FP8E4M3, pypto.DT_INT32)(out, back)
    np.testing.assert_array_equal(back, decode(out, pypto.DT_FP8E4M3).astype(np.int32))
    h = np.zeros(x.shape, np.float16)
    kernel(pypto.DT_FP8E5M2, pypto.DT_FP16)(out, h)
    np.testing.assert_array_equal(h, decode(out, pypto.DT_FP8E5M2).astype(np.float16))


def test_fp8_graphs_say_schema_version_3():
    g = kernel(pypto.DT_FP8E4M3, pypto.DT_FP32).trace(
        torch.zeros(16, 16, dtype=torch.uint8), torch.empty(16, 16))
    assert g.schema_version == graph_pb2.SCHEMA_VERSION_3
    assert g.values[0].dtype == graph_pb2.DT_FP8E4M3
    g = kernel(pypto.DT_FP32, pypto.DT_FP16).trace(torch.zeros(16, 16),
                                                    torch.empty(16, 16, dtype=torch.float16))
    assert g.schema_version == graph_pb2.SCHEMA_VERSION_1


def test_fp8_arguments_are_uint8_bits_and_arithmetic_needs_a_cast(native):
    k = kernel(pypto.DT_FP8E4M3, pypto.DT_FP32)
    with pytest.raises(TypeError, match=r"expected dtype DT_FP8E4M3.*got DT_FP32"):
        k(torch.zeros(16, 16), torch.empty(16, 16))

    @pypto.jit
    def add(x: pypto.Tensor([], pypto.DT_FP8E4M3), out: pypto.Tensor([], pypto.DT_FP8E4M3)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = x + x

    with pytest.raises(TypeError, match="DT_FP8E4M3"):
        add(torch.zeros(16, 16, dtype=torch.uint8), torch.zeros(16, 16, dtype=torch.uint8))

    @pypto.jit
    def total(x: pypto.Tensor([], pypto.DT_FP8E4M3), out: pypto.Tensor([], pypto.DT_FP8E4M3)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = pypto.sum(x, 1, keepdim=True)

    with pytest.raises(TypeError, match="cast FP8 to DT_FP32 first"):
        total(torch.zeros(16, 16, dtype=torch.uint8), torch.zeros(16, 1, dtype=torch.uint8))


def test_fp8_views_and_assembles_move_bits_unchanged(native):
    @pypto.jit
    def k(x: pypto.Tensor([], pypto.DT_FP8E5M2), out: pypto.Tensor([], pypto.DT_FP8E5M2)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = x.transpose(0, 1)

    codes = np.arange(256, dtype=np.uint8).reshape(16, 16)
    out = np.zeros((16, 16), np.uint8)
    k(codes, out)
    same(out, codes.T, pypto.DT_FP8E5M2)


@pytest.mark.parametrize("dtype", FP8, ids=lambda d: d.name)
def test_pypto_fp8_converts_as_the_spec(dtype):
    codes = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(pypto.fp8.to_float(codes, dtype), decode(codes, dtype))
    x = _probes(dtype).astype(np.float64)
    same(pypto.fp8.from_float(x, dtype), encode(x, dtype), dtype)
    with pytest.raises(TypeError, match="pypto.fp8.to_float: dtype must be DT_FP8E4M3"):
        pypto.fp8.to_float(codes, pypto.DT_FP16)


def test_eager_runs_read_and_write_fp8_bits(native):
    x = _probes(pypto.DT_FP8E4M3)[:16]
    k = kernel(pypto.DT_FP32, pypto.DT_FP8E4M3)
    compiled, eager = np.zeros(x.shape, np.uint8), np.zeros(x.shape, np.uint8)
    k(x, compiled)
    with pypto.debug.eager():
        k(x, eager)
    same(eager, compiled, pypto.DT_FP8E4M3)
    codes = np.arange(256, dtype=np.uint8).reshape(16, 16)
    back = np.zeros((16, 16), np.float32)
    with pypto.debug.eager():
        kernel(pypto.DT_FP8E5M2, pypto.DT_FP32)(codes, back)
    np.testing.assert_array_equal(back, decode(codes, pypto.DT_FP8E5M2).astype(np.float32))


def test_full_of_an_fp8_dtype_is_the_cast_value(native):
    @pypto.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32),
          bits: pypto.Tensor([], pypto.DT_FP8E4M3)):
        pypto.set_vec_tile_shapes(16, 16)
        f = pypto.full([16, 16], 0.3, pypto.DT_FP8E4M3)
        out[:] = x + pypto.cast(f, pypto.DT_FP32)
        bits[:] = f

    out, bits = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.uint8)
    k(np.zeros((16, 16), np.float32), out, bits)
    want = encode(np.float32(0.3), pypto.DT_FP8E4M3)
    assert (bits == want).all()
    assert (out == decode(want, pypto.DT_FP8E4M3)).all()  # 0.3125
