"""Dynamic dims: one compile serves every size of a DYNAMIC dim.

A tensor annotation marks a dim dynamic with pypto.DYNAMIC (or a name:
pypto.Tensor(["bs", 64], ...)). Each call maps its dynamic dims to symbols:
a named dim is the symbol of that name (the same name in two annotations is
one symbol); an unnamed one is "<param>_d<i>", except that unnamed dynamic
dims with the size of an earlier dynamic dim in the same call share its
symbol (so out = f(x) with both [DYNAMIC, 64] is one symbol). The in-memory
signature holds the symbols instead of the sizes, and the graph is traced
once with each symbol at a large distinct prime size (a sentinel) whose dims
are written as symbols (and once more at other primes, to catch a sentinel
that Python code turned into a number: trace_compare.py); the disk and ptod
caches key on that graph, which has no sizes in it. So a new size of a dynamic dim neither traces nor compiles:
the runtime binds the symbols from the arguments at launch.

Inside the kernel, x.shape[i] of a dynamic dim is a SymbolicScalar (below):
an int (the sentinel, usable in shape arithmetic of the trace) that prints as
its symbol's name and builds expressions in arithmetic.
"""

import operator
import os
import re
import sys

from ._proto import graph_pb2
from .error import FeError
from .extension import native

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
_FIRST_SENTINEL = 1_000_003
# The second trace's placeholders (trace_compare.py): other large primes, in
# the same order, so every size-dependent decision pypto makes at trace time
# (sizes against tiles, bounds or each other) goes the same way.
_SECOND_SENTINEL = 1_700_003


def is_symbol_name(name):
    return isinstance(name, str) and _IDENT.match(name) is not None


def _primes_from(n):
    while True:
        if n > 1 and all(n % k for k in range(2, int(n ** 0.5) + 1)):
            yield n
        n += 1


def sentinels(symbols, second=False):
    """{symbol: sentinel size} for `symbols` in order (`second`: the second
    trace's, all different from the first's)."""
    gen = _primes_from(_SECOND_SENTINEL if second else _FIRST_SENTINEL)
    return {s: next(gen) for s in symbols}


def signature_shapes(params, shapes, is_dynamic):
    """Per tensor parameter, its shape with dynamic dims replaced by symbol
    names (str). `params`: names; `shapes`: actual shapes; `is_dynamic(k, i)`:
    None for a static dim, True for an unnamed dynamic one, or the name.
    A named symbol given two sizes is a ValueError naming both arguments."""
    out = [list(s) for s in shapes]
    by_size, named = {}, {}
    # Named dims first, so unnamed ones of the same size join them.
    for want_named in (True, False):
        for k, (pname, shape) in enumerate(zip(params, shapes)):
            for i, size in enumerate(shape):
                d = is_dynamic(k, i)
                if d is None or (isinstance(d, str)) != want_named:
                    continue
                if isinstance(d, str):
                    if d in named and named[d][0] != size:
                        other, oi = named[d][1], named[d][2]
                        raise ValueError(
                            f"argument '{pname}': dim {i} is {size}, but dynamic dim {d} is "
                            f"{named[d][0]} in argument '{other}' dim {oi}")
                    named.setdefault(d, (size, pname, i))
                    by_size.setdefault(size, d)
                    out[k][i] = d
                else:
                    out[k][i] = by_size.setdefault(size, f"{pname}_d{i}")
    return [tuple(s) for s in out]


# Integer expressions ---------------------------------------------------------
#
# A SymbolicScalar is an int (its value in the trace: a dynamic dim's
# sentinel, a loop index's start) that also carries an expression over
# symbols. Arithmetic with ints and other SymbolicScalars builds expressions;
# a result whose expression folds to a constant is a plain int. So the
# tracer's own shape arithmetic keeps working on the int values while every
# shape, offset and bound it records can be written as a pto.v1.DimExpr.
#
# Canonical form (like compiler/ir/sym_expr.h, but only as far as the front
# end needs: deciding that a dim is constant, or that two dims are equal):
# a polynomial, i.e. a sorted tuple of (monomial, coefficient) with nonzero
# coefficients, a monomial being a sorted tuple of atoms; an atom is a symbol
# name or an opaque node (op, poly, poly) for // % min max, comparisons and
# and/or. The constant term has the empty monomial.
#
# Every constant the form computes (coefficients of sums and products,
# folded // % min max, comparisons and and/or) is computed by the compiler's
# and the runtime's meaning of the operator (runtime/dim_ops.h, through the
# native extension: _apply), so a dim folds here to the value the runtime
# would give, int64 edges included: a result that is no int64 is an
# OverflowError. What stays Python's is the building of the form (which
# terms exist, their order, when two forms are one) and a SymbolicScalar's
# trace value: the int it is during the trace, at placeholder sizes, which
# the kernel never sees (trace_compare.py catches one that leaks into it).


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__)) + os.sep

# The bound the compiler's importer puts on a DimExpr's nodes (graph.proto
# Dim.expr; it also bounds the depth, which its error names).
MAX_EXPR_NODES = 64

_ZERO = ()


def _const(k):
    return (((), k),) if k else _ZERO


def _sym(name):
    return (((name,), 1),)


_DIM_OPS = {"+": graph_pb2.DIM_OP_ADD, "-": graph_pb2.DIM_OP_SUB, "*": graph_pb2.DIM_OP_MUL,
            "//": graph_pb2.DIM_OP_FLOORDIV, "%": graph_pb2.DIM_OP_MOD,
            "min": graph_pb2.DIM_OP_MIN, "max": graph_pb2.DIM_OP_MAX,
            "==": graph_pb2.DIM_OP_EQ, "!=": graph_pb2.DIM_OP_NE, "<": graph_pb2.DIM_OP_LT,
            "<=": graph_pb2.DIM_OP_LE, ">": graph_pb2.DIM_OP_GT, ">=": graph_pb2.DIM_OP_GE,
            "and": graph_pb2.DIM_OP_AND, "or": graph_pb2.DIM_OP_OR}
_apply_dim_op = native().apply_dim_op


def _apply(op, a, b):
    """a op b for constants, as the compiler and the runtime compute it
    (runtime/dim_ops.h): ZeroDivisionError for // or % by zero,
    OverflowError where the result (or an operand) is no int64."""
    v = _apply_dim_op(_DIM_OPS[op], a, b)
    if v is None:
        if op in ("//", "%") and b == 0:
            raise ZeroDivisionError(f"symbolic {op} by zero")
        raise OverflowError(f"symbolic {a} {op} {b}: the result is no int64 (dims are int64 "
                            f"in the compiler and the runtime)")
    return v


def _atom_key(a):
    return a if isinstance(a, str) else _atom_text(a)


def _norm(terms):
    """A canonical polynomial from {monomial: coefficient}."""
    # Terms by degree and text, the constant last: n*2 + 63.
    return tuple(sorted(((m, c) for m, c in terms.items() if c),
                        key=lambda mc: (not mc[0], len(mc[0]), [_atom_key(a) for a in mc[0]])))


def _add(p, q, sign=1):
    terms = dict(p)
    op = "+" if sign == 1 else "-"
    for m, c in q:
        terms[m] = _apply(op, terms.get(m, 0), c)
    return _norm(terms)


def _mul(p, q):
    terms = {}
    for m1, c1 in p:
        for m2, c2 in q:
            m = tuple(sorted(m1 + m2, key=_atom_key))
            terms[m] = _apply("+", terms.get(m, 0), _apply("*", c1, c2))
    return _norm(terms)


def _const_of(p):
    """The int value of a constant polynomial, else None."""
    if p == _ZERO:
        return 0
    if len(p) == 1 and p[0][0] == ():
        return p[0][1]
    return None


# Trace values (placeholder arithmetic, not folding: see above).
_FOLD = {"//": operator.floordiv, "%": operator.mod, "min": min, "max": max,
         "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
         ">": operator.gt, ">=": operator.ge,
         "and": lambda a, b: bool(a and b), "or": lambda a, b: bool(a or b)}
_COMPARE = {"==": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}


def _node(op, p, q):
    """p op q for the non-polynomial ops, simplified where that is exact."""
    a, b = _const_of(p), _const_of(q)
    if a is not None and b is not None:
        return _const(_apply(op, a, b))
    if op in ("//", "%") and b is not None:
        if b == 0:
            raise ZeroDivisionError(f"symbolic {op} by zero")
        if b == 1:
            return p if op == "//" else _ZERO
        # (b*A + R) // b = A + R // b and (b*A + R) % b = R % b, exactly.
        whole = {m: c for m, c in p if _apply("%", c, b) == 0}
        rest = _norm({m: c for m, c in p if m not in whole})
        if whole:
            inner = _ZERO if not rest else _node(op, rest, q)
            if op == "%":
                return inner
            return _add(_norm({m: _apply("//", c, b) for m, c in whole.items()}), inner)
    if op in ("min", "max") or op in _COMPARE:
        try:
            d = _const_of(_add(p, q, -1))
        except OverflowError:
            d = None  # p - q is no int64: not known to be a constant
        if d is not None:  # p - q is a known constant
            if op == "min":
                return p if d <= 0 else q
            if op == "max":
                return p if d >= 0 else q
            return _const(_apply(op, d, 0))
        if op in ("min", "max") and _text(p) > _text(q):
            p, q = q, p  # min and max commute: one order
    return (((("node", op, p, q),), 1),)


def _atom_text(a):
    if isinstance(a, str):
        return a
    _, op, p, q = a
    if op == "select":
        return f"({_text(q[0])} if {_text(p)} else {_text(q[1])})"
    if op in ("min", "max"):
        return f"{op}({_text(p)}, {_text(q)})"
    return f"({_text(p)} {op} {_text(q)})"


def _text(p):
    if p == _ZERO:
        return "0"
    parts = []
    for m, c in p:
        if not m:
            body = str(abs(c))
        else:
            body = "*".join(_atom_text(a) for a in m)
            if abs(c) != 1:
                body = f"{body}*{abs(c)}"
        parts.append(("- " if c < 0 else "+ ") + body)
    s = " ".join(parts)
    return s[2:] if s.startswith("+ ") else "-" + s[2:]


def _to_proto(p, msg, budget):
    """Writes polynomial p into pto.v1.DimExpr `msg`; `budget` is a one-item
    list counting nodes (the importer's bound)."""
    budget[0] += 1
    if budget[0] > MAX_EXPR_NODES:
        raise ValueError(f"the expression {_text(p)} has more than {MAX_EXPR_NODES} nodes "
                         f"(the compiler's bound); simplify it")
    k = _const_of(p)
    if k is not None:
        msg.constant = k
        return
    if len(p) > 1:  # a sum: first term + or - the rest
        m, c = p[-1]
        rest = p[:-1]
        b = msg.binary
        b.op = graph_pb2.DIM_OP_SUB if c < 0 else graph_pb2.DIM_OP_ADD
        _to_proto(rest, b.lhs, budget)
        _to_proto(((m, abs(c)),), b.rhs, budget)
        return
    (m, c), = p
    if c != 1:
        b = msg.binary
        b.op = graph_pb2.DIM_OP_MUL
        _to_proto(((m, 1),), b.lhs, budget)
        _to_proto(_const(c), b.rhs, budget)
        return
    if len(m) > 1:
        b = msg.binary
        b.op = graph_pb2.DIM_OP_MUL
        _to_proto(((m[:-1], 1),), b.lhs, budget)
        _to_proto(((m[-1:], 1),), b.rhs, budget)
        return
    a = m[0]
    if isinstance(a, str):
        msg.symbol = a
        return
    _, op, x, y = a
    if op == "select":
        _to_proto(x, msg.select.cond, budget)
        _to_proto(y[0], msg.select.if_true, budget)
        _to_proto(y[1], msg.select.if_false, budget)
        return
    b = msg.binary
    b.op = getattr(graph_pb2, "DIM_OP_" + _OP_NAMES[op])
    _to_proto(x, b.lhs, budget)
    _to_proto(y, b.rhs, budget)


_OP_NAMES = {"//": "FLOORDIV", "%": "MOD", "min": "MIN", "max": "MAX", "==": "EQ",
             "!=": "NE", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE", "and": "AND",
             "or": "OR"}


def _poly(x):
    """The polynomial of an int or SymbolicScalar, else None."""
    if isinstance(x, SymbolicScalar):
        return x._poly
    if isinstance(x, int) and not isinstance(x, bool):
        return _const(int(x))
    return None


def _check_operand(x, op):
    if isinstance(x, float):
        raise TypeError(f"symbolic {op}: a float operand ({x!r}); symbolic scalars are "
                        f"integers (use // for division)")


def _internal_caller(frame):
    """Whether `frame` runs pypto's (or the standard library's) code: there a
    symbolic value's truth and size are its trace value."""
    name = os.path.abspath(frame.f_code.co_filename)
    return name.startswith(_PACKAGE_DIR) or name.startswith(_STDLIB_DIR)


def _make(value, poly):
    k = _const_of(poly)
    if k is not None:
        return k
    return SymbolicScalar._new(value, poly)


def _binop(op, fold):
    def f(self, other):
        _check_operand(other, op)
        q = _poly(other)
        if q is None:
            return NotImplemented
        return _combine(op, fold, self, other, self._poly, q)

    def r(self, other):
        _check_operand(other, op)
        q = _poly(other)
        if q is None:
            return NotImplemented
        return _combine(op, fold, other, self, q, self._poly)
    return f, r


def _combine(op, fold, a, b, p, q):
    value = fold(int(a), int(b)) if not (op in ("//", "%") and int(b) == 0) else 0
    if op == "+":
        poly = _add(p, q)
    elif op == "-":
        poly = _add(p, q, -1)
    elif op == "*":
        poly = _mul(p, q)
    else:
        if _const_of(q) == 0:
            raise ZeroDivisionError(f"symbolic {_text(p)} {op} 0")
        poly = _node(op, p, q)
    return _make(value, poly)


class SymbolicScalar(int):
    """An integer known only at run time (pypto.symbolic_scalar, a loop
    index, x.shape[i] of a dynamic dim). Arithmetic (+ - * // % with ints and
    each other, .min() .max(), pypto.min/max) builds expressions;
    comparisons give a SymbolicCondition for pypto.cond. Inside pypto it is
    also an int: its value in the trace (a dynamic dim's sentinel size, a
    loop index's start)."""



    def __new__(cls, value_or_name=None, value=None):
        """pypto.SymbolicScalar(arg0=None, arg1=None), PyPTO's forms:
        SymbolicScalar(10) (or no argument: 0) is an immediate; a
        SymbolicScalar is returned as it is; SymbolicScalar("n") inside a
        kernel is the kernel's dynamic dim "n" (pypto.symbolic_scalar), and
        outside a kernel a free symbol "n", concrete when a value is given
        (SymbolicScalar("n", 5).concrete() == 5)."""
        if value_or_name is None:
            value_or_name = 0
        if isinstance(value_or_name, SymbolicScalar):
            return value_or_name
        if isinstance(value_or_name, int) and not isinstance(value_or_name, bool):
            return cls._new(int(value_or_name), _const(int(value_or_name)))
        if isinstance(value_or_name, str) and _symbols_in_scope is None:
            if not is_symbol_name(value_or_name):
                raise FeError(ValueError(
                    f"pypto.SymbolicScalar({value_or_name!r}): a symbol name is an identifier "
                    f"(letters, digits, _; at most 64 chars)"))
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise FeError(TypeError(
                    f"pypto.SymbolicScalar({value_or_name!r}, {value!r}): the value must be "
                    f"an int"))
            obj = cls._new(0 if value is None else int(value), _sym(value_or_name))
            obj._concrete = None if value is None else int(value)
            return obj
        return symbolic_scalar(value_or_name, value)

    @classmethod
    def _new(cls, value, poly):
        obj = int.__new__(cls, value)
        obj._poly = poly
        return obj

    @property
    def name(self):
        return _text(self._poly)

    @property
    def expr_text(self):
        return _text(self._poly)

    def __repr__(self):
        return _text(self._poly)

    __str__ = __repr__

    def __format__(self, spec):
        return format(str(self), spec) if not spec or spec[-1:] == "s" else \
            int.__format__(self, spec)

    __hash__ = int.__hash__

    def __reduce__(self):
        raise TypeError("a pypto SymbolicScalar cannot be pickled")

    __add__, __radd__ = _binop("+", operator.add)
    __sub__, __rsub__ = _binop("-", operator.sub)
    __mul__, __rmul__ = _binop("*", operator.mul)
    __floordiv__, __rfloordiv__ = _binop("//", operator.floordiv)
    __mod__, __rmod__ = _binop("%", operator.mod)

    def __neg__(self):
        return _make(-int(self), _mul(self._poly, _const(-1)))

    def __pos__(self):
        return self

    def __truediv__(self, other):
        raise TypeError(f"symbolic {self} / {other!r}: symbolic scalars are integers; use //")

    __rtruediv__ = __truediv__

    def __pow__(self, other, mod=None):
        raise TypeError(f"symbolic {self} ** {other!r} is not supported (+ - * // % min max)")

    __rpow__ = __pow__

    def __abs__(self):
        raise TypeError(f"abs() of the symbolic {self} is not supported (+ - * // % min max)")

    def is_immediate(self):
        """Whether this is a plain number (SymbolicScalar(10))."""
        return _const_of(self._poly) is not None

    def is_symbol(self):
        """Whether this is a bare symbol (a dynamic dim, a loop index, SymbolicScalar("n"))."""
        return symbol_of(self) is not None

    def is_expression(self):
        """Whether this is an expression over symbols (n + 5, i * 64)."""
        return not (self.is_immediate() or self.is_symbol())

    def is_concrete(self):
        """Whether the value is known now: an immediate, or a symbol made
        outside a kernel with a value (SymbolicScalar("n", 5))."""
        return self.is_immediate() or getattr(self, "_concrete", None) is not None

    def concrete(self):
        """The value when is_concrete(); otherwise a ValueError (an FeError)."""
        if self.is_immediate():
            return _const_of(self._poly)
        known = getattr(self, "_concrete", None)
        if known is None:
            raise FeError(ValueError(f"Not concrete value: {self} is known only at run time"))
        return known

    def as_variable(self):
        """PyPTO marks an expression as an intermediate variable computed once.
        The compiler here already computes each expression once per launch,
        so this returns the scalar itself."""
        return self

    def min(self, other):
        """The smaller of self and other (PyPTO: (n - i*64).min(64))."""
        return smin(self, other)

    def max(self, other):
        """The larger of self and other."""
        return smax(self, other)

    def __eq__(self, other): return _compare("==", self, other)
    def __ne__(self, other): return _compare("!=", self, other)
    def __lt__(self, other): return _compare("<", self, other)
    def __le__(self, other): return _compare("<=", self, other)
    def __gt__(self, other): return _compare(">", self, other)
    def __ge__(self, other): return _compare(">=", self, other)

    def __bool__(self):
        if not _internal_caller(sys._getframe(1)):
            raise FeError(TypeError(
                f"the truth value of the symbolic {self} is known only at run time: branch "
                f"on it with `if pypto.cond({self} != 0):`"))
        return int(self) != 0


def _compare(op, a, b):
    if isinstance(b, float):
        _check_operand(b, op)
    p, q = _poly(a), _poly(b)
    if p is None or q is None:
        return NotImplemented
    value = _FOLD[op](int(a), int(b))
    poly = _node(op, p, q)
    k = _const_of(poly)
    if k is not None:
        return bool(k)
    return SymbolicCondition._new(1 if value else 0, poly)


class SymbolicCondition(SymbolicScalar):
    """A comparison of symbolic scalars (1 true, 0 false at run time): the
    argument of pypto.cond. Combine with & | ~ (or `and`/`or`/`not` inside
    pypto.cond(...)). Its truth is known only at run time, so bool() of it
    outside pypto.cond is a TypeError."""


    def __bool__(self):
        if not _internal_caller(sys._getframe(1)):
            raise FeError(TypeError(
                f"the condition {self} is known only at run time: branch on it with "
                f"`if pypto.cond({self}):` (an if, else and elif on pypto.cond become a "
                f"branch of the graph); for the smaller or larger of two symbolic values "
                f"use a.min(b) / a.max(b) or pypto.min / pypto.max, not Python's min/max"))
        return int(self) != 0

    def __repr__(self):
        text = _text(self._poly)
        return text[1:-1] if text.startswith("(") and text.endswith(")") else text

    __str__ = __repr__

    def __and__(self, other): return logical("and", self, other)
    def __rand__(self, other): return logical("and", other, self)
    def __or__(self, other): return logical("or", self, other)
    def __ror__(self, other): return logical("or", other, self)

    def __invert__(self):
        return _compare("==", self, 0)

    __hash__ = int.__hash__


def _as_condition(x, what):
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, SymbolicScalar):
        return x
    if isinstance(x, int):
        return int(x)
    raise TypeError(f"{what}: expected a symbolic condition or a bool, got {type(x).__name__}")


def logical(op, a, b):
    """a and/or b over conditions (nonzero is true)."""
    a, b = _as_condition(a, op), _as_condition(b, op)
    p, q = _poly(a), _poly(b)
    value = _FOLD[op](int(a), int(b))
    if op == "and" and (_const_of(p) == 0 or _const_of(q) == 0):
        return False
    if op == "or" and ((_const_of(p) or 0) != 0 or (_const_of(q) or 0) != 0):
        return True
    if _const_of(p) is not None:  # a true constant: the other decides
        return b if isinstance(b, SymbolicScalar) else bool(b)
    if _const_of(q) is not None:
        return a
    return SymbolicCondition._new(1 if value else 0, _node(op, p, q))


def logical_not(a):
    a = _as_condition(a, "not")
    if not isinstance(a, SymbolicScalar):
        return not a
    return _compare("==", a, 0)


def _minmax(op, a, b):
    for x in (a, b):
        _check_operand(x, op)
        if _poly(x) is None:
            raise TypeError(f"pypto.{op}: expected ints or symbolic scalars, got "
                            f"{type(x).__name__}" + (
                                " (tensors: pypto.minimum / pypto.maximum elementwise, "
                                "pypto.amin / pypto.amax over a dim)"
                                if type(x).__name__ == "Tensor" else ""))
    fold = min if op == "min" else max
    return _make(fold(int(a), int(b)), _node(op, _poly(a), _poly(b)))


def smin(a, b, *more):
    """pypto.min(a, b, ...): the smallest of ints and symbolic scalars."""
    r = _minmax("min", a, b)
    for c in more:
        r = _minmax("min", r, c)
    return r


def smax(a, b, *more):
    """pypto.max(a, b, ...): the largest of ints and symbolic scalars."""
    r = _minmax("max", a, b)
    for c in more:
        r = _minmax("max", r, c)
    return r


def value_at(x, values):
    """The int value of int or SymbolicScalar `x` with its symbols bound to
    `values` ({name: int}); a KeyError names a symbol `values` lacks."""
    p = _poly(x)
    if p is None:
        raise TypeError(f"value_at: {x!r} is not an int or a symbolic scalar")
    return _poly_value(p, values)


def _poly_value(p, values):
    total = 0
    for m, c in p:
        term = c
        for a in m:
            term *= _atom_value(a, values)
        total += term
    return total


def _atom_value(a, values):
    if isinstance(a, str):
        return int(values[a])
    _, op, p, q = a
    if op == "select":
        return _poly_value(q[0] if _poly_value(p, values) else q[1], values)
    return int(_FOLD[op](_poly_value(p, values), _poly_value(q, values)))


def constant_upper_bound(x):
    """A constant c with x <= c for every binding, when the form shows one
    (as the compiler's SymExpr::ConstantUpperBound: an int; min(c, e) + k;
    max or select of two bounded operands; a comparison, 1); else None."""
    p = _poly(x)
    if p is None:
        return None
    c = _const_of(p)
    if c is not None:
        return c
    const = sum(k for m, k in p if not m)
    rest = [(m, k) for m, k in p if m]
    if len(rest) != 1 or rest[0][1] != 1 or len(rest[0][0]) != 1:
        return None
    atom = rest[0][0][0]
    if isinstance(atom, str):
        return None
    _, op, lhs, rhs = atom
    if op in _COMPARE or op in ("and", "or"):
        bound = 1
    else:
        if op == "select":
            lhs, rhs = rhs
        bounds = [constant_upper_bound(SymbolicScalar._new(0, q)) for q in (lhs, rhs)]
        if op == "min" and any(b is not None for b in bounds):
            bound = min(b for b in bounds if b is not None)
        elif op in ("max", "select") and all(b is not None for b in bounds):
            bound = max(bounds)
        else:
            return None
    try:
        return _apply("+", bound, const)
    except OverflowError:
        return None  # no int64 bound


def at_least(e, k, loop_bounds):
    """Whether e >= k provably, for every value of the loop indices in
    `loop_bounds` ({index name: (start, stop, step)}): e - k with each index
    that appears linearly replaced by the end of its range that makes it
    smallest (its first or last value), then each c*(p//m) by its lower
    bound (c/m)*p (c < 0) or (c/m)*(p - m + 1) (c > 0) where m divides c, is
    a constant >= 0. False where that is not known (an index inside a
    min/max/floordiv, terms that do not cancel)."""
    try:
        return _at_least(e, k, loop_bounds)
    except OverflowError:
        return False  # a bound that is no int64: not known


def _at_least(e, k, loop_bounds):
    d, q = _poly(e), _poly(k)
    if d is None or q is None:
        return False
    d = _add(d, q, -1)
    for name, (start, stop, step) in loop_bounds.items():
        coeff = None
        for m, c in d:
            if name in m:
                if m != (name,):
                    return False  # not linear in the index
                coeff = c
            elif any(not isinstance(a, str) and name in _atom_text(a) for a in m):
                return False  # inside a node
        if coeff is None:
            continue
        step = int(step)
        if step > 0:
            first, last = start, start + (stop - start - 1) // step * step
        else:
            first, last = stop + 1, start  # the smallest and largest values
        p = _poly(first if coeff > 0 else last)
        if p is None:
            return False
        d = _add(_add(d, _mul(_sym(name), _const(coeff)), -1), _mul(p, _const(coeff)))
    lower = {}
    for m, c in d:
        atom = m[0] if len(m) == 1 and not isinstance(m[0], str) else None
        divisor = _const_of(atom[3]) if atom is not None and atom[1] == "//" else None
        if divisor is not None and divisor > 0 and _apply("%", c, divisor) == 0:
            p = atom[2] if c < 0 else _add(atom[2], _const(divisor - 1), -1)
            for pm, pc in p:
                lower[pm] = _apply("+", lower.get(pm, 0),
                                   _apply("*", pc, _apply("//", c, divisor)))
        else:
            lower[m] = _apply("+", lower.get(m, 0), c)
    low = _const_of(_norm(lower))
    return low is not None and low >= 0


def ceildiv(a, b):
    """pypto.ceildiv(a, b): a divided by b rounded up, for ints and symbolic
    scalars ((a + b - 1) // b)."""
    for name, x in (("a", a), ("b", b)):
        if isinstance(x, bool) or _poly(x) is None:
            raise TypeError(f"pypto.ceildiv: {name} must be an int or a SymbolicScalar, got "
                            f"{type(x).__name__} {x!r}")
    return (a + b - 1) // b


def select(c, a, b):
    """a where condition c holds at run time, else b (c: a bool, an int or a
    SymbolicScalar, nonzero is true; a, b: ints or SymbolicScalars): a
    select node (graph.proto DimSelect), usable wherever a symbolic scalar
    is (shapes, offsets, loop bounds); two bools give a condition."""
    if not is_symbolic(c):
        return a if c else b
    if isinstance(a, bool) and isinstance(b, bool):
        return logical("or", logical("and", c, a), logical("and", logical_not(c), b))
    a, b = (x if is_symbolic(x) else int(x) for x in (a, b))
    p, q = _poly(a), _poly(b)
    if p == q:
        return a
    return _make(int(a) if int(c) else int(b), (((("node", "select", c._poly, (p, q)),), 1),))


class SelectedFloat:
    """A float chosen at run time: `then` where condition `cond` holds, else
    `other` (each a float or a SelectedFloat). A float that differs between
    the branches of a run-time `if` is one (control_flow.py). Arithmetic with
    numbers applies to both choices; an op given one as a number computes
    both and selects elementwise (ops.py), so each element is what the
    branch taken would have computed."""

    __slots__ = ("cond", "then", "other")

    def __init__(self, cond, then, other):
        self.cond, self.then, self.other = cond, then, other

    def map(self, fn):
        """fn applied to each choice."""
        def each(x):
            return x.map(fn) if isinstance(x, SelectedFloat) else fn(x)
        return SelectedFloat(self.cond, each(self.then), each(self.other))

    def _with(self, other, fn):
        if isinstance(other, SelectedFloat):
            return self.map(lambda x: other.map(lambda y: fn(x, y)))
        if isinstance(other, (int, float)) and not isinstance(other, bool) and \
                not is_symbolic(other):
            return self.map(lambda x: fn(x, other))
        return NotImplemented

    def __add__(self, o): return self._with(o, operator.add)
    def __radd__(self, o): return self._with(o, lambda x, y: y + x)
    def __sub__(self, o): return self._with(o, operator.sub)
    def __rsub__(self, o): return self._with(o, lambda x, y: y - x)
    def __mul__(self, o): return self._with(o, operator.mul)
    def __rmul__(self, o): return self._with(o, lambda x, y: y * x)
    def __truediv__(self, o): return self._with(o, operator.truediv)
    def __rtruediv__(self, o): return self._with(o, lambda x, y: y / x)
    def __pow__(self, o): return self._with(o, operator.pow)
    def __rpow__(self, o): return self._with(o, lambda x, y: y ** x)
    def __neg__(self): return self.map(operator.neg)
    def __pos__(self): return self
    def __abs__(self): return self.map(abs)

    def __bool__(self):
        raise TypeError(f"{self!r} is known only at run time: it has no truth value while "
                        f"tracing (compare tensors, or branch on the condition itself)")

    def __float__(self):
        raise TypeError(f"{self!r} is known only at run time: float() needs its value while "
                        f"tracing")

    def __repr__(self):
        return f"({self.then!r} if {self.cond} else {self.other!r})"


def is_symbolic(x):
    return isinstance(x, SymbolicScalar)


def same(a, b):
    """Whether two dims (ints or symbolic) are provably equal."""
    p, q = _poly(a), _poly(b)
    if p is None or q is None:
        return a == b
    return p == q


def same_shape(a, b):
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))


def symbol_of(x):
    """The symbol name when x is a bare symbol, else None."""
    if isinstance(x, SymbolicScalar) and len(x._poly) == 1:
        (m, c), = x._poly
        if c == 1 and len(m) == 1 and isinstance(m[0], str):
            return m[0]
    return None


def symbols_in(x):
    """The symbol names x's expression uses."""
    out = set()

    def walk(p):
        for m, _ in p:
            for a in m:
                if isinstance(a, str):
                    out.add(a)
                elif a[1] == "select":
                    walk(a[2])
                    walk(a[3][0])
                    walk(a[3][1])
                else:
                    walk(a[2])
                    walk(a[3])
    if isinstance(x, SymbolicScalar):
        walk(x._poly)
    return out


def to_dim_expr(x, msg):
    """Writes int or SymbolicScalar x into pto.v1.DimExpr `msg`."""
    _to_proto(_poly(x), msg, [0])


def evaluate(x, values):
    """The value of int or SymbolicScalar x for {symbol name: int}, as the
    runtime computes it at launch (runtime/dim_expr.h, through the native
    extension): a ValueError naming an unbound symbol, a division by zero or
    an int64 overflow."""
    msg = graph_pb2.DimExpr()
    to_dim_expr(x, msg)
    return native().evaluate_dim_expr(msg.SerializeToString(), dict(values))


def symbol(name, value):
    """The SymbolicScalar of symbol `name` whose trace value is `value`."""
    return SymbolicScalar._new(value, _sym(name))


# While a kernel is traced: a function giving {name: SymbolicScalar} of the
# symbols usable at this point (its parameters' dynamic dims, the open
# loops' indices); set by the tracer (symbols_in_scope).
_symbols_in_scope = None


class symbols_in_scope:  # noqa: N801 - used as a function in a with statement
    """with symbols_in_scope(fn): named symbols resolve through fn()."""

    def __init__(self, fn):
        self._fn = fn

    def __enter__(self):
        global _symbols_in_scope
        self._saved, _symbols_in_scope = _symbols_in_scope, self._fn
        return self

    def __exit__(self, *exc):
        global _symbols_in_scope
        _symbols_in_scope = self._saved
        return False


def symbolic_scalar(value_or_name, value=None):
    """pypto.symbolic_scalar(value_or_name): an int or a SymbolicScalar is
    returned as a symbolic scalar (an int stays an int: a constant needs no
    symbol); a name must be the name of a dynamic dim of the kernel's
    parameters (pypto.Tensor(["n", 64], ...)), where the runtime binds it:
    a scalar known only at run time has to come from a tensor's shape here.
    `value` (PyPTO's concrete value for a name) is not needed: the runtime
    binds the symbol from the arguments' shapes."""
    what = "pypto.symbolic_scalar"
    if isinstance(value_or_name, bool):
        raise TypeError(f"{what}: expected an int, a SymbolicScalar or a name, got a bool")
    if isinstance(value_or_name, int):
        return value_or_name
    if not isinstance(value_or_name, str):
        raise TypeError(f"{what}: expected an int, a SymbolicScalar or a name, got "
                        f"{type(value_or_name).__name__}")
    name = value_or_name
    if _symbols_in_scope is None:
        raise TypeError(f"{what}({name!r}): a named symbolic scalar exists only inside a "
                        f"@pypto.jit kernel")
    known = _symbols_in_scope()
    if name not in known:
        raise ValueError(
            f"{what}({name!r}): no dynamic dim of this kernel's parameters is named {name!r} "
            f"(symbols here: {', '.join(sorted(known)) or 'none'}); run-time scalars are "
            f"bound from tensor shapes: name a dim in an annotation, e.g. "
            f"pypto.Tensor([{name!r}, 64], pypto.DT_FP32), or use x.shape[i]")
    return known[name]


def SymInt(value, name):  # noqa: N802 - phase 1's name for a dim's symbol
    """x.shape[i] of a dynamic dim: symbol `name` with trace value `value`."""
    return symbol(name, value)
