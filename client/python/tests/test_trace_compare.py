"""A dynamic size's placeholder leaking into a kernel (trace_compare.py): a
kernel with dynamic dims is traced twice, at two placeholder sizes; if the
graphs differ it compiles per size (right results) and warns once."""

import math
import warnings

import numpy as np
import pytest
import torch

import pypto
from pypto import trace_compare

F32 = pypto.DT_FP32


def _leak_warnings(record):
    return [w for w in record if issubclass(w.category, pypto.DynamicSizeWarning)]


def test_a_float_computed_from_a_dynamic_size_gives_right_results_per_size(native):
    # 1.0 / n runs float.__truediv__ on the trace's placeholder: compiled once,
    # every size got x / 1000003.
    @pypto.jit
    def mean_scale(x: pypto.Tensor([4, pypto.DYNAMIC], F32),
                   out: pypto.Tensor([4, pypto.DYNAMIC], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        scale = 1.0 / x.shape[-1]
        out[:] = x * scale

    rng = np.random.default_rng(5)
    sizes = (1, 7, 64, 1000)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for n in sizes + sizes:  # the second round: memory hits
            x = rng.standard_normal((4, n)).astype(np.float32)
            out = np.full_like(x, np.nan)
            mean_scale(x, out)
            want = (torch.from_numpy(x) * (1.0 / n)).numpy()
            np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)
    stats = pypto.compile_stats()
    # One symbolic trace and its check, then a trace and a compile per size.
    assert (stats["compiles"], stats["traces"], stats["check_traces"]) == (4, 5, 1), stats
    (w,) = _leak_warnings(record)
    message = str(w.message)
    assert "mean_scale' is compiled once per size" in message
    assert "out[:] = x * scale" in message and "'muls' attribute 'scalar'" in message
    assert w.filename == __file__  # the warning names the user's call


def _traced_leak(kernel, *shapes):
    """The DynamicSizeWarning message of kernel.trace(...) (no compile)."""
    args = [np.ones(s, np.float32) for s in shapes]
    with pytest.warns(pypto.DynamicSizeWarning) as record:
        kernel.trace(*args)
    (w,) = _leak_warnings(record)
    return str(w.message)


def test_leaks_name_the_first_differing_op_and_its_line():
    @pypto.jit
    def root(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x + math.sqrt(x.shape[0])

    assert "out[:] = x + math.sqrt(x.shape[0])" in _traced_leak(root, (3, 8), (3, 8))
    assert "'adds' attribute 'scalar' is 1000" in _traced_leak(root, (3, 8), (3, 8))

    @pypto.jit
    def fill(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.full(x.shape, float(x.shape[0]), F32) + x

    assert "float(x.shape[0])" in _traced_leak(fill, (3, 8), (3, 8))

    # A Python loop whose trip count follows a size (n % 3 is 1 at one
    # placeholder, 2 at the other): the graphs differ in their ops.
    @pypto.jit
    def unrolled(x: pypto.Tensor([pypto.DYNAMIC, 8], F32),
                 out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        y = x
        for _ in range(x.shape[0] % 3):
            y = y * 2
        out[:] = y

    assert "the number of ops recorded" in _traced_leak(unrolled, (3, 8), (3, 8))

    # In a loop body: the op is named by its place in the graph.
    @pypto.jit
    def rows(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        n = x.shape[0]
        for i in pypto.loop(0, n, 1, name="L", idx_name="i"):
            out[i:i + 1, :] = x[i:i + 1, :] / float(n)

    message = _traced_leak(rows, (3, 8), (3, 8))
    assert "x[i:i + 1, :] / float(n)" in message
    assert "'divs' attribute 'scalar' is 1000003" in message


def test_a_python_loop_over_a_dynamic_size_compiles_per_size(native, monkeypatch):
    # range(n) takes the placeholder as it is: a million iterations' ops.
    # The trace stops past the limit (lowered here to keep the test short).
    monkeypatch.setattr(trace_compare, "MAX_OPS_AT_PLACEHOLDERS", 40)

    @pypto.jit
    def add_n(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        y = x
        for _ in range(x.shape[0]):
            y = y + 1
        out[:] = y

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for n in (3, 9, 3):
            x = np.arange(n * 8, dtype=np.float32).reshape(n, 8)
            out = np.full_like(x, np.nan)
            add_n(x, out)
            np.testing.assert_array_equal(out, x + n)
    (w,) = _leak_warnings(record)
    assert "more than 40 ops recorded when traced with x_d0 = 1000003" in str(w.message)
    assert "y = y + 1" in str(w.message)
    stats = pypto.compile_stats()
    assert (stats["compiles"], stats["check_traces"]) == (2, 0), stats


def test_a_python_branch_on_a_dynamic_size_is_a_graph_branch(native):
    # Both placeholders are large, so a Python branch taken at trace time
    # would not show in the comparison: the `if` is rewritten into a branch
    # of the graph (ast_rewrite.py), so both sides run correctly.
    @pypto.jit
    def branch(x: pypto.Tensor([pypto.DYNAMIC, 8], F32),
               out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        if x.shape[0] > 100:
            out[:] = x * 2
        else:
            out[:] = x + 1

    for rows in (3, 200):
        x = np.ones((rows, 8), np.float32)
        out = np.zeros_like(x)
        branch(x, out)
        np.testing.assert_array_equal(out, x * 2 if rows > 100 else x + 1)
    assert pypto.compile_stats()["compiles"] == 1


def test_kernels_without_a_leak_compile_once_without_a_warning(native):
    @pypto.jit
    def softmax(x: pypto.Tensor([pypto.DYNAMIC, 64], F32),
                out: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = pypto.softmax(x, -1)

    @pypto.jit
    def row_sums(x: pypto.Tensor([4, pypto.DYNAMIC], F32), out: pypto.Tensor([4, 1], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.sum(x, -1, keepdim=True)

    @pypto.jit
    def halves(x: pypto.Tensor([pypto.DYNAMIC, 8], F32),
               out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        n = x.shape[0]
        for i in pypto.loop(0, n // 2 * 2, 2, name="L", idx_name="i"):  # pairs of rows
            out[i:i + 2, :] = x[i:i + 2, :] * 2 + 1
        for i in pypto.loop(n // 2 * 2, n, 1, name="T", idx_name="t"):  # the odd row
            out[i:i + 1, :] = x[i:i + 1, :] - 1

    rng = np.random.default_rng(6)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for n in (1, 7, 64):
            x = rng.standard_normal((n, 64)).astype(np.float32)
            out = np.full_like(x, np.nan)
            softmax(x, out)
            np.testing.assert_allclose(out, torch.softmax(torch.from_numpy(x), -1).numpy(),
                                       rtol=1e-5, atol=1e-7)
            x = rng.standard_normal((4, n)).astype(np.float32)
            out = np.full((4, 1), np.nan, np.float32)
            row_sums(x, out)
            np.testing.assert_allclose(out, x.sum(-1, keepdims=True), rtol=1e-5, atol=1e-5)
            x = rng.standard_normal((n, 8)).astype(np.float32)
            out = np.full_like(x, np.nan)
            halves(x, out)
            want = x * 2 + 1
            if n % 2:
                want[-1] = x[-1] - 1
            np.testing.assert_allclose(out, want, rtol=1e-6)
    assert not _leak_warnings(record)
    stats = pypto.compile_stats()
    assert (stats["compiles"], stats["traces"], stats["check_traces"]) == (3, 3, 3), stats


def test_static_kernels_are_traced_once():
    @pypto.jit
    def add(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x + 1.0 / x.shape[-1]  # a static size is a plain number

    x = np.ones((4, 8), np.float32)
    add.trace(x, x.copy())
    assert pypto.compile_stats()["check_traces"] == 0


def test_first_difference_of_equal_graphs_is_none():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x * 3

    x = np.ones((3, 8), np.float32)
    g = k.trace(x, x.copy())
    assert trace_compare.first_difference(g, k.trace(x, x.copy())) is None
