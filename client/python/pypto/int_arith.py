"""Integer arithmetic that the front end builds from ops the compiler has
(issue 3), following torch's rules:

- `a / b` on integer tensors is true division: both cast to DT_FP32 first
  (torch gives float32); a zero divisor gives inf or NaN as in float.
- INT8, INT16 and UINT8 `add sub mul maximum minimum neg abs` compute in
  DT_INT32 and cast back, which wraps to the width as torch does (the
  compiler's f32 tiles for these types would not hold a product exactly).
- An integer tensor with a Python int: the number becomes a one-element
  tensor of the tensor's dtype (|n| <= 2**24, exact in every path); with a
  Python float (or in a division) the tensor is cast to DT_FP32 first, as
  torch promotes `int_tensor + 2.5` to float32.

ops.py asks `binary`/`unary` first; they return None where nothing is
rewritten (floats, comparisons), and the op is recorded as written."""

from . import dtypes
from .tensors import Tensor

INTEGER_TYPES = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64,
                 dtypes.DT_UINT8)
_SMALL = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_UINT8)
_WRAPPING = ("add", "sub", "mul", "maximum", "minimum")
_MAX_INT_SCALAR = 2 ** 24


def _ops():
    from . import ops
    return ops


def binary(name, a, b):
    """`name`(a, b) rewritten for integer operands, or None."""
    ops = _ops()
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    t = a if ta else b if tb else None
    if t is None or t.dtype not in INTEGER_TYPES or (ta and tb and a.dtype != b.dtype):
        return None
    if ta and tb:
        if name == "div":
            return ops.div(ops.cast(a, dtypes.DT_FP32), ops.cast(b, dtypes.DT_FP32))
        if name in _WRAPPING and t.dtype in _SMALL:
            wide = ops._binary(name, ops.cast(a, dtypes.DT_INT32), ops.cast(b, dtypes.DT_INT32))
            return ops.cast(wide, t.dtype)
        return None
    s = b if ta else a
    if not ops._is_scalar(s) or isinstance(s, bool):
        return None
    if name == "div" or isinstance(s, float) or name == "pow":
        tf = ops.cast(t, dtypes.DT_FP32)
        return ops._binary(name, tf, s) if ta else ops._binary(name, s, tf)
    if name not in _WRAPPING:
        return None
    if abs(s) > _MAX_INT_SCALAR:
        raise TypeError(
            f"pypto.{name}: the number {s} with a {t.dtype.name} tensor is outside "
            f"[-2**24, 2**24]; use a tensor for it")
    n = ops.full([1] * len(t._shape), s, t.dtype)
    return ops._binary(name, t, n) if ta else ops._binary(name, n, t)


def unary(kind, x):
    """neg/abs of an INT8/INT16/UINT8 tensor through DT_INT32, or None."""
    if kind not in ("neg", "abs") or not isinstance(x, Tensor) or x.dtype not in _SMALL:
        return None
    ops = _ops()
    return ops.cast(ops._unary(kind, ops.cast(x, dtypes.DT_INT32)), x.dtype)
