"""The ops reached every way Python offers them (function, method,
operator), each form run and checked against numpy/torch; and every cast
pair against torch itself. Several results per kernel: one compile each
(docs/test-coverage.md lists what else covers each op)."""

import numpy as np
import pytest
import torch

import pypto
from many_outputs import run_many

def operands():
    rng = np.random.default_rng(21)
    a = rng.uniform(0.5, 2.0, (6, 20)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (20,)).astype(np.float32)
    a[2] = b  # a row equal to b: eq/ne/le/ge see ties
    a[3, :4] = [-1.5, 0.0, -0.0, 3.0]
    return a, b


BINARY = {
    "add": (np.add, lambda x, y: x + y), "sub": (np.subtract, lambda x, y: x - y),
    "mul": (np.multiply, lambda x, y: x * y), "div": (np.divide, lambda x, y: x / y),
    "pow": (np.power, lambda x, y: x ** y), "maximum": (np.maximum, None),
    "minimum": (np.minimum, None),
}
COMPARE = {
    "eq": (np.equal, None), "ne": (np.not_equal, None), "lt": (np.less, lambda x, y: x < y),
    "le": (np.less_equal, lambda x, y: x <= y), "gt": (np.greater, lambda x, y: x > y),
    "ge": (np.greater_equal, lambda x, y: x >= y),
}


def forms(table):
    """(label, fn, numpy ref) for pypto.<name>(x, y), x.<name>(y) and the
    operator where Python has one."""
    out = []
    for name, (ref, operator) in table.items():
        out.append((f"pypto.{name}", lambda x, y, n=name: getattr(pypto, n)(x, y), ref))
        out.append((f"x.{name}", lambda x, y, n=name: getattr(x, n)(y), ref))
        if operator is not None:
            out.append((f"operator {name}", operator, ref))
    return out


@pytest.mark.parametrize("table,dtype", [(BINARY, np.float32), (COMPARE, np.bool_)])
def test_function_method_and_operator_forms_agree_with_numpy(native, table, dtype):
    a, b = operands()
    cases = forms(table)
    outs = run_many([fn for _, fn, _ in cases], [a, b],
                    [np.zeros(a.shape, dtype) for _ in cases], tile=(4, 8))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for (label, _, ref), got in zip(cases, outs):
        with np.errstate(all="ignore"):
            want = ref(a64, b64).astype(dtype)
        if dtype == np.bool_:
            np.testing.assert_array_equal(got, want, err_msg=label)
        else:
            np.testing.assert_allclose(got, want, rtol=2e-6 if "pow" in label else 1e-6,
                                       err_msg=label)
            assert np.array_equal(np.signbit(got), np.signbit(want)), label


def test_layout_and_reduction_forms_agree_with_torch(native):
    # The forms no other test runs: pypto.transpose, the view, permute,
    # unsqueeze and clone methods, pypto.prod; each beside the other form.
    rng = np.random.default_rng(22)
    x = rng.uniform(0.5, 1.5, (6, 20)).astype(np.float32)
    t = torch.from_numpy(x)
    t3 = (4, 1, 8)  # the rank-3 results' tile; the others take (4, 8)
    cases = [
        (lambda v: pypto.transpose(v, 0, 1) * 2, t.T * 2, None),
        (lambda v: v.transpose(1, 0) * 2, t.T * 2, None),
        (lambda v: v.view([3, 8], [2, 5]) + 1, t[2:5, 5:13] + 1, None),
        (lambda v: pypto.view(v, [3, 8], [2, 5]) + 1, t[2:5, 5:13] + 1, None),
        (lambda v: v.unsqueeze(1).permute(2, 1, 0) - 1, t.unsqueeze(1).permute(2, 1, 0) - 1, t3),
        (lambda v: pypto.permute(pypto.unsqueeze(v, 1), [2, 1, 0]) - 1,
         t.unsqueeze(1).permute(2, 1, 0) - 1, t3),
        (lambda v: v.clone(), t.clone(), None),
        (lambda v: pypto.clone(v), t.clone(), None),
        (lambda v: pypto.prod(v, -1, True), torch.prod(t.double(), -1, keepdim=True), None),
        (lambda v: v.prod(dim=-1, keepdim=True), torch.prod(t.double(), -1, keepdim=True), None),
        (lambda v: pypto.prod(v, 0), torch.prod(t.double(), 0), None),
    ]
    outs = [np.zeros(tuple(w.shape), np.float32) for _, w, _ in cases]

    def with_tile(fn, tile):
        def traced(v):
            pypto.set_vec_tile_shapes(*(tile or (4, 8)))
            return fn(v)
        return traced

    fns = [with_tile(fn, tile) for fn, _, tile in cases]
    run_many(fns, [x], outs, tile=(4, 8))
    for k, ((_, want, _), got) in enumerate(zip(cases, outs)):
        want = want.numpy().astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=1e-5 if k >= 8 else 0, err_msg=f"case {k}")


# Every dtype cast takes, as torch names it.
TORCH = {
    pypto.DT_FP32: torch.float32, pypto.DT_FP16: torch.float16, pypto.DT_BF16: torch.bfloat16,
    pypto.DT_INT8: torch.int8, pypto.DT_INT16: torch.int16, pypto.DT_INT32: torch.int32,
    pypto.DT_INT64: torch.int64, pypto.DT_UINT8: torch.uint8, pypto.DT_BOOL: torch.bool,
    pypto.DT_DOUBLE: torch.float64,
}


def cast_input(src):
    """Values in +-300 (float -> INT8/UINT8 wrap, int -> FP16/BF16 round),
    halves and ties, -0.0 and, for floats, +-inf and NaN where torch's
    result is defined (float -> float and -> BOOL)."""
    g = torch.Generator().manual_seed(23)
    x = torch.rand(4, 40, generator=g, dtype=torch.float64) * 600 - 300
    x[0, :12] = torch.tensor([-0.0, 0.5, -0.5, 1.5, 2.5, -1.0, 255.7, -128.5, 127.5, 65504.0,
                              257.0, 0.1], dtype=torch.float64)
    if TORCH[src] == torch.bool:
        return x > 0
    if not TORCH[src].is_floating_point:
        x = x.trunc()
        if TORCH[src] == torch.uint8:
            x = x.abs().clamp(max=255)
        if TORCH[src] == torch.int8:
            x = x.clamp(-128, 127)
    return x.to(TORCH[src])


@pytest.mark.parametrize("src", list(TORCH), ids=lambda d: str(TORCH[d]).split(".")[1])
def test_cast_every_pair_like_torch(native, src):
    """x.cast(dst) for every dst, bit for bit as torch's x.to(dst); from a
    float, also NaN, +-inf and values past int32 and int64 into every type."""
    x = cast_input(src)
    dsts = list(TORCH)
    outs = [torch.zeros(x.shape, dtype=TORCH[d]) for d in dsts]
    run_many([lambda v, d=d: v.cast(d) for d in dsts], [x], outs, tile=(4, 16))
    for d, got in zip(dsts, outs):
        want = x.to(TORCH[d])
        assert torch.equal(got, want) or (
            got.dtype.is_floating_point and torch.equal(got.isnan(), want.isnan())
            and torch.equal(got[~got.isnan()], want[~want.isnan()])), (
            f"{TORCH[src]} -> {TORCH[d]}: got {got[got != want][:6]} want {want[got != want][:6]}")
        if got.dtype.is_floating_point:  # signs of zeros as torch's
            assert torch.equal(torch.signbit(got[got == 0]), torch.signbit(want[got == 0]))
    if not TORCH[src].is_floating_point:
        return
    # Into every type, as torch on x86: INT8/INT16/INT32 through a 32-bit
    # truncation (NaN and values outside int32 give INT32_MIN, then wrap),
    # UINT8 and INT64 through a 64-bit one (outside int64: INT64_MIN).
    special = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 1e30, -1e-30,
                            70000.0, 3.0e38, 3e9 + 5, -3e9 - 5, 1e10 + 7, 2.0 ** 31 + 3,
                            2.0 ** 31, -2.0 ** 31, 65504.0, -129.5],
                           dtype=torch.float64).to(TORCH[src]).reshape(1, 16)
    outs = [torch.zeros(special.shape, dtype=TORCH[d]) for d in dsts]
    run_many([lambda v, d=d: v.cast(d) for d in dsts], [special], outs, tile=(1, 16))
    for d, got in zip(dsts, outs):
        want = special.to(TORCH[d])
        same = (got == want) | (got.isnan() & want.isnan())
        assert bool(same.all()), f"{TORCH[src]} -> {TORCH[d]}: got {got} want {want}"
        if got.dtype.is_floating_point:  # a NaN's sign is not numpy's or torch's rule
            real = ~want.isnan()
            assert torch.equal(torch.signbit(got[real]), torch.signbit(want[real])), (got, want)


@pytest.mark.parametrize("dtype", ["FP32", "DOUBLE", "INT32", "INT64", "FP16", "BF16"])
def test_arange_like_torch_and_numpy(native, dtype):
    """arange's start + step * i in double, rounded once to the dtype: INT32
    and INT64 past 2**24 (and INT64 past 2**31, pypto's default for such
    ints) exact as torch's; the float types with fractional steps exactly
    the float64 values rounded once (they were computed from start and step
    rounded to FP32: DOUBLE arange(0, 5, 0.1) was off by 1e-9)."""
    dt = getattr(pypto, f"DT_{dtype}")
    tdt = TORCH[dt]
    if tdt.is_floating_point:
        ranges = [(0.0, 5.0, 0.1), (-3.0, 2.9, 0.3), (1.0, -1.0, -0.1), (100.1, 300.0, 1.7),
                  (2049.0, 2080.0, 1.0) if dtype == "FP16" else (16777217.0, 16777230.0, 1.0)]
    else:
        ranges = [(16777217, 16777227, 1), (-(2**30) - 1, -(2**30) + 40, 3),
                  (2**31 - 20, 2**31 - 1, 3)]
        if dtype == "INT64":
            ranges += [(2**40 + 1, 2**40 + 20, 1), (2**31, 2**31 + 10, 2)]
    fns = []
    for start, end, step in ranges:
        fns.append(lambda v, r=(start, end, step): pypto.arange(*r, dtype=dt))
    wants = []
    for start, end, step in ranges:
        want = torch.arange(start, end, step, dtype=tdt)
        if tdt.is_floating_point:
            # start + step * i in float64, rounded once; torch's float
            # aranges are near it (FP32/FP16/BF16 computed in f32: an f32 ulp
            # of the range off; DOUBLE: the step added to each vector's first
            # value), as are numpy's (it steps by (start + step) - start).
            exact = torch.tensor([start + step * i for i in range(want.numel())],
                                 dtype=torch.float64)
            close = (exact.to(tdt).double() - want.double()).abs()
            tol = exact.abs() * 2.0 ** -7 + 2.0 ** -22 * (abs(start) + abs(end))
            assert bool((close <= tol).all()), (start, end, step)
            want = exact.to(tdt)
        wants.append(want)
    # Each arange has its own length: a kernel each, its own tile.
    for fn, want, r in zip(fns, wants, ranges):
        out = torch.zeros(want.shape, dtype=tdt)
        run_many([fn], [torch.zeros(1)], [out], tile=(16,))
        assert torch.equal(out, want), (
            f"{dtype} arange{r}: got {out[out != want][:4].tolist()} "
            f"want {want[out != want][:4].tolist()}")
