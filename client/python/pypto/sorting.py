"""pypto.topk and pypto.argsort.

Each records the compiler's `sort` op (the PTO instruction MSORT:
docs/pto-isa.md): the DT_INT64 positions of a stable sort along the dim,
cut to k, O(n) work per row of any length (a radix sort); topk's values are
a gather through them (bit for bit: -0.0, inf and NaN come back as they went
in). Ties keep their input order (torch.sort(stable=True)); NaN sorts as the
largest value (first when descending, last when ascending) and NaNs tie, as
torch; -0.0 ties 0.0.

Shapes may have dynamic dims, the sorted dim included: one compile serves
every size (the instruction takes the rows' strides and length at run time).
A task keeps the positions of one vector tile along the sorted dim (static:
the whole dim where its INT64 positions fit the UB; dynamic: the vec tile's
size along it) and sorts its rows for them: a row longer than that is
sorted once per tile. topk's k is an int known when tracing; along a
dynamic sorted dim it is checked against the row length at launch (a
ValueError naming k and the size). A tensor with a valid region sorts its
valid region; the result keeps the static shape beside it.
"""

from . import dtypes, indexing
from .enums import TopKAlgo
from .primitives import FLOAT_TYPES, check_dim, check_traced
from .symbolic import SymbolicScalar

_INTEGER_TYPES = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64,
                  dtypes.DT_UINT8)
_SORTABLE = FLOAT_TYPES + _INTEGER_TYPES


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
    return check_dim(what, dim, rank, "an int or None")


def _with(shape, dim, k):
    """shape with dim's size k (k None: shape), or None for None."""
    if shape is None or k is None:
        return shape
    shape = list(shape)
    shape[dim] = k
    return tuple(shape)


def _sorted_positions(x, dim, k, descending, what):
    """DT_INT64 [..., k, ...]: the positions of the first k elements of the
    stable sort of x's valid region along dim (the compiler's sort op,
    MSORT); k None: all of them (the sorted dim's size, static or not). The
    result has x's static shape beside its valid region (dim's size k)."""
    attrs = {"dim": int(dim), "k": 0 if k is None else int(k), "descending": bool(descending)}
    return x._builder.add_op("sort", [x], dtypes.DT_INT64, _with(x._shape, dim, k), attrs,
                             what, static=_with(x._static, dim, k))


def topk(input, k, dim=None, largest=True, algo=None):  # noqa: A002 - PyPTO's names
    """(values, indices) of the k largest (largest=False: smallest) elements
    along `dim` (default the last), in sorted order, as torch.topk; indices
    are DT_INT64. Ties keep their input order (torch.topk on CPU does the
    same for the inputs tested; torch documents no order for ties). `k` is
    a static int in [1, n] (along a dynamic dim, checked at launch); `algo`
    (a pypto.TopKAlgo) is accepted and gives the same result."""
    what = "pypto.topk"
    dim = _check(what, input, dim)
    n = input._shape[dim]
    if isinstance(k, bool) or not isinstance(k, int) or isinstance(k, SymbolicScalar):
        raise TypeError(f"{what}: k must be an int known when tracing, got {type(k).__name__}")
    if k < 1 or (_static(n) and k > n):
        raise ValueError(f"{what}: k {k} is out of range [1, {n}] for dim {dim} of shape "
                         f"{list(input._shape)}")
    if algo is not None:
        if not isinstance(algo, TopKAlgo):
            raise TypeError(f"{what}: algo must be a pypto.TopKAlgo, got {algo!r}")
    if not isinstance(largest, bool):
        raise TypeError(f"{what}: largest must be a bool, got {type(largest).__name__}")
    if not _static(n):
        indexing.check_size_at_least(input, n, k, "k", what, dim)
    indices = _sorted_positions(input, dim, k, largest, what)
    return indexing.take_along(input, dim, indices, what), indices


def argsort(input, dim=None, descending=True):  # noqa: A002 - PyPTO's names
    """DT_INT64 indices that sort `input` along `dim` (default the last),
    descending by default (PyPTO's default; torch's is ascending), stable
    (torch.argsort(stable=True)); NaN sorts as the largest value."""
    what = "pypto.argsort"
    dim = _check(what, input, dim)
    if not isinstance(descending, bool):
        raise TypeError(f"{what}: descending must be a bool, got {type(descending).__name__}")
    return _sorted_positions(input, dim, None, descending, what)
