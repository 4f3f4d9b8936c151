"""Reductions of integer, BOOL and DOUBLE tensors against torch:
sum amax amin prod argmax argmin over a dim spanning several tiles (partial
results, then a combine step), with keepdim; torch's result dtypes (sum and
prod of integers and BOOL give int64, wrapping; amax/amin keep the dtype;
arg* give int64). Integers are compared exactly, DOUBLE to rounding."""

import numpy as np
import pytest
import torch

import pypto

from test_int_arith import big

ANY = pypto.Tensor[...]
KINDS = ("sum", "amax", "amin", "prod", "argmax", "argmin")


@pypto.jit
def all_reductions(x: ANY, s: ANY, mx: ANY, mn: ANY, p: ANY, amx: ANY, amn: ANY,
                   dim: int, keepdim: bool):
    pypto.set_vec_tile_shapes(4, 8)
    s[:] = x.sum(dim, keepdim)
    mx[:] = x.amax(dim, keepdim)
    mn[:] = pypto.amin(x, dim, keepdim)
    p[:] = x.prod(dim, keepdim)
    amx[:] = x.argmax(dim, keepdim)
    amn[:] = pypto.argmin(x, dim, keepdim)


def data(dtype, shape, seed):
    if dtype == np.bool_:
        return np.random.default_rng(seed).random(shape) < 0.5
    if dtype == np.float64:
        # Products stay finite: torch's order and ours then agree to rounding.
        x = np.random.default_rng(seed).standard_normal(shape) * 1e3
        x[0, 3], x[1, 5], x[2, 7] = np.nan, np.inf, -np.inf
        return x
    return big(dtype, shape, seed)


def torch_reduce(kind, t, dim, keepdim):
    if kind in ("argmax", "argmin") and t.dtype == torch.bool:
        t = t.to(torch.uint8)  # torch has no argmax on BOOL; the answer is the same
    return getattr(torch, kind)(t, dim, keepdim=keepdim)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.bool_, np.float64])
@pytest.mark.parametrize("dim,keepdim", [(-1, False), (0, True)])
def test_reductions_like_torch(native, dtype, dim, keepdim):
    x = data(dtype, (9, 20), 11)
    t = torch.from_numpy(x)
    want = [torch_reduce(k, t, dim, keepdim).numpy() for k in KINDS]
    outs = [np.zeros(w.shape, w.dtype) for w in want]
    all_reductions(x, *outs, dim, keepdim)
    for kind, got, w in zip(KINDS, outs, want):
        if dtype == np.float64 and kind in ("sum", "prod"):
            np.testing.assert_allclose(got, w, rtol=1e-12, err_msg=kind)
        else:
            np.testing.assert_array_equal(got, w, err_msg=kind)


def test_result_dtypes_follow_torch(native):
    seen = {}

    @pypto.jit
    def k(x: ANY, s: ANY, mx: ANY, a: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        for name, v in (("sum", x.sum(-1)), ("amax", x.amax(-1)), ("argmax", x.argmax(-1))):
            seen[name] = v.dtype
        s[:] = x.sum(-1)
        mx[:] = x.amax(-1)
        a[:] = x.argmax(-1)

    x = np.ones((4, 8), np.int16)
    k(x, np.zeros(4, np.int64), np.zeros(4, np.int16), np.zeros(4, np.int64))
    assert seen == {"sum": pypto.DT_INT64, "amax": pypto.DT_INT16, "argmax": pypto.DT_INT64}


@pypto.jit
def rank0(x: ANY, v: ANY, s: ANY, am: ANY, vs: ANY, twice: ANY, centered: ANY, ks: ANY,
          mx: ANY):
    pypto.set_vec_tile_shapes(16)
    total = v.sum(0)  # a rank-1 tensor without keepdim: rank 0
    vs[...] = total
    twice[()] = total * 2  # an op on a rank-0 tensor
    pypto.set_vec_tile_shapes(4, 8)
    s[...] = x.sum()  # every element
    am[...] = x.argmax(None)  # the row-major index, as torch's x.argmax()
    mx[...] = pypto.amax(x.cast(pypto.DT_DOUBLE))
    centered[:] = x - x.amax()  # a rank-0 tensor broadcasts
    ks[:] = x.sum(keepdim=True)


def test_rank0_results_like_torch(native):
    x = np.random.default_rng(5).standard_normal((9, 20)).astype(np.float32)
    v = big(np.int32, (50,), 6)
    t, tv = torch.from_numpy(x), torch.from_numpy(v)
    outs = dict(s=np.zeros((), np.float32), am=np.zeros((), np.int64),
                vs=np.zeros((), np.int64), twice=np.zeros((), np.int64),
                centered=np.zeros((9, 20), np.float32), ks=np.zeros((1, 1), np.float32),
                mx=np.zeros((), np.float64))
    rank0(x, v, **outs)
    assert torch.sum(tv).shape == () and outs["vs"].shape == ()
    assert outs["vs"] == torch.sum(tv).item() and outs["twice"] == 2 * torch.sum(tv).item()
    bound = 1e-5 * np.abs(x).sum()
    assert abs(outs["s"] - t.sum().item()) <= bound
    np.testing.assert_allclose(outs["ks"], t.sum(dim=(0, 1), keepdim=True).numpy(), atol=bound)
    assert outs["am"] == torch.argmax(t).item()
    assert outs["mx"] == torch.amax(t.double()).item()
    np.testing.assert_array_equal(outs["centered"], (t - t.amax()).numpy())


def test_rank0_errors(native):
    @pypto.jit
    def k(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8)
        out[...] = x.sum().sum()

    with pytest.raises(Exception, match=r"pypto.sum: the input is a rank-0 tensor"):
        k(np.ones(8, np.float32), np.zeros((), np.float32))
