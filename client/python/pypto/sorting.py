"""pypto.topk and pypto.argsort.

In a kernel of static shapes, each records the compiler's `sort` op (the
PTO instruction MSORT: docs/pto-isa.md): the DT_INT64 positions of a stable
sort along the dim, cut to k, O(n) work per row of any length (a radix sort);
topk's values are a gather through them (bit for bit: -0.0, inf and NaN come
back as they went in). Ties keep their input order (torch.sort(stable=True));
NaN sorts as the largest value (first when descending, last when ascending)
and NaNs tie, as torch; -0.0 ties 0.0.

The sort instruction, like the other ops addressed by whole buffers, needs
static shapes; a kernel with dynamic dims (its sorted dim static) takes a
composition of comparisons, sums and selects instead, the same order:

    rank[i] = #{j : x[j] sorts before x[i]} + #{j < i : x[j] ties x[i]}

over an [..., n, n] comparison; output position r then selects the element
of rank r (values: amax of the one selected value over -inf; indices:
DT_INT64). Its work is O(n**2) per row, so there the sorted dim is at most
4096 long.
"""

from . import dtypes, indexing, layout, ops, tiling
from .enums import TopKAlgo
from .primitives import FLOAT_TYPES, check_traced
from .symbolic import SymbolicScalar

_INTEGER_TYPES = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64,
                  dtypes.DT_UINT8)
_SORTABLE = FLOAT_TYPES + _INTEGER_TYPES
# The smallest value of each integer dtype (the amax fill of unselected slots).
_INT_MIN = {dtypes.DT_INT8: -2 ** 7, dtypes.DT_INT16: -2 ** 15, dtypes.DT_INT32: -2 ** 31,
            dtypes.DT_INT64: -2 ** 63, dtypes.DT_UINT8: 0}
# Elements of the [..., n, n] comparison per vector tile.
_TILE_ELEMENTS = 4096
# The longest sorted dim of the composed form: one row of the comparison per tile.
_MAX_SORTED = _TILE_ELEMENTS


def _static(d):
    return isinstance(d, int) and not isinstance(d, SymbolicScalar)


def _check(what, input, dim):
    check_traced(input, what, "input")
    if input.dtype not in _SORTABLE:
        names = ", ".join(d.name for d in _SORTABLE)
        raise TypeError(f"{what}: argument 'input' has dtype {input.dtype.name}; it must be "
                        f"one of {names}")
    shape = list(input._shape)
    if not shape:
        raise ValueError(f"{what}: the input is a rank-0 tensor; it needs a dim to sort along")
    rank = len(shape)
    if dim is None:
        dim = rank - 1
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{what}: dim must be an int or None, got {type(dim).__name__}")
    if not -rank <= dim < rank:
        raise ValueError(f"{what}: dim {dim} is out of range for rank {rank}")
    dim %= rank
    if not _static(shape[dim]):
        raise ValueError(f"{what}: the sorted dim {dim} of shape {shape} is dynamic; it must "
                         f"be static (the other dims may be dynamic)")
    if not _static_kernel(input) and shape[dim] > _MAX_SORTED:
        raise ValueError(f"{what}: the sorted dim {dim} of shape {shape} is longer than "
                         f"{_MAX_SORTED}; in a kernel with dynamic dims the sort is composed "
                         f"of comparisons (work grows with its square); with static shapes "
                         f"any length sorts")
    return dim


def _static_kernel(x):
    """Whether x and the kernel recording it have static shapes only: the
    sort instruction's condition (as the index ops')."""
    b = x._builder
    if b.symbols or getattr(x, "_static", None) is not None:
        return False
    if not all(_static(d) for d in x._shape):
        return False
    return all(_static(d) for p in b._params for d in b._values[p.initial][2])


def _sorted_positions(x, dim, k, descending, what):
    """DT_INT64 [..., k, ...]: the positions of the first k elements of the
    stable sort of x along dim (the compiler's sort op, MSORT)."""
    shape = list(x._shape)
    shape[dim] = k
    attrs = {"dim": int(dim), "k": int(k), "descending": bool(descending)}
    return x._builder.add_op("sort", [x], dtypes.DT_INT64, tuple(shape), attrs, what)


def _last(x, dim):
    """x with `dim` moved to the end (a transpose), or x."""
    rank = len(x._shape)
    return x if dim == rank - 1 else layout.transpose(x, dim, rank - 1)


def _tile(shape):
    """A vector tile for the [..., a, b, n] comparison space: about
    _TILE_ELEMENTS per tile (whole rows of n where they fit), so that a
    select over INT64 tiles fits the vector unit's buffer."""
    n, b = shape[-1], shape[-2]
    tn = min(n, _TILE_ELEMENTS)
    tb = max(1, min(b, _TILE_ELEMENTS // tn))
    rest = [1] * (len(shape) - 2)
    if len(shape) >= 3 and tb == b and _static(shape[-3]):
        rest[-1] = max(1, min(shape[-3], _TILE_ELEMENTS // (tn * tb)))
    return tuple(rest) + (tb, tn)


def _index(n, shape, dtype=dtypes.DT_FP32):
    """arange(n) (exact in FP32: n <= 4096) reshaped to `shape` (n along one
    dim; the reshape tiled as the comparison space in force)."""
    with tiling.vec_tile_in_force((min(n, _TILE_ELEMENTS),)):
        index = ops.arange(0, n, dtype=dtype)
    return layout.reshape(index, list(shape))


# Each function below records its small operands (indices, NaN masks,
# fills) before the ops over the [..., a, n] space, so that those run as
# one fused group; counts and indices are FP32 (exact below 2**24), whose
# sums over the last dim fuse into that group.

def _ranks(x, descending):
    """FP32 [..., 1, n]: each element's position in the stable sort of the
    last dim (an integer)."""
    shape = list(x._shape)
    n, lead = shape[-1], shape[:-1]
    ones = [1] * len(lead)
    xi = layout.unsqueeze(x, -1)          # [..., n, 1]: element i
    xj = layout.unsqueeze(x, -2)          # [..., 1, n]: element j
    with tiling.vec_tile_in_force(_tile(lead + [n, n])):
        earlier = ops.lt(_index(n, ones + [1, n]), _index(n, ones + [n, 1]))
        nan = x.dtype in FLOAT_TYPES
        if nan:
            nan_i, nan_j = ops.isnan(xi), ops.isnan(xj)
            first_i, first_j = (ops.logical_not(nan_i), nan_j) if descending \
                else (nan_i, ops.logical_not(nan_j))
        before = ops.gt(xj, xi) if descending else ops.lt(xj, xi)
        ties = ops.eq(xj, xi)
        if nan:
            before = ops.logical_or(before, ops.logical_and(first_j, first_i))
            ties = ops.logical_or(ties, ops.logical_and(nan_i, nan_j))
        counted = ops.logical_or(before, ops.logical_and(ties, earlier))
        ranks = ops.sum(ops.cast(counted, dtypes.DT_FP32), -1)          # [..., n]
    # The sum's tiles hold as many ranks as the comparison tile has rows
    # (one, for long rows): a copy in whole rows keeps the selection's
    # dependencies per tile few.
    with tiling.vec_tile_in_force(_tile(lead + [n])):
        return layout.unsqueeze(layout.clone(ranks), -2)


def _select(x, ranks, k, want_values):
    """[..., k]: the values (or DT_INT64 indices) of ranks 0 .. k-1."""
    shape = list(x._shape)
    n, lead = shape[-1], shape[:-1]
    ones = [1] * (len(lead) + 2)
    with tiling.vec_tile_in_force(_tile(lead + [k, n])):
        position = _index(k, ones[:-2] + [k, 1])
        if want_values:
            fill = float("-inf") if x.dtype in FLOAT_TYPES else _INT_MIN[x.dtype]
            fill = ops.full(ones, fill, x.dtype)
            row = layout.unsqueeze(x, -2)
            chosen = ops.eq(ranks, position)                     # [..., k, n]
            return ops.amax(ops.where(chosen, row, fill), -1)
        index, zero = _index(n, ones[:-2] + [1, n]), ops.full(ones, 0, dtypes.DT_FP32)
        chosen = ops.eq(ranks, position)
        return ops.cast(ops.sum(ops.where(chosen, index, zero), -1), dtypes.DT_INT64)


def topk(input, k, dim=None, largest=True, algo=None):  # noqa: A002 - PyPTO's names
    """(values, indices) of the k largest (largest=False: smallest) elements
    along `dim` (default the last), in sorted order, as torch.topk; indices
    are DT_INT64. Ties keep their input order (torch.topk on CPU does the
    same for the inputs tested; torch documents no order for ties). `k` is
    a static int in [0, n]; `algo` (a pypto.TopKAlgo) is accepted and gives
    the same result."""
    what = "pypto.topk"
    dim = _check(what, input, dim)
    n = input._shape[dim]
    if isinstance(k, bool) or not isinstance(k, int) or isinstance(k, SymbolicScalar):
        raise TypeError(f"{what}: k must be an int known when tracing, got {type(k).__name__}")
    if not 1 <= k <= n:
        raise ValueError(f"{what}: k {k} is out of range [1, {n}] for dim {dim} of shape "
                         f"{list(input._shape)}")
    if algo is not None:
        if not isinstance(algo, TopKAlgo):
            raise TypeError(f"{what}: algo must be a pypto.TopKAlgo, got {algo!r}")
    if not isinstance(largest, bool):
        raise TypeError(f"{what}: largest must be a bool, got {type(largest).__name__}")
    if _static_kernel(input):
        indices = _sorted_positions(input, dim, k, largest, what)
        return indexing.gather(input, dim, indices), indices
    x = _last(input, dim)
    ranks = _ranks(x, largest)
    values = _last(_select(x, ranks, k, True), dim)
    indices = _last(_select(x, ranks, k, False), dim)
    return values, indices


def argsort(input, dim=None, descending=True):  # noqa: A002 - PyPTO's names
    """DT_INT64 indices that sort `input` along `dim` (default the last),
    descending by default (PyPTO's default; torch's is ascending), stable
    (torch.argsort(stable=True)); NaN sorts as the largest value."""
    what = "pypto.argsort"
    dim = _check(what, input, dim)
    if not isinstance(descending, bool):
        raise TypeError(f"{what}: descending must be a bool, got {type(descending).__name__}")
    if _static_kernel(input):
        return _sorted_positions(input, dim, input._shape[dim], descending, what)
    x = _last(input, dim)
    ranks = _ranks(x, descending)
    return _last(_select(x, ranks, x._shape[-1], False), dim)
