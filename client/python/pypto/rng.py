"""pypto.uniform and pypto.normal: counter-based random numbers from
Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC'11; the Random123 reference constants). uniform's generator is one op,
`philox` (the TPHILOX instruction: its 32-bit words as DT_INT64 values, on
host targets; eager runs compute the same words in the reference
evaluator), and its numbers are elementwise float ops on the words.
normal's is one op too, `philox_normal` (TPHILOXNORMAL: the Box-Muller
transform below computed from the counter in registers, the same f32 steps
and bits as `_normal_composed`, its composition of `philox` and elementwise
ops).

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

_MASK = 0xFFFFFFFF
_ALG_NAMES = ("philox", "philox4x32", "philox4x3210")
_UNIFORM_BITS = {dtypes.DT_FP32: 24, dtypes.DT_FP16: 11, dtypes.DT_BF16: 8}
# Words per vector tile.
_WORDS_PER_TILE = 2048


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


def _key_counter(what, key, counter):
    """The key's two words and the counter's four, checked (inside a kernel
    only)."""
    creation_builder(what)
    return _words(what, "key", key, 2), _words(what, "counter", counter, 4)


def _philox(what, k, c, m, kind="philox", dtype=dtypes.DT_INT64):
    """The first `m` elements of the stream at key words `k`, counter words
    `c`: for kind "philox" a DT_INT64 tensor [m] of 32-bit words, element e
    word e % 4 of block e // 4; for "philox_normal" a DT_FP32 tensor [m] of
    normals, element e z(e % 4) of block e // 4 (one op)."""
    b = creation_builder(what)
    attrs = {"shape": [m], "dtype": dtype,
             "key0": float(k[0]), "key1": float(k[1]),
             **{f"counter{i}": float(w) for i, w in enumerate(c)}}
    with tiling.vec_tile_in_force((min(m, _WORDS_PER_TILE),)):
        return b.add_op(kind, [], dtype, (m,), attrs, what)


def _const(v):
    """A one-element DT_INT64 tensor of `v` (a shift count: shifts take
    tensors)."""
    return ops.full([1], v, dtypes.DT_INT64)


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
    n = math.prod(shape)
    k, c = _key_counter(what, key, counter)
    shift = _const(32 - p)
    words = _philox(what, k, c, n)
    with tiling.vec_tile_in_force((min(n, _WORDS_PER_TILE),)):
        out = ops.mul(ops.cast(ops.bitwise_right_shift(words, shift), dtypes.DT_FP32),
                      2.0 ** -p)
    if len(shape) != 1:
        out = layout.reshape(out, list(shape))
    return ops.cast(out, dtype) if dtype != dtypes.DT_FP32 else out


def normal(shape, key, counter, alg=None, dtype=dtypes.DT_FP32):
    """N(0, 1) of `shape` from Philox4x32-10 at (key, counter) through
    Box-Muller in FP32 (module docstring); FP16/BF16 are the FP32 values
    rounded once. Reproducible: a pure function of its arguments."""
    what = "pypto.normal"
    _check_alg(what, alg)
    dtype = _dtype(what, dtype)
    shape = _shape(what, shape)
    n = math.prod(shape)
    k, c = _key_counter(what, key, counter)
    out = _philox(what, k, c, n, "philox_normal", dtypes.DT_FP32)
    if len(shape) != 1:
        out = layout.reshape(out, list(shape))
    return ops.cast(out, dtype) if dtype != dtypes.DT_FP32 else out


def _normal_composed(shape, key, counter, dtype=dtypes.DT_FP32):
    """normal's values composed of the `philox` words and elementwise ops
    (shifts, casts, log, sqrt, cos, sin): the same f32 steps as
    TPHILOXNORMAL, so the same bits on a host target (test_random checks
    it)."""
    what = "pypto.normal"
    dtype = _dtype(what, dtype)
    shape = _shape(what, shape)
    n = math.prod(shape)
    pairs = (n + 1) // 2  # (w0, w1), (w2, w3), ...: two results each
    k, c = _key_counter(what, key, counter)
    shift = _const(8)
    words = _philox(what, k, c, 2 * pairs)
    scale = 2.0 ** -24
    rows = min(pairs, _WORDS_PER_TILE // 2)
    with tiling.vec_tile_in_force((rows, 2)):
        w = layout.reshape(words, [pairs, 2])
        with tiling.vec_tile_in_force((rows, 1)):
            def u(k):
                return ops.mul(ops.cast(ops.bitwise_right_shift(
                    layout.view(w, [pairs, 1], [0, k]), shift), dtypes.DT_FP32), scale)
            u1 = ops.add(u(0), scale)
            r = ops.sqrt(ops.mul(ops.log(u1), -2.0))
            theta = ops.mul(u(1), 2.0 * math.pi)
            z = [ops.mul(r, ops.cos(theta)), ops.mul(r, ops.sin(theta))]
        out = layout.concat(z, 1)
    with tiling.vec_tile_in_force((min(2 * pairs, _WORDS_PER_TILE),)):
        out = layout.reshape(out, [2 * pairs])
        if 2 * pairs != n:
            out = layout.view(out, [n], [0])
    if len(shape) != 1:
        out = layout.reshape(out, list(shape))
    return ops.cast(out, dtype) if dtype != dtypes.DT_FP32 else out
