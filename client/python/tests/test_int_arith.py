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
    with pytest.raises(TypeError, match=r"pypto.add: argument 'input' has dtype DT_DOUBLE"):
        run(lambda x: x + 1, np.ones((4, 8), np.float64))
    with pytest.raises(TypeError, match=r"pypto.pow: argument 'input' has dtype DT_INT32"):
        run(lambda x: x ** x, np.ones((4, 8), np.int32))
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
