"""pypto.matmul(a, b, out_dtype=None, a_trans=False, b_trans=False) and a @ b.

[..., M, K] @ [..., K, N] -> [..., M, N] on the cube path: a_trans reads a as
[..., K, M], b_trans reads b as [..., N, K]; batch dims broadcast as in numpy.
FP32, FP16 and BF16 operands (both the same dtype) accumulate in FP32;
out_dtype is DT_FP32 or the operands' dtype (default: the operands'). The
cube tile in force (pypto.set_cube_tile_shapes) is recorded on the op.
"""

from . import dtypes, tiling
from .errors import TraceError
from .tensors import Tensor

_FLOAT_TYPES = (dtypes.DT_FP32, dtypes.DT_FP16, dtypes.DT_BF16)


def matmul(a, b, out_dtype=None, a_trans=False, b_trans=False):
    """a @ b through the cube path (see the module docstring)."""
    from .ops import _check_traced, broadcast_shapes
    what = "pypto.matmul"
    _check_traced(a, what, "a")
    _check_traced(b, what, "b")
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
