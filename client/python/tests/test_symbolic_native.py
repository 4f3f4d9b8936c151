"""pypto's symbolic scalars fold and evaluate as the compiler and the runtime
do (runtime/dim_ops.h, through the native extension: symbolic.py): every
dimension operator over int64 edges gives the runtime's value or, where the
runtime has none (an overflow, a division by zero, INT64_MIN // -1), an
error; and expressions the front end simplifies (its canonical form)
evaluate to what the runtime computes from the tree pypto sends it.
"""

import itertools

import pytest

from pypto import symbolic
from pypto._proto import graph_pb2

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
EDGES = (INT64_MIN, INT64_MIN + 1, -7, -2, -1, 0, 1, 2, 3, 7, INT64_MAX - 1, INT64_MAX)


def _small(v):
    return -2**31 < v < 2**31


def _python(op, a, b):
    """a op b through pypto's symbolic scalars (a folded constant)."""
    x = symbolic.SymbolicScalar(a)
    if op in ("min", "max"):
        return (symbolic.smin if op == "min" else symbolic.smax)(x, b)
    if op in ("and", "or"):
        return int(bool(symbolic.logical(op, x, b)))
    r = {"+": x.__add__, "-": x.__sub__, "*": x.__mul__, "//": x.__floordiv__,
         "%": x.__mod__, "==": x.__eq__, "!=": x.__ne__, "<": x.__lt__, "<=": x.__le__,
         ">": x.__gt__, ">=": x.__ge__}[op](b)
    return int(r)


def _runtime(native, op, a, b, constants=False):
    """a op b as the runtime evaluates a DimExpr (symbols x, y bound to a, b,
    or the constants themselves), None where it has no value."""
    e = graph_pb2.DimExpr()
    e.binary.op = symbolic._DIM_OPS[op]
    if constants:
        e.binary.lhs.constant, e.binary.rhs.constant = a, b
        values = {}
    else:
        e.binary.lhs.symbol, e.binary.rhs.symbol = "x", "y"
        values = {"x": a, "y": b}
    try:
        return native.evaluate_dim_expr(e.SerializeToString(), values)
    except ValueError:
        return None


@pytest.mark.parametrize("op", sorted(symbolic._DIM_OPS))
def test_every_operator_folds_as_the_runtime_evaluates(native, op):
    for a, b in itertools.product(EDGES, EDGES):
        want = _runtime(native, op, a, b)
        assert want == _runtime(native, op, a, b, constants=True)
        try:
            got = _python(op, a, b)
        except (OverflowError, ZeroDivisionError) as e:
            assert want is None, f"{a} {op} {b}: pypto raised {e!r}, the runtime gives {want}"
            continue
        assert want is not None, f"{a} {op} {b}: pypto folds to {got}, the runtime has no value"
        assert got == want, f"{a} {op} {b}"
        assert native.apply_dim_op(symbolic._DIM_OPS[op], a, b) == want


def test_apply_dim_op_has_no_value_outside_int64(native):
    add = graph_pb2.DIM_OP_ADD
    assert native.apply_dim_op(add, INT64_MAX, 0) == INT64_MAX
    assert native.apply_dim_op(add, INT64_MAX, 1) is None
    assert native.apply_dim_op(add, 2**63, -1) is None       # an operand beyond int64
    assert native.apply_dim_op(graph_pb2.DIM_OP_FLOORDIV, -7, 2) == -4
    assert native.apply_dim_op(graph_pb2.DIM_OP_MOD, -7, 2) == 1
    assert native.apply_dim_op(graph_pb2.DIM_OP_MOD, 7, -2) == -1
    assert native.apply_dim_op(graph_pb2.DIM_OP_FLOORDIV, INT64_MIN, -1) is None
    with pytest.raises(ValueError, match="no pto.v1.DimOp"):
        native.apply_dim_op(999, 1, 2)


def test_arithmetic_beyond_int64_is_an_error_naming_it():
    n = symbolic.symbol("n", 1_000_003)
    with pytest.raises(OverflowError, match="no int64"):
        n * INT64_MAX * 2
    with pytest.raises(OverflowError, match="no int64"):
        symbolic.SymbolicScalar(INT64_MAX) + 1
    with pytest.raises(ZeroDivisionError):
        n // 0
    with pytest.raises(ZeroDivisionError):
        symbolic.SymbolicScalar(5) % 0


# Expressions as trees: a symbol name, an int, or (op, operand, ...); op is
# a DimOp of symbolic._DIM_OPS or "select" (cond, if true, if false). No
# subtree is constant (the front end folds those as Python ints).
EXPRESSIONS = [
    ("//", ("+", ("*", "n", 4), 63), 64),
    ("%", "n", -3),
    ("//", ("+", ("*", "n", 6), 5), -3),
    ("//", ("+", ("*", 64, "n"), "m"), 64),
    ("%", ("+", ("*", 64, "n"), "m"), 64),
    ("+", ("min", "n", 5), "n"),
    ("max", ("-", "n", "m"), 0),
    ("+", ("-", "n", "n"), "m"),
    ("//", ("-", ("+", "n", "m"), 1), "m"),
    ("//", ("*", "n", "m"), 7),
    ("select", ("<", "n", "m"), "n", "m"),
    ("and", (">=", "n", 3), ("!=", "m", 0)),
    ("*", "n", 2**40),
    ("-", ("*", "n", 3), ("*", "n", 2)),
    ("%", ("-", "n", 7), 1),
    ("min", ("+", "n", 1), ("+", "n", 2)),
]


def _front_end(tree, symbols):
    """The tree built with pypto's symbolic scalars (its canonical form)."""
    if isinstance(tree, str):
        return symbols[tree]
    if isinstance(tree, int):
        return tree
    op, *args = tree
    args = [_front_end(a, symbols) for a in args]
    if op == "select":
        return symbolic.select(*args)
    if op in ("min", "max"):
        return (symbolic.smin if op == "min" else symbolic.smax)(*args)
    if op in ("and", "or"):
        return symbolic.logical(op, *args)
    a, b = args
    return {"+": a.__add__, "-": a.__sub__, "*": a.__mul__, "//": a.__floordiv__,
            "%": a.__mod__, "==": a.__eq__, "!=": a.__ne__, "<": a.__lt__, "<=": a.__le__,
            ">": a.__gt__, ">=": a.__ge__}[op](b) if symbolic.is_symbolic(a) else \
        {"+": b.__radd__, "-": b.__rsub__, "*": b.__rmul__}[op](a)


def _written(tree, msg):
    """The tree as written, into DimExpr `msg` (no simplification)."""
    if isinstance(tree, str):
        msg.symbol = tree
    elif isinstance(tree, int):
        msg.constant = tree
    elif tree[0] == "select":
        for part, sub in zip((msg.select.cond, msg.select.if_true, msg.select.if_false),
                             tree[1:]):
            _written(sub, part)
    else:
        msg.binary.op = symbolic._DIM_OPS[tree[0]]
        _written(tree[1], msg.binary.lhs)
        _written(tree[2], msg.binary.rhs)


@pytest.mark.parametrize("tree", EXPRESSIONS, ids=[str(t) for t in EXPRESSIONS])
def test_simplified_expressions_mean_what_was_written(native, tree):
    expr = _front_end(tree, {"n": symbolic.symbol("n", 1_000_003),
                             "m": symbolic.symbol("m", 1_000_033)})
    written = graph_pb2.DimExpr()
    _written(tree, written)
    for n, m in itertools.product(EDGES, EDGES):
        try:
            want = native.evaluate_dim_expr(written.SerializeToString(), {"n": n, "m": m})
        except ValueError:
            want = None
        try:
            got = symbolic.evaluate(expr, {"n": n, "m": m})
        except ValueError:
            got = None
        # Where both have a value they agree; with small sizes both have one.
        # At the int64 edges either may lack one where the other has it (the
        # canonical form reorders the arithmetic: 64*n//64 is n).
        if want is not None and got is not None:
            assert got == want, f"{tree} at n={n}, m={m}"
        elif _small(n) and _small(m) and (got is None) != (want is None):
            pytest.fail(f"{tree} at n={n}, m={m}: written {want}, simplified {got}")


def test_evaluate_names_what_it_cannot():
    n = symbolic.symbol("n", 1_000_003)
    assert symbolic.evaluate(n * 2 + 1, {"n": 7}) == 15
    assert symbolic.evaluate(12, {}) == 12
    with pytest.raises(ValueError, match="m"):
        symbolic.evaluate(n + symbolic.symbol("m", 5), {"n": 1})
    with pytest.raises(ValueError, match="zero"):
        symbolic.evaluate(7 // (n - 5), {"n": 5})
    with pytest.raises(ValueError, match="overflow"):
        symbolic.evaluate(n * n * n, {"n": 2**22})


def test_the_compiler_reads_the_front_ends_trees(native):
    n, m = symbolic.symbol("n", 1_000_003), symbolic.symbol("m", 1_000_033)
    for expr, constant in [((n * 4 + 63) // 64, None), (n - n + 5, 5), (symbolic.smin(n, m), None)]:
        msg = graph_pb2.DimExpr()
        symbolic.to_dim_expr(expr, msg)
        text, value = native.fold_dim_expr(msg.SerializeToString())
        assert value == constant, text
    with pytest.raises(ValueError, match="DimExpr"):
        native.fold_dim_expr(b"\xff\xff")
