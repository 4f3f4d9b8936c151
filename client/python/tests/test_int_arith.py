"""Integer and double arithmetic: add sub mul maximum minimum neg abs
on every integer dtype and DOUBLE against torch, exactly (integer results wrap
in two's complement as torch's do), true division of integers (FP32, zero
divisors give inf/NaN), integers with Python numbers; what is not supported
is a TypeError naming the op and what it takes; integer and BOOL tensors
compared with Python floats in FP32, as torch."""

import numpy as np
import pytest
import torch

import many_outputs
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


INTS = {"int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
        "uint8": torch.uint8, "bool": torch.bool}


@pytest.mark.parametrize("name", sorted(INTS))
def test_integer_tensors_compare_with_floats_in_fp32_as_torch(native, name):
    # torch promotes an integer or BOOL tensor compared with a Python float
    # to FP32 (its default dtype) and compares there; numpy compares in
    # double. Both sides of FP32's edges: int32 16777217 == 16777216.0 holds
    # (16777217 rounds to 16777216 in FP32), 16777215 == 16777216.0 does
    # not; 1.00000001 is 1 in FP32; numbers on either side. A Python int
    # still compares exactly in the tensor's dtype (16777217 != 16777216).
    dt = INTS[name]
    vals = {torch.int8: [-128, -3, -1, 0, 1, 2, 3, 127], torch.uint8: [0, 1, 2, 3, 127, 128, 254, 255],
            torch.int16: [-32768, -3, -1, 0, 1, 2, 3, 32767], torch.bool: [0, 1, 1, 0, 1, 0, 0, 1]}
    big = [16777216, 16777217, 16777215, 16777218, -16777217, 2 ** 31 - 1, 0, 3]
    x = torch.tensor(vals.get(dt, big)).to(dt).reshape(1, 8)
    numbers_ = [16777216.0, 16777217.0, 16777215.5, 1.00000001, 2.5, -0.0, 2147483647.0,
                float("nan"), float("inf"), 127.4]
    fns, refs = [], []
    for s in numbers_:
        fns += [lambda v, s=s: pypto.eq(v, s), lambda v, s=s: v < s, lambda v, s=s: s <= v,
                lambda v, s=s: pypto.ne(s, v)]
        refs += [lambda t, s=s: t == s, lambda t, s=s: t < s, lambda t, s=s: s <= t,
                 lambda t, s=s: s != t]
    if dt in (torch.int32, torch.int64):
        fns += [lambda v: pypto.eq(v, 16777216), lambda v: v > 16777216]
        refs += [lambda t: t == 16777216, lambda t: t > 16777216]
    outs = many_outputs.run_many(fns, [x], [torch.zeros(1, 8, dtype=torch.bool) for _ in fns],
                                 (1, 8))
    for k, (ref, got) in enumerate(zip(refs, outs)):
        want = ref(x)
        assert torch.equal(got, want), f"{name} case {k}: got {got.tolist()} want {want.tolist()}"
