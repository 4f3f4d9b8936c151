"""Issue 3's numerics for FP16 and BF16: every unary op, the binary ops and
comparisons, and the reductions, within one unit in the last place of the output type of the
float64 result (they compute in FP32 and round to nearest even), with NaN,
+-inf and -0.0 as numpy's. Checked from torch tensors (numpy has no BF16),
one kernel per dtype and op family."""

import numpy as np
import pytest
import torch

import many_outputs
import pypto

ANY = pypto.Tensor[...]

SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 2.5,
           1e-3, -300.0, 3.0, 100.0, -100.0, 0.1]

HALF = {"fp16": torch.float16, "bf16": torch.bfloat16}


def run_many(fns, inputs, out_dtype, tile):
    """One kernel computing fns[k](*inputs) into output k; returns them."""
    shape = torch.broadcast_shapes(*(x.shape for x in inputs))
    return many_outputs.run_many(fns, inputs, [torch.zeros(shape, dtype=out_dtype) for _ in fns],
                                 tile)


def ordered(t):
    """16-bit float bit patterns as integers in the values' order (-0.0 and
    +0.0 both 0): neighbours differ by 1."""
    bits = t.view(torch.int16).to(torch.int32) & 0xFFFF
    mag = bits & 0x7FFF
    return torch.where(bits >= 0x8000, -mag, mag)


def assert_within_one_ulp(got, want64, label):
    """got (FP16/BF16) within 1 ulp of the float64 result rounded to got's
    type; NaN where it is NaN, infinities exact, zeros with its sign."""
    want = want64.to(got.dtype)
    nan = want.isnan()
    assert torch.equal(got.isnan(), nan), f"{label}: NaN at {got.isnan() != nan}"
    g, w = ordered(got[~nan]), ordered(want[~nan])
    far = (g - w).abs() > 1
    far |= want[~nan].isinf() & (got[~nan] != want[~nan])
    assert not bool(far.any()), (
        f"{label}: got {got[~nan][far][:6].tolist()} want {want[~nan][far][:6].tolist()} "
        f"(float64 {want64[~nan][far][:6].tolist()})")
    zero = want[~nan] == 0
    assert torch.equal(torch.signbit(got[~nan][zero]), torch.signbit(want[~nan][zero])), (
        f"{label}: the sign of a zero")


def t64(fn):
    return lambda x: fn(torch.from_numpy(x)).numpy()


UNARY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": np.reciprocal, "abs": np.abs, "neg": np.negative, "relu": t64(torch.relu),
    "sigmoid": t64(torch.sigmoid), "tanh": np.tanh, "erf": t64(torch.erf),
    "erfc": t64(torch.erfc), "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "round": np.round, "trunc": np.trunc, "sin": np.sin, "cos": np.cos,
}


@pytest.mark.parametrize("half", sorted(HALF))
def test_unary_within_one_ulp(native, half):
    g = torch.Generator().manual_seed(31)
    x = torch.cat([torch.tensor(SPECIAL), torch.rand(8 * 40 - len(SPECIAL), generator=g) * 10 - 5])
    x = x.reshape(8, 40).to(HALF[half])
    names = sorted(UNARY)
    outs = run_many([lambda v, n=n: getattr(pypto, n)(v) for n in names], [x], HALF[half],
                    tile=(4, 16))
    x64 = x.double().numpy()
    for name, got in zip(names, outs):
        with np.errstate(all="ignore"):
            want = torch.from_numpy(np.asarray(UNARY[name](x64), np.float64))
        assert_within_one_ulp(got, want, f"{half} {name}")


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("half", sorted(HALF))
def test_binary_and_comparisons_on_special_values(native, half):
    a = torch.tensor(SPECIAL).to(HALF[half]).repeat(len(SPECIAL), 1)
    b = a.T.contiguous()
    names = sorted(BINARY)
    outs = run_many([lambda x, y, n=n: getattr(pypto, n)(x, y) for n in names], [a, b],
                    HALF[half], tile=(8, 8))
    a64, b64 = a.double().numpy(), b.double().numpy()
    for name, got in zip(names, outs):
        with np.errstate(all="ignore"):
            want = torch.from_numpy(BINARY[name](a64, b64))
        assert_within_one_ulp(got, want, f"{half} {name}")
    names = sorted(COMPARE)
    outs = run_many([lambda x, y, n=n: getattr(pypto, n)(x, y) for n in names], [a, b],
                    torch.bool, tile=(8, 8))
    for name, got in zip(names, outs):
        want = torch.from_numpy(COMPARE[name](a64, b64))
        assert torch.equal(got, want), f"{half} {name}: {(got != want).nonzero()[:6].tolist()}"


@pytest.mark.parametrize("half", sorted(HALF))
@pytest.mark.parametrize("dim,keepdim", [(-1, False), (0, True)])
def test_reductions_like_torch(native, half, dim, keepdim):
    # Every kind, the reduced dim over several tiles (partials, then the
    # combine step), NaN and +-inf in the data: amax/amin/prod within 1 ulp
    # of float64 (prod of values near 1), sum within 1e-5 of the sum of
    # magnitudes plus 1 ulp, arg* exact (a NaN wins, the first one).
    g = torch.Generator().manual_seed(32)
    x = (torch.rand(19, 70, generator=g) * 4 - 2).to(HALF[half])
    x[3, 5], x[4, 7], x[5, 1] = float("nan"), float("inf"), float("-inf")
    near_one = (1 + (x.float() / 32).to(HALF[half]).float()).to(HALF[half])  # as the kernel rounds
    kinds = ["sum", "amax", "amin", "prod", "argmax", "argmin"]
    fns = [lambda v, k=k: getattr(v if k != "prod" else 1 + v / 32, k)(dim=dim, keepdim=keepdim)
           for k in kinds]
    shape = x.sum(dim=dim, keepdim=keepdim).shape
    outs = [torch.zeros(shape, dtype=torch.int64 if k.startswith("arg") else HALF[half])
            for k in kinds]
    ins = ", ".join(f"o{k}: ANY" for k in range(len(kinds)))
    body = "".join(f"    o{k}[:] = fns[{k}](a)\n" for k in range(len(kinds)))
    ns = {"ANY": ANY, "pypto": pypto, "fns": fns}
    exec(f"def kernel(a: ANY, {ins}):\n    pypto.set_vec_tile_shapes(8, 16)\n{body}", ns)
    pypto.jit(ns["kernel"])(x, *outs)
    for k, got in zip(kinds, outs):
        src = (near_one if k == "prod" else x).double()
        want = getattr(torch, k)(src, dim=dim, keepdim=keepdim)
        if k.startswith("arg"):
            assert torch.equal(got, want), f"{half} {k}"
        elif k == "sum":
            tol = 1e-5 * src.abs().sum(dim=dim, keepdim=keepdim) + want.abs() * (
                2.0 ** -10 if half == "fp16" else 2.0 ** -7)
            ok = ((got.double() - want).abs() <= tol) | (got.isnan() & want.isnan())
            ok |= got.double() == want  # infinities
            assert bool(ok.all()), f"{half} sum: got {got[~ok]} want {want[~ok]}"
        else:
            assert_within_one_ulp(got, want, f"{half} {k}")


@pytest.mark.parametrize("half", sorted(HALF))
def test_numbers_meet_half_tensors_as_in_torch(native, half):
    # A Python number meeting an FP16/BF16 tensor is rounded to the tensor's
    # dtype first, as torch and numpy round it: fp16(0.1) == 0.1 is true,
    # fp16(0.1) - 0.1 is 0, and FP16 x * 1e5 is inf (1e5 is past FP16's
    # range). Bit for bit as torch, numbers on either side (0.3 / x as
    # torch.div and numpy divide it: torch's reflected / multiplies by x's
    # rounded reciprocal).
    x = torch.tensor([0.1, 0.3, 1 / 3, 2.7, -0.1, 1e-3, 65504.0, 300.3, 0.0, -2.5, 7.0, 1.0],
                     dtype=torch.float64).to(HALF[half]).repeat(3, 1)
    x[1] *= -1
    x[2] /= 7
    cases = [
        (lambda v: v + 0.1, lambda t: t + 0.1), (lambda v: 0.1 - v, lambda t: 0.1 - t),
        (lambda v: v - 1 / 3, lambda t: t - 1 / 3), (lambda v: v * 0.1, lambda t: t * 0.1),
        (lambda v: v / 3.3, lambda t: t / 3.3), (lambda v: 0.3 / v, lambda t: torch.div(torch.full_like(t, 0.3), t)),
        (lambda v: v * 1e5, lambda t: t * 1e5), (lambda v: v ** 0.3, lambda t: t ** 0.3),
        (lambda v: 2.7 ** v, lambda t: 2.7 ** t), (lambda v: v + 2049, lambda t: t + 2049),
        (lambda v: pypto.maximum(v, 0.1), lambda t: torch.maximum(t, torch.full_like(t, 0.1))),
        (lambda v: pypto.minimum(0.3, v), lambda t: torch.minimum(torch.full_like(t, 0.3), t)),
    ]
    outs = run_many([f for f, _ in cases], [x], HALF[half], tile=(3, 12))
    for k, ((_, ref), got) in enumerate(zip(cases, outs)):
        want = ref(x)
        same = (got == want) | (got.isnan() & want.isnan())
        assert bool(same.all()) and torch.equal(torch.signbit(got[got == 0]),
                                                torch.signbit(want[got == 0])), (
            f"{half} case {k}: got {got[~same].tolist()} want {want[~same].tolist()}")
    compare = [
        (lambda v: v < 0.1, lambda t: t < 0.1), (lambda v: pypto.eq(v, 0.1), lambda t: t == 0.1),
        (lambda v: v.ne(1 / 3), lambda t: t != 1 / 3), (lambda v: 0.3 <= v, lambda t: 0.3 <= t),
        (lambda v: v > 2.7, lambda t: t > 2.7), (lambda v: v >= 300.3, lambda t: t >= 300.3),
    ]
    outs = run_many([f for f, _ in compare], [x], torch.bool, tile=(3, 12))
    for k, ((_, ref), got) in enumerate(zip(compare, outs)):
        assert torch.equal(got, ref(x)), f"{half} comparison {k}: got {got} want {ref(x)}"
