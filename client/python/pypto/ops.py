"""The ops of this version, as functions: pypto.add(a, b), pypto.exp(x), ...

Binary ops and comparisons take two tensors of the same dtype whose shapes
broadcast as in numpy (size-1 dims and missing leading dims repeat), or a
tensor and a Python number on either side (`2 - a` records rsubs, `2 < a`
records gts). Comparisons give DT_BOOL tensors; pypto.where(cond, a, b)
selects. Other PyPTO ops exist as names that raise NotImplementedError
naming the issue that brings them.
"""

import math
import numbers

from . import dtypes
from .errors import TraceError, not_yet
from .symbolic import SymbolicScalar
from .tensors import Tensor, _is_scalar, _number, _static_number
from . import element, int_arith

# kind for tensor-op-tensor, tensor-op-scalar, scalar-op-tensor
_BINARY = {
    "add": ("add", "adds", "adds"),
    "sub": ("sub", "subs", "rsubs"),
    "mul": ("mul", "muls", "muls"),
    "div": ("div", "divs", "rdivs"),
    "pow": ("pow", "pows", "rpows"),
    "maximum": ("maximum", "maximums", "maximums"),
    "minimum": ("minimum", "minimums", "minimums"),
    # No scalar instruction: the number becomes a one-element tensor.
    "floor_divide": ("floor_divide", None, None),
    "remainder": ("remainder", None, None),
    # s < x is x > s.
    "eq": ("eq", "eqs", "eqs"),
    "ne": ("ne", "nes", "nes"),
    "lt": ("lt", "lts", "gts"),
    "le": ("le", "les", "ges"),
    "gt": ("gt", "gts", "lts"),
    "ge": ("ge", "ges", "les"),
}
_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
# Tensor dtypes that a Python float promotes to FP32 in a comparison (torch).
_PROMOTED_BY_FLOATS = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64,
                       dtypes.DT_UINT8, dtypes.DT_BOOL)
_FLOAT_TYPES = (dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16)


def _check_traced(x, what, arg):
    if not isinstance(x, Tensor) or x._builder is None:
        raise TypeError(
            f"{what}: argument '{arg}' must be a pypto Tensor inside a @pypto.jit kernel "
            f"(or a Python number), got {type(x).__name__}")


def broadcast_shapes(what, named_shapes):
    """numpy broadcasting of [(operand name, shape)]; ValueError naming both
    operands and the dim that disagrees."""
    rank = max(len(s) for _, s in named_shapes)
    out = [1] * rank
    owner = [None] * rank
    for name, shape in named_shapes:
        for i, d in enumerate(shape):
            k = rank - len(shape) + i
            if d == 1:
                continue
            if out[k] == 1:
                out[k], owner[k] = d, (name, shape)
            elif out[k] != d:
                other, other_shape = owner[k]
                raise ValueError(
                    f"{what}: shapes {list(other_shape)} ('{other}') and {list(shape)} "
                    f"('{name}') do not broadcast: dim {k - rank} is {out[k]} vs {d} "
                    f"(numpy rules: dims aligned from the last must be equal or 1)")
    return tuple(out)


def _check_float(what, t, arg):
    if t.dtype not in _FLOAT_TYPES:
        raise TypeError(
            f"{what}: argument '{arg}' has dtype {t.dtype.name}; {what} takes DT_FP32, "
            f"DT_FP16 or DT_BF16 tensors (cast it first)")


# Ops that also take INT32, INT64 and DOUBLE tensors (integers wrap like
# torch's); the compiler's OperandTypes::kNumeric. INT8/INT16/UINT8 operands
# never get here: int_arith computes them in INT32.
_NUMERIC_OPS = ("add", "sub", "mul", "maximum", "minimum", "neg", "abs", "sign", "clip",
                "floor_divide", "remainder")
_NUMERIC_TYPES = _FLOAT_TYPES + (dtypes.DT_INT32, dtypes.DT_INT64, dtypes.DT_DOUBLE)
# Ops that also take DOUBLE tensors (the compiler's kFloatOrDouble), and
# with a Python number every arithmetic op: the number stays a double.
_DOUBLE_OPS = ("div", "pow")
_ARITHMETIC = ("add", "sub", "mul", "div", "pow", "maximum", "minimum")


def _check_operand(what, name, t, arg):
    if name in _DOUBLE_OPS and t.dtype == dtypes.DT_DOUBLE:
        return
    if name not in _NUMERIC_OPS:
        _check_float(what, t, arg)
    elif t.dtype not in _NUMERIC_TYPES:
        raise TypeError(
            f"{what}: argument '{arg}' has dtype {t.dtype.name}; {what} takes DT_FP32, "
            f"DT_FP16, DT_BF16, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8 or "
            f"DT_DOUBLE tensors (cast it first)")


def _binary(name, a, b, exact_number=False):
    """a op b. A Python number meeting an FP16/BF16 tensor is rounded to its
    dtype first, as torch and numpy do (fp16(0.1) == 0.1 is true); the
    composites' own numbers (rms_norm's 1/n and epsilon) stay exact
    (exact_number). A SymbolicScalar (a dynamic size, a loop index) stays
    a scalar operand, which the kernel rounds the same way at launch."""
    what = f"pypto.{name}"
    a, b = element.value_of(a), element.value_of(b)
    kind_tt, kind_ts, kind_st = _BINARY[name]
    compare = name in _COMPARISONS
    rewritten = None if compare else int_arith.binary(name, a, b)
    if rewritten is not None:
        return rewritten
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        _check_traced(a, what, "input")
        _check_traced(b, what, "other")
        if a._builder is not b._builder:
            raise TraceError(f"{what}: operands come from different kernels")
        if a.dtype != b.dtype:
            raise TypeError(
                f"{what}: operand dtypes differ ({a.dtype.name} and {b.dtype.name}); "
                f"{what} needs equal dtypes (cast one: pypto.cast(x, dtype))")
        if not compare:
            _check_operand(what, name, a, "input")
        shape = broadcast_shapes(what, [("input", a._shape), ("other", b._shape)])
        dtype = dtypes.DT_BOOL if compare else a.dtype
        return a._builder.add_op(kind_tt, [a, b], dtype, shape, what=what)
    if isinstance(a, Tensor) and _is_scalar(b):
        t, kind, s, arg = a, kind_ts, b, "input"
    elif _is_scalar(a) and isinstance(b, Tensor):
        t, kind, s, arg = b, kind_st, a, "other"
    else:
        bad, arg = (a, "input") if not (isinstance(a, Tensor) or _is_scalar(a)) else (b, "other")
        if isinstance(bad, bool):
            raise TypeError(f"{what}: argument '{arg}' is a bool; use a number")
        raise TypeError(
            f"{what}: expected Tensors or a Tensor and a Python number, got "
            f"{type(a).__name__} and {type(b).__name__}")
    _check_traced(t, what, arg)
    if compare and t.dtype in _PROMOTED_BY_FLOATS and not isinstance(s, numbers.Integral):
        # torch compares an integer or BOOL tensor with a Python float in
        # FP32 (its default dtype; int32 16777217 == 16777216.0 holds), not
        # in double as numpy does: the tensor is cast, the number rounded to
        # FP32 by the immediate.
        tf = cast(t, dtypes.DT_FP32)
        return _binary(name, tf, s) if t is a else _binary(name, s, tf)
    if kind is None:
        _check_operand(what, name, t, arg)
        n = full([1] * len(t._shape), s, t.dtype)
        return _binary(name, t, n) if t is a else _binary(name, n, t)
    if not compare and not (name in _ARITHMETIC and t.dtype == dtypes.DT_DOUBLE):
        _check_float(what, t, arg)
    dtype = dtypes.DT_BOOL if compare else t.dtype
    if not (exact_number or isinstance(s, SymbolicScalar)):
        s = dtypes.round_number(s, t.dtype)
    return t._builder.add_op(kind, [t], dtype, t._shape, {"scalar": _number(s)}, what)


def add(input, other):
    """input + other (numpy broadcasting; a number on either side)."""
    return _binary("add", input, other)


def sub(input, other):
    """input - other."""
    return _binary("sub", input, other)


def mul(input, other):
    """input * other."""
    return _binary("mul", input, other)


def div(input, other):
    """input / other (true division)."""
    return _binary("div", input, other)


def pow(input, exponent):  # noqa: A001 - PyPTO's name
    """input ** exponent."""
    return _binary("pow", input, exponent)


def floor_divide(input, other):
    """input // other, rounding toward -inf (torch.floor_divide): floats as
    torch computes them (from fmod, so the same bits; x // 0 is inf or NaN),
    integers exactly (x // 0 gives 0 where torch raises; MIN // -1 wraps)."""
    return _binary("floor_divide", input, other)


def remainder(input, other):
    """input % other with the sign of the divisor (torch.remainder, Python's
    %): floats from fmod (x % 0 is NaN), integers exactly (x % 0 gives 0
    where torch raises)."""
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
    _check_traced(condition, what, "condition")
    if condition.dtype != dtypes.DT_BOOL:
        raise TypeError(f"{what}: argument 'condition' has dtype {condition.dtype.name}; "
                        f"it must be DT_BOOL (e.g. the result of a < b)")
    b = condition._builder
    tensors = [(n, x) for n, x in (("input", input), ("other", other)) if isinstance(x, Tensor)]
    if not tensors:
        raise TypeError(f"{what}: at least one of 'input' and 'other' must be a Tensor")
    for n, x in tensors:
        _check_traced(x, what, n)
        if x._builder is not b:
            raise TraceError(f"{what}: operands come from different kernels")
    dtype = tensors[0][1].dtype
    if len(tensors) == 2 and input.dtype != other.dtype:
        raise TypeError(f"{what}: 'input' and 'other' have dtypes {input.dtype.name} and "
                        f"{other.dtype.name}; they must be equal")
    shapes = [("condition", condition._shape)] + [(n, x._shape) for n, x in tensors]
    shape = broadcast_shapes(what, shapes)
    operands = []
    for n, x in (("input", input), ("other", other)):
        if isinstance(x, Tensor):
            operands.append(x)
        elif _is_scalar(x):
            # A number becomes a tensor of the other operand's shape:
            # 1 ** t is 1 for every t, NaN and inf included (C99 pow), times s.
            t = tensors[0][1]
            if dtype not in _FLOAT_TYPES:
                raise TypeError(f"{what}: a number for '{n}' needs a float tensor on the "
                                f"other side, got {dtype.name}")
            ones = b.add_op("rpows", [t], dtype, t._shape, {"scalar": 1.0}, what)
            operands.append(b.add_op("muls", [ones], dtype, t._shape, {"scalar": _number(x)},
                                     what))
        else:
            raise TypeError(f"{what}: argument '{n}' must be a Tensor or a number, got "
                            f"{type(x).__name__}")
    return b.add_op("where", [condition] + operands, dtype, shape, what=what)


def _unary(kind, x):
    what = f"pypto.{kind}"
    rewritten = int_arith.unary(kind, x)
    if rewritten is not None:
        return rewritten
    _check_traced(x, what, "input")
    _check_operand(what, kind, x, "input")
    return x._builder.add_op(kind, [x], x.dtype, x._shape, what=what)


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


def cast(input, dtype):
    """input converted to `dtype` (any of the Tier-1 DT_* types). Rules follow
    torch: float -> int truncates toward zero and wraps to the width (-1.0 ->
    uint8 255); NaN and floats outside int32 give INT32_MIN before wrapping
    to INT8/INT16/INT32 (outside int64, INT64_MIN for UINT8/INT64); -> BOOL
    is x != 0; FP16/BF16 round to nearest even."""
    what = "pypto.cast"
    _check_traced(input, what, "input")
    if not isinstance(dtype, dtypes.DataType) or dtype not in dtypes.COMPILABLE:
        raise TypeError(f"{what}: dtype must be one of "
                        f"{', '.join(t.name for t in dtypes.COMPILABLE)}, got {dtype!r}")
    b = input._builder
    return b.add_op("cast", [input], dtype, input._shape, {"dtype": dtype}, what)


def _reduce_dtype(kind, dtype):
    """torch's result dtype (compiler ReduceResultDType): arg* give DT_INT64;
    sum/prod of an integer or BOOL tensor give DT_INT64; otherwise the
    input's dtype."""
    if kind in ("argmax", "argmin"):
        return dtypes.DT_INT64
    if kind in ("sum", "prod") and dtype not in _FLOAT_TYPES + (dtypes.DT_DOUBLE,):
        return dtypes.DT_INT64
    return dtype


def _reduce(kind, input, dim, keepdim):
    what = f"pypto.{kind}"
    _check_traced(input, what, "input")
    if input.dtype not in dtypes.COMPILABLE:
        raise TypeError(f"{what}: argument 'input' has dtype {input.dtype.name}; {what} "
                        f"takes {', '.join(t.name for t in dtypes.COMPILABLE)} tensors")
    rank = len(input._shape)
    if dim is None:
        return _reduce_all(kind, input, keepdim, what)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{what}: dim must be an int or None, got {type(dim).__name__}")
    if rank == 0:
        raise ValueError(f"{what}: the input is a rank-0 tensor (one element); there is no "
                         f"dim to reduce")
    if not -rank <= dim < rank:
        raise ValueError(f"{what}: dim {dim} is out of range for a tensor of rank {rank} "
                         f"(valid: {-rank}..{rank - 1})")
    d = dim % rank
    shape = list(input._shape)
    if keepdim:
        shape[d] = 1
    else:
        del shape[d]  # a rank-1 input gives a rank-0 result, as torch
    dtype = _reduce_dtype(kind, input.dtype)
    return input._builder.add_op(kind, [input], dtype, tuple(shape),
                                 {"dim": int(dim), "keepdim": bool(keepdim)}, what,
                                 space=input._shape)


def _reduce_all(kind, input, keepdim, what):
    """The reduction of every element (dim=None, as torch): the input read as
    a rank-1 tensor (pypto.reshape) and reduced over dim 0, a rank-0 result
    (keepdim: shape [1] * rank). argmax/argmin give the row-major index. Its
    tile holds as many elements as the vector tile in force."""
    from . import layout, tiling
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
    flat = input if len(shape) == 1 else layout.reshape(input, [n])
    tile = tiling.current_vec_tile()
    per_tile = n
    if tile is not None:
        per_tile = 1
        for t in tile:
            per_tile *= int(t)
    out = input._builder.add_op(kind, [flat], _reduce_dtype(kind, input.dtype),
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
    _check_traced(t, what, "gamma")
    from . import tiling
    tile = tiling.current_vec_tile()
    rank = len(t._shape)
    if tile is not None and len(tile) >= rank:
        tile = tuple(k if isinstance(d, SymbolicScalar) else min(k, d)
                     for k, d in zip(tile[len(tile) - rank:], t._shape))
    return t._builder.add_op("cast", [t], dtype, t._shape, {"dtype": dtype}, what, tile=tile)


def softmax(input, dim):
    """exp(x - amax(x)) / sum(exp(x - amax(x))) over `dim`: recorded as
    amax, sub, exp, sum, reciprocal of the sum and mul (the reductions with
    keepdim, so the subtraction and the normalisation broadcast); a dim
    spanning several tiles is reduced per tile, then combined. Multiplies by
    one reciprocal per row instead of dividing every value (vdivps was a
    third of a 1024-value row's time): e * (1 / s) is within 1.5 ulp of
    e / s (0.5 for the division), which moves softmax's error against
    float64 from 2.8e-7 to 2.9e-7 on rows of 1024 in [-1, 1]
    (docs/bench/kernels-2026-12-01-s5.md). FP16/BF16 input is cast to FP32,
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


def _creation_builder(what):
    from . import tracer
    b = tracer.current_builder()
    if b is None:
        raise TraceError(f"{what}: creates a tensor inside a @pypto.jit kernel only")
    return b


def _shape_arg(what, shape):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if len(shape) > 4 or any(isinstance(d, bool) or not isinstance(d, int) or d <= 0
                             for d in shape):
        raise ValueError(f"{what}: shape must be 0 to 4 positive ints, got {shape!r}")
    return shape


def full(shape, fill_value, dtype=dtypes.DT_FP32, *, valid_shape=None):
    """A tensor of `shape` filled with `fill_value` (converted to dtype).
    `valid_shape` (PyPTO's, for tails) may only be the whole shape here."""
    what = "pypto.full"
    fill_value = element.value_of(fill_value)
    b = _creation_builder(what)
    shape = _shape_arg(what, shape)
    if valid_shape is not None and tuple(valid_shape) != shape:
        raise ValueError(f"{what}: valid_shape {list(valid_shape)!r} must equal the shape "
                         f"{list(shape)!r} (a partly valid full is not supported; take a "
                         f"view of the result instead)")
    if not isinstance(dtype, dtypes.DataType) or dtype not in dtypes.COMPILABLE:
        raise TypeError(f"{what}: dtype must be a Tier-1 pypto.DT_* type, got {dtype!r}")
    if not (_is_scalar(fill_value) or isinstance(fill_value, bool)):
        raise TypeError(f"{what}: fill_value must be a number, got "
                        f"{type(fill_value).__name__}")
    return b.add_op("full", [], dtype, shape,
                    {"shape": list(shape), "dtype": dtype, "value": _number(fill_value)}, what)


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
    b = _creation_builder(what)
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
    makes the result DT_FP32 (the tensor is cast first, as torch promotes)."""
    what = "pypto.clip"
    min, max = element.value_of(min), element.value_of(max)  # noqa: A001
    _check_traced(input, what, "input")
    for name, v in (("min", min), ("max", max)):
        if v is not None and (not _is_scalar(v) or isinstance(v, bool)):
            raise TypeError(f"{what}: '{name}' must be a number or None, got "
                            f"{type(v).__name__} (tensor bounds: use maximum/minimum)")
    rewritten = int_arith.clip(input, min, max)
    if rewritten is not None:
        return rewritten
    _check_operand(what, "clip", input, "input")
    bounds = {"min": -math.inf if min is None else _number(min),
              "max": math.inf if max is None else _number(max)}
    return input._builder.add_op("clip", [input], input.dtype, input._shape, bounds, what)


from .matmul import matmul  # noqa: E402,F401  (cube path: matmul.py)


def _later(name, issue):
    def op(*args, **kwargs):
        raise not_yet(f"pypto.{name}", issue)
    op.__name__ = name
    op.__doc__ = f"Not implemented yet (issue {issue})."
    return op


LATER_OPS = {
    6: ("from_torch", "options", "set_pass_options", "set_host_options",
        "set_codegen_options", "set_debug_options", "verify", "gather", "index_select",
        "scatter", "topk", "argsort", "cumsum", "one_hot", "pad", "function"),
}
