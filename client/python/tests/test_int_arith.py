"""Integer and double arithmetic (issue 3): add sub mul maximum minimum neg abs
on INT32, INT64 and DOUBLE tensors against torch, exactly; integer results
wrap in two's complement as torch's do. Other integer dtypes and the ops that
do not take integers yet are TypeErrors naming the op and what it takes."""

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
    x.flat[:3] = [info.min, info.max, -1]
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
    a = np.ones((4, 8), np.int8)
    with pytest.raises(TypeError, match=r"pypto.add: argument 'input' has dtype DT_INT8; "
                                        r"pypto.add takes DT_FP32, DT_FP16, DT_BF16, "
                                        r"DT_INT32, DT_INT64 or DT_DOUBLE"):
        run(lambda x: x + x, a)
    with pytest.raises(TypeError, match=r"pypto.exp: .*DT_INT32.*takes DT_FP32, DT_FP16 or "
                                        r"DT_BF16"):
        run(pypto.exp, np.ones((4, 8), np.int32))
    with pytest.raises(TypeError, match=r"pypto.add: .*DT_INT32"):
        run(lambda x: x + 1, np.ones((4, 8), np.int32))
