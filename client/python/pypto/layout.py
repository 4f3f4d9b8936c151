"""Layout ops: views, writes into regions, transposes, reshapes, concat.

    y = x[2:10, :, 3]            # a view (offsets [2, 0, 3]), dim 2 dropped
    out[:, 64:128] = x[:, :64] * 2   # an assemble into a region of out
    y = x.transpose(0, 1) + b    # the add reads x transposed (no copy)
    pypto.concat([a, b], dim=1)

Views, transposes, permutes, unsqueezes and reshapes that only add or drop
size-1 dims copy nothing: the ops that read them load the original data
through an index. Slices take steps of 1 (others are a ValueError); an int
index drops its dim and None inserts one. Writing into a region of an
argument (`out[a:b] = y`, `pypto.assemble(y, offsets, out)`) keeps the rest
of the caller's data, so the argument is read as well as written (in/out).

Bounds may be symbolic (a loop index, x.shape[i] of a dynamic dim):
x[i*64:(i + 1)*64, :] is a view with offsets [i*64, 0] and shape [64, ...];
the graph carries them as expressions (attribute `exprs`). A view of a fixed
size may hang past the end of its tensor, as in PyPTO: its valid region is
clipped to what the tensor has there (valid_region.py), here
min(64, n - i*64) rows unless the loop's range shows all 64 are always
there. A symbolic bound is never wrapped like a negative index; a region
whose valid part is empty, and a view of a symbolic size that leaves its
tensor, are errors at launch naming the op and the values. In
`out[i:, ...] = y` a slice with a symbolic start and no stop is y's extent
in that dim (PyPTO's form), not "to the end".
"""

import numbers

from . import primitives, symbolic, tiling, valid_region
from .errors import TraceError
from .runtime_int import RuntimeInt
from .tensors import Tensor, _is_scalar


def _traced(x, what, arg="input"):
    if not isinstance(x, Tensor) or x._builder is None:
        raise TypeError(f"{what}: argument '{arg}' must be a pypto Tensor inside a "
                        f"@pypto.jit kernel, got {type(x).__name__}")
    return x


def _int(v, what):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {type(v).__name__}")
    return v if symbolic.is_symbolic(v) else int(v)


def _dim(d, rank, what):
    d = _int(d, what)
    if not -rank <= d < rank:
        raise ValueError(f"{what}: dim {d} is out of range for rank {rank} "
                         f"(valid: {-rank}..{rank - 1})")
    return d % rank


def _record(kind, inputs, shape, attrs, what, space=None, noncontig=False, static=None):
    """Records a layout op whose result's valid region is `shape` (its
    static shape `static`, None: the same). `noncontig`: the result is not
    its data's row-major order from the start (a view, a transpose), so a
    reshape that merges or splits its dims copies it first."""
    x = inputs[0]
    t = x._builder.add_op(kind, list(inputs), x.dtype, tuple(shape), attrs, what,
                          space=space, tile=tiling.layout_tile(space or shape),
                          static=static)
    t._noncontig = noncontig
    if kind not in ("assemble", "concat", "clone"):
        t._view_of = x  # writing into t would not write x
    return t


def check_writable(t, what):
    """A view (slice, transpose, reshape...) is a value of its own here, not
    memory shared with its tensor: writing into it would leave the tensor
    unchanged, so it is an error (write the tensor's region instead)."""
    if getattr(t, "_view_of", None) is not None:
        raise TraceError(
            f"{what}: the target is a view of another tensor (a slice, transpose or "
            f"reshape); writing into it would not change that tensor: assign the "
            f"region of the tensor itself (out[2:6, 1:3] = y, not out[2:6][:, 1:3] = y)")


def _squeeze_only(a, b):
    """Whether shapes a and b differ only in size-1 dims."""
    return [d for d in a if d != 1] == [d for d in b if d != 1]


def view(input, shape, offsets=None, valid_shape=None):  # noqa: A002 - PyPTO's names
    """input[offsets : offsets + shape] (same rank); no data moves. The
    result's shape is `shape`; its valid region (valid_region.py) is
    `valid_shape` (static or symbolic, e.g. [pypto.min(64, n - i*64), d])
    or, per dim, what the input has there: clamp(input_valid - offset, 0,
    shape), so a fixed-size view may hang past the end of its tensor."""
    what = "pypto.view"
    x = _traced(input, what)
    rank = len(x._shape)
    shape = [_int(d, f"{what}: shape[{i}]") for i, d in enumerate(shape)]
    offsets = [0] * rank if offsets is None else [
        _int(o, f"{what}: offsets[{i}]") for i, o in enumerate(offsets)]
    if len(shape) != rank or len(offsets) != rank:
        raise ValueError(f"{what}: shape {shape} and offsets {offsets} must have the "
                         f"input's rank {rank}")
    if valid_shape is not None:
        valid = valid_region.valid_dims(valid_shape, shape, what)
    else:
        valid = [valid_region.clipped(s, n - o, x._builder.loop_bounds)
                 for s, n, o in zip(shape, x._shape, offsets)]
    return _view(x, shape, offsets, valid, what)


def _view(x, shape, offsets, valid, what):
    """The view of x of static `shape` at `offsets` whose valid region is
    `valid`."""
    for d in range(len(shape)):
        if _any_symbolic(shape[d], valid[d], offsets[d], x._shape[d]):
            continue  # checked at launch (or by the compiler when it can)
        if shape[d] <= 0 or offsets[d] < 0 or valid[d] <= 0 or \
                offsets[d] + valid[d] > x._shape[d]:
            raise ValueError(
                f"{what}: shape {shape} at offsets {offsets} does not fit in the input "
                f"{list(x._shape)}: dim {d} covers [{offsets[d]}, {offsets[d] + shape[d]}), "
                f"whose valid part is empty or leaves the input (valid offsets[{d}]: "
                f"0..{x._shape[d] - 1})")
    if symbolic.same_shape(valid, x._shape) and _all_zero(offsets) and \
            symbolic.same_shape(shape, valid_region.static_shape(x)):
        return x
    return _record("view", [x], valid, {"shape": valid, "offsets": offsets}, what,
                   noncontig=True, static=shape)


def _all_zero(offsets):
    return all(symbolic.same(o, 0) for o in offsets)


def _any_symbolic(*xs):
    return any(symbolic.is_symbolic(x) for x in xs)


def reshape(input, shape, *more, valid_shape=None, inplace=False):  # noqa: A002
    """input with the same elements in row-major order and a new shape (one
    dim may be -1). Copies nothing, except that merging or splitting dims of
    a view or transpose (not in row-major order in memory) clones it first
    (`inplace`, PyPTO's, changes nothing here). `valid_shape` is the
    result's valid region (valid_region.py); without it, a tensor whose
    valid region is smaller than its shape keeps it where the reshape only
    adds or drops size-1 dims, and needs valid_shape otherwise."""
    what = "pypto.reshape"
    x = _traced(input, what)
    if not isinstance(inplace, bool):
        raise TypeError(f"{what}: inplace must be a bool, got {type(inplace).__name__}")
    if isinstance(shape, numbers.Integral):
        shape = (shape,) + more
    shape = [_int(d, f"{what}: shape[{i}]") for i, d in enumerate(shape)]
    static_in = list(valid_region.static_shape(x))
    count = _prod(static_in)
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if shape.count(-1) > 1 or any(d == 0 or d < -1 for d in shape):
        raise ValueError(f"{what}: shape {shape}: dims must be positive, one may be -1")
    if -1 in shape:
        if known == 0 or count % known:
            raise ValueError(f"{what}: cannot infer -1 in {shape} for {count} elements")
        shape[shape.index(-1)] = count // known
    if _prod(shape) != count:
        raise ValueError(f"{what}: shape {shape} has {_prod(shape)} elements; the input "
                         f"{static_in} has {count}")
    if not 1 <= len(shape) <= 4:
        raise ValueError(f"{what}: shape {shape} must have 1 to 4 dims")
    if valid_shape is not None:
        valid = valid_region.valid_dims(valid_shape, shape, what)
        if x._static is None:  # all of it reshaped, then its leading region
            whole = _reshape(x, shape, what)
            return _view(whole, shape, [0] * len(shape), valid, what)
        return _reshape(x, valid, what, static=shape)
    if x._static is None:
        return _reshape(x, shape, what)
    if not _squeeze_only(shape, static_in):
        raise ValueError(
            f"{what}: the input's valid region {list(x._shape)} is smaller than its shape "
            f"{static_in}; a reshape that merges or splits its dims needs valid_shape= (the "
            f"result's valid region)")
    valid_of = iter(v for v, s in zip(x._shape, static_in) if s != 1)
    valid = [1 if s == 1 else next(valid_of) for s in shape]
    return _reshape(x, valid, what, static=shape)


def _reshape(x, shape, what, static=None):
    """Records x's valid region reshaped to `shape` (the result's valid
    region; `static` its static shape, None: the same)."""
    if symbolic.same_shape(shape, x._shape) and symbolic.same_shape(
            static or shape, valid_region.static_shape(x)):
        return x
    noncontig = getattr(x, "_noncontig", False)
    if noncontig and not _squeeze_only(shape, x._shape):
        x, noncontig = clone(x), False  # merging dims of a view reads a copy
    return _record("reshape", [x], shape, {"shape": list(shape)}, what, noncontig=noncontig,
                   static=static)


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def transpose(input, dim0, dim1):  # noqa: A002
    """input with dims dim0 and dim1 swapped; no data moves (a reader loads
    it strided)."""
    what = "pypto.transpose"
    x = _traced(input, what)
    rank = len(x._shape)
    a, b = _dim(dim0, rank, f"{what}: dim0"), _dim(dim1, rank, f"{what}: dim1")
    if a == b:
        return x
    shape, static = list(x._shape), list(valid_region.static_shape(x))
    for s in (shape, static):
        s[a], s[b] = s[b], s[a]
    return _record("transpose", [x], shape, {"dim0": a, "dim1": b}, what, noncontig=True,
                   static=static)


def permute(input, dims, *more):  # noqa: A002
    """input with its dims reordered: result dim k is input dim dims[k]."""
    what = "pypto.permute"
    x = _traced(input, what)
    if isinstance(dims, numbers.Integral):
        dims = (dims,) + more
    rank = len(x._shape)
    dims = [_int(d, f"{what}: dims[{i}]") for i, d in enumerate(dims)]
    norm = [d % rank if -rank <= d < rank else None for d in dims]
    if len(dims) != rank or None in norm or sorted(norm) != list(range(rank)):
        raise ValueError(f"{what}: dims {dims} is not a permutation of 0..{rank - 1}")
    if norm == list(range(rank)):
        return x
    static = valid_region.static_shape(x)
    return _record("permute", [x], [x._shape[d] for d in norm], {"dims": norm}, what,
                   noncontig=True, static=[static[d] for d in norm])


def unsqueeze(input, dim):  # noqa: A002
    """input with a size-1 dim inserted at `dim` (-1: last)."""
    what = "pypto.unsqueeze"
    x = _traced(input, what)
    rank = len(x._shape)
    d = _dim(dim, rank + 1, f"{what}: dim")
    shape, static = list(x._shape), list(valid_region.static_shape(x))
    shape.insert(d, 1)
    static.insert(d, 1)
    if len(shape) > 4:
        raise ValueError(f"{what}: the result would have rank {len(shape)} (at most 4)")
    return _record("unsqueeze", [x], shape, {"dim": d}, what,
                   noncontig=getattr(x, "_noncontig", False), static=static)


def clone(input):  # noqa: A002
    """A copy of input (a new tensor; later writes into input do not show)."""
    what = "pypto.clone"
    x = _traced(input, what)
    return _record("clone", [x], x._shape, None, what, static=x._static)


def concat(tensors, dim=0):
    """The tensors joined along `dim` (equal dtypes and other dims). Valid
    regions: every input but the last must be valid along `dim`; the result
    is valid where all inputs are in the other dims."""
    what = "pypto.concat"
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{what}: needs at least one tensor")
    for i, t in enumerate(tensors):
        _traced(t, what, f"tensors[{i}]")
    x = tensors[0]
    rank = len(x._shape)
    d = _dim(dim, rank, f"{what}: dim")
    for i, t in enumerate(tensors):
        if t._builder is not x._builder:
            raise TraceError(f"{what}: tensors come from different kernels")
        if t.dtype != x.dtype:
            raise TypeError(f"{what}: tensors[{i}] has dtype {t.dtype.name}, tensors[0] "
                            f"{x.dtype.name}; concat needs equal dtypes")
        ts, xs = valid_region.static_shape(t), valid_region.static_shape(x)
        if len(ts) != rank or any(
                a != b for k, (a, b) in enumerate(zip(ts, xs)) if k != d):
            raise ValueError(f"{what}: tensors[{i}] {list(ts)} and tensors[0] "
                             f"{list(xs)} differ outside dim {d}")
        if t is not tensors[-1] and not symbolic.same(t._shape[d], ts[d]):
            raise ValueError(f"{what}: tensors[{i}] is valid in {t._shape[d]} of its "
                             f"{ts[d]} elements along dim {d}; only the last tensor may be "
                             f"partly valid along the concat dim")
    if len(tensors) == 1:
        return x
    static = list(valid_region.static_shape(x))
    static[d] = sum(valid_region.static_shape(t)[d] for t in tensors)
    if any(t._static is not None for t in tensors):
        valid = list(x._shape)
        for t in tensors:
            valid = [v if k == d else valid_region.smaller(v, t._shape[k])
                     for k, v in enumerate(valid)]
        tensors = [valid_region.narrow(t, [t._shape[d] if k == d else v
                                           for k, v in enumerate(valid)], what)
                   for t in tensors]
    shape = list(tensors[0]._shape)
    shape[d] = sum(t._shape[d] for t in tensors)
    return _record("concat", tensors, shape, {"dim": d}, what, static=static)


def assemble(input, offsets=None, out=None, parallel=False):  # noqa: A002 - PyPTO's names
    """Writes input into out at offsets (out[offsets : offsets + input.shape]
    = input, only input's valid region); out keeps the rest of its data.
    PyPTO's second form, assemble([(t, offsets), ...], out), writes each t
    in the list's order. `parallel` (a bool) lets the NPU run the writes of
    one call at once; here they run in order, so where tiles overlap the
    later one wins either way."""
    what = "pypto.assemble"
    if not isinstance(parallel, bool):
        raise TypeError(f"{what}: parallel must be a bool, got {type(parallel).__name__}")
    if isinstance(input, (list, tuple)):
        if out is not None and offsets is not None:
            raise TypeError(f"{what}: the list form is assemble([(tensor, offsets), ...], out); "
                            f"got offsets and out as well")
        dst = _traced(out if out is not None else offsets, what, "out")
        if not input:
            raise ValueError(f"{what}: the list of (tensor, offsets) pairs is empty")
        for k, item in enumerate(input):
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise TypeError(f"{what}: item {k} of the list must be a (tensor, offsets) "
                                f"pair, got {item!r}")
            _assemble_at(item[0], item[1], dst, f"{what}: item {k}")
        return
    if offsets is None or out is None:
        raise TypeError(f"{what}: takes (input, offsets, out) or ([(tensor, offsets), ...], out)")
    _assemble_at(input, offsets, _traced(out, what, "out"), what)


def _assemble_at(src, offsets, dst, what):
    if not isinstance(offsets, (list, tuple)):
        raise TypeError(f"{what}: offsets must be a list of ints, got {type(offsets).__name__}")
    _assemble(src, [_int(o, f"{what}: offsets[{i}]") for i, o in enumerate(offsets)],
              dst, what)


def _assemble(src, offsets, dst, what):
    b = dst._builder
    check_writable(dst, what)
    _traced(src, what, "src")
    if src._builder is not b:
        raise TraceError(f"{what}: src and dst come from different kernels")
    if src.dtype != dst.dtype:
        raise TypeError(f"{what}: src has dtype {src.dtype.name} but dst has "
                        f"{dst.dtype.name} (convert it: pypto.cast(src, dtype))")
    rank = len(dst._shape)
    if len(src._shape) != rank or len(offsets) != rank:
        raise ValueError(f"{what}: src {list(src._shape)} and offsets {offsets} must have "
                         f"dst's rank {rank}")
    for d in range(rank):
        if _any_symbolic(offsets[d], src._shape[d], dst._shape[d]):
            continue  # checked at launch (or by the compiler when it can)
        if offsets[d] < 0 or offsets[d] + src._shape[d] > dst._shape[d]:
            raise ValueError(
                f"{what}: src {list(src._shape)} at offsets {offsets} does not fit in dst "
                f"{list(dst._shape)}: dim {d} covers [{offsets[d]}, "
                f"{offsets[d] + src._shape[d]}) (valid offsets[{d}]: "
                f"0..{max(0, dst._shape[d] - src._shape[d])})")
    if dst._vid is None:  # a local tensor never written: start from zeros
        b.write(dst, primitives.full(tuple(dst._shape), 0.0, dst.dtype), what)
    if symbolic.same_shape(src._shape, dst._shape) and _all_zero(offsets):
        b.write(dst, src, what)
        return
    out = _record("assemble", [src, dst], dst._shape, {"offsets": offsets}, what,
                  space=src._shape, static=dst._static)
    b.write(dst, out, what)


def fill_outside_valid(input, value, what="pypto.fillpad", shape=None):  # noqa: A002
    """A tensor of `shape` (default: input's static shape), valid
    everywhere: input's valid region at its origin, and `value` (a number
    or SymbolicScalar of input's dtype) elsewhere; input itself where that
    is all of it. (pypto.fillpad; the index ops' operands over a clipped
    view.)"""
    if shape is None:
        shape = valid_region.static_shape(input)
    if input._static is None and symbolic.same_shape(input._shape, shape):
        return input
    out = primitives.full(tuple(shape), value, input.dtype)
    _assemble(input, [0] * len(shape), out, what)
    return out


def write_valid_region(dst, value, what):
    """dst[:] = value for a value whose valid region is smaller than its
    shape: an assemble of that region at dst's origin."""
    _traced(value, what, "value")
    _assemble(value, [0] * len(dst._shape), dst, what)


def _region(key, shape, what, open_ends=None, indexed=None):
    """(offsets, sizes, result shape) of a subscript: per input dim its
    offset and size; the result's shape drops int-indexed dims and has a 1
    where None is. `open_ends`, a list, gets the input dims whose slice has a
    symbolic start and no stop; `indexed` the int-indexed ones."""
    keys = key if isinstance(key, tuple) else (key,)
    rank = len(shape)
    n_real = sum(1 for k in keys if k is not None and k is not Ellipsis)
    if sum(1 for k in keys if k is Ellipsis) > 1:
        raise IndexError(f"{what}: at most one '...' in a subscript")
    if n_real > rank:
        raise IndexError(f"{what}: {n_real} indices for a tensor of rank {rank}")
    expanded = []
    for k in keys:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (rank - n_real))
        else:
            expanded.append(k)
    if Ellipsis not in keys:
        expanded.extend([slice(None)] * (rank - n_real))
    offsets, sizes, result_shape = [], [], []
    d = 0
    for k in expanded:
        if k is None:
            result_shape.append(1)
            continue
        n = shape[d]
        if isinstance(k, slice) and _any_symbolic(k.start, k.stop, n):
            start, stop = _symbolic_slice(k, n, d, what)
            if open_ends is not None and k.stop is None and symbolic.is_symbolic(k.start):
                open_ends.append(d)
            size = stop - start
            if not symbolic.is_symbolic(size) and size <= 0:
                raise ValueError(f"{what}: dim {d}: the slice {k.start}:{k.stop} is empty")
            offsets.append(start)
            sizes.append(size)
            result_shape.append(size)
        elif isinstance(k, slice):
            if open_ends is not None and k.stop is None and isinstance(k.start, RuntimeInt):
                open_ends.append(d)  # an eager run's loop index: as a symbolic start
            start, stop, step = k.indices(n)
            if step != 1:
                raise ValueError(f"{what}: dim {d}: slices take steps of 1 (got step "
                                 f"{k.step}); strided views are not supported")
            if stop <= start:
                raise ValueError(f"{what}: dim {d}: the slice {start}:{stop} is empty")
            offsets.append(start)
            sizes.append(stop - start)
            result_shape.append(stop - start)
        elif symbolic.is_symbolic(k) or (symbolic.is_symbolic(n) and isinstance(
                k, numbers.Integral) and not isinstance(k, bool)):
            # A symbolic index, or an index into a symbolic dim: -1 is the last.
            offsets.append(k + n if not symbolic.is_symbolic(k) and k < 0 else k)
            sizes.append(1)
            if indexed is not None:
                indexed.append(d)
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            i = int(k)
            if not -n <= i < n:
                raise IndexError(f"{what}: index {i} is out of range for dim {d} of size "
                                 f"{n} (valid: {-n}..{n - 1})")
            offsets.append(i % n)
            sizes.append(1)
            if indexed is not None:
                indexed.append(d)
        else:
            raise TypeError(f"{what}: dim {d}: expected an int, a slice, None or '...', "
                            f"got {type(k).__name__} (tensor indices are pypto.gather's, not here yet)")
        d += 1
    return offsets, sizes, result_shape


def _symbolic_slice(k, n, d, what):
    """(start, stop) of slice k over a dim of size n when a bound or n is
    symbolic: no clamping; a negative int bound counts from the end."""
    if k.step is not None and not (isinstance(k.step, int) and int(k.step) == 1):
        raise ValueError(f"{what}: dim {d}: slices take steps of 1 (got step {k.step}); "
                         f"strided views are not supported")
    bounds = []
    for b, default in ((k.start, 0), (k.stop, n)):
        if b is None:
            b = default
        elif isinstance(b, bool) or not isinstance(b, numbers.Integral):
            raise TypeError(f"{what}: dim {d}: slice bounds must be ints or symbolic scalars, "
                            f"got {type(b).__name__}")
        elif not symbolic.is_symbolic(b) and b < 0:
            b = n + b
        bounds.append(b)
    return bounds[0], bounds[1]


def getitem(x, key, valid_shape=None):
    """x[key]: a view (slices with step 1, ints, None, '...'). A slice of a
    fixed size whose bounds are symbolic (x[i*16:(i + 1)*16]) may hang past
    the end of a dynamic dim: its valid region is clipped (pypto.view's
    rule); an int index must be inside its dim. `valid_shape` (PyPTO's
    keyword) is the view's valid region, in the input's rank."""
    what = f"{x._name or 'tensor'}[...]"
    indexed = []
    offsets, sizes, result_shape = _region(key, list(x._shape), what, indexed=indexed)
    if valid_shape is not None:
        v = view(x, sizes, offsets, valid_shape)
    elif symbolic.same_shape(sizes, x._shape) and _all_zero(offsets):
        v = x
    else:
        valid = [s if d in indexed else valid_region.clipped(s, n - o, x._builder.loop_bounds)
                 for d, (s, n, o) in enumerate(zip(sizes, x._shape, offsets))]
        v = _view(x, sizes, offsets, valid, what)
    if not symbolic.same_shape(result_shape, valid_region.static_shape(v)):
        if not result_shape:
            result_shape = [1]  # x[i, j] of a 2-D tensor: a one-element tensor
        v = reshape(v, result_shape)
    return v


def setitem(x, key, value):
    """x[key] = value: an assemble of value's valid region into the region."""
    what = f"{x._name or 'tensor'}[...] = ..."
    open_ends = []
    offsets, sizes, result_shape = _region(key, list(x._shape), what, open_ends)
    if _is_scalar(value):
        value = primitives.full(tuple(sizes), value, x.dtype)
    _traced(value, what, "value")
    static = valid_region.static_shape(value)
    if open_ends and len(value._shape) == len(sizes) == len(result_shape):
        for d in open_ends:  # out[i:, ...] = y: y's extent from offset i
            sizes[d] = result_shape[d] = static[d]
    if not symbolic.same_shape(static, sizes):
        # The value may have the subscript's shape (ints drop dims): same
        # elements, size-1 dims aside. Broadcasting a value is not done here.
        if [d for d in static if d != 1] != [d for d in sizes if d != 1]:
            raise ValueError(f"{what}: the value has shape {list(static)} but the "
                             f"region has {result_shape or [1]} (broadcast it first)")
        value = reshape(value, sizes)
    _assemble(value, offsets, x, what)

