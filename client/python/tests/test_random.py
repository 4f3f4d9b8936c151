"""pypto.uniform and pypto.normal (rng.py): Philox4x32-10 checked bit for bit
against a numpy implementation of the generator written here (itself checked
against Random123's known-answer vectors), reproducibility across calls,
compiles and tile shapes, and statistics with fixed keys (deterministic, so
the bounds cannot flake)."""

import math

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]
MASK = 0xFFFFFFFF


def philox4x32_10(counters, key):
    """Random123's Philox4x32-10: counters an [n, 4] uint64 array of 32-bit
    words (low first), key two 32-bit words; returns [n, 4] words."""
    m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = key
    for _ in range(10):
        p0, p1 = c[0] * np.uint64(m0), c[2] * np.uint64(m1)
        hi0, lo0 = p0 >> np.uint64(32), p0 & np.uint64(MASK)
        hi1, lo1 = p1 >> np.uint64(32), p1 & np.uint64(MASK)
        c = [hi1 ^ c[1] ^ np.uint64(k0), lo1, hi0 ^ c[3] ^ np.uint64(k1), lo0]
        k0, k1 = (k0 + w0) & MASK, (k1 + w1) & MASK
    return np.stack(c, 1)


def words(n, key, counter):
    """The first n words of the stream at (key, counter), as rng.py lays it
    out: block j is counter + j (128-bit), element e is word e % 4 of block
    e // 4."""
    blocks = (n + 3) // 4
    ctr = np.array([[((counter + j) >> (32 * i)) & MASK for i in range(4)]
                    for j in range(blocks)], dtype=np.uint64)
    return philox4x32_10(ctr, (key & MASK, key >> 32)).reshape(-1)[:n]


def ref_uniform(shape, key, counter, bits=24):
    w = words(math.prod(shape), key, counter)
    return ((w >> np.uint64(32 - bits)).astype(np.float64) * 2.0 ** -bits).reshape(shape)


def ref_normal(shape, key, counter):
    n = math.prod(shape)
    w = words((n + 3) // 4 * 4, key, counter).reshape(-1, 2, 2)
    u1 = ((w[..., 0] >> np.uint64(8)).astype(np.float64) + 1) * 2.0 ** -24
    u2 = (w[..., 1] >> np.uint64(8)).astype(np.float64) * 2.0 ** -24
    r = np.sqrt(-2 * np.log(u1))
    z = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], -1)
    return z.reshape(-1)[:n].reshape(shape)


def test_the_numpy_reference_gives_random123s_known_answers():
    kat = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
           ((MASK,) * 4, (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
           ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in kat:
        got = philox4x32_10(np.array([ctr], dtype=np.uint64), key)[0]
        assert [int(v) for v in got] == list(want)


def generate(shapes, calls, tile=(8, 16)):
    """One kernel writing outs[k][:] = calls[k](); returns the outputs."""
    outs = [torch.zeros(s, dtype=d) for s, d in shapes]
    names = ", ".join(f"o{k}: ANY" for k in range(len(outs)))
    body = "".join(f"    o{k}[:] = calls[{k}]()\n" for k in range(len(outs)))
    ns = {"ANY": ANY, "pypto": pypto, "calls": calls, "tile": tile}
    exec(f"def kernel({names}):\n    pypto.set_vec_tile_shapes(*tile)\n{body}", ns)
    pypto.jit(ns["kernel"])(*outs)
    return outs


KEY, COUNTER = 0x0123456789ABCDEF, (3 << 64) + MASK - 2  # the counter carries across words


def test_the_philox_op_gives_random123s_known_answers(native):
    """rng's one generator op (philox: the TPHILOX instruction compiled, the
    reference evaluator's words in eager runs): each known answer as block
    0, the next blocks as the numpy generator's, in tiles of 16 and of 6
    (tiles that start inside a block)."""
    from pypto import rng
    kat = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
           ((MASK,) * 4, (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
           ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in kat:
        counter = sum(w << (32 * i) for i, w in enumerate(ctr))
        blocks = np.array([[((counter + j) % 2 ** 128 >> (32 * i)) & MASK for i in range(4)]
                           for j in range(10)], dtype=np.uint64)
        expected = torch.from_numpy(philox4x32_10(blocks, key).reshape(-1)[:38].astype(np.int64))
        for tile in ((16,), (6,)):
            calls = [lambda: rng._philox("test", list(key), list(ctr), 38)]
            compiled = generate([((38,), torch.int64)], calls, tile=tile)[0]
            with pypto.debug.eager():
                eager = generate([((38,), torch.int64)], calls, tile=tile)[0]
            assert compiled[:4].tolist() == list(want)
            assert torch.equal(compiled, expected) and torch.equal(eager, expected)


def test_uniform_is_philox_bit_for_bit(native):
    f32, f16, bf16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
    got = generate([((5, 7), torch.float32), ((3, 9), torch.float16),
                    ((13,), torch.bfloat16), ((2, 3, 4), torch.float32)],
                   [lambda: pypto.uniform([5, 7], KEY, COUNTER, "philox4x32-10", f32),
                    lambda: pypto.uniform([3, 9], KEY, COUNTER, None, f16),
                    lambda: pypto.uniform([13], 7, 0, "philox", bf16),
                    lambda: pypto.uniform((2, 3, 4), (1, 2), (5, 0, 1))])
    want = [ref_uniform((5, 7), KEY, COUNTER), ref_uniform((3, 9), KEY, COUNTER, 11),
            ref_uniform((13,), 7, 0, 8), ref_uniform((2, 3, 4), 1 + (2 << 32), 5 + (1 << 64))]
    for g, w in zip(got, want):
        assert torch.equal(g.double(), torch.from_numpy(w)), (g, w)
    assert all(((g >= 0) & (g < 1)).all() for g in got)


def test_normal_is_box_muller_of_philox(native):
    got = generate([((6, 5), torch.float32), ((4, 4), torch.bfloat16)],
                   [lambda: pypto.normal([6, 5], KEY, COUNTER, "philox", pypto.DT_FP32),
                    lambda: pypto.normal([4, 4], 9, 1, None, pypto.DT_BF16)])
    want = ref_normal((6, 5), KEY, COUNTER)
    # FP32 log/sqrt/cos/sin: within a few ulp of the float64 formula.
    np.testing.assert_allclose(got[0].double().numpy(), want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(got[1].double().numpy(), ref_normal((4, 4), 9, 1), rtol=8e-3,
                               atol=8e-3)


@pytest.mark.parametrize("shape, tile", [((6, 5), (8, 16)), ((1031,), (1024,)),
                                         ((3, 700), (3, 64)), ((4096,), (4096,))])
def test_the_fused_normal_is_the_composed_one_bit_for_bit(native, shape, tile):
    """normal's one op (philox_normal, TPHILOXNORMAL) against its
    composition of the philox words and elementwise ops: the same f32 steps
    through the same log/sqrt/cos/sin, so the same bits, whatever the tile
    (tiles that start inside a block, a last partial group)."""
    from pypto import rng
    n = math.prod(shape)
    fused, composed = generate(
        [(shape, torch.float32), (shape, torch.float32)],
        [lambda: pypto.normal(list(shape), KEY, COUNTER),
         lambda: rng._normal_composed(list(shape), KEY, COUNTER)], tile=tile)
    assert torch.equal(fused.view(torch.int32), composed.view(torch.int32))
    assert torch.isfinite(fused).all() and fused.abs().max() > 1
    np.testing.assert_allclose(fused.double().numpy(), ref_normal(shape, KEY, COUNTER),
                               rtol=2e-6, atol=2e-6)
    assert n == fused.numel()


def test_eager_normal_is_within_its_bound_of_the_compiled_one(native):
    @pypto.jit
    def k(z: ANY):
        pypto.set_vec_tile_shapes(8, 8)
        z[:] = pypto.normal([6, 7], KEY, COUNTER)

    compiled, eager = torch.zeros(6, 7), torch.zeros(6, 7)
    k(compiled)
    with pypto.debug.eager():
        k(eager)
    np.testing.assert_allclose(eager.double().numpy(), compiled.double().numpy(), rtol=2e-6,
                               atol=4e-6)
    assert not torch.equal(eager, torch.zeros(6, 7))


def test_same_key_same_bits_across_calls_compiles_and_tiles(native):
    shape = (33, 40)
    calls = [lambda: pypto.uniform(list(shape), 42, 0)]
    first = generate([(shape, torch.float32)], calls, tile=(8, 16))
    again = generate([(shape, torch.float32)], calls, tile=(8, 16))
    other_tile = generate([(shape, torch.float32)], calls, tile=(3, 64))
    assert torch.equal(first[0], again[0]) and torch.equal(first[0], other_tile[0])
    assert pypto.compile_stats()["compiles"] >= 2  # the second tile is its own compile
    assert torch.equal(first[0].double(), torch.from_numpy(ref_uniform(shape, 42, 0)))


def test_keys_and_counters(native):
    a, b, key2, key_high = generate(
        [((64,), torch.float32), ((32,), torch.float32), ((64,), torch.float32),
         ((64,), torch.float32)],
        [lambda: pypto.uniform([64], 1, 0), lambda: pypto.uniform([32], 1, 8),
         lambda: pypto.uniform([64], 2, 0), lambda: pypto.uniform([64], 1 << 32, 0)])
    # counter + 8 is the same stream 32 elements on.
    assert torch.equal(a[32:], b)
    # Another key (in either 32-bit word), or another counter: other numbers.
    for x, y in ((a, key2), (a, key_high), (key2, key_high), (a[:32], b)):
        assert (x != y).float().mean() > 0.9


def ks_statistic(sample, cdf):
    x = np.sort(sample)
    n = len(x)
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def test_statistics_of_uniform_and_normal(native):
    n = 1 << 16
    u, z = generate([((n,), torch.float32), ((n,), torch.float32)],
                    [lambda: pypto.uniform([n], 2024, 0), lambda: pypto.normal([n], 2024, 0)],
                    tile=(1024,))
    u, z = u.double().numpy(), z.double().numpy()
    # Bounds far outside what a fair generator shows at n = 65536 (5 sigma
    # or KS p < 1e-6); fixed keys make the test deterministic.
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    assert abs(u.var() - 1 / 12) < 0.003
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1) < 0.03
    assert ks_statistic(u, lambda x: x) < 2.6 / math.sqrt(n)
    normal_cdf = np.vectorize(lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2))))
    assert ks_statistic(z, normal_cdf) < 2.6 / math.sqrt(n)
    # Neighbouring elements (words of one block, and of adjacent blocks) are uncorrelated.
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 5 / math.sqrt(n)
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 5 / math.sqrt(n / 2)


@pytest.mark.parametrize("call, error, match", [
    (lambda: pypto.uniform([4], 1, 0, "mt19937"), ValueError,
     r"pypto.uniform: alg 'mt19937' is not a generator here; the one generator is "
     r"Philox4x32-10"),
    (lambda: pypto.normal([4], -1, 0), ValueError, r"pypto.normal: key -1 is outside \[0, 2\*\*64\)"),
    (lambda: pypto.uniform([4], 1, 2 ** 128), ValueError, r"counter .* is outside \[0, 2\*\*128\)"),
    (lambda: pypto.uniform([4], 1.5, 0), TypeError, r"pypto.uniform: key must be an int"),
    (lambda: pypto.uniform([4], (1, 2, 3), 0), ValueError, r"key \(1, 2, 3\) must be at most 2"),
    (lambda: pypto.uniform([0, 4], 1, 0), ValueError, r"shape \[0, 4\] must hold positive ints"),
    (lambda: pypto.uniform([4], 1, 0, None, pypto.DT_INT32), TypeError,
     r"pypto.uniform: dtype 'DT_INT32' is not supported; random tensors are DT_FP32, "
     r"DT_FP16, DT_BF16"),
])
def test_bad_arguments_are_clear_errors(call, error, match):
    @pypto.jit
    def k(out: ANY):
        pypto.set_vec_tile_shapes(8)
        out[:] = call()

    with pytest.raises(error, match=match):
        k(torch.zeros(4))


def test_a_dynamic_shape_is_a_clear_error():
    @pypto.jit
    def k(x: pypto.Tensor(["n"], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        x[:] = pypto.uniform([x.shape[0]], 1, 0)

    with pytest.raises(ValueError, match=r"pypto.uniform: shape .* has a dynamic dim"):
        k(torch.zeros(8))


def test_outside_a_kernel_is_a_clear_error():
    with pytest.raises(Exception, match=r"pypto.uniform"):
        pypto.uniform([4], 1, 0)


def test_eager_runs_give_the_same_bits(native):
    @pypto.jit
    def k(u: ANY):
        pypto.set_vec_tile_shapes(8, 8)
        u[:] = pypto.uniform([6, 7], KEY, COUNTER)

    compiled, eager = torch.zeros(6, 7), torch.zeros(6, 7)
    k(compiled)
    with pypto.debug.eager():
        k(eager)
    assert torch.equal(compiled, eager)
    assert torch.equal(eager.double(), torch.from_numpy(ref_uniform((6, 7), KEY, COUNTER)))
