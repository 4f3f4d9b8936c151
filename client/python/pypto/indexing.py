"""Ops addressed by an index tensor: gather, index_select, scatter,
index_add, index_put_, scatter_update, gathermask (torch's semantics where
PyPTO follows torch).

Each records one op of the compiler's index family (op_registry.cc: gather,
index_select, scatter, index_copy, index_add), lowered to the PTO
instructions MGATHER and MSCATTER (docs/pto-isa.md). Indices are DT_INT32
or DT_INT64 tensors; an index outside [0, size) of the dim it addresses
(index_put_: [-size, size), a negative index counting from the end) is
an IndexError at launch when the index is a kernel argument (checked before
the kernel runs, as torch raises); an index the kernel computes itself is
guarded in the kernel instead (a gather reads 0 there, a scatter writes
nothing), so no index ever reaches memory outside its tensor. Writes land tile
by tile (the tiles in row-major order, each tile's elements in row-major
order: the index's row-major order when the vector tile spans whole rows):
with a repeated index the last write wins (torch leaves that winner
unspecified), and reduce='add'/'multiply' combine every value in that order.
Shapes may have dynamic dims (one compile serves every size; an index
argument is checked against the size of its launch). gather, index_select,
scatter and index_add take tensors whose valid region is smaller than their
shape (valid_region.py; see _clipped below); the other ops refuse them.
"""

import math
from typing import NamedTuple

import numpy as np

from . import dtypes, element, layout, ops, symbolic, valid_region
from .enums import ScatterMode
from .errors import not_yet
from .primitives import broadcast_shapes, check_traced
from .tensors import Tensor, _is_scalar

_INDEX_TYPES = (dtypes.DT_INT32, dtypes.DT_INT64)


def _shape(what, t, name):
    """t's shape (dims may be symbolic: a dynamic dim's size is bound at
    launch); a tensor whose valid region is smaller than its shape is refused."""
    shape = tuple(t._shape)
    if getattr(t, "_static", None) is not None:
        raise not_yet(f"{what} of '{name}' with shape {list(t._static)} and valid shape "
                      f"{list(shape)}", "gather, index_select, scatter and index_add take "
                      "tensors with a partial valid region; this op does not")
    return shape


# Operands with a partial valid region (a view past the end of a dynamic
# batch, valid_region.py): the op runs over the static shapes, each operand
# filled outside its valid region with 0, and its result is seen through
# the valid region: a gather's the index's (in the other dims within the
# input's), a scatter's the input's (in the other dims within the
# source's). A scatter whose index is partly valid runs over input with one
# more slot along dim, where the index's invalid positions point (so they
# write nothing that is kept, in the kernel and in the reference alike). An
# index past the valid extent of the dim it addresses (inside the static
# one) reads 0 and writes nothing that is valid.

def _clipped(*tensors):
    return any(t._static is not None for t in tensors)


def _valid_of(what, result, valid, static):
    """result (of `static` shape, or one more slot along a dim) seen through
    its valid region `valid`."""
    if symbolic.same_shape(result._shape, valid):
        return result
    static = None if symbolic.same_shape(valid, static) else tuple(static)
    return valid_region.narrow(result, valid, what, static=static)


def _scatter_clipped(what, kind, input, d, index, region, source, valid, attrs=None):
    """Scatter `kind` of source at index (valid over `region`) into input
    along dim d, one of them with a partial valid region: the result, seen
    through its valid region `valid`."""
    shape = list(valid_region.static_shape(input))
    ishape = valid_region.static_shape(index)
    x_shape = shape
    if index._static is not None or not symbolic.same_shape(index._shape, region):
        if not symbolic.same_shape(index._shape, region):
            index = valid_region.narrow(index, region, what, static=tuple(ishape))
        x_shape = list(shape)
        x_shape[d] = shape[d] + 1  # the slot the index's invalid positions address
        index = layout.fill_outside_valid(index, shape[d], what)
    x = layout.fill_outside_valid(input, 0, what, x_shape)
    out = _record(what, kind, [x, index, layout.fill_outside_valid(source, 0, what)],
                  x_shape, d, attrs)
    return _valid_of(what, out, valid, shape)


def _dim(what, dim, rank):
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{what}: dim must be an int, got {type(dim).__name__}")
    if not -rank <= dim < rank:
        raise ValueError(f"{what}: dim {dim} is out of range for a tensor of rank {rank} "
                         f"(valid: {-rank}..{rank - 1})")
    return dim % rank


def _index(what, index, name="index"):
    check_traced(index, what, name)
    if index.dtype not in _INDEX_TYPES:
        raise TypeError(f"{what}: '{name}' has dtype {index.dtype.name}; an index must be "
                        f"DT_INT32 or DT_INT64")


def _argument_position(index):
    """index's parameter position when it is a kernel argument read as
    passed, else None."""
    p = index._param
    if p is None or index._vid != p.initial:
        return None
    return next((k for k, q in enumerate(index._builder._params) if q is p), None)


def check_argument(index, size, what, dim, wraps=False):
    """Records a launch check of `index` against [0, size) ([-size, size)
    where a negative index wraps) when it is a kernel argument read as
    passed: (parameter position, size, what, dim, wraps) in the builder's
    index_checks, which reach the kernel's entry as
    where[locations.INDEX_CHECKS] (jit_function._launch runs them). A
    symbolic size (a dynamic dim, or an expression of them) is evaluated at
    each launch."""
    pos = _argument_position(index)
    if pos is None:
        return
    b = index._builder
    checks = getattr(b, "index_checks", None)
    if checks is None:
        checks = b.index_checks = []
    if not isinstance(size, symbolic.SymbolicScalar):
        size = int(size)
    checks.append((pos, size, what, int(dim), bool(wraps)))


class SizeCheck(NamedTuple):
    """A launch check that a dim's size (an expression of the launch's
    symbols) is at least `least`, the value of `name` (topk's k along a
    dynamic dim), recorded with the index checks (check_size_at_least)."""
    size: object
    least: int
    name: str
    what: str
    dim: int


def check_size_at_least(t, size, least, name, what, dim):
    """Records a launch check that `size` (dim `dim` of t: an int or a
    symbolic scalar, evaluated at each launch) is at least `least` (the
    value of argument `name`): a ValueError before the kernel runs
    otherwise."""
    b = t._builder
    checks = getattr(b, "index_checks", None)
    if checks is None:
        checks = b.index_checks = []
    checks.append(SizeCheck(size, int(least), name, what, int(dim)))


def launch_symbols(graph, run_args):
    """{symbol: size} of a launch: each plain-symbol dim of a parameter
    (graph: the kernel's pto.v1.Graph) bound to its argument's size there
    (run_args: one array per parameter), as the runtime binds them."""
    shapes = {v.id: v.shape for v in graph.values}
    out = {}
    for k, p in enumerate(graph.params):
        shape = shapes.get(p.value_id)
        if shape is None or k >= len(run_args):
            continue
        for i, d in enumerate(shape.dims):
            if d.WhichOneof("kind") == "symbol" and i < run_args[k].ndim:
                out[d.symbol] = int(run_args[k].shape[i])
    return out


def check_indices(checks, run_args, names, graph=None):
    """IndexError for the first index argument with an element outside its
    range, ValueError for the first SizeCheck that fails (checks:
    where[locations.INDEX_CHECKS]; run_args: the kernel's arrays, one per
    tensor parameter; graph: the kernel's graph, which binds the symbols of
    a symbolic size)."""
    bound = None
    for check in checks:
        if isinstance(check, SizeCheck):
            if bound is None:
                bound = launch_symbols(graph, run_args)
            size = symbolic.value_at(check.size, bound)
            if size < check.least:
                raise ValueError(
                    f"{check.what}: {check.name} {check.least} is out of range [1, {size}] "
                    f"for dim {check.dim} (its size {check.size} is {size} at this launch)")
            continue
        pos, size, what, dim, wraps = check
        a = run_args[pos]
        if a.size == 0:
            continue
        if isinstance(size, symbolic.SymbolicScalar):
            if bound is None:
                bound = launch_symbols(graph, run_args)
            size = symbolic.value_at(size, bound)
        bad = (a < (-size if wraps else 0)) | (a >= size)
        if bad.any():
            at = np.unravel_index(int(np.argmax(bad)), a.shape)
            raise IndexError(
                f"{what}: index {int(a[at])} at {list(int(i) for i in at)} of argument "
                f"'{names[pos]}' is out of bounds for dim {dim} with size {size}")


def _record(what, kind, inputs, shape, dim, extra=None):
    attrs = {"dim": int(dim)}
    attrs.update(extra or {})
    return inputs[0]._builder.add_op(kind, list(inputs), inputs[0].dtype, tuple(shape), attrs,
                                     what)


# gather, index_select -------------------------------------------------------------

def gather(input, dim, index):  # noqa: A002 - PyPTO's names
    """torch.gather: out[p] = input[p with p[dim] = index[p]], out of index's
    shape and input's dtype. index has input's rank and is no larger than
    input in the other dims."""
    what = "pypto.gather"
    check_traced(input, what, "input")
    _index(what, index)
    shape = valid_region.static_shape(input)
    ishape = valid_region.static_shape(index)
    d = _dim(what, dim, len(shape))
    if len(ishape) != len(shape):
        raise ValueError(f"{what}: index has shape {list(ishape)} and input {list(shape)}; "
                         f"they must have the same number of dims")
    for k, (i, n) in enumerate(zip(ishape, shape)):
        if k != d and i > n:
            raise ValueError(f"{what}: index has shape {list(ishape)} and input "
                             f"{list(shape)}: index dim {k} is larger than input's "
                             f"(index.size(d) <= input.size(d) for d != dim {d})")
    check_argument(index, shape[d], what, d)
    if not _clipped(input, index):
        return _record(what, "gather", [input, index], ishape, d)
    valid = [v if k == d else valid_region.smaller(v, input._shape[k])
             for k, v in enumerate(index._shape)]
    out = _record(what, "gather", [layout.fill_outside_valid(input, 0, what),
                                   layout.fill_outside_valid(index, 0, what)], ishape, d)
    return _valid_of(what, out, valid, ishape)


def take_along(input, dim, positions, what):
    """gather(input, dim, positions) for positions the kernel computed
    along dim (topk's, from the sort op: in range by construction), input
    and positions with the same valid region in the other dims, the result
    with positions' static shape beside it."""
    return input._builder.add_op("gather", [input, positions], input.dtype,
                                 tuple(positions._shape), {"dim": int(dim)}, what,
                                 static=positions._static)


def index_select(input, dim, index):  # noqa: A002
    """torch.index_select: input's rows along `dim` at index (rank 1)."""
    what = "pypto.index_select"
    check_traced(input, what, "input")
    _index(what, index)
    shape = valid_region.static_shape(input)
    ishape = valid_region.static_shape(index)
    d = _dim(what, dim, len(shape))
    if len(ishape) != 1:
        raise ValueError(f"{what}: index has shape {list(ishape)}; it must have one dim")
    check_argument(index, shape[d], what, d)
    out = list(shape)
    out[d] = ishape[0]
    if not _clipped(input, index):
        return _record(what, "index_select", [input, index], out, d)
    valid = list(input._shape)
    valid[d] = index._shape[0]
    result = _record(what, "index_select", [layout.fill_outside_valid(input, 0, what),
                                            layout.fill_outside_valid(index, 0, what)], out, d)
    return _valid_of(what, result, valid, out)


def getitem_gather(x, index):
    """x[index] with a tensor index (Tensor.__getitem__): rows of x along dim
    0 at the index's elements, torch's x[index]: the index's shape followed
    by x's other dims."""
    what = "Tensor.__getitem__"
    _index(what, index)
    ishape = _shape(what, index, "index")
    flat = index if len(ishape) == 1 else layout.reshape(index, [math.prod(ishape)])
    rows = index_select(x, 0, flat)
    if len(ishape) == 1:
        return rows
    return layout.reshape(rows, list(ishape) + list(x._shape[1:]))


# scatter ---------------------------------------------------------------------------

def _reduce_name(what, reduce):
    if reduce is None or reduce == ScatterMode.NONE:
        return "none"
    if reduce in ("add", ScatterMode.ADD):
        return "add"
    if reduce in ("multiply", ScatterMode.MULTIPLY):
        return "multiply"
    raise ValueError(f"{what}: reduce must be None, 'add', 'multiply' or a "
                     f"pypto.ScatterMode, got {reduce!r}")


def _scalar_source(what, input, src, shape):
    """src as a tensor of `shape` and input's dtype: a number (or Element)
    fills one."""
    src = element.value_of(src)
    if isinstance(src, Tensor):
        check_traced(src, what, "src")
        if src.dtype != input.dtype:
            raise TypeError(f"{what}: src has dtype {src.dtype.name} and input "
                            f"{input.dtype.name}; they must be equal (cast one)")
        return src
    if isinstance(src, bool) or not _is_scalar(src):
        raise TypeError(f"{what}: src must be a Tensor, a number or a pypto.Element, got "
                        f"{type(src).__name__}")
    return ops.full(list(shape), src, input.dtype)


def scatter(input, dim, index, src, *, reduce=None):  # noqa: A002
    """torch.scatter (out of place): input with out[p with p[dim] = index[p]]
    = src[p] for every p of index's shape (reduce 'add' / ScatterMode.ADD
    adds, 'multiply' multiplies). src is a tensor no smaller than index, a
    number or a pypto.Element."""
    what = "pypto.scatter"
    check_traced(input, what, "input")
    _index(what, index)
    shape = valid_region.static_shape(input)
    ishape = valid_region.static_shape(index)
    d = _dim(what, dim, len(shape))
    r = _reduce_name(what, reduce)
    if len(ishape) != len(shape):
        raise ValueError(f"{what}: index has shape {list(ishape)} and input {list(shape)}; "
                         f"they must have the same number of dims")
    src = _scalar_source(what, input, src, ishape)
    sshape = valid_region.static_shape(src)
    if len(sshape) != len(shape):
        raise ValueError(f"{what}: src has shape {list(sshape)} and input {list(shape)}; "
                         f"they must have the same number of dims")
    for k in range(len(shape)):
        if ishape[k] > sshape[k] or (k != d and ishape[k] > shape[k]):
            raise ValueError(f"{what}: index has shape {list(ishape)}, src {list(sshape)} "
                             f"and input {list(shape)}: index dim {k} is too large "
                             f"(index.size(d) <= src.size(d), and <= input.size(d) for "
                             f"d != dim {d})")
    if r != "none" and input.dtype not in (dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16,
                                           dtypes.DT_INT32, dtypes.DT_INT64,
                                           dtypes.DT_DOUBLE):
        raise TypeError(f"{what}: reduce={r!r} takes DT_FP32, DT_FP16, DT_BF16, DT_INT32, "
                        f"DT_INT64 or DT_DOUBLE tensors, got {input.dtype.name}")
    check_argument(index, shape[d], what, d)
    if not _clipped(input, index, src):
        return _record(what, "scatter", [input, index, src], shape, d, {"reduce": r})
    region = [valid_region.smaller(v, src._shape[k]) for k, v in enumerate(index._shape)]
    region = [v if k == d else valid_region.smaller(v, input._shape[k])
              for k, v in enumerate(region)]
    return _scatter_clipped(what, "scatter", input, d, index, region, src, input._shape,
                            {"reduce": r})


def scatter_(input, dim, index, src, *, reduce=None):  # noqa: A002
    """In place: input takes scatter(input, dim, index, src, reduce=...);
    returns input."""
    input.move(scatter(input, dim, index, src, reduce=reduce))
    return input


# index_add, index_put_, scatter_update ----------------------------------------------

def _index_rows(what, kind, input, dim, index, source):
    """index_copy / index_add: input with its rows along `dim` at index (rank
    1) combined with source's rows (input's shape, dim of len(index))."""
    check_traced(input, what, "input")
    check_traced(source, what, "source")
    _index(what, index)
    shape = valid_region.static_shape(input)
    ishape = valid_region.static_shape(index)
    sshape = valid_region.static_shape(source)
    d = _dim(what, dim, len(shape))
    if len(ishape) != 1:
        raise ValueError(f"{what}: index has shape {list(ishape)}; it must have one dim")
    want = list(shape)
    want[d] = ishape[0]
    if list(sshape) != want:
        raise ValueError(f"{what}: source has shape {list(sshape)}; with input "
                         f"{list(shape)} and {ishape[0]} indices along dim {d} it must be "
                         f"{want}")
    if source.dtype != input.dtype:
        raise TypeError(f"{what}: source has dtype {source.dtype.name} and input "
                        f"{input.dtype.name}; they must be equal (cast one)")
    if kind == "index_add" and input.dtype not in (
            dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16, dtypes.DT_INT32, dtypes.DT_INT64,
            dtypes.DT_DOUBLE):
        raise TypeError(f"{what}: takes DT_FP32, DT_FP16, DT_BF16, DT_INT32, DT_INT64 or "
                        f"DT_DOUBLE tensors, got {input.dtype.name}")
    check_argument(index, shape[d], what, d)
    if not _clipped(input, index, source):
        return _record(what, kind, [input, index, source], shape, d)
    region = [valid_region.smaller(index._shape[0], source._shape[d])]
    valid = [v if k == d else valid_region.smaller(v, source._shape[k])
             for k, v in enumerate(input._shape)]
    return _scatter_clipped(what, kind, input, d, index, region, source, valid)


def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    """torch.index_add (out of place): input with input[.., index[i], ..] +=
    alpha * source[.., i, ..] along dim (alpha * source rounded to the dtype
    first). Repeated indices accumulate (in the order the module docstring
    gives)."""
    what = "pypto.index_add"
    if isinstance(alpha, bool) or not _is_scalar(alpha):
        raise TypeError(f"{what}: alpha must be a number, got {type(alpha).__name__}")
    if isinstance(source, Tensor) and alpha != 1:
        if source.dtype in (dtypes.DT_INT32, dtypes.DT_INT64) and not isinstance(alpha, int):
            raise TypeError(f"{what}: alpha {alpha!r} must be an int for "
                            f"{source.dtype.name} tensors")
        source = ops.mul(source, alpha)
    return _index_rows(what, "index_add", input, dim, index, source)


def index_add_(input, dim, index, source, *, alpha=1):  # noqa: A002
    """In place: input takes index_add(...); returns input."""
    input.move(index_add(input, dim, index, source, alpha=alpha))
    return input


def index_add_ub(input, dim, index, source, *, alpha=1):  # noqa: A002
    """PyPTO's vector-buffer variant of index_add: the same op here (every
    index op runs its tiles in the vector buffer)."""
    return index_add(input, dim, index, source, alpha=alpha)


def index_add__ub(input, dim, index, source, *, alpha=1):  # noqa: A002
    """PyPTO's vector-buffer variant of index_add_: the same op here."""
    return index_add_(input, dim, index, source, alpha=alpha)


def index_put_(input, indices, values, accumulate=False):  # noqa: A002
    """torch.index_put_, in place; returns input. indices is a tuple or list
    of k <= input.dim() DT_INT32/DT_INT64 tensors that broadcast together to
    one shape B: for each position b of B, the sub-tensor input[i0[b], ...,
    i(k-1)[b]] (input.shape[k:]) takes values' (accumulate: adds them).
    values is a tensor of input's dtype broadcasting to B + input.shape[k:]
    (a row, a number). A negative index counts from the end of its dim; one
    outside [-size, size) is an IndexError at launch. Repeated positions
    combine in B's row-major order (last write wins; accumulate adds every
    one), as the module docstring's order of writes gives.

    Lowered as one index_copy/index_add along dim 0 of input seen as
    [prod(input.shape[:k]), prod(input.shape[k:])], its index the linear
    position sum(i_j * prod(input.shape[j+1:k]))."""
    what = "pypto.index_put_"
    check_traced(input, what, "input")
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{what}: indices must be a tuple or list of index tensors, got "
                        f"{type(indices).__name__}")
    shape = _shape(what, input, "input")
    k = len(indices)
    if k == 0:
        raise ValueError(f"{what}: indices is empty; it needs at least one index tensor")
    if k > len(shape):
        raise IndexError(f"{what}: {k} index tensors for a tensor of rank {len(shape)} "
                         f"(at most one per dim)")
    if any(isinstance(i, Tensor) and i.dtype == dtypes.DT_BOOL for i in indices):
        return _index_put_mask(what, input, shape, indices, values, accumulate)
    named = []
    for j, index in enumerate(indices):
        if not isinstance(index, Tensor):
            raise TypeError(f"{what}: indices[{j}] must be a Tensor of DT_INT32 or DT_INT64, "
                            f"got {type(index).__name__}")
        _index(what, index, f"indices[{j}]")
        named.append((f"indices[{j}]", _shape(what, index, f"indices[{j}]")))
    bshape = list(broadcast_shapes(what, named))
    rest = list(shape[k:])
    want = bshape + rest
    values = element.value_of(values)
    if not isinstance(values, Tensor):
        if isinstance(values, bool) or not _is_scalar(values):
            raise TypeError(f"{what}: values must be a Tensor or a number, got "
                            f"{type(values).__name__}")
        values = ops.full(want, values, input.dtype)
    else:
        check_traced(values, what, "values")
        vshape = _shape(what, values, "values")
        if len(vshape) > len(want) or list(
                broadcast_shapes(what, [("values", vshape), ("B + input.shape[k:]", want)])) \
                != want:
            raise ValueError(f"{what}: values has shape {list(vshape)}; it must broadcast to "
                             f"{want} (the indices' broadcast shape {bshape} followed by "
                             f"input's dims from {k}: {rest})")
        if list(vshape) != want:  # broadcast to the rows, bit for bit
            everywhere = ops.full(want, 1, dtypes.DT_BOOL)
            values = ops.where(everywhere, values, values)
    for j, index in enumerate(indices):
        check_argument(index, shape[j], what, j, wraps=True)
    position = _linear_position(indices, shape, bshape)
    rows = math.prod(shape[:k])
    n = math.prod(bshape)
    flat_shape = [rows] + ([math.prod(rest)] if rest else [])
    flat_in = input if list(shape) == flat_shape else layout.reshape(input, flat_shape)
    flat_values = values if want == [n] + flat_shape[1:] else layout.reshape(
        values, [n] + flat_shape[1:])
    kind = "index_add" if accumulate else "index_copy"
    out = _index_rows(what, kind, flat_in, 0, position, flat_values)
    input.move(out if flat_in is input else layout.reshape(out, list(shape)))
    return input


def _index_put_mask(what, input, shape, indices, values, accumulate):
    """index_put_ with one DT_BOOL mask (torch's x[mask] = v): the mask
    covers input's first mask.dim() dims (the same sizes) and values, a
    number or a tensor broadcasting to input's other dims, land where it is
    True (accumulate: are added there). A values tensor with one value per
    True element (torch's [count, ...] form) depends on the data: a
    ValueError."""
    if len(indices) != 1:
        raise TypeError(f"{what}: a DT_BOOL mask must be the only index tensor (got "
                        f"{len(indices)} index tensors; mixing a mask with integer indices "
                        f"is not supported)")
    mask = indices[0]
    check_traced(mask, what, "indices[0]")
    mshape = list(_shape(what, mask, "indices[0]"))
    m = len(mshape)
    if m > len(shape) or mshape != list(shape[:m]):
        raise IndexError(f"{what}: the mask has shape {mshape}; it must match input's first "
                         f"{m} dims {list(shape[:m])}")
    rest = list(shape[m:])
    values = element.value_of(values)
    if isinstance(values, Tensor):
        check_traced(values, what, "values")
        vshape = list(_shape(what, values, "values"))
        if values.dtype != input.dtype:
            raise TypeError(f"{what}: values has dtype {values.dtype.name}; it must be "
                            f"input's {input.dtype.name}")
        if len(vshape) > len(rest) + 1 or (len(vshape) == len(rest) + 1 and vshape[0] != 1) \
                or list(broadcast_shapes(what, [("values", vshape[-len(rest):] if rest else []),
                                                ("input.shape[mask.dim():]", rest)])) != rest:
            raise ValueError(f"{what}: values has shape {vshape}; with a mask it must broadcast "
                             f"to input's dims after the mask's, {rest} (one value per True "
                             f"element depends on the data)")
    elif isinstance(values, bool) or not _is_scalar(values):
        raise TypeError(f"{what}: values must be a Tensor or a number, got "
                        f"{type(values).__name__}")
    else:
        values = ops.full(rest or [1], values, input.dtype)
    where = mask if not rest else layout.reshape(mask, mshape + [1] * len(rest))
    if accumulate:
        zero = ops.full(rest or [1], 0, input.dtype)
        out = ops.add(input, ops.where(where, values, zero))
    else:
        out = ops.where(where, values, input)
    input.move(out)
    return input


def _linear_position(indices, shape, bshape):
    """The rank-1 tensor of the positions sum(i_j * prod(shape[j+1:k])) over
    the indices' broadcast shape (row-major), each i_j wrapped (a negative
    index + shape[j]); DT_INT32 where every index is and the positions fit,
    else DT_INT64. A position with an index outside [-size, size) that the
    kernel computed itself becomes -1 (the scatter's guard writes nothing
    there; an argument's is an IndexError at launch)."""
    k = len(indices)
    rows = math.prod(shape[:k])
    narrow = all(i.dtype == dtypes.DT_INT32 for i in indices) and not isinstance(
        rows, symbolic.SymbolicScalar) and rows < 2 ** 31
    dtype = dtypes.DT_INT32 if narrow else dtypes.DT_INT64
    position, ok = None, None
    for j, index in enumerate(indices):
        i = index if index.dtype == dtype else ops.cast(index, dtype)
        i = ops.where(ops.lt(i, 0), ops.add(i, shape[j]), i)
        if _argument_position(index) is None:  # not checked at launch
            inside = ops.logical_and(ops.ge(i, 0), ops.lt(i, shape[j]))
            ok = inside if ok is None else ops.logical_and(ok, inside)
        stride = math.prod(shape[j + 1:k])
        term = i if isinstance(stride, int) and stride == 1 else ops.mul(i, stride)
        position = term if position is None else ops.add(position, term)
    if ok is not None:
        position = ops.where(ok, position, ops.full(list(position._shape), -1, dtype))
    if len(bshape) != 1:
        position = layout.reshape(position, [math.prod(bshape)])
    return position


def scatter_update(input, dim, index, src):  # noqa: A002
    """Paged KV-cache row update: rows of input, numbered row-major over its
    dims up to and including `dim` (a cache [blocks, block_size, H] with
    dim=-2 numbers row block * block_size + pos), are replaced: row
    index.flatten()[i] takes src's row i (src reshapes to [len(index),
    rows' size]). Returns the updated tensor (input's shape)."""
    what = "pypto.scatter_update"
    check_traced(input, what, "input")
    check_traced(src, what, "src")
    _index(what, index)
    shape = _shape(what, input, "input")
    ishape = _shape(what, index, "index")
    sshape = _shape(what, src, "src")
    d = _dim(what, dim, len(shape))
    if d == len(shape) - 1:
        raise ValueError(f"{what}: dim {dim} is input's last dim; the rows it updates are "
                         f"numbered over the dims before the last (dim=-2 for a cache "
                         f"[..., rows, H])")
    rows = math.prod(shape[:d + 1])
    width = math.prod(shape[d + 1:])
    n = math.prod(ishape)
    if math.prod(sshape) != n * width:
        raise ValueError(f"{what}: src has shape {list(sshape)}: {n} rows of {width} "
                         f"elements (input {list(shape)} at dim {d}) are "
                         f"{n * width} elements")
    flat_in = input if len(shape) == 2 and d == 0 else layout.reshape(input, [rows, width])
    flat_index = index if len(ishape) == 1 else layout.reshape(index, [n])
    flat_src = src if list(sshape) == [n, width] else layout.reshape(src, [n, width])
    out = _index_rows(what, "index_copy", flat_in, 0, flat_index, flat_src)
    return out if flat_in is input else layout.reshape(out, list(shape))


# gathermask ------------------------------------------------------------------------

# PyPTO's pattern modes (PTO-ISA MaskPattern, VREDUCEv2): (period, start).
_MASK_PATTERNS = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}


def gathermask(input, pattern_mode):  # noqa: A002
    """The elements of input's last dim that bit pattern `pattern_mode`
    keeps (PTO-ISA MaskPattern): 1 even positions (P0101), 2 odd positions
    (P1010), 3..6 positions 0, 1, 2, 3 of every four (P0001, P0010, P0100,
    P1000), 7 all (P1111). The result's last dim holds the kept ones, in
    order."""
    what = "pypto.gathermask"
    check_traced(input, what, "input")
    if isinstance(pattern_mode, bool) or pattern_mode not in _MASK_PATTERNS:
        raise ValueError(f"{what}: pattern_mode must be 1..7, got {pattern_mode!r}")
    shape = _shape(what, input, "input")
    if not shape:
        raise ValueError(f"{what}: input is a rank-0 tensor; it needs a last dim")
    period, start = _MASK_PATTERNS[pattern_mode]
    n = shape[-1]
    if start >= n:
        raise ValueError(f"{what}: pattern_mode {pattern_mode} keeps no element of a last "
                         f"dim of {n}")
    if period == 1:
        return layout.clone(input)
    positions = ops.arange(start, n, period, dtype=dtypes.DT_INT32)
    return index_select(input, -1, positions)

