"""Tile shapes: set once, recorded on every op traced after the call.

Tile shapes choose how an op is split into per-core pieces; they change speed,
never results. The shapes in force are part of the traced graph (so of the
compile cache key). Shapes set inside a kernel apply to the rest of that
kernel's trace only, and only in the thread tracing it (trace_scope): other
threads calling kernels meanwhile see the shapes set outside kernels, and the
caller's shapes are back afterwards.
"""

import contextlib
import numbers
import threading

# (vector tile shape: a tuple of ints, cube tile shape: (m, k, n,
# enable_split_k)), each None before its first set. One object, replaced by
# every set: a jit function's repeat-call fast path knows nothing changed
# since its last call when this is still the object it saw (jit_function.py).
_state = (None, None)

# Per thread, while it traces a kernel (trace_scope): the state its kernel
# sets, in place of _state.
_tracing = threading.local()


def _get():
    state = getattr(_tracing, "state", None)
    return _state if state is None else state


def _set(state):
    global _state
    if getattr(_tracing, "state", None) is None:
        _state = state
    else:
        _tracing.state = state


@contextlib.contextmanager
def trace_scope():
    """While a kernel is traced in this thread: tile shapes it sets stay in
    this thread and end with the scope."""
    outer = getattr(_tracing, "state", None)
    _tracing.state = _get()
    try:
        yield
    finally:
        _tracing.state = outer


from .error import FeError


def _positive_int(x, what):
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise FeError(TypeError(f"{what} must be an int, got {type(x).__name__} {x!r}"))
    if int(x) <= 0:
        raise FeError(ValueError(f"{what} must be positive, got {int(x)}"))
    return int(x)


def set_vec_tile_shapes(*dims):
    """Sets the vector tile shape: 1 to 4 sizes. An op of rank r tiles with
    the first r entries (set_vec_tile_shapes(2, 8) tiles a 1-D op with [2]);
    an op of higher rank than the tile is an error naming the op.

    e.g. pypto.set_vec_tile_shapes(64, 128) for 2-D ops. Any positive size is
    accepted (PyPTO's 32-byte alignment of the last dim is not required here).
    """
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    if not 1 <= len(dims) <= 4:
        raise FeError(ValueError(
            f"pypto.set_vec_tile_shapes: expected 1 to 4 dims, got {len(dims)}"))
    vec = tuple(
        _positive_int(d, f"pypto.set_vec_tile_shapes: dim {i}") for i, d in enumerate(dims))
    _set((vec, _get()[1]))


def get_vec_tile_shapes():
    """The vector tile shape in force, as a list (empty if none was set)."""
    return list(_get()[0] or ())


def vec_tile_for_rank(tile, rank):
    """The tile an op of `rank` uses from `tile` (a set vector tile): its
    first `rank` entries. None when `tile` is None or shorter than `rank`
    (the caller names the op in its error)."""
    if tile is None or len(tile) < rank:
        return None
    return tuple(tile[:rank])


def layout_tile(shape):
    """The vector tile of a layout op's result (a view, reshape, assemble):
    the tile set for its rank, or the set tile's trailing dims (1s in front),
    or a default; clamped to the shape."""
    rank = len(shape)
    if rank == 0:
        return ()
    tile = current_vec_tile()
    if tile is None:
        tile = (8, 64)
    tile = tuple(tile)
    if len(tile) > rank:
        tile = tile[:rank]  # PyPTO: an op of rank r tiles with the first r entries
    elif len(tile) < rank:
        tile = ((1,) * rank + tile)[-rank:]
    return tuple(max(1, min(int(t), int(d))) for t, d in zip(tile, shape))


def _check_level_sizes(sizes, name, labels):
    """Each entry a positive int; every L1 size a multiple of (so at least)
    the L0 size."""
    where = "pypto.set_cube_tile_shapes"
    sizes = tuple(_positive_int(x, f"{where}: {name}{lab}") for x, lab in zip(sizes, labels))
    l0 = sizes[0]
    for l1, lab in zip(sizes[1:], labels[1:]):
        if l0 > l1:
            raise FeError(ValueError(
                f"{where}: constraint {name}L0 <= {name}{lab} violated ({l0} > {l1})"))
        if l1 % l0 != 0:
            raise FeError(ValueError(
                f"{where}: constraint {name}{lab} % {name}L0 == 0 violated "
                f"({l1} % {l0} = {l1 % l0})"))
    return sizes


def _pair(x, name):
    if not isinstance(x, (list, tuple)) or len(x) != 2:
        raise FeError(ValueError(
            f"pypto.set_cube_tile_shapes: {name} must be [{name}L0, {name}L1], got {x!r}"))
    return _check_level_sizes(x, name, ("L0", "L1"))


def _k_sizes(k):
    """k as PyPTO takes it: [kL0, kL1] or [kL0, kL1a, kL1b] (kL1b: the right
    operand's L1 size, any positive size; PyPTO's 2-entry form means
    kL1b = kL1)."""
    if not isinstance(k, (list, tuple)) or len(k) not in (2, 3):
        raise FeError(ValueError(
            f"pypto.set_cube_tile_shapes: k must be [kL0, kL1] or [kL0, kL1a, kL1b], "
            f"got {k!r}"))
    if len(k) == 2:
        return _check_level_sizes(k, "k", ("L0", "L1"))
    return _check_level_sizes(k[:2], "k", ("L0", "L1a")) + (
        _positive_int(k[2], "pypto.set_cube_tile_shapes: kL1b"),)


def set_cube_tile_shapes(m, k, n, enable_split_k=False):
    """Sets the cube (matmul) tile shape: m and n each [L0 size, L1 size], k
    [kL0, kL1] or [kL0, kL1a, kL1b]. The compiler stages K through L1 in
    chunks of kL1 (kL1a); kL1b is recorded (get_cube_tile_shapes)."""
    cube = (_pair(m, "m"), _k_sizes(k), _pair(n, "n"), bool(enable_split_k))
    _set((_get()[0], cube))


def get_cube_tile_shapes():
    """The cube tile shape in force as PyPTO gives it: a tuple
    ([mL0, mL1], k as set, [nL0, nL1], enable_split_k); () if none was set."""
    cube = _get()[1]
    if cube is None:
        return ()
    m, k, n, split = cube
    return (list(m), list(k), list(n), split)


@contextlib.contextmanager
def vec_tile_in_force(tile):
    """A scope in which `tile` is the vector tile (for ops pypto derives from
    another op, such as a matmul's epilogue); the state before is restored
    on exit."""
    saved = _get()
    _set((tuple(int(t) for t in tile), saved[1]))
    try:
        yield
    finally:
        _set(saved)


@contextlib.contextmanager
def cube_tile_in_force(m, k, n):
    """A scope in which set_cube_tile_shapes(m, k, n) is in force (for a
    matmul pypto derives, such as a conv's); the state before is restored
    on exit."""
    saved = _get()
    set_cube_tile_shapes(m, k, n)
    try:
        yield
    finally:
        _set(saved)


def _save():
    return _get()


def _restore(state):
    _set(state)


def current_vec_tile():
    return _get()[0]


def current_cube_tile():
    """(m, k, n, split_k) in force as the compiler takes it (k: [kL0, kL1],
    kL1 a 3-entry k's kL1a), or None."""
    cube = _get()[1]
    if cube is None:
        return None
    m, k, n, split = cube
    return (m, k[:2], n, split)
