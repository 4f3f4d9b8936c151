"""Integer arithmetic that the front end builds from ops the compiler has,
following torch's rules:

- `a / b` on integer tensors is true division: both cast to DT_FP32 first
  (torch gives float32); a zero divisor gives inf or NaN as in float.
- INT8, INT16 and UINT8 `add sub mul maximum minimum floor_divide
  remainder neg abs` compute in
  DT_INT32 and cast back, which wraps to the width as torch does (the
  compiler's f32 tiles for these types would not hold a product exactly).
- An integer tensor with a Python int (or a SymbolicScalar: a dynamic size,
  a loop index, passed at launch): the number becomes a one-element
  tensor of the tensor's dtype (|n| <= 2**24, exact in every path); with a
  Python float (or in a division) the tensor is cast to DT_FP32 first, as
  torch promotes `int_tensor + 2.5` to float32.
- `x ** n` with a Python int n >= 0 stays integer (torch): square and
  multiply, wrapping like torch's; n < 0 is a ValueError as in torch. An
  integer tensor ** tensor, or a number ** integer tensor, is a TypeError
  saying to cast to a float type.
- INT8, INT16 and UINT8 `fmod gcd bitwise_*` likewise compute in DT_INT32
  and cast back (shifts as torch's, which shifts them as int32).
- `sign` and `bitwise_not` of INT8/INT16/UINT8 compute in DT_INT32; `clip` with int bounds
  keeps the dtype (INT8/INT16/UINT8 through DT_INT32; a bound outside the
  dtype is a ValueError, as torch's overflow error), with a float bound the
  tensor is cast to DT_FP32 first (torch promotes).

ops.py asks `binary`/`unary`/`clip` first; they return None where nothing is
rewritten (floats, comparisons), and the op is recorded as written."""

from . import dtypes, op_table, primitives
from .symbolic import SymbolicScalar
from .tensors import Tensor, _is_scalar, _static_number

INTEGER_TYPES = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64,
                 dtypes.DT_UINT8)
_SMALL = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_UINT8)
# The tensor-with-tensor kinds the compiler computes on INT32 tensors (not
# comparisons): add sub mul maximum minimum floor_divide remainder fmod gcd
# bitwise_*; their integer results wrap to the width.
_WRAPPING = tuple(k for k in op_table.kinds(category="elementwise_binary", bool_result=False)
                  if op_table.accepts(k, dtypes.DT_INT32))
_MAX_INT_SCALAR = 2 ** 24


def _binary(name, a, b):
    """a op b with this module's rules, else the primitive."""
    rewritten = binary(name, a, b)
    return rewritten if rewritten is not None else primitives.binary(name, a, b)


def binary(name, a, b):
    """`name`(a, b) rewritten for integer operands, or None."""
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    t = a if ta else b if tb else None
    if t is None or t.dtype not in INTEGER_TYPES or (ta and tb and a.dtype != b.dtype):
        return None
    if ta and tb:
        if name == "pow":
            raise TypeError(
                f"pypto.pow: integer tensors ({t.dtype.name}) to tensor powers are not "
                f"supported; use a Python int exponent, or cast to DT_FP32 first")
        if name == "div":
            return primitives.binary("div", primitives.cast(a, dtypes.DT_FP32),
                                     primitives.cast(b, dtypes.DT_FP32))
        if name in _WRAPPING and t.dtype in _SMALL:
            wide = _binary(name, primitives.cast(a, dtypes.DT_INT32),
                           primitives.cast(b, dtypes.DT_INT32))
            return primitives.cast(wide, t.dtype)
        return None
    s = b if ta else a
    if not _is_scalar(s) or isinstance(s, bool):
        return None
    if name == "pow" and isinstance(s, int):
        return _int_pow(t, _static_number(s, f"pypto.pow: the exponent of a {t.dtype.name} tensor"),
                        ta)
    if name == "div" or isinstance(s, float) or name == "pow":
        tf = primitives.cast(t, dtypes.DT_FP32)
        return _binary(name, tf, s) if ta else _binary(name, s, tf)
    if name not in _WRAPPING:
        return None
    if not isinstance(s, SymbolicScalar) and abs(s) > _MAX_INT_SCALAR:
        raise TypeError(
            f"pypto.{name}: the number {s} with a {t.dtype.name} tensor is outside "
            f"[-2**24, 2**24]; use a tensor for it")
    n = primitives.full([1] * len(t._shape), s, t.dtype)
    return _binary(name, t, n) if ta else _binary(name, n, t)


def _int_pow(t, n, tensor_base):
    """t ** n for an int n (t an integer tensor), by squaring and multiplying
    (wrapping as torch's integer pow does)."""
    if not tensor_base:
        raise TypeError(
            f"pypto.pow: a number to the power of an integer tensor ({t.dtype.name}) is "
            f"not supported; cast the tensor to DT_FP32 first")
    if n < 0:
        raise ValueError("pypto.pow: integers to negative integer powers are not allowed "
                         "(as in torch); cast to DT_FP32 first")
    result, base = None, t
    while True:
        if n & 1:
            result = base if result is None else _binary("mul", result, base)
        n >>= 1
        if not n:
            break
        base = _binary("mul", base, base)
    if result is None:  # t ** 0
        return _binary("add", _binary("mul", t, 0), 1)
    return result


def clip(t, lo, hi):
    """clip of an integer tensor rewritten by torch's rules, or None."""
    if not isinstance(t, Tensor) or t.dtype not in INTEGER_TYPES:
        return None
    if any(isinstance(v, float) for v in (lo, hi)):
        return primitives.clip(primitives.cast(t, dtypes.DT_FP32), lo, hi)
    if t.dtype in _SMALL or t.dtype == dtypes.DT_INT32:
        info = _RANGE[t.dtype]
        for name, v in (("min", lo), ("max", hi)):
            if v is not None and not isinstance(v, SymbolicScalar) and \
                    not info[0] <= v <= info[1]:
                raise ValueError(f"pypto.clip: '{name}' {v} does not fit {t.dtype.name} "
                                 f"[{info[0]}, {info[1]}] (as torch)")
    else:
        for name, v in (("min", lo), ("max", hi)):
            if v is not None and not isinstance(v, SymbolicScalar) and abs(v) > 2 ** 53:
                raise ValueError(f"pypto.clip: '{name}' {v} is outside [-2**53, 2**53]")
    if t.dtype not in _SMALL:
        return None
    return primitives.cast(primitives.clip(primitives.cast(t, dtypes.DT_INT32), lo, hi),
                           t.dtype)


_RANGE = {dtypes.DT_INT8: (-128, 127), dtypes.DT_INT16: (-32768, 32767),
          dtypes.DT_UINT8: (0, 255), dtypes.DT_INT32: (-2 ** 31, 2 ** 31 - 1)}


def unary(kind, x):
    """neg/abs/sign of an INT8/INT16/UINT8 tensor through DT_INT32, or None."""
    if kind not in ("neg", "abs", "sign", "bitwise_not") or not isinstance(x, Tensor) or \
            x.dtype not in _SMALL:
        return None
    return primitives.cast(primitives.unary(kind, primitives.cast(x, dtypes.DT_INT32)), x.dtype)
