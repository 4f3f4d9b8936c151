"""Kernels compiled by the embedded compiler and run, against numpy and torch."""

import numpy as np
import pytest
import torch

import pypto
from pypto._proto import graph_pb2

ANY = pypto.Tensor[...]


@pypto.jit
def every_op(a: ANY, b: ANY, o_add: ANY, o_sub: ANY, o_mul: ANY, o_div: ANY,
             o_adds: ANY, o_subs: ANY, o_rsubs: ANY, o_muls: ANY, o_divs: ANY,
             o_rdivs: ANY, o_exp: ANY, o_neg: ANY, o_abs: ANY, o_copy: ANY):
    o_add[:] = a + b
    o_sub[:] = a - b
    o_mul[:] = a * b
    o_div[:] = a / b
    o_adds[:] = a + 1.5
    o_subs[:] = a - 0.25
    o_rsubs[:] = 2 - a
    o_muls[:] = a * -3
    o_divs[:] = a / 4
    o_rdivs[:] = 1.5 / b
    o_exp[:] = pypto.exp(a)
    o_neg.move(-a)
    o_abs[:] = abs(a)
    o_copy[:] = b


def reference(a, b):
    """What every_op computes, in float32 (FP16 kernels compute in FP32 too)."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    return [a32 + b32, a32 - b32, a32 * b32, a32 / b32, a32 + 1.5, a32 - 0.25, 2 - a32,
            a32 * -3, a32 / 4, np.float32(1.5) / b32, np.exp(a32), -a32, np.abs(a32), b32]


def inputs(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3, 3, shape).astype(dtype)
    b = (rng.uniform(0.5, 2, shape) * rng.choice([-1, 1], shape)).astype(dtype)
    return a, b


# Shapes whose dims are not multiples of the tile (tail tiles), ranks 1 to 4.
CASES = [
    ((1000,), (256,)),
    ((37, 130), (16, 64)),
    ((3, 17, 45), (2, 8, 16)),
    ((2, 3, 5, 33), (1, 2, 4, 16)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("shape,tile", CASES, ids=lambda c: "x".join(map(str, c)))
def test_every_op_against_numpy(native, dtype, shape, tile):
    pypto.set_vec_tile_shapes(*tile)
    a, b = inputs(shape, dtype, seed=len(shape))
    outs = [np.full(shape, np.nan, dtype) for _ in range(14)]
    every_op(a, b, *outs)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-3, atol=1e-3)
    names = ["add", "sub", "mul", "div", "adds", "subs", "rsubs", "muls", "divs", "rdivs",
             "exp", "neg", "abs", "copy"]
    for name, got, want in zip(names, outs, reference(a, b)):
        np.testing.assert_allclose(got.astype(np.float32), want.astype(dtype).astype(np.float32),
                                   err_msg=f"op {name}, {np.dtype(dtype).name}, shape {shape}",
                                   **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
def test_against_torch(native, dtype):
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def kernel(a: pypto.Tensor([], pypto.DT_FP32 if dtype == torch.float32 else pypto.DT_FP16),
               b: pypto.Tensor[...], out: pypto.Tensor[...]):
        pypto.set_vec_tile_shapes(64, 128)
        out[:] = (a + b).exp() * 2 - a

    torch.manual_seed(0)
    a = torch.rand(200, 300, dtype=dtype)
    b = torch.rand(200, 300, dtype=dtype)
    out = torch.zeros(200, 300, dtype=dtype)
    kernel(a, b, out)
    want = ((a.float() + b.float()).exp() * 2 - a.float()).to(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(out, want, **tol)


def test_inout_parameter(native):
    @pypto.jit
    def axpy(x: ANY, y: ANY):
        pypto.set_vec_tile_shapes(32, 32)
        y[:] = y + x * 3

    x = np.arange(50 * 70, dtype=np.float32).reshape(50, 70) / 100
    y = np.ones((50, 70), np.float32)
    axpy(x, y)
    assert [p.role for p in axpy.trace(x, y).params] == [graph_pb2.PARAM_ROLE_IN,
                                                        graph_pb2.PARAM_ROLE_INOUT]
    np.testing.assert_allclose(y, 1 + x * 3, rtol=1e-6)


@pypto.jit
def scale_shift(a: ANY, out: ANY):
    pypto.set_vec_tile_shapes(16, 16)
    out[:] = a * 2 + 1


def test_non_contiguous_numpy_arguments(native):
    base = np.random.default_rng(1).standard_normal((40, 60)).astype(np.float32)
    before = base.copy()
    a = base.T                      # transposed view: not C-contiguous
    big = np.zeros((60, 80), np.float32)
    out = big[:, ::2]               # strided view of a bigger buffer
    scale_shift(a, out)
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6)
    assert np.all(big[:, 1::2] == 0)  # the gaps are untouched
    np.testing.assert_array_equal(base, before)  # input unchanged


def test_non_contiguous_torch_arguments(native):
    torch.manual_seed(2)
    base = torch.randn(40, 60)
    a = base.t()
    big = torch.zeros(60, 80)
    out = big[:, 1::2]
    before = base.clone()
    scale_shift(a, out)
    torch.testing.assert_close(out, a * 2 + 1)
    assert torch.all(big[:, 0::2] == 0)
    assert torch.equal(base, before)


def test_contiguous_torch_output_is_written_in_place(native):
    a = torch.randn(16, 16)
    out = torch.zeros(16, 16)
    ptr = out.data_ptr()
    scale_shift(a, out)
    assert out.data_ptr() == ptr
    torch.testing.assert_close(out, a * 2 + 1)


def test_read_only_output_is_an_error(native):
    out = np.zeros((16, 16), np.float32)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="argument 'out' is read-only, but the kernel writes it"):
        scale_shift(np.ones((16, 16), np.float32), out)


def test_second_call_does_not_recompile(native):
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = a - 1

    a = np.ones((20, 20), np.float32)
    out = np.zeros_like(a)
    k(a, out)
    assert k.last_compile.source == "embedded" and k.last_compile.cache_status == "MISS"
    key = k.last_compile.key
    k(a * 5, out)
    np.testing.assert_allclose(out, 4)
    assert k.last_compile.source == "memory" and k.last_compile.key == key
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["memory_hits"] == 1 and stats["traces"] == 1
    k(np.ones((21, 20), np.float32), np.zeros((21, 20), np.float32))  # new signature
    assert pypto.compile_stats()["compiles"] == 2
    assert k.last_compile.key != key


def test_names_with_quotes_and_newlines_compile(native):
    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32, name='a"); abort(); /*\n*/'), out: ANY):
        pypto.set_vec_tile_shapes(8)
        out[:] = a * a

    a = np.arange(10, dtype=np.float32)
    out = np.zeros_like(a)
    k(a, out)
    np.testing.assert_array_equal(out, a * a)


def test_native_errors_become_python_exceptions(native):
    with pytest.raises(ValueError, match="do not parse as a pto.v1.Graph"):
        native.compile(b"\xff\xff not a graph", "host", {})
    with pytest.raises(ValueError, match="do not parse as a pto.v1.KernelBinary"):
        native.Kernel(b"\xff\xff not a kernel")
    g = graph_pb2.Graph(schema_version=graph_pb2.SCHEMA_VERSION_1, name="bad")
    v = g.values.add(id=1, name="x", dtype=graph_pb2.DT_FP32)
    v.shape.dims.add(size=4)
    w = g.values.add(id=2, name="y", dtype=graph_pb2.DT_FP32)
    w.shape.dims.add(size=4)
    g.params.add(name="x", role=graph_pb2.PARAM_ROLE_IN, value_id=1)
    g.params.add(name="y", role=graph_pb2.PARAM_ROLE_OUT, value_id=2)
    op = g.ops.add(kind="frobnicate", inputs=[1], outputs=[2])
    op.vec_tile.dims.append(4)
    with pytest.raises(ValueError, match="frobnicate"):
        native.compile(g.SerializeToString(), "host", {})
    with pytest.raises(ValueError, match="frobnicate"):
        native.cache_key(g.SerializeToString(), "host", {})


def test_kernel_params_and_target(native):
    a = np.ones((16, 16), np.float32)
    scale_shift(a, np.zeros_like(a))
    kernel = scale_shift._cache[next(iter(scale_shift._cache))].compiled.kernel
    assert kernel.target.startswith("host-")
    assert kernel.target == native.resolve_target("host")
    names = [p[0] for p in kernel.params]
    assert names == ["a", "out"]


def test_run_profiled_splits_tasks_over_threads(native):
    """run_profiled's breakdown: the call's phases, and with
    trace=True each thread's task count and span (no timing asserted)."""
    @pypto.jit
    def tiled(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = a * 2 + 1

    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = np.zeros_like(a)
    tiled(a, out)  # tiles of 16x16: 16 tasks
    kernel = tiled._cache[next(iter(tiled._cache))].compiled.kernel
    plain = kernel.run_profiled([a, out])
    assert "threads" not in plain and plain["tasks"] == 16
    out[:] = 0
    p = kernel.run_profiled([a, out], trace=True)
    np.testing.assert_array_equal(out, a * 2 + 1)
    threads = p["threads"]
    assert sum(n for n, _, _, _ in threads.values()) == p["tasks"] == 16
    for name, (n, first, last, busy) in threads.items():
        assert name == "caller" or name.startswith(("vector/", "cube/")), name
        assert n > 0 and 0 <= first <= last and 0 <= busy <= last - first + 1e-6
    # shares=True: each root claimer's thread, CPUs and roots (all 16 roots).
    out[:] = 0
    p = kernel.run_profiled([a, out], shares=True)
    np.testing.assert_array_equal(out, a * 2 + 1)
    assert "threads" not in p
    assert sum(s[5] for s in p["shares"]) == 16
    for name, cpu0, cpu1, start, end, roots, tasks in p["shares"]:
        assert name == "caller" or name.startswith("vector/"), name
        assert cpu0 >= 0 and cpu1 >= 0 and 0 <= start <= end and tasks >= roots


def test_concurrent_first_calls_compile_once(native):
    import threading

    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = a + 7

    a = np.ones((16, 16), np.float32)
    outs = [np.zeros_like(a) for _ in range(4)]
    errors = []

    def call(out):
        try:
            k(a, out)
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=call, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for out in outs:
        np.testing.assert_array_equal(out, 8)
    stats = pypto.compile_stats()
    assert stats["compiles"] == 1 and stats["traces"] == 1 and stats["memory_hits"] == 3


def test_tile_shapes_set_while_tracing_stay_in_the_tracing_thread(native):
    """A kernel's set_vec_tile_shapes, while another thread traces it, is not
    the tile state other threads see (their calls key on the shapes set
    outside kernels), and the caller's shapes are back after the trace."""
    import threading
    inside, release, seen = threading.Event(), threading.Event(), []

    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(8, 8)
        inside.set()
        release.wait(30)
        out[:] = a + 7

    pypto.set_vec_tile_shapes(4, 4)  # (conftest restores the tile state after each test)
    a = np.ones((16, 16), np.float32)
    out = np.zeros_like(a)
    t = threading.Thread(target=k, args=(a, out))
    t.start()
    try:
        assert inside.wait(30)
        seen.append(pypto.get_vec_tile_shapes())
    finally:
        release.set()
        t.join()
    np.testing.assert_array_equal(out, 8)
    assert seen == [[4, 4]]
    assert pypto.get_vec_tile_shapes() == [4, 4]


def test_dynamic_dim_accepts_any_size_and_checks_the_rest(native):
    @pypto.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = a * a

    for rows in (3, 10):
        a = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8)
        out = np.zeros_like(a)
        k(a, out)
        np.testing.assert_array_equal(out, a * a)
    with pytest.raises(ValueError, match=r"argument 'a': dim 1 must be 8"):
        k(np.zeros((3, 9), np.float32), np.zeros((3, 8), np.float32))


def test_changing_the_tile_shape_outside_recompiles(native):
    @pypto.jit
    def k(a: ANY, out: ANY):
        out[:] = a / 2

    a = np.full((24, 24), 3, np.float32)
    out = np.zeros_like(a)
    pypto.set_vec_tile_shapes(8, 8)
    k(a, out)
    first = k.last_compile.key
    pypto.set_vec_tile_shapes(16, 8)
    k(a, out)
    assert k.last_compile.source == "embedded" and k.last_compile.key != first
    np.testing.assert_array_equal(out, 1.5)
    pypto.set_vec_tile_shapes(8, 8)
    k(a, out)
    assert k.last_compile.source == "memory" and k.last_compile.key == first
