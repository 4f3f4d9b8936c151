"""Integer and double arithmetic (issue 3): add sub mul maximum minimum neg abs
on every integer dtype and DOUBLE against torch, exactly (integer results wrap
in two's complement as torch's do), true division of integers (FP32, zero
divisors give inf/NaN), integers with Python numbers; what is not supported
is a TypeError naming the op and what it takes."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]


def big(dtype, shape, seed):
    """Values near the dtype's limits and small ones, so sums and products
    overflow (wrap) in some elements."""
    rng = np.random.default_rng(seed)
    if dtype == np.float64:
        x = rng.standard_normal(shape) * 1e200
        x.flat[:4] = [np.nan, np.inf, -0.0, 1e-300]
        return x
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    small = rng.integers(-50, 50, shape).astype(dtype)
    x[::2] = small[::2]
    x.flat[:3] = np.array([info.min, info.max, -1]).astype(dtype)
    return x


def run(fn, *arrays):
    src = ", ".join(f"a{i}: ANY" for i in range(len(arrays)))
    ns = {"ANY": ANY, "pypto": pypto, "fn": fn}
    exec(f"def body({src}, out: ANY):\n"
         f"    pypto.set_vec_tile_shapes(4, 8)\n"
         f"    out[:] = fn({', '.join(f'a{i}' for i in range(len(arrays)))})\n", ns)
    out = np.zeros(np.broadcast_shapes(*(a.shape for a in arrays)), arrays[0].dtype)
    pypto.jit(ns["body"])(*arrays, out)
    return out


DTYPES = [np.int32, np.int64, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn", [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("maximum", pypto.maximum), ("minimum", pypto.minimum),
])
def test_binary_like_torch(native, dtype, name, fn):
    a, b = big(dtype, (9, 20), 1), big(dtype, (20,), 2)
    got = run(fn, a, b)
    want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_neg_abs_chain_like_torch(native, dtype):
    a = big(dtype, (9, 20), 3)
    got = run(lambda x: abs(-x) + pypto.neg(x), a)
    t = torch.from_numpy(a)
    np.testing.assert_array_equal(got, (torch.abs(-t) + torch.neg(t)).numpy())


def test_unsupported_integer_arithmetic_is_a_clear_error(native):
    a = np.ones((4, 8), np.bool_)
    with pytest.raises(TypeError, match=r"pypto.add: argument 'input' has dtype DT_BOOL; "
                                        r"pypto.add takes DT_FP32, DT_FP16, DT_BF16, "
                                        r"DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8 "
                                        r"or DT_DOUBLE"):
        run(lambda x: x + x, a)
    with pytest.raises(TypeError, match=r"pypto.exp: .*DT_INT32.*takes DT_FP32, DT_FP16 or "
                                        r"DT_BF16"):
        run(pypto.exp, np.ones((4, 8), np.int32))
    with pytest.raises(TypeError, match=r"pypto.exp: argument 'input' has dtype DT_DOUBLE"):
        run(pypto.exp, np.ones((4, 8), np.float64))
    with pytest.raises(TypeError, match=r"pypto.pow: integer tensors \(DT_INT32\) to tensor "
                                        r"powers are not supported"):
        run(lambda x: x ** x, np.ones((4, 8), np.int32))
    with pytest.raises(TypeError, match=r"pypto.pow: a number to the power of an integer"):
        run(lambda x: 2 ** x, np.ones((4, 8), np.int32))
    with pytest.raises(ValueError, match=r"negative integer powers are not allowed"):
        run(lambda x: x ** -1, np.ones((4, 8), np.int32))
    with pytest.raises(ValueError, match=r"pypto.clip: 'max' 1000 does not fit DT_INT8"):
        run(lambda x: x.clip(0, 1000), np.ones((4, 8), np.int8))
    with pytest.raises(TypeError, match=r"pypto.clip: argument 'input' has dtype DT_BOOL"):
        run(lambda x: x.clip(0, 1), np.ones((4, 8), np.bool_))
    with pytest.raises(TypeError, match=r"outside \[-2\*\*24, 2\*\*24\]"):
        run(lambda x: x + 2 ** 30, np.ones((4, 8), np.int32))


SMALL = [np.int8, np.int16, np.uint8]


@pytest.mark.parametrize("dtype", SMALL)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "maximum", "minimum"])
def test_small_integers_wrap_like_torch(native, dtype, name):
    a, b = big(dtype, (9, 20), 4), big(dtype, (9, 20), 5)
    got = run(getattr(pypto, name), a, b)
    want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_small_integer_neg_abs_like_torch(native, dtype):
    a = big(dtype, (9, 20), 6)
    got = run(lambda x: abs(x) - (-x), a)
    t = torch.from_numpy(a)
    np.testing.assert_array_equal(got, (torch.abs(t) - torch.neg(t)).numpy())


def run_to(fn, out_dtype, *arrays):
    src = ", ".join(f"a{i}: ANY" for i in range(len(arrays)))
    ns = {"ANY": ANY, "pypto": pypto, "fn": fn}
    exec(f"def body({src}, out: ANY):\n"
         f"    pypto.set_vec_tile_shapes(4, 8)\n"
         f"    out[:] = fn({', '.join(f'a{i}' for i in range(len(arrays)))})\n", ns)
    out = np.zeros(np.broadcast_shapes(*(a.shape for a in arrays)), out_dtype)
    pypto.jit(ns["body"])(*arrays, out)
    return out


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8])
def test_true_division_gives_fp32_like_torch(native, dtype):
    a, b = big(dtype, (9, 20), 7), big(dtype, (9, 20), 8)
    b[0, :5] = 0
    a[0, :2] = 0  # 0 / 0 is NaN, x / 0 is +-inf, as torch's
    got = run_to(lambda x, y: x / y, np.float32, a, b)
    want = (torch.from_numpy(a) / torch.from_numpy(b)).numpy()
    assert want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    got = run_to(lambda x: 7 / x + x / 2, np.float32, a)
    t = torch.from_numpy(a)
    np.testing.assert_allclose(got, (7 / t + t / 2).numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int16])
def test_integer_with_python_numbers_like_torch(native, dtype):
    a = big(dtype, (9, 20), 9)
    t = torch.from_numpy(a)
    got = run(lambda x: pypto.maximum(3 - x * -2 + 5, -7), a)
    want = torch.maximum(3 - t * -2 + 5, torch.tensor(-7, dtype=t.dtype)).numpy()
    np.testing.assert_array_equal(got, want)
    got = run_to(lambda x: x + 2.5, np.float32, a)  # a float promotes to FP32
    np.testing.assert_array_equal(got, (t + 2.5).numpy())


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.int32, np.int64])
def test_integer_pow_sign_clip_like_torch(native, dtype):
    a = big(dtype, (9, 20), 10)
    t = torch.from_numpy(a)
    info = np.iinfo(dtype)
    lo, hi = int(max(info.min, -1000)), int(min(info.max, 77))
    got = run(lambda x: pypto.sign(x) + x ** 3 + x ** 0 + x.clip(lo, hi) + x.clip(max=5), a)
    want = torch.sign(t) + t ** 3 + t ** 0 + t.clip(lo, hi) + t.clip(max=5)
    np.testing.assert_array_equal(got, want.numpy())
    got = run_to(lambda x: x.clip(-2.5, 7), np.float32, a)  # a float bound promotes
    np.testing.assert_array_equal(got, t.clip(-2.5, 7).numpy())


def test_double_with_python_numbers_keeps_double_precision(native):
    a = big(np.float64, (9, 20), 11)
    a[1] = np.random.default_rng(12).standard_normal(20)
    t = torch.from_numpy(a)
    got = run(lambda x: pypto.maximum((0.1 - x * 0.1) / 3 + 1e-300, -1e250) ** 2 / x, a)
    want = torch.maximum((0.1 - t * 0.1) / 3 + 1e-300, torch.tensor(-1e250, dtype=t.dtype)) ** 2 / t
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-15)
    got = run(lambda x: pypto.sign(x).clip(-0.5, 2.0) + x ** 3.0, a)
    want = torch.sign(t).clip(-0.5, 2.0) + t ** 3.0
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-15)
    mask = run_to(lambda x: x < 0.1, np.bool_, np.array([[0.1, np.nextafter(0.1, 1)]] * 4))
    assert not mask.any()  # 0.1 compared as a double, not an f32
