"""pypto.matmul(a, b, out_dtype=None, a_trans=False, b_trans=False, *,
c_matrix_nz=False, extend_params=None) and a @ b.

[..., M, K] @ [..., K, N] -> [..., M, N] on the cube path: a_trans reads a as
[..., K, M], b_trans reads b as [..., N, K]; batch dims broadcast as in numpy.
FP32, FP16 and BF16 operands (both the same dtype) accumulate in FP32;
out_dtype is DT_FP32 or the operands' dtype (default: the operands'). The
cube tile in force (pypto.set_cube_tile_shapes) is recorded on the op.
"""

import numpy as np

from . import dtypes, primitives, symbolic, tiling, valid_region
from .enums import ReLuType, TransMode
from .errors import TraceError
from .primitives import broadcast_shapes, check_traced
from .symbolic import is_symbolic

_FLOAT_TYPES = (dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16)


# PyPTO's extend_params keys.
_EXTEND_KEYS = ("bias_tensor", "scale", "scale_tensor", "relu_type", "trans_mode")


def matmul(a, b, out_dtype=None, a_trans=False, b_trans=False, *, c_matrix_nz=False,
           extend_params=None):
    """a @ b through the cube path (see the module docstring). PyPTO's
    extend_params: "bias_tensor" (a [1, N] tensor added to every row),
    "scale" (a float multiplying the result, rounded to the cube unit's 10
    mantissa bits), "scale_tensor" (a float [1, N] tensor multiplying each
    column), "relu_type" (pypto.ReLuType.RELU: relu of the result) and
    "trans_mode" (only TransMode.CAST_NONE). They apply in that order and
    tile with the cube tile, so no vector tile is needed. c_matrix_nz (an
    NZ-format result) is refused."""
    what = "pypto.matmul"
    check_traced(a, what, "a")
    check_traced(b, what, "b")
    if c_matrix_nz:
        raise ValueError(f"{what}: c_matrix_nz=True (an NZ-format result) is not supported; "
                         f"results are ND (leave c_matrix_nz False)")
    if extend_params is not None:
        return _matmul_extended(a, b, out_dtype, a_trans, b_trans, extend_params, what)
    if a.dtype != b.dtype or a.dtype not in _FLOAT_TYPES:
        raise TypeError(
            f"{what}: operands have dtypes {a.dtype.name} and {b.dtype.name}; matmul takes "
            f"two DT_FP32, DT_FP16 or DT_BF16 tensors of the same dtype")
    out_dtype = a.dtype if out_dtype is None else out_dtype
    if out_dtype not in (dtypes.DT_FP32, a.dtype):
        raise TypeError(
            f"{what}: out_dtype {getattr(out_dtype, 'name', out_dtype)}; a matmul of "
            f"{a.dtype.name} gives DT_FP32 or {a.dtype.name}")
    a_trans, b_trans = bool(a_trans), bool(b_trans)
    sa, sb = tuple(a.shape), tuple(b.shape)  # static shapes
    operands = (f"a {list(sa)} (a_trans={a_trans}), b {list(sb)} (b_trans={b_trans})")
    if not 2 <= len(sa) <= 4 or not 2 <= len(sb) <= 4:
        raise ValueError(f"{what}: operands must have rank 2 to 4: {operands}")
    m, ka = (sa[-1], sa[-2]) if a_trans else (sa[-2], sa[-1])
    kb, n = (sb[-1], sb[-2]) if b_trans else (sb[-2], sb[-1])
    if ka != kb:
        raise ValueError(f"{what}: K mismatch: {operands} have K {ka} and {kb} "
                         f"(valid: equal K)")
    batch = broadcast_shapes(f"{what} batch dims", [("a", sa[:-2]), ("b", sb[:-2])]) \
        if len(sa) > 2 or len(sb) > 2 else ()
    cube = tiling.current_cube_tile()
    if cube is None:
        raise TraceError(
            f"{what}: no cube tile shape is set; call pypto.set_cube_tile_shapes("
            f"[mL0, mL1], [kL0, kL1], [nL0, nL1]) before this op")
    static = tuple(batch) + (m, n)
    a, b = _valid_k(a, b, a_trans, b_trans, what)
    m = a._shape[-1] if a_trans else a._shape[-2]
    n = b._shape[-2] if b_trans else b._shape[-1]
    shape = tuple(batch) + (m, n)
    return a._builder.add_op(
        "matmul", [a, b], out_dtype, shape,
        {"out_dtype": out_dtype, "a_trans": a_trans, "b_trans": b_trans}, what,
        cube_tile=cube, static=static)


def _valid_k(a, b, a_trans, b_trans, what):
    """a and b narrowed to the K both have valid (valid_region.py): the
    invalid tail of K is never summed. Batch dims must be valid whole."""
    if a._static is None and b._static is None:
        return a, b
    for name, t in (("a", a), ("b", b)):
        if not symbolic.same_shape(t._shape[:-2], valid_region.static_shape(t)[:-2]):
            raise ValueError(f"{what}: operand '{name}' has a valid region "
                             f"{list(t._shape)} smaller than its shape {t.shape} in a batch "
                             f"dim; only the last two dims may be partly valid")
    ka = -2 if a_trans else -1
    kb = -1 if b_trans else -2
    k = valid_region.smaller(a._shape[ka], b._shape[kb])
    region_a, region_b = list(a._shape), list(b._shape)
    region_a[ka], region_b[kb] = k, k
    return valid_region.narrow(a, region_a, what), valid_region.narrow(b, region_b, what)


def _matmul_extended(a, b, out_dtype, a_trans, b_trans, extend_params, what):
    """matmul(...) with PyPTO's epilogue: + bias_tensor, * scale (or the
    per-channel scale_tensor), then relu when relu_type is ReLuType.RELU.
    The epilogue is part of the matmul: its ops tile with the cube tile's
    [mL0, nL0], so no vector tile is needed."""
    if not isinstance(extend_params, dict):
        raise TypeError(f"{what}: extend_params must be a dict, got "
                        f"{type(extend_params).__name__}")
    for key in extend_params:
        if key not in _EXTEND_KEYS:
            raise ValueError(f"{what}: unknown extend_params key {key!r}; PyPTO's keys: "
                             f"{', '.join(_EXTEND_KEYS)}")
    bias = extend_params.get("bias_tensor")
    scale = extend_params.get("scale")
    scale_tensor = extend_params.get("scale_tensor")
    relu = _relu_type(extend_params.get("relu_type"), what)
    trans_mode = extend_params.get("trans_mode")
    if trans_mode is not None and trans_mode != TransMode.CAST_NONE:
        if not isinstance(trans_mode, TransMode):
            raise TypeError(f"{what}: extend_params['trans_mode'] must be a pypto.TransMode, "
                            f"got {trans_mode!r}")
        raise ValueError(f"{what}: extend_params['trans_mode'] {trans_mode!r} (TF32 rounding of "
                         f"the operands) is not supported; FP32 matmuls compute in FP32 "
                         f"(TransMode.CAST_NONE)")
    if scale is not None and scale_tensor is not None:
        raise ValueError(f"{what}: extend_params has both 'scale' and 'scale_tensor'; give one "
                         f"(per-tensor or per-channel)")
    result = matmul(a, b, out_dtype, a_trans, b_trans)
    if bias is None and scale is None and scale_tensor is None and relu == ReLuType.NO_RELU:
        return result
    if tiling.current_cube_tile()[3]:
        raise ValueError(f"{what}: extend_params (bias, scale, relu) cannot be combined with "
                         f"enable_split_k=True in pypto.set_cube_tile_shapes (as in PyPTO)")
    if bias is not None:
        check_traced(bias, what, "extend_params['bias_tensor']")
        _check_row_operand(bias, result, "bias_tensor", what)
    if scale is not None:
        scale = _fixpipe_scale(scale, what)
    if scale_tensor is not None:
        check_traced(scale_tensor, what, "extend_params['scale_tensor']")
        if scale_tensor.dtype not in _FLOAT_TYPES:
            raise TypeError(
                f"{what}: extend_params['scale_tensor'] has dtype {scale_tensor.dtype.name}; "
                f"PyPTO's int64/uint64 tensor of encoded float bits is not supported: pass the "
                f"per-channel scales as a DT_FP32, DT_FP16 or DT_BF16 tensor [1, N]")
        _check_row_operand(scale_tensor, result, "scale_tensor", what)
    with tiling.vec_tile_in_force(_epilogue_tile(result)):
        if bias is not None:
            result = primitives.binary("add", result, _as_dtype(bias, result.dtype))
        if scale is not None:
            result = primitives.binary("mul", result, scale)
        if scale_tensor is not None:
            result = primitives.binary("mul", result, _as_dtype(scale_tensor, result.dtype))
        if relu == ReLuType.RELU:
            result = primitives.unary("relu", result)
    return result


def _relu_type(value, what):
    if value is None:
        return ReLuType.NO_RELU
    if not isinstance(value, ReLuType):
        raise TypeError(f"{what}: extend_params['relu_type'] must be pypto.ReLuType.RELU or "
                        f"NO_RELU, got {value!r}")
    return value


def _fixpipe_scale(scale, what):
    """PyPTO's per-tensor scale as the cube unit applies it: 1 sign, 8
    exponent and 10 mantissa bits (FP32 rounded to nearest even)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"{what}: extend_params['scale'] must be a float, got {scale!r}")
    bits = int(np.float32(scale).view(np.uint32))
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
    return float(np.uint32(bits).view(np.float32))


def _check_row_operand(t, result, key, what):
    """A bias or scale tensor: [1, N] (or [N]) with N the result's."""
    shape, n = tuple(t.shape), result.shape[-1]
    ok = (len(shape) == 1 and shape[0] == n) or (
        len(shape) == 2 and shape[0] == 1 and shape[1] == n)
    if not ok:
        raise ValueError(f"{what}: extend_params[{key!r}] has shape {list(shape)}; it must be "
                         f"[1, N] with N = {n}, the result's last dim")


def _as_dtype(t, dtype):
    return t if t.dtype == dtype else primitives.cast(t, dtype)


def _epilogue_tile(result):
    """The vector tile of a matmul's epilogue: [1, ..., mL0, nL0] (the cube
    tile's L0 sizes, each at most its dim)."""
    m_l0, n_l0 = tiling.current_cube_tile()[0][0], tiling.current_cube_tile()[2][0]
    m, n = result.shape[-2], result.shape[-1]
    rows = m_l0 if is_symbolic(m) else min(m_l0, int(m))
    cols = n_l0 if is_symbolic(n) else min(n_l0, int(n))
    return (1,) * (len(result.shape) - 2) + (rows, cols)
