"""pypto.experimental: PyPTO's block online-softmax pair, composed of the
public ops (the statistics FlashAttention-style kernels keep per block of
keys), transposed_batchmatmul (a transpose around pypto.matmul) and the
operation options. PyPTO runs these on one architecture only and requires
the block's dim 0 to fit one vector tile; here they compile wherever the
ops they record do, with any tile shape."""

import math

from . import dtypes, indexing, layout, ops, symbolic
from .matmul import matmul as _matmul
from .primitives import check_traced


def _fp32_2d(what, t, name):
    check_traced(t, what, name)
    if t.dtype != dtypes.DT_FP32:
        raise TypeError(f"{what}: '{name}' has dtype {t.dtype.name}; it must be DT_FP32")
    if len(t._shape) != 2:
        raise ValueError(f"{what}: '{name}' has shape {list(t._shape)}; it must have 2 dims")


def online_softmax(scores, scale):
    """(exp_scores_bf16, column_max, column_sum) of a block of scores
    [k_len, q_len] (DT_FP32) along dim 0: s = scores * scale; column_max =
    the column maxima of s ([1, q_len], FP32); exp = e ** (s - column_max);
    column_sum = the column sums of exp in FP32 ([1, q_len]);
    exp_scores_bf16 = exp rounded to DT_BF16 ([k_len, q_len])."""
    what = "pypto.experimental.online_softmax"
    _fp32_2d(what, scores, "scores")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"{what}: scale must be a number, got {type(scale).__name__}")
    s = ops.mul(scores, float(scale))
    column_max = ops.amax(s, 0, keepdim=True)
    e = ops.exp(ops.sub(s, column_max))
    column_sum = ops.sum(e, 0, keepdim=True)
    return ops.cast(e, dtypes.DT_BF16), column_max, column_sum


def online_softmax_update(previous_max, previous_sum, previous_output, current_max,
                          current_sum, current_output):
    """(updated_max, updated_sum, updated_output): two online-softmax states
    merged. m = maximum(previous_max, current_max); a = e ** (previous_max -
    m), b = e ** (current_max - m); updated_sum = a * previous_sum + b *
    current_sum; updated_output = a * previous_output + b * current_output
    (the [1, q_len] factors broadcast over [head_dim, q_len]). All DT_FP32."""
    what = "pypto.experimental.online_softmax_update"
    stats = {"previous_max": previous_max, "previous_sum": previous_sum,
             "current_max": current_max, "current_sum": current_sum}
    outs = {"previous_output": previous_output, "current_output": current_output}
    for name, t in {**stats, **outs}.items():
        _fp32_2d(what, t, name)
    q_len = previous_output._shape[1]
    if not symbolic.same_shape(list(current_output._shape), list(previous_output._shape)):
        raise ValueError(f"{what}: 'current_output' {list(current_output._shape)} and "
                         f"'previous_output' {list(previous_output._shape)} must have equal "
                         f"shapes")
    for name, t in stats.items():
        if not symbolic.same_shape(list(t._shape), [1, q_len]):
            raise ValueError(f"{what}: '{name}' has shape {list(t._shape)}; it must be "
                             f"[1, {q_len}]")
    m = ops.maximum(previous_max, current_max)
    a = ops.exp(ops.sub(previous_max, m))
    b = ops.exp(ops.sub(current_max, m))
    updated_sum = ops.add(ops.mul(a, previous_sum), ops.mul(b, current_sum))
    updated_output = ops.add(ops.mul(a, previous_output), ops.mul(b, current_output))
    return m, updated_sum, updated_output


def gather_in_ub(param, indices, block_table, block_size, axis=0):
    """Paged-attention gather of KV-cache rows: param is the cache's rows
    [num_blocks * block_size, H] (rank 2, rows along `axis` 0 or -2);
    indices (DT_INT32/DT_INT64, any shape, read row-major) are logical token
    positions; block_table (any shape, read row-major) maps a logical block
    to a physical one. Row i of the result [len(indices), H] is param's row
    block_table[p // block_size] * block_size + p % block_size for p =
    indices[i] (pypto.index_select on the computed rows). An index argument
    out of its range is an IndexError at launch (indices against the table's
    logical rows); a physical row out of range reads zeros in the kernel."""
    what = "pypto.experimental.gather_in_ub"
    check_traced(param, what, "param")
    for name, t in (("indices", indices), ("block_table", block_table)):
        check_traced(t, what, name)
        if t.dtype not in (dtypes.DT_INT32, dtypes.DT_INT64):
            raise TypeError(f"{what}: '{name}' has dtype {t.dtype.name}; it must be "
                            f"DT_INT32 or DT_INT64")
    if len(param._shape) != 2 or axis not in (0, -2):
        raise ValueError(f"{what}: param has shape {list(param._shape)} and axis {axis!r}; "
                         f"it takes the cache's rows [num_blocks * block_size, H] along "
                         f"axis 0")
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size <= 0:
        raise ValueError(f"{what}: block_size must be a positive int, got {block_size!r}")
    if block_table.dtype != indices.dtype:
        block_table = ops.cast(block_table, indices.dtype)
    flat = indices if len(indices._shape) == 1 else layout.reshape(
        indices, [math.prod(indices._shape)])
    table = block_table if len(block_table._shape) == 1 else layout.reshape(
        block_table, [math.prod(block_table._shape)])
    indexing.check_argument(indices, math.prod(table._shape) * block_size, what, 0)
    logical = ops.floor_divide(flat, block_size)
    physical = indexing.index_select(table, 0, logical)
    rows = ops.add(ops.mul(physical, block_size), ops.remainder(flat, block_size))
    return indexing.index_select(param, 0, rows)


def gather_in_l1(src, indices, block_table, block_size, size, is_b_matrix=False,
                 is_trans=False):
    """PyPTO gathers these rows straight into the cube's L1 buffer; here it
    is gather_in_ub (through the vector buffer) of the first `size` indices
    (row-major), transposed when `is_trans` (is_b_matrix changes nothing:
    the rows are the same whichever matmul operand they feed)."""
    what = "pypto.experimental.gather_in_l1"
    check_traced(indices, what, "indices")
    n = math.prod(indices._shape)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= n:
        raise ValueError(f"{what}: size must be an int in 1..{n} (the number of indices), "
                         f"got {size!r}")
    flat = indices if len(indices._shape) == 1 else layout.reshape(indices, [n])
    if size < n:
        flat = layout.view(flat, [size], [0])
    out = gather_in_ub(src, flat, block_table, block_size, 0)
    return layout.transpose(out, 0, 1) if is_trans else out


def transposed_batchmatmul(a, b, out_dtype=None):
    """a [M, B, K] read as [B, M, K] (dims 0 and 1 swapped), batch-multiplied
    by b [B, K, N], the result [B, M, N] written as [M, B, N]: result[m, i, n]
    = sum_k a[m, i, k] * b[i, k, n]. pypto.matmul's dtypes and out_dtype
    (FP32/FP16/BF16 operands of one dtype, FP32 accumulation); the cube tile
    in force tiles it."""
    what = "pypto.experimental.transposed_batchmatmul"
    check_traced(a, what, "a")
    check_traced(b, what, "b")
    if len(a._shape) != 3 or len(b._shape) != 3:
        raise ValueError(f"{what}: a {list(a._shape)} and b {list(b._shape)} must both have "
                         f"3 dims (a [M, B, K], b [B, K, N])")
    m, batch, k = a._shape
    if not symbolic.same(b._shape[0], batch) or not symbolic.same(b._shape[1], k):
        raise ValueError(f"{what}: b {list(b._shape)} must be [B, K, N] = [{batch}, {k}, N] "
                         f"for a {list(a._shape)} ([M, B, K])")
    product = _matmul(layout.transpose(a, 0, 1), b, out_dtype)
    return layout.transpose(product, 0, 1)


# Operation-level options (PyPTO's combine_axis: whether broadcasts combine
# axes on the NPU's vector unit, a layout choice that leaves results alone).
_OPERATION_OPTIONS = {"combine_axis": False}


def set_operation_options(*, combine_axis=None):
    """Sets operation-level options: combine_axis (a bool). Recorded and
    returned by get_operation_options(); results do not depend on it (on
    the NPU it chooses how broadcasts are laid out)."""
    if combine_axis is not None:
        if not isinstance(combine_axis, bool):
            raise TypeError(f"pypto.experimental.set_operation_options: combine_axis must be "
                            f"a bool, got {type(combine_axis).__name__}")
        _OPERATION_OPTIONS["combine_axis"] = combine_axis


def get_operation_options():
    """The operation-level options in force, as a new dict ({"combine_axis": ...})."""
    return dict(_OPERATION_OPTIONS)
