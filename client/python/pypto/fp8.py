"""The FP8 dtypes' values in numpy (eager runs and users' data): FP8
tensors cross as uint8 bit patterns (dtypes.py), and these convert them.

    pypto.fp8.to_float(codes, pypto.DT_FP8E4M3)    # uint8 -> float64
    pypto.fp8.from_float(x, pypto.DT_FP8E4M3)      # float -> uint8, nearest even

from_float rounds as a kernel's cast does (pto_tile_fp8.h): E4M3 and E8M0
overflow to NaN, E5M2 to inf; E8M0 drops the sign and takes values below
2**-127 to 2**-127.
"""

import numpy as np

from . import dtypes


def _table(dtype):
    """float64 values of codes 0..255 of `dtype`."""
    c = np.arange(256)
    if dtype == dtypes.DT_FP8E8M0:
        return np.where(c == 0xFF, np.nan, np.exp2(c - 127.0))
    mbits, bias = (3, 7) if dtype == dtypes.DT_FP8E4M3 else (2, 15)
    e, m = (c & 0x7F) >> mbits, c & ((1 << mbits) - 1)
    mag = np.where(e == 0, m * 2.0 ** (1 - bias - mbits),
                   (1 + m / 2.0 ** mbits) * np.exp2(e - bias))
    v = np.where(c & 0x80, -mag, mag)
    if dtype == dtypes.DT_FP8E4M3:
        return np.where((c & 0x7F) == 0x7F, np.nan, v)
    return np.where(e == 31, np.where(m == 0, np.copysign(np.inf, v), np.nan), v)


def _check(dtype, what):
    if dtype not in dtypes.FP8_TYPES:
        raise TypeError(f"{what}: dtype must be DT_FP8E4M3, DT_FP8E5M2 or DT_FP8E8M0, got "
                        f"{dtype!r}")


def to_float(codes, dtype):
    """float64 values of uint8 FP8 `codes` of `dtype`."""
    _check(dtype, "pypto.fp8.to_float")
    return _table(dtype)[np.asarray(codes, np.uint8)]


def from_float(x, dtype):
    """uint8 codes of `x` in `dtype`, rounded to nearest even."""
    _check(dtype, "pypto.fp8.from_float")
    x = np.asarray(x, np.float64)
    table = _table(dtype)
    e8m0 = dtype == dtypes.DT_FP8E8M0
    top = 0xFE if e8m0 else (0x7E if dtype == dtypes.DT_FP8E4M3 else 0x7B)
    mags = table[:top + 1]                                 # ascending, finite
    past = mags[-1] + (mags[-1] - mags[-2])                # the value one step past
    a = np.abs(x)
    hi = np.clip(np.searchsorted(mags, a), 1, top)
    lo = hi - 1
    up = (mags[hi] - a < a - mags[lo]) | ((mags[hi] - a == a - mags[lo]) & (lo % 2 == 1))
    code = np.where(up, hi, lo)
    code = np.where(a <= mags[0], 0, code)
    over = (a - mags[-1] > past - a) | ((a - mags[-1] == past - a) & (top % 2 == 1))
    over_code = 0xFF if e8m0 else (0x7F if dtype == dtypes.DT_FP8E4M3 else 0x7C)
    code = np.where((a > mags[-1]) & over, over_code, np.where(a >= mags[-1], top, code))
    nan_code = 0xFF if e8m0 else (0x7F if dtype == dtypes.DT_FP8E4M3 else 0x7E)
    code = np.where(np.isnan(x), nan_code, code)
    if not e8m0:
        code = code | np.where(np.signbit(x), 0x80, 0)
    return code.astype(np.uint8)
