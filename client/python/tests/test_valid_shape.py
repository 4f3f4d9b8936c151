"""PyPTO's valid_shape: a tensor's static shape and the valid region its ops
compute on, end to end against torch (valid_region.py has the rules).

Each kernel here compiles once for every run-time size it is called with.
"""

import pytest
import torch

import pypto
from pypto import _proto

graph_pb2 = _proto.graph_pb2

F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
DYN = pypto.DYNAMIC
TORCH = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16}
TOL = {F32: dict(rtol=1e-5, atol=1e-5), F16: dict(rtol=2e-3, atol=2e-3),
       BF16: dict(rtol=1.6e-2, atol=1.6e-2)}


def compiles():
    stats = pypto.compile_stats()
    return stats["compiles"], stats["traces"]


def value(graph, vid):
    return next(v for v in graph.values if v.id == vid)


# Views that hang past the end ------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_a_dynamic_batch_in_fixed_size_views_clips_the_last_view(native, dtype):
    """PyPTO's tiling loop: fixed-size views, the last one clipped to the rows
    that are left, each view's exp written back (only its valid rows)."""
    seen = {}

    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], dtype), out: pypto.Tensor([DYN, 64], dtype)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(pypto.ceildiv(n, 16)):
            t = pypto.view(x, [16, 64], [i * 16, 0])
            seen["shape"], seen["valid"] = t.shape, t.valid_shape
            out[i * 16:, :] = t.exp()

    for rows in (40, 16, 3, 33):
        x = torch.randn(rows, 64).to(TORCH[dtype])
        out = torch.zeros(rows, 64, dtype=TORCH[dtype])
        k(x, out)
        torch.testing.assert_close(out.float(), x.float().exp(), **TOL[dtype])
    assert compiles() == (1, 1)
    assert seen["shape"] == [16, 64]
    assert seen["valid"][1] == 64 and pypto.symbolic.is_symbolic(seen["valid"][0])
    assert "min" in str(seen["valid"][0])


def test_a_static_view_past_the_end_is_clipped_and_keeps_its_shape(native):
    seen = {}

    @pypto.jit
    def k(x: pypto.Tensor([40, 64], F32), out: pypto.Tensor([40, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        t = pypto.view(x, [64, 64], [0, 0])
        seen["shape"], seen["valid"] = t.shape, t.valid_shape
        out[:] = t * 2

    x = torch.randn(40, 64)
    out = torch.zeros(40, 64)
    k(x, out)
    torch.testing.assert_close(out, x * 2)
    assert seen == {"shape": [64, 64], "valid": [40, 64]}


def test_the_graph_keeps_the_static_shape_and_carries_the_valid_region(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(pypto.ceildiv(x.shape[0], 16)):
            out[i * 16:, :] = x[i * 16:(i + 1) * 16, :] + 1

    g = k.trace(torch.zeros(40, 64), torch.zeros(40, 64))
    assert g.schema_version == graph_pb2.SCHEMA_VERSION_2
    view = g.ops[0].regions[0].ops[0]
    v = value(g, view.outputs[0])
    assert [d.size for d in v.shape.dims] == [16, 64]
    assert v.valid_shape.dims[0].WhichOneof("kind") == "expr"
    assert v.valid_shape.dims[1].size == 64
    for p in g.params:  # a parameter's data is its whole shape
        assert not value(g, p.value_id).valid_shape.dims

    @pypto.jit
    def whole(x: pypto.Tensor([8, 64], F32), out: pypto.Tensor([8, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x[0:4, :] * 2 if False else x * 2

    g = whole.trace(torch.zeros(8, 64), torch.zeros(8, 64))
    assert g.schema_version == graph_pb2.SCHEMA_VERSION_1  # nothing partly valid
    assert all(not v.valid_shape.dims for v in g.values)


def test_a_view_with_a_symbolic_valid_shape_outside_a_loop(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        t = pypto.view(x, [64, 64], [0, 0], valid_shape=[pypto.min(64, n), 64])
        pypto.assemble(t * 2, [0, 0], out)

    for rows in (40, 64, 5):
        x = torch.randn(rows, 64)
        out = torch.zeros(rows, 64)
        k(x, out)
        torch.testing.assert_close(out, x * 2)
    assert compiles() == (1, 1)


def test_a_size_chosen_by_a_run_time_branch_is_a_view_size(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        size = 2 if n > 4 else 1
        out[0:size, :] = x[0:size, :] * 2

    for rows in (3, 8):
        x = torch.randn(rows, 64)
        out = torch.zeros(rows, 64)
        k(x, out)
        m = 2 if rows > 4 else 1
        want = torch.zeros(rows, 64)
        want[:m] = x[:m] * 2
        torch.testing.assert_close(out, want)
    assert compiles() == (1, 1)


# Ops on the valid region ------------------------------------------------------

def test_elementwise_ops_compute_on_the_region_valid_in_every_operand(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(pypto.ceildiv(n, 16)):
            t = pypto.view(x, [16, 64], [i * 16, 0],
                           valid_shape=[pypto.min(16, n - i * 16), 64])
            one = pypto.full([16, 64], 1.0, F32)  # valid everywhere
            bias = pypto.full([1, 64], 0.5, F32)  # broadcast along rows
            y = pypto.where(t > 0, t + one, bias)
            pypto.assemble(y, [i * 16, 0], out)

    for rows in (40, 7):
        x = torch.randn(rows, 64)
        out = torch.zeros(rows, 64)
        k(x, out)
        torch.testing.assert_close(out, torch.where(x > 0, x + 1, torch.full_like(x, 0.5)))
    assert compiles() == (1, 1)


def test_full_with_a_symbolic_valid_shape(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(pypto.ceildiv(n, 16)):
            f = pypto.full([16, 64], 2.0, F32, valid_shape=[pypto.min(16, n - i * 16), 64])
            pypto.assemble(f, [i * 16, 0], out)

    for rows in (40, 16):
        out = torch.zeros(rows, 64)
        k(torch.randn(rows, 64), out)
        torch.testing.assert_close(out, torch.full((rows, 64), 2.0))
    assert compiles() == (1, 1)


def test_full_of_a_symbolic_size(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 48], F32), y: pypto.Tensor([DYN, 48], F32),
          z: pypto.Tensor([DYN, 48], pypto.DT_INT32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 48)
        y[:] = x * pypto.full([n, 48], 3.0, F32) + pypto.ones([n, 48], F32)
        z[:] = pypto.full([n, 48], 7, pypto.DT_INT32) + pypto.zeros([n, 48], pypto.DT_INT32)

    for rows in (13, 40, 1):
        x = torch.randn(rows, 48)
        y, z = torch.zeros(rows, 48), torch.zeros(rows, 48, dtype=torch.int32)
        k(x, y, z)
        torch.testing.assert_close(y, x * 3.0 + 1.0)
        assert torch.equal(z, torch.full((rows, 48), 7, dtype=torch.int32))
    assert compiles() == (1, 1)


def test_full_of_a_loop_dependent_size_is_refused_by_name():
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 16], F32), out: pypto.Tensor([DYN, 16], F32)):
        pypto.set_vec_tile_shapes(16, 16)
        for i in pypto.loop(1, 3):
            f = pypto.full([i * 2, 16], 1.0, F32)
            pypto.assemble(f, [0, 0], out)

    with pytest.raises(pypto.CompileError, match=r'"full": its result\'s dim 0 \(i\*2\) depends on a loop '
                                                r'index and has no constant bound'):
        k(torch.zeros(8, 16), torch.zeros(8, 16))


def test_row_reductions_and_softmax_ignore_the_invalid_tail(native):
    @pypto.jit
    def k(x: pypto.Tensor([8, DYN], F32), s: pypto.Tensor([8, 1], F32),
          out: pypto.Tensor([8, DYN], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        t = pypto.view(x, [8, 64], [0, 0])  # the row is clipped to x's columns
        s[:] = pypto.sum(t, -1, keepdim=True)
        pypto.assemble(pypto.softmax(t, -1), [0, 0], out)

    for cols in (40, 64, 9):
        x = torch.randn(8, cols)
        s, out = torch.zeros(8, 1), torch.zeros(8, cols)
        k(x, s, out)
        torch.testing.assert_close(s, x.sum(-1, keepdim=True), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    assert compiles() == (1, 1)


def test_a_reduction_over_clipped_rows_in_a_loop(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 1], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(pypto.ceildiv(n, 16)):
            t = pypto.view(x, [16, 64], [i * 16, 0])
            out[i * 16:, :] = pypto.amax(t, -1, keepdim=True)

    for rows in (40, 5):
        x = torch.randn(rows, 64)
        out = torch.zeros(rows, 1)
        k(x, out)
        torch.testing.assert_close(out, x.amax(-1, keepdim=True))
    assert compiles() == (1, 1)


def test_a_column_sum_over_a_clipped_view_sums_the_valid_rows_only(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(64, 64)
        out[:] = pypto.sum(pypto.view(x, [64, 64], [0, 0]), 0, keepdim=True)

    for rows in (40, 64, 1):
        x = torch.randn(rows, 64)
        out = torch.zeros(1, 64)
        k(x, out)
        torch.testing.assert_close(out, x.sum(0, keepdim=True), rtol=1e-5, atol=1e-5)
    assert compiles() == (1, 1)


@pytest.mark.parametrize("dtype", [F32, BF16])
def test_a_matmul_over_clipped_views_sums_the_valid_k_only(native, dtype):
    @pypto.jit
    def k(a: pypto.Tensor([DYN, DYN], dtype), b: pypto.Tensor([DYN, 32], dtype),
          out: pypto.Tensor([DYN, 32], F32)):
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
        av = pypto.view(a, [16, 64], [0, 0])  # M and K clipped
        bv = pypto.view(b, [64, 32], [0, 0])
        c = pypto.matmul(av, bv, F32)
        pypto.set_vec_tile_shapes(16, 32)
        pypto.assemble(c, [0, 0], out)

    for m, kk in ((16, 40), (5, 64), (9, 3)):
        a = torch.randn(m, kk).to(TORCH[dtype])
        b = torch.randn(kk, 32).to(TORCH[dtype])
        out = torch.zeros(m, 32)
        k(a, b, out)
        torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-4, atol=1e-4)
    assert compiles() == (1, 1)


def test_assemble_and_out_slice_write_only_the_valid_region(native):
    # out's rows are a dim of their own ("m"; unnamed dims of equal sizes
    # would share a symbol, another kernel than that of different sizes).
    @pypto.jit
    def k(x: pypto.Tensor(["n", 64], F32), out: pypto.Tensor(["m", 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(pypto.ceildiv(n, 16)):
            t = x[i * 16:(i + 1) * 16, :]  # a slice of fixed size: clipped like a view
            if i % 2 == 0:
                pypto.assemble(t * 3, [i * 16, 0], out)
            else:
                out[i * 16:(i + 1) * 16, :] = t * 3

    # out may have more rows than x: the rows past x's stay as they were.
    for rows, extra in ((40, 5), (20, 0), (33, 12)):
        x = torch.randn(rows, 64)
        out = torch.full((rows + extra, 64), -1.0)
        k(x, out)
        want = torch.full((rows + extra, 64), -1.0)
        want[:rows] = x * 3
        torch.testing.assert_close(out, want)
    assert compiles() == (1, 1)


def test_out_colon_takes_the_valid_region_and_leaves_the_rest(native):
    @pypto.jit
    def k(x: pypto.Tensor([8, 64], F32), out: pypto.Tensor([8, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.view(x, [8, 64], [0, 0], valid_shape=[5, 64]) + 1

    x = torch.randn(8, 64)
    out = torch.full((8, 64), -7.0)
    k(x, out)
    want = torch.full((8, 64), -7.0)
    want[:5] = x[:5] + 1
    torch.testing.assert_close(out, want)


# valid_shape on every form that takes it ---------------------------------------

def test_reshape_getitem_and_expand_clone_take_valid_shape(native):
    seen = {}

    @pypto.jit
    def k(x: pypto.Tensor([4, 16], F32), y: pypto.Tensor([1, 16], F32),
          out: pypto.Tensor([4, 16], F32), flat: pypto.Tensor([64], F32),
          wide: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        v = x.__getitem__((slice(0, 4), slice(0, 16)), valid_shape=[3, 16])
        seen["getitem"] = (v.shape, v.valid_shape)
        out[:] = v * 2
        r = pypto.reshape(x, [64], valid_shape=[48])
        seen["reshape"] = (r.shape, r.valid_shape)
        pypto.set_vec_tile_shapes(64)
        flat[:] = r + 1
        pypto.set_vec_tile_shapes(4, 16)
        e = pypto.expand_clone(y, [4, 16], valid_shape=[2, 16])
        seen["expand_clone"] = (e.shape, e.valid_shape)
        wide[:] = e

    x, y = torch.randn(4, 16), torch.randn(1, 16)
    out, flat, wide = torch.zeros(4, 16), torch.zeros(64), torch.zeros(4, 16)
    k(x, y, out, flat, wide)
    want_out = torch.zeros(4, 16)
    want_out[:3] = x[:3] * 2
    want_flat = torch.zeros(64)
    want_flat[:48] = x.reshape(64)[:48] + 1
    want_wide = torch.zeros(4, 16)
    want_wide[:2] = y
    torch.testing.assert_close(out, want_out)
    torch.testing.assert_close(flat, want_flat)
    torch.testing.assert_close(wide, want_wide)
    assert seen == {"getitem": ([4, 16], [3, 16]), "reshape": ([64], [48]),
                    "expand_clone": ([4, 16], [2, 16])}


def test_a_reshape_that_only_drops_size_one_dims_keeps_the_valid_region(native):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(1, 16, 64)
        for i in pypto.loop(pypto.ceildiv(n, 16)):
            t = pypto.view(x, [16, 64], [i * 16, 0]).reshape([1, 16, 64]) * 2
            pypto.set_vec_tile_shapes(16, 64)
            out[i * 16:, :] = t.reshape([16, 64])

    x = torch.randn(21, 64)
    out = torch.zeros(21, 64)
    k(x, out)
    torch.testing.assert_close(out, x * 2)


def test_valid_shape_errors_name_the_argument():
    def kernel(fn):
        def k(x: pypto.Tensor([8, 64], F32), out: pypto.Tensor([8, 64], F32)):
            pypto.set_vec_tile_shapes(8, 64)
            out[:] = fn(x)
        return pypto.jit(k)

    x, out = torch.zeros(8, 64), torch.zeros(8, 64)
    with pytest.raises(ValueError, match=r"pypto.view: valid_shape\[0\] = 9 must be in 1..8"):
        kernel(lambda x: pypto.view(x, [8, 64], [0, 0], valid_shape=[9, 64]))(x, out)
    with pytest.raises(ValueError, match=r"pypto.view: valid_shape .* must have shape's rank"):
        kernel(lambda x: pypto.view(x, [8, 64], [0, 0], valid_shape=[8]))(x, out)
    with pytest.raises(ValueError, match=r"pypto.full: valid_shape\[1\] = 0 must be in 1..64"):
        kernel(lambda x: pypto.full([8, 64], 1.0, F32, valid_shape=[8, 0]) + x)(x, out)
    with pytest.raises(ValueError, match=r"pypto.reshape: the input's valid region \[5, 64\] "
                                         r"is smaller than its shape \[8, 64\]; a reshape that "
                                         r"merges or splits its dims needs valid_shape="):
        kernel(lambda x: pypto.view(x, [8, 64], [0, 0], valid_shape=[5, 64])
               .reshape([512]).reshape([8, 64]))(x, out)


def test_valid_shape_outside_a_kernel_is_the_shape():
    t = pypto.Tensor([4, 8], F32)
    assert t.valid_shape == t.shape == [4, 8]


@pytest.mark.parametrize("dtype,value", [(F32, -1.5), (pypto.DT_INT32, 7)])
def test_fillpad_fills_what_lies_outside_the_valid_region(native, dtype, value):
    @pypto.jit
    def k(x: pypto.Tensor([DYN, 64], dtype), out: pypto.Tensor([DYN, 16, 64], dtype)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(pypto.ceildiv(n, 16)):
            t = pypto.fillpad(pypto.view(x, [16, 64], [i * 16, 0]), value=value)
            assert t.shape == t.valid_shape == [16, 64]
            pypto.set_vec_tile_shapes(1, 16, 64)
            out[i:i + 1, :, :] = t.reshape([1, 16, 64])

    rows = 21
    x = (torch.randn(rows, 64) * 10).to(torch.float32 if dtype == F32 else torch.int32)
    out = torch.zeros(2, 16, 64, dtype=x.dtype)
    k(x, out)
    want = torch.full((32, 64), value, dtype=x.dtype)
    want[:rows] = x
    torch.testing.assert_close(out, want.reshape(2, 16, 64))
