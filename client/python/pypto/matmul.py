"""pypto.matmul(a, b, out_dtype=None, a_trans=False, b_trans=False, *,
c_matrix_nz=False, extend_params=None) and a @ b.

[..., M, K] @ [..., K, N] -> [..., M, N] on the cube path: a_trans reads a as
[..., K, M], b_trans reads b as [..., N, K]; batch dims broadcast as in numpy.
FP32, FP16 and BF16 operands (both the same dtype) accumulate in FP32;
out_dtype is DT_FP32 or the operands' dtype (default: the operands'). The
cube tile in force (pypto.set_cube_tile_shapes) is recorded on the op.
"""

from . import dtypes, primitives, tiling
from .errors import TraceError
from .primitives import broadcast_shapes, check_traced
from .tensors import Tensor

_FLOAT_TYPES = (dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16)


# PyPTO's extend_params keys; only the bias is computed here.
_EXTEND_KEYS = ("bias_tensor", "scale", "scale_tensor", "relu_type", "trans_mode")


def matmul(a, b, out_dtype=None, a_trans=False, b_trans=False, *, c_matrix_nz=False,
           extend_params=None):
    """a @ b through the cube path (see the module docstring). PyPTO's
    keywords: extend_params={"bias_tensor": bias} adds a bias broadcast over
    the rows (2-D only, as PyPTO); c_matrix_nz (an NZ-format result) and the
    dequantization/TF32 keys are refused by name."""
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
    sa, sb = tuple(a.shape), tuple(b.shape)
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
    shape = tuple(batch) + (m, n)
    return a._builder.add_op(
        "matmul", [a, b], out_dtype, shape,
        {"out_dtype": out_dtype, "a_trans": a_trans, "b_trans": b_trans}, what,
        cube_tile=cube)


def _matmul_extended(a, b, out_dtype, a_trans, b_trans, extend_params, what):
    """matmul(...) + extend_params["bias_tensor"] (cast to the result's dtype)."""
    if not isinstance(extend_params, dict):
        raise TypeError(f"{what}: extend_params must be a dict, got "
                        f"{type(extend_params).__name__}")
    for key in extend_params:
        if key not in _EXTEND_KEYS:
            raise ValueError(f"{what}: unknown extend_params key {key!r}; PyPTO's keys: "
                             f"{', '.join(_EXTEND_KEYS)}")
        if key != "bias_tensor":
            raise ValueError(f"{what}: extend_params[{key!r}] (dequantization / TF32 rounding) "
                             f"is not supported; only 'bias_tensor' is (scale the result with "
                             f"pypto.mul instead)")
    result = matmul(a, b, out_dtype, a_trans, b_trans)
    bias = extend_params.get("bias_tensor")
    if bias is None:
        return result
    if len(result.shape) != 2:
        raise ValueError(f"{what}: extend_params is not supported for batched matrix "
                         f"multiplication (rank {len(result.shape)}); add the bias after it")
    check_traced(bias, what, "extend_params['bias_tensor']")
    if bias.dtype != result.dtype:
        bias = primitives.cast(bias, result.dtype)
    return primitives.binary("add", result, bias)
