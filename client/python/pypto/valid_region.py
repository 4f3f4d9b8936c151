"""Valid regions: PyPTO's `shape` and `valid_shape` of a traced tensor.

A tensor has a static shape and a valid region inside it: per dim, how many
leading elements hold data, often known only at run time. A dynamic batch
tiled in fixed-size views is the common case:

    for i in pypto.loop(pypto.ceildiv(n, 16)):
        t = pypto.view(x, [16, 64], [i * 16, 0])   # shape [16, 64]
        # t.valid_shape: [min(16, n - i*16), 64]; the last view is clipped

Here a traced tensor's `_shape` is its valid shape: the dims the graph
records for its value and that ops compute on; `_static` is its static
shape where that is larger (None otherwise), which the graph carries as the
value's shape beside its valid_shape (graph.proto Value.valid_shape). So
elementwise ops compute on the region valid in every operand, reductions
and matmul's K ignore the invalid tail, and an assemble writes the valid
region only. What lies outside the valid region is never computed or read
(pypto.fillpad makes it a value).

Rules (PyPTO's): a view's valid extent per dim is its valid_shape argument,
else clamp(input_valid - offset, 0, size); an elementwise op's is the
smallest of its operands' in each dim they do not broadcast along; a
reduction keeps its input's in the other dims. A valid extent is always
provably at most its static dim: one that is not is written min(size, e).
"""

from . import symbolic, tiling


def static_shape(t):
    """t's static shape (its valid shape where it has no other)."""
    return t._shape if t._static is None else t._static


def smaller(a, b):
    """The smaller of extents a and b (ints or SymbolicScalars), as simply
    as it is known: a itself when a is provably at most b."""
    if symbolic.same(a, b):
        return a
    if not symbolic.is_symbolic(a) and not symbolic.is_symbolic(b):
        return min(int(a), int(b))
    bound_a, bound_b = symbolic.constant_upper_bound(a), symbolic.constant_upper_bound(b)
    if not symbolic.is_symbolic(b) and bound_a is not None and bound_a <= int(b):
        return a
    if not symbolic.is_symbolic(a) and bound_b is not None and bound_b <= int(a):
        return b
    return symbolic.smin(a, b)


def clipped(size, available, loop_bounds):
    """A view dim's valid extent: `size` elements asked for where
    `available` (the input's valid extent past the offset) are. A symbolic
    size is the view's own extent (a region that leaves its tensor is an
    error at launch); a fixed size is clipped to what is available, unless
    the open loops' ranges (`loop_bounds`, the builder's) show there always
    are that many (x[i:i + 1] in a loop over i < n)."""
    if symbolic.is_symbolic(size) or symbolic.at_least(available, size, loop_bounds):
        return size
    return smaller(size, available)


def bounded(valid, size, what, d):
    """A valid_shape argument's dim d within static dim `size`, written so
    that it is provably at most `size` (min(size, valid) where needed)."""
    if isinstance(valid, bool) or not isinstance(valid, int):
        raise TypeError(f"{what}: valid_shape[{d}] must be an int or a SymbolicScalar, got "
                        f"{type(valid).__name__}")
    if not symbolic.is_symbolic(valid):
        valid = int(valid)
        if not symbolic.is_symbolic(size) and not 0 < valid <= size:
            raise ValueError(f"{what}: valid_shape[{d}] = {valid} must be in 1..{size} "
                             f"(shape[{d}])")
        if symbolic.is_symbolic(size):
            raise ValueError(f"{what}: valid_shape[{d}] = {valid} inside the dynamic "
                             f"shape[{d}] {size}: a valid region within a dynamic dim is "
                             f"not supported (give that dim a fixed size)")
        return valid
    if symbolic.same(valid, size):
        return valid
    if symbolic.is_symbolic(size):
        raise ValueError(f"{what}: valid_shape[{d}] {valid} inside the dynamic shape[{d}] "
                         f"{size}: a valid region within a dynamic dim is not supported "
                         f"(give that dim a fixed size)")
    return smaller(valid, size)


def valid_dims(valid_shape, shape, what):
    """A valid_shape argument checked against static `shape` (same rank,
    each dim as bounded() makes it)."""
    valid_shape = list(valid_shape)
    if len(valid_shape) != len(shape):
        raise ValueError(f"{what}: valid_shape {valid_shape} must have shape's rank "
                         f"{len(shape)}")
    return [bounded(v, s, what, d) for d, (v, s) in enumerate(zip(valid_shape, shape))]


def narrow(t, region, what, static=None):
    """t's leading `region` (a view at offset 0; `static`: its static
    shape), or t where that is all of its valid region."""
    region = tuple(region)
    if symbolic.same_shape(t._shape, region) and static is None:
        return t
    return t._builder.add_op("view", [t], t.dtype, region,
                             {"shape": list(region), "offsets": [0] * len(region)}, what,
                             tile=tiling.layout_tile(region), static=static)


def elementwise(what, operands):
    """Operands of an elementwise op (Tensors, or None for a number), each
    narrowed to the region valid in all of them, and the result's static
    shape (None: its valid shape). Static shapes broadcast as in numpy (the
    caller has checked they do); a dim an operand broadcasts along (size 1)
    does not limit the others."""
    tensors = [t for t in operands if t is not None]
    if all(t._static is None for t in tensors):
        return list(operands), None
    rank = max(len(t._shape) for t in tensors)
    static = [1] * rank
    valid = [None] * rank
    for t in tensors:
        lead = rank - len(t._shape)
        for k, (s, v) in enumerate(zip(static_shape(t), t._shape)):
            if symbolic.is_symbolic(s) or s != 1:
                static[lead + k] = s
                valid[lead + k] = v if valid[lead + k] is None else smaller(valid[lead + k], v)
    valid = [1 if v is None else v for v in valid]
    out = []
    for t in operands:
        if t is None:
            out.append(None)
            continue
        lead = rank - len(t._shape)
        region = [1 if not symbolic.is_symbolic(s) and s == 1 else valid[lead + k]
                  for k, s in enumerate(static_shape(t))]
        out.append(narrow(t, region, what))
    return out, (None if symbolic.same_shape(static, valid) else tuple(static))
