"""The repeat-call fast path: it skips binding and checking only when nothing
could fail, and every mismatch still gets the full path's error."""

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]


def make_kernel():
    @pypto.jit
    def k(a: ANY, out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = a * 2 + 1
    return k


def count_binds(k):
    """Makes k count its full-path calls; returns the list that grows."""
    calls = []
    full = k._bind

    def counting(args, kwargs):
        calls.append(1)
        return full(args, kwargs)
    k._bind = counting
    return calls


def test_repeat_calls_skip_binding_and_compute_fresh_values(native):
    k = make_kernel()
    binds = count_binds(k)
    out = np.zeros((16, 24), np.float32)
    for i in range(4):
        a = np.full((16, 24), float(i), np.float32)
        k(a, out)
        np.testing.assert_array_equal(out, 2 * i + 1)
    assert len(binds) == 1  # only the first call
    assert k.last_compile.source == "memory"
    assert pypto.compile_stats()["memory_hits"] == 3
    # torch tensors have their own key, and hit it the same way.
    t_out = torch.zeros(16, 24)
    for i in range(3):
        k(torch.full((16, 24), float(i)), t_out)
        assert torch.equal(t_out, torch.full((16, 24), 2.0 * i + 1))
    assert len(binds) == 2
    assert pypto.compile_stats()["compiles"] == 1  # same kernel for both


def test_mismatches_after_a_hit_still_get_the_full_checks(native):
    k = make_kernel()
    a = np.ones((16, 24), np.float32)
    out = np.zeros((16, 24), np.float32)
    k(a, out)
    k(a, out)  # now on the fast path
    with pytest.raises(TypeError, match=r"argument 'out': expected dtype DT_FP32.*got DT_DOUBLE"):
        k(a, np.zeros((16, 24)))
    with pytest.raises(TypeError, match="argument 'a': expected a numpy array or a torch tensor, got list"):
        k([[1.0]], out)
    with pytest.raises(ValueError, match="argument 'a': shape \\[16, 0\\] has an empty dim"):
        k(np.ones((16, 0), np.float32), np.zeros((16, 0), np.float32))
    with pytest.raises(TypeError, match="k: "):
        k(a, out, a)
    read_only = np.zeros((16, 24), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'out' is read-only, but the kernel writes it"):
        k(a, read_only)
    # A read-only input is fine, and a strided output is copied back.
    a_ro = np.full((16, 24), 3.0, np.float32)
    a_ro.flags.writeable = False
    wide = np.zeros((16, 48), np.float32)
    k(a_ro, wide[:, ::2])
    np.testing.assert_array_equal(wide[:, ::2], 7.0)
    np.testing.assert_array_equal(wide[:, 1::2], 0.0)
    k(a, out=out)  # keywords take the full path and still work
    np.testing.assert_array_equal(out, 3.0)


def test_tile_shapes_in_force_are_part_of_the_key(native):
    @pypto.jit
    def k(a: ANY, out: ANY):
        out[:] = a + 1

    a = np.ones((16, 16), np.float32)
    out = np.zeros_like(a)
    pypto.set_vec_tile_shapes(8, 8)
    k(a, out)
    k(a, out)
    first = k.last_compile.key
    pypto.set_vec_tile_shapes(16, 16)
    k(a, out)
    assert k.last_compile.source == "embedded" and k.last_compile.key != first
    np.testing.assert_array_equal(out, 2.0)


def test_from_torch_wrappers_take_the_fast_path_keyed_by_their_marked_dims(native):
    k = make_kernel()
    binds = count_binds(k)
    t_out = torch.zeros(16, 24)
    out = pypto.from_torch(t_out, "out")
    for i in range(3):
        k(pypto.from_torch(torch.full((16, 24), float(i)), "a"), out)
        assert torch.equal(t_out, torch.full((16, 24), 2.0 * i + 1))
    assert len(binds) == 1 and k.last_compile.source == "memory"
    # The same tensors unwrapped, or wrapped with a marked dim, have their own key.
    k(torch.ones(16, 24), t_out)
    k(pypto.from_torch(torch.ones(16, 24), dynamic_axis=0), pypto.from_torch(t_out, dynamic_axis=0))
    assert len(binds) == 3
    k(pypto.from_torch(torch.ones(5, 24), dynamic_axis=0), pypto.from_torch(torch.zeros(5, 24), dynamic_axis=0))
    assert len(binds) == 4  # a new size: the full path (it binds the new dim)
    # A wrapped non-contiguous output still takes the full path's copy back.
    wide = torch.zeros(16, 48)
    k(pypto.from_torch(torch.full((16, 24), 3.0)), pypto.from_torch(wide[:, ::2]))
    assert torch.equal(wide[:, ::2], torch.full((16, 24), 7.0))
    assert torch.equal(wide[:, 1::2], torch.zeros(16, 24))
    with pytest.raises(TypeError, match=r"argument 'out': expected dtype DT_FP32"):
        k(pypto.from_torch(torch.ones(16, 24)), pypto.from_torch(torch.zeros(16, 24, dtype=torch.float64)))


def test_launcher_hits_take_addresses_and_keep_every_check(native):
    """From the second hit of a key on, torch tensors go to the kernel as
    addresses (_native Launcher): fresh values each call, and what needs the
    full path still takes it (overlap, non-contiguous, a grad tensor)."""
    k = make_kernel()
    binds = count_binds(k)
    t_out = torch.zeros(16, 24)
    for i in range(4):  # full path, first hit (makes the launcher), two launcher hits
        k(torch.full((16, 24), float(i)), t_out)
        assert torch.equal(t_out, torch.full((16, 24), 2.0 * i + 1))
    assert len(binds) == 1
    assert isinstance(next(iter(k._fast.values()))[1], native.Launcher)
    # Written memory shared with an input: the launcher declines and the full
    # path raises its error (the same tensor, and overlapping views).
    with pytest.raises(ValueError, match="arguments 'out' and 'a' share memory"):
        k(t_out, t_out)
    big = torch.zeros(32, 24)
    with pytest.raises(ValueError, match="share memory"):
        k(big[0:16], big[8:24])
    k(big[0:16], big[16:32])  # adjacent, not overlapping: runs
    assert torch.equal(big[16:32], torch.ones(16, 24))
    # Same key, not contiguous (a column slice of a wider tensor): the full
    # path computes into a temporary and copies back.
    wide = torch.zeros(16, 48)
    k(torch.full((16, 24), 3.0), wide[:, ::2])
    assert torch.equal(wide[:, ::2], torch.full((16, 24), 7.0))
    assert torch.equal(wide[:, 1::2], torch.zeros(16, 24))
    # An input that requires grad is read in place.
    g = torch.full((16, 24), 5.0, requires_grad=True)
    k(g, t_out)
    assert torch.equal(t_out, torch.full((16, 24), 11.0))
    # numpy arrays on their own key's launcher, and overlap there too.
    a, out = np.ones((16, 24), np.float32), np.zeros((16, 24), np.float32)
    for i in range(3):
        a[:] = i
        k(a, out)
        np.testing.assert_array_equal(out, 2 * i + 1)
    with pytest.raises(ValueError, match="share memory"):
        k(out, out)


def test_launcher_runs_bfloat16_tensors(native):
    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_BF16), out: pypto.Tensor([], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = a * 2 + 1

    out = torch.zeros(8, 16, dtype=torch.bfloat16)
    for i in range(4):
        a = torch.full((8, 16), float(i) + 0.5, dtype=torch.bfloat16)
        k(a, out)
        assert torch.equal(out, a * 2 + 1)
    assert next(iter(k._fast.values()))[1] is not None


def test_launcher_refuses_wrong_arguments(native):
    k = make_kernel()
    a, out = np.ones((16, 24), np.float32), np.zeros((16, 24), np.float32)
    k(a, out)
    k(a, out)  # makes the launcher
    launcher = next(iter(k._fast.values()))[1]
    with pytest.raises(ValueError, match="expected 2 arguments, got 1"):
        launcher.run([a])
    with pytest.raises(ValueError, match="argument 1 is not a C-contiguous array of 1536 bytes"):
        launcher.run([a, np.zeros((16, 12), np.float32)])
    assert launcher.run([a, out]) is True
    assert launcher.run([a, a]) is False  # out would overwrite a: nothing ran
