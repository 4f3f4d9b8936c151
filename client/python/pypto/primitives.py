"""Strict primitives: each records one op of the graph, checking its operands.

Policy lives above (ops.py and the modules it uses): integer arithmetic
by torch's rules (int_arith.py), views (layout.py), the cube path
(matmul.py), composites (softmax, rms_norm), reductions of every element.
A primitive takes the dtypes the compiler's op takes (the registry's facts,
read through op_table.py) and records it as called; its errors name the op
and the argument.

Binary ops and comparisons take two tensors of the same dtype whose shapes
broadcast as in numpy, or a tensor and a Python number on either side
(`2 - a` records rsubs, `2 < a` records gts). Comparisons give DT_BOOL.
"""

import math
import numbers

from . import dtypes, op_table, symbolic, tracer, valid_region
from .errors import TraceError
from .symbolic import SymbolicScalar
from .tensors import Tensor, _is_scalar, _number

# The registry kinds (op_table.py) that record `a op b`: tensor-op-tensor,
# tensor-op-scalar, scalar-op-tensor (`s - x` is rsubs(x, s)).
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
    "fmod": ("fmod", None, None),
    "atan2": ("atan2", None, None),
    "hypot": ("hypot", None, None),
    "gcd": ("gcd", None, None),
    "bitwise_and": ("bitwise_and", None, None),
    "bitwise_or": ("bitwise_or", None, None),
    "bitwise_xor": ("bitwise_xor", None, None),
    "bitwise_left_shift": ("bitwise_left_shift", None, None),
    "bitwise_right_shift": ("bitwise_right_shift", None, None),
    # s < x is x > s.
    "eq": ("eq", "eqs", "eqs"),
    "ne": ("ne", "nes", "nes"),
    "lt": ("lt", "lts", "gts"),
    "le": ("le", "les", "ges"),
    "gt": ("gt", "gts", "lts"),
    "ge": ("ge", "ges", "les"),
}
# Tensor-with-tensor ops whose result is DT_BOOL: eq ne lt le gt ge.
COMPARISONS = op_table.kinds(category="elementwise_binary", bool_result=True)
# Tensor dtypes that a Python float promotes to FP32 in a comparison (torch).
_PROMOTED_BY_FLOATS = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64,
                       dtypes.DT_UINT8, dtypes.DT_BOOL)
# The dtypes float math takes (OperandTypes::kFloat): FP32, FP16, BF16.
FLOAT_TYPES = op_table.OPERAND_TYPES["float"]


def check_traced(x, what, arg):
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


def check_dim(what, dim, rank, allowed="an int"):
    """dim (an int, negative from the end) as an index in [0, rank):
    TypeError unless it is a plain int (`allowed` names what the caller
    takes), ValueError out of range."""
    if isinstance(dim, (bool, SymbolicScalar)) or not isinstance(dim, int):
        raise TypeError(f"{what}: dim must be {allowed}, got {type(dim).__name__}")
    if not -rank <= dim < rank:
        raise ValueError(f"{what}: dim {dim} is out of range for rank {rank}")
    return dim % rank


def check_float(what, t, arg):
    if t.dtype not in FLOAT_TYPES:
        raise TypeError(
            f"{what}: argument '{arg}' has dtype {t.dtype.name}; {what} takes DT_FP32, "
            f"DT_FP16 or DT_BF16 tensors (cast it first)")


# What a data operand of a kind that does not take its dtype is told, by the
# kind's OperandTypes. INT8, INT16 and UINT8 operands of the numeric and
# integer kinds never get here: int_arith computes them in INT32.
_OPERAND_TYPES_TEXT = {
    "float": "DT_FP32, DT_FP16 or DT_BF16 tensors (cast it first)",
    "float_or_double": "DT_FP32, DT_FP16 or DT_BF16 tensors (cast it first)",
    "numeric": "DT_FP32, DT_FP16, DT_BF16, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8 or "
               "DT_DOUBLE tensors (cast it first)",
    "integer": "integer tensors (DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8)",
}


def check_operand(what, kind, t, arg):
    """t as a data operand of registry kind `kind`: a dtype the compiler's
    kind takes (op_table), else a TypeError naming the argument."""
    facts = op_table.op(kind)
    if t.dtype in facts.operand_dtypes:
        return
    raise TypeError(f"{what}: argument '{arg}' has dtype {t.dtype.name}; {what} takes "
                    f"{_OPERAND_TYPES_TEXT[facts.operands]}")


def binary(name, a, b, exact_number=False):
    """a op b. A Python number meeting an FP16/BF16 tensor is rounded to its
    dtype first, as torch and numpy do (fp16(0.1) == 0.1 is true); the
    composites' own numbers (rms_norm's 1/n and epsilon) stay exact
    (exact_number). A SymbolicScalar (a dynamic size, a loop index) stays
    a scalar operand, which the kernel rounds the same way at launch."""
    what = f"pypto.{name}"
    kind_tt, kind_ts, kind_st = _BINARY[name]
    compare = name in COMPARISONS
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        check_traced(a, what, "input")
        check_traced(b, what, "other")
        if a._builder is not b._builder:
            raise TraceError(f"{what}: operands come from different kernels")
        if a.dtype != b.dtype:
            raise TypeError(
                f"{what}: operand dtypes differ ({a.dtype.name} and {b.dtype.name}); "
                f"{what} needs equal dtypes (cast one: pypto.cast(x, dtype))")
        check_operand(what, kind_tt, a, "input")
        broadcast_shapes(what, [("input", valid_region.static_shape(a)),
                                ("other", valid_region.static_shape(b))])
        (a, b), static = valid_region.elementwise(what, [a, b])
        shape = broadcast_shapes(what, [("input", a._shape), ("other", b._shape)])
        dtype = dtypes.DT_BOOL if op_table.op(kind_tt).bool_result else a.dtype
        return a._builder.add_op(kind_tt, [a, b], dtype, shape, what=what, static=static)
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
    check_traced(t, what, arg)
    if compare and t.dtype in _PROMOTED_BY_FLOATS and not isinstance(s, numbers.Integral):
        # torch compares an integer or BOOL tensor with a Python float in
        # FP32 (its default dtype; int32 16777217 == 16777216.0 holds), not
        # in double as numpy does: the tensor is cast, the number rounded to
        # FP32 by the immediate.
        tf = cast(t, dtypes.DT_FP32)
        return binary(name, tf, s) if t is a else binary(name, s, tf)
    if kind is None:
        check_operand(what, name, t, arg)
        n = full([1] * len(t._shape), s, t.dtype)
        return binary(name, t, n) if t is a else binary(name, n, t)
    check_operand(what, kind, t, arg)
    dtype = dtypes.DT_BOOL if op_table.op(kind).bool_result else t.dtype
    if not (exact_number or isinstance(s, SymbolicScalar)):
        s = dtypes.round_number(s, t.dtype)
    return t._builder.add_op(kind, [t], dtype, t._shape, {"scalar": _number(s)}, what,
                             static=t._static)


def unary(kind, x):
    what = f"pypto.{kind}"
    check_traced(x, what, "input")
    check_operand(what, kind, x, "input")
    dtype = dtypes.DT_BOOL if op_table.op(kind).bool_result else x.dtype
    return x._builder.add_op(kind, [x], dtype, x._shape, what=what, static=x._static)


def cast(input, dtype):
    """input converted to `dtype` (any of the Tier-1 DT_* types). Rules follow
    torch: float -> int truncates toward zero and wraps to the width (-1.0 ->
    uint8 255); NaN and floats outside int32 give INT32_MIN before wrapping
    to INT8/INT16/INT32 (outside int64, INT64_MIN for UINT8/INT64); -> BOOL
    is x != 0; FP16/BF16 round to nearest even; the FP8 types round to
    nearest even, past their largest finite value E4M3 and E8M0 give NaN and
    E5M2 inf (pypto.cast's satmode clamps instead)."""
    what = "pypto.cast"
    check_traced(input, what, "input")
    if not isinstance(dtype, dtypes.DataType) or dtype not in dtypes.COMPILABLE:
        raise TypeError(f"{what}: dtype must be one of "
                        f"{', '.join(t.name for t in dtypes.COMPILABLE)}, got {dtype!r}")
    b = input._builder
    return b.add_op("cast", [input], dtype, input._shape, {"dtype": dtype}, what,
                    static=input._static)


def bitcast(input, dtype):
    """input's bits read as `dtype`, element by element (torch's
    x.view(dtype) for a dtype of the same size; little-endian): FP32/INT32,
    FP16/BF16/INT16, INT8/UINT8, INT64/DOUBLE. An FP16 NaN becomes the quiet
    NaN of its sign and a BF16 NaN is quieted (tiles hold them as FP32)."""
    what = "pypto.bitcast"
    check_traced(input, what, "input")
    if not isinstance(dtype, dtypes.DataType) or dtype not in dtypes.COMPILABLE:
        raise TypeError(f"{what}: dtype must be one of "
                        f"{', '.join(t.name for t in dtypes.COMPILABLE)}, got {dtype!r}")
    if dtypes.DT_BOOL in (input.dtype, dtype) or \
            dtypes.bytes_of(input.dtype) != dtypes.bytes_of(dtype):
        raise TypeError(f"{what}: {input.dtype.name} to {dtype.name}: both types must have "
                        f"the same size, and neither may be DT_BOOL")
    b = input._builder
    return b.add_op("bitcast", [input], dtype, input._shape, {"dtype": dtype}, what,
                    static=input._static)


def reduce_dtype(kind, dtype):
    """torch's result dtype, the compiler's (ReduceResultDType, through
    op_table): arg* give DT_INT64; sum/prod of an integer or BOOL tensor give
    DT_INT64; otherwise the input's dtype."""
    return op_table.op(kind).result_dtypes[dtype]


def check_reducible(kind, input):
    """A reduction's input: a traced tensor of a compilable dtype."""
    what = f"pypto.{kind}"
    check_traced(input, what, "input")
    if input.dtype not in dtypes.COMPILABLE or input.dtype in dtypes.FP8_TYPES:
        takes = [t.name for t in dtypes.COMPILABLE if t not in dtypes.FP8_TYPES]
        raise TypeError(f"{what}: argument 'input' has dtype {input.dtype.name}; {what} "
                        f"takes {', '.join(takes)} tensors (cast FP8 to DT_FP32 first)")


def reduce(kind, input, dim, keepdim):  # noqa: A001
    """`kind` (sum, amax, amin, prod, argmax, argmin) over one dim."""
    what = f"pypto.{kind}"
    check_reducible(kind, input)
    rank = len(input._shape)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{what}: dim must be an int or None, got {type(dim).__name__}")
    if rank == 0:
        raise ValueError(f"{what}: the input is a rank-0 tensor (one element); there is no "
                         f"dim to reduce")
    if not -rank <= dim < rank:
        raise ValueError(f"{what}: dim {dim} is out of range for a tensor of rank {rank} "
                         f"(valid: {-rank}..{rank - 1})")
    d = dim % rank
    shape, static = list(input._shape), list(valid_region.static_shape(input))
    for s in (shape, static):
        if keepdim:
            s[d] = 1
        else:
            del s[d]  # a rank-1 input gives a rank-0 result, as torch
    dtype = reduce_dtype(kind, input.dtype)
    return input._builder.add_op(kind, [input], dtype, tuple(shape),
                                 {"dim": int(dim), "keepdim": bool(keepdim)}, what,
                                 space=input._shape, static=static)


def creation_builder(what):
    b = tracer.current_builder()
    if b is None:
        raise TraceError(f"{what}: creates a tensor inside a @pypto.jit kernel only")
    return b


def shape_arg(what, shape):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if len(shape) > 4 or any(isinstance(d, bool) or not isinstance(d, int) or d <= 0
                             for d in shape):
        raise ValueError(f"{what}: shape must be 0 to 4 positive ints, got {shape!r}")
    return shape


def full(shape, fill_value, dtype=dtypes.DT_FP32, *, valid_shape=None):
    """A tensor of `shape` filled with `fill_value` (converted to dtype).
    `valid_shape` (PyPTO's, for tails: static or symbolic) is its valid
    region, the part ops compute on (valid_region.py)."""
    what = "pypto.full"
    b = creation_builder(what)
    shape = shape_arg(what, shape)
    valid = shape
    if valid_shape is not None:
        valid = tuple(valid_region.valid_dims(valid_shape, shape, what))
    if not isinstance(dtype, dtypes.DataType) or dtype not in dtypes.COMPILABLE:
        raise TypeError(f"{what}: dtype must be a Tier-1 pypto.DT_* type, got {dtype!r}")
    if not (_is_scalar(fill_value) or isinstance(fill_value, bool)):
        raise TypeError(f"{what}: fill_value must be a number, got "
                        f"{type(fill_value).__name__}")
    if dtype in dtypes.FP8_TYPES:  # FP8 values come from a cast (rounded as it rounds)
        return cast(full(shape, fill_value, dtypes.DT_FP32, valid_shape=valid_shape), dtype)
    if any(symbolic.is_symbolic(v) for v in valid):  # the whole, then its valid region
        whole = b.add_full(shape, dtype, _number(fill_value), what)
        return valid_region.narrow(whole, valid, what, static=shape)
    return b.add_full(valid, dtype, _number(fill_value), what, static=shape)


def check_clip_args(input, min, max):  # noqa: A002 - PyPTO's names
    """clip's operands: a traced tensor and number bounds (or None)."""
    what = "pypto.clip"
    check_traced(input, what, "input")
    for name, v in (("min", min), ("max", max)):
        if v is not None and (not _is_scalar(v) or isinstance(v, bool)):
            raise TypeError(f"{what}: '{name}' must be a number, a Tensor or None, got "
                            f"{type(v).__name__}")


def clip(input, min=None, max=None):  # noqa: A002 - PyPTO's names
    """minimum(maximum(input, min), max) in input's dtype; a bound that is
    None is absent."""
    what = "pypto.clip"
    check_clip_args(input, min, max)
    check_operand(what, "clip", input, "input")
    bounds = {"min": -math.inf if min is None else _number(min),
              "max": math.inf if max is None else _number(max)}
    return input._builder.add_op("clip", [input], input.dtype, input._shape, bounds, what,
                                 static=input._static)
