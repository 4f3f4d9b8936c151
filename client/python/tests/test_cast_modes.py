"""pypto.cast's rounding modes (pypto.CastMode) and saturation
(pypto.SaturationMode) against numpy's rounding and clipping."""

from fractions import Fraction

import numpy as np
import pytest

import pypto
from pypto import CastMode, SaturationMode
from test_elementwise import run1

TIES = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.49999997, 3.7, -3.7, 0.0, 126.5]


def _values(dtype):
    rng = np.random.default_rng(7)
    x = rng.uniform(-120, 120, (4, 32)).astype(dtype)
    x[0, :len(TIES)] = TIES
    return x


def _round_half_away(x):
    return np.trunc(x) + np.where(np.abs(x - np.trunc(x)) >= 0.5, np.sign(x), 0)


ROUNDERS = {
    CastMode.CAST_NONE: np.trunc, CastMode.CAST_TRUNC: np.trunc, CastMode.CAST_RINT: np.rint,
    CastMode.CAST_ROUND: _round_half_away, CastMode.CAST_FLOOR: np.floor,
    CastMode.CAST_CEIL: np.ceil,
}


@pytest.mark.parametrize("src", [np.float32, np.float16])
@pytest.mark.parametrize("mode", list(ROUNDERS))
def test_float_to_int_rounds_by_mode(native, src, mode):
    x = _values(src)
    got = run1(lambda t: pypto.cast(t, pypto.DT_INT32, mode), x, out_dtype=np.int32)
    want = ROUNDERS[mode](x.astype(np.float64)).astype(np.int32)
    np.testing.assert_array_equal(got, want)


def test_mode_by_name_and_method_form(native):
    x = _values(np.float32)
    got = run1(lambda t: t.cast(pypto.DT_INT16, "CAST_FLOOR"), x, out_dtype=np.int16)
    np.testing.assert_array_equal(got, np.floor(x).astype(np.int16))
    with pypto.debug.eager():  # the same composition, computed op by op
        got = run1(lambda t: t.cast(pypto.DT_INT16, CastMode.CAST_ROUND), x, out_dtype=np.int16)
    np.testing.assert_array_equal(got, _round_half_away(x).astype(np.int16))


@pytest.mark.parametrize("dst,npdt", [(pypto.DT_INT8, np.int8), (pypto.DT_UINT8, np.uint8),
                                      (pypto.DT_INT32, np.int32)])
def test_saturation_clamps_and_nan_is_zero(native, dst, npdt):
    x = np.linspace(-5e9, 5e9, 4 * 32).astype(np.float32).reshape(4, 32)
    x[0, :6] = [np.nan, np.inf, -np.inf, 127.4, 127.6, -128.6]
    got = run1(lambda t: pypto.cast(t, dst, CastMode.CAST_RINT, SaturationMode.ON), x,
               out_dtype=npdt)
    info = np.iinfo(npdt)
    want = np.clip(np.rint(np.nan_to_num(x.astype(np.float64), nan=0.0)), info.min, info.max)
    np.testing.assert_array_equal(got, want.astype(npdt))
    wrapped = run1(lambda t: pypto.cast(t, pypto.DT_INT8), np.array([[300.0] * 8], np.float32),
                   out_dtype=np.int8)
    assert (wrapped == np.int8(44)).all()  # OFF wraps as torch does


def test_saturation_between_integers(native):
    x = np.array([[-40000, -129, -128, 0, 127, 128, 255, 40000]], np.int32)
    got = run1(lambda t: pypto.cast(t, pypto.DT_INT8, satmode=SaturationMode.ON), x,
               out_dtype=np.int8)
    np.testing.assert_array_equal(got, np.clip(x, -128, 127).astype(np.int8))
    u = np.array([[0, 1, 127, 128, 200, 255, 3, 9]], np.uint8)
    got = run1(lambda t: pypto.cast(t, pypto.DT_INT8, satmode="ON"), u, out_dtype=np.int8)
    np.testing.assert_array_equal(got, np.minimum(u, 127).astype(np.int8))


def test_saturation_to_a_narrower_float(native):
    x = np.array([[1e5, -1e5, 65519.0, 70000.0, np.inf, -np.inf, np.nan, 1.5]], np.float32)
    got = run1(lambda t: pypto.cast(t, pypto.DT_FP16, satmode=SaturationMode.ON), x,
               out_dtype=np.float16)
    want = np.clip(x, -65504, 65504).astype(np.float16)
    np.testing.assert_array_equal(got, want)
    got = run1(lambda t: pypto.cast(t, pypto.DT_FP16), x, out_dtype=np.float16)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, x.astype(np.float16))  # OFF overflows to inf


@np.errstate(over="ignore")
def _directed_reference(values, np_dtype, mode):
    """Each value (a Python int or float, exact) rounded to np_dtype by
    `mode`, from the two values of np_dtype around it (numpy's nextafter;
    past the largest finite value the next one is infinity, at the distance
    the next power of two would be)."""
    uint = _UINT[np_dtype]
    top = np.finfo(np_dtype).max
    past_top = 2 * Fraction(float(top)) - Fraction(float(np.nextafter(top, np_dtype(0))))

    def fraction(v):
        return Fraction(float(v)) if np.isfinite(v) else (past_top if v > 0 else -past_top)

    def bits(v):
        return int(np.array([v], np_dtype).view(uint)[0])

    out = []
    for v in values:
        if isinstance(v, float) and not np.isfinite(v):
            out.append(np_dtype(v))
            continue
        exact = Fraction(v)
        c = np_dtype(float(v))  # nearest (through double for ints): a neighbour
        if np.isfinite(c) and Fraction(float(c)) == exact:
            out.append(c)
            continue
        if not np.isfinite(c):  # past the largest finite value
            lo, hi = (top, c) if c > 0 else (c, -top)
        elif fraction(c) < exact:
            lo, hi = c, np.nextafter(c, np_dtype(np.inf))
        else:
            lo, hi = np.nextafter(c, np_dtype(-np.inf)), c
        d_lo, d_hi = exact - fraction(lo), fraction(hi) - exact
        toward_zero = lo if exact > 0 else hi
        if mode == CastMode.CAST_FLOOR:
            value = lo
        elif mode == CastMode.CAST_CEIL:
            value = hi
        elif mode == CastMode.CAST_TRUNC:
            value = toward_zero
        elif mode == CastMode.CAST_ODD:
            value = np.array([bits(toward_zero) | 1], uint).view(np_dtype)[0]
        elif d_lo != d_hi:
            value = lo if d_lo < d_hi else hi
        elif mode == CastMode.CAST_ROUND:
            value = hi if exact > 0 else lo
        else:  # CAST_RINT: the even one
            value = lo if bits(lo) % 2 == 0 else hi
        out.append(np_dtype(value))
    return np.array(out, np_dtype)


_UINT = {np.float16: np.uint16, np.float32: np.uint32}
DIRECTED = [CastMode.CAST_FLOOR, CastMode.CAST_CEIL, CastMode.CAST_TRUNC, CastMode.CAST_ROUND,
            CastMode.CAST_ODD, CastMode.CAST_RINT]


@pytest.mark.parametrize("mode", DIRECTED)
def test_directed_modes_to_a_narrower_float(native, mode):
    ties = [1 + 2 ** -11, 1 + 3 * 2 ** -11, -(1 + 2 ** -11), -(1 + 3 * 2 ** -11), 2049.0, 2051.0,
            -2049.0]
    special = [0.0, -0.0, 1e-10, -1e-10, 2 ** -25, -(2 ** -25), 3 * 2 ** -26, 65504.0, 65519.0,
               65520.0, 70000.0, -70000.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.1, -0.1]
    rng = np.random.default_rng(3)
    x = rng.standard_normal(64 - len(ties) - len(special)) * 10.0 ** rng.integers(-6, 5, 64 - len(
        ties) - len(special))
    x = np.concatenate([ties, special, x]).astype(np.float32).reshape(4, 16)
    got = run1(lambda t: pypto.cast(t, pypto.DT_FP16, mode), x, out_dtype=np.float16)
    want = _directed_reference([float(v) for v in x.ravel()], np.float16, mode).reshape(4, 16)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("mode", DIRECTED)
@pytest.mark.parametrize("src,np_src", [(pypto.DT_INT32, np.int32), (pypto.DT_INT64, np.int64)])
def test_directed_modes_from_an_integer_to_a_float(native, mode, src, np_src):
    big = [2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24 + 1), 2 ** 25 + 2, 2 ** 31 - 1, -(2 ** 31),
           2 ** 24 + 2, 0, 1, -1, 16777217 * 3]
    if np_src == np.int64:
        big += [2 ** 63 - 1, -(2 ** 63), 2 ** 53 + 1, 2 ** 40 + 2 ** 16 + 1]
    rng = np.random.default_rng(5)
    hi = 2 ** 31 - 1 if np_src == np.int32 else 2 ** 62
    x = np.concatenate([np.array(big, np.int64),
                        rng.integers(-hi, hi, 32 - len(big), dtype=np.int64)]).astype(np_src)
    x = x.reshape(2, 16)
    got = run1(lambda t: pypto.cast(t, pypto.DT_FP32, mode), x, out_dtype=np.float32)
    want = _directed_reference([int(v) for v in x.ravel()], np.float32, mode).reshape(2, 16)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_modes_are_checked_by_name():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError, match=r"CAST_ODD rounds to a narrower float"):
        run1(lambda t: pypto.cast(t, pypto.DT_INT32, CastMode.CAST_ODD), x, out_dtype=np.int32)
    with pytest.raises(TypeError, match=r"pypto.cast: mode must be a pypto.CastMode"):
        run1(lambda t: pypto.cast(t, pypto.DT_INT32, 3), x, out_dtype=np.int32)
    # Exact conversions take every mode.
    got = run1(lambda t: pypto.cast(t, pypto.DT_FP32, CastMode.CAST_FLOOR),
               np.arange(32, dtype=np.int8).reshape(4, 8), out_dtype=np.float32)
    np.testing.assert_array_equal(got, np.arange(32, dtype=np.float32).reshape(4, 8))
