"""Errors name the user's file and line, the op and what to change."""

import inspect

import numpy as np
import pytest
import torch

import pypto

ANY = pypto.Tensor[...]
HERE = __file__


def line_of(fn, text):
    """The absolute line number of the first line of `fn` containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def f32(*shape):
    return np.ones(shape, np.float32)


def test_trace_error_names_the_users_line_and_op():
    def kernel(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 4)
        mask = a > 0
        out[:] = mask.exp()  # exp of a bool

    k = pypto.jit(kernel)
    line = line_of(kernel, "mask.exp()")
    with pytest.raises(TypeError) as e:
        k(f32(4, 4), f32(4, 4))
    assert str(e.value).startswith(f"{HERE}:{line}: pypto.exp: argument 'input' has dtype "
                                   f"DT_BOOL; pypto.exp takes DT_FP32, DT_FP16 or DT_BF16 "
                                   f"tensors (cast it first)")


def helper(x):
    return x + x.sum(1)  # called from the kernel: this line is named


def test_error_inside_a_helper_names_the_helpers_line():
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = helper(a)

    with pytest.raises(ValueError) as e:
        k(f32(4, 5), f32(4, 5))
    msg = str(e.value)
    assert msg.startswith(f"{HERE}:{line_of(helper, 'x + x.sum(1)')}: pypto.add: shapes [4, 5] ('input') and [4] ('other')")
    assert "do not broadcast" in msg


def test_tile_rank_contradicting_the_tensor_rank():
    def kernel(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(64)
        out[:] = a * 2

    with pytest.raises(pypto.TraceError) as e:
        pypto.jit(kernel)(f32(4, 4), f32(4, 4))
    assert str(e.value) == (
        f"{HERE}:{line_of(kernel, 'a * 2')}: pypto.mul: the vector tile shape (64,) has 1 dims "
        f"but the op's result has 2 (shape (4, 4)); call pypto.set_vec_tile_shapes with 2 dims "
        f"before this op")
    assert isinstance(e.value, ValueError)


def test_missing_tile_shape():
    def kernel(a: ANY, out: ANY):
        out[:] = a.exp()

    with pytest.raises(pypto.TraceError, match=rf"^{HERE}:{line_of(kernel, 'a.exp()')}: "
                                               r"pypto.exp: no vector tile shape is set; call "
                                               r"pypto.set_vec_tile_shapes with 2 dims"):
        pypto.jit(kernel)(f32(4, 4), f32(4, 4))


def test_compile_error_maps_op_number_to_the_users_line(native):
    def kernel(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(512, 512)
        t = a + 1
        out[:] = t.exp()

    line = line_of(kernel, "t = a + 1")
    with pytest.raises(pypto.CompileError) as e:
        pypto.jit(kernel)(f32(512, 512), f32(512, 512))
    msg = str(e.value)
    assert msg.startswith(f"{HERE}:{line}: compiling kernel 'test_compile_error_maps_op_number_to_"
                          f"the_users_line.<locals>.kernel' for the host target: op #0 \"adds\": "
                          f"vec_tile [512,512] needs")
    assert "(use a smaller tile)" in msg
    assert msg.endswith(f"  op #0 \"adds\" was recorded at {HERE}:{line} (in kernel): t = a + 1")


def test_tile_over_an_ai_cores_192_kib_ub_is_refused(native):
    """The host models an AI core's UB, 192 KiB. Two f32
    tiles of 256 x 256 (512 KiB, what the host once allowed) and of
    256 x 128 (256 KiB) are refused naming the op, the tile, UB and both
    sizes; 128 x 128 (128 KiB) runs."""
    for cols in (256, 128):
        def kernel(a: ANY, out: ANY):
            pypto.set_vec_tile_shapes(256, cols)
            out[:] = a.exp()

        with pytest.raises(pypto.CompileError,
                           match=rf"op #0 \"exp\": vec_tile \[256,{cols}\] needs {2 * 256 * cols * 4} "
                                 r"bytes of UB tiles; a block may use 196608 bytes"):
            pypto.jit(kernel)(f32(512, 512), f32(512, 512))

    def fits(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(128, 128)
        out[:] = a.exp()

    a = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    out = f32(512, 512)
    pypto.jit(fits)(a, out)
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-6)


def test_rms_norm_gamma_of_another_dtype_names_both():
    """FP16/BF16 rms_norm casts its input and gamma to FP32 (one rounding at
    the end); a gamma of another dtype is refused naming the op, both
    arguments and their dtypes, at the user's line."""
    def kernel(a: pypto.Tensor([], pypto.DT_FP16), g: pypto.Tensor([], pypto.DT_FP32), out: ANY):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.rms_norm(a, g)

    line = line_of(kernel, "pypto.rms_norm(a, g)")
    with pytest.raises(TypeError) as e:
        pypto.jit(kernel)(np.ones((4, 16), np.float16), np.ones(16, np.float32),
                          np.ones((4, 16), np.float16))
    assert str(e.value) == (
        f"{HERE}:{line}: pypto.rms_norm: argument 'gamma' has dtype DT_FP32 and 'input' "
        f"DT_FP16; they must be equal (cast one: pypto.cast(x, dtype))")


def test_compile_error_of_a_reduction_names_its_line(native):
    def kernel(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(1, 1)
        out[:] = a.sum(-1, keepdim=True)

    line = line_of(kernel, "a.sum(-1")
    with pytest.raises(pypto.CompileError, match=rf"^{HERE}:{line}: .*op #0 \"sum\": tile "
                                                 r"\[1,100000\] needs 400004 bytes of UB"):
        pypto.jit(kernel)(f32(2, 100000), f32(2, 1))


def test_kernel_returning_a_value_names_its_def_line():
    def kernel(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4)
        out[:] = a + 1
        return out

    with pytest.raises(pypto.TraceError, match=rf"^{HERE}:{line_of(kernel, 'def kernel')}: kernel "
                                               r"'.*kernel' returned Tensor: kernels return "
                                               r"nothing; write results into an argument"):
        pypto.jit(kernel)(f32(4), f32(4))


def test_wrong_number_of_arguments():
    @pypto.jit
    def k(a: ANY, out: ANY):
        out[:] = a

    with pytest.raises(TypeError, match="k: missing a required argument: 'out'"):
        k(f32(4))
    with pytest.raises(TypeError, match="k: too many positional arguments"):
        k(f32(4), f32(4), f32(4))
    with pytest.raises(TypeError, match="k: got an unexpected keyword argument 'bias'"):
        k(f32(4), out=f32(4), bias=f32(4))


def test_non_tensor_in_a_tensor_slot():
    @pypto.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        out[:] = a

    with pytest.raises(TypeError, match="argument 'a': expected a numpy array or a torch tensor, got list"):
        k([1.0, 2.0], f32(2))
    with pytest.raises(TypeError, match="argument 'a': got the number 2.0 for a tensor parameter"):
        k(2.0, f32(2))
    with pytest.raises(TypeError, match=r"tensor parameter 'out' follows the compile-time "
                                        r"parameter 'n'"):
        @pypto.jit
        def bad(a: ANY, n: [1], out: ANY):
            pass


def test_output_aliasing_an_input_is_refused(native):
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = a - a.amax(-1, keepdim=True)

    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    msg = (r"arguments 'out' and 'a' share memory, but the kernel writes 'out' while reading "
           r"'a': pass a separate output tensor, or update in place through one parameter")
    with pytest.raises(ValueError, match=msg):
        k(a, a)
    with pytest.raises(ValueError, match=msg):  # overlapping views
        k(a[:, :4], a[:, 2:6])
    t = torch.arange(32, dtype=torch.float32).reshape(4, 8)
    out = torch.empty(4, 8)
    k(t, out)  # fills the fast path
    with pytest.raises(ValueError, match=msg):
        k(t, t)
    # In place through one in/out parameter is fine.

    @pypto.jit
    def inplace(x: ANY):
        pypto.set_vec_tile_shapes(4, 4)
        x[:] = x - x.amax(-1, keepdim=True)

    ref = t - t.amax(-1, keepdim=True)
    inplace(t)
    torch.testing.assert_close(t, ref)


def test_unsupported_dtype_and_op():
    @pypto.jit
    def k(a: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4)
        out[:] = a

    with pytest.raises(TypeError, match=r"argument 'a': dtype DT_UINT16 is not supported yet; this "
                                        r"version takes arguments of DT_FP32"):
        k(np.zeros(4, np.uint16), f32(4))

    @pypto.jit
    def g(a: ANY, s: ANY, out: ANY):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = pypto.scaled_mm(a, a, pypto.DT_FP32, s, s, c_matrix_nz=True)

    with pytest.raises(NotImplementedError, match=r"^.*test_errors.py:\d+: pypto.scaled_mm is "
                                                  r"not implemented yet \(c_matrix_nz"):
        g(f32(4, 4), f32(4, 1), f32(4, 4))
    with pytest.raises(TypeError):  # an unsupported op is also a TypeError (bad input)
        g(f32(4, 4), f32(4, 1), f32(4, 4))
    assert issubclass(pypto.NotYetImplementedError, NotImplementedError)
