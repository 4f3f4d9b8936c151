"""Tile shapes: set once, recorded on every op traced after the call.

Tile shapes choose how an op is split into per-core pieces; they change speed,
never results. The shapes in force are part of the traced graph (so of the
compile cache key). Shapes set inside a kernel apply to the rest of that
kernel's trace only: the tracer restores the caller's shapes afterwards, so
tracing a kernel never leaks state into the next call.
"""

import numbers

# (vector tile shape: a tuple of ints, cube tile shape: (m, k, n,
# enable_split_k)), each None before its first set. One object, replaced by
# every set: a jit function's repeat-call fast path knows nothing changed
# since its last call when this is still the object it saw (jit_function.py).
_state = (None, None)


def _positive_int(x, what):
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {type(x).__name__} {x!r}")
    if int(x) <= 0:
        raise ValueError(f"{what} must be positive, got {int(x)}")
    return int(x)


def set_vec_tile_shapes(*dims):
    """Sets the vector tile shape, one size per dim of the ops that follow.

    e.g. pypto.set_vec_tile_shapes(64, 128) for 2-D ops. Any positive size is
    accepted (PyPTO's 32-byte alignment of the last dim is not required here).
    """
    global _state
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    if not 1 <= len(dims) <= 4:
        raise ValueError(
            f"pypto.set_vec_tile_shapes: expected 1 to 4 dims, got {len(dims)}")
    vec = tuple(
        _positive_int(d, f"pypto.set_vec_tile_shapes: dim {i}") for i, d in enumerate(dims))
    _state = (vec, _state[1])


def get_vec_tile_shapes():
    """The vector tile shape in force, as a list (empty if none was set)."""
    return list(_state[0] or ())


def _pair(x, name):
    if not isinstance(x, (list, tuple)) or len(x) != 2:
        raise ValueError(f"pypto.set_cube_tile_shapes: {name} must be [{name}L0, {name}L1], got {x!r}")
    l0 = _positive_int(x[0], f"pypto.set_cube_tile_shapes: {name}L0")
    l1 = _positive_int(x[1], f"pypto.set_cube_tile_shapes: {name}L1")
    if l0 > l1:
        raise ValueError(
            f"pypto.set_cube_tile_shapes: constraint {name}L0 <= {name}L1 violated ({l0} > {l1})")
    if l1 % l0 != 0:
        raise ValueError(
            f"pypto.set_cube_tile_shapes: constraint {name}L1 % {name}L0 == 0 violated "
            f"({l1} % {l0} = {l1 % l0})")
    return (l0, l1)


def set_cube_tile_shapes(m, k, n, enable_split_k=False):
    """Sets the cube (matmul) tile shape: m, k, n each [L0 size, L1 size]."""
    global _state
    cube = (_pair(m, "m"), _pair(k, "k"), _pair(n, "n"), bool(enable_split_k))
    _state = (_state[0], cube)


def get_cube_tile_shapes():
    """The cube tile shape in force as ([mL0, mL1], [kL0, kL1], [nL0, nL1], split_k)."""
    if _state[1] is None:
        return []
    m, k, n, split = _state[1]
    return [list(m), list(k), list(n), split]


def _save():
    return _state


def _restore(state):
    global _state
    _state = state


def current_vec_tile():
    return _state[0]


def current_cube_tile():
    """(m, k, n, split_k) in force, or None."""
    return _state[1]
