"""The ops of this version, as functions: pypto.add(a, b), pypto.exp(x), ...

Binary ops and comparisons take two tensors of the same dtype whose shapes
broadcast as in numpy (size-1 dims and missing leading dims repeat), or a
tensor and a Python number on either side (`2 - a` records rsubs, `2 < a`
records gts). Comparisons give DT_BOOL tensors; pypto.where(cond, a, b)
selects. Other PyPTO ops exist as names that raise NotImplementedError
saying what is missing.

Each op applies the front end's policy, then records strict primitives
(primitives.py): integer operands by torch's rules (int_arith.py), the
cube path (matmul.py), reductions of every element through a reshape
(layout.py), composites (softmax, rms_norm).
"""

import math

from . import dtypes, element, int_arith, layout, tiling, valid_region
from .enums import PrecisionType
from .errors import TraceError, not_yet
from .primitives import (  # noqa: F401 - broadcast_shapes: part of ops' surface
    COMPARISONS, FLOAT_TYPES, broadcast_shapes, cast, check_float, check_traced,
    creation_builder, reduce_dtype)
from . import primitives
from .matmul import matmul  # noqa: F401 - pypto.matmul
from .symbolic import SelectedFloat, SymbolicScalar, select
from .tensors import Tensor, _is_scalar, _number, _static_number


def _selected(fn, *args):
    """fn(*args) where an argument is a SelectedFloat (a float chosen at run
    time: symbolic.py): fn with each choice, selected elementwise by the
    choice's condition. None when no argument is one."""
    for i, x in enumerate(args):
        if isinstance(x, SelectedFloat):
            with_then = _selected_or_call(fn, args[:i] + (x.then,) + args[i + 1:])
            with_other = _selected_or_call(fn, args[:i] + (x.other,) + args[i + 1:])
            flag = full([1] * len(with_then._shape), select(x.cond, 1, 0), dtypes.DT_INT32)
            return where(ne(flag, 0), with_then, with_other)
    return None


def _selected_or_call(fn, args):
    result = _selected(fn, *args)
    return fn(*args) if result is None else result


def _binary(name, a, b, exact_number=False):
    """a op b: integer operands rewritten by torch's rules (int_arith.py),
    else the primitive (comparisons are never rewritten). A pypto.Element
    is its value; a SelectedFloat, both of its choices (_selected)."""
    a, b = element.value_of(a), element.value_of(b)
    chosen = _selected(lambda x, y: _binary(name, x, y, exact_number), a, b)
    if chosen is not None:
        return chosen
    rewritten = None if name in COMPARISONS else int_arith.binary(name, a, b)
    if rewritten is not None:
        return rewritten
    return primitives.binary(name, a, b, exact_number)


def _unary(kind, x):
    rewritten = int_arith.unary(kind, x)
    if rewritten is not None:
        return rewritten
    return primitives.unary(kind, x)


def _reduce(kind, input, dim, keepdim):
    if dim is None:
        primitives.check_reducible(kind, input)
        return _reduce_all(kind, input, keepdim, f"pypto.{kind}")
    return primitives.reduce(kind, input, dim, keepdim)

def add(input, other):
    """input + other (numpy broadcasting; a number on either side)."""
    return _binary("add", input, other)


def sub(input, other):
    """input - other."""
    return _binary("sub", input, other)


def mul(input, other):
    """input * other."""
    return _binary("mul", input, other)


def div(input, other, precision_type=None):
    """input / other (true division), correctly rounded whatever
    `precision_type` (PyPTO's PrecisionType) says."""
    check_precision_type("pypto.div", precision_type)
    return _binary("div", input, other)


def pow(input, exponent, precision_type=None):  # noqa: A001 - PyPTO's name
    """input ** exponent (`precision_type`: as div)."""
    check_precision_type("pypto.pow", precision_type)
    return _binary("pow", input, exponent)


def floor_divide(input, other):
    """input // other, rounding toward -inf (torch.floor_divide): floats as
    torch computes them (from fmod, so the same bits; x // 0 is inf or NaN),
    integers exactly (x // 0 gives 0 where torch raises; MIN // -1 wraps)."""
    return _binary("floor_divide", input, other)


def remainder(input, other, precision_type=None):
    """input % other with the sign of the divisor (torch.remainder, Python's
    %): floats from fmod (x % 0 is NaN), integers exactly (x % 0 gives 0
    where torch raises). `precision_type`: as div."""
    check_precision_type("pypto.remainder", precision_type)
    return _binary("remainder", input, other)


def maximum(input, other):
    """Elementwise max; NaN if either is NaN (numpy, torch)."""
    return _binary("maximum", input, other)


def minimum(input, other):
    """Elementwise min; NaN if either is NaN."""
    return _binary("minimum", input, other)


def eq(input, other):
    """input == other, a DT_BOOL tensor (a Tensor's == stays identity)."""
    return _binary("eq", input, other)


def ne(input, other):
    """input != other, DT_BOOL."""
    return _binary("ne", input, other)


def lt(input, other):
    """input < other, DT_BOOL."""
    return _binary("lt", input, other)


def le(input, other):
    """input <= other, DT_BOOL."""
    return _binary("le", input, other)


def gt(input, other):
    """input > other, DT_BOOL."""
    return _binary("gt", input, other)


def ge(input, other):
    """input >= other, DT_BOOL."""
    return _binary("ge", input, other)


def where(condition, input, other):
    """condition ? input : other, elementwise; all three broadcast (numpy).
    condition is DT_BOOL; input and other are tensors of one dtype, or one of
    them a Python number."""
    what = "pypto.where"
    chosen = _selected(where, condition, input, other)
    if chosen is not None:
        return chosen
    check_traced(condition, what, "condition")
    if condition.dtype != dtypes.DT_BOOL:
        raise TypeError(f"{what}: argument 'condition' has dtype {condition.dtype.name}; "
                        f"it must be DT_BOOL (e.g. the result of a < b)")
    b = condition._builder
    tensors = [(n, x) for n, x in (("input", input), ("other", other)) if isinstance(x, Tensor)]
    if not tensors:
        raise TypeError(f"{what}: at least one of 'input' and 'other' must be a Tensor")
    for n, x in tensors:
        check_traced(x, what, n)
        if x._builder is not b:
            raise TraceError(f"{what}: operands come from different kernels")
    dtype = tensors[0][1].dtype
    if len(tensors) == 2 and input.dtype != other.dtype:
        raise TypeError(f"{what}: 'input' and 'other' have dtypes {input.dtype.name} and "
                        f"{other.dtype.name}; they must be equal")
    shapes = [("condition", valid_region.static_shape(condition))] + [
        (n, valid_region.static_shape(x)) for n, x in tensors]
    broadcast_shapes(what, shapes)
    aligned, static = valid_region.elementwise(
        what, [condition] + [x if isinstance(x, Tensor) else None for x in (input, other)])
    condition = aligned[0]
    input = aligned[1] if isinstance(input, Tensor) else input  # noqa: A001
    other = aligned[2] if isinstance(other, Tensor) else other
    tensors = [(n, x) for n, x in (("input", input), ("other", other)) if isinstance(x, Tensor)]
    shape = broadcast_shapes(what, [("condition", condition._shape)] + [
        (n, x._shape) for n, x in tensors])
    operands = []
    for n, x in (("input", input), ("other", other)):
        if isinstance(x, Tensor):
            operands.append(x)
        elif _is_scalar(x):
            # A number becomes a tensor of the other operand's shape:
            # 1 ** t is 1 for every t, NaN and inf included (C99 pow), times s.
            t = tensors[0][1]
            if dtype not in FLOAT_TYPES:
                raise TypeError(f"{what}: a number for '{n}' needs a float tensor on the "
                                f"other side, got {dtype.name}")
            ones = b.add_op("rpows", [t], dtype, t._shape, {"scalar": 1.0}, what,
                            static=t._static)
            operands.append(b.add_op("muls", [ones], dtype, t._shape, {"scalar": _number(x)},
                                     what, static=t._static))
        else:
            raise TypeError(f"{what}: argument '{n}' must be a Tensor or a number, got "
                            f"{type(x).__name__}")
    return b.add_op("where", [condition] + operands, dtype, shape, what=what, static=static)


def _make_unary(kind, doc):
    def op(input):
        return _unary(kind, input)
    op.__name__ = kind
    op.__doc__ = doc
    return op


UNARY_OPS = {
    "exp": "e ** input", "exp2": "2 ** input", "expm1": "e ** input - 1",
    "log": "natural log", "log2": "base-2 log", "log10": "base-10 log",
    "log1p": "log(1 + input)", "sqrt": "square root", "rsqrt": "1 / sqrt(input)",
    "reciprocal": "1 / input", "neg": "-input", "abs": "|input|",
    "relu": "max(input, 0) (relu(-0.0) = -0.0, NaN stays NaN, as torch)",
    "sigmoid": "1 / (1 + e ** -input)", "tanh": "hyperbolic tangent",
    "erf": "error function", "erfc": "1 - erf(input), accurate for large inputs",
    "sign": "-1, 0 or 1 (NaN stays NaN)", "floor": "round down", "ceil": "round up",
    "round": "round half to even (numpy, torch)", "trunc": "round toward zero",
    "sin": "sine", "cos": "cosine",
}
for _kind, _doc in UNARY_OPS.items():
    globals()[_kind] = _make_unary(_kind, _doc + ", elementwise.")
del _kind, _doc

def check_precision_type(what, precision_type):
    """PyPTO's precision_type: None, a pypto.PrecisionType member or its name.
    Every mode gives the same results here (those documented for the op)."""
    if precision_type is None or isinstance(precision_type, PrecisionType) or \
            precision_type in PrecisionType.__members__:
        return
    raise ValueError(f"{what}: precision_type must be pypto.PrecisionType.INTRINSIC or "
                     f"HIGH_PRECISION, got {precision_type!r}")


def _with_precision_type(op):
    def with_precision(input, precision_type=None):
        check_precision_type(f"pypto.{op.__name__}", precision_type)
        return op(input)
    with_precision.__name__ = op.__name__
    with_precision.__doc__ = op.__doc__ + " `precision_type`: accepted, as div."
    return with_precision


for _kind in ("exp", "log", "log2", "log10", "sqrt", "rsqrt", "reciprocal"):
    globals()[_kind] = _with_precision_type(globals()[_kind])
del _kind


def _reduce_all(kind, input, keepdim, what):
    """The reduction of every element (dim=None, as torch): the input read as
    a rank-1 tensor (pypto.reshape) and reduced over dim 0, a rank-0 result
    (keepdim: shape [1] * rank). argmax/argmin give the row-major index. Its
    tile holds as many elements as the vector tile in force."""
    shape = input._shape
    if not shape:
        raise ValueError(f"{what}: the input is a rank-0 tensor (one element); there is "
                         f"nothing to reduce")
    if any(not isinstance(d, int) for d in shape):
        raise ValueError(f"{what}: reducing every element needs static dims (got shape "
                         f"{list(shape)}); pass dim= to reduce one dim")
    n = 1
    for d in shape:
        n *= d
    if len(shape) == 1:
        flat = input
    elif input._static is None:
        flat = layout.reshape(input, [n])
    else:  # its valid region, flattened
        flat = layout.reshape(input, [math.prod(input.shape)], valid_shape=[n])
    tile = tiling.current_vec_tile()
    per_tile = n
    if tile is not None:
        per_tile = 1
        for t in tile:
            per_tile *= int(t)
    out = input._builder.add_op(kind, [flat], reduce_dtype(kind, input.dtype),
                                (1,) if keepdim else (),
                                {"dim": 0, "keepdim": bool(keepdim)}, what, space=(n,),
                                tile=(max(1, min(n, per_tile)),))
    if keepdim and len(shape) > 1:
        out = layout.reshape(out, [1] * len(shape))
    return out


def sum(input, dim=None, keepdim=False):  # noqa: A001 - PyPTO's name
    """Sum over `dim` (negative counts from the end; None: every element, a
    rank-0 result as torch's x.sum()); the vector tile covers
    the input, and a dim spanning several tiles is summed per tile, then the
    partial sums are combined. FP16/BF16 sum in FP32, DOUBLE in double;
    integer and BOOL tensors sum to DT_INT64 (wrapping like torch's)."""
    return _reduce("sum", input, dim, keepdim)


def amax(input, dim=None, keepdim=False):
    """Maximum over `dim` (NaN if any is NaN)."""
    return _reduce("amax", input, dim, keepdim)


def amin(input, dim=None, keepdim=False):
    """Minimum over `dim` (NaN if any is NaN)."""
    return _reduce("amin", input, dim, keepdim)


def prod(input, dim=None, keepdim=False):
    """Product over `dim` (integer and BOOL tensors: DT_INT64, wrapping)."""
    return _reduce("prod", input, dim, keepdim)


def argmax(input, dim=-1, keepdim=False):
    """Index (DT_INT64) of the first maximum over `dim` (a NaN counts as the
    maximum, as torch); dim=None: the row-major index over every element."""
    return _reduce("argmax", input, dim, keepdim)


def argmin(input, dim=-1, keepdim=False):
    """Index (DT_INT64) of the first minimum over `dim`."""
    return _reduce("argmin", input, dim, keepdim)


def _in_fp32(input):
    """Whether a composite computes `input` in FP32 and rounds once at the
    end: FP16/BF16 tensors, as torch's fused softmax does (op by
    op in the half type, each op's rounding would add up: an FP16 softmax
    was within ~4 FP16 ulps of float64, now 1)."""
    return isinstance(input, Tensor) and input.dtype in (dtypes.DT_FP16, dtypes.DT_BF16)


def _cast_broadcast_operand(t, dtype, what):
    """cast(t, dtype) for an operand that broadcasts against the current
    vector tile's space (rms_norm's gamma [hidden] beside [rows, hidden]):
    tiled by the tile's trailing dims, each at most t's extent."""
    check_traced(t, what, "gamma")
    tile = tiling.current_vec_tile()
    rank = len(t._shape)
    if tile is not None and len(tile) >= rank:
        tile = tuple(k if isinstance(d, SymbolicScalar) else min(k, d)
                     for k, d in zip(tile[len(tile) - rank:], t._shape))
    return t._builder.add_op("cast", [t], dtype, t._shape, {"dtype": dtype}, what, tile=tile,
                             static=t._static)


def softmax(input, dim):
    """exp(x - amax(x)) / sum(exp(x - amax(x))) over `dim`: recorded as
    amax, sub, exp, sum, reciprocal of the sum and mul (the reductions with
    keepdim, so the subtraction and the normalisation broadcast); a dim
    spanning several tiles is reduced per tile, then combined. Multiplies by
    one reciprocal per row instead of dividing every value (a division per
    value is much slower): e * (1 / s) is within 1.5 ulp of e / s (0.5 for
    the division), so softmax's error against float64 stays about 3e-7 on
    rows of 1024 in [-1, 1]. FP16/BF16 input is cast to FP32,
    computed so, and cast back once, as torch's softmax does: within 1 ulp
    of the float64 result rounded to the type (the casts fuse into the same
    block; the FP32 intermediates stay in UB). An explicit a / b stays a
    correctly rounded division."""
    if _in_fp32(input):
        return cast(softmax(cast(input, dtypes.DT_FP32), dim), input.dtype)
    m = amax(input, dim, keepdim=True)
    e = exp(sub(input, m))
    s = sum(e, dim, keepdim=True)
    if isinstance(e, Tensor) and e.dtype == dtypes.DT_FP32:
        return mul(e, reciprocal(s))
    return div(e, s)


def rms_norm(input, gamma=None, epsilon=1e-6):
    """input * rsqrt(mean(input ** 2, -1) + epsilon) * gamma over the last
    dim; gamma broadcasts (e.g. shape [hidden]); without it (PyPTO's
    default) the normalized input alone. Over a dynamic last dim the mean
    divides by n, passed to the kernel at launch (one compile for every n).
    FP16/BF16 input and gamma are cast to FP32, computed so, and the result
    cast back once: within 1 ulp of the float64 result rounded to the type
    (torch's rms_norm normalises in FP32 too, but rounds to the half type
    before multiplying by gamma)."""
    if _in_fp32(input):
        if isinstance(gamma, Tensor) and gamma.dtype != input.dtype:
            raise TypeError(
                f"pypto.rms_norm: argument 'gamma' has dtype {gamma.dtype.name} and 'input' "
                f"{input.dtype.name}; they must be equal (cast one: pypto.cast(x, dtype))")
        if isinstance(gamma, Tensor):
            gamma = _cast_broadcast_operand(gamma, dtypes.DT_FP32, "pypto.rms_norm")
        return cast(rms_norm(cast(input, dtypes.DT_FP32), gamma, epsilon), input.dtype)
    n = input._shape[-1] if isinstance(input, Tensor) and input._shape else 1
    squares = sum(mul(input, input), -1, keepdim=True)
    ms = (div(squares, n) if isinstance(n, SymbolicScalar)
          else _binary("mul", squares, 1.0 / n, exact_number=True))
    normed = mul(input, rsqrt(_binary("add", ms, float(epsilon), exact_number=True)))
    return normed if gamma is None else mul(normed, gamma)


def full(shape, fill_value, dtype=dtypes.DT_FP32, *, valid_shape=None):
    """A tensor of `shape` filled with `fill_value` (a number, a pypto.Element
    or a SymbolicScalar, converted to dtype). `valid_shape` (PyPTO's, for
    tails) may only be the whole shape here."""
    fill_value = element.value_of(fill_value)
    chosen = _selected(lambda v: full(shape, v, dtype, valid_shape=valid_shape), fill_value)
    if chosen is not None:
        return chosen
    return primitives.full(shape, fill_value, dtype, valid_shape=valid_shape)


def _size_args(what, size, dtype):
    """(shape, dtype) of zeros/ones: PyPTO's zeros(2, 3), zeros([2, 3]),
    zeros(..., dtype=dt), and zeros([2, 3], dt)."""
    if len(size) == 2 and isinstance(size[1], dtypes.DataType):
        if dtype is not None:
            raise TypeError(f"{what}: dtype given twice")
        size, dtype = size[:1], size[1]
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
    return size, dtypes.DT_FP32 if dtype is None else dtype


def zeros(*size, dtype=None):
    """full(size, 0, dtype); dtype defaults to DT_FP32."""
    shape, dtype = _size_args("pypto.zeros", size, dtype)
    return full(shape, 0.0, dtype)


def ones(*size, dtype=None):
    """full(size, 1, dtype); dtype defaults to DT_FP32."""
    shape, dtype = _size_args("pypto.ones", size, dtype)
    return full(shape, 1.0, dtype)


def arange(start, end=None, step=1, dtype=None):
    """[start, start + step, ...) up to `end`; dtype: DT_INT32 when start,
    end and step are ints (PyPTO's default; torch.arange gives int64), DT_INT64
    when a value does not fit in INT32, else DT_FP32. `start` may be symbolic
    when the length is not (arange(i * 8, i * 8 + 8) in a loop body: read at
    launch; DT_INT32 by default, as its range is not known)."""
    what = "pypto.arange"
    b = creation_builder(what)
    if end is None:
        start, end = 0, start
    for name, v in (("start", start), ("end", end), ("step", step)):
        if not _is_scalar(v):
            raise TypeError(f"{what}: {name} must be a number, got {type(v).__name__}")
    # The length is a static shape: end - start and step must be numbers.
    _static_number(end - start, f"{what}: its length end - start")
    _static_number(step, f"{what}: step")
    symbolic_start = isinstance(start, SymbolicScalar)
    if step == 0:
        raise ValueError(f"{what}: step must not be 0")
    n = math.ceil((end - start) / step)
    if n <= 0:
        raise ValueError(f"{what}: [{start}, {end}) with step {step} is empty")
    if dtype is None:
        ints = all(isinstance(v, int) for v in (start, end, step))
        fits = ints and (symbolic_start or all(-2**31 <= v < 2**31
                                               for v in (start, start + (n - 1) * step)))
        dtype = (dtypes.DT_INT32 if fits else dtypes.DT_INT64) if ints else dtypes.DT_FP32
    return b.add_op("arange", [], dtype, (n,),
                    {"shape": [n], "dtype": dtype, "start": _number(start), "step": float(step)},
                    what)




def clip(input, min=None, max=None):  # noqa: A002 - PyPTO's names
    """minimum(maximum(input, min), max); a bound that is None is absent.
    Integer tensors with int bounds keep their dtype (torch); a float bound
    makes the result DT_FP32 (the tensor is cast first, as torch promotes).
    A bound may be a pypto.Element, or a tensor of input's dtype that
    broadcasts against it (torch.clamp: a NaN in either gives NaN; min > max
    gives max)."""
    min, max = element.value_of(min), element.value_of(max)  # noqa: A001
    chosen = _selected(clip, input, min, max)
    if chosen is not None:
        return chosen
    if any(isinstance(v, Tensor) for v in (min, max)):
        check_traced(input, "pypto.clip", "input")
        out = input if min is None else maximum(input, min)
        return out if max is None else minimum(out, max)
    primitives.check_clip_args(input, min, max)
    rewritten = int_arith.clip(input, min, max)
    if rewritten is not None:
        return rewritten
    return primitives.clip(input, min, max)


def _later(name):
    def op(*args, **kwargs):
        raise not_yet(f"pypto.{name}")
    op.__name__ = name
    op.__doc__ = "Not implemented yet."
    return op


LATER_OPS = ("from_torch", "options", "set_pass_options", "set_host_options",
             "set_codegen_options", "set_debug_options", "verify")


# Trigonometric and hyperbolic functions, cbrt, atan2, hypot --------------------

_FLOAT_MATH_DOC = (
    ", elementwise. Computed in double and rounded once: FP32 results within 1 ulp of "
    "the exact value (in practice torch's float64 result rounded), FP16/BF16 the float64 "
    "result rounded to the type; NaN, inf and -0.0 as C99 (and torch) give them. Integer "
    "and BOOL tensors are cast to DT_FP32 first, as torch promotes them.")


def _as_float(x):
    """An integer or BOOL tensor cast to DT_FP32 (torch computes float math on
    them in float32); other values unchanged."""
    if isinstance(x, Tensor) and x.dtype not in FLOAT_TYPES + (dtypes.DT_DOUBLE,):
        return cast(x, dtypes.DT_FP32)
    return x


def _make_float_unary(kind, doc):
    def op(input):
        return primitives.unary(kind, _as_float(input))
    op.__name__ = kind
    op.__doc__ = doc + _FLOAT_MATH_DOC
    return op


FLOAT_MATH_OPS = {
    "tan": "tangent", "asin": "arcsine (NaN outside [-1, 1])",
    "acos": "arccosine (NaN outside [-1, 1])", "atan": "arctangent",
    "sinh": "hyperbolic sine", "cosh": "hyperbolic cosine",
    "asinh": "inverse hyperbolic sine", "acosh": "inverse hyperbolic cosine (NaN below 1)",
    "atanh": "inverse hyperbolic tangent (+-inf at +-1, NaN outside)",
    "cbrt": "cube root (negative for negative input)",
}
for _kind, _doc in FLOAT_MATH_OPS.items():
    globals()[_kind] = _make_float_unary(_kind, _doc)
del _kind, _doc


def _float_binary(kind, input, other):
    return primitives.binary(kind, _as_float(input), _as_float(other))


def atan2(input, other):
    """The angle of the point (other, input) in [-pi, pi] (torch.atan2(y, x)
    with y = input)"""
    return _float_binary("atan2", input, other)


def hypot(input, other):
    """sqrt(input ** 2 + other ** 2) without overflow or underflow (inf if
    either is inf, even with a NaN)"""
    return _float_binary("hypot", input, other)


atan2.__doc__ += _FLOAT_MATH_DOC
hypot.__doc__ += _FLOAT_MATH_DOC


# Integer ops: bitwise, gcd, fmod, floor_div, ceil_div ---------------------------

_BITWISE_ON_BOOL = {"bitwise_and": "logical_and", "bitwise_or": "logical_or",
                    "bitwise_xor": "logical_xor"}


def _check_integer_operands(what, *operands):
    for arg, x in zip(("input", "other"), operands):
        if isinstance(x, Tensor) and x.dtype in FLOAT_TYPES + (dtypes.DT_DOUBLE,):
            raise TypeError(f"{what}: argument '{arg}' has dtype {x.dtype.name}; {what} "
                            f"takes integer or BOOL tensors (as torch)")
        if isinstance(x, float) or (not isinstance(x, Tensor) and isinstance(x, bool)):
            raise TypeError(f"{what}: argument '{arg}' is a {type(x).__name__}; {what} "
                            f"takes integer tensors and Python ints")


def _all_bool(*operands):
    tensors = [x for x in operands if isinstance(x, Tensor)]
    return bool(tensors) and all(t.dtype == dtypes.DT_BOOL for t in tensors)


def _bitwise(kind, input, other):
    what = f"pypto.{kind}"
    _check_integer_operands(what, input, other)
    if _all_bool(input, other) and all(isinstance(x, Tensor) for x in (input, other)):
        if kind not in _BITWISE_ON_BOOL:
            raise TypeError(f"{what}: BOOL tensors cannot be shifted (as torch); cast to "
                            f"an integer type first")
        return globals()[_BITWISE_ON_BOOL[kind]](input, other)
    return _binary(kind, input, other)


def bitwise_and(input, other):
    """input & other on integer tensors (two's complement; BOOL: logical and)."""
    return _bitwise("bitwise_and", input, other)


def bitwise_or(input, other):
    """input | other on integer tensors (BOOL: logical or)."""
    return _bitwise("bitwise_or", input, other)


def bitwise_xor(input, other):
    """input ^ other on integer tensors (BOOL: logical xor)."""
    return _bitwise("bitwise_xor", input, other)


def bitwise_not(input):
    """~input on integer tensors (BOOL: logical not)."""
    what = "pypto.bitwise_not"
    _check_integer_operands(what, input)
    check_traced(input, what, "input")
    if input.dtype == dtypes.DT_BOOL:
        return logical_not(input)
    return _unary("bitwise_not", input)


def bitwise_left_shift(input, other):
    """input << other on integer tensors, wrapping to the dtype's width; the
    count is taken modulo 32 (modulo 64 for DT_INT64), as torch on x86 (x << 32
    is x for an INT32 tensor)."""
    return _bitwise("bitwise_left_shift", input, other)


def bitwise_right_shift(input, other):
    """input >> other (arithmetic) on integer tensors, the count modulo 32
    (64 for DT_INT64) as for bitwise_left_shift."""
    return _bitwise("bitwise_right_shift", input, other)


def gcd(input, other):
    """The greatest common divisor of |input| and |other| on integer tensors
    (gcd(0, 0) = 0; torch.gcd)."""
    _check_integer_operands("pypto.gcd", input, other)
    return _binary("gcd", input, other)


def fmod(input, other, precision_type=None):
    """C fmod: input - trunc(input / other) * other, with the sign of the
    dividend (torch.fmod). Floats exactly (x fmod 0 is NaN, fmod(inf, y)
    NaN, fmod(x, inf) x); integers exactly (x fmod 0 gives 0 where torch
    raises). `precision_type`: as div."""
    check_precision_type("pypto.fmod", precision_type)
    return _binary("fmod", input, other)


def floor_div(input, other):
    """floor(input / other): pypto.floor_divide (torch.floor_divide) under
    PyPTO's name."""
    return floor_divide(input, other)


def ceil_div(input, other):
    """ceil(input / other): on integer tensors exactly, floor_div(input,
    other) plus 1 where the remainder is not 0 (a zero divisor gives 0);
    floats as -floor_divide(-input, other)."""
    t = input if isinstance(input, Tensor) else other
    if isinstance(t, Tensor) and t.dtype in int_arith.INTEGER_TYPES:
        q = floor_divide(input, other)
        inexact = ne(remainder(input, other), 0)
        return add(q, cast(inexact, q.dtype))
    return neg(floor_divide(neg(input) if isinstance(input, Tensor) else -input, other))


# Logical ops and predicates (DT_BOOL results) ----------------------------------

def _truth(x, what, arg):
    """x as DT_BOOL: nonzero is true (NaN too), as torch's logical ops."""
    check_traced(x, what, arg)
    return x if x.dtype == dtypes.DT_BOOL else ne(x, 0)


def logical_and(input, other):
    """input != 0 and other != 0, DT_BOOL; the operands broadcast and may
    have different dtypes."""
    a, b = _truth(input, "pypto.logical_and", "input"), _truth(other, "pypto.logical_and", "other")
    return where(a, b, a)


def logical_or(input, other):
    """input != 0 or other != 0, DT_BOOL."""
    a, b = _truth(input, "pypto.logical_or", "input"), _truth(other, "pypto.logical_or", "other")
    return where(a, a, b)


def logical_xor(input, other):
    """(input != 0) != (other != 0), DT_BOOL."""
    return ne(_truth(input, "pypto.logical_xor", "input"),
              _truth(other, "pypto.logical_xor", "other"))


def logical_not(input):
    """input == 0, DT_BOOL (NaN is true, so its not is false)."""
    check_traced(input, "pypto.logical_not", "input")
    return eq(input, 0)


def isnan(input):
    """DT_BOOL mask of NaNs (x != x; integer and BOOL tensors: all false)."""
    check_traced(input, "pypto.isnan", "input")
    return ne(input, input)


def isfinite(input):
    """DT_BOOL mask of values neither inf nor NaN (x - x == 0; integer and
    BOOL tensors: all true)."""
    check_traced(input, "pypto.isfinite", "input")
    if input.dtype in FLOAT_TYPES + (dtypes.DT_DOUBLE,):
        return eq(sub(input, input), 0)
    return eq(input, input)


def signbit(input):
    """DT_BOOL: the sign bit of a float (true for -0.0, -inf and negative
    values, a NaN's own sign bit); integers: input < 0; BOOL: false."""
    what = "pypto.signbit"
    check_traced(input, what, "input")
    if input.dtype in FLOAT_TYPES:
        return primitives.unary("signbit", input)
    if input.dtype == dtypes.DT_BOOL:
        return ne(input, input)
    if input.dtype == dtypes.DT_DOUBLE:
        raise TypeError(f"{what}: DT_DOUBLE tensors are not supported (cast to DT_FP32)")
    return lt(input, 0)


# Activations ---------------------------------------------------------------------

def lrelu(input, negative_slope=0.01):
    """Leaky ReLU: input where input > 0, else input * negative_slope
    (torch.nn.functional.leaky_relu: the slope in FP32, the product rounded
    once to the dtype; NaN stays NaN, -0.0 gives -0.0 for a positive slope)."""
    what = "pypto.lrelu"
    check_traced(input, what, "input")
    check_float(what, input, "input")
    if not _is_scalar(negative_slope) or isinstance(negative_slope, bool):
        raise TypeError(f"{what}: negative_slope must be a number, got "
                        f"{type(negative_slope).__name__}")
    return where(gt(input, 0), input,
                 _binary("mul", input, float(negative_slope), exact_number=True))


def prelu(input, weight):
    """input where input > 0, else weight * input (torch.prelu): `weight` has
    one element or one per channel (dim 1 of input; a rank-1 input has one
    channel), of input's dtype."""
    what = "pypto.prelu"
    check_traced(input, what, "input")
    check_traced(weight, what, "weight")
    check_float(what, input, "input")
    shape = input._shape
    n = 1
    for d in weight._shape:
        n = n * d
    channels = shape[1] if len(shape) >= 2 else 1
    if n != 1 and (len(weight._shape) != 1 or weight._shape[0] != channels):
        raise ValueError(f"{what}: 'weight' has shape {list(weight._shape)}; it must have one "
                         f"element or {channels} (the channels: dim 1 of input shape "
                         f"{list(shape)})")
    if n == 1:
        w = layout.reshape(weight, [1] * max(1, len(shape))) if len(weight._shape) > 1 else weight
    elif len(shape) > 2:
        w = layout.reshape(weight, [channels] + [1] * (len(shape) - 2))
    else:
        w = weight
    return where(gt(input, 0), input, mul(input, w))


# tril / triu -----------------------------------------------------------------------

def _index_along(b, n, shape, what):
    """arange(n) as DT_INT32 (tiled by the vector tile's last dim), reshaped
    to `shape` (n along one dim, the others 1)."""
    index = b.add_op("arange", [], dtypes.DT_INT32, (n,),
                     {"shape": [n], "dtype": dtypes.DT_INT32, "start": 0.0, "step": 1.0}, what,
                     tile=tiling.layout_tile((n,)))
    return layout.reshape(index, list(shape)) if len(shape) > 1 else index


def _triangle(what, input, diagonal, keep):
    """input where keep(column - row, diagonal) over its last two dims, else 0."""
    check_traced(input, what, "input")
    shape = input._shape
    if len(shape) < 2:
        raise ValueError(f"{what}: the input has shape {list(shape)}; it needs at least 2 dims")
    rows, cols = shape[-2], shape[-1]
    if any(isinstance(d, SymbolicScalar) or not isinstance(d, int) for d in (rows, cols)):
        raise ValueError(f"{what}: the last two dims must be static, got {list(shape)}")
    if isinstance(diagonal, bool) or not isinstance(diagonal, (int, SymbolicScalar)):
        raise TypeError(f"{what}: diagonal must be an int or a SymbolicScalar, got "
                        f"{type(diagonal).__name__}")
    b = input._builder
    ones = [1] * (len(shape) - 2)
    col = _index_along(b, cols, ones + [1, cols], what)
    row = _index_along(b, rows, ones + [rows, 1], what)
    mask = keep(sub(col, row), diagonal)
    zero = full([1] * len(shape), 0, input.dtype)
    return where(mask, input, zero)


def tril(input, diagonal=0):
    """The lower triangle of the last two dims (column - row <= diagonal),
    the rest 0 (torch.tril); `diagonal` may be a SymbolicScalar."""
    return _triangle("pypto.tril", input, diagonal, le)


def triu(input, diagonal=0):
    """The upper triangle of the last two dims (column - row >= diagonal),
    the rest 0 (torch.triu)."""
    return _triangle("pypto.triu", input, diagonal, ge)


# round with decimals, clip with tensor bounds ------------------------------------

_round_half_even = globals()["round"]


def round(input, decimals=0):  # noqa: A001 - PyPTO's name
    """Round half to even at `decimals` places (torch.round): decimals > 0
    rounds input * 10**decimals and divides by it, decimals < 0 rounds
    input / 10**-decimals and multiplies by it, each step rounded to the
    dtype as torch's."""
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"pypto.round: decimals must be an int, got {type(decimals).__name__}")
    if decimals == 0:
        return _round_half_even(input)
    scale = 10.0 ** (decimals if decimals > 0 else -decimals)
    if decimals > 0:
        return div(_round_half_even(mul(input, scale)), scale)
    return mul(_round_half_even(div(input, scale)), scale)

