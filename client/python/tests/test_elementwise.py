"""The elementwise ops from Python: function, operator and method
forms, numpy broadcasting, scalars on either side, BOOL results, where, and
special values (NaN, +-inf, -0.0), against numpy and torch."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]

SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 1e-30,
                    -1e30, 3.0, 100.0, -100.0, 0.1], np.float32)


def run1(fn, *arrays, out_shape=None, out_dtype=np.float32, tile=(4, 8)):
    """Traces `fn(*tensors)` into a kernel writing one output and runs it."""
    n = len(arrays)
    src = ", ".join(f"a{i}: ANY" for i in range(n))
    # The tile covers the largest input (a reduction's space).
    rank = max(len(a.shape) for a in arrays)
    ns = {"ANY": ANY, "pypto": pypto, "fn": fn, "tile": tile[-rank:]}
    exec(f"def body({src}, out: ANY):\n"
         f"    pypto.set_vec_tile_shapes(*tile)\n"
         f"    out[:] = fn({', '.join(f'a{i}' for i in range(n))})\n", ns)
    kernel = pypto.jit(ns["body"])
    if out_shape is None:
        out_shape = np.broadcast_shapes(*(a.shape for a in arrays))
    out = np.zeros(out_shape, out_dtype)
    kernel(*arrays, out)
    return out


def close(got, want, rtol=1e-6, atol=0.0):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    # Signs of zeros and infinities as numpy's.
    assert np.array_equal(np.signbit(got[got == 0]), np.signbit(want[got == 0]))


def special_grid():
    a = np.tile(SPECIAL, (16, 1))
    return a, a.T.copy()


@pytest.mark.parametrize("name,ref", [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
    ("pow", np.power), ("maximum", np.maximum), ("minimum", np.minimum),
])
def test_binary_special_values(native, name, ref):
    a, b = special_grid()
    got = run1(getattr(pypto, name), a, b, tile=(8, 8))
    with np.errstate(all="ignore"):
        want = ref(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    close(got, want, rtol=2e-6 if name == "pow" else 1e-6)


@pytest.mark.parametrize("name,ref", [
    ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
    ("gt", np.greater), ("ge", np.greater_equal),
])
def test_comparisons_give_bool(native, name, ref):
    a, b = special_grid()
    got = run1(getattr(pypto, name), a, b, out_dtype=np.bool_, tile=(8, 8))
    assert np.array_equal(got, ref(a, b))


UNARY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": np.reciprocal, "neg": np.negative,
    "abs": np.abs, "relu": lambda x: torch.relu(torch.from_numpy(x)).numpy(),
    "sigmoid": lambda x: torch.sigmoid(torch.from_numpy(x)).numpy(), "tanh": np.tanh,
    "erf": lambda x: torch.erf(torch.from_numpy(x)).numpy(),
    "erfc": lambda x: torch.erfc(torch.from_numpy(x)).numpy(), "sign": np.sign,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc, "sin": np.sin,
    "cos": np.cos,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_against_numpy(native, name):
    rng = np.random.default_rng(7)
    x = np.concatenate([SPECIAL, rng.uniform(-5, 5, 112).astype(np.float32)]).reshape(8, 16)
    # Method form where the name is a method (x.exp()), function form always.
    got_fn = run1(getattr(pypto, name), x)
    got_method = run1(lambda t: getattr(t, name)(), x)
    ref = UNARY[name]
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        want = (ref(x64) if name not in ("relu", "sigmoid", "erf", "erfc") else ref(x64))
        want = np.asarray(want).astype(np.float32)
    atol = 1e-6 if name in ("erf", "erfc") else 0.0
    rtol = 1e-6 if name in ("neg", "abs", "relu", "sign", "floor", "ceil", "round", "trunc",
                            "sqrt", "reciprocal") else 2e-6
    close(got_fn, want, rtol=rtol, atol=atol)
    np.testing.assert_array_equal(got_fn, got_method)


def test_operators_scalars_and_broadcasting(native):
    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 2, (5, 1, 33)).astype(np.float32)
    b = rng.uniform(0.5, 2, (7, 33)).astype(np.float32)
    # (Every op's result has rank 3 here: the tile shape has 3 dims.)
    got = run1(lambda x, y: (x ** 2 - 2 ** (x + y)) / x.maximum(y) + pypto.minimum(1.25, x * y),
               a, b, tile=(2, 4, 16))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = (a64 ** 2 - 2 ** (a64 + b64)) / np.maximum(a64, b64) + np.minimum(1.25, a64 * b64)
    # FP32 per op, with cancellation in the subtraction: bound the error by
    # the magnitudes of the terms (up to ~16), not by the result.
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert got.shape == (5, 7, 33)


def test_comparison_operators_and_where(native):
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (9, 20)).astype(np.float32)
    b = rng.uniform(-1, 1, (20,)).astype(np.float32)
    got = run1(lambda x, y: pypto.where(x < y, x, y), a, b)
    np.testing.assert_array_equal(got, np.where(a < b, a, b))
    got = run1(lambda x, y: pypto.where(0.5 <= x, 7, x + y), a, b)
    np.testing.assert_array_equal(got, np.where(0.5 <= a, np.float32(7), a + b))
    mask = run1(lambda x: x > 0, a, out_dtype=np.bool_)
    np.testing.assert_array_equal(mask, a > 0)
    got = run1(lambda m, x: pypto.where(m, x, -x), mask, a)
    np.testing.assert_array_equal(got, np.abs(a))


def test_clip_and_fp16(native):
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, (6, 40)).astype(np.float16)
    got = run1(lambda t: t.clip(-1, 0.3) + pypto.clip(t, min=0), x, out_dtype=np.float16)
    x32 = x.astype(np.float32)
    want = (np.clip(x32, -1, np.float16(0.3)).astype(np.float16).astype(np.float32)
            + np.maximum(x32, 0)).astype(np.float16)
    np.testing.assert_array_equal(got, want)
    t = torch.from_numpy(x)
    got = run1(lambda v: pypto.sigmoid(v) * v, x, out_dtype=np.float16)
    want = (torch.sigmoid(t.float()).half().float() * t.float()).half().numpy()
    np.testing.assert_array_max_ulp(got, want, maxulp=1)


def test_bad_input_names_op_and_operands():
    F32 = pypto.Tensor([], pypto.DT_FP32)

    @pypto.jit
    def bcast(a: F32, b: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = pypto.maximum(a, b)

    with pytest.raises(ValueError, match=r"pypto.maximum: shapes \[3, 4\] \('input'\) and "
                                         r"\[5, 4\] \('other'\) do not broadcast: dim -2"):
        bcast.trace(np.zeros((3, 4), np.float32), np.zeros((5, 4), np.float32),
                    np.zeros((3, 4), np.float32))

    @pypto.jit
    def boolexp(a: pypto.Tensor([], pypto.DT_BOOL), out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = pypto.exp(a)

    with pytest.raises(TypeError, match=r"pypto.exp: argument 'input' has dtype DT_BOOL; "
                                        r"pypto.exp takes DT_FP32, DT_FP16 or DT_BF16"):
        boolexp.trace(np.zeros((4, 4), np.bool_), np.zeros((4, 4), np.float32))

    @pypto.jit
    def badwhere(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = pypto.where(a, a, a)

    with pytest.raises(TypeError, match=r"pypto.where: argument 'condition' has dtype DT_FP32"):
        badwhere.trace(np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32))


@pytest.mark.parametrize("src,dst", [
    (np.float32, pypto.DT_INT8), (np.float32, pypto.DT_UINT8), (np.float32, pypto.DT_INT32),
    (np.float32, pypto.DT_INT64), (np.float32, pypto.DT_BOOL), (np.float32, pypto.DT_FP16),
    (np.float32, pypto.DT_DOUBLE), (np.int32, pypto.DT_FP16), (np.int64, pypto.DT_FP32),
    (np.int16, pypto.DT_INT8), (np.uint8, pypto.DT_INT8), (np.bool_, pypto.DT_FP32),
    (np.float64, pypto.DT_FP32), (np.float16, pypto.DT_INT16), (np.int8, pypto.DT_DOUBLE),
])
def test_cast_follows_torch(native, src, dst):
    rng = np.random.default_rng(11)
    if np.issubdtype(src, np.floating):
        x = rng.uniform(-300, 300, (6, 40)).astype(src)
        x[0, :4] = [-0.0, 0.5, -1.0, 255.7]
    elif src is np.bool_:
        x = rng.uniform(-1, 1, (6, 40)) > 0
    else:
        info = np.iinfo(src)
        x = rng.integers(max(info.min, -40000), min(info.max, 40000), (6, 40)).astype(src)
    torch_dt = {pypto.DT_INT8: torch.int8, pypto.DT_UINT8: torch.uint8,
                pypto.DT_INT16: torch.int16, pypto.DT_INT32: torch.int32,
                pypto.DT_INT64: torch.int64, pypto.DT_BOOL: torch.bool,
                pypto.DT_FP16: torch.float16, pypto.DT_FP32: torch.float32,
                pypto.DT_DOUBLE: torch.float64}[dst]
    want = torch.from_numpy(x).to(torch_dt).numpy()
    got = run1(lambda t: t.cast(dst), x, out_dtype=want.dtype)
    np.testing.assert_array_equal(got, want)


def test_bf16_computes_in_fp32_and_rounds(native):
    rng = np.random.default_rng(12)
    x = rng.uniform(-3, 3, (8, 48)).astype(np.float32)
    got = run1(lambda t: (pypto.cast(t, pypto.DT_BF16).exp() * 0.5).cast(pypto.DT_FP32), x,
               tile=(4, 16))
    tb = torch.from_numpy(x).to(torch.bfloat16)
    want = ((tb.float().exp().to(torch.bfloat16).float() * 0.5).to(torch.bfloat16)
            .float().numpy())
    # exp is within 2 ulp of f32 before rounding to bf16: at most 1 bf16 ulp apart.
    np.testing.assert_allclose(got, want, rtol=2 ** -7)
    assert np.mean(got == want) > 0.95


@pytest.mark.parametrize("kind", ["sum", "amax", "amin", "prod", "argmax", "argmin"])
@pytest.mark.parametrize("dim,keepdim", [(-1, False), (0, True), (1, True), (-2, False)])
def test_reductions_against_torch(native, kind, dim, keepdim):
    rng = np.random.default_rng(13)
    x = rng.uniform(-2, 2, (19, 70)).astype(np.float32)
    if kind == "prod":
        x = (1 + x / 32).astype(np.float32)
    x[3, 5] = np.nan  # propagates through amax/amin/sum/prod; argmax picks it
    t = torch.from_numpy(x).double()
    if kind in ("argmax", "argmin"):
        want = getattr(torch, kind)(t, dim=dim, keepdim=keepdim).numpy()
        out_dtype = np.int64
    else:
        fn = {"sum": torch.sum, "prod": torch.prod, "amax": torch.amax, "amin": torch.amin}
        want = fn[kind](t, dim=dim, keepdim=keepdim).numpy().astype(np.float32)
        out_dtype = np.float32
    # Method form; tiles split both dims (several partial results per row).
    got = run1(lambda v: getattr(v, kind)(dim=dim, keepdim=keepdim), x,
               out_shape=want.shape, out_dtype=out_dtype, tile=(8, 16))
    if out_dtype == np.int64:
        np.testing.assert_array_equal(got, want)
    else:
        mags = torch.sum(t.abs(), dim=dim, keepdim=keepdim).numpy()
        tol = 1e-5 * (mags if kind == "sum" else np.abs(want))
        ok = (np.abs(got - want) <= tol) | (np.isnan(got) & np.isnan(want))
        assert ok.all(), (got[~ok], want[~ok])


def test_softmax_and_rms_norm(native):
    rng = np.random.default_rng(14)
    x = rng.uniform(-5, 5, (32, 32, 1, 256)).astype(np.float32)
    got = run1(lambda v: pypto.softmax(v, -1), x, tile=(4, 4, 1, 64))
    want = torch.softmax(torch.from_numpy(x).double(), -1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    got = run1(lambda v: v.softmax(0), x[:, 0, 0, :].copy(), tile=(8, 64))
    want = torch.softmax(torch.from_numpy(x[:, 0, 0, :]).double(), 0).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    h = rng.uniform(-2, 2, (40, 96)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, (96,)).astype(np.float32)
    got = run1(lambda v, g: pypto.rms_norm(v, g, 1e-5), h, gamma, out_shape=h.shape,
               tile=(8, 32))
    hd = h.astype(np.float64)
    want = hd / np.sqrt(np.mean(hd * hd, -1, keepdims=True) + 1e-5) * gamma
    np.testing.assert_allclose(got, want, rtol=1e-5)


def _softmax_rows_reference(x):
    """exp(x - max) / sum, in float64, as the kernel defines it (NaN and inf as numpy's)."""
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x64 - x64.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("cols,tile", [(100, (4, 100)), (1, (4, 1)), (256, (1, 256))])
def test_softmax_special_rows(native, cols, tile):
    # Rows run one at a time through the fused x - max, exp, sum pass and the
    # f32 max with its NaN check: a NaN in a row, -inf entries, an all -inf
    # row, an inf, signed zeros; rows of 100 (a tail of 4 past the groups of
    # 16), rows of one value, a tile one row long; FP32 and FP16 rows.
    rng = np.random.default_rng(15)
    x = rng.uniform(-5, 5, (12, cols)).astype(np.float32)
    x[1, cols // 3] = np.nan
    x[2, [0, cols // 2, cols - 1]] = -np.inf
    x[3, :] = -np.inf
    x[4, cols // 4] = np.inf
    x[5, :] = 0.0
    x[5, ::3] = -0.0
    x[6, cols - 1] = np.nan  # in the tail
    got = run1(lambda v: pypto.softmax(v, -1), x, tile=tile)
    close(got, _softmax_rows_reference(x), rtol=1e-5, atol=1e-7)
    assert np.isnan(got[[1, 3, 4, 6]]).all()
    x16 = x.astype(np.float16)
    got16 = run1(lambda v: pypto.softmax(v, -1), x16, out_dtype=np.float16, tile=tile)
    want16 = _softmax_rows_reference(x16)
    # FP16 computes in FP32 and rounds once: within 1 FP16 ulp (half an ulp
    # of rounding, plus FP32's error); test_half_numerics counts the ulps.
    np.testing.assert_allclose(got16.astype(np.float64), want16, rtol=2.0 ** -10, atol=2.0 ** -24,
                               equal_nan=True)
    assert np.array_equal(np.isnan(got16), np.isnan(want16))


def test_softmax_fp32_normalises_by_one_reciprocal_per_row():
    # FP32 softmax multiplies by 1 / sum (one reciprocal per row) instead of
    # dividing each value; FP16 computes the same in FP32 between a cast in
    # and one cast out; an explicit division stays a division.
    def traced(dtype, fn):
        T = pypto.Tensor([], pypto.DT_FP32 if dtype == np.float32 else pypto.DT_FP16)

        @pypto.jit
        def k(a: T, out: T):
            pypto.set_vec_tile_shapes(4, 32)
            out[:] = fn(a)

        x = np.zeros((4, 32), dtype)
        return [op.kind for op in k.trace(x, x.copy()).ops]

    kinds = traced(np.float32, lambda v: pypto.softmax(v, -1))
    assert "reciprocal" in kinds and "div" not in kinds, kinds
    kinds = traced(np.float16, lambda v: pypto.softmax(v, -1))
    assert kinds == ["cast", "amax", "sub", "exp", "sum", "reciprocal", "mul", "cast"], kinds
    kinds = traced(np.float32, lambda v: v / v.sum(-1, keepdim=True))
    assert "div" in kinds and "reciprocal" not in kinds, kinds


def test_reduction_bad_dim():
    F32 = pypto.Tensor([], pypto.DT_FP32)

    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a.sum(dim=2)

    with pytest.raises(ValueError, match=r"pypto.sum: dim 2 is out of range for a tensor of "
                                         r"rank 2 \(valid: -2..1\)"):
        k.trace(np.zeros((4, 4), np.float32), np.zeros((4,), np.float32))


def test_creation_ops(native):
    x = np.linspace(-3, 3, 50).astype(np.float32)
    got = run1(lambda v: v + pypto.arange(50, dtype=pypto.DT_FP32) * 0.5
               + pypto.full((50,), 0.1) - pypto.ones(50) + pypto.zeros([50]), x, tile=(16,))
    want = x + np.arange(50, dtype=np.float32) * np.float32(0.5) + np.float32(0.1) - 1
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    got = run1(lambda v: pypto.arange(3, 53, 1).cast(pypto.DT_FP32) * v, x, tile=(16,))
    np.testing.assert_allclose(got, np.arange(3, 53) * x, rtol=1e-6)

    F32 = pypto.Tensor([], pypto.DT_FP32)

    @pypto.jit
    def k(a: F32, out: F32):
        pypto.set_vec_tile_shapes(4)
        out[:] = pypto.arange(0, 4, 0) + a

    with pytest.raises(ValueError, match="pypto.arange: step must not be 0"):
        k.trace(np.zeros(4, np.float32), np.zeros(4, np.float32))
