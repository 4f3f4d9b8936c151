"""pypto.cumsum and pypto.cumprod: the compiler's scan ops (`cumsum`,
`cumprod`; the PTO instructions TCUMSUM and TCUMPROD, docs/pto-isa.md).

Each is torch's running value along `dim` in torch's order, in torch's CPU
accumulator (at::acc_type): DOUBLE for FP32 and DOUBLE, FP32 for FP16 and
BF16, each output rounded once to the dtype, so the results have torch's
bits (NaN and inf included). Integer and BOOL tensors are cast to DT_INT64
first and give DT_INT64 (exact, wrapping), as torch's. Any dim may be
dynamic, the scanned one too: one compile for every size (the tiles along
the dim run in order, each seeded by the one before).
"""

from . import dtypes, ops
from .primitives import check_dim, check_traced

# Kept as they are: the dtypes the scan ops take whose result is theirs.
_FLOAT_TYPES = (dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16, dtypes.DT_DOUBLE)
_INTEGER_TYPES = (dtypes.DT_INT8, dtypes.DT_INT16, dtypes.DT_INT32, dtypes.DT_INT64,
                  dtypes.DT_UINT8, dtypes.DT_BOOL)


def _scan(kind, input, dim):  # noqa: A002 - PyPTO's names
    what = f"pypto.{kind}"
    check_traced(input, what, "input")
    shape = list(input._shape)
    if not shape:
        raise ValueError(f"{what}: the input is a rank-0 tensor")
    dim = check_dim(what, dim, len(shape))
    x = input
    if x.dtype in _INTEGER_TYPES:
        if x.dtype != dtypes.DT_INT64:
            x = ops.cast(x, dtypes.DT_INT64)
    elif x.dtype not in _FLOAT_TYPES:
        raise TypeError(f"{what}: argument 'input' has dtype {x.dtype.name}; it must be a "
                        f"float, integer or BOOL tensor (cast FP8 to DT_FP32 first)")
    return x._builder.add_op(kind, [x], x.dtype, tuple(shape), {"dim": dim}, what)


def cumsum(input, dim):  # noqa: A002 - PyPTO's names
    """Cumulative sum along `dim` (torch.cumsum); any dim may be dynamic.
    Integer and BOOL tensors give DT_INT64."""
    return _scan("cumsum", input, dim)


def cumprod(input, dim):  # noqa: A002 - PyPTO's names
    """Cumulative product along `dim` (torch.cumprod), as cumsum."""
    return _scan("cumprod", input, dim)
