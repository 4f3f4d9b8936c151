"""Loops and branches inside a kernel.

    for i in pypto.loop(0, bs, 1, name="LOOP_B", idx_name="i"):
        x = inp[i:i + 1, :]                 # a view at offset [i, 0]
        out[i:, ...] = pypto.exp(x)         # an assemble into out at [i, 0]

    if n % 64 != 0:                         # rewritten by pypto.jit (ast_rewrite.py)
        ...
    else:
        ...

A loop body is traced once, with the index a SymbolicScalar, and becomes a
`loop` op whose region is the body (graph.proto "Region"); it is never
unrolled in Python. Both branches of an `if` on a run-time condition (or
`if pypto.cond(c):`) are traced once into an `if` op. Tensors created before the loop or branch and written in it
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
import operator

from . import layout, symbolic, tracer
from .errors import TraceError
from .runtime_int import RuntimeInt
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
    scalars, step a nonzero int; a zero trip count is allowed. parallel=
    (PyPTO's hint that the iterations are independent) does not change the
    loop: its iterations run in order."""
    what = "pypto.loop"
    b = _builder(what)
    start, stop, step = _range(args, kwargs, what)
    # PyPTO's pypto.loop(..., unroll_list=[1, 4]) is a scheduling hint (the
    # index still steps by `step`): the largest factor becomes attr "unroll".
    unroll = _factors(kwargs.pop("unroll_list", None), what)
    parallel = kwargs.pop("parallel", False)  # PyPTO's hint that iterations are independent
    if not isinstance(parallel, bool):
        raise TypeError(f"{what}: parallel must be a bool, got {type(parallel).__name__}")
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
    if getattr(b, "eager", False):  # an eager run (eager.py): the real indices
        yield from (RuntimeInt(i, (start, stop, step)) for i in range(start, stop, step))
        return
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
            f"turns an `if` into a branch by rewriting the source of the kernel and of the "
            f"functions it calls, and this code was not rewritten (its source is not "
            f"available to inspect.getsource, or it is pypto's, the standard library's or "
            f"an installed package's, or it is not an `if`, `and`/`or`/`not` or `a if c "
            f"else b`); write the `if` in a function of yours, in a file")


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


class _Unbound:
    """The value of a name not bound (yet) in the rewritten function."""

    __slots__ = ()

    def __repr__(self):
        return "<unbound>"


UNBOUND = _Unbound()


class _If:
    """A rewritten `if` (ast_rewrite.py): iterating yields True (trace the
    then branch) and then False (the else branch), recording an `if` op
    around them; for a condition known while tracing, only the branch taken.
    end() and result() merge the Python names the branches bind: tensors
    are carried through the if, ints and symbolic scalars become a symbolic
    select (bools a condition), lists and tuples merge element-wise.
    `read_after`: the names the function reads after the if."""

    def __init__(self, c, names, read_after, *before):
        if isinstance(c, numbers.Integral) and not isinstance(c, _Cond):
            c = test(c)
        self.c = c
        self.before = dict(zip(names, before))
        self.read_after = set(read_after)
        self.phis = {}     # (name, path in lists/tuples) -> Tensor carried through the if
        self.ends = {}     # name -> [its value at the end of each branch]
        self.symbolic = isinstance(c, _Cond) and is_symbolic(c.value)
        self.b = _builder("pypto.cond") if self.symbolic else None
        self._tensor = Tensor

    def __iter__(self):
        c = self.c
        if not isinstance(c, _Cond):
            yield bool(c)
            return
        if not self.symbolic:
            yield bool(c.value)
            return
        b, value = self.b, c.value
        _check_in_scope(b, value, f"the condition {value}")
        regions = []
        for label, taken in (("then", True), ("else", False)):
            region = b.open_region(f"the {label} branch of the if on {value}")
            try:
                yield taken
            except GeneratorExit:
                if not region.closed:
                    b.failed = f"{region.describe()}: the branch was left before its end"
                raise
            b.close_region(region)
            regions.append(region)
        b.add_control_op("if", regions, {"cond": value}, "if")

    def _what(self):
        return f"the if on the run-time condition {self.c.value}"

    def end(self, name, value):
        """At the end of a branch: records `name`'s value; returns its value
        from before the if, which the next branch starts from."""
        if not self.symbolic:
            return value
        before = self.before.get(name, UNBOUND)
        self.ends.setdefault(name, []).append(value)
        self._carry(name, (), value, before)
        return before

    def _carry(self, name, path, value, before):
        """Writes each tensor in `value` (a tensor, or lists and tuples of
        them) into the tensor that carries it through the if."""
        if value is before:
            return
        T = self._tensor
        if isinstance(value, T) and value._builder is self.b:
            label = _label(name, path)
            phi = self.phis.get((name, path))
            if phi is None:
                ref = before if isinstance(before, T) and before._builder is self.b else None
                phi = self._phi(name, path, ref, value)
            self._check_type(label, phi, value)
            self.b.write(phi, value, f"'{label}' at the end of a branch of {self._what()}")
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                self._carry(name, path + (i,), v, _item(before, i, len(value)))

    def _phi(self, name, path, ref, value):
        """The tensor that carries `name` (at `path`) through the if: its
        value before (none: zeros where the if is) and its home outside the
        branches."""
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
        if ref is None:
            ref = self._stand_in(value, home)
        src = ref if ref is not None else value
        phi = T._proxy(b, ref._vid if ref is not None else None, src.dtype, src._shape,
                       _label(name, path))
        phi._home = home
        self.phis[(name, path)] = phi
        return phi

    def _stand_in(self, value, home):
        """For a tensor with a symbolic shape and no value before the if
        (where zeros of that shape cannot be made): a copy, made in `home`,
        of a tensor of the same dtype and shape visible there whose storage
        nothing writes afterwards, to enter the if in its place; None where
        there is none. Its data is never read: a name the branches do not
        both bind is an error where it is used after the if."""
        b, T = self.b, self._tensor
        if all(isinstance(d, int) and not is_symbolic(d) for d in value._shape):
            return None
        regions = b._stack[:-1]
        written = set()  # values whose storage an op wrote in place (stale)
        for ops in [b._ops] + [r.ops for r in b._stack]:
            for op in ops:
                if op.kind == "assemble":
                    written.add(op.inputs[1])
                elif op.kind in ("loop", "if"):
                    written.update(op.inputs)
        visible = set(map(id, regions))
        for vid, (_, dtype, shape) in b._values.items():
            region = b._vid_region.get(vid)
            if vid in written or dtype != int(value.dtype) or not (
                    region is None or id(region) in visible) or \
                    not symbolic.same_shape(shape, value._shape):
                continue
            b._target = (home,)
            try:
                return layout.clone(T._proxy(b, vid, value.dtype, value._shape, ""))
            finally:
                b._target = None
        return None

    def _check_type(self, label, phi, value):
        if phi.dtype != value.dtype or not symbolic.same_shape(phi._shape, value._shape):
            raise TypeError(
                f"'{label}' is {value.dtype.name}{list(value._shape)} at the end of a branch of "
                f"{self._what()} but {phi.dtype.name}{list(phi._shape)} before it or in the "
                f"other branch: a tensor that flows out of an if has one dtype and shape")

    def result(self, name, value):
        """After the if: `name`'s value, merged from both branches (UNBOUND
        where no branch binds it)."""
        if not self.symbolic:
            return value
        then_v, else_v = self.ends[name]
        if (then_v is UNBOUND) != (else_v is UNBOUND):
            if name in self.read_after:
                raise TraceError(
                    f"'{name}' is bound only in the {'else' if then_v is UNBOUND else 'then'} "
                    f"branch of {self._what()} and has no value before it, but is used after "
                    f"the if: bind it before the if or in both branches")
            return UNBOUND
        return self._merge(name, (), then_v, else_v)

    def _merge(self, name, path, a, b):
        label = _label(name, path)
        T = self._tensor
        phi = self.phis.get((name, path))
        if phi is not None:
            for v in (a, b):
                if not isinstance(v, T):
                    raise TypeError(f"'{label}' is a tensor in one branch of {self._what()} "
                                    f"and {type(v).__name__} {v!r} in the other")
            return phi
        if a is b:
            return a
        if isinstance(a, (list, tuple)) and type(a) is type(b) and len(a) == len(b):
            items = [self._merge(name, path + (i,), x, y) for i, (x, y) in enumerate(zip(a, b))]
            return type(a)(items) if type(a) in (list, tuple) else type(a)(*items)
        if _int_like(a) and _int_like(b):
            return symbolic.select(self.c.value, a, b)
        if _same_value(a, b):
            return a
        if _float_like(a) and _float_like(b):
            return symbolic.SelectedFloat(self.c.value, a, b)
        raise TypeError(
            f"'{label}' is {a!r} after the then branch of {self._what()} and {b!r} after the "
            f"else branch: only tensors, ints, symbolic scalars, bools, and lists and tuples "
            f"of them may differ between run-time branches")


def _label(name, path):
    return name + "".join(f"[{i}]" for i in path)


def _item(before, i, n):
    """before[i] when before is a list or tuple of length n, else UNBOUND."""
    if isinstance(before, (list, tuple)) and len(before) == n:
        return before[i]
    return UNBOUND


def _int_like(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, _Cond)


def _float_like(x):
    """A number that may be chosen at run time as a float: a Python float or
    int (not a bool, not a symbolic scalar), or a SelectedFloat."""
    return isinstance(x, symbolic.SelectedFloat) or (
        isinstance(x, numbers.Real) and not isinstance(x, bool) and not is_symbolic(x))


def _same_value(a, b):
    if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
        return symbolic.same(a, b)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - arrays, tensors: not the same value
        return False


# Python's control flow in rewritten functions (ast_rewrite.py) -----------------

def _runtime(x):
    """Whether x's truth is known only at run time."""
    return is_symbolic(x) or (isinstance(x, _Cond) and is_symbolic(x.value))


def test(value):
    """The test of a rewritten `if`: a _Cond for a condition known only at
    run time, else Python's truth of `value`."""
    if isinstance(value, _Cond):
        return value if is_symbolic(value.value) else bool(value.value)
    if is_symbolic(value):
        return _Cond(value)
    return bool(value)  # a Tensor's is a TypeError saying why


def static_test(value, message):
    """The test of a rewritten `if` whose branches break, continue or
    return: Python's truth of `value`; a TraceError (`message`) when it is
    known only at run time."""
    t = test(value)
    if isinstance(t, _Cond):
        raise TraceError(message.format(cond=t.value))
    return t


def ifexp(c, then, other):
    """`then() if c else other()`; for a run-time c both are traced into an
    if op and the result is merged (_If)."""
    t = test(c)
    if not isinstance(t, _Cond):
        return then() if t else other()
    name = "the value of `a if c else b`"
    branch = _If(t, (name,), (), UNBOUND)
    for taken in branch:
        branch.end(name, then() if taken else other())
    return branch.result(name, UNBOUND)


def _condition_like(x):
    return isinstance(x, (bool, symbolic.SymbolicCondition))


def _runtime_and(v, w):
    """Python's `v and w` for a run-time v: w where v is true, else v."""
    v = v.value if isinstance(v, _Cond) else v
    w = w.value if isinstance(w, _Cond) else w
    if _condition_like(v) and _condition_like(w):
        return symbolic.logical("and", v, w)
    if _int_like(w):
        return symbolic.select(v, w, v)
    raise TypeError(f"`a and b` with a on the run-time condition {v} and b a "
                    f"{type(w).__name__}: only ints, symbolic scalars and conditions combine "
                    f"with a run-time condition")


def _runtime_or(v, w):
    """Python's `v or w` for a run-time v: v where v is true, else w."""
    v = v.value if isinstance(v, _Cond) else v
    w = w.value if isinstance(w, _Cond) else w
    if _condition_like(v) and _condition_like(w):
        return symbolic.logical("or", v, w)
    if _int_like(w):
        return symbolic.select(v, v, w)
    raise TypeError(f"`a or b` with a on the run-time condition {v} and b a "
                    f"{type(w).__name__}: only ints, symbolic scalars and conditions combine "
                    f"with a run-time condition")


def and_(first, *rest):
    """`first and rest[0]() and ...`, short-circuiting where the truth is
    known while tracing."""
    v = first
    for thunk in rest:
        if _runtime(v):
            v = _runtime_and(v, thunk())
        elif not v:
            return v
        else:
            v = thunk()
    return v


def or_(first, *rest):
    """`first or rest[0]() or ...`, short-circuiting where the truth is
    known while tracing."""
    v = first
    for thunk in rest:
        if _runtime(v):
            v = _runtime_or(v, thunk())
        elif v:
            return v
        else:
            v = thunk()
    return v


def not_(value):
    """`not value`; for a run-time value the condition value == 0."""
    if isinstance(value, _Cond):
        value = value.value
    if is_symbolic(value):
        return symbolic.logical_not(value)
    return not value


_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge, "is": operator.is_,
            "is not": operator.is_not, "in": lambda a, b: a in b,
            "not in": lambda a, b: a not in b}


def compare(ops, first, *thunks):
    """A chained comparison `first op0 thunks[0]() op1 ...`: the and of each
    comparison, each operand evaluated once, in order."""
    left, acc = first, None
    for k, (op, thunk) in enumerate(zip(ops, thunks)):
        if k and not _runtime(acc) and not acc:
            return acc
        right = thunk()
        r = _COMPARE[op](left, right)
        acc = r if k == 0 else and_(acc, lambda r=r: r)
        left = right
    return acc


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
    if isinstance(index, RuntimeInt) and index.bounds is not None:  # an eager run's index
        return index.bounds
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
