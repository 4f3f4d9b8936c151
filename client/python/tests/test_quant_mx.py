"""pypto.quant_mx against a numpy implementation of the OCP MX spec
(v1.0, section 6.3): per block of 32 along the axis, shared exponent
floor(log2(amax)) - emax_elem (clamped to the E8M0 range), elements
V / 2^shared_exp rounded to nearest even and clamped to the element type's
largest finite value."""

import numpy as np
import pytest
import torch

import pypto
from test_fp8 import decode, encode, same

EMAX = {pypto.DT_FP8E4M3: 8, pypto.DT_FP8E5M2: 15}
MAX = {pypto.DT_FP8E4M3: 448.0, pypto.DT_FP8E5M2: 57344.0}


def mx_reference(x, dtype, axis=-1):
    """(element codes, E8M0 scale codes) of float array x, per the spec."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    blocks = x.reshape(x.shape[:-1] + (x.shape[-1] // 32, 32))
    amax = np.abs(blocks).max(-1, keepdims=True)
    _, e = np.frexp(amax)  # amax = m * 2^e, 0.5 <= m < 1: floor(log2(amax)) = e - 1
    shared = np.where(amax == 0, -127, np.clip(e - 1 - EMAX[dtype], -127, 127))
    elems = encode(np.clip(blocks / np.ldexp(1.0, shared), -MAX[dtype], MAX[dtype]), dtype)
    scale = (shared[..., 0] + 127).astype(np.uint8)
    return (np.moveaxis(elems.reshape(x.shape), -1, axis),
            np.moveaxis(scale, -1, axis))


def quant(x, dtype, axis=-1):
    shape = list(x.shape)
    sshape = list(shape)
    sshape[axis] //= 32

    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32), q: pypto.Tensor([], dtype),
          s: pypto.Tensor([], pypto.DT_FP8E8M0)):
        pypto.set_vec_tile_shapes(*([8] * (len(shape) - 1) + [32]))
        q[:], s[:] = pypto.quant_mx(a, dtype, axis=axis)

    q, s = np.zeros(shape, np.uint8), np.zeros(sshape, np.uint8)
    k(x, q, s)
    return q, s


def _inputs(shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))).astype(np.float32)
    flat = x.reshape(-1, 32)
    flat[0] = 0                              # a block of zeros
    flat[1, :4] = [448, -464, 1e-3, 2.0**-140]  # a power-of-two amax, a subnormal
    flat[2] *= 1e30                          # large blocks
    flat[3] *= 1e-35                         # tiny blocks (scale clamps at 2^-127)
    return x


@pytest.mark.parametrize("dtype", [pypto.DT_FP8E4M3, pypto.DT_FP8E5M2], ids=lambda d: d.name)
def test_quant_mx_follows_the_ocp_mx_spec(native, dtype):
    x = _inputs((8, 128), 1)
    q, s = quant(x, dtype)
    wq, ws = mx_reference(x, dtype)
    np.testing.assert_array_equal(s, ws)
    same(q, wq, dtype)
    # dequantised, every element is within half an element ulp of the input
    deq = decode(q, dtype) * np.repeat(decode(s, pypto.DT_FP8E8M0), 32, axis=-1)
    assert np.all(np.abs(deq - x) <= np.abs(x) * 2.0 ** -3 + np.repeat(
        decode(s, pypto.DT_FP8E8M0), 32, axis=-1) * 2.0 ** -9 + 1e-30)


def test_quant_mx_along_another_axis_and_nan(native):
    x = _inputs((64, 8), 2)
    x[5, 3] = np.nan
    q, s = quant(x, pypto.DT_FP8E4M3, axis=0)
    wq, ws = mx_reference(np.nan_to_num(x, nan=0.0), pypto.DT_FP8E4M3, axis=0)
    assert s.shape == (2, 8)
    assert s[0, 3] == 0xFF and np.isnan(decode(q[:, 3][:32], pypto.DT_FP8E4M3)).all()
    ok = np.ones(s.shape, bool)
    ok[0, 3] = False
    np.testing.assert_array_equal(s[ok], ws[ok])
    qok = np.repeat(ok, 32, axis=0)
    same(q[qok], wq[qok], pypto.DT_FP8E4M3)


def test_quant_mx_errors():
    def kern(shape, **kw):
        @pypto.jit
        def k(a: pypto.Tensor([], pypto.DT_FP32), q: pypto.Tensor([], pypto.DT_FP8E4M3)):
            pypto.set_vec_tile_shapes(8, 32)
            q[:] = pypto.quant_mx(a, **kw)[0]
        return k.trace(torch.zeros(*shape), torch.zeros(*shape, dtype=torch.uint8))

    with pytest.raises(ValueError, match=r"dim 1 of 'input' \[8, 40\] must be a static "
                                         r"multiple of 32"):
        kern((8, 40))
    with pytest.raises(TypeError, match="quant_dtype DT_INT8 must be DT_FP8E4M3 or DT_FP8E5M2"):
        kern((8, 32), quant_dtype=pypto.DT_INT8)
    with pytest.raises(ValueError, match="mode 'ROUND_UP' is not supported"):
        kern((8, 32), mode="ROUND_UP")


@pytest.mark.parametrize("dtype", [pypto.DT_FP8E4M3, pypto.DT_FP8E5M2], ids=lambda d: d.name)
def test_scaled_mm_of_mx_operands_is_the_dequantised_product(native, dtype):
    m, k, n = 8, 64, 16
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n)) * 100
    qa, sa = mx_reference(a, dtype)              # scale_a [M, K / 32]
    qb, sb = mx_reference(b, dtype, axis=0)      # scale_b [K / 32, N]: scale_b_trans

    @pypto.jit
    def kern(a: pypto.Tensor([], dtype), b: pypto.Tensor([], dtype),
             sa: pypto.Tensor([], pypto.DT_FP8E8M0), sb: pypto.Tensor([], pypto.DT_FP8E8M0),
             out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        pypto.set_cube_tile_shapes([8, 8], [32, 64], [16, 16])
        out[:] = pypto.scaled_mm(a, b, pypto.DT_FP32, sa, sb, scale_b_trans=True)

    out = np.zeros((m, n), np.float32)
    kern(qa, qb, sa, sb, out)
    da = decode(qa, dtype) * np.repeat(decode(sa, pypto.DT_FP8E8M0), 32, axis=1)
    db = decode(qb, dtype) * np.repeat(decode(sb, pypto.DT_FP8E8M0), 32, axis=0)
    np.testing.assert_allclose(out, da @ db, rtol=1e-5, atol=1e-3)


def test_scaled_mm_takes_fp8_operands_in_pairs():
    @pypto.jit
    def kern(a: pypto.Tensor([], pypto.DT_FP8E4M3), b: pypto.Tensor([], pypto.DT_FP32),
             sa: pypto.Tensor([], pypto.DT_FP8E8M0), sb: pypto.Tensor([], pypto.DT_FP8E8M0),
             out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.scaled_mm(a, b, pypto.DT_FP32, sa, sb, scale_b_trans=True)

    u8 = lambda *s: torch.zeros(*s, dtype=torch.uint8)  # noqa: E731
    with pytest.raises(TypeError, match="FP8 operands must both be DT_FP8E4M3 or DT_FP8E5M2"):
        kern.trace(u8(8, 64), torch.zeros(64, 16), u8(8, 2), u8(2, 16), torch.zeros(8, 16))
