"""pypto.uniform and pypto.normal: counter-based random numbers from
Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC'11; the Random123 reference constants), composed of integer ops on
DT_INT64 tensors holding 32-bit words, so they compile wherever those do;
each intermediate stays below 2**49 (the 32x32-bit products go through
16-bit halves), so eager runs, which hold values as float64, give the same
bits.

The stream is a pure function of (key, counter, shape, dtype): the same
arguments give the same bits in every call, with every tile shape and in
every compile; no state is kept between calls.

- key: an int in [0, 2**64) (words k0 = key & 0xFFFFFFFF, k1 = key >> 32) or
  a pair of 32-bit words (k0, k1).
- counter: an int in [0, 2**128) or up to four 32-bit words (low first).
- Element e of the result (row-major) is word e % 4 of
  Philox4x32-10(counter + e // 4, key): block j's counter is the 128-bit sum
  counter + j, split into four 32-bit words, low first. A call consumes
  ceil(numel / 4) counters; the next call should start at counter +
  ceil(numel / 4) for fresh numbers.
- uniform: word w as (w >> (32 - p)) * 2**-p, p the dtype's significand bits
  (24 for DT_FP32, 11 for DT_FP16, 8 for DT_BF16): exact multiples of 2**-p
  in [0, 1).
- normal: Box-Muller on the words of a block in pairs (w0, w1) and (w2, w3):
  u1 = ((w0 >> 8) + 1) * 2**-24 in (0, 1], u2 = (w1 >> 8) * 2**-24,
  z0 = sqrt(-2 ln u1) cos(2 pi u2), z1 = sqrt(-2 ln u1) sin(2 pi u2), in
  FP32 (FP16/BF16 rounded once from it).
"""

import math

from . import dtypes, layout, ops, tiling
from .primitives import creation_builder
from .symbolic import SymbolicScalar

PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10

_MASK = 0xFFFFFFFF
_ALG_NAMES = ("philox", "philox4x32", "philox4x3210")
_UNIFORM_BITS = {dtypes.DT_FP32: 24, dtypes.DT_FP16: 11, dtypes.DT_BF16: 8}


def _check_alg(what, alg):
    if alg is None:
        return
    name = alg.name if hasattr(alg, "name") else alg
    if not isinstance(name, str) or \
            name.lower().replace("-", "").replace("_", "") not in _ALG_NAMES:
        raise ValueError(f"{what}: alg {alg!r} is not a generator here; the one generator is "
                         f"Philox4x32-10 (alg='philox4x32-10', 'philox' or None)")


def _words(what, name, value, count):
    """`value` (an int, or a sequence of at most `count` 32-bit words, low
    first) as `count` words."""
    if isinstance(value, (list, tuple)):
        if len(value) > count or any(isinstance(w, bool) or not isinstance(w, int)
                                     or not 0 <= w <= _MASK for w in value):
            raise ValueError(f"{what}: {name} {value!r} must be at most {count} ints in "
                             f"[0, 2**32)")
        return list(value) + [0] * (count - len(value))
    if isinstance(value, SymbolicScalar) or isinstance(value, bool) or \
            not isinstance(value, int):
        raise TypeError(f"{what}: {name} must be an int known when tracing (or a sequence of "
                        f"32-bit words), got {type(value).__name__}")
    if not 0 <= value < 2 ** (32 * count):
        raise ValueError(f"{what}: {name} {value} is outside [0, 2**{32 * count})")
    return [(value >> (32 * i)) & _MASK for i in range(count)]


def _shape(what, shape):
    if isinstance(shape, int) and not isinstance(shape, (bool, SymbolicScalar)):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{what}: shape must be a sequence of ints, got {type(shape).__name__}")
    for d in shape:
        if isinstance(d, SymbolicScalar):
            raise ValueError(f"{what}: shape {list(shape)} has a dynamic dim; random tensors "
                             f"need static dims (generate the largest size and view it)")
        if isinstance(d, bool) or not isinstance(d, int) or d <= 0:
            raise ValueError(f"{what}: shape {list(shape)} must hold positive ints")
    return [int(d) for d in shape]


# Blocks per vector tile of the word arithmetic.
_BLOCKS_PER_TILE = 512


def _word_tile(nb):
    return (min(nb, _BLOCKS_PER_TILE),)


def _const(v):
    """A one-element DT_INT64 tensor of `v` (numbers past 2**24 with an
    integer tensor are tensors in pypto's arithmetic)."""
    return ops.full([1], v, dtypes.DT_INT64)


def _mulhilo(a, m, c):
    """(high, low) 32-bit words of the 64-bit product a * m (a: words in an
    INT64 tensor, m: a 32-bit constant), through 16-bit halves of m so that
    every intermediate stays below 2**49: exact in INT64 and in the float64
    values of eager runs alike. With t = a * (m >> 16) and u = a * (m &
    0xFFFF), a * m = t * 2**16 + u. `c` maps constants to their tensors."""
    t = ops.mul(a, c[m >> 16])
    u = ops.mul(a, c[m & 0xFFFF])
    low = ops.bitwise_and(ops.add(ops.bitwise_left_shift(ops.bitwise_and(t, c[0xFFFF]), c[16]),
                                  u), c[_MASK])
    high = ops.bitwise_right_shift(ops.add(t, ops.bitwise_right_shift(u, c[16])), c[16])
    return high, low


def _round_keys(k):
    """The key words of each of the PHILOX_ROUNDS rounds."""
    keys = []
    k0, k1 = k
    for _ in range(PHILOX_ROUNDS):
        keys.append((k0, k1))
        k0, k1 = (k0 + PHILOX_W0) & _MASK, (k1 + PHILOX_W1) & _MASK
    return keys


def _blocks(what, shape, key, counter, extra=()):
    """(words, numel, blocks, constants): the four Philox output words of
    each of ceil(numel / 4) blocks, as DT_INT64 tensors of shape [blocks],
    each word in [0, 2**32); constants maps each number used (and those in
    `extra`, for the caller) to its one-element tensor."""
    creation_builder(what)
    k = _words(what, "key", key, 2)
    c = _words(what, "counter", counter, 4)
    n = math.prod(shape)
    nb = (n + 3) // 4
    keys = _round_keys(k)
    # Every constant first, as a one-element tensor: the arithmetic after
    # them is then one run of ops (one fused group per tile).
    numbers = {_MASK, 0xFFFF, 16, 32} | {w for w in c if w} | \
        {m >> 16 for m in (PHILOX_M0, PHILOX_M1)} | {m & 0xFFFF for m in (PHILOX_M0, PHILOX_M1)} | \
        {w for pair in keys for w in pair} | set(extra)
    consts = {v: _const(v) for v in sorted(numbers)}
    with tiling.vec_tile_in_force(_word_tile(nb)):
        j = ops.arange(0, nb, dtype=dtypes.DT_INT64)
        # counter + j as four words, carrying (j < 2**31: each sum fits INT64).
        ctr, carry = [], j
        for w in c:
            s = ops.add(carry, consts[w]) if w else carry
            ctr.append(ops.bitwise_and(s, consts[_MASK]))
            carry = ops.bitwise_right_shift(s, consts[32])
        for k0, k1 in keys:
            hi0, lo0 = _mulhilo(ctr[0], PHILOX_M0, consts)
            hi1, lo1 = _mulhilo(ctr[2], PHILOX_M1, consts)
            ctr = [ops.bitwise_xor(ops.bitwise_xor(hi1, ctr[1]), consts[k0]), lo1,
                   ops.bitwise_xor(ops.bitwise_xor(hi0, ctr[3]), consts[k1]), lo0]
    return ctr, n, nb, consts


def _interleave(what, words, n, nb, shape):
    """[w0[0], w1[0], w2[0], w3[0], w0[1], ...] cut to n elements, reshaped."""
    t = _word_tile(nb)[0]
    with tiling.vec_tile_in_force((t, 4)):
        blocks = layout.concat([layout.unsqueeze(w, 1) for w in words], 1)
    with tiling.vec_tile_in_force((4 * t,)):
        flat = layout.reshape(blocks, [nb * 4])
    if nb * 4 != n:
        flat = layout.view(flat, [n], [0])
    return layout.reshape(flat, list(shape)) if len(shape) != 1 else flat


def _dtype(what, dtype):
    if dtype not in _UNIFORM_BITS:
        names = ", ".join(d.name for d in _UNIFORM_BITS)
        raise TypeError(f"{what}: dtype {getattr(dtype, 'name', dtype)!r} is not supported; "
                        f"random tensors are {names}")
    return dtype


def uniform(shape, key, counter, alg=None, dtype=dtypes.DT_FP32):
    """U[0, 1) of `shape` from Philox4x32-10 at (key, counter): word w
    becomes (w >> (32 - p)) * 2**-p, p = 24 (FP32), 11 (FP16), 8 (BF16).
    Reproducible: a pure function of its arguments (module docstring)."""
    what = "pypto.uniform"
    _check_alg(what, alg)
    dtype = _dtype(what, dtype)
    shape = _shape(what, shape)
    p = _UNIFORM_BITS[dtype]
    words, n, nb, consts = _blocks(what, shape, key, counter, extra=(32 - p,))
    with tiling.vec_tile_in_force(_word_tile(nb)):
        vals = [ops.mul(ops.cast(ops.bitwise_right_shift(w, consts[32 - p]), dtypes.DT_FP32),
                        2.0 ** -p)
                for w in words]
    out = _interleave(what, vals, n, nb, shape)
    return ops.cast(out, dtype) if dtype != dtypes.DT_FP32 else out


def normal(shape, key, counter, alg=None, dtype=dtypes.DT_FP32):
    """N(0, 1) of `shape` from Philox4x32-10 at (key, counter) through
    Box-Muller in FP32 (module docstring); FP16/BF16 are the FP32 values
    rounded once. Reproducible: a pure function of its arguments."""
    what = "pypto.normal"
    _check_alg(what, alg)
    dtype = _dtype(what, dtype)
    shape = _shape(what, shape)
    words, n, nb, consts = _blocks(what, shape, key, counter, extra=(8,))
    scale = 2.0 ** -24
    with tiling.vec_tile_in_force(_word_tile(nb)):
        def u(w):
            return ops.mul(ops.cast(ops.bitwise_right_shift(w, consts[8]), dtypes.DT_FP32),
                           scale)
        z = []
        for a, b in ((words[0], words[1]), (words[2], words[3])):
            u1 = ops.add(u(a), scale)
            r = ops.sqrt(ops.mul(ops.log(u1), -2.0))
            theta = ops.mul(u(b), 2.0 * math.pi)
            z += [ops.mul(r, ops.cos(theta)), ops.mul(r, ops.sin(theta))]
    out = _interleave(what, z, n, nb, shape)
    return ops.cast(out, dtype) if dtype != dtypes.DT_FP32 else out
