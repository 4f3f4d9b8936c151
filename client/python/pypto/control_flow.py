"""Loops and branches inside a kernel (issue 4, phase 2).

    for i in pypto.loop(0, bs, 1, name="LOOP_B", idx_name="i"):
        x = inp[i:i + 1, :]                 # a view at offset [i, 0]
        out[i:, ...] = pypto.exp(x)         # an assemble into out at [i, 0]

    if pypto.cond(n % 64 != 0):             # rewritten by pypto.jit (ast_rewrite.py)
        ...
    else:
        ...

A loop body is traced once, with the index a SymbolicScalar, and becomes a
`loop` op whose region is the body (graph.proto "Region"); it is never
unrolled in Python. Both branches of `if pypto.cond(c):` are traced once
into an `if` op. Tensors created before the loop or branch and written in it
are carried through it (tracer.py); values made in a body stay in it.

pypto.loop_unroll(start, stop, step, unroll_list=[8, 1]) is PyPTO's loop with
a chunk size: it yields (index, unroll_length) and the body handles
unroll_length indices at once (x[i:i + u, :]). It becomes one `loop` op per
chunk size, largest first, each covering as much of the range as it can in
whole chunks (its step is the chunk size, its attr "unroll" the chunk size
as a hint); the body is traced once per chunk size. A chunk size of 1 is
added when the list lacks it, so every index is covered.
"""

import numbers

from . import layout, symbolic, tracer
from .symbolic import SymbolicCondition, is_symbolic, smax as max, smin as min  # noqa: A001,F401
from .tensors import Tensor


def _builder(what):
    b = tracer.current_builder()
    if b is None:
        raise TypeError(f"{what} is only possible inside a @pypto.jit kernel")
    return b


def _bound(x, what):
    """x as a loop bound: an int or a SymbolicScalar (not a condition)."""
    if isinstance(x, Tensor):
        raise TypeError(f"{what} is a tensor; loop bounds are ints or symbolic scalars "
                        f"(x.shape[i] of a dynamic dim, a loop index, arithmetic on them): "
                        f"tensor data cannot bound a loop")
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or \
            isinstance(x, SymbolicCondition):
        raise TypeError(f"{what} must be an int or a symbolic scalar (x.shape[i] of a "
                        f"dynamic dim, a loop index), got {type(x).__name__} {x!r}")
    return x if is_symbolic(x) else int(x)


def _check_in_scope(b, x, what):
    """Every symbol of x must be bound here (a parameter's dynamic dim or an
    open loop's index)."""
    known = b.symbol_values()
    for name in sorted(symbolic.symbols_in(x)):
        if name not in known:
            raise ValueError(
                f"{what} uses {name}, which is not bound here: symbols are the dynamic dims "
                f"of the kernel's parameters and the indices of the loops around this point "
                f"(a loop index is out of scope after its loop)")


def _range(args, kwargs, what):
    """(start, stop, step) from PyPTO's forms: (stop), (start, stop),
    (start, stop, step); also start=, stop= (end=), step=."""
    names = ("start", "stop", "step")
    if len(args) > 3:
        raise TypeError(f"{what}: expected (stop), (start, stop) or (start, stop, step), got "
                        f"{len(args)} positional arguments")
    given = dict(zip(names if len(args) > 1 else ("stop",), args))
    if "end" in kwargs:
        kwargs["stop"] = kwargs.pop("end")
    for n in names:
        if n in kwargs:
            if n in given:
                raise TypeError(f"{what}: got '{n}' twice")
            given[n] = kwargs.pop(n)
    if "stop" not in given:
        raise TypeError(f"{what}: missing the stop bound")
    start = _bound(given.get("start", 0), f"{what}: start")
    stop = _bound(given["stop"], f"{what}: stop")
    step = given.get("step", 1)
    if is_symbolic(step):
        raise TypeError(f"{what}: step must be a constant int, got the symbolic {step}")
    step = _bound(step, f"{what}: step")
    if step == 0:
        raise ValueError(f"{what}: step must not be zero")
    return start, stop, step


_IGNORED = ("submit_before_loop",)  # PyPTO scheduling hints with no effect here


def _names(kwargs, what):
    name = kwargs.pop("name", "")
    idx_name = kwargs.pop("idx_name", "")
    for k in _IGNORED:
        kwargs.pop(k, None)
    if kwargs:
        raise TypeError(f"{what}: unexpected argument(s) {', '.join(sorted(kwargs))}")
    for n, v in (("name", name), ("idx_name", idx_name)):
        if not isinstance(v, str):
            raise TypeError(f"{what}: {n} must be a str, got {type(v).__name__}")
    if idx_name and not symbolic.is_symbol_name(idx_name):
        raise ValueError(f"{what}: idx_name {idx_name!r} is not an identifier (letters, "
                         f"digits, _; at most 64 chars)")
    return name, idx_name


def _index_name(b, want):
    """A loop index symbol unique in the graph (the cache key renames it)."""
    base = want or "i"
    taken = b.index_names | set(b.symbols.values())
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base[:58]}_{k}"
    b.index_names.add(name)
    return name


def loop(*args, **kwargs):
    """for i in pypto.loop(start, stop, step=1, name="", idx_name=""): a loop
    op; the body is traced once with i a SymbolicScalar. Forms: loop(stop),
    loop(start, stop), loop(start, stop, step); bounds are ints or symbolic
    scalars, step a nonzero int; a zero trip count is allowed."""
    what = "pypto.loop"
    b = _builder(what)
    start, stop, step = _range(args, kwargs, what)
    # PyPTO's pypto.loop(..., unroll_list=[1, 4]) is a scheduling hint (the
    # index still steps by `step`): the largest factor becomes attr "unroll".
    unroll = _factors(kwargs.pop("unroll_list", None), what)
    name, idx_name = _names(kwargs, what)
    for x, n in ((start, "start"), (stop, "stop")):
        _check_in_scope(b, x, f"{what}: {n} {x}")
    return _loop(b, start, stop, step, name, idx_name,
                 unroll[0] if unroll and unroll[0] > 1 else None)


def _factors(unroll_list, what):
    """unroll_list as distinct positive ints, largest first ([] for None)."""
    if unroll_list is None:
        return []
    factors = list(unroll_list)
    for u in factors:
        if isinstance(u, bool) or not isinstance(u, numbers.Integral) or is_symbolic(u) \
                or int(u) <= 0:
            raise ValueError(f"{what}: unroll_list must hold positive ints, got {u!r}")
    return sorted({int(u) for u in factors}, reverse=True)


def _loop(b, start, stop, step, name, idx_name, unroll):
    index_name = _index_name(b, idx_name)
    index = symbolic.symbol(index_name, int(start))
    b.loop_bounds[index_name] = (start, stop, step)
    label = f"pypto.loop '{name}'" if name else "pypto.loop"
    region = b.open_region(f"the body of {label}")
    b.indices.append(index)
    try:
        yield index
    except GeneratorExit:
        if not region.closed:
            b.failed = (f"{region.describe()}: the body was left before its end (break, "
                        f"return or an exception); a loop body is traced once for every "
                        f"index and must run to its end (branch on the index with "
                        f"`if pypto.cond(...)`)")
        raise
    b.indices.pop()
    b.close_region(region)
    attrs = {"index": index_name, "start": start, "stop": stop, "step": step}
    if unroll is not None:
        attrs["unroll"] = unroll
    b.add_control_op("loop", [region], attrs, name or "loop")


def loop_unroll(*args, **kwargs):
    """for i, u in pypto.loop_unroll(start, stop, 1, name=, idx_name=,
    unroll_list=[8, 1]): PyPTO's chunked loop (module docstring): the body
    handles indices i .. i+u-1; one loop op per chunk size u."""
    what = "pypto.loop_unroll"
    b = _builder(what)
    unroll_list = kwargs.pop("unroll_list", None)
    start, stop, step = _range(args, kwargs, what)
    if step != 1:
        raise ValueError(f"{what}: step must be 1 (the chunk sizes of unroll_list are the "
                         f"steps), got {step}")
    name, idx_name = _names(kwargs, what)
    factors = sorted(set(_factors(unroll_list, what)) | {1}, reverse=True)
    for x, n in ((start, "start"), (stop, "stop")):
        _check_in_scope(b, x, f"{what}: {n} {x}")
    return _unrolled(b, start, stop, factors, name, idx_name)


def _unrolled(b, start, stop, factors, name, idx_name):
    lo = start
    for u in factors:
        hi = lo + (stop - lo) // u * u
        if not is_symbolic(hi) and not is_symbolic(lo) and hi <= lo:
            continue  # no whole chunk of this size: no loop
        label = f"{name}_unroll{u}" if name else f"unroll{u}"
        for i in _loop(b, lo, hi, u, label, idx_name, u):
            yield i, u
        lo = hi


class _Cond:
    """pypto.cond(expr): the test of an `if` that pypto.jit rewrote."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __bool__(self):
        if not is_symbolic(self.value):
            return bool(self.value)
        raise TypeError(
            f"pypto.cond({self.value}) was evaluated as a plain Python value: pypto.jit "
            f"turns `if pypto.cond(...):` into a branch by rewriting the kernel's own "
            f"source, and this `if` was not rewritten (the kernel's source is not available "
            f"to inspect.getsource, or the `if` is in a function the kernel calls, or "
            f"pypto.cond is not the whole test of the `if`); write the `if` in the kernel "
            f"itself, in a file")


def cond(expr):
    """if pypto.cond(expr): ... else: ...: a branch of the graph on a
    symbolic condition (comparisons of shapes and loop indices, & | ~, and
    `and`/`or`/`not` inside the call). Both branches are traced once; a
    constant condition traces only the branch it takes."""
    what = "pypto.cond"
    if isinstance(expr, Tensor):
        raise TypeError(f"{what}: the condition is a tensor; a branch of the graph depends on "
                        f"symbolic scalars (shapes, loop indices), not on tensor data: select "
                        f"elementwise with pypto.where(mask, a, b)")
    if isinstance(expr, numbers.Integral):
        return _Cond(expr if is_symbolic(expr) else bool(expr))
    raise TypeError(f"{what}: expected a symbolic condition (e.g. i < n), a bool or an int, "
                    f"got {type(expr).__name__}")


class _If:
    """A rewritten `if` (ast_rewrite.py): iterating yields True (trace the
    then branch) and then False (the else branch), recording an `if` op
    around them; for a constant condition, only the branch taken. end() and
    result() merge the Python names the branches bind (ast_rewrite.py)."""

    def __init__(self, c, names, *before):
        if isinstance(c, numbers.Integral) and not isinstance(c, _Cond):
            c = cond(c)  # PyPTO's bare `if pypto.is_loop_begin(i):`
        self.c = c
        self.before = dict(zip(names, before))
        self.phis = {}     # name -> Tensor carried through the if
        self.plain = {}    # name -> [non-tensor value at the end of each branch]
        self.symbolic = isinstance(c, _Cond) and is_symbolic(c.value)
        self.b = _builder("pypto.cond") if self.symbolic else None
        self._tensor = Tensor

    def __iter__(self):
        c = self.c
        if not isinstance(c, _Cond):  # an `if` on some other function named cond
            yield bool(c)
            return
        if not self.symbolic:
            yield bool(c.value)
            return
        b, value = self.b, c.value
        _check_in_scope(b, value, f"pypto.cond({value})")
        regions = []
        for label, taken in (("then", True), ("else", False)):
            region = b.open_region(f"the {label} branch of pypto.cond({value})")
            try:
                yield taken
            except GeneratorExit:
                if not region.closed:
                    b.failed = f"{region.describe()}: the branch was left before its end"
                raise
            b.close_region(region)
            regions.append(region)
        b.add_control_op("if", regions, {"cond": value}, "if")

    def end(self, name, value):
        """At the end of a branch: records `name`'s value; returns its value
        from before the if, which the next branch starts from."""
        if not self.symbolic:
            return value
        before = self.before.get(name)
        if value is before:
            return before
        T = self._tensor
        if isinstance(value, T) and value._builder is self.b:
            phi = self.phis.get(name)
            if phi is None:
                ref = before if isinstance(before, T) and before._builder is self.b else None
                phi = self._phi(name, ref, value)
            self._check_type(name, phi, value)
            self.b.write(phi, value, f"'{name}' at the end of a branch of pypto.cond")
        else:
            self.plain.setdefault(name, []).append(value)
        return before

    def _phi(self, name, ref, value):
        """The tensor that carries `name` through the if: its value before
        (none: zeros where the if is) and its home outside the branches."""
        T, b = self._tensor, self.b
        home = b._stack[-2] if len(b._stack) > 1 else None
        if ref is not None and getattr(ref, "_view_of", None) is not None:
            # A view (a tile of a tensor) carried through the if would be
            # updated in place; carry a copy of it, made before the if.
            b._target = (home,)
            try:
                ref = layout.clone(ref)
            finally:
                b._target = None
        src = ref if ref is not None else value
        phi = T._proxy(b, ref._vid if ref is not None else None, src.dtype, src._shape, name)
        phi._home = home
        self.phis[name] = phi
        return phi

    def _check_type(self, name, phi, value):
        if phi.dtype != value.dtype or not symbolic.same_shape(phi._shape, value._shape):
            raise TypeError(
                f"'{name}' is {value.dtype.name}{list(value._shape)} at the end of a branch of "
                f"pypto.cond but {phi.dtype.name}{list(phi._shape)} before it or in the other "
                f"branch: a tensor that flows out of an if has one dtype and shape")

    def result(self, name, value):
        """After the if: the tensor the if outputs for `name`, or its value."""
        if not self.symbolic:
            return value
        if name in self.phis:
            if name in self.plain:
                raise TypeError(f"'{name}' is a tensor in one branch of pypto.cond and "
                                f"{type(self.plain[name][0]).__name__} in the other")
            return self.phis[name]
        values = self.plain.get(name, [])
        before = self.before.get(name)
        if values and len(values) == 2 and values[0] is not values[1] and \
                not _same_value(values[0], values[1]):
            raise TypeError(
                f"'{name}' is {values[0]!r} after the then branch of pypto.cond and "
                f"{values[1]!r} after the else branch: only tensors may differ between "
                f"branches (the condition is known at run time only)")
        if len(values) == 1 and not _same_value(values[0], before):
            raise TypeError(
                f"'{name}' is {values[0]!r} after one branch of pypto.cond and {before!r} "
                f"after the other: only tensors may differ between branches")
        return values[0] if values else value


def _same_value(a, b):
    if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
        return symbolic.same(a, b)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - arrays, tensors: not the same value
        return False


def is_loop_begin(index, begin=None):
    """PyPTO: whether `index` is its loop's first value (a condition)."""
    start, _, _ = _loop_of(index, "pypto.is_loop_begin")
    return index == (start if begin is None else begin)


def is_loop_end(index, end=None):
    """PyPTO: whether `index` is its loop's last value (a condition)."""
    _, stop, step = _loop_of(index, "pypto.is_loop_end")
    if end is not None:
        return index == end
    return index + step >= stop if step > 0 else index + step <= stop


def _loop_of(index, what):
    b = _builder(what)
    name = symbolic.symbol_of(index)
    bounds = b.loop_bounds.get(name) if name else None
    if bounds is None or not any(symbolic.same(index, i) for i in b.indices):
        raise TypeError(f"{what}: expected the index of a pypto.loop around this point, got "
                        f"{index!r}")
    return bounds


def logical_and(a, b):
    return symbolic.logical("and", a, b)


def logical_or(a, b):
    return symbolic.logical("or", a, b)


def logical_not(a):
    return symbolic.logical_not(a)
