"""pypto.cast with PyPTO's rounding mode (pypto.CastMode) and saturation
switch (pypto.SaturationMode), composed of the strict cast (primitives.cast:
torch's rules) and the rounding, comparison and select ops.

    cast(x, DT_INT32)                                  # toward zero, wraps
    cast(x, DT_INT8, CastMode.CAST_RINT)               # half to even, wraps
    cast(x, DT_INT8, CastMode.CAST_ROUND, SaturationMode.ON)  # half away, clamps

Float -> integer: CAST_NONE and CAST_TRUNC round toward zero, CAST_RINT half
to even, CAST_ROUND half away from zero, CAST_FLOOR down, CAST_CEIL up. With
SaturationMode.ON a value past the integer type's range gives its minimum or
maximum and NaN gives 0; OFF wraps to the width as torch does.
Integer -> narrower integer: ON clamps to the range; OFF wraps.
Float -> narrower float: CAST_NONE and CAST_RINT round to nearest even; ON
clamps finite values to the type's largest finite value (NaN and infinities
stay); the directed modes there, and any mode but NONE/RINT from an integer
to a float, would need a bitcast instruction and raise NotYetImplementedError.
Conversions that are exact (to a wider type, to BOOL) take every mode.
The FP8 types (DT_FP8E4M3, DT_FP8E5M2, DT_FP8E8M0) are floats here: to one,
CAST_NONE and CAST_RINT round to nearest even and ON clamps to 448, 57344 or
2**127 (infinities too; without it E4M3 and E8M0 overflow to NaN, E5M2 to
inf); from one, every mode converts through DT_FP32 (exact).
"""

import numpy as np

from . import dtypes, ops
from .enums import CastMode, SaturationMode
from .errors import NotYetImplementedError
from .primitives import FLOAT_TYPES, cast as strict_cast, check_traced

_MAX_FINITE = {dtypes.DT_FP16: 65504.0, dtypes.DT_BF16: 3.3895313892515355e38,
               dtypes.DT_FP32: 3.4028234663852886e38, dtypes.DT_FP8E4M3: 448.0,
               dtypes.DT_FP8E5M2: 57344.0, dtypes.DT_FP8E8M0: 2.0 ** 127}
_INTEGERS = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64, dtypes.DT_UINT8)


def _enum(value, enum_type, name, what):
    if isinstance(value, enum_type):
        return value
    if isinstance(value, str) and value in enum_type.__members__:
        return enum_type[value]
    raise TypeError(f"{what}: {name} must be a pypto.{enum_type.__name__} (or its name), "
                    f"got {value!r}")


def _int_range(dtype):
    info = np.iinfo(dtypes.to_numpy(dtype))
    return int(info.min), int(info.max)


def _round(x, mode):
    """x (float) rounded to an integral value by `mode`."""
    if mode in (CastMode.CAST_NONE, CastMode.CAST_TRUNC):
        return x  # the strict cast truncates
    if mode == CastMode.CAST_RINT:
        return ops.round(x)
    if mode == CastMode.CAST_FLOOR:
        return ops.floor(x)
    if mode == CastMode.CAST_CEIL:
        return ops.ceil(x)
    # CAST_ROUND: half away from zero. x - trunc(x) is exact, so a tie is
    # seen as exactly 0.5 (adding 0.5 first would round 0.49999997 up).
    whole = ops.trunc(x)
    frac = ops.abs(ops.sub(x, whole))
    return ops.where(ops.ge(frac, 0.5), ops.add(whole, ops.sign(x)), whole)


def _float_to_int(x, dtype, mode, satmode):
    rounded = _round(x, mode)
    out = strict_cast(rounded, dtype)
    if satmode == SaturationMode.OFF:
        return out
    lo, hi = _int_range(dtype)
    # hi + 1 and lo are powers of two (or 0), exact in every float type, so
    # the comparisons see the integral `rounded` exactly (hi itself may not
    # be representable: 2**31 - 1 in FP32 is 2**31).
    out = ops.where(ops.ge(rounded, float(hi + 1)), _like(out, hi), out)
    out = ops.where(ops.le(rounded, float(lo)), _like(out, lo), out)
    return ops.where(ops.isnan(x), _like(out, 0), out)


def _like(t, value):
    """A tensor of t's shape, valid region and integer dtype holding value:
    0 or the type's minimum or maximum. where() takes a number beside float
    tensors only, and integer ops take numbers up to 2**24, so the bounds of
    INT32/INT64 are made as 1 << (bits - 1) and its complement."""
    zeros = ops.mul(t, 0)
    if abs(value) <= 2 ** 24:
        return ops.add(zeros, value)
    lo, hi = _int_range(t.dtype)
    assert value in (lo, hi), value
    low = ops.bitwise_left_shift(ops.add(zeros, 1), 8 * dtypes.bytes_of(t.dtype) - 1)
    return low if value == lo else ops.bitwise_not(low)


def _not_here(what, mode, src, dst):
    return NotYetImplementedError(
        f"{what}: {mode.name} from {src.name} to {dst.name} rounds a float result in a "
        f"direction of its own, which needs a bitcast instruction this version does not "
        f"have; CAST_NONE and CAST_RINT round to nearest even")


def cast(input, dtype, mode=CastMode.CAST_NONE, satmode=SaturationMode.OFF):  # noqa: A002
    """input converted to `dtype` with rounding `mode` (pypto.CastMode) and
    saturation `satmode` (pypto.SaturationMode); the module docstring gives
    the rules. The defaults are the strict cast (torch's rules)."""
    what = "pypto.cast"
    mode = _enum(mode, CastMode, "mode", what)
    satmode = _enum(satmode, SaturationMode, "satmode", what)
    check_traced(input, what, "input")
    if mode == CastMode.CAST_NONE and satmode == SaturationMode.OFF:
        return strict_cast(input, dtype)
    src = input.dtype
    if dtype == dtypes.DT_BOOL or dtype == src:
        return strict_cast(input, dtype)
    if src in dtypes.FP8_TYPES:  # every FP8 value is an FP32
        return cast(strict_cast(input, dtypes.DT_FP32), dtype, mode, satmode)
    if src in FLOAT_TYPES and dtype in _INTEGERS:
        if mode == CastMode.CAST_ODD:
            raise ValueError(f"{what}: CAST_ODD rounds to a narrower float; for {src.name} "
                             f"to {dtype.name} take CAST_RINT, CAST_ROUND, CAST_FLOOR, "
                             f"CAST_CEIL or CAST_TRUNC")
        return _float_to_int(input, dtype, mode, satmode)
    if src in _INTEGERS + (dtypes.DT_BOOL,) and dtype in _INTEGERS:
        if satmode == SaturationMode.ON and src != dtypes.DT_BOOL:
            (lo, hi), (src_lo, src_hi) = _int_range(dtype), _int_range(src)
            if lo > src_lo or hi < src_hi:  # bounds in the source's own range
                input = ops.clip(input, max(lo, src_lo), min(hi, src_hi))  # noqa: A001
            return strict_cast(input, dtype)
        return strict_cast(input, dtype)
    # A float result.
    exact = dtype not in dtypes.FP8_TYPES and (
        (src in FLOAT_TYPES and dtypes.bytes_of(dtype) > dtypes.bytes_of(src))
        or src in (dtypes.DT_BOOL, dtypes.DT_INT8, dtypes.DT_UINT8)
        or (src == dtypes.DT_INT16 and dtype == dtypes.DT_FP32))
    if mode not in (CastMode.CAST_NONE, CastMode.CAST_RINT) and not exact:
        raise _not_here(what, mode, src, dtype)
    if satmode == SaturationMode.ON and dtype in _MAX_FINITE:
        big = _MAX_FINITE[dtype]
        if src in FLOAT_TYPES:
            return strict_cast(ops.clip(input, -big, big), dtype)
        return ops.clip(strict_cast(input, dtype), -big, big)
    return strict_cast(input, dtype)

