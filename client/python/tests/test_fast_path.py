"""The repeat-call fast path: it skips binding and checking only when nothing
could fail, and every mismatch still gets the full path's error."""

import threading

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


def count_keys(k):
    """Makes k count the fast-path keys it builds; returns the list that grows."""
    calls = []
    full = k._fast_key

    def counting(args, state):
        calls.append(1)
        return full(args, state)
    k._fast_key = counting
    return calls


def test_hot_calls_build_no_key(native, clean_options):
    """From a key's first hit on, calls go straight to its launcher while no
    tile shape or option changes: no key is built, values are fresh."""
    k = make_kernel()
    keys = count_keys(k)
    out = np.zeros((16, 24), np.float32)
    k(np.zeros((16, 24), np.float32), out)  # full path
    k(np.zeros((16, 24), np.float32), out)  # first hit: makes the launcher
    assert len(keys) == 2
    for i in range(3):
        k(np.full((16, 24), float(i), np.float32), out)
        np.testing.assert_array_equal(out, 2 * i + 1)
        assert k.last_compile.source == "memory"
    assert len(keys) == 2
    # Neither another kernel's trace (its tile shapes are undone) nor an
    # option pypto does not act on changes what the launcher was keyed under.
    make_kernel()(np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32))
    pypto.set_pass_options(enable_slice=False)
    with pypto.options(host_options={}):
        k(np.ones((16, 24), np.float32), out)
    np.testing.assert_array_equal(out, 3.0)
    assert len(keys) == 2
    # Another key (torch tensors, from_torch wrappers) takes the hot place
    # from its first hit on.
    t_out = torch.zeros(16, 24)
    for i in range(3):
        k(torch.full((16, 24), float(i)), t_out)
        assert torch.equal(t_out, torch.full((16, 24), 2.0 * i + 1))
    wrapped = pypto.from_torch(t_out)
    for i in range(3):
        k(pypto.from_torch(torch.full((16, 24), float(i))), wrapped)
        assert torch.equal(t_out, torch.full((16, 24), 2.0 * i + 1))
    assert len(keys) == 2 + 2 + 2
    assert pypto.compile_stats()["memory_hits"] == 5 + 3 + 3  # one kernel: all hits
    # Arguments the hot launcher's key does not describe take the key path:
    # numpy arrays after torch tensors hit their own key, and become hot.
    k(np.full((16, 24), 5.0, np.float32), out)
    np.testing.assert_array_equal(out, 11.0)
    assert len(keys) == 7
    k(np.full((16, 24), 6.0, np.float32), out)
    assert len(keys) == 7


def test_hot_launcher_rekeys_when_tile_shapes_or_options_change(native, clean_options):
    @pypto.jit
    def k(a: ANY, out: ANY):
        out[:] = a + 1

    a, out = np.ones((16, 16), np.float32), np.zeros((16, 16), np.float32)
    pypto.set_vec_tile_shapes(8, 8)
    for _ in range(3):
        k(a, out)
    key8 = k.last_compile.key
    pypto.set_vec_tile_shapes(16, 16)
    k(a, out)
    assert k.last_compile.source == "embedded" and k.last_compile.key != key8
    k(a, out)
    key16 = k.last_compile.key
    pypto.set_vec_tile_shapes(8, 8)  # back to 8x8: equal shapes, its kernel
    k(a, out)
    assert k.last_compile.source == "memory" and k.last_compile.key == key8
    # Cube tile shapes are part of the key too (this add's graph does not
    # use them: its 8x8 kernel again, from the disk cache).
    pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
    k(a, out)
    assert k.last_compile.source == "disk" and k.last_compile.key == key8
    # An honoured option (opt_level) recompiles; in a scope and after it.
    for _ in range(2):
        k(a, out)
    key_cube = k.last_compile.key
    with pypto.options(codegen_options={"opt_level": 0}):
        k(a, out)
        assert k.last_compile.source == "embedded" and k.last_compile.key != key_cube
        k(a, out)
        k(a, out)
        assert k.last_compile.source == "memory"
    k(a, out)
    assert k.last_compile.source == "memory" and k.last_compile.key == key_cube
    # A run mode set globally is checked on a call after hot calls.
    k(a, out)
    with pypto.options(runtime_options={"run_mode": pypto.RunMode.NPU}):
        with pytest.raises(pypto.UnsupportedTargetError, match="RunMode.NPU"):
            k(a, out)
    np.testing.assert_array_equal(out, 2.0)


def test_hot_launcher_declines_new_dtypes_shapes_scalars_and_wrappers(native):
    @pypto.jit
    def k(a: ANY, out: ANY, s: float):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = a * s

    a, out = np.ones((8, 16), np.float32), np.zeros((8, 16), np.float32)
    for _ in range(3):
        k(a, out, 2.0)
    np.testing.assert_array_equal(out, 2.0)
    k(a, out, 3.0)  # scalars by value: a new kernel
    assert k.last_compile.source == "embedded"
    np.testing.assert_array_equal(out, 3.0)
    for _ in range(2):
        k(a, out, 3.0)
    k(a, out, 2.0)
    assert k.last_compile.source == "memory"
    np.testing.assert_array_equal(out, 2.0)
    # A new shape and a new dtype: new kernels, right results.
    for _ in range(2):
        k(a, out, 2.0)
    b, out_b = np.ones((8, 24), np.float32), np.zeros((8, 24), np.float32)
    k(b, out_b, 2.0)
    assert k.last_compile.source == "embedded"
    np.testing.assert_array_equal(out_b, 2.0)
    for _ in range(2):
        k(b, out_b, 2.0)
    c, out_c = np.ones((8, 24), np.float16), np.zeros((8, 24), np.float16)
    k(c, out_c, 2.0)
    assert k.last_compile.source == "embedded"
    np.testing.assert_array_equal(out_c, 2.0)
    # Bad arguments after hot calls still get the full path's errors.
    for _ in range(2):
        k(b, out_b, 2.0)
    with pytest.raises(TypeError, match="argument 's': expected a Python float"):
        k(b, out_b, "2")
    with pytest.raises(TypeError, match="argument 'a': expected a numpy array or a torch tensor"):
        k(None, out_b, 2.0)
    # The same memory wrapped (pypto.from_torch) or as a numpy subclass: not
    # the hot launcher's numpy arrays; both run right.
    k(pypto.from_torch(b), out_b, 4.0)
    np.testing.assert_array_equal(out_b, 4.0)

    class Sub(np.ndarray):
        pass
    k(b.view(Sub), out_b.view(Sub), 2.0)
    np.testing.assert_array_equal(out_b, 2.0)


def test_hot_launcher_is_thread_safe(native):
    k = make_kernel()
    shape = (16, 24)
    k(np.zeros(shape, np.float32), np.zeros(shape, np.float32))
    k(np.zeros(shape, np.float32), np.zeros(shape, np.float32))
    errors = []

    def worker(seed):
        try:
            a, out = np.empty(shape, np.float32), np.empty(shape, np.float32)
            for i in range(200):
                a[:] = seed * 1000 + i
                k(a, out)
                if not np.array_equal(out, 2 * a + 1):
                    errors.append((seed, i))
                    return
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert k.last_compile.source == "memory"


def test_launcher_checks_arguments_against_its_guards(native):
    k = make_kernel()
    a, out = np.ones((16, 24), np.float32), np.zeros((16, 24), np.float32)
    k(a, out)
    k(a, out)  # makes the launcher
    launcher = k._hot[3]
    assert isinstance(launcher, native.Launcher) and k._fast[k._fast_key((a, out), k._hot[:3])][1] is launcher
    assert launcher.call((a, out)) is True
    assert launcher.call((a,)) is False  # count
    assert launcher.call((a, np.zeros((16, 12), np.float32))) is False  # shape
    assert launcher.call((a, np.zeros((16, 24)))) is False  # dtype
    assert launcher.call((a, np.zeros((16, 24), ">f4"))) is False  # byte order
    assert launcher.call((a, np.zeros((16, 48), np.float32)[:, ::2])) is False  # strides
    read_only = np.zeros((16, 24), np.float32)
    read_only.flags.writeable = False
    assert launcher.call((a, read_only)) is False
    assert launcher.call((a, torch.zeros(16, 24))) is False  # a torch tensor for an array
    assert launcher.call((a, pypto.from_torch(out))) is False  # wrapped
    assert launcher.call((a, a)) is False  # out would overwrite a: nothing ran
    np.testing.assert_array_equal(out, 3.0)
    a[:] = 2.0
    assert launcher.call((a, out)) is True
    np.testing.assert_array_equal(out, 5.0)
    kernel = next(iter(k._cache.values())).compiled.kernel
    with pytest.raises(ValueError, match="launcher: guard 1 is not a 6-tuple"):
        kernel.launcher([a, out], [], [1], [("array", None, None, np.ndarray, a.dtype, a.shape), ()])
    with pytest.raises(ValueError, match="launcher: guard 0: kind 'list' is not array, tensor or scalar"):
        kernel.launcher([a, out], [], [1], [("list", None, None, list, None, None)] * 2)
    with pytest.raises(ValueError, match="launcher: guard 1 does not describe array 1"):
        kernel.launcher([a, out], [], [1], [("array", None, None, np.ndarray, a.dtype, (16, 24)),
                                            ("array", None, None, np.ndarray, a.dtype, (24, 16))])
    with pytest.raises(ValueError, match="launcher: 1 array and tensor guards for 2 arrays"):
        kernel.launcher([a, out], [], [1], [("array", None, None, np.ndarray, a.dtype, (16, 24)),
                                            ("scalar", None, None, float, 1.0, None)])


def test_launcher_guards_torch_tensors_and_wrappers(native):
    k = make_kernel()
    t_a, t_out = torch.ones(16, 24), torch.zeros(16, 24)
    k(t_a, t_out)
    k(t_a, t_out)
    launcher = k._hot[3]
    assert launcher.call((t_a, t_out)) is True
    assert torch.equal(t_out, torch.full((16, 24), 3.0))
    assert launcher.call((t_a, t_out.double())) is False  # dtype
    assert launcher.call((t_a, torch.zeros(24, 16))) is False  # shape
    assert launcher.call((t_a, torch.zeros(24, 16).t())) is False  # not contiguous
    assert launcher.call((t_a, t_a)) is False  # overlap
    assert launcher.call((t_a, torch.nn.Parameter(t_out))) is False  # a subclass
    assert launcher.call((t_a, t_out.numpy())) is False
    assert launcher.call((t_a, pypto.from_torch(t_out))) is False
    assert launcher.call((t_a, torch.zeros(16, 24, device="meta"))) is False  # no memory

    def wrap(t, axes=0):
        return pypto.from_torch(t, dynamic_axis=axes)
    k(wrap(t_a), wrap(t_out))
    k(wrap(t_a), wrap(t_out))
    launcher = k._hot[3]
    t_out.zero_()
    assert launcher.call((wrap(t_a), wrap(t_out))) is True
    assert torch.equal(t_out, torch.full((16, 24), 3.0))
    assert launcher.call((t_a, wrap(t_out))) is False  # not wrapped
    assert launcher.call((wrap(t_a, None), wrap(t_out))) is False  # other marked dims
    assert launcher.call((wrap(t_a.numpy()), wrap(t_out))) is False  # numpy inside
    assert launcher.call((wrap(t_a), wrap(t_out.double()))) is False
    assert launcher.call((wrap(t_a), wrap(torch.zeros(24, 16)))) is False
    assert launcher.call((wrap(t_a), wrap(t_a))) is False
