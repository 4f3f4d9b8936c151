"""PyPTO ops composed of the public ops (expand_exp_dif, atomic_add,
scaled_mm, quant_mx, pack and unpack) and the ones accepted for Ascend
programs with a clear error where this version has no equivalent.
pypto.conv is conv.py's.
"""

import math

from . import dtypes, layout, ops, primitives, symbolic, tiling
from .casting import cast
from .enums import SaturationMode
from .matmul import matmul as _matmul
from .errors import not_yet
from .primitives import FLOAT_TYPES, broadcast_shapes, check_float, check_traced
from .symbolic import SymbolicScalar

_FP8_TYPES = (dtypes.DT_FP8E4M3, dtypes.DT_FP8E5M2)


def expand_exp_dif(input, other):  # noqa: A002 - PyPTO's names
    """e ** (input - other), `other` broadcast to input's shape (PTO-ISA's
    TROWEXPANDEXPDIF with one value per row, TCOLEXPANDEXPDIF with one per
    column; any numpy broadcast that keeps input's shape here): the softmax
    numerator. FP32, FP16 or BF16 tensors of one dtype; the result has
    input's shape and dtype and is torch.exp(input - other) (FP16/BF16: the
    difference rounded to the dtype, then exp rounded)."""
    what = "pypto.expand_exp_dif"
    check_traced(input, what, "input")
    check_traced(other, what, "other")
    check_float(what, input, "input")
    check_float(what, other, "other")
    if input.dtype != other.dtype:
        raise TypeError(f"{what}: 'input' has dtype {input.dtype.name} and 'other' "
                        f"{other.dtype.name}; they must be equal")
    shape = broadcast_shapes(what, [("input", list(input._shape)),
                                    ("other", list(other._shape))])
    if not symbolic.same_shape(list(shape), list(input._shape)):
        raise ValueError(f"{what}: 'other' {list(other._shape)} must broadcast to 'input' "
                         f"{list(input._shape)} (one value per row or per column), not widen "
                         f"it to {list(shape)}")
    return ops.exp(ops.sub(input, other))


def atomic_add(src, offsets, dst):
    """dst[offsets : offsets + src.shape] += src, in place (PyPTO's
    cross-core accumulation into a global tensor). Here each atomic_add is
    a read of the region, an add and a write of the region, ordered after
    every earlier write of dst and before every later read in the kernel's
    program order, so a sequence of them (in a loop, too) accumulates as
    written. Equal dtypes; integer tensors wrap as torch. Returns None."""
    what = "pypto.atomic_add"
    check_traced(src, what, "src")
    check_traced(dst, what, "dst")
    if src.dtype != dst.dtype:
        raise TypeError(f"{what}: 'src' has dtype {src.dtype.name} and 'dst' {dst.dtype.name}; "
                        f"they must be equal")
    if not isinstance(offsets, (list, tuple)) or len(offsets) != len(dst._shape):
        raise ValueError(f"{what}: offsets {offsets!r} must be a sequence of "
                         f"{len(dst._shape)} ints (one per dim of 'dst' "
                         f"{list(dst._shape)})")
    if len(src._shape) != len(dst._shape):
        raise ValueError(f"{what}: 'src' {list(src._shape)} and 'dst' {list(dst._shape)} must "
                         f"have the same rank")
    region = layout.view(dst, list(src._shape), list(offsets))
    layout.assemble(ops.add(region, src), list(offsets), dst)


# The largest power-of-two exponent of each MX element type (OCP MX spec:
# emax_elem), and its largest finite value.
_MX_EMAX = {dtypes.DT_FP8E4M3: 8, dtypes.DT_FP8E5M2: 15}
_MX_MAX = {dtypes.DT_FP8E4M3: 448.0, dtypes.DT_FP8E5M2: 57344.0}
MX_BLOCK = 32


def quant_mx(input, quant_dtype=dtypes.DT_FP8E4M3, mode=None, axis=-1,  # noqa: A002
             performance_mode=True):
    """MX (microscaling) quantisation per the OCP MX spec: (quantised,
    scale). Each block of 32 consecutive elements along `axis` shares one
    DT_FP8E8M0 scale X = 2 ** (floor(log2(amax)) - emax), amax the block's
    largest magnitude and emax the element type's (E4M3: 8, E5M2: 15),
    clamped to 2 ** -127 .. 2 ** 127 (a block of zeros: 2 ** -127); the
    elements are input / X in `quant_dtype` (DT_FP8E4M3 or DT_FP8E5M2),
    rounded to nearest even and clamped to its largest finite value (NaN
    stays NaN; a block holding NaN has a NaN scale, one holding an infinity
    the scale of 2 ** 127). quantised has input's shape; scale has it with dim `axis`
    divided by 32. mode: None or "ROUND_DOWN" (the scale's floor, the only
    mode); performance_mode is accepted (results do not depend on it).
    input: FP32, FP16 or BF16, with a static dim `axis` that is a multiple of
    32 and rank up to 3."""
    what = "pypto.quant_mx"
    check_traced(input, what, "input")
    if input.dtype not in FLOAT_TYPES:
        raise TypeError(f"{what}: argument 'input' has dtype {input.dtype.name}; it must be "
                        f"DT_FP32, DT_FP16 or DT_BF16")
    if quant_dtype not in _FP8_TYPES:
        raise TypeError(f"{what}: quant_dtype {getattr(quant_dtype, 'name', quant_dtype)} must "
                        f"be DT_FP8E4M3 or DT_FP8E5M2")
    if mode is not None and getattr(mode, "name", mode) != "ROUND_DOWN":
        raise ValueError(f"{what}: mode {mode!r} is not supported; the scale is rounded down "
                         f"(mode=None or 'ROUND_DOWN'), as the OCP MX spec does")
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{what}: axis must be an int, got {type(axis).__name__}")
    shape = list(input._shape)
    rank = len(shape)
    if not -rank <= axis < rank:
        raise ValueError(f"{what}: axis {axis} is out of range for rank {rank}")
    axis %= rank
    k = shape[axis]
    if isinstance(k, SymbolicScalar) or not isinstance(k, int) or k % MX_BLOCK:
        raise ValueError(f"{what}: dim {axis} of 'input' {shape} must be a static multiple of "
                         f"{MX_BLOCK} (the MX block size)")
    if rank > 3:
        raise ValueError(f"{what}: 'input' {shape} has rank {rank}; quant_mx takes ranks 1 to 3")
    x = ops.cast(input, dtypes.DT_FP32) if input.dtype != dtypes.DT_FP32 else input
    blocks = shape[:axis] + [k // MX_BLOCK, MX_BLOCK] + shape[axis + 1:]
    scale_shape = shape[:axis] + [k // MX_BLOCK] + shape[axis + 1:]
    with tiling.vec_tile_in_force(tiling.layout_tile(tuple(blocks))):
        xb = layout.reshape(x, blocks)
        # (an infinity counts as 2 ** 127: its elements saturate)
        amax = ops.clip(ops.amax(ops.abs(xb), axis + 1, keepdim=True), max=2.0 ** 127)
        # 2 ** floor(log2(amax)), exactly: amax rounded to the nearest power
        # of two (an E8M0 cast), halved where that rounded up.
        p = ops.cast(ops.cast(amax, dtypes.DT_FP8E8M0), dtypes.DT_FP32)
        p = ops.where(ops.gt(p, amax), ops.mul(p, 0.5), p)
        scale = ops.clip(ops.mul(p, 2.0 ** -_MX_EMAX[quant_dtype]), 2.0 ** -127, 2.0 ** 127)
        q = cast(ops.div(xb, scale), quant_dtype, satmode=SaturationMode.ON)
        return (layout.reshape(q, shape),
                layout.reshape(ops.cast(scale, dtypes.DT_FP8E8M0), scale_shape))


def _check_scale(what, name, scale, rows, k, trans):
    """scale [rows, k // g] (trans: [k // g, rows]) of one float dtype: the
    group size g along K."""
    check_traced(scale, what, name)
    if scale.dtype not in FLOAT_TYPES + (dtypes.DT_FP8E8M0,):
        raise TypeError(f"{what}: '{name}' has dtype {scale.dtype.name}; it must be DT_FP32, "
                        f"DT_FP16, DT_BF16 or DT_FP8E8M0")
    shape = list(scale._shape)
    if len(shape) != 2:
        raise ValueError(f"{what}: '{name}' {shape} must have 2 dims")
    s_rows, s_k = (shape[1], shape[0]) if trans else (shape[0], shape[1])
    static = all(isinstance(d, int) and not isinstance(d, SymbolicScalar)
                 for d in (s_rows, s_k, rows, k))
    if not static or s_rows != rows or s_k <= 0 or k % s_k:
        raise ValueError(f"{what}: '{name}' {shape} must be [{rows}, K / g]"
                         f"{' (transposed)' if trans else ''} with K = {k} a multiple of "
                         f"K / g (static dims)")
    return k // s_k


def _scaled(x, scale, group, trans):
    """x [rows, k] times scale [rows, k / group] (trans: [k / group, rows]),
    each scale repeated over `group` consecutive elements along k; rounded
    to x's dtype."""
    rows, k = x._shape
    if trans:
        scale = layout.transpose(scale, 0, 1)
    if scale.dtype != x.dtype:
        scale = ops.cast(scale, x.dtype)
    space = (rows, k // group, group)
    with tiling.vec_tile_in_force(tiling.layout_tile(space)):
        product = ops.mul(layout.reshape(x, list(space)), layout.unsqueeze(scale, -1))
        return layout.reshape(product, [rows, k])


def scaled_mm(mat_a, mat_b, out_dtype, scale_a, scale_b, *, a_trans=False, b_trans=False,
              scale_a_trans=False, scale_b_trans=False, c_matrix_nz=False,
              extend_params=None):
    """(mat_a * scale_a) @ (mat_b * scale_b), each scale shared by a group of
    g consecutive elements along K (MX: g = 32). mat_a [M, K] (a_trans:
    [K, M]), mat_b [K, N] (b_trans: [N, K]); scale_a [M, K / g]
    (scale_a_trans: [K / g, M]), scale_b [N, K / g] (scale_b_trans:
    [K / g, N]). Operands are FP32/FP16/BF16 (the scaled products are
    rounded to the operand dtype, then multiplied as pypto.matmul) or FP8
    (DT_FP8E4M3/DT_FP8E5M2, PyPTO's MX operands: dequantised to FP32 with
    their scales, then multiplied in FP32); scales are FP32/FP16/BF16 or
    DT_FP8E8M0. c_matrix_nz or extend_params raise NotYetImplementedError."""
    what = "pypto.scaled_mm"
    check_traced(mat_a, what, "mat_a")
    check_traced(mat_b, what, "mat_b")
    if mat_a.dtype in _FP8_TYPES or mat_b.dtype in _FP8_TYPES:
        if mat_a.dtype not in _FP8_TYPES or mat_b.dtype not in _FP8_TYPES:
            raise TypeError(f"{what}: 'mat_a' and 'mat_b' have dtypes {mat_a.dtype.name} and "
                            f"{mat_b.dtype.name}; FP8 operands must both be DT_FP8E4M3 or "
                            f"DT_FP8E5M2")
        # Dequantised exactly: every FP8 value and E8M0 scale is an FP32,
        # and so is their product wherever it is within FP32's range.
        mat_a = ops.cast(mat_a, dtypes.DT_FP32)
        mat_b = ops.cast(mat_b, dtypes.DT_FP32)
    if c_matrix_nz or extend_params:
        raise not_yet(what, "c_matrix_nz and extend_params (Ascend-only result layouts and "
                            "epilogues)")
    if mat_a.dtype != mat_b.dtype or mat_a.dtype not in FLOAT_TYPES:
        raise TypeError(f"{what}: 'mat_a' and 'mat_b' have dtypes {mat_a.dtype.name} and "
                        f"{mat_b.dtype.name}; they must be one of DT_FP32, DT_FP16, DT_BF16")
    if len(mat_a._shape) != 2 or len(mat_b._shape) != 2:
        raise ValueError(f"{what}: 'mat_a' {list(mat_a._shape)} and 'mat_b' "
                         f"{list(mat_b._shape)} must have 2 dims")
    a = layout.transpose(mat_a, 0, 1) if a_trans else mat_a        # [M, K]
    b = mat_b if b_trans else layout.transpose(mat_b, 0, 1)        # [N, K]
    m, k = a._shape
    n, kb = b._shape
    if not symbolic.same(k, kb):
        raise ValueError(f"{what}: K differs: mat_a gives {k}, mat_b {kb}")
    ga = _check_scale(what, "scale_a", scale_a, m, k, scale_a_trans)
    gb = _check_scale(what, "scale_b", scale_b, n, k, scale_b_trans)
    a = _scaled(a, scale_a, ga, scale_a_trans)
    b = _scaled(b, scale_b, gb, scale_b_trans)
    return _matmul(a, b, out_dtype, b_trans=True)


# pack, unpack ---------------------------------------------------------------------

# The integer dtypes whose bytes pack/unpack compute (two's complement,
# little-endian as the host stores them), and their sizes.
_BYTE_TYPES = {dtypes.DT_BOOL: 1, dtypes.DT_UINT8: 1, dtypes.DT_INT8: 1, dtypes.DT_INT16: 2,
               dtypes.DT_INT32: 4, dtypes.DT_INT64: 8}
# Float types travel as the integer type of their size (a bitcast).
_FLOAT_BITS = {dtypes.DT_FP32: dtypes.DT_INT32, dtypes.DT_FP16: dtypes.DT_INT16,
               dtypes.DT_BF16: dtypes.DT_INT16, dtypes.DT_DOUBLE: dtypes.DT_INT64}


def _whole_shape(what, t, name):
    """t's shape, which may have dynamic dims; a tensor whose valid region is
    smaller than its shape is refused (its bytes would not be contiguous)."""
    if t._static is not None:
        raise ValueError(f"{what}: '{name}' has a valid region {list(t._shape)} smaller than "
                         f"its shape {list(t._static)}; pack/unpack take a whole tensor "
                         f"(pypto.clone it, or view its valid region with that shape)")
    return list(t._shape)


def pack(input):  # noqa: A002 - PyPTO's names
    """input flattened and its bytes reinterpreted as DT_UINT8 (little-endian,
    as torch's x.flatten().view(torch.uint8)): a 1-D tensor of numel *
    element-size values. Every dtype; a float tensor's bits are those of the
    integer of its size (primitives.bitcast, which says what becomes of an
    FP16/BF16 NaN). Dims may be dynamic: one compile for every size."""
    what = "pypto.pack"
    check_traced(input, what, "input")
    if input.dtype in _FLOAT_BITS:
        return pack(primitives.bitcast(input, _FLOAT_BITS[input.dtype]))
    shape = _whole_shape(what, input, "input")
    n, size = math.prod(shape), _BYTE_TYPES[input.dtype]
    flat = layout.reshape(input, [n]) if len(shape) != 1 else input
    with tiling.vec_tile_in_force(_byte_tile(n, size)):
        if size == 1:
            if input.dtype == dtypes.DT_UINT8:
                return layout.clone(flat)
            return ops.cast(ops.bitwise_and(ops.cast(flat, dtypes.DT_INT32), 0xFF),
                            dtypes.DT_UINT8)
        wide = dtypes.DT_INT64 if size == 8 else dtypes.DT_INT32
        x = ops.cast(flat, wide) if flat.dtype != wide else flat
        columns = [layout.unsqueeze(ops.bitwise_and(ops.bitwise_right_shift(x, 8 * k), 0xFF), 1)
                   for k in range(size)]
        return ops.cast(layout.reshape(layout.concat(columns, 1), [n * size]), dtypes.DT_UINT8)


def _byte_tile(n, size):
    """A vector tile for [n] values and their [n, size] bytes (n may be
    symbolic: one tile shape for every size)."""
    return (1024 if symbolic.is_symbolic(n) else min(n, 1024), size)


def unpack(input, dst_dtype):  # noqa: A002 - PyPTO's names
    """A DT_UINT8 tensor's bytes reinterpreted as `dst_dtype` (little-endian,
    as torch's x.view(dtype)): the last dim shrinks by the element size,
    which must divide it (BOOL: a byte other than 0 is true). A float result
    is the integer of its size bitcast (primitives.bitcast). Dims may be
    dynamic, one compile for every size; a dynamic last dim L gives L //
    size values, and an L that is not a multiple of the size is an error at
    launch (_byte_rows). One kernel that unpacks the same dynamic L to types
    of two different sizes is a compile error: L // 2 and L // 4 are not
    told apart by the probes of its one compile (lower_symbolic.h)."""
    what = "pypto.unpack"
    check_traced(input, what, "input")
    if input.dtype != dtypes.DT_UINT8:
        raise TypeError(f"{what}: argument 'input' has dtype {input.dtype.name}; it must be "
                        f"DT_UINT8")
    if not isinstance(dst_dtype, dtypes.DataType):
        raise TypeError(f"{what}: dst_dtype must be a pypto.DT_* constant, got {dst_dtype!r}")
    if dst_dtype not in _BYTE_TYPES and dst_dtype not in _FLOAT_BITS:
        raise TypeError(f"{what}: dst_dtype must be an integer, BOOL or float type, got "
                        f"{dst_dtype.name}")
    shape = _whole_shape(what, input, "input")
    size = dtypes.bytes_of(dst_dtype)
    if not shape or (not symbolic.is_symbolic(shape[-1]) and shape[-1] % size):
        raise ValueError(f"{what}: the last dim of 'input' {shape} must be a multiple of "
                         f"{size} (the size of {dst_dtype.name})")
    if dst_dtype in _FLOAT_BITS:
        return primitives.bitcast(unpack(input, _FLOAT_BITS[dst_dtype]), dst_dtype)
    rows, q = _byte_rows(input, shape, size)
    out_shape = shape[:-1] + [q]
    n = math.prod(out_shape)
    with tiling.vec_tile_in_force(_byte_tile(n, size)):
        # The bytes of a value of up to 4 bytes combine in INT32 (a shift
        # into its sign bit wraps as the value's bits), of 8 in INT64.
        wide = dtypes.DT_INT64 if size == 8 else dtypes.DT_INT32
        b = ops.cast(layout.reshape(rows, [n, size]), wide)
        value = None
        for k in range(size):
            byte = layout.reshape(layout.view(b, [n, 1], [0, k]), [n])
            part = ops.bitwise_left_shift(byte, 8 * k) if k else byte
            value = part if value is None else ops.bitwise_or(value, part)
        out = ops.cast(value, dst_dtype)
    out = layout.reshape(out, out_shape) if len(out_shape) != 1 else out
    if not symbolic.same(q, shape[-1] // size):  # ceil(L / size) values, L // size valid
        out = layout.view(out, shape[:-1] + [shape[-1] // size])
    return out


def _byte_rows(input, shape, size):  # noqa: A002
    """input [..., L] of bytes as [..., q * size] and q, the number of
    `size`-byte values per row. A fixed L or one of the form size * m:
    input itself and L // size. Another dynamic L: a view of
    size * ceil(L / size) bytes and q = ceil(L / size), the same region
    where L is a multiple of size (one compile for every L); where it is
    not, that view leaves its tensor: an error at launch naming the view,
    the sizes and the unpack's line."""
    last = shape[-1]
    q = last // size
    if not symbolic.is_symbolic(last) or symbolic.same(q * size, last):
        return input, q
    q = (last + (size - 1)) // size
    return layout.view(input, shape[:-1] + [size * q]), q
