"""PyPTO's elementwise op families: trigonometric and
hyperbolic functions, cbrt, atan2, hypot; bitwise ops and shifts; logical
ops and predicates; fmod, gcd, floor_div, ceil_div; lrelu, prelu; tril,
triu; precision_type, round(decimals), clip with tensor bounds and
Tensor.where. Each against torch (FP32, FP16, BF16 and integer types as the
op allows), with NaN, +-inf, -0.0 and domain edges. Several ops share one
kernel (many_outputs) to keep compiles few."""

import math

import numpy as np
import pytest
import torch

import many_outputs
import pypto
from test_half_numerics import assert_within_one_ulp

ANY = pypto.Tensor[...]

SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.0,
           -2.5, 1e-3, -3.0, 10.0, -10.0, 0.9999]


def run_many(fns, inputs, out_dtype, tile=(8, 16), shape=None):
    shape = shape or torch.broadcast_shapes(*(x.shape for x in inputs))
    return many_outputs.run_many(fns, inputs, [torch.zeros(shape, dtype=out_dtype) for _ in fns],
                                 tile)


def float_inputs(dtype, lo=-4.0, hi=4.0, n=128):
    """SPECIAL then a sweep of [lo, hi], as a [8, n // 8] tensor of dtype."""
    sweep = torch.linspace(lo, hi, n - len(SPECIAL), dtype=torch.float64).tolist()
    return torch.tensor(SPECIAL + sweep, dtype=torch.float64).to(dtype).reshape(8, n // 8)


def ulps32(got, want64):
    """Distance in FP32 steps between got (FP32) and want64 rounded to FP32;
    0 where both are NaN or equal."""
    want = want64.to(torch.float32)
    g = got.view(torch.int32).to(torch.int64)
    w = want.view(torch.int32).to(torch.int64)
    g = torch.where(g < 0, -(g & 0x7FFFFFFF), g)
    w = torch.where(w < 0, -(w & 0x7FFFFFFF), w)
    d = (g - w).abs()
    d[got.isnan() & want.isnan()] = 0
    d[got.isnan() != want.isnan()] = 1 << 40
    return d


def same_values(got, want):
    """Equal, NaN where NaN."""
    return bool(((got == want) | (got.isnan() & want.isnan())).all())


UNARY_FLOAT = {
    # name: (torch function, input range)
    "tan": (torch.tan, (-10, 10)), "asin": (torch.asin, (-1.2, 1.2)),
    "acos": (torch.acos, (-1.2, 1.2)), "atan": (torch.atan, (-50, 50)),
    "sinh": (torch.sinh, (-20, 20)), "cosh": (torch.cosh, (-20, 20)),
    "asinh": (torch.asinh, (-100, 100)), "acosh": (torch.acosh, (-2, 100)),
    "atanh": (torch.atanh, (-1.1, 1.1)), "cbrt": (lambda x: torch.sign(x) * x.abs() ** (1 / 3),
                                                  (-1e3, 1e3)),
}


def _want_unary(name, x):
    if name == "cbrt":
        return torch.tensor([math.copysign(abs(v) ** (1 / 3), v) if math.isfinite(v) else v
                             for v in x.double().flatten().tolist()],
                            dtype=torch.float64).reshape(x.shape)
    return UNARY_FLOAT[name][0](x.double())


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_trig_fp32_within_one_ulp_of_float64(native, name):
    lo, hi = UNARY_FLOAT[name][1]
    x = float_inputs(torch.float32, lo, hi)
    got_fn, got_method = run_many([getattr(pypto, name), lambda t: getattr(t, name)()], [x],
                                  torch.float32)
    want = _want_unary(name, x)
    d = ulps32(got_fn, want)
    assert int(d.max()) <= 1, (name, x[d > 1][:4].tolist(), got_fn[d > 1][:4].tolist(),
                               want[d > 1][:4].tolist())
    assert torch.equal(got_fn.signbit()[want == 0], want.signbit()[want == 0])
    assert torch.equal(got_fn.isinf(), want.to(torch.float32).isinf())
    assert same_values(got_fn, got_method)


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_trig_half_types_within_one_ulp(native, dt):
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dt]
    x = float_inputs(dtype, -0.99, 0.99)
    names = sorted(UNARY_FLOAT)
    outs = run_many([getattr(pypto, n) for n in names], [x], dtype)
    for n, got in zip(names, outs):
        assert_within_one_ulp(got, _want_unary(n, x), f"{dt} {n}")


def test_trig_of_integer_tensors_is_float32(native):
    x = torch.arange(-8, 8, dtype=torch.int32).reshape(2, 8)
    (got,) = run_many([pypto.atan], [x], torch.float32)
    assert int(ulps32(got, torch.atan(x.double())).max()) <= 1


@pytest.mark.parametrize("dt", ["fp32", "fp16", "bf16"])
def test_atan2_and_hypot_special_grid(native, dt):
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dt]
    s = torch.tensor(SPECIAL, dtype=dtype)
    y, x = s.reshape(16, 1).expand(16, 16).contiguous(), s.reshape(1, 16).expand(16, 16).contiguous()
    atan2, hypot, method = run_many([pypto.atan2, pypto.hypot, lambda a, b: a.atan2(b)], [y, x],
                                    dtype, tile=(8, 16))
    for name, got in (("atan2", atan2), ("hypot", hypot)):
        want = getattr(torch, name)(y.double(), x.double())
        if dt == "fp32":
            assert int(ulps32(got, want).max()) <= 1, name
            zero = want == 0
            assert torch.equal(got.signbit()[zero], want.signbit()[zero]), name
        else:
            assert_within_one_ulp(got, want, f"{dt} {name}")
    assert torch.equal(atan2.isnan(), method.isnan())
    assert torch.equal(atan2[~atan2.isnan()], method[~method.isnan()])
    assert float(hypot[1, 0]) == math.inf  # hypot(inf, NaN) = inf (C99, torch)


# Bitwise ----------------------------------------------------------------------------

INT_TYPES = {"int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
             "int64": torch.int64, "uint8": torch.uint8}


def int_pair(dtype, count_max=70):
    g = torch.Generator().manual_seed(5)
    info = torch.iinfo(dtype)
    a = torch.randint(info.min, info.max, (8, 16), generator=g, dtype=torch.int64)
    a[0, :4] = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1])
    b = torch.randint(max(info.min, -3), min(info.max, count_max), (8, 16), generator=g,
                      dtype=torch.int64)
    b[1, :8] = torch.tensor([0, 1, 7, 8, 15, 31, 32, 33]).clamp(max=info.max)
    return a.to(dtype), b.to(dtype)


BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift"]


@pytest.mark.parametrize("dt", sorted(INT_TYPES))
def test_bitwise_ops_as_torch(native, dt):
    dtype = INT_TYPES[dt]
    a, b = int_pair(dtype)
    fns = [getattr(pypto, n) for n in BITWISE] + [lambda x, y: pypto.bitwise_not(x),
                                                  lambda x, y: x.bitwise_and(y)]
    outs = run_many(fns, [a, b], dtype)
    wants = [getattr(torch, n)(a, b) for n in BITWISE] + [torch.bitwise_not(a), a & b]
    for name, got, want in zip(BITWISE + ["bitwise_not", "method"], outs, wants):
        assert torch.equal(got, want), (dt, name, a[got != want][:4].tolist(),
                                        b[got != want][:4].tolist(), got[got != want][:4].tolist(),
                                        want[got != want][:4].tolist())


def test_bitwise_ops_on_bool_and_with_numbers(native):
    a = torch.tensor([True, False, True, False] * 4).reshape(2, 8)
    b = torch.tensor([True, True, False, False] * 4).reshape(2, 8)
    outs = run_many([pypto.bitwise_and, pypto.bitwise_or, pypto.bitwise_xor,
                     lambda x, y: pypto.bitwise_not(x)], [a, b], torch.bool)
    for got, want in zip(outs, [a & b, a | b, a ^ b, ~a]):
        assert torch.equal(got, want)
    x = torch.arange(-8, 8, dtype=torch.int32).reshape(2, 8)
    outs = run_many([lambda t: pypto.bitwise_and(t, 6), lambda t: pypto.bitwise_left_shift(t, 3),
                     lambda t: pypto.bitwise_xor(5, t)], [x], torch.int32)
    for got, want in zip(outs, [x & 6, x << 3, 5 ^ x]):
        assert torch.equal(got, want)


def test_bitwise_errors_name_the_problem(native):
    def kernel(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8)
        out[:] = pypto.bitwise_and(x, x)

    with pytest.raises(TypeError, match="bitwise_and.*DT_FP32.*integer"):
        pypto.jit(kernel)(torch.zeros(8), torch.zeros(8))

    def shift(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8)
        out[:] = pypto.bitwise_left_shift(x, x)

    with pytest.raises(TypeError, match="BOOL.*shifted"):
        pypto.jit(shift)(torch.zeros(8, dtype=torch.bool), torch.zeros(8, dtype=torch.bool))


# Logical ops and predicates --------------------------------------------------------

def test_logical_ops_and_predicates_fp32(native):
    s = torch.tensor(SPECIAL, dtype=torch.float32)
    x, y = s.reshape(16, 1).expand(16, 16).contiguous(), s.reshape(1, 16).expand(16, 16).contiguous()
    fns = [pypto.logical_and, pypto.logical_or, pypto.logical_xor,
           lambda a, b: pypto.logical_not(a), lambda a, b: pypto.isnan(a),
           lambda a, b: pypto.isfinite(a), lambda a, b: pypto.signbit(a),
           lambda a, b: a.logical_not()]
    outs = run_many(fns, [x, y], torch.bool)
    wants = [torch.logical_and(x, y), torch.logical_or(x, y), torch.logical_xor(x, y),
             torch.logical_not(x), torch.isnan(x), torch.isfinite(x), torch.signbit(x),
             torch.logical_not(x)]
    for k, (got, want) in enumerate(zip(outs, wants)):
        assert torch.equal(got, want), k


@pytest.mark.parametrize("dt", ["fp16", "bf16", "int32", "int8", "bool"])
def test_logical_ops_and_predicates_other_types(native, dt):
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "int32": torch.int32,
             "int8": torch.int8, "bool": torch.bool}[dt]
    if dtype.is_floating_point:
        x = torch.tensor(SPECIAL, dtype=dtype).reshape(2, 8)
    else:
        x = torch.tensor([0, 1, -1, 5, 0, 0, -7, 3] * 2).reshape(2, 8).to(dtype)
    y = x.flip(1).contiguous()
    fns = [pypto.logical_and, pypto.logical_or, lambda a, b: pypto.logical_not(a),
           lambda a, b: pypto.isnan(a), lambda a, b: pypto.isfinite(a),
           lambda a, b: pypto.signbit(a)]
    outs = run_many(fns, [x, y], torch.bool)
    wants = [torch.logical_and(x, y), torch.logical_or(x, y), torch.logical_not(x),
             torch.isnan(x), torch.isfinite(x),
             torch.signbit(x) if dt != "bool" else torch.zeros_like(x)]
    for k, (got, want) in enumerate(zip(outs, wants)):
        assert torch.equal(got, want), (dt, k)


def test_signbit_of_a_negative_nan(native):
    x = torch.tensor([float("nan")] * 8)
    x[::2] = -x[::2]
    (got,) = run_many([pypto.signbit], [x], torch.bool, tile=(8,))
    assert torch.equal(got, torch.signbit(x))


# fmod, gcd, floor_div, ceil_div --------------------------------------------------

@pytest.mark.parametrize("dt", ["fp32", "fp16", "bf16"])
def test_fmod_floats_special_grid(native, dt):
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dt]
    s = torch.tensor(SPECIAL, dtype=dtype)
    a, b = s.reshape(16, 1).expand(16, 16).contiguous(), s.reshape(1, 16).expand(16, 16).contiguous()
    got, method = run_many([pypto.fmod, lambda x, y: x.fmod(y)], [a, b], dtype)
    want = torch.fmod(a, b)
    same = (got == want) | (got.isnan() & want.isnan())
    assert bool(same.all()), (a[~same][:4].tolist(), b[~same][:4].tolist(), got[~same][:4].tolist())
    zero = want == 0
    assert torch.equal(got.signbit()[zero], want.signbit()[zero])
    assert torch.equal(got.isnan(), method.isnan())


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64", "uint8"])
def test_integer_fmod_gcd_floor_div_ceil_div(native, dt):
    dtype = INT_TYPES[dt]
    a, b = int_pair(dtype, count_max=100)
    b[b == 0] = 3
    if dtype.is_signed:
        b[b == -1] = 2
    a[0, 0] = torch.iinfo(dtype).min + 1  # no MIN // -1 (torch raises)
    outs = run_many([pypto.fmod, pypto.gcd, pypto.floor_div, pypto.ceil_div,
                     lambda x, y: x.gcd(y)], [a, b], dtype)
    al, bl = a.tolist(), b.tolist()
    ceil = torch.tensor([[-((-x) // y) for x, y in zip(r, q)] for r, q in zip(al, bl)]).to(dtype)
    wants = [torch.fmod(a, b), torch.gcd(a, b), torch.div(a, b, rounding_mode="floor"), ceil,
             torch.gcd(a, b)]
    for name, got, want in zip(["fmod", "gcd", "floor_div", "ceil_div", "method"], outs, wants):
        assert torch.equal(got, want), (dt, name, a[got != want][:4].tolist(),
                                        b[got != want][:4].tolist(), got[got != want][:4].tolist(),
                                        want[got != want][:4].tolist())


@pytest.mark.parametrize("dt", ["fp32", "fp16"])
def test_ceil_div_and_floor_div_of_floats(native, dt):
    dtype = {"fp32": torch.float32, "fp16": torch.float16}[dt]
    g = torch.Generator().manual_seed(6)
    a = (torch.randn(4, 8, generator=g) * 20).to(dtype)
    b = (torch.rand(4, 8, generator=g) * 3 + 0.25).to(dtype) * torch.tensor([1, -1] * 4).to(dtype)
    ceil, floor = run_many([pypto.ceil_div, pypto.floor_div], [a, b], dtype)
    assert torch.equal(floor, torch.div(a.float(), b.float(), rounding_mode="floor").to(dtype))
    assert torch.equal(ceil, -torch.div(-a.float(), b.float(), rounding_mode="floor").to(dtype))


def test_gcd_of_zeros_and_float_errors(native):
    a = torch.tensor([0, 0, -12, 7, 0, 9, -4, 6], dtype=torch.int32)
    b = torch.tensor([0, 5, 18, 0, -3, 6, -6, 4], dtype=torch.int32)
    (got,) = run_many([pypto.gcd], [a, b], torch.int32, tile=(8,))
    assert torch.equal(got, torch.gcd(a, b))

    def kernel(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8)
        out[:] = pypto.gcd(x, x)

    with pytest.raises(TypeError, match="gcd.*DT_FP32"):
        pypto.jit(kernel)(torch.zeros(8), torch.zeros(8))


# lrelu, prelu --------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["fp32", "fp16", "bf16"])
def test_lrelu_as_torch(native, dt):
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dt]
    x = float_inputs(dtype, -100, 100)
    got, slope, method = run_many([pypto.lrelu, lambda t: pypto.lrelu(t, 0.2),
                                   lambda t: t.lrelu(negative_slope=0.2)], [x], dtype)
    for g, s in ((got, 0.01), (slope, 0.2), (method, 0.2)):
        # (torch's CPU leaky_relu has no FP16: the FP32 product rounded once.)
        want = torch.where(x > 0, x, (x.float() * s).to(dtype))
        same = (g == want) | (g.isnan() & want.isnan())
        assert bool(same.all()), (s, x[~same][:4].tolist(), g[~same][:4].tolist(),
                                  want[~same][:4].tolist())
        assert torch.equal(g.signbit(), want.signbit()) or dt != "fp32"


@pytest.mark.parametrize("shape,wshape", [((2, 3, 4, 8), (3,)), ((4, 8), (8,)), ((4, 8), (1,)),
                                          ((16,), (1,))])
def test_prelu_as_torch(native, shape, wshape):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(shape, generator=g)
    x.view(-1)[:4] = torch.tensor([float("nan"), -0.0, float("-inf"), 0.0])
    w = torch.randn(wshape, generator=g)
    out = torch.zeros(shape)

    def kernel(a: ANY, wt: ANY, o: ANY):
        pypto.set_vec_tile_shapes(*(2, 3, 4, 8)[-len(shape):])
        o[:] = pypto.prelu(a, wt)

    pypto.jit(kernel)(x, w, out)
    want = torch.prelu(x, w)
    assert torch.equal(out.isnan(), want.isnan())
    assert torch.equal(out[~out.isnan()], want[~want.isnan()])


def test_prelu_weight_of_the_wrong_size_is_an_error(native):
    def kernel(a: ANY, wt: ANY, o: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        o[:] = pypto.prelu(a, wt)

    with pytest.raises(ValueError, match="weight.*one element or 8"):
        pypto.jit(kernel)(torch.zeros(4, 8), torch.zeros(5), torch.zeros(4, 8))


# tril, triu ---------------------------------------------------------------------------

@pytest.mark.parametrize("diagonal", [0, 2, -1, 20, -20])
def test_tril_triu_as_torch(native, diagonal):
    x = torch.randn(2, 6, 9)
    x[0, 0, 5] = float("nan")
    x[0, 5, 0] = float("-inf")
    outs = run_many([lambda t: pypto.tril(t, diagonal), lambda t: pypto.triu(t, diagonal),
                     lambda t: t.tril(diagonal), lambda t: t.triu(diagonal=diagonal)], [x],
                    torch.float32, tile=(1, 4, 8))
    for got, want in zip(outs, [x.tril(diagonal), x.triu(diagonal)] * 2):
        assert torch.equal(got.isnan(), want.isnan())
        assert torch.equal(got[~got.isnan()], want[~want.isnan()])


@pytest.mark.parametrize("dt", ["int32", "fp16", "bool"])
def test_tril_triu_other_dtypes(native, dt):
    dtype = {"int32": torch.int32, "fp16": torch.float16, "bool": torch.bool}[dt]
    x = (torch.arange(1, 41).reshape(5, 8) % 3).to(dtype)
    lo, hi = run_many([pypto.tril, lambda t: pypto.triu(t, 1)], [x], dtype)
    assert torch.equal(lo, x.tril()) and torch.equal(hi, x.triu(1))


def test_tril_with_a_symbolic_diagonal(native):
    @pypto.jit
    def kernel(x: pypto.Tensor(["n", 6, 8], pypto.DT_FP32),
               out: pypto.Tensor(["n", 6, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 8)
        out[:] = pypto.tril(x, x.shape[0] - 3)

    for n in (1, 5):
        x = torch.randn(n, 6, 8)
        out = torch.zeros(n, 6, 8)
        kernel(x, out)
        assert torch.equal(out, x.tril(n - 3)), n


def test_tril_and_triu_in_place(native):
    @pypto.jit
    def kernel(x: ANY, lo: ANY, hi: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        lo.move(x)
        lo.tril_(1)
        hi[:] = x
        hi.triu_()

    x = torch.randn(6, 8)
    lo, hi = torch.zeros(6, 8), torch.zeros(6, 8)
    kernel(x, lo, hi)
    assert torch.equal(lo, x.tril(1)) and torch.equal(hi, x.triu())


def test_tril_errors(native):
    def kernel(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8)
        out[:] = pypto.tril(x)

    with pytest.raises(ValueError, match="tril.*at least 2 dims"):
        pypto.jit(kernel)(torch.zeros(8), torch.zeros(8))

    def diag(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.triu(x, 1.5)

    with pytest.raises(TypeError, match="triu.*diagonal must be an int"):
        pypto.jit(diag)(torch.zeros(4, 8), torch.zeros(4, 8))

    @pypto.jit
    def dynamic(x: pypto.Tensor(["n", 8], pypto.DT_FP32), out: pypto.Tensor(["n", 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.tril(x)

    with pytest.raises(ValueError, match="tril.*last two dims must be static"):
        dynamic(torch.zeros(4, 8), torch.zeros(4, 8))


# precision_type, round(decimals), clip with tensor bounds, Tensor.where ---------------

PRECISION_OPS = {
    "div": lambda x, y, p: pypto.div(x, y, precision_type=p),
    "exp": lambda x, y, p: pypto.exp(x, precision_type=p),
    "log": lambda x, y, p: pypto.log(y, precision_type=p),
    "log2": lambda x, y, p: pypto.log2(y, precision_type=p),
    "log10": lambda x, y, p: pypto.log10(y, precision_type=p),
    "sqrt": lambda x, y, p: pypto.sqrt(y, precision_type=p),
    "rsqrt": lambda x, y, p: pypto.rsqrt(y, precision_type=p),
    "reciprocal": lambda x, y, p: pypto.reciprocal(x, precision_type=p),
    "pow": lambda x, y, p: pypto.pow(y, x, precision_type=p),
    "remainder": lambda x, y, p: pypto.remainder(x, y, precision_type=p),
    "fmod": lambda x, y, p: pypto.fmod(x, y, precision_type=p),
}


def test_precision_type_is_accepted_and_changes_nothing(native):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 8, generator=g)
    y = torch.rand(4, 8, generator=g) + 0.5
    names = sorted(PRECISION_OPS)
    fns = []
    for p in (None, "HIGH_PRECISION", pypto.PrecisionType.INTRINSIC):
        fns += [lambda a, b, f=PRECISION_OPS[n], p=p: f(a, b, p) for n in names]
    outs = run_many(fns, [x, y], torch.float32)
    k = len(names)
    for i, n in enumerate(names):
        assert torch.equal(outs[i], outs[k + i]) and torch.equal(outs[i], outs[2 * k + i]), n


def test_precision_type_of_another_value_is_an_error(native):
    def kernel(x: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8)
        out[:] = pypto.exp(x, precision_type="FAST")

    with pytest.raises(ValueError, match="exp: precision_type must be.*INTRINSIC.*'FAST'"):
        pypto.jit(kernel)(torch.zeros(8), torch.zeros(8))


def half_round(x, decimals):
    """torch.round(x, decimals) for FP16 as torch computes it for BF16 (its
    CPU round has no FP16): each step in FP32, rounded to FP16."""
    s = torch.tensor(10.0 ** abs(decimals)).half().float()
    step = (lambda v: v * s, lambda v: v / s) if decimals > 0 else (lambda v: v / s,
                                                                    lambda v: v * s)
    if decimals == 0:
        return torch.round(x.float()).half()
    y = step[0](x.float()).half()
    return step[1](torch.round(y.float()).half().float()).half()


@pytest.mark.parametrize("dt", ["fp32", "fp16", "bf16"])
def test_round_with_decimals_as_torch(native, dt):
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dt]
    x = torch.cat([torch.tensor(SPECIAL), torch.tensor([0.125, 0.375, 1.25, -2.675, 15.0, 25.0,
                                                        -35.0, 1234.5]),
                   torch.linspace(-300, 300, 104)]).to(dtype).reshape(8, 16)
    decimals = [0, 1, 2, -1, -2]
    outs = run_many([lambda t, d=d: pypto.round(t, decimals=d) for d in decimals] +
                    [lambda t: t.round(2)], [x], dtype)
    for d, got in zip(decimals + [2], outs):
        want = torch.round(x, decimals=d) if dt != "fp16" else half_round(x, d)
        same = (got == want) | (got.isnan() & want.isnan())
        assert bool(same.all()), (d, x[~same][:4].tolist(), got[~same][:4].tolist(),
                                  want[~same][:4].tolist())


def test_clip_with_tensor_bounds_as_torch_clamp(native):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 8, generator=g)
    x[0, 0] = float("nan")
    lo = torch.randn(8, generator=g) - 0.5
    hi = torch.randn(4, 1, generator=g) + 0.5
    lo[3] = float("nan")
    outs = run_many([lambda a, l, h: pypto.clip(a, l, h), lambda a, l, h: pypto.clip(a, min=l),
                     lambda a, l, h: pypto.clip(a, max=h), lambda a, l, h: pypto.clip(a, l, 0.25),
                     lambda a, l, h: a.clip(l, h)], [x, lo, hi], torch.float32, shape=(4, 8))
    wants = [torch.clamp(x, lo, hi), torch.clamp(x, min=lo), torch.clamp(x, max=hi),
             torch.clamp(x, lo, torch.tensor(0.25)), torch.clamp(x, lo, hi)]
    for k, (got, want) in enumerate(zip(outs, wants)):
        assert torch.equal(got.isnan(), want.isnan()), k
        assert torch.equal(got[~got.isnan()], want[~want.isnan()]), k


def test_tensor_where_method(native):
    g = torch.Generator().manual_seed(4)
    x, y = torch.randn(4, 8, generator=g), torch.randn(8, generator=g)

    @pypto.jit
    def kernel(a: ANY, b: ANY, out: ANY, scalar: ANY):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = a.where(a > b, b)
        scalar[:] = a.where(a > 0, 0.5)

    out, scalar = torch.zeros(4, 8), torch.zeros(4, 8)
    kernel(x, y, out, scalar)
    assert torch.equal(out, x.where(x > y, y))
    assert torch.equal(scalar, x.where(x > 0, torch.tensor(0.5)))
