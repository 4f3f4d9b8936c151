"""pypto.cast's rounding modes (pypto.CastMode) and saturation
(pypto.SaturationMode) against numpy's rounding and clipping."""

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


def test_modes_without_an_instruction_are_refused_by_name():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(pypto.NotYetImplementedError,
                       match=r"pypto.cast: CAST_FLOOR from DT_FP32 to DT_FP16 .* bitcast"):
        run1(lambda t: pypto.cast(t, pypto.DT_FP16, CastMode.CAST_FLOOR), x,
             out_dtype=np.float16)
    with pytest.raises(ValueError, match=r"CAST_ODD rounds to a narrower float"):
        run1(lambda t: pypto.cast(t, pypto.DT_INT32, CastMode.CAST_ODD), x, out_dtype=np.int32)
    with pytest.raises(TypeError, match=r"pypto.cast: mode must be a pypto.CastMode"):
        run1(lambda t: pypto.cast(t, pypto.DT_INT32, 3), x, out_dtype=np.int32)
    # Exact conversions take every mode.
    got = run1(lambda t: pypto.cast(t, pypto.DT_FP32, CastMode.CAST_FLOOR),
               np.arange(32, dtype=np.int8).reshape(4, 8), out_dtype=np.float32)
    np.testing.assert_array_equal(got, np.arange(32, dtype=np.float32).reshape(4, 8))
