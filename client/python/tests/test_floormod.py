"""Tensor // and % (pypto.floor_divide, pypto.remainder) against torch, bit
for bit: floats with special values and zero divisors, FP16/BF16 (computed
in FP32 and rounded), integers with mixed signs and near their limits, and
the scalar forms on either side. x // 0 and x % 0 on integers give 0 here
(torch raises), so those cases are checked against 0."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]

# Quotients beyond ~2**60 are left out: torch's vectorized fmod (Sleef)
# gives NaN for some of them (7 % 1e-30) where its scalar path and ours give
# the exact remainder.
SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 1e-6,
                    -1e30, 3.0, 100.0, -100.0, 0.1, 7.0, -7.0, 1e7, 0.3], np.float32)


def run1(fn, *arrays, out_dtype=np.float32, out_shape=None):
    n = len(arrays)
    src = ", ".join(f"a{i}: ANY" for i in range(n))
    rank = max(len(a.shape) for a in arrays)
    ns = {"ANY": ANY, "pypto": pypto, "fn": fn, "tile": (4, 8)[-rank:]}
    exec(f"def body({src}, out: ANY):\n"
         f"    pypto.set_vec_tile_shapes(*tile)\n"
         f"    out[:] = fn({', '.join(f'a{i}' for i in range(n))})\n", ns)
    if out_shape is None:
        out_shape = np.broadcast_shapes(*(a.shape for a in arrays))
    out = np.zeros(out_shape, out_dtype)
    pypto.jit(ns["body"])(*arrays, out)
    return out


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    both_nan = np.isnan(got) & np.isnan(want) if got.dtype.kind == "f" else False
    ok = (got.view(np.uint8).reshape(got.shape + (-1,)) ==
          want.view(np.uint8).reshape(want.shape + (-1,))).all(-1) | both_nan
    assert ok.all(), f"got {got[~ok][:8]} want {want[~ok][:8]}"


@pytest.mark.parametrize("op,ref", [(lambda a, b: a // b, torch.floor_divide),
                                    (lambda a, b: a % b, torch.remainder)])
def test_float_special_values_bit_exact(native, op, ref):
    a = np.tile(SPECIAL, (SPECIAL.size, 1))
    b = a.T.copy()
    got = run1(op, a, b)
    same_bits(got, ref(torch.from_numpy(a), torch.from_numpy(b)).numpy())
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((9, 33)) * 50).astype(np.float32)
    y = (rng.standard_normal((33,)) * 3).astype(np.float32)
    same_bits(run1(op, x, y), ref(torch.from_numpy(x), torch.from_numpy(y)).numpy())


@pytest.mark.parametrize("tdtype,ndtype", [(torch.float16, np.float16)])
@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_half_computes_in_fp32(native, name, tdtype, ndtype):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((8, 16)) * 20).astype(ndtype)
    y = (rng.standard_normal((8, 16)) * 3).astype(ndtype)
    got = run1(getattr(pypto, name), x, y, out_dtype=ndtype)
    want = getattr(torch, name)(torch.from_numpy(x).float(), torch.from_numpy(y).float())
    same_bits(got, want.to(tdtype).numpy())


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_integers_exact_with_zero_divisors_as_zero(native, dtype):
    info = np.iinfo(dtype)
    vals = np.array([info.min, info.min + 1, info.max, -7, -1, 0, 1, 7, 3, -3], dtype)
    a = np.tile(vals, (vals.size, 1))
    b = a.T.copy()
    for name in ("floor_divide", "remainder"):
        got = run1(getattr(pypto, name), a, b, out_dtype=dtype)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        safe = (b != 0) & ~((a == info.min) & (b == -1))
        want = getattr(torch, name)(ta, torch.where(torch.from_numpy(safe), tb, 1)).numpy()
        want = np.where(safe, want, 0)
        if name == "floor_divide":  # MIN // -1 wraps to MIN
            want = np.where((a == info.min) & (b == -1), info.min, want)
        np.testing.assert_array_equal(got, want.astype(dtype))


def test_scalar_forms(native):
    x = np.array([[-7.5, -3.0, -0.5, 0.0, 0.5, 3.0, 7.5, 100.25]], np.float32)
    tx = torch.from_numpy(x)
    for fn, want in [(lambda t: t // 2, tx // 2), (lambda t: t % 3.0, tx % 3.0),
                     (lambda t: 7 % t, 7 % tx), (lambda t: -7 // t, -7 // tx),
                     (lambda t: t.floor_divide(-2.5), tx.floor_divide(-2.5)),
                     (lambda t: pypto.remainder(t, -2.0), torch.remainder(tx, -2.0))]:
        same_bits(run1(fn, x), want.numpy())
    i = np.array([[-7, -3, -1, 1, 3, 7, 2**30, -2**30]], np.int32)
    ti = torch.from_numpy(i)
    for fn, want in [(lambda t: t // 2, ti // 2), (lambda t: t % -3, ti % -3),
                     (lambda t: 7 // t, 7 // ti), (lambda t: 10 % t, 10 % ti)]:
        np.testing.assert_array_equal(run1(fn, i, out_dtype=np.int32), want.numpy())
    # An int tensor with a float number promotes to FP32, as torch.
    same_bits(run1(lambda t: t // 2.5, i), (ti // 2.5).numpy())


def test_refusals_name_the_op():
    @pypto.jit
    def k(a: ANY, b: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a // b

    with pytest.raises(TypeError, match="pypto.floor_divide: operand dtypes differ"):
        k.trace(np.zeros((4, 4), np.float32), np.zeros((4, 4), np.int32),
                np.zeros((4, 4), np.float32))


def test_tensor_argmax_defaults_to_the_last_dim(native):
    x = np.random.default_rng(5).standard_normal((4, 8)).astype(np.float32)
    for m in ("argmax", "argmin"):
        got = run1(lambda t: getattr(t, m)(), x, out_dtype=np.int64, out_shape=(4,))
        np.testing.assert_array_equal(got, getattr(torch.from_numpy(x), m)(dim=-1).numpy())
