"""Layout ops from Python: slicing, assignment into regions, view/assemble,
transpose/permute/unsqueeze/reshape/clone/concat, against torch."""

import numpy as np
import pytest
import torch

import pypto
from pypto._proto import graph_pb2

F = pypto.Tensor([], pypto.DT_FP32)
H = pypto.Tensor([], pypto.DT_FP16)


def randn(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


@pytest.mark.parametrize("dtype,ann", [(torch.float32, F), (torch.float16, H)])
def test_assign_region_of_a_slice(dtype, ann):
    @pypto.jit
    def k(x: ann, out: ann):
        pypto.set_vec_tile_shapes(16, 32)
        out[:, 64:128] = x[:, :64] * 2

    x, out = randn(37, 100, dtype=dtype), randn(37, 150, dtype=dtype, seed=1)
    want = out.clone()
    want[:, 64:128] = (x[:, :64].float() * 2).to(dtype)
    k(x, out)
    assert torch.equal(out, want)


@pytest.mark.parametrize("dtype,ann", [(torch.float32, F), (torch.float16, H)])
def test_transpose_plus_bias(dtype, ann):
    @pypto.jit
    def k(x: ann, b: ann, y: ann):
        pypto.set_vec_tile_shapes(16, 32)
        y[:] = x.transpose(0, 1) + b

    x, b = randn(45, 70, dtype=dtype), randn(45, dtype=dtype, seed=2)
    y = torch.empty(70, 45, dtype=dtype)
    k(x, b, y)
    assert torch.equal(y, (x.T.float() + b.float()).to(dtype))


def test_slicing_forms():
    @pypto.jit
    def k(x: F, a: F, b: F, c: F, d: F):
        pypto.set_vec_tile_shapes(4)
        a[:] = x[2:9, 3].exp()              # int index drops a dim (rank 1)
        pypto.set_vec_tile_shapes(4, 8)
        b[:] = x[..., 1:5] + 1              # ellipsis
        c[:] = x[-3:] * x[:3]               # negative starts
        d[:] = x[None, 1:3, :].clone()      # None inserts a dim

    x = randn(10, 12)
    a, b, c, d = torch.empty(7), torch.empty(10, 4), torch.empty(3, 12), torch.empty(1, 2, 12)
    k(x, a, b, c, d)
    torch.testing.assert_close(a, x[2:9, 3].exp())
    assert torch.equal(b, x[..., 1:5] + 1)
    assert torch.equal(c, x[-3:] * x[:3])
    assert torch.equal(d, x[None, 1:3, :])


def test_assign_numbers():
    @pypto.jit
    def k(x: F, out: F, filled: F):
        pypto.set_vec_tile_shapes(4, 8)
        out[1:3, :] = -2.5          # a full, assembled into the region
        filled[:] = 0.0             # the whole tensor
        out[0, 4] = x[0, 0]         # one element (rank-1 views of size 1)

    x, out, filled = randn(6, 8), randn(6, 8, seed=5), randn(6, 8, seed=6)
    want = out.clone()
    want[1:3, :] = -2.5
    want[0, 4] = x[0, 0]
    k(x, out, filled)
    assert torch.equal(out, want)
    assert torch.equal(filled, torch.zeros(6, 8))


@pytest.mark.parametrize("dtype,ann", [(torch.float32, F), (torch.float16, H)])
@pytest.mark.parametrize("dim", [0, 1])
def test_concat_of_computed_inputs_and_mixed(dtype, ann, dim):
    """concat stores computed inputs from their own groups (and copies
    parameters and views): results equal torch's."""
    @pypto.jit
    def k(x: ann, y: ann, out: ann, mixed: ann):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.concat([x * 2, y + 1], dim)
        mixed[:] = pypto.concat([x, pypto.exp(y), x[:, :] * y, y], dim)

    x, y = randn(9, 20, dtype=dtype), randn(9, 20, dtype=dtype, seed=1)
    shape = (18, 20) if dim == 0 else (9, 40)
    out = torch.empty(shape, dtype=dtype)
    mixed = torch.empty((36, 20) if dim == 0 else (9, 80), dtype=dtype)
    k(x, y, out, mixed)
    xf, yf = x.float(), y.float()
    assert torch.equal(out, torch.cat([(xf * 2).to(dtype), (yf + 1).to(dtype)], dim))
    want = torch.cat([x, torch.exp(yf).to(dtype), (xf * yf).to(dtype), y], dim)
    torch.testing.assert_close(mixed.float(), want.float(), rtol=2e-6 if dtype == torch.float32 else 1e-3,
                               atol=0)


def test_function_forms_and_concat():
    @pypto.jit
    def k(x: F, y: F, o1: F, o2: F, o3: F, o4: F):
        pypto.set_vec_tile_shapes(4, 8)
        v = pypto.view(x, [6, 5], [1, 2])
        o1[:] = pypto.concat([v, pypto.clone(y)], 1) * 3
        o2[:] = pypto.permute(pypto.unsqueeze(x, 0), [2, 0, 1])
        o3[:] = pypto.reshape(pypto.unsqueeze(x, -1), [8, 10])
        pypto.assemble(y * 2, [4, 1], o4)

    x, y = randn(8, 10), randn(6, 7, seed=3)
    o1, o2, o3 = torch.empty(6, 12), torch.empty(10, 1, 8), torch.empty(8, 10)
    o4 = randn(11, 9, seed=4)
    want4 = o4.clone()
    want4[4:10, 1:8] = y * 2
    k(x, y, o1, o2, o3, o4)
    assert torch.equal(o1, torch.cat([x[1:7, 2:7], y], 1) * 3)
    assert torch.equal(o2, x.unsqueeze(0).permute(2, 0, 1))
    assert torch.equal(o3, x)
    assert torch.equal(o4, want4)


def test_views_copy_nothing():
    """x.T + b: one group, no workspace; the transpose is a strided load."""
    @pypto.jit
    def k(x: F, b: F, y: F):
        pypto.set_vec_tile_shapes(4, 8)
        y[:] = x.transpose(0, 1) + b

    g = k.trace(np.zeros((6, 8), np.float32), np.zeros(6, np.float32),
                np.zeros((8, 6), np.float32))
    assert [op.kind for op in g.ops] == ["transpose", "add"]


def test_layout_errors_name_what_and_where():
    @pypto.jit
    def strided(x: F, out: F):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x[::2]

    with pytest.raises(ValueError, match=r"dim 0: slices take steps of 1 \(got step 2\)"):
        strided.trace(np.zeros((8, 8), np.float32), np.zeros((4, 8), np.float32))

    @pypto.jit
    def outside(x: F, out: F):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.view(x, [4, 8], [8, 0])  # starts past the end: nothing valid

    with pytest.raises(ValueError, match=r"pypto.view: shape \[4, 8\] at offsets \[8, 0\] "
                                         r"does not fit in the input \[8, 8\].*valid "
                                         r"offsets\[0\]: 0..7"):
        outside.trace(np.zeros((8, 8), np.float32), np.zeros((4, 8), np.float32))

    @pypto.jit
    def bad_perm(x: F, out: F):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x.permute(0, 0)

    with pytest.raises(ValueError, match=r"pypto.permute: dims \[0, 0\] is not a permutation"):
        bad_perm.trace(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32))

    @pypto.jit
    def bad_region(x: F, out: F):
        pypto.set_vec_tile_shapes(4, 8)
        out[:, 4:] = x

    with pytest.raises(ValueError, match=r"the value has shape \[8, 8\] but the region has "
                                         r"\[8, 4\]"):
        bad_region.trace(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32))

    @pypto.jit
    def bad_cat(x: F, y: F, out: F):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.concat([x, y], 0)

    with pytest.raises(ValueError, match=r"tensors\[1\] \[3, 7\] and tensors\[0\] \[8, 8\] "
                                         r"differ outside dim 0"):
        bad_cat.trace(np.zeros((8, 8), np.float32), np.zeros((3, 7), np.float32),
                      np.zeros((11, 8), np.float32))


def test_writing_into_a_view_is_an_error():
    @pypto.jit
    def chained(x: F, out: F):
        pypto.set_vec_tile_shapes(4, 8)
        out[2:6][:, 1:3] = x

    with pytest.raises(pypto.TraceError, match=r"the target is a view of another tensor.*"
                                               r"out\[2:6, 1:3\] = y"):
        chained.trace(np.zeros((4, 2), np.float32), np.zeros((8, 8), np.float32))

    @pypto.jit
    def moved(x: F, out: F):
        pypto.set_vec_tile_shapes(4, 8)
        out.transpose(0, 1).move(x)

    with pytest.raises(pypto.TraceError, match="the target is a view of another tensor"):
        moved.trace(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32))


def test_reshape_merges_and_splits():
    @pypto.jit
    def k(x: F, flat: F, split_t: F, of_view: F):
        pypto.set_vec_tile_shapes(16)
        flat[:] = x.reshape(-1) * 2                     # the buffer read as [60]
        pypto.set_vec_tile_shapes(4, 8)
        e = x.exp()
        pypto.set_vec_tile_shapes(2, 4, 8)
        split_t[:] = e.reshape(2, 5, 6).transpose(1, 2) + 1
        pypto.set_vec_tile_shapes(4, 8)
        of_view[:] = x[1:5, 2:8].reshape(6, 4) - 1      # a view: cloned first

    x = randn(6, 10)
    flat, split_t, of_view = torch.empty(60), torch.empty(2, 6, 5), torch.empty(6, 4)
    k(x, flat, split_t, of_view)
    assert torch.equal(flat, x.reshape(-1) * 2)
    torch.testing.assert_close(split_t, x.exp().reshape(2, 5, 6).transpose(1, 2) + 1)
    assert torch.equal(of_view, x[1:5, 2:8].reshape(6, 4) - 1)
