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
Float -> narrower float, and integer -> float where the float cannot hold
every integer: CAST_NONE and CAST_RINT round to nearest even, CAST_ROUND to
nearest with ties away from zero, CAST_FLOOR down, CAST_CEIL up, CAST_TRUNC
toward zero, CAST_ODD toward zero with the last bit set where inexact (round
to odd). ON clamps finite values to the type's largest finite value (NaN and
infinities stay). The directed modes start from the nearest value (the
strict cast, one of the two values of the type around the input) and step
one value up or down where it lies on the wrong side of the input, found
by comparing the two exactly; the step adds or subtracts 1 in the value's
bits (primitives.bitcast).
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
from .primitives import FLOAT_TYPES, bitcast, cast as strict_cast, check_traced

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


# The integer type of each float type's bits.
_BITS = {dtypes.DT_FP16: dtypes.DT_INT16, dtypes.DT_BF16: dtypes.DT_INT16,
         dtypes.DT_FP32: dtypes.DT_INT32, dtypes.DT_DOUBLE: dtypes.DT_INT64}


def _map_bits(r, f):
    """r's float type from f(its bits) (INT16 bits computed in INT32, whose
    arithmetic the ops take, and wrapped back)."""
    kind = _BITS[r.dtype]
    bits = bitcast(r, kind)
    if kind == dtypes.DT_INT16:
        return bitcast(strict_cast(f(strict_cast(bits, dtypes.DT_INT32)), kind), r.dtype)
    return bitcast(f(bits), r.dtype)


def _next_up(r):
    """The value of r's float type just above r (r finite or -inf): its bits
    plus 1 where the sign is clear, minus 1 where it is set (-0.0 taken as
    +0.0 first)."""
    r = ops.add(r, 0.0)  # -0.0 + 0.0 is +0.0
    return _map_bits(r, lambda b: ops.where(ops.ge(b, 0), ops.add(b, 1), ops.sub(b, 1)))


def _next_down(r):
    return ops.neg(_next_up(ops.neg(r)))


def _exact_minus(x, v):
    """A DOUBLE tensor with the sign of x - v (x of any type, v DOUBLE holding
    values of a narrower float type), zero exactly where they are equal. An
    integer x is split as hi * 2**32 + lo, each exact in DOUBLE; hi * 2**32 -
    v and adding lo are exact for the v that round x (both within a few
    units of 2**32 or of v's spacing)."""
    if x.dtype in FLOAT_TYPES + (dtypes.DT_DOUBLE,):
        return ops.sub(strict_cast(x, dtypes.DT_DOUBLE), v)
    x = strict_cast(x, dtypes.DT_INT64)
    hi = ops.bitwise_right_shift(x, 32)
    lo = ops.sub(x, ops.bitwise_left_shift(hi, 32))
    high = ops.mul(strict_cast(hi, dtypes.DT_DOUBLE), 2.0 ** 32)
    return ops.add(ops.sub(high, v), strict_cast(lo, dtypes.DT_DOUBLE))


def _directed(x, dtype, mode):
    """x converted to the float `dtype` (which cannot hold every value of
    x's type) rounded by `mode`: the module docstring's rule."""
    r = strict_cast(x, dtype)  # nearest even: one of the two values around x
    if mode in (CastMode.CAST_NONE, CastMode.CAST_RINT):
        return r
    wide = dtypes.DT_DOUBLE  # holds every value of dtype, and x's exactly
    if x.dtype in FLOAT_TYPES + (dtypes.DT_DOUBLE,):
        xw, rw = strict_cast(x, wide), strict_cast(r, wide)
        above, below = ops.gt(rw, xw), ops.lt(rw, xw)
    else:
        d = _exact_minus(x, strict_cast(r, wide))
        above, below = ops.lt(d, 0.0), ops.gt(d, 0.0)
    if mode == CastMode.CAST_FLOOR:
        return ops.where(above, _next_down(r), r)
    if mode == CastMode.CAST_CEIL:
        return ops.where(below, _next_up(r), r)
    if mode == CastMode.CAST_ROUND:
        # Nearest even differs from nearest-away at ties only: x halfway
        # between r and its other neighbour n, which is farther from zero.
        n = ops.where(above, _next_down(r), _next_up(r))
        half = ops.mul(ops.add(strict_cast(r, wide), strict_cast(n, wide)), 0.5)  # exact
        tie = ops.eq(_exact_minus(x, half), 0.0)
        return ops.where(ops.logical_and(tie, ops.gt(ops.abs(n), ops.abs(r))), n, r)
    zero = 0.0 if x.dtype in FLOAT_TYPES + (dtypes.DT_DOUBLE,) else 0
    toward_zero = ops.where(ops.logical_and(above, ops.gt(x, zero)), _next_down(r),
                            ops.where(ops.logical_and(below, ops.lt(x, zero)), _next_up(r), r))
    if mode == CastMode.CAST_TRUNC:
        return toward_zero
    # CAST_ODD: toward zero, then the last bit set where that was inexact.
    odd = _map_bits(toward_zero, lambda b: ops.bitwise_or(b, 1))
    return ops.where(ops.logical_or(above, below), odd, toward_zero)


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
    exact = ((src in FLOAT_TYPES and dtypes.bytes_of(dtype) > dtypes.bytes_of(src)
              and dtype not in dtypes.FP8_TYPES)
             or (src in (dtypes.DT_BOOL, dtypes.DT_INT8, dtypes.DT_UINT8)
                 and dtype not in dtypes.FP8_TYPES)
             or (src == dtypes.DT_INT16 and dtype == dtypes.DT_FP32)
             or (src in (dtypes.DT_INT16, dtypes.DT_INT32) and dtype == dtypes.DT_DOUBLE))
    if (dtype in dtypes.FP8_TYPES and not exact
            and mode not in (CastMode.CAST_NONE, CastMode.CAST_RINT)):
        raise NotYetImplementedError(
            f"{what}: {mode.name} from {src.name} to {dtype.name} rounds in a direction of its "
            f"own, and FP8 tensors here are storage only (no arithmetic to step a value by); "
            f"CAST_NONE and CAST_RINT round to nearest even")

    def convert(x):
        return strict_cast(x, dtype) if exact else _directed(x, dtype, mode)
    if satmode == SaturationMode.ON and dtype in _MAX_FINITE:
        big = _MAX_FINITE[dtype]
        if src in FLOAT_TYPES + (dtypes.DT_DOUBLE,):
            return convert(ops.clip(input, -big, big))
        if dtype in dtypes.FP8_TYPES:  # (no arithmetic on FP8: clamp in FP32 first)
            return convert(ops.clip(strict_cast(input, dtypes.DT_FP32), -big, big))
        return ops.clip(convert(input), -big, big)
    return convert(input)

