"""The numerics of FP16 and BF16: every unary op, the binary ops and
comparisons, and the reductions, within one unit in the last place of the output type of the
float64 result (they compute in FP32 and round to nearest even), with NaN,
+-inf and -0.0 as numpy's. Checked from torch tensors (numpy has no BF16),
one kernel per dtype and op family."""

import re
import subprocess

import numpy as np
import pytest
import torch

import many_outputs
import pypto
from test_debug_levels import ptoc_binary

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


def _special_rows(half, rows, cols, seed):
    """Random rows in [-5, 5] of `half`, and rows with a NaN, -inf entries, all
    -inf, a +inf, zeros of both signs and values large for the type."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(rows, cols, generator=g, dtype=torch.float64) * 10 - 5
    x[1, cols // 3] = float("nan")
    x[2, [0, cols // 2, cols - 1]] = float("-inf")
    x[3, :] = float("-inf")
    x[4, cols // 4] = float("inf")
    x[5, :] = 0.0
    x[5, ::3] = -0.0
    x[6, cols - 1] = float("nan")  # in the last group of the row
    big = 6e4 if half == "fp16" else 1e15  # squares past FP16's range, inside FP32's
    x[7] = x[7].sign() * big * (0.5 + x[7].abs() / 10)
    return x.to(HALF[half])


def _softmax64(x):
    return torch.softmax(x.double(), -1)


def _rms_norm64(x, gamma, eps):
    x = x.double()
    ms = (x * x).mean(-1, keepdim=True)
    return x * (1 / torch.sqrt(ms + eps)) * gamma.double()


@pytest.mark.parametrize("half", sorted(HALF))
def test_softmax_and_rms_norm_round_once_like_torch(native, half):
    # The composites compute FP16/BF16 in FP32 and round once (as torch's
    # fused softmax): within 1 ulp of the float64 result rounded to the
    # type, NaN rows as torch's; rounding after every op was ~4 FP16 ulps off.
    # Rows of 100 in tiles of 4x100 (one row group per tile) and, for
    # softmax, over dim 0 in tiles of 8 rows (partials, then the combine).
    x = _special_rows(half, 12, 100, 41)
    gamma = (torch.rand(100, generator=torch.Generator().manual_seed(42)) * 4 - 2).to(HALF[half])
    softmax, rms, plain = run_many(
        [lambda v, g: pypto.softmax(v, -1), lambda v, g: pypto.rms_norm(v, g, 1e-5),
         lambda v, g: pypto.rms_norm(v)], [x, gamma], HALF[half], tile=(4, 100))
    assert_within_one_ulp(softmax, _softmax64(x), f"{half} softmax")
    assert_within_one_ulp(rms, _rms_norm64(x, gamma, 1e-5), f"{half} rms_norm")
    assert_within_one_ulp(plain, _rms_norm64(x, torch.ones(1), 1e-6), f"{half} rms_norm()")
    assert bool(softmax[[1, 3, 4, 6]].isnan().all())
    assert not bool(rms[7].isinf().any())  # FP16's x * x would be inf
    y = (torch.rand(24, 40, generator=torch.Generator().manual_seed(43)) * 16 - 8).to(HALF[half])
    (dim0,) = run_many([lambda v: pypto.softmax(v, 0)], [y], HALF[half], tile=(8, 40))
    assert_within_one_ulp(dim0, torch.softmax(y.double(), 0), f"{half} softmax dim 0")


def test_half_composites_are_one_block_per_tile_with_fp32_intermediates(tmp_path):
    # FP16 softmax and rms_norm as the compiler sees them (ptoc on the traced
    # graph): the cast in, the FP32 computation and the cast out fused into
    # one group per tile whose intermediates are f32 UB tiles, never stored
    # to GM; the only workspace is gamma's FP32 copy, cast once by a group of
    # its own. Tiles of 4x1024 FP16 fit the 192 KiB UB with f32 intermediates.
    T16 = pypto.Tensor([], pypto.DT_FP16)

    @pypto.jit
    def k(a: T16, gamma: T16, out: T16, out2: T16):
        pypto.set_vec_tile_shapes(4, 1024)
        out[:] = pypto.softmax(a, -1)
        out2[:] = pypto.rms_norm(a, gamma)

    x = np.zeros((16, 1024), np.float16)
    path = pypto.debug.save_graph(k, str(tmp_path / "k.pbtxt"), x, np.zeros(1024, np.float16),
                                  x.copy(), x.copy())
    r = subprocess.run([ptoc_binary(), f"--graph={path}", "--print=block,pto"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    block = r.stdout.split("==== pto ====")[0]
    groups = re.findall(r"group #\d+ grid=\[([\d,]+)\]", block)
    assert groups == ["4,1", "1", "4,1"], block  # softmax, gamma's cast, rms_norm
    funcs = re.findall(r"\.func @f\d+ .*?\.end", r.stdout, re.S)
    assert len(funcs) == 3, r.stdout
    assert re.findall(r"\.buffer %\d+ workspace (\S+)", r.stdout) == ["f32[1024]"], r.stdout
    for f in (funcs[0], funcs[2]):
        body = [line.split()[0] for line in f.splitlines()[1:-1]]
        loads = body.count("TLOAD")
        assert body[:loads] == ["TLOAD"] * loads and body[loads] == "TCVT", f
        assert body[-2:] == ["TCVT", "TSTORE"], f
        assert body.count("TCVT") == 2 and body.count("TSTORE") == 1, f
        computed = re.findall(r"%t\d+:ub\.(\w+)\[", f)
        assert computed.count("f16") == 2 and set(computed) == {"f16", "f32"}, f


def test_half_composites_over_a_dynamic_last_dim(native):
    # The same over a DYNAMIC last dim (one compile for every n): softmax's
    # row group within the symbolic row cap and the accumulating form past
    # it (5000), rms_norm's mean dividing by n at launch.
    F16 = pypto.DT_FP16

    @pypto.jit
    def softmax(x: pypto.Tensor([8, "n"], F16), out: pypto.Tensor([8, "n"], F16)):
        pypto.set_vec_tile_shapes(4, 256)
        out[:] = pypto.softmax(x, -1)

    @pypto.jit
    def rms(x: pypto.Tensor([8, "n"], F16), gamma: pypto.Tensor(["n"], F16),
            out: pypto.Tensor([8, "n"], F16)):
        pypto.set_vec_tile_shapes(4, 256)
        out[:] = pypto.rms_norm(x, gamma, 1e-5)

    for n in (7, 1000, 5000):
        x = _special_rows("fp16", 8, n, 44 + n)
        gamma = (torch.rand(n, generator=torch.Generator().manual_seed(n)) * 4 - 2).to(torch.float16)
        out = torch.full_like(x, float("nan"))
        softmax(x, out)
        assert_within_one_ulp(out, _softmax64(x), f"softmax n={n}")
        out = torch.full_like(x, float("nan"))
        rms(x, gamma, out)
        assert_within_one_ulp(out, _rms_norm64(x, gamma, 1e-5), f"rms_norm n={n}")
    stats = pypto.compile_stats()
    assert stats["compiles"] == 2, stats  # each kernel once


@pytest.mark.parametrize("half", sorted(HALF))
def test_sizes_and_loop_indices_meet_half_tensors_as_in_torch(native, half):
    # A size known only at run time (x.shape[-1] of a DYNAMIC dim) or a
    # pypto.loop index used as a number meets an FP16/BF16 tensor as a Python
    # number does: rounded to the tensor's dtype first, at launch (torch
    # rounds the int: n = 2049 is 2048 in FP16, 257 is 256 in BF16), for
    # arithmetic on either side and comparisons. Bit for bit as torch.
    dt = HALF[half]
    D = pypto.DYNAMIC
    cases = [
        (lambda v, n: v * n, lambda t, n: t * n), (lambda v, n: v + n, lambda t, n: t + n),
        (lambda v, n: n - v, lambda t, n: n - t), (lambda v, n: v / n, lambda t, n: t / n),
        (lambda v, n: pypto.div(n, v), lambda t, n: torch.div(torch.full_like(t, n), t)),
        (lambda v, n: pypto.maximum(v, n), lambda t, n: torch.maximum(t, torch.full_like(t, n))),
    ]
    compare = [(lambda v, n: pypto.eq(v, n), lambda t, n: t == n), (lambda v, n: v < n, lambda t, n: t < n),
               (lambda v, n: v >= n, lambda t, n: t >= n)]
    ns = {}
    body = "".join(f"    o{k}[:] = fns[{k}](x, x.shape[-1])\n" for k in range(len(cases)))
    body += "".join(f"    c{k}[:] = cmps[{k}](x, x.shape[-1])\n" for k in range(len(compare)))
    outs = ", ".join([f"o{k}: pypto.Tensor([3, D], dt)" for k in range(len(cases))] +
                     [f"c{k}: pypto.Tensor([3, D], pypto.DT_BOOL)" for k in range(len(compare))])
    ns = {"pypto": pypto, "D": D, "dt": getattr(pypto, "DT_" + half.upper()),
          "fns": [f for f, _ in cases], "cmps": [f for f, _ in compare]}
    exec(f"def kernel(x: pypto.Tensor([3, D], dt), {outs}):\n"
         f"    pypto.set_vec_tile_shapes(3, 64)\n{body}", ns)
    kernel = pypto.jit(ns["kernel"])
    for n in (2049, 257, 4097, 65):  # FP16 rounds the first and third, BF16 all but 65
        g = torch.Generator().manual_seed(n)
        x = ((torch.rand(3, n, generator=g) * 4 - 2) * torch.tensor([[1.0], [300.0], [1.0]]))
        x[2, :4] = torch.tensor([float(n), float(torch.tensor(float(n)).to(dt)), 0.0, -0.0])
        x = x.to(dt)
        got = [torch.zeros(3, n, dtype=dt) for _ in cases]
        got_c = [torch.zeros(3, n, dtype=torch.bool) for _ in compare]
        kernel(x, *got, *got_c)
        for k, ((_, ref), o) in enumerate(zip(cases, got)):
            want = ref(x, n)
            same = (o == want) | (o.isnan() & want.isnan())
            assert bool(same.all()), f"{half} n={n} case {k}: got {o[~same][:6].tolist()} want {want[~same][:6].tolist()}"
        for k, ((_, ref), o) in enumerate(zip(compare, got_c)):
            assert torch.equal(o, ref(x, n)), f"{half} n={n} comparison {k}"
    assert pypto.compile_stats()["compiles"] == 1

    # A loop index: out[i] = x[i] * (i + 2045) for i < 6 (FP16 rounds 2049 and 2050).
    @pypto.jit
    def loop(x: pypto.Tensor([D, 8], ns["dt"]), out: pypto.Tensor([D, 8], ns["dt"])):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(x.shape[0]):
            out[i:i + 1, :] = x[i:i + 1, :] * (i + 2045) - (i + 253)
    x = (torch.rand(6, 8, generator=torch.Generator().manual_seed(7)) * 2 + 1).to(dt)
    out = torch.zeros_like(x)
    loop(x, out)
    want = torch.stack([x[i] * (i + 2045) - (i + 253) for i in range(6)])
    assert torch.equal(out, want), f"{half} loop: got {out} want {want}"


def test_half_times_a_size_is_one_group_with_a_scalar_operand(tmp_path):
    # FP16 x * n with n a DYNAMIC size, as the compiler sees it (ptoc on the
    # traced graph): one group whose TMULS takes n as a dynamic arg (the
    # kernel rounds it to FP16 at launch, as the test above checks), not a
    # one-element tensor of n filled by a group of its own and loaded
    # broadcast.
    @pypto.jit
    def k(x: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP16),
          out: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = x * x.shape[-1]

    x = np.zeros((4, 256), np.float16)
    path = pypto.debug.save_graph(k, str(tmp_path / "k.pbtxt"), x, x.copy())
    r = subprocess.run([ptoc_binary(), f"--graph={path}", "--print=block,pto"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    block = r.stdout.split("==== pto ====")[0]
    assert len(re.findall(r"^ *group #\d+ grid=", block, re.M)) == 1, block
    assert "workspace" not in r.stdout, r.stdout
    funcs = re.findall(r"\.func @f\d+ .*?\.end", r.stdout, re.S)
    assert funcs, r.stdout
    for f in funcs:
        body = [w[0] for w in map(str.split, f.splitlines()[1:-1]) if w and w[0] != ".arg"]
        assert body == ["TLOAD", "TMULS", "TSTORE"], f
        assert re.search(r"TMULS +%t\d+:ub\.f16\[[\d,]+\], %t\d+, d\d+", f), f
