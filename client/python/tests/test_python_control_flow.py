"""Python control flow on symbolic values (PyPTO's jit frontend): plain
`if`/`elif`, `a if c else b`, and/or/not and chained comparisons on values
known only at run time become graph branches (ast_rewrite.py); values bound
in the branches merge after them; helper functions and
@pypto.frontend.function helpers are translated too; builtin min/max of
symbolic scalars are pypto.min/pypto.max. Results are checked against torch;
each kernel compiles once for every run-time size. Tests named
test_row_<api>_... cover the controlflow rows of the PyPTO reference."""

import ast
import textwrap

import numpy as np
import pytest
import torch

import pypto
from pypto import TraceError, ast_rewrite, symbolic

F32 = pypto.DT_FP32
DYN = pypto.DYNAMIC


def arr(*shape):
    return np.zeros(shape, np.float32)


def assert_one_compile():
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["traces"] == 1, stats


def ops_of(graph_or_region):
    return [op.kind for op in graph_or_region.ops]


def run(kernel, rows, want, cols=64):
    x = torch.randn(rows, cols)
    out = torch.zeros(rows, cols)
    kernel(x, out)
    torch.testing.assert_close(out, want(x), rtol=1e-5, atol=1e-5)


# Plain if / elif / else, conditional expressions, and/or/not, chains ---------

def test_plain_if_elif_else_on_a_shape_is_one_branch_op_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        n = x.shape[0]
        if n > 8:
            out[:] = pypto.exp(x)
        elif 0 < n <= 4:
            out[:] = x * 2
        else:
            out[:] = x + 1

    g = k.trace(arr(5, 64), arr(5, 64))
    assert ops_of(g) == ["if"]
    pypto.reset_compile_stats()
    for rows, want in ((12, torch.exp), (3, lambda x: x * 2), (6, lambda x: x + 1)):
        run(k, rows, want)
    assert_one_compile()


def test_an_if_known_while_tracing_takes_one_branch_as_python_does():
    calls = []

    @pypto.jit
    def k(x: pypto.Tensor([4, 64], F32), out: pypto.Tensor([4, 64], F32), flag: bool):
        pypto.set_vec_tile_shapes(4, 64)
        if x.shape[0] > 2 and flag:   # a static shape and a Python bool
            calls.append("then")
            out[:] = pypto.exp(x)
        else:
            calls.append("else")
            out[:] = x * 2
        for j in range(3):            # a plain loop: continue/break as in Python
            if j == 1:
                continue
            if j == 2:
                break

    assert ops_of(k.trace(arr(4, 64), arr(4, 64), True)) == ["exp"]
    assert ops_of(k.trace(arr(4, 64), arr(4, 64), False)) == ["muls"]
    assert calls == ["then", "else"]


def test_conditional_expression_and_boolean_operators_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        n = x.shape[0]
        y = pypto.exp(x) if n > 4 and n % 2 == 0 else x * 2
        if not (n > 4) or n == 7:
            y = y + 1
        out[:] = y

    def want(x):
        n = x.shape[0]
        y = x.exp() if n > 4 and n % 2 == 0 else x * 2
        return y + 1 if not (n > 4) or n == 7 else y

    for rows in (3, 6, 7, 9):
        run(k, rows, want)
    assert_one_compile()


def test_chained_comparison_evaluates_each_operand_once():
    seen = []

    def middle(v):
        seen.append(v)
        return v

    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        if 2 < middle(x.shape[0]) < 9:
            out[:] = x * 3
        else:
            out[:] = x

    g = k.trace(arr(5, 64), arr(5, 64))
    (op,) = g.ops
    assert op.kind == "if"
    assert len(seen) == 1 + pypto.compile_stats()["check_traces"]


# Helpers: plain functions and @pypto.frontend.function ------------------------

def _scaled_by_size(x, n):
    if n > 4:
        y = pypto.exp(x)
    else:
        y = x * 2
    return y


@pypto.frontend.function
def _shifted(x, n):
    return x + 1 if n % 2 == 0 else x - 1


def test_helper_functions_are_translated_once_each_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        n = x.shape[0]
        out[:] = _shifted(_scaled_by_size(x, n), n)

    def want(x):
        n = x.shape[0]
        y = x.exp() if n > 4 else x * 2
        return y + 1 if n % 2 == 0 else y - 1

    for rows in (3, 4, 5, 8):
        run(k, rows, want)
    assert_one_compile()
    # One translation per function object.
    assert ast_rewrite.rewritten(_scaled_by_size) is ast_rewrite.rewritten(_scaled_by_size)
    assert ast_rewrite.rewritten(_scaled_by_size) is not _scaled_by_size


def test_row_pypto_frontend_function_marks_a_helper_inlined_into_kernels(native):
    @pypto.frontend.function
    def clipped_rows(n):
        return max(1, min(n - 2, 4))

    @pypto.frontend.function()
    def doubled(x):
        return x * 2

    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        out[:] = x
        for i in pypto.loop(clipped_rows(x.shape[0])):
            out[i:, :] = doubled(x[i:i + 1, :])

    assert clipped_rows(10) == 4 and clipped_rows(2) == 1  # outside a kernel: plain Python
    for rows in (2, 5, 9):
        def want(x, rows=rows):
            y = x.clone()
            m = max(1, min(rows - 2, 4))
            y[:m] = x[:m] * 2
            return y
        run(k, rows, want)
    assert_one_compile()
    with pytest.raises(TypeError, match=r"pypto.frontend.function: expected a Python function"):
        pypto.frontend.function(3)


def test_a_helper_without_source_keeps_the_clear_error():
    namespace = {"pypto": pypto}
    exec("def helper(x, out):\n"
         "    if x.shape[0] > 3:\n"
         "        out[:] = x\n", namespace)
    helper = namespace["helper"]

    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        helper(x, out)

    with pytest.raises(TypeError, match=r"the condition x_d0 > 3 is known only at run time"):
        k.trace(arr(5, 64), arr(5, 64))


def test_the_source_rewritten_is_the_functions_own_lines(monkeypatch):
    """The rewrite finds a function's lines from its code object: what
    inspect.getsource gives, without asking inspect (whose tokenizer costs
    milliseconds in a fresh process)."""
    import functools
    import inspect

    def decorate(fn):
        return fn

    class Holder:
        @decorate
        def method(self, x):
            def inner(y):
                return (y +
                        1)
            text = """
              a string's line
            """
            return inner(x) if x else text
# a comment at column 0 right after the method

    def wrapper(*args):
        return Holder.method(*args)

    functions = [Holder.method, test_the_source_rewritten_is_the_functions_own_lines]
    expected = [ast.dump(ast.parse(textwrap.dedent(inspect.getsource(f)))) for f in functions]

    def no_inspect(fn):
        raise AssertionError(f"inspect.getsource({fn.__name__}) was called")

    monkeypatch.setattr(inspect, "getsource", no_inspect)
    for f, want in zip(functions, expected):
        assert ast.dump(ast_rewrite._parse_source(f, f.__code__)) == want
    assert ast_rewrite.rewrite(Holder.method) is not Holder.method
    # A wrapper's source is the wrapped function's, as inspect reads it.
    wrapped = functools.wraps(Holder.method)(wrapper)
    with pytest.raises(AssertionError, match=r"getsource\(method\)"):
        ast_rewrite._parse_source(wrapped, wrapper.__code__)


# Builtin min / max -------------------------------------------------------------

def test_builtin_min_max_of_symbolic_values_are_pypto_min_max_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor(["n", 64], F32), out: pypto.Tensor(["n", 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop((n + 15) // 16, idx_name="i"):
            t = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[min(n - i * 16, 16), 64])
            pypto.assemble(t * 2, [i * 16, 0], out)
        stop = max(n - 20, 0)
        for j in pypto.loop(stop):
            out[j:, :] = x[j:j + 1, :] + 100

    g = k.trace(arr(40, 64), arr(40, 64))
    view = g.ops[0].regions[0].ops[0]
    assert list(view.attrs["shape"].exprs.values)[0].binary.op == 6  # DIM_OP_MIN
    pypto.reset_compile_stats()
    for rows in (7, 40):
        def want(x, rows=rows):
            y = x * 2
            m = max(rows - 20, 0)
            y[:m] = x[:m] + 100
            return y
        run(k, rows, want)
    assert_one_compile()
    assert min(3, 4) == 3 and max([1, 5, 2]) == 5  # Python's own, unchanged


# Values bound differently in the branches ---------------------------------------

def test_ints_and_symbolic_scalars_bound_in_branches_are_run_time_values_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        n = x.shape[0]
        if n > 6:
            rows = 4           # an int in one branch ...
            start = n - 2      # ... a symbolic scalar
        elif n > 3:
            rows = n - 3
            start = 1
        else:
            rows = 1
            start = 0
        out[:] = x
        for i in pypto.loop(rows):                  # a loop bound
            out[i:, :] = x[i:i + 1, :] * 2
        out[start:, :] = x[start:start + 1, :] + 7  # a view offset

    def want(x):
        n = x.shape[0]
        rows, start = (4, n - 2) if n > 6 else (n - 3, 1) if n > 3 else (1, 0)
        y = x.clone()
        y[:rows] = x[:rows] * 2
        y[start] = x[start] + 7
        return y

    for n in (2, 5, 9):
        run(k, n, want)
    assert_one_compile()


def test_a_selected_size_is_a_select_node_in_the_graph():
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        n = x.shape[0]
        size = 2 if n > 4 else 1
        out[0:size, :] = x[0:size, :] * 2

    g = k.trace(arr(5, 64), arr(5, 64))
    view = next(op for op in g.ops if op.kind == "view")
    size = list(view.attrs["shape"].exprs.values)[0]
    assert size.WhichOneof("kind") == "select"
    assert size.select.if_true.constant == 2 and size.select.if_false.constant == 1
    assert size.select.cond.binary.op == 12  # DIM_OP_GT


def test_lists_tuples_and_bools_merge_element_wise_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        n = x.shape[0]
        big = False
        if n > 4:
            span = (1, 3)
            parts = [x * 2, 10]
            big = True
        else:
            span = (0, n)
            parts = [x + 1, 20]
        out[:] = parts[0]
        for i in pypto.loop(span[0], span[1]):
            out[i:, :] = x[i:i + 1, :] + parts[1]
        if big:
            out[0:1, :] = x[0:1, :] * 0

    def want(x):
        n = x.shape[0]
        lo, hi, t, add = (1, 3, x * 2, 10) if n > 4 else (0, n, x + 1, 20)
        y = t.clone()
        y[lo:hi] = x[lo:hi] + add
        if n > 4:
            y[0] = 0
        return y

    for n in (3, 8):
        run(k, n, want)
    assert_one_compile()


def test_a_tensor_bound_in_one_branch_with_a_value_before_passes_through(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y = x + 1
        if x.shape[0] > 4:
            y = y * 3
        out[:] = y

    for n in (2, 6):
        run(k, n, lambda x: (x + 1) * 3 if x.shape[0] > 4 else x + 1)
    assert_one_compile()


# Errors --------------------------------------------------------------------------

def _trace(kernel_body, shape=(5, 64)):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        kernel_body(x, out)

    return k.trace(arr(*shape), arr(*shape))


def test_break_continue_and_return_in_a_run_time_branch_name_the_line():
    def returns(x, out):
        if x.shape[0] > 3:
            out[:] = x
            return

    with pytest.raises(ValueError, match=r"test_python_control_flow.py:\d+: `return` inside a "
                                         r"branch of an `if` on the run-time condition x_d0 > 3 "
                                         r"\(the `return` is at line \d+\)"):
        _trace(returns)

    def breaks(x, out):
        for i in pypto.loop(x.shape[0]):
            if i == 2:
                break
            out[i:, :] = x[i:i + 1, :]

    with pytest.raises(ValueError, match=r"`break` inside a branch of an `if` on the run-time "
                                         r"condition i == 2"):
        _trace(breaks)

    def continues(x, out):
        for i in pypto.loop(x.shape[0]):
            if pypto.cond(i == 2):
                continue
            out[i:, :] = x[i:i + 1, :]

    with pytest.raises(ValueError, match=r"`continue` inside a branch of `if pypto.cond"):
        _trace(continues)


def test_a_name_bound_in_one_branch_and_used_after_is_an_error_naming_it():
    def one_sided(x, out):
        if x.shape[0] > 3:
            y = x * 2
        out[:] = y

    with pytest.raises(ValueError, match=r"'y' is bound only in the then branch of the if on the "
                                         r"run-time condition x_d0 > 3 and has no value before it, "
                                         r"but is used after the if"):
        _trace(one_sided)

    def unused_after(x, out):  # bound in one branch, never read after: fine
        if x.shape[0] > 3:
            y = x * 2
            out[:] = y

    assert ops_of(_trace(unused_after))[-1] == "if"


def test_floats_that_differ_between_run_time_branches_are_run_time_values_end_to_end():
    """A float bound differently in two run-time branches is chosen at run
    time: ops given it compute with each choice and select elementwise, so
    each element is bit for bit what the branch taken computes (FP32 and
    FP16; a binary op, clip bounds, full, where), with one compile."""
    def body(x, out, filled, scale, dt):
        half = scale / 2
        out[:] = pypto.clip(x * scale + half, -scale, scale)
        filled[:] = pypto.where(x > 0, x, pypto.full([1, 64], -scale, dt))

    for dt, tdt in ((F32, torch.float32), (pypto.DT_FP16, torch.float16)):
        @pypto.jit
        def k(x: pypto.Tensor([DYN, 64], dt), out: pypto.Tensor([DYN, 64], dt),
              filled: pypto.Tensor([DYN, 64], dt)):
            pypto.set_vec_tile_shapes(1, 64)
            if x.shape[0] > 2:
                scale = 2.5
            elif x.shape[0] > 1:
                scale = 0.1
            else:
                scale = 3  # an int on one side: a float choice too
            body(x, out, filled, scale, dt)

        @pypto.jit
        def branch_taken(x: pypto.Tensor([DYN, 64], dt), out: pypto.Tensor([DYN, 64], dt),
                         filled: pypto.Tensor([DYN, 64], dt), scale):
            pypto.set_vec_tile_shapes(1, 64)
            body(x, out, filled, scale, dt)

        pypto.reset_compile_stats()
        cases = []
        for n in (5, 2, 1):
            x = torch.randn(n, 64, generator=torch.Generator().manual_seed(n)).to(tdt)
            out, filled = torch.empty(n, 64, dtype=tdt), torch.empty(n, 64, dtype=tdt)
            k(x, out, filled)
            cases.append((n, x, out, filled))
        assert_one_compile()
        for n, x, out, filled in cases:
            s = 2.5 if n > 2 else 0.1 if n > 1 else 3
            want, want_filled = torch.empty_like(out), torch.empty_like(filled)
            branch_taken(x, want, want_filled, s)
            assert torch.equal(out, want) and torch.equal(filled, want_filled), (dt, n)
            if dt == F32:
                assert torch.equal(out, torch.clamp(x * s + s / 2, -s, s))
                assert torch.equal(filled, torch.where(x > 0, x, torch.full_like(x, -s)))


def test_a_float_chosen_at_run_time_has_no_value_while_tracing():
    def needs_value(x, out):
        if x.shape[0] > 2:
            scale = 2.0
        else:
            scale = 3.0
        out[:] = x * float(scale)

    with pytest.raises(TypeError, match=r"\(2.0 if x_d0 > 2 else 3.0\) is known only at run "
                                        r"time: float\(\) needs its value"):
        _trace(needs_value)


def test_a_name_that_is_a_tensor_in_one_branch_and_a_number_in_the_other_is_an_error():
    def mixed(x, out):
        if x.shape[0] > 2:
            y = x * 2
        else:
            y = 5
        out[:] = x

    with pytest.raises(TypeError, match=r"'y' is a tensor in one branch of the if on the run-time "
                                        r"condition x_d0 > 2 and int 5 in the other"):
        _trace(mixed)


# The controlflow rows of the reference --------------------------------------------

def test_row_pypto_cond_and_plain_if_give_the_same_graph_and_results(native):
    def make(use_cond):
        @pypto.jit
        def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
            pypto.set_vec_tile_shapes(4, 64)
            n = x.shape[0]
            if use_cond:
                if pypto.cond(n > 4 and n < 10):
                    out[:] = pypto.exp(x)
                else:
                    out[:] = x * 2
            else:
                if n > 4 and n < 10:
                    out[:] = pypto.exp(x)
                else:
                    out[:] = x * 2
        return k

    with_cond, plain = make(True), make(False)
    g1, g2 = with_cond.trace(arr(5, 64), arr(5, 64)), plain.trace(arr(5, 64), arr(5, 64))
    assert g1.ops[0].attrs["cond"] == g2.ops[0].attrs["cond"]
    for rows in (3, 7, 12):
        run(with_cond, rows, lambda x: x.exp() if 4 < x.shape[0] < 10 else x * 2)


def test_row_pypto_cond_outside_jit_is_plain_python():
    taken = []
    for flag in (True, False):
        if pypto.cond(flag):
            taken.append(flag)
    assert taken == [True]
    with pytest.raises(TypeError, match=r"pypto.cond: expected a symbolic condition"):
        pypto.cond("yes")


def test_row_pypto_is_loop_begin_and_is_loop_end_as_bare_if_tests_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(x.shape[0]):
            t = x[i:i + 1, :]
            if pypto.is_loop_begin(i):
                t = t + 1
            elif pypto.is_loop_end(i):
                t = t + 2
            out[i:, :] = t

    def want(x):
        y = x.clone()
        y[-1] += 2
        y[0] = x[0] + 1
        return y

    for rows in (1, 2, 5):
        run(k, rows, want)
    assert_one_compile()


def test_row_pypto_loop_accepts_the_parallel_hint_with_the_same_results(native):
    def make(**hint):
        @pypto.jit
        def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
            pypto.set_vec_tile_shapes(1, 64)
            for i in pypto.loop(0, x.shape[0], 1, name="L", **hint):
                out[i:, :] = x[i:i + 1, :] * 2 if i % 2 == 0 else x[i:i + 1, :] + 1
        return k

    parallel, plain = make(parallel=True), make()
    assert parallel.trace(arr(5, 64), arr(5, 64)) == plain.trace(arr(5, 64), arr(5, 64))

    def want(x):
        y = x + 1
        y[0::2] = x[0::2] * 2
        return y

    for rows in (1, 6):
        run(parallel, rows, want)
    with pytest.raises(TypeError, match=r"pypto.loop: parallel must be a bool"):
        _trace(lambda x, out: [None for _ in pypto.loop(3, parallel="yes")])


def test_row_pypto_loop_unroll_with_plain_control_flow_in_the_body_end_to_end(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        for i, u in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            pypto.set_vec_tile_shapes(u, 64)
            chunk = x[i:i + u, :]
            out[i:, :] = chunk * 2 if i == 0 else chunk + 1

    def want(x):
        y = x + 1
        y[:4 if x.shape[0] >= 4 else 1] = x[:4 if x.shape[0] >= 4 else 1] * 2
        return y

    for rows in (3, 9):
        run(k, rows, want)
    assert_one_compile()


def test_symbolic_select_folds_known_conditions_and_equal_values():
    n = symbolic.symbol("n", 7)
    assert symbolic.select(True, n, 3) is n
    assert symbolic.select(0, n, 3) == 3
    assert symbolic.select(n > 4, n + 1, n + 1).expr_text == (n + 1).expr_text
    s = symbolic.select(n > 4, 2, n)
    assert int(s) == 2 and str(s) == "(2 if (n > 4) else n)"
    assert symbolic.symbols_in(s) == {"n"}
    b = symbolic.select(n > 4, True, False)
    assert isinstance(b, symbolic.SymbolicCondition) and str(b) == "n > 4"


def test_row_pypto_function_records_a_kernel_that_runs_as_recorded():
    a = pypto.tensor([32, 64], F32, "a")
    b = pypto.tensor([32, 64], F32, "b")
    out = pypto.tensor([32, 64], F32, "out")
    with pypto.function("fused", a, b, out) as fused:
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = (a + b).exp() * 2 - a
    assert pypto.get_vec_tile_shapes() == []  # the block's tile shapes end with it
    assert a.shape == [32, 64] and a._builder is None  # annotations again
    assert [p.name for p in fused.graph.params] == ["a", "b", "out"]
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(32, 64, generator=g), torch.rand(32, 64, generator=g)
    z = torch.empty(32, 64)
    fused(x, y, z)
    torch.testing.assert_close(z, (x + y).exp() * 2 - x)
    fused(x.numpy(), y.numpy(), z.numpy())
    assert fused.last_compile.source == "memory"


def test_row_pypto_function_bad_input_is_a_clear_error():
    a = pypto.tensor([32, 64], F32, "a")
    out = pypto.tensor([32, 64], F32, "out")
    with pytest.raises(ValueError, match=r"needs a static shape and a dtype"):
        pypto.function("f", pypto.Tensor([DYN, 64], F32, "d"))
    with pytest.raises(TraceError, match=r"is called before its block recorded it"):
        pypto.function("f", a, out)(arr(32, 64), arr(32, 64))
    with pypto.function("copy", a, out) as copy:
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = a * 1.0
    with pytest.raises(ValueError, match=r"argument 'a' is DT_FP32\[16, 64\], recorded as "
                                         r"DT_FP32\[32, 64\]"):
        copy(arr(16, 64), arr(32, 64))
    with pytest.raises(TypeError, match=r"takes 2 tensors \(a, out\), got 1"):
        copy(arr(32, 64))

    @pypto.jit
    def k(x: pypto.Tensor([32, 64], F32), y: pypto.Tensor([32, 64], F32)):
        with pypto.function("inner", a):
            pass

    with pytest.raises(pypto.error.FeError, match=r"pypto.function\('inner'\) inside a kernel"):
        k(arr(32, 64), arr(32, 64))
