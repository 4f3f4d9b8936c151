"""PyPTO ops written as compositions of the public ops: var, axpy_,
expand_clone, one_hot, pad, interleave, deinterleave,
quantize and dequantize. Each records only ops that
ops.py, layout.py and control_flow.py already record (reductions,
elementwise arithmetic, where, views, concat, assemble, loops), so they
compile wherever those do.
"""

from . import dtypes, layout, ops, symbolic, valid_region
from .errors import NotYetImplementedError
from .primitives import FLOAT_TYPES, check_float, check_traced
from .symbolic import SymbolicScalar
from .tensors import _is_scalar

_INTEGER_TYPES = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64,
                  dtypes.DT_UINT8)


def _static(d):
    return isinstance(d, int) and not isinstance(d, SymbolicScalar)


def _dims(what, dim, rank):
    """`dim` (an int, a sequence of ints, or None: every dim) as sorted
    non-negative dims."""
    if dim is None:
        return list(range(rank))
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"{what}: dim must be an int, a sequence of ints or None, got "
                            f"{type(d).__name__}")
        if not -rank <= d < rank:
            raise ValueError(f"{what}: dim {d} is out of range for rank {rank}")
        out.append(d % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: dim {list(dims)} names a dim twice")
    return sorted(out)


# var -----------------------------------------------------------------------------

def var(input, dim=None, *, correction=1, keepdim=False):  # noqa: A002 - PyPTO's names
    """Variance over `dim` (an int, a sequence of ints, or None: every
    element), as torch.var: sum((x - mean)**2) / max(0, n - correction),
    n the number of elements reduced (a dynamic dim's n is read at launch).
    n - correction <= 0 divides by 0 (inf, or NaN for a zero sum), as
    torch. FP16/BF16 input is computed in FP32 and rounded once. Float
    tensors only (torch.var rejects integers)."""
    what = "pypto.var"
    check_traced(input, what, "input")
    check_float(what, input, "input")
    if isinstance(correction, bool) or not _is_scalar(correction) \
            or isinstance(correction, SymbolicScalar):
        raise TypeError(f"{what}: correction must be a number, got "
                        f"{type(correction).__name__}")
    if input.dtype in (dtypes.DT_FP16, dtypes.DT_BF16):
        return ops.cast(var(ops.cast(input, dtypes.DT_FP32), dim, correction=correction,
                            keepdim=keepdim), input.dtype)
    shape = list(input._shape)
    if not shape:
        raise ValueError(f"{what}: the input is a rank-0 tensor (one element)")
    dims = _dims(what, dim, len(shape))
    n = 1
    for d in dims:
        n = n * shape[d]
    every = len(dims) == len(shape)
    if every and not all(_static(d) for d in shape):
        raise ValueError(f"{what}: reducing every element needs static dims (got shape "
                         f"{shape}); pass dim= to reduce some dims")
    mean = input
    for d in dims:
        mean = ops.sum(mean, d, keepdim=True)
    mean = ops.div(mean, n)
    dev = ops.sub(input, mean)
    sq = ops.mul(dev, dev)
    if every:
        total = ops.sum(sq, None, keepdim=keepdim)
    else:
        total = sq
        for d in dims:
            total = ops.sum(total, d, keepdim=True)
        if not keepdim:
            total = layout.reshape(total, [s for i, s in enumerate(shape) if i not in dims])
    denominator = n - correction
    if _static(n):
        denominator = max(0, denominator)
    return ops.div(total, denominator)


# axpy_ ---------------------------------------------------------------------------

def axpy_(y, x, alpha=1.0):
    """In place: y takes alpha * x + y (x broadcasts to y's shape; equal
    dtypes); returns y. alpha * x is rounded to the dtype, then added (torch's
    y.add_(x, alpha=alpha) may fuse the two). Integer tensors need an int
    alpha, as torch."""
    what = "pypto.axpy_"
    check_traced(y, what, "y")
    check_traced(x, what, "x")
    if x.dtype != y.dtype:
        raise TypeError(f"{what}: 'x' has dtype {x.dtype.name} and 'y' {y.dtype.name}; they "
                        f"must be equal (cast one: pypto.cast(x, dtype))")
    if isinstance(alpha, bool) or not _is_scalar(alpha):
        raise TypeError(f"{what}: alpha must be a number, got {type(alpha).__name__}")
    if y.dtype not in FLOAT_TYPES + (dtypes.DT_DOUBLE,) and not isinstance(alpha, int):
        raise TypeError(f"{what}: alpha {alpha!r} must be an int for {y.dtype.name} tensors")
    scaled = x if alpha == 1 else ops.mul(x, alpha)
    y.move(ops.add(y, scaled))
    return y


# expand_clone ----------------------------------------------------------------------

def expand_clone(input, shape, *, valid_shape=None):  # noqa: A002 - PyPTO's names
    """input with its size-1 dims repeated to `shape`, as a new tensor (not
    a view): torch's input.expand(shape).clone(). `shape` may add leading
    dims; -1 keeps a dim. Values are copied bit for bit (-0.0 and NaN
    payloads included). `valid_shape` (static or symbolic) is the result's
    valid region (valid_region.py); an input's own valid region carries
    over in the dims it does not expand."""
    what = "pypto.expand_clone"
    check_traced(input, what, "input")
    if isinstance(shape, int):
        shape = [shape]
    shape = list(shape)
    old = list(input.shape)  # static: a valid region carries over
    if len(shape) < len(old):
        raise ValueError(f"{what}: shape {shape} has fewer dims than the input "
                         f"{old}")
    if len(shape) > 4:
        raise ValueError(f"{what}: shape {shape} has rank {len(shape)} (at most 4)")
    lead = len(shape) - len(old)
    padded = [1] * lead + old
    target, grow = [], []
    for i, (s, d) in enumerate(zip(shape, padded)):
        if _static(s) and s == -1:
            if i < lead:
                raise ValueError(f"{what}: shape[{i}] = -1 is a new leading dim; it needs a "
                                 f"size")
            s = d
        same = symbolic.same(s, d)
        if not same and not (_static(d) and d == 1):
            raise ValueError(f"{what}: the input {old} cannot expand to {shape}: dim {i} "
                             f"has size {d}, not 1")
        if not same and not (_static(s) and s > 0 or symbolic.is_symbolic(s)):
            raise ValueError(f"{what}: shape[{i}] = {s} must be a positive int or a "
                             f"symbolic size")
        target.append(s)
        grow.append(1 if same else s)
    if valid_shape is not None:
        valid_shape = valid_region.valid_dims(valid_shape, target, what)
    if all(g == 1 for g in grow):
        out = layout.clone(input)
    else:
        mask = ops.full(grow, True, dtypes.DT_BOOL)
        out = ops.where(mask, input, input)
    if valid_shape is None:
        return out
    return layout.view(out, target, None, valid_shape)


# one_hot -------------------------------------------------------------------------

def one_hot(input, num_classes):  # noqa: A002 - PyPTO's names
    """DT_INT64 tensor of input.shape + [num_classes]: 1 where the last
    index equals the input's value, else 0 (torch.nn.functional.one_hot).
    `num_classes` is a compile-time int; a value outside [0, num_classes)
    gives a row of zeros (torch raises). Integer or BOOL input, rank <= 3."""
    what = "pypto.one_hot"
    check_traced(input, what, "input")
    if input.dtype not in _INTEGER_TYPES + (dtypes.DT_BOOL,):
        raise TypeError(f"{what}: argument 'input' has dtype {input.dtype.name}; it must be "
                        f"an integer tensor (torch.nn.functional.one_hot takes int64)")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) \
            or isinstance(num_classes, SymbolicScalar):
        raise TypeError(f"{what}: num_classes must be an int known when tracing, got "
                        f"{type(num_classes).__name__} (num_classes=-1, the maximum "
                        f"plus one, would depend on the data)")
    if num_classes <= 0:
        raise ValueError(f"{what}: num_classes must be positive, got {num_classes}")
    rank = len(input._shape)
    if rank > 3:
        raise ValueError(f"{what}: the input has rank {rank}; the result would have rank "
                         f"{rank + 1} (at most 4)")
    x = input
    if x.dtype not in (dtypes.DT_INT32, dtypes.DT_INT64):
        x = ops.cast(x, dtypes.DT_INT32)
    classes = ops.arange(num_classes, dtype=x.dtype)
    if rank:
        classes = layout.reshape(classes, [1] * rank + [num_classes])
        x = layout.unsqueeze(x, -1)
    return ops.cast(ops.eq(x, classes), dtypes.DT_INT64)


# pad -----------------------------------------------------------------------------

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _check_fill_value(what, input, value):  # noqa: A002
    """A padding value: a number; an int for integer tensors (a float is a
    ValueError, as PyPTO)."""
    if isinstance(value, bool) or not _is_scalar(value) or isinstance(value, SymbolicScalar):
        raise TypeError(f"{what}: value must be a number, got {type(value).__name__}")
    if input.dtype not in FLOAT_TYPES + (dtypes.DT_DOUBLE,) and not isinstance(value, int):
        raise ValueError(f"{what}: value {value!r} must be an int for "
                         f"{input.dtype.name} tensors")


def pad(input, pad, mode="constant", value=0):  # noqa: A002 - PyPTO's names
    """input padded with `value` (torch.nn.functional.pad, mode 'constant'):
    `pad` is (left, right) of the last dim, then (top, bottom) of the one
    before, and so on; sizes are non-negative ints. PyPTO pads only the
    right and bottom; here any side of any dim may be padded. Integer
    tensors need an int `value` (a float is a ValueError, as PyPTO)."""
    what = "pypto.pad"
    check_traced(input, what, "input")
    if not isinstance(pad, (list, tuple)) or any(
            isinstance(p, bool) or not _static(p) for p in pad):
        raise TypeError(f"{what}: pad must be a sequence of ints, got {pad!r}")
    if not isinstance(mode, str) or mode not in _PAD_MODES:
        raise ValueError(f"{what}: mode {mode!r} is not one of {', '.join(_PAD_MODES)}")
    if mode != "constant":
        raise NotYetImplementedError(f"{what}: mode {mode!r} is not implemented (PyPTO "
                                     f"supports only 'constant')")
    shape = list(input._shape)
    rank = len(shape)
    if not shape:
        raise ValueError(f"{what}: the input is a rank-0 tensor")
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise ValueError(f"{what}: pad {list(pad)} must have an even length of at most "
                         f"2 * rank ({2 * rank})")
    if any(p < 0 for p in pad):
        raise ValueError(f"{what}: pad {list(pad)} has a negative size (not supported)")
    _check_fill_value(what, input, value)
    x = input
    for k in range(len(pad) // 2):
        d = rank - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        parts = []
        for size in (before, None, after):
            if size is None:
                parts.append(x)
            elif size:
                fill = list(x._shape)
                fill[d] = size
                parts.append(ops.full(fill, value, input.dtype))
        x = layout.concat(parts, d)
    return x if x is not input else layout.clone(x)


def fillpad(input, mode="constant", value=0):  # noqa: A002 - PyPTO's names
    """input with everything outside its valid region (valid_region.py) set
    to `value` ('constant', PyPTO's only mode): a tensor of the same shape,
    valid everywhere. Integer tensors need an int `value`."""
    what = "pypto.fillpad"
    check_traced(input, what, "input")
    if mode != "constant":
        raise ValueError(f"{what}: mode {mode!r} is not 'constant' (PyPTO's only mode)")
    _check_fill_value(what, input, value)
    if input._static is None:
        return layout.clone(input)
    return layout.fill_outside_valid(input, value)


# interleave, deinterleave ----------------------------------------------------------

_INTERLEAVE_TYPES = (dtypes.DT_INT8, dtypes.DT_UINT8, dtypes.DT_INT16, dtypes.DT_UINT16,
                     dtypes.DT_INT32, dtypes.DT_UINT32, dtypes.DT_FP16, dtypes.DT_FP32,
                     dtypes.DT_BF16)


def _pairs_input(what, input, name):
    """Checks `input` for (de)interleave: a traced tensor of rank 1 to 4, a
    supported dtype, an even static last dim."""
    check_traced(input, what, name)
    shape = list(input._shape)
    if not 1 <= len(shape) <= 4:
        raise ValueError(f"{what}: '{name}' has rank {len(shape)} (1 to 4)")
    if input.dtype not in _INTERLEAVE_TYPES:
        raise TypeError(f"{what}: '{name}' has dtype {input.dtype.name}; supported: "
                        f"{', '.join(t.name for t in _INTERLEAVE_TYPES)}")
    if not _static(shape[-1]) or shape[-1] % 2:
        raise ValueError(f"{what}: the last dim of '{name}' ({shape[-1]}) must be a static "
                         f"even size")


def _rows(what, x):
    """x with its leading dims merged into one when it has rank 4 (so that
    one more dim fits), and the function that restores a result's leading
    dims."""
    shape = list(x._shape)
    if len(shape) < 4:
        return x, lambda y: y
    if not all(_static(d) for d in shape[:2]):
        raise ValueError(f"{what}: a rank-4 input needs static leading dims, got {shape}")
    flat = layout.reshape(x, [shape[0] * shape[1]] + shape[2:])
    return flat, lambda y: layout.reshape(y, shape[:2] + list(y._shape[1:]))


def _split_last(x):
    """The two halves of x along its last dim."""
    shape = list(x._shape)
    half = shape[-1] // 2
    offsets = [0] * len(shape)
    return tuple(layout.view(x, shape[:-1] + [half], offsets[:-1] + [k * half])
                 for k in (0, 1))


def interleave(input, other):  # noqa: A002 - PyPTO's names
    """(out0, out1): the stream input[0], other[0], input[1], other[1], ...
    of each row (the last dim), split at its middle; out0 and out1 have
    input's shape. The inverse of deinterleave(out0, out1)."""
    what = "pypto.interleave"
    _pairs_input(what, input, "input")
    _pairs_input(what, other, "other")
    if other.dtype != input.dtype or not symbolic.same_shape(list(other._shape),
                                                              list(input._shape)):
        raise ValueError(f"{what}: 'input' ({input.dtype.name} {list(input._shape)}) and "
                         f"'other' ({other.dtype.name} {list(other._shape)}) must have "
                         f"equal shapes and dtypes")
    a, restore = _rows(what, input)
    b, _ = _rows(what, other)
    shape = list(a._shape)
    pairs = layout.concat([layout.unsqueeze(a, -1), layout.unsqueeze(b, -1)], -1)
    stream = layout.reshape(pairs, shape[:-1] + [2 * shape[-1]])
    return tuple(restore(layout.clone(h)) for h in _split_last(stream))


def deinterleave(input, other=None):  # noqa: A002 - PyPTO's names
    """(out0, out1): the even and odd positions of an interleaved stream
    along the last dim. With `other`, the stream is input followed by other
    (the results have input's shape); without, the stream is input (the
    results have half its last dim). The inverse of interleave."""
    what = "pypto.deinterleave"
    _pairs_input(what, input, "input")
    x = input
    if other is not None:
        _pairs_input(what, other, "other")
        if other.dtype != input.dtype or not symbolic.same_shape(list(other._shape),
                                                                  list(input._shape)):
            raise ValueError(f"{what}: 'input' ({input.dtype.name} {list(input._shape)}) "
                             f"and 'other' ({other.dtype.name} {list(other._shape)}) must "
                             f"have equal shapes and dtypes")
        x = layout.concat([input, other], -1)
    x, restore = _rows(what, x)
    shape = list(x._shape)
    n = shape[-1] // 2
    pairs = layout.transpose(layout.reshape(x, shape[:-1] + [n, 2]), -1, -2)
    rank = len(shape) + 1
    outs = []
    for k in (0, 1):
        row = layout.view(pairs, shape[:-1] + [1, n], [0] * (rank - 2) + [k, 0])
        outs.append(restore(layout.reshape(row, shape[:-1] + [n])))
    return tuple(outs)


# quantize, dequantize --------------------------------------------------------------

_QUANT_RANGE = {dtypes.DT_INT8: (-128, 127), dtypes.DT_UINT8: (0, 255)}


def _per_axis(what, input, axis, param, name):
    """`param` (scale or zero points, DT_FP32: input's shape without dim
    `axis`, one of its last two) with that dim back as size 1, to broadcast
    over input."""
    rank = len(input._shape)
    if not rank:
        raise ValueError(f"{what}: the input is a rank-0 tensor")
    if isinstance(axis, bool) or not isinstance(axis, int) or isinstance(axis, SymbolicScalar):
        raise TypeError(f"{what}: axis must be an int, got {type(axis).__name__}")
    if axis in (-1, rank - 1):
        d = rank - 1
    elif rank >= 2 and axis in (-2, rank - 2):
        d = rank - 2
    else:
        raise ValueError(f"{what}: axis {axis} must name one of the last two dims of a "
                         f"rank-{rank} input (-1 or -2; a rank-1 input takes only -1)")
    check_traced(param, what, name)
    if param.dtype != dtypes.DT_FP32:
        raise TypeError(f"{what}: '{name}' has dtype {param.dtype.name}; it must be DT_FP32")
    want = [s for i, s in enumerate(input._shape) if i != d]
    if len(param._shape) != rank - 1 or not symbolic.same_shape(list(param._shape), want):
        raise ValueError(f"{what}: '{name}' has shape {list(param._shape)}; for axis {axis} "
                         f"of an input {list(input._shape)} it must be {want}")
    return layout.unsqueeze(param, d) if want else layout.reshape(param, [1])


def quantize(input, scale, otype, axis, zero_points=None):  # noqa: A002 - PyPTO's names
    """DT_FP32 input to DT_INT8 (round(input * scale), no zero_points) or
    DT_UINT8 (round(input * scale + zero_points)). `scale` and `zero_points` have
    input's shape without dim `axis`: for [..., row, col], axis -1 takes
    [..., row] (one scale a row), axis -2 [..., col] (one a column). Rounds
    half to even and saturates to the otype's range."""
    what = "pypto.quantize"
    check_traced(input, what, "input")
    if input.dtype != dtypes.DT_FP32:
        raise TypeError(f"{what}: 'input' has dtype {input.dtype.name}; it must be DT_FP32")
    if otype not in _QUANT_RANGE:
        raise TypeError(f"{what}: otype {getattr(otype, 'name', otype)} must be DT_INT8 "
                        f"(symmetric) or DT_UINT8 (asymmetric)")
    if (zero_points is None) != (otype == dtypes.DT_INT8):
        raise ValueError(f"{what}: otype {otype.name} with zero_points "
                         f"{'None' if zero_points is None else 'given'}: DT_INT8 "
                         f"(symmetric) takes no zero_points, DT_UINT8 (asymmetric) needs them")
    y = ops.mul(input, _per_axis(what, input, axis, scale, "scale"))
    if zero_points is not None:
        y = ops.add(y, _per_axis(what, input, axis, zero_points, "zero_points"))
    lo, hi = _QUANT_RANGE[otype]
    return ops.cast(ops.clip(ops.round(y), float(lo), float(hi)), otype)


def dequantize(input, scale, otype, axis, zero_points=None):  # noqa: A002 - PyPTO's names
    """DT_INT8, DT_UINT8 or DT_INT16 input to DT_FP32: (float(input) +
    zero_points) * scale, each step rounded to FP32; `scale`, `zero_points`
    and `axis` as quantize's."""
    what = "pypto.dequantize"
    check_traced(input, what, "input")
    if input.dtype not in (dtypes.DT_INT8, dtypes.DT_UINT8, dtypes.DT_INT16):
        raise TypeError(f"{what}: 'input' has dtype {input.dtype.name}; it must be DT_INT8, "
                        f"DT_UINT8 or DT_INT16")
    if otype != dtypes.DT_FP32:
        raise TypeError(f"{what}: otype {getattr(otype, 'name', otype)} must be DT_FP32")
    x = ops.cast(input, dtypes.DT_FP32)
    scale = _per_axis(what, input, axis, scale, "scale")
    if zero_points is not None:
        x = ops.add(x, _per_axis(what, input, axis, zero_points, "zero_points"))
    return ops.mul(x, scale)
