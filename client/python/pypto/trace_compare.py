"""Catching a dynamic size's placeholder baked into a kernel.

A kernel with DYNAMIC dims is traced once, at a placeholder size per dynamic
dim (symbolic.sentinels: large primes), and its graph writes those dims as
symbols, never as sizes, so one compile serves every size. Python code of
the user's own can still turn a placeholder into a plain number that pypto
never sees: `scale = 1.0 / x.shape[-1]` runs float.__truediv__ (a
SymbolicScalar is an int), `float(n)`, `math.sqrt(n)`, a list of n items.
The graph then holds a constant or a structure that is right only at the
placeholder size: compiled once, the kernel would give wrong results at
every real size, silently.

So a kernel with dynamic dims is traced a second time with every dynamic
size at another placeholder (symbolic.sentinels(..., second=True)). Where
no value computed from a size left pypto's symbols, the two graphs are
equal; a difference means such a value reached a constant, an attribute or
the control structure. check() then warns once (DynamicSizeWarning, naming
the kernel, the first differing op and the user's line that recorded it)
and raises PlaceholderLeak, a StaticShapeNeeded: the jit function traces
and compiles that kernel once per size instead (correct at every size) and
remembers the verdict with the signature, so later calls trace nothing.

Both placeholders are large primes in the same order, so pypto's own
checks at trace time (a view inside its tensor, a tile no larger than a
dim, one size against another) decide the same way at both. What the
comparison cannot see is a value that is the same at both placeholders,
e.g. `if int(n) > 100:` (true at both); `if n > 100:` itself is a TypeError
pointing at pypto.cond (symbolic.py).

A Python loop over a dynamic size itself (`for j in range(x.shape[0])`)
cannot be intercepted either (range() takes an int subclass as it is) and
would record a million iterations' ops at the placeholder, for many
minutes: a trace at placeholder sizes that records more than
MAX_OPS_AT_PLACEHOLDERS ops stops there (too_many_ops, called by the
tracer) with the same warning and per-size compile.
"""

import warnings

from google.protobuf import text_format

from . import frames
from .errors import DynamicSizeWarning, StaticShapeNeeded

_REGION_NAMES = {"loop": ("body",), "if": ("then", "else")}

# More ops than this in a trace at placeholder sizes is taken for a Python
# loop over a dynamic size (the kernels in tests/ and examples/ record at most
# a few hundred; 10000 take seconds to trace, a million minutes).
MAX_OPS_AT_PLACEHOLDERS = 10_000


class PlaceholderLeak(StaticShapeNeeded):
    """A value computed in Python from a dynamic size reached the graph (the
    two traces differ): compile per size."""


def check(kernel, graph, where, sizes, trace_again):
    """Raises PlaceholderLeak, after a DynamicSizeWarning, when
    `trace_again()` (the kernel traced at the second placeholders: (graph,
    where, sizes)) differs from `graph` (traced at `sizes`, {symbol:
    placeholder}; `where`: its op locations, locations.py)."""
    sizes2 = None
    try:
        graph2, where2, sizes2 = trace_again()
    except PlaceholderLeak:  # too_many_ops: already said
        raise
    except Exception as e:  # noqa: BLE001 - the first trace passed: size-dependent
        label, what = None, (f"tracing with other placeholder sizes failed "
                             f"({type(e).__name__}: {e})")
    else:
        found = first_difference(graph, graph2)
        if found is None:
            return
        label, in_second, subject, a, b = found
        if in_second:
            where = where2
        what = (f"{subject} is {a} when traced with {_sizes_text(sizes)}, {b} with "
                f"{_sizes_text(sizes2)}")
    _leak(kernel, where.get(label) if label else None, what)


def too_many_ops(builder):
    """Raises PlaceholderLeak, after a DynamicSizeWarning: `builder`, tracing
    at placeholder sizes, has recorded more than MAX_OPS_AT_PLACEHOLDERS ops."""
    sizes = {name: size for size, name in builder.symbols.items()}
    _leak(builder.name, frames.user_frame(),
          f"more than {MAX_OPS_AT_PLACEHOLDERS} ops recorded when traced with "
          f"{_sizes_text(sizes)}: a Python loop over a dynamic size? pypto.loop traces its "
          f"body once")


def _leak(kernel, w, what):
    at = f", at {frames.describe(w)}" if w else ""
    message = (
        f"kernel '{kernel}' is compiled once per size: its graph depends on a value computed "
        f"in Python from a dynamic size{at} ({what}). Results are right at every size; "
        f"to compile once, give the size itself to pypto (x / x.shape[-1], not "
        f"x * (1.0 / x.shape[-1]); pypto.loop, not range) and keep Python arithmetic on it "
        f"to + - * // % min max")
    warnings.warn(message, DynamicSizeWarning, stacklevel=frames.caller_stacklevel())
    raise PlaceholderLeak(message)


def _sizes_text(sizes):
    return ", ".join(f"{s} = {v}" for s, v in sizes.items())


def first_difference(a, b):
    """None when Graphs a and b are equal, else (label, in_b, subject, in a,
    in b): the first op that differs ("op #2 body op #0", as the compiler's
    verifier labels ops; None when the ops agree; an op of b where in_b,
    else of a), what of it differs, and its text in each graph."""
    if a == b:
        return None
    # Debug names follow the user's variables, e.g. the op that defines `out`
    # is named "out": not a difference of their own, and they would make
    # the first op of two unequal lists differ by its name alone.
    a, b = _without_names(a), _without_names(b)
    if a == b:
        return None
    found = _ops_difference(a.ops, b.ops, "")
    if found is not None:
        return found
    for va, vb in zip(a.values, b.values):
        if va != vb:
            return (None, False, f"the shape of value {va.id}", _one_line(va.shape),
                    _one_line(vb.shape))
    return None, False, "the graph's parameters and values", _one_line(a), _one_line(b)


def _without_names(graph):
    g = type(graph)()
    g.CopyFrom(graph)

    def clear(ops):
        for op in ops:
            op.ClearField("name")
            for r in op.regions:
                clear(r.ops)
    clear(g.ops)
    for v in g.values:
        v.ClearField("name")
    return g


def _ops_difference(xs, ys, prefix):
    for k, (x, y) in enumerate(zip(xs, ys)):
        if x == y:
            continue
        label = f"{prefix}op #{k}"
        if x.kind != y.kind:
            return label, False, f"{label}'s kind", repr(x.kind), repr(y.kind)
        for key in sorted(set(x.attrs) | set(y.attrs)):
            if key not in x.attrs or key not in y.attrs or x.attrs[key] != y.attrs[key]:
                return (label, False, f"'{x.kind}' attribute '{key}'", _attr_text(x, key),
                        _attr_text(y, key))
        for name, rx, ry in zip(_REGION_NAMES.get(x.kind, ()), x.regions, y.regions):
            found = _ops_difference(rx.ops, ry.ops, f"{label} {name} ")
            if found is not None:
                return found
        return label, False, f"'{x.kind}'", _one_line(x), _one_line(y)
    if len(xs) != len(ys):
        # Python control flow on a size, or a Python loop over one: the
        # first op past the common part, in the longer list.
        label = f"{prefix}op #{min(len(xs), len(ys))}"
        scope = f" in {prefix.strip()}" if prefix else ""
        return label, len(ys) > len(xs), f"the number of ops recorded{scope}", len(xs), len(ys)
    return None


def _attr_text(op, key):
    if key not in op.attrs:
        return "absent"
    a = op.attrs[key]
    which = a.WhichOneof("value")
    if which == "f":
        return f"{a.f:.9g}"
    if which in ("i", "b", "s"):
        return repr(getattr(a, which))
    return _one_line(a)


def _one_line(msg):
    return "{" + text_format.MessageToString(msg, as_one_line=True).strip() + "}"
